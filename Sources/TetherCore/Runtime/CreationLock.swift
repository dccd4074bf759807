#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The process-wide lock held by a graph from the moment it must create a
/// singleton- or weak-scoped instance until it has published it. One lock (not
/// one per registration) means graphs cannot deadlock on each other; it is
/// re-entrant per thread so a factory can resolve (or call a lazy provider)
/// without deadlocking on itself. Cache hits never take it.
final class CreationLock: @unchecked Sendable {
    static let shared = CreationLock()
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    /// Shared instances created but not yet published, by registration and, for
    /// the container scope, the container caching it (so a nested resolve on the
    /// holding thread reuses them). Only the holder touches it.
    var pending: [PendingKey: Instance] = [:]

    struct PendingKey: Hashable {
        let registration: ObjectIdentifier
        let container: ObjectIdentifier?
        init(_ registration: Registration, _ container: Container?) {
            self.registration = ObjectIdentifier(registration)
            self.container = container.map(ObjectIdentifier.init)
        }
    }

    private init() {
        mutex = .allocate(capacity: 1)
        var attr = pthread_mutexattr_t()
        pthread_mutexattr_init(&attr)
        pthread_mutexattr_settype(&attr, Int32(PTHREAD_MUTEX_RECURSIVE))
        pthread_mutex_init(mutex, &attr)
        pthread_mutexattr_destroy(&attr)
    }

    func lock() { pthread_mutex_lock(mutex) }
    func tryLock() -> Bool { pthread_mutex_trylock(mutex) == 0 }
    func unlock() { pthread_mutex_unlock(mutex) }
}

/// Whether resolves on the calling thread may wait for the creation lock. A
/// caller that must not block (one holding an interpreter lock that the lock's
/// holder may need) resolves in no-wait mode and retries the ordinary way on
/// `.wouldBlock`.
public enum WaitMode {
    /// Runs `body` with this thread's resolves (nested ones too) in no-wait mode
    /// or not; `blocked`: whether one of them failed with `.wouldBlock`.
    public static func run<R>(noWait: Bool, _ body: () -> R) -> (result: R, blocked: Bool) {
        ThreadState.currentReference._withUnsafeGuaranteedRef { state in
            let (outerMode, outerBlocked) = (state.noWait, state.blocked)
            state.noWait = noWait
            state.blocked = false
            let result = body()
            let blocked = state.blocked
            state.noWait = outerMode
            state.blocked = outerBlocked || blocked
            return (result, blocked)
        }
    }
}
