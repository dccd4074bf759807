/// Releases instances iteratively: an instance's deinit hands its edges here
/// instead of releasing them in place. The outermost release on the thread
/// releases them directly; a release nested in it (a deinit that this caused)
/// only queues its edges, and the outermost one drains the queue in a loop.
/// Destruction order is unchanged (a dependent's destructor has run before its
/// edges are handed over; siblings go in edge order), but the stack depth no
/// longer grows with the length of a dependency chain.
enum ReleaseQueue {
    static func release(_ list: EdgeList?, _ extras: InstanceExtras?) {
        ThreadState.currentReference._withUnsafeGuaranteedRef { release(list, extras, $0) }
    }

    private static func release(_ list: EdgeList?, _ extras: consuming InstanceExtras?, _ state: ThreadState) {
        if state.draining {
            if let list {
                // Reversed, so popping releases them in edge order.
                let targets = list.targets
                for i in stride(from: list.count - 1, through: 0, by: -1) { state.pendingRelease.append(targets[i]) }
                list.deallocate()
            }
            if let extras = consume extras { state.pendingExtras.append(extras) }
            return
        }
        state.draining = true
        if let list {
            let targets = list.targets
            for i in 0..<list.count { targets[i].release() }
            list.deallocate()
        }
        _ = consume extras
        while true {
            if state.pendingRelease.count > 0 {
                state.pendingRelease.removeLast().release()
            } else if let extras = state.pendingExtras.popLast() {
                _ = consume extras
            } else {
                break
            }
        }
        state.draining = false
    }
}
