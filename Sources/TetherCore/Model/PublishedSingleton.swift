import Synchronization

/// A registration's published singleton, apart from the registration itself: the
/// slot resolves read without a lock (`SingletonSlot`; the ABI lends it:
/// `SingletonLoan`), and the first slot ever published, which this keeps alive
/// as long as the registration (`Registration.Rare.kept` keeps later ones, so a
/// reader never sees a slot freed). The registration decides whether an instance
/// may be published (not retired, its scope unchanged) and holds the lock writers
/// take (`Registration.lock`); this type holds the words and says what
/// publishing, reading and unpublishing do to them.
@usableFromInline
struct PublishedSingleton: ~Copyable {
    /// The current slot, or empty (+0: `first` or `Rare.kept` owns it).
    @usableFromInline let current = AtomicRef<SingletonSlot>()
    /// The first slot published (+1), kept here rather than in `Rare.kept`: a request's
    /// value (published once) then makes no `Rare`.
    private let first = AtomicRef<SingletonSlot>()

    init() {}

    /// Whether no singleton was ever published (or `forgetAll` forgot them). Caller holds the lock.
    var isEmpty: Bool { current.isEmpty && first.isEmpty }

    /// The published instance, retained, unless there is none or it is gone.
    @inline(__always)
    func retained() -> Ref<Instance>? { current.load()?.borrow { $0.retained } }

    /// The published instance with one split reference for an edge (`SingletonSlot.splitReference`).
    @inline(__always)
    func splitReference() -> Ref<Instance>? { current.load()?.borrow { $0.splitReference() } }

    /// Publishes `slot`; `keep` keeps it alive as long as the registration unless it is the
    /// first. Caller holds the lock.
    func publish(_ slot: SingletonSlot, keep: (SingletonSlot) -> Void) {
        if first.isEmpty { first.publish(retaining: slot) } else { keep(slot) }
        current.publish(Borrowed(slot))
    }

    /// Unpublishes the current slot (acquiring and releasing: lenders' recheck pairs with it
    /// through `SlotBridge.unpublishBarrier`, see `SingletonLoan`). Caller holds the lock.
    func unpublish() -> SingletonSlot? { current.unpublish()?.object }

    /// Lets go of the first slot, which nothing reads any more (the registration's deinit).
    func forgetFirst() { first.releaseOwned() }
}
