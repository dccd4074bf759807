import Synchronization

/// Deferred reclamation for what lock-free readers may still be using (the ABI:
/// a freed container, reached through its handle by calls already under way).
///
/// Readers announce themselves in a per-thread `Record` with plain stores: a
/// sequence number, odd while the thread is inside a read-side section (nested
/// sections count once). Whoever removes an object from readers' reach (first:
/// a new section must no longer be able to find it) hands it to `retire` with
/// what to do once nobody uses it. A retired object waits for the sections that
/// were under way when it was retired, and for nothing else:
/// - after the removal, `heavyBarrier` (the rare side of an asymmetric fence,
///   whose light side a reader issues between entering and reading: see
///   `enter`) makes every thread's entry visible, or its later reads see the
///   removal; the odd sequence numbers seen then are the sections waited for;
/// - a waited-for section has ended once its record's number has moved on.
/// Nobody blocks: the waited-for threads are flagged (`waitedOn`, in their own
/// record) and collect when they leave, so what they delayed is reclaimed by the
/// last of them to leave. A thread that exits releases its record (an exit in
/// the middle of a section ends it), so it delays nothing. When no other thread
/// holds a record, the barrier is skipped (see `claim`).
///
/// Nor does an object need one that no other thread's section can have reached:
/// its remover knows (`reclaimUnreached`), and if it is outside any section of its
/// own, the object is let go of at once: no barrier, no batch, nothing kept. The
/// ABI's request child is the common case: the handle slot of a container is
/// marked, by a read-modify-write, by the first thread other than its maker that
/// looks it up, before that thread reads it, and the removal's own
/// read-modify-write sees the mark or makes the lookup fail (`SlotPages.markShared`),
/// so a child only its maker used is freed with no interruption of other cores,
/// on any number of them; its registrations' handles are marked the same way, so
/// a request's child with a registration of its own goes too. Everything else (a
/// container another thread reached, or one with children, watchers, or
/// registrations a cell or rare state reaches: `Container.reachedOnlyThroughHandle`)
/// takes the batched path below.
///
/// Batched (`batch` > 1), as RCU batches grace periods: a thread outside any
/// section keeps what it retires in its own record until it has `batch` of them,
/// then seals them: one heavy barrier and one look at the records for the lot
/// (the sections under way then are what the batch waits for). Waiting longer is
/// safe (the sections are looked for after every removal in the batch); it only
/// keeps memory longer. The batch grows with the threads holding records
/// (`batch` times their number, up to `maxBatchFactor` times): each heavy barrier
/// interrupts every core running the process, so with a fixed batch a core would
/// take one interruption per `batch` frees of each of N threads, N times more as
/// the machine grows. Scaled, each core takes about one per `batch` of its own
/// thread's frees, on any number of cores.
///
/// A sealed batch stays with its thread, which runs it itself once the sections
/// it waits for have moved on (it looks at their sequence numbers every
/// `pollInterval` retirements, reading those records, writing nothing of
/// theirs): a request's child is dismantled on the thread that freed it (its
/// memory goes back to that thread's allocator arena), and no thread takes a
/// lock, flags another's record, runs another's frees or waits for another: a
/// thread descheduled inside a section only keeps the others' sealed batches (memory)
/// longer. Only at the thread's exit do they go to the shared
/// list, where the waited-for threads collect as they leave (above). A thread
/// that stops freeing keeps its last batches (memory only) until it frees again
/// or exits.
public final class Reclaimer: @unchecked Sendable {
    /// One thread's announcement (plain memory, never freed before the reclaimer,
    /// reused by later threads).
    public struct Record: ~Copyable {
        /// Odd inside a section; written only by the record's thread.
        @usableFromInline let sequence = Atomic<UInt>(0)
        /// Set while a retired object may wait for this thread: leaving then collects.
        @usableFromInline let waitedOn = Atomic<Bool>(true)
        fileprivate let claimed = Atomic<Bool>(true)
        fileprivate let next: UnsafeMutablePointer<Record>?
        /// What the record's thread retired and has not handed over yet (only that thread
        /// touches it). Out of line: writing it is then no access to the record, which
        /// other threads read meanwhile.
        fileprivate let local: UnsafeMutablePointer<Local> = {
            let local = UnsafeMutablePointer<Local>.allocate(capacity: 1)
            local.initialize(to: Local())
            return local
        }()
        @usableFromInline let reclaimer: Ref<Reclaimer>

