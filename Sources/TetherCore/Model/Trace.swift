import Synchronization

/// What a container's trace hook is told (the ABI's tether_trace_kind).
public enum TraceKind: Int32, Sendable {
    case resolveStart = 0, resolveEnd, factoryCall, factoryReturn, cacheHit, complete, destroy, edge, weakEdge
}

/// One trace event: `key`'s `instance` (nil where there is none yet, or it
/// failed), the outcome (`status`) where there is one, and for an edge the
/// instance it now points to.
public struct TraceEvent: Sendable {
    public let kind: TraceKind
    public let key: Key
    nonisolated(unsafe) public let instance: UnsafeMutableRawPointer?
    public let status: ErrorCode?
    nonisolated(unsafe) public let target: UnsafeMutableRawPointer?
    public let targetKey: Key?

    init(_ kind: TraceKind, _ key: Key, _ instance: UnsafeMutableRawPointer? = nil, status: ErrorCode? = nil,
         target: Instance? = nil) {
        self.kind = kind
        self.key = key
        self.instance = instance
        self.status = status
        self.target = target?.pointer
        targetKey = target?.key
    }
}

public typealias TraceHook = @Sendable (TraceEvent) -> Void

/// A container's trace hook, once one was set: the container keeps it for
/// good (instances made while tracing report their destruction through it),
/// the hook in it changes. Tracing is for diagnosis: each event takes a lock.
final class Tracer: @unchecked Sendable {
    /// The hook in a box: a closure read out of the generic lock would be re-abstracted each time.
    private final class Box: Sendable {
        let hook: TraceHook
        init(_ hook: @escaping TraceHook) { self.hook = hook }
    }
    private let box = Lock<Box?>(nil)

    func set(_ new: TraceHook?) {
        let replacement = new.map(Box.init)
        let old = box.withLock { b in
            let old = b
            b = replacement
            return old
        }
        _ = consume old  // released outside the lock
    }

    func emit(_ event: TraceEvent) {
        if let box = box.withLock({ $0 }) { box.hook(event) }
    }

    func emit(_ kind: TraceKind, _ key: Key, _ instance: UnsafeMutableRawPointer? = nil, status: ErrorCode? = nil,
              target: Instance? = nil) {
        emit(TraceEvent(kind, key, instance, status: status, target: target))
    }

    /// After a factory made `instance` of `key` (a build's frame or a plan's step): its return, then
    /// its strong edges (constructor edges in slot order, then late ones), then what its WEAK slots hold.
    func constructed(_ key: Key, _ instance: Instance, weak: [Instance]) {
        emit(.factoryReturn, key, instance.pointer)
        var strong: [Instance] = []
        EdgeLock.withLock { _ = instance.forEachStrongEdge { strong.append($0); return true } }
        for target in strong { emit(.edge, key, instance.pointer, target: target) }
        for target in weak { emit(.weakEdge, key, instance.pointer, target: target) }
    }

    /// A spec for one instance made while tracing: `spec` whose destructor first reports the destruction.
    func spec(for spec: Borrowed<InstanceSpec>) -> Ref<InstanceSpec> {
        let original = spec.object
        let key = original.key
        let traced = InstanceSpecCopy(copying: original, owner: original, destructor: { [self] pointer, _ in
            emit(.destroy, key, pointer)
            original.destroy(pointer)
        })
        return .init(retaining: traced)
    }
}

extension Container {
    /// Sets (nil: removes) the hook told what resolves from here do. While one
    /// is set, resolves from here take the traced path (no lock-free singleton
    /// hits; their plans in traced modes, `Plan.RunMode.traced`, telling what the
    /// build would, in its order) so that every step is seen, and the
    /// configuration word moves both ways, so what an embedding layer learned
    /// (plans, hits) is stale. Instances made meanwhile report their
    /// destruction to the hook set at that time, if any.
    public func setTrace(_ hook: TraceHook?) {
        let tracer = madeTracer()
        tracer.set(hook)
        traceWord.store(hook == nil ? 0 : Borrowed(tracer).word, ordering: .releasing)
        configurationChanged()
    }

    /// The tracer while a hook is set; nil (one load) otherwise.
    @inline(__always)
    var tracer: Borrowed<Tracer>? {
        let word = traceWord.load(ordering: .acquiring)
        return word == 0 ? nil : Borrowed<Tracer>(word: word)!
    }

    /// Whether a trace hook is set (the hit paths give way to the traced one).
    public var isTraced: Bool { traceWord.load(ordering: .relaxed) != 0 }
}
