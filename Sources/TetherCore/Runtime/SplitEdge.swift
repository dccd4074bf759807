/// Edges to a published singleton held as split references (`SplitCount`,
/// `SingletonSlot.splitReference`) instead of retains of the instance: every resolve whose
/// graph points at the singleton would otherwise write the instance's reference
/// count, one cache line for all cores. A holder keeps the instance's address;
/// the count is found from the instance (`Instance.splitCount`), alive while any
/// split reference is: the slot, or after it let go the split references
/// between them, hold a strong reference.
///
/// The one home of an edge to a shared instance of an enclosing container: held
/// as a word, the instance's address (an ordinary reference) or, tagged `bit`, a
/// split one. Blocks (`InstanceBlock`'s external entries) and instances' own edges
/// (`Instance.make`: a CONTAINER-scoped instance of a request's child over the root's
/// singletons, say) hold them; everything else that points at an instance holds an
/// ordinary reference. An edge word is released by `releaseEdge`, wherever it goes
/// (`ReleaseQueue` pops them).
enum SplitEdge {
    /// Instances are aligned to 16 bytes: bit 1 of an edge word is free (`InstanceBlock`
    /// uses bit 0 for its inner records).
    static var bit: UInt { 2 }

    /// The edge word of `instance`, taking over the caller's split reference.
    @inline(__always)
    static func word(_ instance: Ref<Instance>) -> UInt { instance.word | bit }

    /// The instance an edge word points at (ordinary or split).
    @inline(__always)
    static func target(_ word: UInt) -> Borrowed<Instance> { Borrowed(word: word & ~bit)! }

    /// Releases the reference an edge word holds, of either kind.
    @inline(__always)
    static func releaseEdge(_ word: UInt) {
        if word & bit != 0 { release(target(word)) } else { Ref<Instance>(word: word)!.release() }
    }

    /// The edge word for a new owner of `made[i]`, which holds a split reference: the
    /// words' own the first time (no count written), a new split reference after.
    @inline(__always)
    static func take(_ made: ReferenceWords<Instance>, _ i: Int) -> UInt {
        let (instance, owned) = made.move(i)
        if !owned { retain(instance.borrowed) }
        return word(instance)
    }

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
