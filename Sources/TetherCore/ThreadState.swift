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
    var pendingRelease: [[Instance]] = []
    var pendingExtras: [InstanceExtras] = []
    var draining = false
    /// A finished graph kept for the next resolve on this thread.
    var spareGraph: Graph?
    /// Depth of nested top-level resolves on this thread (a guard against unbounded recursion).
    var nesting = 0

    private static let key: pthread_key_t = {
        var k = pthread_key_t()
        pthread_key_create(&k) { raw in
            Unmanaged<ThreadState>.fromOpaque(raw!).release()
        }
        return k
    }()

    static var current: ThreadState {
        if let raw = pthread_getspecific(key) {
            return Unmanaged<ThreadState>.fromOpaque(raw).takeUnretainedValue()
        }
        let state = ThreadState()
        pthread_setspecific(key, Unmanaged.passRetained(state).toOpaque())
        return state
    }
}
