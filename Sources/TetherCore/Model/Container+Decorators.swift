/// Decorators: a factory that gets a key's instance (and dependencies of its own) and returns
/// what resolves and dependents get instead. The planner sees a decorator as a registration like
/// any other: the decorated key's registration moves to a key of its own, `K (before decorator n)`,
/// and the decorator is registered as `K` with a DEP slot on it. So plans, validate, DOT and trace
/// show it as the step after the original's factory; the decorated instance holds the original
/// strongly (teardown: decorator's first, the original's after), and both take the key's scope,
/// so a cached key caches the decorated result.
extension Container {
    /// The key the registration decorator `n` (from 1) of `key` receives moves to.
    static func undecoratedKey(_ key: Key, before n: Int) -> Key {
        Key("\(key.name) (before decorator \(n))")
    }

    /// Decorates `key`'s registration in this container with `factory`, whose `params` declare the
    /// instance being decorated as one `.dependency(key)`; `configure` sets its context, destructor
    /// and callbacks (its scope is the key's). Returns the decorator's registration, the registration
    /// it decorates (retired: it moved) and where that moved.
    @discardableResult
    public func decorate(_ key: Key, params: [Param], factory: Factory,
                         configure: (Registration) throws(TetherError) -> Void = { _ in })
        throws(TetherError) -> (decorator: Registration, decorated: Registration, moved: Registration) {
        guard params.filter({ $0 == .dependency(key) }).count == 1 else {
            throw TetherError(.invalidArgument,
                "a decorator of \(key.quoted) declares the instance it decorates as exactly one DEP slot on \(key.quoted) itself")
        }
        let (original, n) = try decoratable(key)
        let inner = Self.undecoratedKey(key, before: n)
        let moved = Registration(key: inner, params: Array(original.params), factory: original.factory, container: self)
        moved.movedFrom = original.constructionIdentity
        let spec = original.spec
        try moved.setScope(spec.scope)
        if let cDestructor = spec.cDestructor {
            moved.setContext(spec.context, cDestructor: cDestructor)
        } else {
            moved.setContext(spec.context, destructor: spec.destructor, defersDrop: spec.defersDrop)
        }
        for completion in spec.completions { moved.addCompletion(completion) }
        let decorator = Registration(key: key, params: params.map { $0 == .dependency(key) ? .dependency(inner) : $0 },
                                     factory: factory, container: self)
        try configure(decorator)
        try decorator.setScope(spec.scope)
        try Registration.check(decorator.params, scope: spec.scope, key: key)
        moved.markVisible()
        decorator.markVisible()
        let refused: TetherError? = state.withLock { s in
            if s.isClosed { return TetherError.containerFreed }
            guard table.lookup(key)?.object === original, s.overrides[key] == nil else {
                return TetherError(.invalidArgument, "\(key.quoted) was registered again or overridden while it was being decorated; nothing was decorated")
            }
            (decorator.order, moved.order) = (original.order, original.order)  // (a list leaves `moved` out)
            if let old = table.replace(inner, with: moved) { s.retired.append(old) }
            _ = table.replace(key, with: decorator)
            original.moved(to: moved)
            s.retired.append(original)
            s.decorations[key, default: []].append(inner)
            everDetached.store(true, ordering: .releasing)
            configurationChanged()
            return nil
        }
        if let refused { throw refused }
        retireAll([original])  // what it cached was not decorated
        dropBuilt(over: key)
        return (decorator, original, moved)
    }

    /// The registration of `key` a new decorator wraps, and that decorator's number.
    private func decoratable(_ key: Key) throws(TetherError) -> (Registration, Int) {
        let found: Result<(Registration, Int), TetherError> = state.withLock { s in
            if s.isClosed { return .failure(TetherError.containerFreed) }
            if s.overrides[key] != nil {
                return .failure(TetherError(.invalidArgument, "\(key.quoted) is overridden in this container; decorate it before overriding it, or after the override ends"))
            }
            guard let r = table.lookup(key)?.object else {  // a child's table starts small: lookup reads both forms
                return .failure(TetherError(.notFound,
                    "no registration of \(key.quoted) in this container to decorate; a decorator wraps a registration of its own container: register \(key.quoted) here first",
                    ErrorParts(.register, key: key)))
            }
            return .success((r, (s.decorations[key]?.count ?? 0) + 1))
        }
        let (r, n) = try found.get()
        if r.isValue || r.isDeclaredValue || r.spec.holdsObject {
            throw TetherError(.invalidArgument, "\(key.quoted) is a value or holds Swift objects, which no decorator can wrap; decorate a factory's registration")
        }
        if r.hasArguments {
            throw TetherError(.argumentMismatch, "\(key.quoted) takes runtime arguments, so no decorator can receive its instance as a dependency")
        }
        return (r, n)
    }

    /// A registration of `key` here replaces its decorators: the undecorated registrations leave the
    /// table too (retired by the caller, outside the lock). Caller holds the state lock.
    func takeDecorations(_ s: inout State, _ key: Key) -> [Registration] {
        guard let inner = s.decorations.removeValue(forKey: key) else { return [] }
        let taken = inner.compactMap { table.replace($0, with: nil) }
        s.retired += taken
        s.detached += taken
        return taken
    }

    /// The keys this container's decorated registrations moved to: no list (ALL slot) has them.
    func undecoratedKeys() -> Set<Key> {
        state.withLock { s in s.decorations.isEmpty ? [] : Set(s.decorations.values.joined()) }
    }

    /// The keys the undecorated registrations of `keys` moved to, as this container looks them up
    /// (its own decorations of a key, else the nearest ancestor's).
    func undecoratedKeys(of keys: Set<Key>) -> Set<Key> {
        guard !keys.isEmpty else { return [] }
        var found: Set<Key> = []
        var pending = keys
        var container: Container? = self
        while let c = container, !pending.isEmpty {
            let (decorations, registered) = c.state.withLock { s in
                (s.decorations, pending.filter { key in c.tableIfAny?.borrow { $0.lookup(key) } != nil })
            }
            for key in pending where decorations[key] != nil || registered.contains(key) {
                found.formUnion(decorations[key] ?? [])   // registered here undecorated: hides a parent's
                pending.remove(key)
            }
            container = c.parent
        }
        return found
    }

    /// Retires registrations that left the table and lets go of what they cached.
    func retireAll(_ registrations: [Registration]) {
        var dropped: [Dropped] = []
        for r in registrations { if let d = r.retire() { dropped.append(d) } }
        // README "Destruction order": re-registering lets go of what its registration cached, the
        // container-scoped instances descendants cache included, children first.
        if childrenIfAny != nil, registrations.contains(where: { $0.spec.scope.isPerResolvingContainer }) {
            dropScopedInDescendants(of: registrations)
        }
        dropped += takeScoped { r in registrations.contains { $0 === r } }
        drop(consume dropped)
    }
}