        fileprivate init(next: UnsafeMutablePointer<Record>?, reclaimer: Reclaimer) {
            self.next = next
            self.reclaimer = .init(unretained: reclaimer)
        }

        deinit {
            local.deinitialize(count: 1)
            local.deallocate()
        }
    }

    /// A record's own retirements (its thread's only).
    fileprivate struct Local {
        /// Retired since the last seal.
        var pending: [@Sendable () -> Void] = []
        /// Sealed batches, oldest first.
        var sealed: [Sealed] = []
        /// An emptied batch's storage, for the next `pending` (no allocation per batch).
        var recycled: [@Sendable () -> Void] = []
        /// Retirements since the sealed batches were last looked at.
        var sincePoll = 0
    }

    /// A sealed batch and the sections under way when it was sealed (record, sequence seen).
    fileprivate struct Sealed {
        var actions: [@Sendable () -> Void]
        var waitingFor: [(UnsafeMutablePointer<Record>, UInt)]
    }

    private let heavyBarrier: @Sendable () -> Void
    private let batchSize: Int
    /// The batch scales with the threads up to this many (memory waiting stays bounded).
    public static var maxBatchFactor: Int { 8 }
    /// A thread looks at its sealed batches every this many retirements (each look reads the
    /// records they wait for: lines their threads write on every call).
    public static var pollInterval: Int { 8 }
    /// Sealed batches a thread keeps apart at most; older ones are merged (`seal`).
    public static var maxSealed: Int { 4 }
    /// Every record made, newest first (linked through `next`).
    private let records = Atomic<UInt>(0)
    private let claimedCount = Atomic<Int>(0)

    private struct Retiree {
        let action: @Sendable () -> Void
        /// The sections it waits for (record, sequence seen), or nil until the first collection.
        var waitingFor: [(UnsafeMutablePointer<Record>, UInt)]?
    }
    private let retirees = Lock<[Retiree]>([])

    /// `heavyBarrier` pairs with the light barrier readers issue in `enter` and `leave`.
    public init(batch: Int = 1, heavyBarrier: @escaping @Sendable () -> Void) {
        self.heavyBarrier = heavyBarrier
        batchSize = max(1, batch)
    }

    deinit {
        var next = UnsafeMutablePointer<Record>(bitPattern: records.load(ordering: .acquiring))
        while let record = next {
            next = record.pointee.next
            record.deinitialize(count: 1)
            record.deallocate()
        }
    }

    // MARK: threads

    /// A record for the calling thread, to keep until it exits (`release`). It
    /// starts flagged, so the thread's first `leave` collects: a retirement that
    /// ran while the record was being claimed may wait for it without having flagged it.
    public func claim() -> UnsafeMutablePointer<Record> {
        var record = UnsafeMutablePointer<Record>(bitPattern: records.load(ordering: .acquiring))
        while let r = record, !r.pointee.claimed.compareExchange(expected: false, desired: true, ordering: .acquiring).exchanged {
            record = r.pointee.next
        }
        if let record {
            record.pointee.waitedOn.store(true, ordering: .relaxed)
        } else {
            let fresh = ThreadPrivate.allocate(Record.self, capacity: 1)
            var head = records.load(ordering: .relaxed)
            while true {
                fresh.initialize(to: Record(next: UnsafeMutablePointer(bitPattern: head), reclaimer: self))
                let (done, seen) = records.compareExchange(expected: head, desired: UInt(bitPattern: fresh), ordering: .acquiringAndReleasing)
                if done { break }
                fresh.deinitialize(count: 1)
                head = seen
            }
            record = fresh
        }
        // Counted before the thread's first section, and fenced: a retirement that
        // counts no other thread (and skips its barrier) is seen by that section.
        claimedCount.add(1, ordering: .sequentiallyConsistent)
        atomicMemoryFence(ordering: .sequentiallyConsistent)
        return record!
    }

    /// The thread is exiting: whatever waits for it waits no more.
    public func release(_ record: UnsafeMutablePointer<Record>) {
        let sequence = record.pointee.sequence.load(ordering: .relaxed)
        if sequence & 1 == 1 { record.pointee.sequence.store(sequence &+ 1, ordering: .releasing) }
        let batched = handOver(record)
        record.pointee.claimed.store(false, ordering: .releasing)
        claimedCount.subtract(1, ordering: .sequentiallyConsistent)
        if batched || record.pointee.waitedOn.load(ordering: .relaxed) { collect(by: nil) }
    }

