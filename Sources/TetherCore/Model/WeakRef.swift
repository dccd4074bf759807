import Synchronization
import SwiftRuntime

/// A weak reference to an instance: does not keep it alive, can be upgraded.
///
/// One per instance, made on first need (`Instance.weakRef`) and shared by every
/// weak reference to it, so weak edges cost no Swift `weak`: that would give
/// the instance a runtime side table, an extra allocation that also sends every
/// later retain and release of it down the runtime's slow path. The instance
/// keeps its weak reference in its edge word, and the same object carries its
/// rare edges (those made after construction, lazy cells), so the common weak
/// edge costs one allocation in all.
public final class WeakRef: @unchecked Sendable {
    /// The key of the instance, kept for messages after it is gone.
    public let key: Key
    /// Guards `target`: the instance's deinit clears it, and an upgrade retains
    /// the target only while holding it, so it never touches freed memory.
    private let lock = Atomic<Bool>(false)
    /// Unretained; nil once the instance is being destroyed.
    private var target: Borrowed<Instance>?
    /// The instance's constructor edge word while this object holds its edges
    /// (the instance's deinit takes it).
    var dependencies: UInt = 0
    /// Optional, so the common weak reference has no arrays to release.
    var late: LateEdges?
    /// The split count of the edges to the instance while a singleton slot
    /// publishes it (`SingletonSlot.splitReference`), made on first use. Here
    /// because both the slot and the instance keep this object: the count outlives
    /// whichever of them goes last. Closed once the slot let go.
    private let splitWord = SplitCountWord()

    init(_ instance: Borrowed<Instance>, key: Key) {
        target = instance
        self.key = key
    }

    deinit { splitWord.deallocate() }

    /// The split count, made now if there is none; nil once closed.
    @inline(__always)
    func openSplitCount() -> SplitCount? { splitWord.open() }

    /// No split count is made or used from now on; the one made, for the first caller
    /// only, to kill (`SplitCount.kill`).
    func closeSplitCount() -> SplitCount? { splitWord.close() }

    /// The split count of an instance a split reference holds (so it was made).
    var splitCount: SplitCount { splitWord.count }

    /// The instance if it is still alive, retained for the caller.
    public func upgrade() -> Instance? { upgradeRetained()?.take() }

    /// `upgrade`, the caller's reference handed over as is (no retain and
    /// release on the way, for callers that store it unmanaged).
    @inline(__always)
    func upgradeRetained() -> Ref<Instance>? {
        // A count that already reached zero is not revived: the instance is being destroyed.
        lock.withSpinLock { target?.tryRetained() }
    }

    /// For the instance's deinit: no upgrade succeeds from now on; hands over
    /// the edges the instance owned.
    func detach() -> (dependencies: UInt, late: LateEdges?) {
        lock.withSpinLock { target = nil }
        defer { dependencies = 0; late = nil }
        return (dependencies, late)
    }
}

/// Edges an instance gained after construction and the lazy cells it owns.
struct LateEdges {
    var strong: [Instance] = []
    var lazyCells: [LazyCell] = []
    /// What the instance's slots received and it must outlive (ALL slots' lists), let go of after its destructor.
    var owned: [SlotList] = []
}

/// A weak reference in a value, for caches that swap it under their own lock.
struct WeakBox: @unchecked Sendable {
    private let ref: WeakRef?
    init(_ value: Instance?) { ref = value?.weakRef }
    var value: Instance? { ref?.upgrade() }
    var retained: Ref<Instance>? { ref?.upgradeRetained() }
}
