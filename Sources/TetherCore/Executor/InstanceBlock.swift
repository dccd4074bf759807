/// A graph that a plan built without callbacks (`Plan.execute` in block mode, `Plan.makeBlock`), stored in its
/// root's allocation: one `Instance` (the root) instead of one per node. Nothing
/// but the graph's own edges can ever reach the other nodes (factories get bare
/// pointers; there is no resolver or callback to hand out another reference), so
/// they need no object or reference count of their own: each is a record of its
/// pointer, its spec and its edges, destroyed with the root.
///
/// Words after the root's header: the offset of the root's record, then the inner
/// records `[pointer, spec, count, k, entry × k]` in creation order, then
/// the root's record `[k, entry × k]`. `count` is the record's number of edges in
/// the block (its reference count, as an instance). An entry is an edge: to an
/// inner record at offset `o` as `o << 1 | 1`, or to a retained external instance
/// (a shared dependency) as its edge word (even: `SplitEdge.word` when the
/// reference is a split one, a published singleton's). A plan computes the offsets and
/// counts once (`Plan.Step.blockOffset`) and writes its blocks' words once, as a
/// template each block is copied from (then only the nodes' pointers, the shared
/// instances and local steps' specs go in), so writing and releasing a block need
/// no bookkeeping of their own.
///
/// The records' specs are the plan's: the root's spec keeps the plan alive
/// (`ThreadSpecs.retainedCopy(of:in:)`); a record of a child's own registration
/// (`Plan.Step.local`) holds its spec itself, tagged `ownedSpec`, released after its destructor.
///
/// Destruction gives exactly the order separate instances would get (see
/// `release`), so a block is indistinguishable from the graph it replaces.
struct InstanceBlock {
    let words: UnsafeMutablePointer<UInt>

    static func rootWords(edges: Int) -> Int { 2 + edges }
    static func innerWords(edges: Int) -> Int { 4 + edges }
    /// Where the first inner record starts.
    static var firstOffset: Int { 1 }

    static var ownedSpec: UInt { 1 }
    /// The spec word of a record that holds `spec` (retained) itself.
    static func ownedSpec(_ spec: Ref<InstanceSpec>) -> UInt { spec.word | ownedSpec }

    /// Writes the inner record at `offset` (`spec` unretained: the plan holds it;
    /// a record that owns its spec gets `ownedSpec` written over it), or with `spec`
    /// nil the root's record there; `edges` writes its entries.
    func write(at offset: Int, pointer: UInt, spec: Borrowed<InstanceSpec>?, count: Int,
               edges: (_ add: (UInt) -> Void) -> Void) {
        var at = offset
        if let spec {
            words[at] = pointer
            words[at + 1] = spec.word
            words[at + 2] = UInt(count)
            at += 3
        } else {
            words[0] = UInt(offset)
        }
        let countAt = at
        at += 1
        edges { entry in
            words[at] = entry
            at += 1
        }
        words[countAt] = UInt(at - countAt - 1)
    }

    /// Where the inner record at `offset` keeps its node's pointer, and its spec.
    static func pointerWord(at offset: Int) -> Int { offset }
    static func specWord(at offset: Int) -> Int { offset + 1 }
    /// Where the entries of the record at `offset` start (the root's, or an inner one's).
    static func firstEntry(at offset: Int, isRoot: Bool) -> Int { isRoot ? offset + 1 : offset + 4 }

    /// Copies `template` (a block's words as `write` left them) into this block.
    @inline(__always)
    func copy(_ template: UnsafeBufferPointer<UInt>) {
        words.update(from: template.baseAddress!, count: template.count)
    }

    static func inner(at offset: Int) -> UInt { UInt(offset) << 1 | 1 }
    /// Takes over the caller's reference.
    static func external(_ instance: Ref<Instance>) -> UInt { instance.word }

    private static func external(_ entry: UInt) -> Borrowed<Instance> { SplitEdge.target(entry) }

    private var rootOffset: Int { Int(words[0]) }

    /// The entries of the record whose `k` word is at `at`.
    @inline(__always)
    private func entries(at: Int) -> UnsafeBufferPointer<UInt> {
        UnsafeBufferPointer(start: words + at + 1, count: Int(words[at]))
    }

    /// Visits every external instance the block holds.
    func forEachExternal(_ body: (Instance) -> Bool) -> Bool {
        var at = Self.firstOffset
        while true {
            let edgesAt = at == rootOffset ? at : at + 3
            let all = entries(at: edgesAt).allSatisfy { $0 & 1 != 0 || Self.external($0).borrow(body) }
            if !all || at == rootOffset { return all }
            at = edgesAt + 1 + Int(words[edgesAt])
        }
    }

    /// For the root's deinit, after the root's destructor: releases the root's
    /// edges (then `late`) as `ReleaseQueue.release` would, an inner record
    /// standing for an instance. A record whose count reaches zero is destroyed
    /// like an instance (destructor, then its edges handed on), all before this
    /// returns: nested in another release, the edges it would have queued are on
    /// top of the thread's queue, so draining them here first is the order the
    /// outer drain would take.
    func release(_ late: consuming LateEdges?, _ state: ThreadState) {
        var late = late
        let root = entries(at: rootOffset)
        do {
            /// Releases one edge: an external instance, or one count of an inner record.
            func step(_ first: UInt) {
                var entry = first
                while true {
                    guard entry & 1 != 0 else { return SplitEdge.releaseEdge(entry) }
                    let at = Int(entry >> 1)
                    words[at + 2] -= 1
                    guard words[at + 2] == 0 else { return }
                    let spec = Ref<InstanceSpec>(word: words[at + 1] & ~Self.ownedSpec)!
                    let pointer = UnsafeMutableRawPointer(bitPattern: words[at])!
                    ReleaseQueue.destroy(state) { spec.borrow { $0.destroy(pointer) } }
                    if words[at + 1] & Self.ownedSpec != 0 { spec.release() }
                    // Draining already: its edges are queued, popped last edge first. A single
                    // edge (a chain) is released now: the next pop would take it.
                    let edges = entries(at: at + 3)
                    if edges.count == 1 {
                        entry = edges[0]
                        continue
                    }
                    for e in edges { state.pendingRelease.append(e) }
                    return
                }
            }
            if state.draining {
                let base = state.pendingRelease.count
                for e in root { state.pendingRelease.append(e) }
                if let late = late.take() { ReleaseQueue.queue(late, state) }
                while state.pendingRelease.count > base { step(state.pendingRelease.removeLast()) }
            } else {
                state.draining = true
                if root.count == 1 && late?.strong.isEmpty != false {  // one edge (a chain): no queue needed
                    step(root[0])
                    _ = late.take()
                } else {
                    for e in root { state.pendingRelease.append(e) }
                    if let late = late.take() { ReleaseQueue.queue(late, state) }
                }
                ReleaseQueue.drain(state, step)
                state.draining = false
            }
        }
    }
}
