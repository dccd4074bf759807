import Synchronization

/// A key's factory, declared parameters, scope, destructor and completion
/// callbacks. Owned by one container. Its caches live in types of their own: the
/// published singleton (`PublishedSingleton`; its slots: `SingletonSlot`; the ABI's
/// loans: `SingletonLoan`), the weak scope's instance (`WeakCache`, in `rare`), the
/// plans (Registration+Plans.swift); this type decides when they may change.
///
/// Reads on the resolve path take no lock: the current spec is published
/// through an atomic and every spec stays alive as long as the registration, so
/// a reader never sees one freed; singletons are read through slots that live as
/// long as the registration. Weak-scope hits and writers (configuration,
/// publication, reset) take `lock`, a spin lock held for a few instructions.
/// Fields are ordered so the object fits a 120-byte allocation (a 128-byte malloc chunk): what only some
/// registrations need (the weak scope's cache, kept objects, observed edges) lives in `rare`,
/// and up to `inlineParams` declared parameters live in the object itself.
public final class Registration: @unchecked Sendable {
    /// The declared parameters when there are at most `inlineParams` of them (a
    /// registration then makes no allocation for them), else the address of
    /// their allocation. First, so `_getUnsafePointerToStoredProperties` finds it;
    /// only ever accessed through that raw address (see `params`).
    private var paramArea: (UInt, UInt) = (0, 0)
    public let key: Key
    /// The number of declared parameters (below `argumentsBit`), and
    /// `argumentsBit` when one of them is a runtime argument (the hit path asks).
    @usableFromInline let paramInfo: UInt16
    /// A declared value key (`Container.declareValue`): its instances are the values
    /// descendants provide, kept in their caches (`Container.providedValue(of:)`).
    public let isDeclaredValue: Bool
    /// Guards the `var`s below.
    let lock = Atomic<Bool>(false)
    /// `retiredBit` and `visibleBit`: the registration was retired; replaced
    /// specs are kept once it is visible (readers may hold them). `sharedSpecBit`:
    /// the current spec is its key's default (`DefaultSpecs`), which it does not own.
    private var flags: UInt8 = 0
    /// The factory, owned (+1), read borrowed by lock-free readers (`factoryReference`):
    /// replaced only by `replaceFactory`, which keeps the one it replaces as long as the
    /// registration (a resolve may still be calling it). One factory may serve many
    /// registrations (an immutable one: the ABI's per-thread FFI factories).
    private let factorySlot = AtomicRef<Factory>()
    /// Unowned: the container keeps its registrations until it is dismantled or
    /// deinitialized, and nothing uses a registration after that (the ABI drops
    /// registration handles before a freed container is retired). Unsafe, so
    /// reading it costs no reference count: resolves on every thread read it, and
    /// a safe unowned read is an atomic increment and decrement on the container.
    unowned(unsafe) let container: Container
    /// Where its key first came in its container's registrations (`Container.allRegistrations`);
    /// a replacement keeps the place of what it replaced. Written and read under the container's lock.
    var order: UInt64 = 0

    /// The registration a decorator moved this one from (its factory and context, now under
    /// `K (before decorator n)`), or nil: a resolve constructing one is constructing the
    /// other, so a factory that resolves its key once decorated is a cycle (`Graph.existing`),
    /// never a second call of itself. Set before the registration is visible.
    var movedFrom: ObjectIdentifier?

    /// Where a decorator moved this registration (`Container.decorate`), under `lock`: a handle
    /// given out after the move (a destructor the registering call ran decorated the key) names that one.
    private var movedTo: Registration?

    /// Records where a decorator moved this registration, before it is retired.
    func moved(to registration: Registration) {
        lock.withSpinLock { movedTo = registration }
    }

    /// This registration if live, else where a decorator moved it if that one is live: what a handle
    /// to it configures.
    public var liveMove: Registration? {
        let moved: Registration? = lock.withSpinLock { flags & Self.retiredBit == 0 ? self : movedTo }
        return moved.flatMap { $0 === self || $0.isLive ? $0 : nil }
    }

    /// What a resolve under way compares to find a registration it is constructing further out:
    /// the first registration of a chain of decorators' moves.
    var constructionIdentity: ObjectIdentifier { movedFrom ?? ObjectIdentifier(self) }

