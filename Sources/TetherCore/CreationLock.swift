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
    /// Shared instances created but not yet published, by registration (so a
    /// nested resolve on the holding thread reuses them). Only the holder touches it.
    var pending: [ObjectIdentifier: Instance] = [:]

    private init() {
        mutex = .allocate(capacity: 1)
        var attr = pthread_mutexattr_t()
        pthread_mutexattr_init(&attr)
        pthread_mutexattr_settype(&attr, Int32(PTHREAD_MUTEX_RECURSIVE))
        pthread_mutex_init(mutex, &attr)
        pthread_mutexattr_destroy(&attr)
    }

    func lock() { pthread_mutex_lock(mutex) }
    func unlock() { pthread_mutex_unlock(mutex) }
}
