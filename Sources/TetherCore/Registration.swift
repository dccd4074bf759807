import Synchronization

/// A key's factory, declared parameters, scope, destructor and completion
/// callbacks, plus the scope's cache. Owned by one container.
///
/// Reads on the resolve path take no mutex: the current spec is published
/// through an atomic and every spec stays alive as long as the registration, so
/// a reader never sees one freed; the shared-scope cache sits behind a spin lock
/// held only to load and retain it. Writers (configuration, publication, reset)
/// also take `lock`.
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
    /// The shared-scope cache: the singleton, or a weak reference for weak scope.
    private let cacheLock = SpinLock()
    private var singleton: Instance?
    private var weakCache = WeakBox(nil)

    private struct Owned {
        var specs: [InstanceSpec] = []
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
        let dropped = lock.withLock { owned -> Instance? in
            let current = owned.specs.last!
            guard current.scope != scope else { return nil }
            install(current.with(scope: scope), &owned)
            return clearCaches(&owned)
        }
        _ = consume dropped
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
        case .singleton: cacheLock.withLock { singleton }
        case .weak: cacheLock.withLock { weakCache.value }
        default: nil
        }
    }

    /// Publishes a shared instance made by a finished graph (unless the
    /// registration was replaced or its scope changed meanwhile).
    func publish(_ instance: Instance) {
        lock.withLock { owned in
            guard owned.isLive, spec.scope == instance.spec.scope else { return }
            cacheLock.withLock {
                switch instance.spec.scope {
                case .singleton: singleton = instance
                case .weak: weakCache = WeakBox(instance)
                default: break
                }
            }
        }
    }

    /// Empties the cache of `scope`; returns what the caller must release (outside locks).
    func reset(_ scope: Scope) -> Instance? {
        lock.withLock { owned in spec.scope == scope ? clearCaches(&owned) : nil }
    }

    /// Detaches the registration from its container (replaced or container freed).
    func retire() -> Instance? {
        lock.withLock { owned in
            owned.isLive = false
            return clearCaches(&owned)
        }
    }

    private func clearCaches(_ owned: inout Owned) -> Instance? {
        cacheLock.withLock {
            weakCache = WeakBox(nil)
            defer { singleton = nil }
            return singleton
        }
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
