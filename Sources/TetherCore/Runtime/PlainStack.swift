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

    private mutating func grow(_ needed: Int) { base = grown(base, count: count, capacity: &capacity, needed: needed) }

    func free() { base?.deallocate() }
}

/// Strong references stored as words: an element's address, low bit set once
/// its reference was moved out to a new owner (or `none`: no element, nothing
/// to release). The storage of `ReferenceStack`, and what a plan's replay
/// writes into it (`Plan`), so both hand references on the same way.
struct ReferenceWords<Element: AnyObject> {
    let base: UnsafeMutablePointer<UInt>
    private static var moved: UInt { 1 }
    /// A word holding nothing: marked moved, so nothing releases it.
    static var none: UInt { moved }

    /// The element at `i`, unretained (the words or whoever took it hold it).
    subscript(i: Int) -> Borrowed<Element> {
        @inline(__always) get { Borrowed(word: base[i] & ~Self.moved)! }
    }

    /// The word at `i` as the reference it holds (owned or not: the callers below say).
    @inline(__always)
    private func reference(_ i: Int) -> Ref<Element> { Ref(word: base[i] & ~Self.moved)! }

    /// Stores an element at `i`, taking over the caller's reference.
    @inline(__always)
    func set(_ i: Int, _ element: Ref<Element>) { base[i] = element.word }

    /// A reference to the element at `i` for a new owner: the words' own the first time, then a new one.
    @inline(__always)
    func take(_ i: Int) -> Ref<Element> {
        let word = base[i]
        if word & Self.moved != 0 { return self[i].retained() }
        base[i] = word | Self.moved
        return reference(i)
    }

    /// The element at `i` for a new owner, and whether the words' own reference
    /// went with it (false: it was moved before, and the caller makes one: `take`
    /// for references of another kind than a retain).
    @inline(__always)
    func move(_ i: Int) -> (element: Ref<Element>, owned: Bool) {
        let word = base[i]
        if word & Self.moved != 0 { return (reference(i), false) }
        base[i] = word | Self.moved
        return (reference(i), true)
    }

    /// Takes a new reference to the element at `i` if its own was moved out (none: nothing).
    @inline(__always)
    func reown(_ i: Int) {
        guard base[i] & Self.moved != 0, base[i] != Self.none else { return }
        base[i] &= ~Self.moved
        _ = self[i].retained()
    }

    /// Whether the word at `i` holds nothing (`none`).
    @inline(__always)
    func isNone(_ i: Int) -> Bool { base[i] == Self.none }

    /// Whether the words still own the reference at `i` (not moved out, not empty).
    @inline(__always)
    func owns(_ i: Int) -> Bool { base[i] & Self.moved == 0 }

    /// Releases the element at `i` unless its reference was moved out (or there is none).
    @inline(__always)
    func releaseUnmoved(_ i: Int) {
        if base[i] & Self.moved == 0 { reference(i).release() }
    }

    /// Releases the elements at `0..<count` not moved out, last first: the rollback order of
    /// a plan's steps (and a graph's `alive`: `ReferenceStack.removeAll`), dependents before their
    /// dependencies, as they were made.
    @inline(__always)
    func releaseUnmoved(lastFirst count: Int) {
        var i = count
        while i > 0 {
            i -= 1
            releaseUnmoved(i)
        }
    }

    /// `releaseUnmoved(lastFirst: end)` of a plan's words (`0 ..< count`) replayed into a graph whose RESOLVER
    /// slots' gets appended what they built after them (`built`: per step, its range, in step order): what
    /// lies past the last range (appended after the run) first, then the steps, a range right after its
    /// step (it was made right before it). Each word is left `none` before its release (as `ReferenceStack.removeAll`
    /// hides it first: a destructor may run code reading the graph). `order`: the steps in the order the run made
    /// them, when that is not step order (a `Plan.PublishedVariant`'s; `built` is in that order then), the words it
    /// does not name (shared steps' references) after.
    func releaseUnmoved(lastFirst count: Int, built: [(step: Int, from: Int, to: Int)], end: Int, order: UnsafeBufferPointer<Int>? = nil) {
        func release(_ i: Int) {
            let word = base[i]
            base[i] = Self.none
            if word & Self.moved == 0 { Ref<Element>(word: word)!.release() }
        }
        for i in stride(from: end - 1, through: built.last?.to ?? count, by: -1) { release(i) }
        var b = built.count - 1
        for p in stride(from: (order?.count ?? count) - 1, through: 0, by: -1) {
            let k = order?[p] ?? p
            release(k)
            while b >= 0 && built[b].step == k {
                for j in stride(from: built[b].to - 1, through: built[b].from, by: -1) { release(j) }
                b -= 1
            }
        }
        if order != nil { for k in stride(from: count - 1, through: 0, by: -1) { release(k) } }
    }
}