    /// The current spec, owned (+1: given up by `install` or deinit) unless `sharedSpecBit`
    /// says it is its key's default (+0), read borrowed by lock-free readers.
    private let specSlot = AtomicRef<InstanceSpec>()
    /// The published singleton (writers hold `lock`).
    @usableFromInline let singleton = PublishedSingleton()
    /// The plan of resolves from `container` (`Plan`), +0 (`rare.kept`
    /// holds it, and every replaced one unless the bridge retires them), or 0 until the first (Registration+Plans.swift).
    let planAddress = Atomic<UInt>(0)
    /// The `Rare`, owned (+1), or empty: made on first use, under `lock`, and never
    /// replaced until deinit, so lock-free readers (`noteEdge`) may load it.
    private let rareSlot = AtomicRef<Rare>()

    final class Rare {
        /// Weak scope: the cached instance; written under the registration's lock.
        var weak = WeakCache()
        /// What lock-free readers may still hold, kept until the registration goes:
        /// specs replaced once it was visible, every singleton slot, every plan.
        var kept: [AnyObject] = []
        /// Plans recorded so far (`maxPlans`, unless the bridge retires replaced plans: then only a diagnostic).
        var plans = 0
        /// Plans of resolves from children with registrations of their own, one per
        /// per-request component (`componentPlan`), the last one served first; all kept in `kept` too.
        let lastComponentPlan = Atomic<UInt>(0)
        var componentPlans: [Plan] = []
        /// Child graphs that were not plain (nothing recorded): they count against `maxPlans` too
        /// (retiring: those with no component to key a declined plan by, per configuration).
        var componentDeclines = 0
        /// Why the last of them was not (`PlanStats`).
        var componentDecline: Plan.Decline?
        /// Plans compiled against the caches' state (`creationPlan`: one per state met, while the
        /// configuration holds), and how many were recorded or tried (at most `maxPlans`).
        var creationPlans: [Plan] = []
        var creationsRecorded = 0
        /// Why the last creation plan recorded was none, when that names a reason of its own
        /// (a one-shot plan's recorder's, `oneShotPlan`): what a build after the warm plan's `notCached` counts (`PlanStats`).
        var creationDecline: Plan.Decline?
        /// Retiring (the bridge's `retiresReplaced`): the configuration `creationsRecorded` and
        /// `componentDeclines` count for; a new one retires the plans of the last.
        var countedConfiguration: UInt = 0
        let observed = ObservedEdgeList()
        /// The `SupersedeClock` tick at which `dropBuilt` last found this key built over a changed
        /// one (`supersede`); written under the registration's lock.
        var supersededAt: UInt = 0
    }

    /// `body` with the rare part, if made; no reference count (it lives as long as the registration).
    @inline(__always)
    func withRare<T>(_ body: (Rare) -> T) -> T? {
        rareSlot.load()?.borrow(body)
    }

    /// Caller holds `lock`.
    var rareForWriting: Rare {
        if let rare = withRare({ $0 }) { return rare }
        let made = Rare()
        rareSlot.publish(retaining: made)
        return made
    }

    /// A word the embedding layer keeps with the registration (the ABI: its handle).
    public let attachment = Atomic<UInt>(0)
    /// The first spec replaced once visible, kept here rather than in `rare`: a context
    /// set right after registering (a registration made per request) then makes no `Rare`.
    /// Written under `lock`; in the object.
    private var firstReplacedSpec: InstanceSpec?
    /// Whether its published singleton may be lent (`SingletonLoan`): not a value a
    /// child container provides (a request's), whose unpublishing at the child's free
    /// then needs no heavy barrier (`Container.drop`). Written before the registration is visible.
    @usableFromInline var lendsSingleton = true

    /// Parameters kept in `paramArea`: two fit its 16 bytes.
    static var inlineParams: Int { 2 }
    @inlinable static var argumentsBit: UInt16 { 0x8000 }
    private static var retiredBit: UInt8 { 1 }
    private static var visibleBit: UInt8 { 2 }
    private static var sharedSpecBit: UInt8 { 4 }

