#if canImport(Glibc)
import Glibc
#endif
import TetherCore

/// Every exported call that may reach a container is a read-side section of
/// one reclaimer (`abiCall`, the singleton hit path, providers), so a freed
/// container (with its registrations, their specs and singleton slots, and its
/// key table) is let go of only once no call that found it through its handle
/// is still under way. Entering and leaving are plain stores to the thread's
/// record and the light barrier: no atomic read-modify-write, no shared cache
/// line written. The freeing side pays the heavy barrier (`Reclaimer`), unless
/// the container was reached by its maker's calls only (`retire`): a request's child.
enum Reclamation {
    /// Batched (what another thread may have reached): with other threads about, a thread's frees share one heavy barrier,
    /// 32 per thread holding a record, up to 256 (a request's child costs no IPI to
    /// every core, and a core takes about one per 32 of its own frees however many
    /// cores there are: `Reclaimer`). The freeing thread dismantles its own batch
    /// once the calls under way at its seal have ended, so a request's child goes
    /// back to that thread's allocator, and no other thread's record,
    /// lock or list is written. A container waits for its batch to fill and one
    /// more look (`Reclaimer.pollInterval` frees later), or the thread's exit, to be
    /// dismantled (its instances' destructors ran at the free: only memory waits).
    static let reclaimer: Reclaimer = {
        let reclaimer = Reclaimer(batch: 32, heavyBarrier: heavyBarrier)
        // fork(): the child has only the forking thread; the others' records are let go of there.
        pthread_atfork({ Reclamation.reclaimer.prepareFork() }, { Reclamation.reclaimer.parentAfterFork() }, {
            Reclamation.reclaimer.childAfterFork(keeping: HandleCache.currentIfAny?.pointee.reclaim)
        })
        return reclaimer
    }()

    /// Hands a closed container, whose handle (and its registrations' handles)
    /// are already gone, to the reclaimer: dismantled and let go of once no call can be using
    /// it. Now, with no barrier, when no other thread is about (`Reclaimer.reclaimAlone`), or
    /// when no other thread can have reached it (`Reclaimer.reclaimUnreached`): `unshared`, the
    /// removals of its handle and its registrations' saw them looked up by the calling thread only
    /// (`SlotPages.markShared`), and
    /// the container is reached through nothing else (`Container.reachedOnlyThroughHandle`).
    static func retire(_ retired: inout Container?, unshared: Bool = false) {
        guard let container = retired.take() else { return }
        let caller = HandleCache.current.pointee.reclaim
        if unshared, container.reachedOnlyThroughHandle, reclaimer.reclaimUnreached(by: caller, { container.dismantle() }) { return }
        if reclaimer.reclaimAlone(by: caller, { container.dismantle() }) { return }
        let handed = Ref(retaining: consume container)
        reclaimer.retire(by: caller) { handed.take().dismantle() }
    }
}

/// One exported call's read-side section (nested calls, from factories or
/// destructors, are part of the outermost one).
struct CallSection {
    /// The calling thread's `HandleCache` locals.
    let locals = HandleCache.current
    private let record: UnsafeMutablePointer<Reclaimer.Record>
    private let outermost: Bool
    /// Also for the section's own handshakes (the singleton hit's loan).
    let barrier: LightBarrier

    @inline(__always)
    init(barrier: LightBarrier = LightBarrier()) {
        self.barrier = barrier
        record = locals.pointee.reclaim.unsafelyUnwrapped
        outermost = Reclaimer.enter(record, lightBarrier: barrier.callAsFunction)
    }

    @inline(__always)
    func leave() {
        if outermost { Reclaimer.leave(record, lightBarrier: barrier.callAsFunction) }
    }
}