/// A growable stack of strong references in manually managed memory: `append`
/// takes over the caller's reference (no retain). `take` hands an element's
/// reference on, the stack's own the first time (no retain: it is marked moved)
/// and a new one after; `removeAll` releases the ones not moved. So a reference
/// that has one new owner costs no reference counting at all here.
/// The owner calls `free()` once, after `removeAll()`.
struct ReferenceStack<Element: AnyObject> {
    private var base: UnsafeMutablePointer<UInt>?
    private var capacity = 0
    private(set) var count = 0
    private var words: ReferenceWords<Element> { @inline(__always) get { ReferenceWords(base: base!) } }

    /// The element at `i`, unretained (the stack or whoever took it holds it).
    subscript(i: Int) -> Borrowed<Element> {
        @inline(__always) get { words[i] }
    }

    /// Appends an element, taking over the caller's reference; returns its index.
    @inline(__always) @discardableResult
    mutating func append(_ element: Ref<Element>) -> Int {
        if count == capacity { grow(count + 1) }
        words.set(count, element)
        count += 1
        return count - 1
    }

    /// Appends `n` words holding nothing (`none`), for a writer that fills them
    /// in place (valid until the next append); unfilled ones release nothing.
    /// `n` may be 0 (a failing plan met its error before any step): a stack
    /// never grown has no storage to point into yet, so it grows then too.
    mutating func appendNone(count n: Int) -> ReferenceWords<Element> {
        if count + n > capacity || capacity == 0 { grow(count + n) }
        let fresh = base! + count
        fresh.initialize(repeating: ReferenceWords<Element>.none, count: n)
        count += n
        return ReferenceWords(base: fresh)
    }

    /// A reference to the element at `i` for a new owner.
    @inline(__always)
    func take(_ i: Int) -> Ref<Element> { words.take(i) }

    /// The words from the first, until the next append (a plan replayed from index 0 reads them
    /// afresh after a resolver's build appended: `Graph.replayedWords`).
    var wordsFromStart: ReferenceWords<Element> { words }

    /// Gives the stack a reference of its own again to every element from `first` on moved out
    /// (a retain each), so `removeAll` releases each in its place: a failed resolve (`Graph.abort`,
    /// from 0) or a resolver's failed request (`Graph.keepFailedRequest`, from where it began) lets
    /// go of what it made last made first, whoever else held it meanwhile.
    mutating func reown(from first: Int) {
        for i in first..<count { words.reown(i) }
    }

    /// Lets go of the stack's own reference to the element at `i`, marked moved: another owner holds
    /// it now (`Graph.enterAsked`: a dependent's edge took the words' reference the stack's stood beside).
    @inline(__always)
    func disown(_ i: Int) {
        guard words.owns(i) else { return }
        words.move(i).element.release()
    }

    /// Releases every element not moved out, last first (a release may run code
    /// that appends to a different stack, never to this one).
    mutating func removeAll() {
        // `releaseUnmoved(lastFirst:)`'s order, the count kept current while each release runs.
        while count > 0 {
            count -= 1
            words.releaseUnmoved(count)
        }
    }

    private mutating func grow(_ needed: Int) { base = grown(base, count: count, capacity: &capacity, needed: needed) }

    func free() { base?.deallocate() }
}

/// How both stacks grow: to at least `needed` and at least twice the old capacity (16 at first), the
/// first `count` elements moved to the new storage and the old freed.
@inline(__always)
private func grown<T>(_ base: UnsafeMutablePointer<T>?, count: Int, capacity: inout Int, needed: Int)
    -> UnsafeMutablePointer<T> {
    let bigger = max(needed, capacity * 2, 16)
    let fresh = UnsafeMutablePointer<T>.allocate(capacity: bigger)
    if let base { fresh.initialize(from: base, count: count); base.deallocate() }
    capacity = bigger
    return fresh
}
