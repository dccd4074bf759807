/// Edges to a published singleton held as split references (`SplitCount`,
/// `SingletonSlot.splitReference`) instead of retains of the instance: every resolve whose
/// graph points at the singleton would otherwise write the instance's reference
/// count, one cache line for all cores. A holder keeps the instance's address;
/// the count is found from the instance (`Instance.splitCount`), alive while any
/// split reference is: the slot, or after it let go the split references
/// between them, hold a strong reference.
///
/// Only blocks hold them (`InstanceBlock`, tagged entries); everything else that
/// points at an instance holds an ordinary reference.
enum SplitEdge {
    /// Drops a split reference to `instance`; the last one after its slot let go
    /// releases the strong reference they held.
    @inline(__always)
    static func release(_ instance: Borrowed<Instance>) {
        if instance.borrow({ $0.splitCount.release() }) { Ref<Instance>(word: instance.word)!.release() }
    }

    /// Another split reference, for a holder of one.
    @inline(__always)
    static func retain(_ instance: Borrowed<Instance>) {
        instance.borrow { $0.splitCount.retain() }
    }

    /// The strong reference the split references left hold between them once the slot let go
    /// (`SingletonSlot`): the last `release` gives it up.
    static func holdForRemaining(_ instance: Instance) { _ = Ref(retaining: instance) }

    /// Turns a split reference into an ordinary one (a rare path that needs
    /// one: a graph failing half-way makes separate instances).
    static func makeOrdinary(_ instance: Borrowed<Instance>) {
        _ = instance.retained()
        release(instance)
    }
}