    // MARK: sections

    /// Enters a read-side section; true for the thread's outermost one, which
    /// must be left with `leave`. `lightBarrier` runs between the announcement
    /// and whatever the section reads.
    @inlinable @inline(__always)
    public static func enter(_ record: UnsafeMutablePointer<Record>, lightBarrier: () -> Void) -> Bool {
        let sequence = record.pointee.sequence.load(ordering: .relaxed)
        guard sequence & 1 == 0 else { return false }
        record.pointee.sequence.store(sequence &+ 1, ordering: .relaxed)
        lightBarrier()
        return true
    }

    /// Leaves the outermost section; collects if a retired object waits for it.
    /// `lightBarrier` orders the exit before the look at the flag.
    @inlinable @inline(__always)
    public static func leave(_ record: UnsafeMutablePointer<Record>, lightBarrier: () -> Void) {
        record.pointee.sequence.store(record.pointee.sequence.load(ordering: .relaxed) &+ 1, ordering: .releasing)
        lightBarrier()
        if record.pointee.waitedOn.load(ordering: .relaxed) { collectOnLeave(record) }
    }

    @usableFromInline @inline(never)
    static func collectOnLeave(_ record: UnsafeMutablePointer<Record>) {
        record.pointee.reclaimer.borrow { $0.collect(by: record) }
    }

    // MARK: retiring

    /// Runs `action` once no section that may have reached the object is under
    /// way: at once if there is none, else when the last of them leaves. Call it
    /// after the object was made unreachable; `caller` is the calling thread's
    /// record, if it has one. A caller inside a section collects when it leaves
    /// it (the sections it waits for are then looked for, later but still after
    /// the removal: one collection, and none of its barriers, per retirement).
    /// Batched, a caller outside any section keeps it (see the type): it runs on
    /// the caller's thread, at a later retirement once its batch's sections moved
    /// on, or at the thread's exit.
    public func retire(by caller: UnsafeMutablePointer<Record>?, _ action: @escaping @Sendable () -> Void) {
        if batchSize > 1, let caller, caller.pointee.sequence.load(ordering: .relaxed) & 1 == 0 {
            let local = caller.pointee.local  // read, then written through: no modifying access to the record
            local.pointee.pending.append(action)
            local.pointee.sincePoll &+= 1
            if local.pointee.pending.count >= batchSize &* min(max(claimedCount.load(ordering: .relaxed), 1), Self.maxBatchFactor) {
                return seal(caller)
            }
            if local.pointee.sincePoll >= Self.pollInterval, !local.pointee.sealed.isEmpty { runEnded(local) }
            return
        }
        let inside = retirees.withLock { list in
            list.append(Retiree(action: action, waitingFor: nil))
            guard let caller, caller.pointee.sequence.load(ordering: .relaxed) & 1 == 1 else { return false }
            caller.pointee.waitedOn.store(true, ordering: .relaxed)
            return true
        }
        if !inside { collect(by: caller) }
    }

    /// `retire` for a caller outside any section (`caller`'s sequence even)
    /// while no other thread holds a record: no section can be under way
    /// (`sectionsUnderWay`'s reasoning: a thread that claims one later sees the
    /// removal), so `action` runs now, with no bookkeeping (a child container
    /// freed per request, say). False, nothing run: the caller retires as usual.
    public func reclaimAlone(by caller: UnsafeMutablePointer<Record>?, _ action: () -> Void) -> Bool {
        guard let caller, caller.pointee.sequence.load(ordering: .relaxed) & 1 == 0 else { return false }
        atomicMemoryFence(ordering: .sequentiallyConsistent)
        guard claimedCount.load(ordering: .relaxed) <= 1 else { return false }
        action()
        return true
    }