    init(key: Key, params: [Param], factory: Factory, container: Container, holdsObject: Bool = false) {
        precondition(params.count < Int(Self.argumentsBit), "Tether: more than 32,767 params")
        precondition(MemoryLayout<Param>.stride * Self.inlineParams <= MemoryLayout<(UInt, UInt)>.size)
        self.key = key
        let hasArguments = params.contains { if case .argument = $0 { true } else { false } }
        paramInfo = UInt16(params.count) | (hasArguments ? Self.argumentsBit : 0)
        factorySlot.publish(retaining: factory)
        isDeclaredValue = factory is DeclaredValueFactory
        self.container = container
        installFirstSpec(holdsObject: holdsObject)
        let area = _getUnsafePointerToStoredProperties(self)
        // Swift lays out a final class's stored properties in order; checked, not assumed.
        precondition(withUnsafeMutablePointer(to: &paramArea) { UnsafeMutableRawPointer($0) } == area, "Tether: paramArea is not the first stored property")
        if params.count <= Self.inlineParams {
            _ = UnsafeMutableBufferPointer(start: area.bindMemory(to: Param.self, capacity: params.count), count: params.count)
                .initialize(from: params)
        } else {
            let storage = UnsafeMutableBufferPointer<Param>.allocate(capacity: params.count)
            _ = storage.initialize(from: params)
            area.storeBytes(of: storage.baseAddress!, as: UnsafeMutablePointer<Param>.self)
        }
    }

    /// The spec a new registration starts with: its key's default (`DefaultSpecs`) if it has one.
    private func installFirstSpec(holdsObject: Bool) {
        if !holdsObject, let shared = DefaultSpecs.spec(for: key) {
            specSlot.publish(shared)
            flags = Self.sharedSpecBit
        } else {
            let spec = InstanceSpec(key: key, scope: .graph, context: nil, destructor: holdsObject ? releaseObject : nil,
                                    completions: [], holdsObject: holdsObject)
            specSlot.publish(retaining: spec)
            flags = 0
        }
    }

    /// Lets go of the specs this registration owns (not its key's default).
    private func releaseSpecs() {
        if flags & Self.sharedSpecBit == 0 { _ = specSlot.take()?.take() }
        firstReplacedSpec = nil
    }

    deinit {
        singleton.forgetFirst()  // first, as before the slots `rare` kept
        releaseSpecs()
        factorySlot.releaseOwned()
        rareSlot.releaseOwned()
        if params.count > Self.inlineParams { UnsafeMutableBufferPointer(mutating: params).deallocate() }
    }

    /// Declared parameters, in order: immutable plain memory that lives as long
    /// as the registration, so the resolve loop reads them without reference counting.
    public var params: UnsafeBufferPointer<Param> {
        @inline(__always) get {
            let count = Int(paramInfo & ~Self.argumentsBit)
            let area = _getUnsafePointerToStoredProperties(self)
            let start = count <= Self.inlineParams ? area.assumingMemoryBound(to: Param.self)
                                                   : area.load(as: UnsafeMutablePointer<Param>.self)
            return UnsafeBufferPointer(start: start, count: count)
        }
    }

    /// Whether `params` declares runtime arguments.
    @inlinable public var hasArguments: Bool {
        @inline(__always) get { paramInfo & Self.argumentsBit != 0 }
    }

    /// Declared runtime-argument types, in order.
    public var argumentTypes: [ArgumentType] {
        params.compactMap { if case .argument(let t) = $0 { t } else { nil } }
    }

    public var spec: InstanceSpec { specReference.object }

    /// The current factory (retained: for callers off the resolve path).
    public var factory: Factory { factoryReference.object }

    /// The current factory, unretained: every factory lives as long as its registration.
    @usableFromInline var factoryReference: Borrowed<Factory> {
        @inline(__always) get { factorySlot.load()! }
    }

    /// Makes `factory` current (the ABI's `tether_set_variadic`: a call re-prepared, in a new
    /// factory, as a factory may be shared). The one replaced is kept as long as the registration.
    public func replaceFactory(_ factory: Factory) {
        lock.withSpinLock {
            let old = factorySlot.exchange(retaining: factory)!
            rareForWriting.kept.append(old.take())
        }
        container.configurationChanged()  // plans hold what they were recorded with
    }

    /// The current spec, unretained: every spec lives as long as its registration.
    var specReference: Borrowed<InstanceSpec> {
        @inline(__always) get { specSlot.load()! }
    }

