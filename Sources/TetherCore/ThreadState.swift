#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Per-thread bookkeeping of the core: graphs under way on this thread and the
/// iterative release queue.
final class ThreadState {
    /// References waiting to be released (see ReleaseQueue).
    var pendingRelease = PlainStack<Unmanaged<Instance>>()
    var pendingExtras: [InstanceExtras] = []
    var draining = false
    /// The graph of the outermost resolve on this thread, reused by every one.
    let graph: Graph

    init() {
        graph = Graph(thread: UnsafeMutableRawPointer(bitPattern: 1)!)
        graph.thread = Unmanaged.passUnretained(self).toOpaque()
    }
    /// Depth of nested top-level resolves on this thread (a guard against unbounded recursion).
    var nesting = 0
    /// Resolves on this thread fail with `.wouldBlock` instead of waiting for the creation lock (`WaitMode`).
    var noWait = false
    /// Set when one did.
    var blocked = false

    deinit { pendingRelease.free() }

    private static let key: pthread_key_t = {
        var k = pthread_key_t()
        pthread_key_create(&k) { raw in
            Unmanaged<ThreadState>.fromOpaque(raw!).release()
        }
        return k
    }()

    /// The calling thread's state, unretained (the thread keeps it until it exits).
    static var currentReference: Unmanaged<ThreadState> {
        @inline(__always) get {
            if let raw = pthread_getspecific(key) { return Unmanaged.fromOpaque(raw) }
            let state = Unmanaged.passRetained(ThreadState())
            pthread_setspecific(key, state.toOpaque())
            return state
        }
    }
}
