#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import Synchronization

/// A spin lock on a flag stored in place: for critical sections of a few
/// instructions (load and retain a cached instance), cheaper than a mutex
/// uncontended, and it yields the CPU instead of sleeping when contended, so a
/// holder preempted on an oversubscribed machine does not make waiters park.
///
/// An extension on the `Atomic` itself, not a wrapper type: the flag must be
/// operated on where it is stored, and a struct wrapping it may be loaded by
/// value, so the exchange would hit a copy and exclude nothing (seen as a
/// use-after-free under the re-registration stress test).
extension Atomic where Value == Bool {
    @inline(__always)
    package func withSpinLock<R>(_ body: () -> R) -> R {
        if exchange(true, ordering: .acquiring) { spinUntilAcquired() }
        defer { store(false, ordering: .releasing) }
        return body()
    }

    /// The lock without a body (`withSpinLock`), for a lock whose body is generic in what it throws.
    @inline(__always)
    package func spinLock() { if exchange(true, ordering: .acquiring) { spinUntilAcquired() } }

    @inline(__always)
    package func spinUnlock() { store(false, ordering: .releasing) }

    private func spinUntilAcquired() {
        var spins = 0
        while true {
            if !load(ordering: .relaxed), !exchange(true, ordering: .acquiring) { return }
            spins += 1
            if spins > 64 { sched_yield(); spins = 0 }
        }
    }
}
