#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import Synchronization

/// A lock for critical sections of a few instructions (load and retain a cached
/// instance): cheaper than a mutex uncontended, and it yields the CPU instead of
/// sleeping when contended, so a holder preempted on an oversubscribed machine
/// does not make waiters park.
///
/// A class, not a struct: `Atomic` must be operated on where it is stored, and a
/// plain struct wrapping it may be loaded by value, so the exchange would hit a
/// copy and exclude nothing (seen as a use-after-free under the re-registration
/// stress test before this was a class).
final class SpinLock: @unchecked Sendable {
    private let held = Atomic<Bool>(false)

    init() {}

    @inline(__always)
    func withLock<R>(_ body: () -> R) -> R {
        if held.exchange(true, ordering: .acquiring) { contended() }
        defer { held.store(false, ordering: .releasing) }
        return body()
    }

    private func contended() {
        var spins = 0
        while true {
            if !held.load(ordering: .relaxed), !held.exchange(true, ordering: .acquiring) { return }
            spins += 1
            if spins > 64 { sched_yield(); spins = 0 }
        }
    }
}