    /// `retire` for an object no other thread's section can have reached (its remover
    /// vouches for that: the ABI's container looked up by one thread only, `Reclamation.retire`)
    /// by a caller outside any section (`caller`'s sequence even): the caller's own sections
    /// are over, so `action` runs now, with no barrier and no bookkeeping. False, nothing run
    /// (a caller inside a section, which may still be using it): the caller retires as usual.
    public func reclaimUnreached(by caller: UnsafeMutablePointer<Record>?, _ action: () -> Void) -> Bool {
        guard let caller, caller.pointee.sequence.load(ordering: .relaxed) & 1 == 0 else { return false }
        action()
        return true
    }

    /// Seals the pending batch of `caller` (the calling thread's record, outside any section):
    /// the sections under way now are what it waits for; run at once if none is.
    private func seal(_ caller: UnsafeMutablePointer<Record>) {
        let local = caller.pointee.local
        if !local.pointee.sealed.isEmpty { runEnded(local) }
        local.pointee.sincePoll = 0
        let actions = local.pointee.pending
        local.pointee.pending = local.pointee.recycled
        local.pointee.recycled = []
        let inside = sectionsUnderWay(caller, flagging: false)
        if inside.isEmpty { return run(actions, local) }
        local.pointee.sealed.append(Sealed(actions: actions, waitingFor: inside))
        guard local.pointee.sealed.count > Self.maxSealed else { return }
        // A section that lasts (or a thread descheduled in one): the two oldest wait as one, for
        // both's sections, so a look stays one batch's. Still this thread's: no other runs its frees.
        let oldest = local.pointee.sealed.removeFirst()
        local.pointee.sealed[0].actions.insert(contentsOf: oldest.actions, at: 0)
        for section in oldest.waitingFor where !local.pointee.sealed[0].waitingFor.contains(where: { $0 == section }) {
            local.pointee.sealed[0].waitingFor.append(section)  // each section once: the list stays short
        }
    }

    /// Runs the sealed batches of `local` (the calling thread's) whose sections have all moved
    /// on, oldest first, stopping at the first still waited for.
    private func runEnded(_ local: UnsafeMutablePointer<Local>) {
        local.pointee.sincePoll = 0
        while !local.pointee.sealed.isEmpty {
            // Acquiring, pairing with `leave`'s releasing store: the edge from what a
            // waited-for section read to the action that frees it (what TSan checks).
            local.pointee.sealed[0].waitingFor.removeAll { $0.0.pointee.sequence.load(ordering: .acquiring) != $0.1 }
            guard local.pointee.sealed[0].waitingFor.isEmpty else { return }
            // Taken out before running: an action may retire more (a destructor freeing a container).
            run(local.pointee.sealed.removeFirst().actions, local)
        }
    }

    /// Runs `actions`, then keeps their emptied storage for a later batch.
    private func run(_ actions: consuming [@Sendable () -> Void], _ local: UnsafeMutablePointer<Local>) {
        var actions = actions
        for action in actions { action() }
        actions.removeAll(keepingCapacity: true)
        if local.pointee.recycled.capacity < actions.capacity { local.pointee.recycled = actions }
    }

    /// Moves what `record` (its own thread's) retired and did not run yet to the retirees;
    /// whether it had any. Each batch becomes one retiree, waiting for the sections under way at
    /// the next collection (later than its seal: still after every removal in it).
    private func handOver(_ record: UnsafeMutablePointer<Record>) -> Bool {
        let local = record.pointee.local
        var batches = local.pointee.sealed.map(\.actions)
        if !local.pointee.pending.isEmpty { batches.append(local.pointee.pending) }
        guard !batches.isEmpty else { return false }
        local.pointee.sealed = []
        local.pointee.pending = []
        retirees.withLock { list in
            for batch in batches { list.append(Retiree(action: { for action in batch { action() } }, waitingFor: nil)) }
        }
        return true
    }

    /// Objects retired and not yet reclaimed on the shared list, batches kept by threads not counted (for tests).
    public var pendingCount: Int { retirees.withLock { $0.count } }

    /// What `record`'s thread (the caller) retired and keeps: pending and sealed (for tests).
    public func keptCount(by record: UnsafeMutablePointer<Record>) -> (pending: Int, sealed: Int) {
        let local = record.pointee.local
        return (local.pointee.pending.count, local.pointee.sealed.reduce(0) { $0 + $1.actions.count })
    }

