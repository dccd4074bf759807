import Synchronization

/// The clock of configuration changes that supersede built instances (`Container.dropBuilt`: an
/// override started or cleared, a decorator added). A graph reads it before its build looks
/// anything up (`Graph.run`) and publishes only into registrations `dropBuilt` has not marked
/// since (`Registration.publish(_:builtSince:)`): a resolve that took the configuration before a
/// change and publishes after it returns what it built (it saw one configuration whole) but
/// caches none of what the change superseded, which `dropBuilt` could not let go of (not yet
/// published). The mark and the publication take the registration's lock: one sees the other.
enum SupersedeClock {
    static let ticks = Atomic<UInt>(0)
    /// Acquiring: a graph that reads a tick sees the configuration change that made it.
    @inline(__always) static var now: UInt { ticks.load(ordering: .acquiring) }
    /// After the change is visible (its table replace), before marking (releasing).
    static func tick() -> UInt { ticks.add(1, ordering: .acquiringAndReleasing).newValue }
}

/// Overrides for tests: a registration put over a key's in one container until cleared, which
/// then puts back what was there. Starting and ending one lets go of what the caches of this
/// container and its descendants hold that was built over the key (declared edges, and strong
/// edges made at run time), so shared instances are rebuilt over the override, then over the
/// original. Overrides of one key stack: a clear ends the newest.
extension Container {
    /// Overrides `key` here with `pointer` (as `provideValue` holds a value): `destructor` runs
    /// once nothing holds it after the override ends (or the container closes).
    @discardableResult
    public func overrideValue(_ key: Key, _ pointer: UnsafeMutableRawPointer, context: UnsafeMutableRawPointer?,
                              destructor: Destructor?, defersDrop: Bool = false) throws(TetherError) -> Registration {
        guard !isClosed else { throw TetherError.containerFreed }
        let registration = Registration(key: key, params: [], factory: ValueFactory(key: key), container: self)
        try registration.holdValue(pointer, context: context, destructor: destructor, defersDrop: defersDrop)
        return try override(registration)
    }

    /// Overrides `key` here with a registration of `factory`, configured by `configure` before anyone sees it.
    @discardableResult
    public func override(_ key: Key, params: [Param], factory: Factory,
                         configure: (Registration) throws(TetherError) -> Void = { _ in }) throws(TetherError) -> Registration {
        let registration = Registration(key: key, params: params, factory: factory, container: self)
        try configure(registration)
        try Registration.check(registration.params, scope: registration.spec.scope, key: key)
        return try override(registration)
    }

    private func override(_ registration: Registration) throws(TetherError) -> Registration {
        let key = registration.key
        registration.markVisible()
        let done = state.withLock { s in
            if s.isClosed { return false }
            registration.order = table.lookup(key)?.borrow { $0.order } ?? nextSequence()
            let displaced = table.replace(key, with: registration)
            s.overrides[key, default: []].append(displaced)
            everDetached.store(true, ordering: .releasing)
            configurationChanged()
            return true
        }
        guard done else {
            if let held = registration.retire() { drop([held]) }  // a value is let go of: the caller's drop runs
            throw TetherError.containerFreed
        }
        dropBuilt(over: key)
        return registration
    }

    /// Ends the newest override of `key` here: what it displaced resolves again. Returns the
    /// override's registration, retired (its cache let go of).
    @discardableResult
    public func clearOverride(_ key: Key) throws(TetherError) -> Registration {
        let ended: Result<Registration, TetherError> = state.withLock { s in
            if s.isClosed { return .failure(TetherError.containerFreed) }
            guard var stack = s.overrides[key], let restored = stack.popLast() else {
                return .failure(TetherError(.invalidArgument,
                    "\(key.quoted) is not overridden in this container; clear an override in the container it was made in, once per override"))
            }
            s.overrides[key] = stack.isEmpty ? nil : stack
            let override = table.replace(key, with: restored)!
            s.retired.append(override)
            configurationChanged()
            return .success(override)
        }
        let override = try ended.get()
        var dropped = override.retire().map { [$0] } ?? []
        dropped += takeScoped { $0 === override }
        drop(consume dropped)
        dropBuilt(over: key)
        return override
    }

