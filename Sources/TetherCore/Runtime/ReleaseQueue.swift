/// Releases instances iteratively: an instance's deinit hands its edges here
/// instead of releasing them in place. The outermost release on the thread
/// releases them directly; a release nested in it (a deinit that this caused)
/// only queues its edges, and the outermost one drains the queue in a loop.
/// Destruction order: a dependent's destructor has run before its edges are
/// handed over, and its dependencies go last edge first, each with what only it
/// held before the next (depth first): the reverse of the order a graph made
/// them in. The stack depth does not grow with the length of a dependency chain.
enum ReleaseQueue {
    /// Runs `destructor`, an instance's (or a block record's). What it releases while a drain is under
    /// way is queued, not destroyed in place; it goes now, each with what only it held, before the
    /// instance's own edges are queued on top: depth first, as a release outside a drain would go.
    @inline(__always)
    static func destroy(_ state: ThreadState, _ destructor: () -> Void) {
        let base = state.pendingRelease.count
        destructor()
        if state.draining && state.pendingRelease.count > base {
            while state.pendingRelease.count > base { SplitEdge.releaseEdge(state.pendingRelease.removeLast()) }
        }
    }

    /// Releases the reference of each of the edge words `targets` (`SplitEdge`), then the edges
    /// in `late`: moved in (`take()`), so its strong edges' array is the only copy and `queue` can empty it.
    static func release(_ targets: UnsafeBufferPointer<UInt>, _ late: consuming LateEdges?,
                        _ state: ThreadState) {
        if state.draining || (targets.count > 1 && late != nil) || late?.strong.isEmpty == false {
            // Popping releases them last edge first.
            for target in targets { state.pendingRelease.append(target) }
            if let late = consume late { queue(late, state) }
            if state.draining { return }
            state.draining = true
        } else {
            state.draining = true
            // Last edge first, each with what only it held (queued by the deinits it ran) before
            // the next: the order popping them would give, with no push and pop of the edges
            // themselves (a request's Session over its value and a singleton: two edges).
            var i = targets.count
            while i > 1 {
                i -= 1
                SplitEdge.releaseEdge(targets[i])
                // (late edges wait for the end, as they would behind the queued edges)
                while state.pendingRelease.count > 0 { SplitEdge.releaseEdge(state.pendingRelease.removeLast()) }
            }
            if i == 1 { SplitEdge.releaseEdge(targets[0]) }  // one edge (a chain): no queue needed
            if let late = consume late { drop(late) }
        }
        drain(state, SplitEdge.releaseEdge)
        state.draining = false
    }

    /// Queues `late` after an instance's constructor edges (already queued): its strong
    /// edges, taken by completion callbacks and resolvers after construction, are the newest,
    /// so they are popped first, last added first, each with what only it held (a strong lazy
    /// cell's answer among them: the cell lets go of its own reference first); the cells and
    /// lists themselves go once nothing else is queued. `late` must be the only copy of its
    /// arrays (moved here all the way from `WeakRef.detach`): emptying the strong array then
    /// lets go of the array's references now, before the queue's are popped.
    static func queue(_ late: consuming LateEdges, _ state: ThreadState) {
        for cell in late.lazyCells { cell.ownerDestroyed() }
        if !late.strong.isEmpty {
            for target in late.strong { state.pendingRelease.append(Ref(retaining: target).word) }
            late.strong = []
        }
        if !late.lazyCells.isEmpty || !late.owned.isEmpty { state.pendingLate.append(late) }
    }

    /// Lets go of `late` (out of line: inlined, its destruction was scheduled
    /// around the target's release, which then cost a retain and a second release).
    @inline(never)
    private static func drop(_ late: consuming LateEdges) { _ = consume late }

    /// The outermost release's loop: releases what nested ones queued, last
    /// queued first, and late edges once nothing else is queued. `step` releases
    /// one queued word (an edge word, `SplitEdge`; `InstanceBlock` also queues its own records).
    @inline(__always)
    static func drain(_ state: ThreadState, _ step: (UInt) -> Void) {
        while true {
            if state.pendingRelease.count > 0 {
                step(state.pendingRelease.removeLast())
            } else if let late = state.pendingLate.popLast() {
                _ = consume late
            } else {
                break
            }
        }
    }
}
