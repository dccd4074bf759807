/// Resolves more of the current graph from inside a factory (RESOLVER slot) or a
/// completion callback, recording the edges it hands out. Valid only during that
/// callback, on that thread.
public final class Resolver: @unchecked Sendable {
    /// Unretained, like everything here: while the resolver is open (checked
    /// before any use) the graph, its instances and their containers are alive.
    private let graph: Borrowed<Graph>
    private var lookupReference: Borrowed<Container>
    /// The instance being completed; nil while its factory is still running.
    private var ownerReference: Borrowed<Instance>?
    /// Where the owner came from, to note the edges it makes (for the picture).
    private var ownerRegistration: Borrowed<Registration>
    private var isOpen = true
    /// Edges asked for by a factory, attached to its instance once it exists.
    private var pendingStrong: [Instance] = []

    init(graph: Graph, lookup: Borrowed<Container>, owner registration: Borrowed<Registration>, instance owner: Borrowed<Instance>? = nil) {
        self.graph = .init(graph)
        self.lookupReference = lookup
        self.ownerRegistration = registration
        self.ownerReference = owner
    }

    private var ownerKey: Key { ownerRegistration.borrow { $0.key } }

    func close() { isOpen = false }

    /// Opens a closed resolver for another callback of the same graph (the graph
    /// reuses one that nobody else holds).
    func reopen(lookup: Borrowed<Container>, owner registration: Borrowed<Registration>, instance owner: Borrowed<Instance>?) {
        lookupReference = lookup
        ownerRegistration = registration
        ownerReference = owner
        isOpen = true
    }

    /// Hands the edges a factory asked for to its new instance (and forgets them,
    /// so a resolver kept past its factory holds nothing).
    func takePending() -> [Instance] {
        defer { pendingStrong = [] }
        return pendingStrong
    }

    /// Resolves `key` in this graph and records a strong edge from the owner.
    /// `backEdge`: what a retain-cycle message tells the caller to do instead.
    public func get(_ key: Key, backEdge: String = "use tether_resolver_get_weak for the back edge",
                    fix: ErrorParts.Fix = .weakEdge) throws(TetherError) -> Instance {
        try refuseCaptive(key)
        let instance = try build(key).object
        ownerRegistration.borrow { $0.noteEdge(to: key, isWeak: false) }
        if let owner = ownerReference?.object {
            try owner.addLateStrongEdge(to: instance, backEdge: backEdge, fix: fix)
            if let tracer = graph.borrow({ $0.tracer }) { tracer.emit(.edge, owner.key, owner.pointer, target: instance) }
        } else {
            pendingStrong.append(instance)
        }
        return instance
    }

    /// Strict mode: a cached owner must not hold a shorter-lived `key` strongly (`Scope.captures`).
    private func refuseCaptive(_ key: Key) throws(TetherError) {
        let owner = ownerRegistration.object
        guard owner.container.refusesCaptives else { return }
        let ownerScope = owner.spec.scope
        guard ownerScope.lifetime.cached,
              let target = lookupReference.borrow({ $0.unretainedRegistration(for: key) }) else { return }
        let targetScope = target.borrow { $0.spec.scope }
        guard ownerScope.captures(targetScope) else { return }
        throw captiveError(holder: owner.key, ownerScope, target: key, targetScope, note: strictNote)
    }

    /// Resolves `key` in this graph as the target of a weak edge (noted on the
    /// owner's registration, for the picture): nothing but the graph holds it for the owner.
    public func getWeakTarget(_ key: Key) throws(TetherError) -> Instance {
        try buildWeakTarget(key).object
    }

    /// `getWeakTarget` as a weak reference.
    public func getWeak(_ key: Key) throws(TetherError) -> WeakRef {
        try buildWeakTarget(key).borrow { $0.weakRef }
    }

    private func buildWeakTarget(_ key: Key) throws(TetherError) -> Borrowed<Instance> {
        let instance = try build(key)
        ownerRegistration.borrow { $0.noteEdge(to: key, isWeak: true) }
        if let owner = ownerReference?.object, let tracer = graph.borrow({ $0.tracer }) {
            tracer.emit(.weakEdge, owner.key, owner.pointer, target: instance.object)
        }
        return instance
    }

    /// The instance of this graph at `pointer` (one a callback received or got
    /// from this resolver), so a binding can hold it with a handle of its own.
    public func instance(at pointer: UnsafeMutableRawPointer) throws(TetherError) -> Instance {
        try checkContext()
        guard let instance = graph.borrow({ $0.instance(at: pointer) }) else {
            throw TetherError(.notFound, "that pointer is not an instance of the current resolve")
        }
        return instance
    }

    private func checkContext() throws(TetherError) {
        guard isOpen, ThreadState.currentReference.opaque == graph.borrow({ $0.thread }) else {
            throw Resolver.wrongContext
        }
    }

    /// The error of a resolver used after its callback returned, or on another thread.
    static var wrongContext: TetherError {
        TetherError(.wrongContext, "the resolver is only valid during the callback that received it, on its thread")
    }

    /// The error of a resolver of `owner`'s callback or factory asking for `key`, which has no
    /// registration (`path`: the frames under way, empty in a completion callback).
    static func missing(_ key: Key, owner: Key, path: [Key]) -> TetherError {
        let neededBy = path.isEmpty ? "the completion callback of \(owner.quoted)" : pathText(path)
        var parts = ErrorParts(.register, key: key, path: path)
        if path.isEmpty { parts.callbackOf = owner }
        return TetherError.notRegistered(key, neededBy: neededBy, parts)
    }

    /// The error of a resolver asking for `key`, which takes runtime arguments.
    static func takesArguments(_ key: Key, owner: Key) -> TetherError {
        TetherError(.argumentMismatch, "\(key.quoted) takes runtime arguments and cannot be a dependency (needed by \(owner.quoted))")
    }

    /// The instance of `key` in this graph, unretained (the graph holds it).
    private func build(_ key: Key) throws(TetherError) -> Borrowed<Instance> {
        try checkContext()
        guard let registration = lookupReference.borrow({ $0.unretainedRegistration(for: key) }) else {
            throw Resolver.missing(key, owner: ownerKey, path: graph.object.path)
        }
        guard !registration.borrow({ $0.hasArguments }) else { throw Resolver.takesArguments(key, owner: ownerKey) }
        let built = graph.borrow { graph in
            // Used from a resolve nested in this graph (a callback's resolver handed to a factory
            // that runs further in): what those resolves construct is a cycle here too (`Reentry`).
            let thread = Borrowed<ThreadState>(opaque: graph.thread)
            let saved = graph.outer
            if thread.borrow({ Reentry.othersConstruct($0, besides: graph) }) {
                graph.outer = Reentry.met(thread.borrow { Reentry.constructing($0) }, from: lookupReference.object)
            }
            defer { graph.outer = saved }
            return registration.borrow { registration in
                lookupReference.borrow { lookup -> Result<Borrowed<Instance>, TetherError> in
                    do throws(TetherError) { return .success(graph.instance(try graph.buildAsked(registration, by: ownerRegistration, from: lookup))) }
                    catch { return .failure(error) }
                }
            }
        }
        return try built.get()
    }
}