    public var isLive: Bool { lock.withSpinLock { flags & Self.retiredBit == 0 } }

    /// From now on replaced specs are kept (see `Container.register`).
    func markVisible() {
        lock.withSpinLock { flags |= Self.visibleBit }
    }

    /// Makes `spec` current. Caller holds `lock`.
    private func install(_ spec: InstanceSpec) {
        let old = specSlot.exchange(retaining: spec)!  // one store: readers always find a spec
        if flags & Self.sharedSpecBit != 0 {
            flags &= ~Self.sharedSpecBit  // immortal (+0 here): nothing to release or keep
        } else if flags & Self.visibleBit == 0 {
            old.release()
        } else if firstReplacedSpec == nil {
            firstReplacedSpec = old.take()
        } else {
            rareForWriting.kept.append(old.take())
        }
    }

    /// Changing the scope drops what the old scope cached. Refuses a scope
    /// `Registration.check` refuses for these params (nothing changes then).
    public func setScope(_ scope: Scope) throws(TetherError) {
        try Registration.check(params, scope: scope, key: key)
        let dropped = lock.withSpinLock { () -> Dropped? in
            // Unretained: the current spec may be its key's default, which every request's
            // registration of the key starts with (a count on it: a word all their threads write).
            guard let changed = specReference.borrow({ $0.scope == scope ? nil : $0.with(scope: scope) }) else { return nil }
            install(changed)
            container.configurationChanged()
            return clearCaches()
        }
        container.drop(dropped.map { [$0] } ?? [])
    }

    /// The combinations of declared params and scope no resolve could honour,
    /// refused when registered and when the scope changes (one rule for every entry point).
    static func check(_ params: UnsafeBufferPointer<Param>, scope: Scope, key: Key) throws(TetherError) {
        let resolvers = params.count(where: { $0 == .resolver })
        let arguments = params.contains { $0.kind.argumentType != nil }
        if resolvers > 1 {
            throw TetherError(.invalidArgument, "\(key.quoted) declares \(resolvers) TETHER_RESOLVER slots; a factory gets one resolver: declare the slot once")
        }
        if arguments && scope.isShared {
            throw TetherError(.invalidArgument, "\(key.quoted) takes runtime arguments and cannot have the \(scope.name) scope, which shares one instance whatever the arguments: keep it graph or transient scoped, or register one key per argument value")
        }
    }

    /// `setContext` (no destructor) for a registration no container lists: no plan to invalidate.
    func setUnlistedContext(_ context: UnsafeMutableRawPointer) {
        lock.withSpinLock { install(spec.with(context: .some(context), destructor: .some(nil))) }
    }

    /// `defersDrop`: see `InstanceSpec.defersDrop`.
    public func setContext(_ context: UnsafeMutableRawPointer?, destructor: Destructor?, defersDrop: Bool = false) {
        installChanged { $0.with(context: .some(context), destructor: .some(destructor), defersDrop: defersDrop) }
    }

    /// `setContext` with a C destructor (`CDestructor`: no closure is made around it). Disfavored:
    /// a trailing closure is a Swift destructor. A bare spec (a new registration's) becomes the
    /// calling thread's plain one (`InstanceSpec.plain`): a registration made per request and
    /// given its context makes no spec.
    @_disfavoredOverload
    public func setContext(_ context: UnsafeMutableRawPointer?, cDestructor: CDestructor?) {
        installChanged { current in
            guard current.isBare else { return current.with(context: .some(context), cDestructor: .some(cDestructor), defersDrop: false) }
            return ThreadState.currentReference.borrow { thread in
                InstanceSpec.plain(key, scope: current.scope, context: context, cDestructor: cDestructor, reusing: &thread.contextSpec)
            }
        }
    }

    /// Installs a provided value's spec (`holdValue`): singleton scope, `context`, a C destructor;
    /// the thread's plain one as `setContext` (a request's value makes no spec).
    func setValueSpec(context: UnsafeMutableRawPointer?, cDestructor: CDestructor?) {
        installChanged { current in
            guard current.isBare else { return current.with(scope: .singleton, context: .some(context), cDestructor: .some(cDestructor), defersDrop: false) }
            return ThreadState.currentReference.borrow { thread in
                InstanceSpec.plain(key, scope: .singleton, context: context, cDestructor: cDestructor, reusing: &thread.valueSpec)
            }
        }
    }

