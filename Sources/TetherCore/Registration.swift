import Synchronization

/// A key's factory, declared parameters, scope, destructor and completion
/// callbacks, plus the scope's cache. Owned by one container.
///
/// Reads on the resolve path take no mutex: the current spec is published
/// through an atomic and every spec stays alive as long as the registration, so
/// a reader never sees one freed; singletons are read through slots that live as
/// long as the registration; the weak-scope cache sits behind a spin lock held only
/// to load it. Writers (configuration, publication, reset) also take `lock`.
public final class Registration: @unchecked Sendable {
    public let key: Key
    public let params: [Param]
    public let factory: Factory
    /// Declared runtime-argument types, in order.
    public let argumentTypes: [ArgumentType]
    /// Strong: the cycle container -> registration -> container is broken by `Container.close()`.
    let container: Container

    /// The current `InstanceSpec` (unretained; `Owned.specs` keeps it alive).
    private let specAddress = Atomic<UInt>(0)
    /// The current singleton slot, or 0 (unretained; `Owned.slots` keeps every
    /// slot alive as long as the registration, so a reader never sees one freed).
    private let singletonAddress = Atomic<UInt>(0)
    /// Weak scope: a weak reference swapped under a spin lock.
    private let cacheLock = SpinLock()
    private var weakCache = WeakBox(nil)

    private struct Owned {
        var specs: [InstanceSpec] = []
        var slots: [SingletonSlot] = []
        var isLive = true
        var observed: [ObservedEdge] = []
    }
    private let lock = Mutex(Owned())

    /// A shared instance created by a graph that has not published it yet.
    /// Touched only by the thread holding the creation lock.
    var pending: Instance?

    init(key: Key, params: [Param], factory: Factory, container: Container) {
        self.key = key
        self.params = params
        self.factory = factory
        self.container = container
        argumentTypes = params.compactMap { if case .argument(let t) = $0 { t } else { nil } }
        install(InstanceSpec(key: key, scope: .graph, context: nil, destructor: nil, completions: []))
    }

    public var spec: InstanceSpec {
        Unmanaged<InstanceSpec>.fromOpaque(UnsafeRawPointer(bitPattern: specAddress.load(ordering: .acquiring))!).takeUnretainedValue()
    }

    public var isLive: Bool { lock.withLock { $0.isLive } }

    private func install(_ spec: InstanceSpec) {
        lock.withLock { owned in install(spec, &owned) }
    }

    private func install(_ spec: InstanceSpec, _ owned: inout Owned) {
        owned.specs.append(spec)
        specAddress.store(UInt(bitPattern: Unmanaged.passUnretained(spec).toOpaque()), ordering: .releasing)
    }

    /// Changing the scope drops what the old scope cached.
    public func setScope(_ scope: Scope) {
        let dropped = lock.withLock { owned -> Dropped? in
            let current = owned.specs.last!
            guard current.scope != scope else { return nil }
            install(current.with(scope: scope), &owned)
            return clearCaches(&owned)
        }
        container.drop(dropped.map { [$0] } ?? [])
    }

    public func setContext(_ context: UnsafeMutableRawPointer?, destructor: Destructor?) {
        lock.withLock { owned in install(owned.specs.last!.with(context: .some(context), destructor: .some(destructor)), &owned) }
    }

    public func addCompletion(_ completion: Completion) {
        lock.withLock { owned in
            let current = owned.specs.last!
            install(current.with(completions: current.completions + [completion]), &owned)
        }
    }

    /// The cached shared instance, if any.
    @inline(__always)
    func cached(_ scope: Scope) -> Instance? {
        switch scope {
        case .singleton:
            let address = singletonAddress.load(ordering: .acquiring)
            guard address != 0 else { return nil }
            return Unmanaged<SingletonSlot>.fromOpaque(UnsafeRawPointer(bitPattern: address)!).takeUnretainedValue().instance
        case .weak:
            return cacheLock.withLock { weakCache.value }
        default:
            return nil
        }
    }

    /// Publishes a shared instance made by a finished graph (unless the
    /// registration was replaced or its scope changed meanwhile).
    func publish(_ instance: Instance) {
        lock.withLock { owned in
            guard owned.isLive, spec.scope == instance.spec.scope else { return }
            switch instance.spec.scope {
            case .singleton:
                let slot = SingletonSlot(instance)
                owned.slots.append(slot)
                singletonAddress.store(UInt(bitPattern: Unmanaged.passUnretained(slot).toOpaque()), ordering: .releasing)
            case .weak:
                cacheLock.withLock { weakCache = WeakBox(instance) }
            default:
                break
            }
        }
    }