    /// Snapshots the sections new retirees wait for, drops the sections that
    /// ended, runs the actions nothing waits for any more (outside the lock), and
    /// flags the records still waited for.
    private func collect(by caller: UnsafeMutablePointer<Record>?) {
        // Usually one action at most: kept out of an array (no allocation).
        var ready: (@Sendable () -> Void)?
        var moreReady: [@Sendable () -> Void] = []
        retirees.withLock { list in
            if list.contains(where: { $0.waitingFor == nil }) {
                let inside = sectionsUnderWay(caller)
                for i in list.indices where list[i].waitingFor == nil { list[i].waitingFor = inside }
            }
            // Compacted in place, in order (a batch frees many at once: no removal from the middle each).
            var kept = 0
            for i in list.indices {
                if !list[i].waitingFor!.isEmpty {
                    // Acquiring, pairing with `leave`'s releasing store: the edge from what a
                    // waited-for section read to the action that frees it (what TSan checks).
                    list[i].waitingFor!.removeAll { $0.0.pointee.sequence.load(ordering: .acquiring) != $0.1 }
                }
                if list[i].waitingFor!.isEmpty {
                    let action = list[i].action
                    if ready == nil { ready = action } else { moreReady.append(action) }
                } else {
                    if kept != i { list[kept] = list[i] }
                    kept += 1
                }
            }
            if kept < list.count { list.removeSubrange(kept...) }
            forEachRecord { record in
                let flag = list.contains { $0.waitingFor!.contains { $0.0 == record } }
                if record.pointee.waitedOn.load(ordering: .relaxed) != flag { record.pointee.waitedOn.store(flag, ordering: .relaxed) }
            }
        }
        ready?()
        for action in moreReady { action() }
    }

    /// The sections under way now, after the removals before this call. Every
    /// record is flagged before the barrier, so a section that ends after it
    /// sees its flag and collects (the flags of records not waited for are
    /// cleared again by the caller, under the lock).
    /// Without `flagging` (a sealed batch its own thread looks after) no record is written.
    private func sectionsUnderWay(_ caller: UnsafeMutablePointer<Record>?, flagging: Bool = true) -> [(UnsafeMutablePointer<Record>, UInt)] {
        atomicMemoryFence(ordering: .sequentiallyConsistent)
        let alone = claimedCount.load(ordering: .relaxed) <= (caller == nil ? 0 : 1)
        if !alone {
            if flagging { forEachRecord { $0.pointee.waitedOn.store(true, ordering: .relaxed) } }
            heavyBarrier()
        }
        var inside: [(UnsafeMutablePointer<Record>, UInt)] = []
        forEachRecord { record in
            let sequence = record.pointee.sequence.load(ordering: .acquiring)
            if sequence & 1 == 1 { inside.append((record, sequence)) }
        }
        return inside
    }

    // MARK: fork

    /// Before fork() (a `pthread_atfork` prepare handler): the shared list's lock is held
    /// across it, so the child's list is whole.
    public func prepareFork() { retirees.lockForFork() }

    /// After fork(), in the parent.
    public func parentAfterFork() { retirees.unlockAfterFork() }

    /// After fork(), in the child, on the forking thread (`mine`: its record, if it has one).
    /// The other threads do not exist there: their sections have ended (what waits for them
    /// waits no more) and their records are free for the child's later threads. What they
    /// kept and had not run is forgotten (memory only: one of them may have been changing it).
    public func childAfterFork(keeping mine: UnsafeMutablePointer<Record>?) {
        retirees.unlockAfterFork()
        var claimed = 0
        forEachRecord { record in
            guard record.pointee.claimed.load(ordering: .relaxed) else { return }
            if record == mine { return claimed += 1 }
            let sequence = record.pointee.sequence.load(ordering: .relaxed)
            if sequence & 1 == 1 { record.pointee.sequence.store(sequence &+ 1, ordering: .relaxed) }
            record.pointee.local.initialize(to: Local())  // over the old one, unread
            record.pointee.claimed.store(false, ordering: .relaxed)
        }
        claimedCount.store(claimed, ordering: .relaxed)
        // What the shared list held for them is collected at the forking thread's next leave.
        mine?.pointee.waitedOn.store(true, ordering: .relaxed)
    }

    private func forEachRecord(_ body: (UnsafeMutablePointer<Record>) -> Void) {
        var next = UnsafeMutablePointer<Record>(bitPattern: records.load(ordering: .acquiring))
        while let record = next {
            body(record)
            next = record.pointee.next
        }
    }
}
