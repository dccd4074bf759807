/// A graph that a plan built without callbacks (`Plan.runBlock`), stored in its
/// root's allocation: one `Instance` (the root) instead of one per node. Nothing
/// but the graph's own edges can ever reach the other nodes (factories get bare
/// pointers; there is no resolver or callback to hand out another reference), so
/// they need no object or reference count of their own: each is a record of its
/// pointer, its retained spec and its edges, destroyed with the root.
///
/// Words after the root's header: `n`, then `n` inner records
/// `[pointer, spec, k, entry × k]` in creation order, then the root's record
/// `[k, entry × k]`. An entry is an edge: an inner record `i` as `i << 1 | 1`, or a
/// retained external instance (a shared dependency) as its address (even).
///
/// Destruction gives exactly the order separate instances would get (see
/// `release`), so a block is indistinguishable from the graph it replaces.
struct InstanceBlock {
    let words: UnsafeMutablePointer<UInt>

    static func rootWords(edges: Int) -> Int { 2 + edges }
    static func innerWords(edges: Int) -> Int { 3 + edges }

    /// Fills a block's words in creation order: inner records, then the root's.
    struct Writer {
        private let words: UnsafeMutablePointer<UInt>
        private var at = 1
        private var countAt = 0

        init(_ words: UnsafeMutablePointer<UInt>) {
            self.words = words
            words[0] = 0
        }

        mutating func beginInner(pointer: UInt, spec: Unmanaged<InstanceSpec>) {
            words[0] += 1
            words[at] = pointer
            words[at + 1] = UInt(bitPattern: spec.toOpaque())
            begin(at + 2)
        }

        mutating func beginRoot() { begin(at) }

        private mutating func begin(_ count: Int) {
            countAt = count
            words[count] = 0
            at = count + 1
        }

        mutating func addInner(_ index: Int) { add(UInt(index) << 1 | 1) }
        /// Takes over the caller's reference.
        mutating func addExternal(_ instance: Unmanaged<Instance>) { add(UInt(bitPattern: instance.toOpaque())) }

        private mutating func add(_ entry: UInt) {
            words[at] = entry
            at += 1
            words[countAt] += 1
        }
    }

    func writer() -> Writer { Writer(words) }

    private var innerCount: Int { Int(words[0]) }

    /// Where the root's record starts, after visiting every inner record's offset.
    @inline(__always)
    private func scan(_ inner: (Int, Int) -> Void) -> Int {
        var at = 1
        for i in 0..<innerCount {
            inner(i, at)
            at += 3 + Int(words[at + 2])
        }
        return at
    }

    /// The entries of the record whose count word is at `at`.
    @inline(__always)
    private func entries(at: Int) -> UnsafeBufferPointer<UInt> {
        UnsafeBufferPointer(start: words + at + 1, count: Int(words[at]))
    }

    /// Visits every external instance the block holds.
    func forEachExternal(_ body: (Instance) -> Bool) -> Bool {
        var all = true
        let root = scan { _, at in
            if all { all = entries(at: at + 2).allSatisfy { $0 & 1 != 0 || Self.external($0)._withUnsafeGuaranteedRef(body) } }
        }
        return all && entries(at: root).allSatisfy { $0 & 1 != 0 || Self.external($0)._withUnsafeGuaranteedRef(body) }
    }

    private static func external(_ entry: UInt) -> Unmanaged<Instance> {
        Unmanaged.fromOpaque(UnsafeRawPointer(bitPattern: entry)!)
    }

    /// For the root's deinit, after the root's destructor: releases the root's
    /// edges (then `late`) as `ReleaseQueue.release` would, an inner record
    /// standing for an instance whose count is its number of edges in the
    /// block. A record reaching zero is destroyed like an instance (destructor,
    /// then its edges handed on), all before this returns: nested in another
    /// release, the edges it would have queued are on top of the thread's queue,
    /// so draining them here first is the order the outer drain would take.
    func release(_ late: LateEdges?) {
        var late = late
        let n = innerCount
        withUnsafeTemporaryAllocation(of: Int.self, capacity: 2 * n) { buffer in
            let offsets = buffer.baseAddress!
            let counts = offsets + n
            counts.initialize(repeating: 0, count: n)
            let root = scan { i, at in offsets[i] = at }
            for i in 0..<n { for e in entries(at: offsets[i] + 2) where e & 1 != 0 { counts[Int(e >> 1)] += 1 } }
            for e in entries(at: root) where e & 1 != 0 { counts[Int(e >> 1)] += 1 }

            ThreadState.currentReference._withUnsafeGuaranteedRef { state in
                /// Releases one edge: an external instance, or one count of an inner record.
                func step(_ entry: UInt) {
                    guard entry & 1 != 0 else { return Self.external(entry).release() }
                    let i = Int(entry >> 1)
                    counts[i] -= 1
                    guard counts[i] == 0 else { return }
                    let at = offsets[i]
                    let spec = Unmanaged<InstanceSpec>.fromOpaque(UnsafeRawPointer(bitPattern: words[at + 1])!)
                    let pointer = UnsafeMutableRawPointer(bitPattern: words[at])!
                    spec._withUnsafeGuaranteedRef { $0.destructor?(pointer, $0.context) }
                    spec.release()
                    // Draining already: its edges are queued, in edge order.
                    for e in entries(at: at + 2).reversed() { state.pendingRelease.append(e) }
                }
                if state.draining {
                    let base = state.pendingRelease.count
                    for e in entries(at: root).reversed() { state.pendingRelease.append(e) }
                    if let late = late.take() { state.pendingLate.append(late) }
                    while state.pendingRelease.count > base { step(state.pendingRelease.removeLast()) }
                } else {
                    state.draining = true
                    for e in entries(at: root) { step(e) }
                    late = nil
                    ReleaseQueue.drain(state, step)
                    state.draining = false
                }
            }
        }
    }
}