    /// Installs `change(spec)` as the current spec (a provided value's, made in one step: `holdValue`).
    func setSpec(_ change: (InstanceSpec) -> InstanceSpec) { installChanged(change) }

    /// Installs `change(spec)` as the current spec.
    private func installChanged(_ change: (InstanceSpec) -> InstanceSpec) {
        lock.withSpinLock { install(specReference.borrow(change)) }  // unretained: see `setScope`
        container.configurationChanged()  // plans hold the specs they were recorded with
    }

    public func addCompletion(_ completion: Completion) {
        lock.withSpinLock { install(spec.with(completions: spec.completions + [completion])) }
        container.configurationChanged()
    }

    /// The cached shared instance, if any.
    @inline(__always)
    func cached(_ scope: Scope) -> Instance? { cachedRetained(scope)?.take() }

    /// `cached(_:)`, the caller's reference handed over as is (a plan or graph
    /// stores it unmanaged: no retain and release on the way).
    @inline(__always)
    func cachedRetained(_ scope: Scope) -> Ref<Instance>? {
        switch scope.cache {
        case .registration:
            return singleton.retained()
        case .registrationWeakly:
            return lock.withSpinLock { withRare { $0.weak.retained } ?? nil }
        case .none, .resolvingContainer:  // never cached; per container: `cachedRetained(_:in:)`
            return nil
        }
    }

    /// The published singleton with one split reference for an edge
    /// (`SingletonSlot.splitReference`; released by `SplitEdge.release`); nil when none is
    /// published or its slot let go: then `cachedRetained` answers.
    @inline(__always)
    func cachedSplitReference() -> Ref<Instance>? {
        singleton.splitReference()
    }

    /// `cached(_:)`, with the container-scoped instance `container` holds.
    func cached(_ scope: Scope, in container: Container) -> Instance? { cachedRetained(scope, in: container)?.take() }

    /// `cachedRetained(_:)`, with the container-scoped instance `container` holds.
    @inline(__always)
    func cachedRetained(_ scope: Scope, in container: Container) -> Ref<Instance>? {
        scope.isPerResolvingContainer ? container.scopedInstance(of: self).map { .init(retaining: $0) } : cachedRetained(scope)
    }

    /// Publishes a shared instance made by a finished graph (unless the
    /// registration was replaced or its scope changed meanwhile, or the graph
    /// read the `SupersedeClock` before a change superseded what it is built over:
    /// `tick`, `.max` for an instance built over nothing that can be).
    func publish(_ instance: Instance, builtSince tick: UInt = .max) {
        let slot = instance.spec.scope.isKeptStronglyByRegistration ? SingletonSlot(instance, lendable: lendsSingleton, sequence: container.nextSequence()) : nil  // allocated outside the lock
        let declined = SupersedeClock.publishing(instance, of: key, cachedIn: container, builtSince: tick) { publishes, checked in
            lock.withSpinLock { () -> Bool? in
                if publishes && SupersedeClock.moved(since: checked) { return nil }
                guard publishes, flags & Self.retiredBit == 0, spec.scope == instance.spec.scope,
                      tick >= withRare({ $0.supersededAt }) ?? 0 else { return true }
                switch instance.spec.scope.cache {
                case .registration:
                    singleton.publish(slot!) { rareForWriting.kept.append($0) }
                case .registrationWeakly:
                    rareForWriting.weak.publish(instance)
                case .none, .resolvingContainer:  // not published here (per container: `Container.publishScoped`)
                    break
                }
                return false
            }
        }
        // A layer that saw this resolve make the weak instance must not take it for the cached one.
        if declined && instance.spec.scope.isKeptWeakly { container.cachesChanged() }
    }

    /// The weak scope's epoch, read without the lock: grows by one each time the
    /// weak cache lets go of its published instance for a reason other than the
    /// instance dying (`reset`, a scope change, retirement) and by one each time
    /// an instance is published into the cache so emptied. Odd while the cache
    /// is empty that way (or before anything was published), even while it holds
    /// a published instance, alive or not. A layer that hands its own object out
    /// again after the library's instance died (Python's weak scope) reuses it
    /// only while the epoch is even and the one it read when it last did.
    public var weakEpoch: UInt {
        withRare { $0.weak.epoch.load(ordering: .acquiring) } ?? WeakCache.emptyEpoch
    }

