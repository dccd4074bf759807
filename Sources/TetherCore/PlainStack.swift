/// A growable stack of plain values in manually managed memory: pushes and pops
/// are a store and a counter, with none of `Array`'s uniqueness checks or
/// reference counting. The owner calls `free()` once.
struct PlainStack<Element: BitwiseCopyable> {
    private var base: UnsafeMutablePointer<Element>?
    private var capacity = 0
    private(set) var count = 0

    subscript(i: Int) -> Element {
        @inline(__always) get { base![i] }
        @inline(__always) set { base![i] = newValue }
    }

    @inline(__always)
    mutating func append(_ element: Element) {
        if count == capacity { grow(count + 1) }
        base![count] = element
        count += 1
    }

    @inline(__always)
    mutating func removeLast() -> Element {
        count -= 1
        return base![count]
    }

    /// Appends `n` elements left unwritten: the caller writes each before reading it.
    @inline(__always)
    mutating func appendUnwritten(count n: Int) {
        if count + n > capacity { grow(count + n) }
        count += n
    }

    /// Makes room for `n` elements, so `address(of:)` has storage even while empty.
    mutating func reserve(_ n: Int) { if n > capacity { grow(n) } }

    /// Where element `i` is stored, until the next append.
    @inline(__always)
    func address(of i: Int) -> UnsafeMutablePointer<Element> { base! + i }

    /// Drops everything from index `count` on.
    @inline(__always)
    mutating func truncate(to count: Int) { self.count = count }

    private mutating func grow(_ needed: Int) {
        let bigger = max(needed, capacity * 2, 16)
        let fresh = UnsafeMutablePointer<Element>.allocate(capacity: bigger)
        if let base { fresh.initialize(from: base, count: count); base.deallocate() }
        base = fresh
        capacity = bigger
    }

    func free() { base?.deallocate() }
}

/// A growable stack of strong references in manually managed memory: `append`
/// takes over the caller's reference (no retain). `take` hands an element's
/// reference on, the stack's own the first time (no retain: it is marked moved)
/// and a new one after; `removeAll` releases the ones not moved. So a reference
/// that has one new owner costs no reference counting at all here.
/// The owner calls `free()` once, after `removeAll()`.
struct ReferenceStack<Element: AnyObject> {
    /// An element's address, low bit set once its reference was moved out.
    private var base: UnsafeMutablePointer<UInt>?
    private var capacity = 0
    private(set) var count = 0
    private static var moved: UInt { 1 }

    /// The element at `i`, unretained (the stack or whoever took it holds it).
    subscript(i: Int) -> Unmanaged<Element> {
        @inline(__always) get { Unmanaged.fromOpaque(UnsafeRawPointer(bitPattern: base![i] & ~Self.moved)!) }
    }

    /// Appends an element, taking over the caller's reference; returns its index.
    @inline(__always) @discardableResult
    mutating func append(_ element: Unmanaged<Element>) -> Int {
        if count == capacity { grow() }
        base![count] = UInt(bitPattern: element.toOpaque())
        count += 1
        return count - 1
    }

    /// A reference to the element at `i` for a new owner.
    @inline(__always)
    mutating func take(_ i: Int) -> Unmanaged<Element> {
        let word = base![i]
        let element = Unmanaged<Element>.fromOpaque(UnsafeRawPointer(bitPattern: word & ~Self.moved)!)
        if word & Self.moved != 0 { return element.retain() }
        base![i] = word | Self.moved
        return element
    }

    /// Releases every element not moved out, last first (a release may run code
    /// that appends to a different stack, never to this one).
    mutating func removeAll() {
        while count > 0 {
            count -= 1
            let word = base![count]
            if word & Self.moved == 0 { Unmanaged<Element>.fromOpaque(UnsafeRawPointer(bitPattern: word)!).release() }
        }
    }

    private mutating func grow() {
        let bigger = max(capacity * 2, 16)
        let fresh = UnsafeMutablePointer<UInt>.allocate(capacity: bigger)
        if let base { fresh.initialize(from: base, count: count); base.deallocate() }
        base = fresh
        capacity = bigger
    }

    func free() { base?.deallocate() }
}
