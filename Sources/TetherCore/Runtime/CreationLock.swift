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
///
/// fork(): a child process has only the forking thread. A lock another thread
/// held would never be released there, and even the forking thread's own hold
/// is not recognised (the mutex records the parent's thread id), so the child
/// rebuilds the lock (`afterForkInChild`, a pthread_atfork handler): held by
/// the forking thread as deep as it held it, else free, with the other
/// threads' unpublished instances forgotten (the child makes its own).
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
    /// The holder and how often it holds the lock; written by the holder only.
    private var owner = pthread_t()
    private var depth = 0

    private init() {
        mutex = .allocate(capacity: 1)
        initializeMutex()
        pthread_atfork(nil, nil) { CreationLock.shared.afterForkInChild() }
    }

    private func initializeMutex() {
        var attr = pthread_mutexattr_t()
        pthread_mutexattr_init(&attr)
        pthread_mutexattr_settype(&attr, Int32(PTHREAD_MUTEX_RECURSIVE))
        pthread_mutex_init(mutex, &attr)
        pthread_mutexattr_destroy(&attr)
    }

    func lock() {
        pthread_mutex_lock(mutex)
        acquired()
    }

    func tryLock() -> Bool {
        guard pthread_mutex_trylock(mutex) == 0 else { return false }
        acquired()
        return true
    }

    func unlock() {
        depth -= 1
        pthread_mutex_unlock(mutex)
    }

    private func acquired() {
        if depth == 0 { owner = pthread_self() }
        depth += 1
    }

    /// In the child of fork(), on the forking thread, before anything else runs there.
    private func afterForkInChild() {
        let heldHere = depth > 0 && pthread_equal(owner, pthread_self()) != 0
        initializeMutex()
        if heldHere {
            for _ in 0..<depth { pthread_mutex_lock(mutex) }
        } else {
            depth = 0
            pending.removeAll()
        }
    }
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
