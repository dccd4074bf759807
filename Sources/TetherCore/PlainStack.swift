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
/// moves the caller's reference in (no retain), `removeAll` releases them.
/// The owner calls `free()` once, after `removeAll()`.
struct ReferenceStack<Element: AnyObject> {
    private var base: UnsafeMutablePointer<Element>?
    private var capacity = 0
    private(set) var count = 0

    /// The element at `i`, unretained (the stack holds it).
    subscript(i: Int) -> Unmanaged<Element> {
        @inline(__always) get { Unmanaged.passUnretained(base![i]) }
    }

    @inline(__always)
    mutating func append(_ element: consuming Element) {
        if count == capacity { grow() }
        (base! + count).initialize(to: element)
        count += 1
    }

    /// Releases every element, last first (a release may run code that appends
    /// to a different stack, never to this one).
    mutating func removeAll() {
        while count > 0 {
            count -= 1
            _ = (base! + count).move()
        }
    }

    private mutating func grow() {
        let bigger = max(capacity * 2, 16)
        let fresh = UnsafeMutablePointer<Element>.allocate(capacity: bigger)
        if let base { fresh.moveInitialize(from: base, count: count); base.deallocate() }
        base = fresh
        capacity = bigger
    }

    func free() { base?.deallocate() }
}
