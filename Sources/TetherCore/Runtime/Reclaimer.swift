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
/// Batched (`batch` > 1), as RCU batches grace periods: a thread outside any
/// section keeps what it retires in its own record until it has `batch` of them
/// (or exits), then hands them over together: one collection, one heavy
/// barrier, for the lot. Waiting longer is safe (the sections are looked for
/// after every removal in the batch); it only keeps memory longer. The batch
/// grows with the threads holding records (`batch` times their number, up to
/// `maxBatchFactor` times): each heavy barrier interrupts every core running the
/// process, so with a fixed batch a core would take one interruption per `batch`
/// frees of each of N threads, N times more as the machine grows. Scaled, each
/// core takes about one per `batch` of its own thread's frees, on any number of cores.
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
        fileprivate let batch: UnsafeMutablePointer<[@Sendable () -> Void]> = {
            let batch = UnsafeMutablePointer<[@Sendable () -> Void]>.allocate(capacity: 1)
            batch.initialize(to: [])
            return batch
        }()
        @usableFromInline let reclaimer: Ref<Reclaimer>

        fileprivate init(next: UnsafeMutablePointer<Record>?, reclaimer: Reclaimer) {
            self.next = next
            self.reclaimer = .init(unretained: reclaimer)
        }

        deinit {
            batch.deinitialize(count: 1)
            batch.deallocate()
        }
    }

    private let heavyBarrier: @Sendable () -> Void
    private let batchSize: Int
    /// The batch scales with the threads up to this many (memory waiting stays bounded).
    public static var maxBatchFactor: Int { 8 }
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
    public func retire(by caller: UnsafeMutablePointer<Record>?, _ action: @escaping @Sendable () -> Void) {
        if batchSize > 1, let caller, caller.pointee.sequence.load(ordering: .relaxed) & 1 == 0 {
            let batch = caller.pointee.batch  // read, then written through: no modifying access to the record
            batch.pointee.append(action)
            guard batch.pointee.count >= batchSize &* min(max(claimedCount.load(ordering: .relaxed), 1), Self.maxBatchFactor) else { return }
            _ = handOver(caller)
            return collect(by: caller)
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

    /// Moves the batch of `record` (its own thread's) to the retirees; whether it had any.
    private func handOver(_ record: UnsafeMutablePointer<Record>) -> Bool {
        let batch = record.pointee.batch
        guard !batch.pointee.isEmpty else { return false }
        let actions = batch.pointee
        batch.pointee.removeAll(keepingCapacity: true)
        retirees.withLock { list in
            for action in actions { list.append(Retiree(action: action, waitingFor: nil)) }
        }
        return true
    }

    /// Objects retired and not yet reclaimed, batches kept by threads not counted (for tests).
    public var pendingCount: Int { retirees.withLock { $0.count } }

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
    private func sectionsUnderWay(_ caller: UnsafeMutablePointer<Record>?) -> [(UnsafeMutablePointer<Record>, UInt)] {
        atomicMemoryFence(ordering: .sequentiallyConsistent)
        let alone = claimedCount.load(ordering: .relaxed) <= (caller == nil ? 0 : 1)
        if !alone {
            forEachRecord { $0.pointee.waitedOn.store(true, ordering: .relaxed) }
            heavyBarrier()
        }
        var inside: [(UnsafeMutablePointer<Record>, UInt)] = []
        forEachRecord { record in
            let sequence = record.pointee.sequence.load(ordering: .acquiring)
            if sequence & 1 == 1 { inside.append((record, sequence)) }
        }
        return inside
    }

    private func forEachRecord(_ body: (UnsafeMutablePointer<Record>) -> Void) {
        var next = UnsafeMutablePointer<Record>(bitPattern: records.load(ordering: .acquiring))
        while let record = next {
            body(record)
            next = record.pointee.next
        }
    }
}
