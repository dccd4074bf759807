/// Releases instances iteratively: an instance's deinit hands its edges here
/// instead of releasing them in place, and the outermost release on the thread
/// drains them in a loop. Destruction order is unchanged (a dependent's
/// destructor has run before its edges are handed over), but the stack depth no
/// longer grows with the length of a dependency chain.
enum ReleaseQueue {
    static func release(_ dependencies: consuming [Instance], _ extras: consuming InstanceExtras?) {
        let state = ThreadState.current
        let batch = consume dependencies
        if !batch.isEmpty { state.pendingRelease.append(consume batch) } else { _ = consume batch }
        if let extras = consume extras { state.pendingExtras.append(consume extras) }
        if state.draining { return }
        state.draining = true
        while true {
            if let batch = state.pendingRelease.popLast() {
                _ = consume batch
            } else if let extras = state.pendingExtras.popLast() {
                _ = consume extras
            } else {
                break
            }
        }
        state.draining = false
    }
}
