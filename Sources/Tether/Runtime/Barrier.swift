#if canImport(Glibc)
import Glibc
#endif
import CFFI
import Synchronization
import TetherCore

/// An asymmetric fence (as in userspace RCU and folly's hazard pointers): the
/// frequent side of a Dekker-style handshake (a singleton hit, a loan released)
/// orders its store before its load with `lightBarrier()`, and the rare side
/// (unpublishing a lent singleton) calls `heavyBarrier()` between its store and
/// its load. For each other thread T, the heavy barrier picks a point in T's
/// execution: T's memory operations before it are visible to the caller after the
/// heavy barrier returns, and T's operations after it see every store the caller
/// made before calling it. So of "store A; light; load B" on T and "store B;
/// heavy; load A" on the caller, at least one load sees the other side's store.
///
/// On Linux the heavy side is membarrier(2) MEMBARRIER_CMD_PRIVATE_EXPEDITED
/// (registered once) and the light side only stops the compiler from reordering.
/// Without membarrier both sides are sequentially consistent fences (a plain
/// Dekker). The mode is decided once, before any light barrier relies on it;
/// TETHER_NO_MEMBARRIER=1 in the environment forces fences (tests use it).
///
/// ThreadSanitizer models neither membarrier nor stand-alone fences, and needs
/// neither here: each handshake on these barriers only decides which way a
/// thread goes (the reclaimer waits for a section or not, a loan's release
/// reports itself or not). What one thread then uses of another's work reaches
/// it through a releasing store read by an acquiring load, or a `Lock`, which
/// TSan sees (`Reclaimer.collect`, `RetiredLoans`). A handshake that failed would
/// leave a use with no such edge before the free, which TSan reports.

/// 0: not decided yet; 1: membarrier; 2: fences. (A global `Atomic`: statically
/// initialized, so reading it costs no `swift_once`.)
private let barrierMode = Atomic<Int>(0)
private let barrierDecision = Lock(())

private let membarrierQuery: Int32 = 0
private let membarrierPrivateExpedited: Int32 = 1 << 3
private let membarrierRegisterPrivateExpedited: Int32 = 1 << 4

@inline(__always)
func lightBarrier() {
    if barrierMode.load(ordering: .relaxed) == 1 {
        tether_compiler_barrier()
    } else {
        lightBarrierSlow()
    }
}

/// `lightBarrier()` for a path that issues several: the mode is read once
/// (once membarrier is chosen it stays chosen). A hot path can branch on
/// `compilerOnly` once and be inlined twice, each copy with a constant.
struct LightBarrier {
    let compilerOnly: Bool

    @inline(__always)
    init() { compilerOnly = barrierMode.load(ordering: .relaxed) == 1 }

    @inline(__always)
    init(compilerOnly: Bool) { self.compilerOnly = compilerOnly }

    @inline(__always)
    func callAsFunction() {
        if compilerOnly { tether_compiler_barrier() } else { lightBarrierSlow() }
    }
}

@inline(never)
private func lightBarrierSlow() {
    if decideBarrierMode() == 1 {
        tether_compiler_barrier()
    } else {
        atomicMemoryFence(ordering: .sequentiallyConsistent)
    }
}

/// The rare side: see above.
@inline(never)
func heavyBarrier() {
    atomicMemoryFence(ordering: .sequentiallyConsistent)
    guard decideBarrierMode() == 1 else { return }
    if tether_membarrier(membarrierPrivateExpedited) == 0 { return }
    // Registered once (barrierMode is 1 only after that succeeded); a process image
    // that lost it (it should not) registers again rather than run unprotected.
    if tether_membarrier(membarrierRegisterPrivateExpedited) == 0, tether_membarrier(membarrierPrivateExpedited) == 0 { return }
    fatalError("Tether: membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED) failed after registration")
}

/// Whether the barriers use membarrier (1) or fences (2); decided on first use.
@inline(__always)
private func decideBarrierMode() -> Int {
    let mode = barrierMode.load(ordering: .acquiring)
    return mode != 0 ? mode : decideBarrierModeSlow()
}

@inline(never)
private func decideBarrierModeSlow() -> Int {
    barrierDecision.withLock { _ in
        var mode = barrierMode.load(ordering: .acquiring)
        if mode == 0 {
            let supported = tether_membarrier(membarrierQuery)
            let wanted = Int(membarrierPrivateExpedited | membarrierRegisterPrivateExpedited)
            let disabled = getenv("TETHER_NO_MEMBARRIER").map { String(cString: $0) == "1" } ?? false
            if !disabled, supported >= 0, Int(supported) & wanted == wanted, tether_membarrier(membarrierRegisterPrivateExpedited) == 0 {
                mode = 1
            } else {
                mode = 2
            }
            barrierMode.store(mode, ordering: .releasing)
        }
        return mode
    }
}

/// Whether the light barrier is a compiler barrier only (for tests and notes).
var barriersUseMembarrier: Bool { decideBarrierMode() == 1 }
