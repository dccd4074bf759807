import Synchronization

/// One published singleton. Graphs load the instance through a weak reference
/// written only in `init`, so a reset racing with a hit is safe: the hit gets a
/// strong reference or nil, never an instance already being destroyed. Loans
/// (`SingletonLoan`) take no reference at all. Slots are freed with their registration.
@usableFromInline
final class SingletonSlot: @unchecked Sendable {
    private let weak: WeakRef
    private var strong: Instance?
    /// The instance, unretained, for loans.
    @usableFromInline let unretained: Ref<Instance>
    /// The instance's pointer, for comparisons that must not touch the instance (`SingletonLoan.pointer`).
    @usableFromInline let pointer: UnsafeMutableRawPointer
    /// Set once the first loan is made: only then must unpublishing hand the instance to `SlotBridge.recall`.
    @usableFromInline let lent = Atomic<Bool>(false)
    /// When it was published (its container's `nextSequence`).
    let sequence: UInt64
    /// Whether it may be lent at all (`Registration.lendsSingleton`): else unpublishing needs no barrier.
    let lendable: Bool

    init(_ instance: Instance, lendable: Bool = true, sequence: UInt64) {
        self.lendable = lendable
        self.sequence = sequence
        weak = instance.weakRef
        strong = instance
        unretained = .init(unretained: instance)
        pointer = instance.pointer
    }

    deinit { letGoOfSplit() }  // a slot freed holding its instance (`takeStrong` never ran)

    /// The instance, retained, unless it is gone.
    var instance: Instance? { weak.upgrade() }
    /// `instance`, the caller's reference as is.
    var retained: Ref<Instance>? { weak.upgradeRetained() }

    /// Read after `SlotBridge.unpublishBarrier` (which orders it).
    var isLent: Bool { lent.load(ordering: .relaxed) }

    /// Before the loan is recorded, so the lender's barrier orders it too.
    @inlinable @inline(__always)
    func markLent() {
        if !lent.load(ordering: .relaxed) { lent.store(true, ordering: .relaxed) }
    }

    /// Hands the cache's strong reference to the caller (under the registration's lock).
    func takeStrong() -> Instance? {
        defer { strong = nil }
        letGoOfSplit()
        return strong
    }

    /// The instance with one split reference for an edge: counted on the calling
    /// CPU's line of the instance's split count (`WeakRef.openSplitCount`) instead of
    /// the instance's reference count, which every resolve's graph would write.
    /// Nil once the slot let go, or for a request's value (`lendable` false: shared
    /// by few resolves, not worth a count of its own).
    @inline(__always)
    func splitReference() -> Ref<Instance>? {
        guard lendable, let split = weak.openSplitCount(), split.tryAcquire() else { return nil }
        return unretained
    }

    /// The slot lets go: from now on edges take ordinary references. While split
    /// references remain, they hold one reference between them, kept here and
    /// released by the last of them (`SplitEdge.release`).
    private func letGoOfSplit() {
        if let strong, let split = weak.closeSplitCount(), !split.kill() { SplitEdge.holdForRemaining(strong) }
    }
}

/// An instance a cache let go of; `Container.drop` has its loans taken over,
/// if it was a lent singleton, then releases it (outside locks), last-made first.
struct Dropped {
    let instance: Instance
    let slot: SingletonSlot?
    let sequence: UInt64
}