    /// Whether `key` is overridden here (not in a parent).
    public func isOverridden(_ key: Key) -> Bool { state.withLock { $0.overrides[key] != nil } }

    /// `register` of an overridden key: the new registration goes under the overrides (it resolves
    /// once they end) and the one it replaces there is returned. Caller holds the state lock.
    func replaceUnderOverride(_ s: inout State, _ key: Key, _ registration: Registration) -> Registration? {
        guard var stack = s.overrides[key] else { return table.replace(key, with: registration) }
        let old = stack[0]
        stack[0] = registration
        s.overrides[key] = stack
        return old
    }

    /// Closing: every overridden key gets back what its first override displaced; the overrides
    /// are retired with the rest (`forEachRegistration` visits them). Caller holds the state lock.
    func unwindOverrides(_ s: inout State) {
        for (key, stack) in s.overrides {
            var ended = stack.dropFirst().compactMap { $0 }
            if let current = table.replace(key, with: stack[0]) { ended.append(current) }
            s.detached += ended
            s.retired += ended
        }
        s.overrides = [:]
    }

    /// Lets go of what the caches of this container and its descendants hold that was built over
    /// `key`: shared instances of keys that declare a path of edges to it (the planner's
    /// `GraphCheck.dependents`) as the caching container looks keys up (a child's registration
    /// of a key says nothing of its parent's), or whose instance reaches one of `key` by strong edges.
    /// Registrations an override displaced count too (their caches come back when it ends), each by
    /// its own edges, so a singleton resolved after the override ends was built over `key` as it is
    /// now (README "Overrides for tests": rebuilt over the fake, and over the original after); the
    /// key's own registrations keep theirs.
    /// A decorated key built over it takes its undecorated originals along (README "Decorators": the
    /// key caches the decorated result, decorated once; the original goes after the decorator's drop).
    func dropBuilt(over key: Key) {
        let tick = SupersedeClock.tick()
        let containers = selfAndDescendants()
        for c in containers {
            let visible = c.visibleRegistrations()
            let dependents = GraphCheck.dependents(of: key, among: visible, lookup: c)
            let shown = Set(visible.map(ObjectIdentifier.init))
            func builtOver(_ r: Registration, _ instance: Instance?) -> Bool {
                guard r.key != key else { return false }
                let declared = shown.contains(ObjectIdentifier(r)) ? dependents.contains(r.key)
                    : GraphCheck.declaresPath(r, to: key, dependents: dependents, lookup: c)
                return declared || instance?.stronglyReaches(key) == true
            }
            let table = c.state.withLock { s in
                (c.tableIfAny?.borrow { $0.all() } ?? []) + s.overrides.values.joined().compactMap { $0 }
            }.filter { !$0.isValue && $0.spec.scope.isKeptByRegistration }
            let scoped = c.state.withLock { s in s.scoped.all().map { ($0.registration.object, $0.instance) } }
            var stale = Set(table.filter { builtOver($0, $0.cached($0.spec.scope)) }.map(ObjectIdentifier.init))
            stale.formUnion(scoped.filter { builtOver($0.0, $0.1) }.map { ObjectIdentifier($0.0) })
            let undecorated = c.undecoratedKeys(of: Set((table + scoped.map(\.0)).filter { stale.contains(ObjectIdentifier($0)) }.map(\.key)))
            func isStale(_ r: Registration) -> Bool { stale.contains(ObjectIdentifier(r)) || undecorated.contains(r.key) }
            var dropped: [Dropped] = []
            for r in table where isStale(r) {
                if let d = r.supersede(r.spec.scope, at: tick) { dropped.append(d) }
            }
            if scoped.contains(where: { isStale($0.0) }) { dropped += c.takeScoped(isStale) }
            c.drop(consume dropped)
        }
    }

    /// This container, then its open descendants.
    private func selfAndDescendants() -> [Container] {
        var found: [Container] = [self]
        var next = 0
        while next < found.count {
            let c = found[next]
            // Retained under the lock: a child in the list has not finished closing, so it is alive.
            found += c.childrenIfAny?.retainedLive() ?? []
            next += 1
        }
        return found
    }
}
