/// Releases instances iteratively: an instance's deinit hands its edges here
/// instead of releasing them in place, and the outermost release on the thread
/// drains them in a loop. Destruction order is unchanged (a dependent's
/// destructor has run before its edges are handed over), but the stack depth no
/// longer grows with the length of a dependency chain.
enum ReleaseQueue {
    static func release(_ dependencies: [Instance], _ extras: InstanceExtras?) {
        let state = ThreadState.current
        if !dependencies.isEmpty { state.pendingRelease.append(dependencies) }
        if let extras { state.pendingExtras.append(extras) }
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