    /// Sets the binding's reviver of this weak-scoped registration's instances (nil: none).
    public func setReviver(_ reviver: (any Reviver)?) {
        lock.withSpinLock { rareForWriting.weak.reviver = reviver }
    }

    /// A weak-scoped instance for a resolve that found the weak cache without a live one: the
    /// binding's object of the last one published, which died only as a box (no reset, scope
    /// change or re-registration forgot it since), as an owned pointer; nil when there is no
    /// reviver, the cache was emptied otherwise, or the binding no longer holds that object (a
    /// new one is built then). The library decides when and which; the binding only says whether
    /// it still holds it (an answer other than that pointer is not taken).
    func revivedObject() -> UnsafeMutableRawPointer? {
        let asked = lock.withSpinLock { () -> (any Reviver, UnsafeMutableRawPointer)? in
            withRare { $0.weak.revivable } ?? nil
        }
        guard let (reviver, pointer) = asked, let answer = reviver.revive(pointer) else { return nil }
        precondition(answer == pointer, "Tether: a reviver answered another object than the one it was asked for")
        return answer
    }

    /// Whether a build would ask the binding to revive its dead weak instance (`revivedObject`), without asking.
    var hasRevivable: Bool {
        lock.withSpinLock { withRare { $0.weak.revivable != nil } ?? false }
    }

    /// A failed resolve made a weak-scoped object at `pointer`: if that is the address of the
    /// last one published (which is dead, then), there is no object to revive any more.
    func forgetPublished(at pointer: UnsafeMutableRawPointer) {
        lock.withSpinLock { _ = withRare { $0.weak.forgetPublished(at: pointer) } }
    }

    /// Empties the cache of `scope`; returns what the caller must drop (outside locks).
    func reset(_ scope: Scope) -> Dropped? {
        lock.withSpinLock { spec.scope == scope && !isValue ? clearCaches() : nil }
    }

    /// `cached(_:)` once the lock was taken after the caller's `SupersedeClock` tick (`Container.dropBuilt`):
    /// a publication that read the clock before the tick is seen (`publish(_:builtSince:)`).
    func cachedAfterPublications(_ scope: Scope) -> Instance? {
        lock.withSpinLock {}
        return cached(scope)
    }

    /// `reset`, for `Container.dropBuilt`: what the change at `tick` superseded; a graph that read
    /// the clock before it publishes nothing here (`publish(_:builtSince:)`).
    func supersede(_ scope: Scope, at tick: UInt) -> Dropped? {
        lock.withSpinLock {
            rareForWriting.supersededAt = tick
            return spec.scope == scope && !isValue ? clearCaches() : nil
        }
    }

    /// Detaches the registration from its container (replaced or container freed).
    func retire() -> Dropped? {
        lock.withSpinLock {
            flags |= Self.retiredBit
            return clearCaches()
        }
    }

    /// Caller holds `lock`.
    private func clearCaches() -> Dropped? {
        if withRare({ $0.weak.forget() }) == true { container.cachesChanged() }  // after the forgetting, as for singletons below
        guard let slot = singleton.unpublish() else { return nil }
        container.cachesChanged()  // after the exchange: see Container.cacheVersionAddresses
        return slot.takeStrong().map { Dropped(instance: $0, slot: slot, sequence: slot.sequence) }
    }

    /// Edges completion callbacks or factories were seen to make from this
    /// registration's instances (for the picture; not part of resolution).
    public struct ObservedEdge: Hashable, Sendable {
        public let target: Key
        public let isWeak: Bool
    }

    public var observedEdges: [ObservedEdge] {
        (withRare { $0.observed.all } ?? []).sorted { ($0.target.name, $0.isWeak ? 1 : 0) < ($1.target.name, $1.isWeak ? 1 : 0) }
    }

    /// Known edges are looked up without the lock (`ObservedEdgeList`).
    func noteEdge(to target: Key, isWeak: Bool) {
        let edge = ObservedEdge(target: target, isWeak: isWeak)
        if withRare({ $0.observed.contains(edge) }) == true { return }
        lock.withSpinLock {
            let rare = rareForWriting
            if !rare.observed.contains(edge) { rare.observed.add(edge) }
        }
    }
}
