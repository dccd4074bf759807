import Synchronization

/// A key's factory, declared parameters, scope, destructor and completion
/// callbacks, plus the scope's cache. Owned by one container.
public final class Registration: @unchecked Sendable {
    public let key: Key
    public let params: [Param]
    public let factory: Factory
    /// Declared runtime-argument types, in order.
    public let argumentTypes: [ArgumentType]
    /// Strong: the cycle container -> registration -> container is broken by `Container.close()`.
    let container: Container

    private struct State {
        var spec: InstanceSpec
        var singleton: Instance?
        var weakCache = WeakBox(nil)
        var isLive = true
    }
    private let state: Mutex<State>

    /// Edges completion callbacks or factories were seen to make from this
    /// registration's instances (for the picture; not part of resolution).
    public struct ObservedEdge: Hashable, Sendable {
        public let target: Key
        public let isWeak: Bool
    }
    private let observed = Mutex<Set<ObservedEdge>>([])
    public var observedEdges: [ObservedEdge] {
        observed.withLock { Array($0) }.sorted { ($0.target.name, $0.isWeak ? 1 : 0) < ($1.target.name, $1.isWeak ? 1 : 0) }
    }
    func noteEdge(to target: Key, isWeak: Bool) {
        let edge = ObservedEdge(target: target, isWeak: isWeak)
        observed.withLock { if !$0.contains(edge) { $0.insert(edge) } }
    }

    /// A shared instance created by a graph that has not published it yet.
    /// Touched only by the thread holding the creation lock.
    var pending: Instance?

    init(key: Key, params: [Param], factory: Factory, container: Container) {
        self.key = key
        self.params = params
        self.factory = factory
        self.container = container
        argumentTypes = params.compactMap { if case .argument(let t) = $0 { t } else { nil } }
        state = Mutex(State(spec: InstanceSpec(key: key, scope: .graph, context: nil, destructor: nil, completions: [])))
    }

    public var spec: InstanceSpec { state.withLock { $0.spec } }
    public var isLive: Bool { state.withLock { $0.isLive } }

    /// Changing the scope drops what the old scope cached.
    public func setScope(_ scope: Scope) {
        let dropped: Instance? = state.withLock { s in
            guard s.spec.scope != scope else { return nil }
            s.spec = s.spec.with(scope: scope)
            s.weakCache = WeakBox(nil)
            let old = s.singleton
            s.singleton = nil
            return old
        }
        _ = consume dropped
    }

    public func setContext(_ context: UnsafeMutableRawPointer?, destructor: Destructor?) {
        state.withLock { s in s.spec = s.spec.with(context: .some(context), destructor: .some(destructor)) }
    }

    public func addCompletion(_ completion: Completion) {
        state.withLock { s in s.spec = s.spec.with(completions: s.spec.completions + [completion]) }
    }

    /// The cached shared instance, if any (singleton or live weak-scope instance).
    func cached() -> Instance? {
        state.withLock { s in
            switch s.spec.scope {
            case .singleton: s.singleton
            case .weak: s.weakCache.value
            default: nil
            }
        }
    }

    /// Publishes a shared instance made by a finished graph. Returns false when the
    /// registration was replaced or its scope changed meanwhile (nothing cached).
    func publish(_ instance: Instance) {
        state.withLock { s in
            guard s.isLive, s.spec.scope == instance.spec.scope else { return }
            switch instance.spec.scope {
            case .singleton: s.singleton = instance
            case .weak: s.weakCache = WeakBox(instance)
            default: break
            }
        }
    }

    /// Empties the cache of `scope`; returns what the caller must release (outside locks).
    func reset(_ scope: Scope) -> Instance? {
        state.withLock { s in
            guard s.spec.scope == scope else { return nil }
            s.weakCache = WeakBox(nil)
            let old = s.singleton
            s.singleton = nil
            return old
        }
    }

    /// Detaches the registration from its container (replaced or container freed).
    func retire() -> Instance? {
        state.withLock { s in
            s.isLive = false
            s.weakCache = WeakBox(nil)
            let old = s.singleton
            s.singleton = nil
            return old
        }
    }
}