    /// Empties the cache of `scope`; returns what the caller must drop (outside locks).
    func reset(_ scope: Scope) -> Dropped? {
        lock.withLock { owned in spec.scope == scope ? clearCaches(&owned) : nil }
    }

    /// Detaches the registration from its container (replaced or container freed).
    func retire() -> Dropped? {
        lock.withLock { owned in
            owned.isLive = false
            return clearCaches(&owned)
        }
    }

    private func clearCaches(_ owned: inout Owned) -> Dropped? {
        cacheLock.withLock { weakCache = WeakBox(nil) }
        // Sequentially consistent, paired with the loan's record and recheck (SingletonLoan).
        let address = singletonAddress.exchange(0, ordering: .sequentiallyConsistent)
        guard address != 0 else { return nil }
        let slot = Unmanaged<SingletonSlot>.fromOpaque(UnsafeRawPointer(bitPattern: address)!).takeUnretainedValue()
        return slot.takeStrong().map { Dropped(instance: $0, lent: slot.isLent) }
    }

    /// The published singleton, to hand out without a retain (see `SingletonLoan`).
    @inline(__always)
    public func singletonLoan() -> SingletonLoan? {
        let address = singletonAddress.load(ordering: .acquiring)
        guard address != 0 else { return nil }
        return SingletonLoan(registration: .passUnretained(self), address: address)
    }

    @inline(__always)
    fileprivate func stillPublished(_ address: UInt) -> Bool {
        singletonAddress.load(ordering: .sequentiallyConsistent) == address
    }

    /// Edges completion callbacks or factories were seen to make from this
    /// registration's instances (for the picture; not part of resolution).
    public struct ObservedEdge: Hashable, Sendable {
        public let target: Key
        public let isWeak: Bool
    }

    public var observedEdges: [ObservedEdge] {
        lock.withLock { $0.observed }.sorted { ($0.target.name, $0.isWeak ? 1 : 0) < ($1.target.name, $1.isWeak ? 1 : 0) }
    }

    func noteEdge(to target: Key, isWeak: Bool) {
        let edge = ObservedEdge(target: target, isWeak: isWeak)
        lock.withLock { owned in if !owned.observed.contains(edge) { owned.observed.append(edge) } }
    }
}

/// One published singleton. Graphs load the instance through a weak reference
/// written only in `init`, so a reset racing with a hit is safe: the hit gets a
/// strong reference or nil, never an instance already being destroyed. Loans
/// (`SingletonLoan`) take no reference at all. Slots are freed with their registration.
final class SingletonSlot: @unchecked Sendable {
    weak var instance: Instance?
    private var strong: Instance?
    /// The instance, unretained, for loans.
    let unretained: Unmanaged<Instance>
    /// Set once the first loan is made: only then must unpublishing recall loans.
    private let lent = Atomic<Bool>(false)

    init(_ instance: Instance) {
        self.instance = instance
        strong = instance
        unretained = .passUnretained(instance)
    }

    var isLent: Bool { lent.load(ordering: .sequentiallyConsistent) }

    @inline(__always)
    func markLent() {
        if !lent.load(ordering: .relaxed) { lent.store(true, ordering: .sequentiallyConsistent) }
    }

    /// Hands the cache's strong reference to the caller (under the registration's lock).
    func takeStrong() -> Instance? {
        defer { strong = nil }
        return strong
    }
}

/// A published singleton handed out without a retain, so hits on one singleton
/// from many threads write no shared cache line. The borrower takes `lend()`,
/// records the loan where `SlotBridge.recall` finds it (a handle), then calls
/// `confirm()`. True: the singleton was still published after the loan was
/// recorded, so whoever unpublishes it recalls the loan (turns it into a
/// reference) before dropping its own. False: the borrower withdraws the loan
/// (unless it was recalled already) and resolves the ordinary way.
public struct SingletonLoan {
    /// Unretained: the registration outlives every loan of its singletons.
    let registration: Unmanaged<Registration>
    let address: UInt

    @inline(__always)
    public func lend() -> Unmanaged<Instance> {
        Unmanaged<SingletonSlot>.fromOpaque(UnsafeRawPointer(bitPattern: address)!)._withUnsafeGuaranteedRef { slot in
            slot.markLent()
            return slot.unretained
        }
    }

    @inline(__always)
    public func confirm() -> Bool { registration._withUnsafeGuaranteedRef { $0.stillPublished(address) } }
}

/// An instance a registration's cache let go of; `Container.drop` recalls its
/// loans, if it was lent, then releases it (outside locks).
struct Dropped {
    let instance: Instance
    let lent: Bool
}
