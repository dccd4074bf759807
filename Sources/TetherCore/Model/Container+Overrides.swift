import Synchronization

/// The clock of configuration changes that supersede built instances (`Container.dropBuilt`: an
/// override started or cleared, a decorator added). A resolve reads it before it picks its plan
/// (`PlanProgress.builtSince`: `Graph.run` and `Plan.RequestRun` copy it) and publishes only what no change since superseded:
/// a resolve that took the configuration before a change and publishes after it returns what it
/// built (it saw one configuration whole) but caches none of what the change superseded, which
/// `dropBuilt` could not let go of (not yet published). What declares a path to the changed key is
/// marked by `dropBuilt` (`Registration.supersede`, a container's `State.supersededAt`, under the
/// lock its publication takes: one sees the other); what reaches it by edges made at run time,
/// which no declaration shows, the publication finds itself (`publishes`), from the changes logged here.
enum SupersedeClock {
    static let ticks = Atomic<UInt>(0)
    /// Guards every root's `Container.treeChanges`; a tick is taken and logged under it, so a reader
    /// holding it finds every change up to `now` in its tree's log (or forgotten there).
    private static let lock = Lock<Void>(())
    /// How many changes a tree keeps: a resolve that saw more go by in its own tree publishes none of
    /// its shared instances there (what the forgotten ones superseded is not known). Changes in other
    /// trees never count: `dropBuilt` lets go of nothing outside the tree it ran in.
    private static let kept = 64

    /// The last changes in one root's tree, oldest first: each tick's key and the container `dropBuilt`
    /// ran in (an address, only compared); `forgotten`: the newest tick dropped from `log` (0: none).
    struct TreeChanges {
        var log: [(tick: UInt, key: Key, container: UnsafeMutableRawPointer)] = []
        var forgotten: UInt = 0
    }

    /// Acquiring: a graph that reads a tick sees the configuration change that made it.
    @inline(__always) static var now: UInt { ticks.load(ordering: .acquiring) }
    /// Whether a change came after `tick` (`.max`: an instance built over nothing that can be).
    @inline(__always) static func moved(since tick: UInt) -> Bool { tick < now }
    /// After the change over `key` in `container` is visible (its table replace), before marking (releasing).
    /// `key` nil: a re-registration (`dropScopedInDescendants`), which supersedes no instance built over its key.
    static func tick(over key: Key?, in container: Container) -> UInt {
        let root = container.root
        return lock.withLock { _ in
            let tick = ticks.add(1, ordering: .acquiringAndReleasing).newValue
            guard let key else { return tick }  // a registration's own instances: nothing built over a key
            var tree = root.treeChanges ?? TreeChanges()
            tree.log.append((tick, key, Borrowed(container).opaque))
            if tree.log.count > kept {
                tree.forgotten = tree.log[tree.log.count - kept - 1].tick
                tree.log.removeFirst(tree.log.count - kept)
            }
            root.treeChanges = tree
            return tick
        }
    }

    /// Whether `instance` of `key`, cached by `container` (a singleton's: its registration's), may be
    /// published by a resolve that read the clock at `tick`: no change after it over a key the instance
    /// reaches by strong edges (those made at run time included), in `container` or further up
    /// (`dropBuilt` lets go of what the caches of the container it ran in and its descendants hold; the
    /// key's own registrations keep theirs), so only the changes in `container`'s tree are read.
    /// `checked`: how far the caller has checked (`tick` at first), moved on to the clock read here;
    /// the caller publishes under its lock only if no change came after that (`moved(since: checked)`
    /// there), else it asks again. Out of line: only a resolve racing a change gets here.
    @inline(never)
    static func publishes(_ instance: Instance, of key: Key, cachedIn container: Container, checked: inout UInt) -> Bool {
        let root = container.root
        // Every change up to `seen` is in its tree's log (or forgotten there): ticks are taken under the lock.
        let (seen, tree) = lock.withLock { _ in (ticks.load(ordering: .relaxed), root.treeChanges) }
        if let tree, let last = tree.log.last, last.tick > checked {
            // More than `kept` changes in this tree since the caller's tick: what the forgotten ones superseded is not known.
            guard tree.forgotten <= checked else { return false }
            for change in tree.log where change.tick > checked && change.key != key && container.isSelfOrDescendant(of: change.container) {
                if instance.stronglyReaches(change.key) { return false }
            }
        }
        checked = seen
        return true
    }

    /// The one loop a shared instance's publication takes (`Registration.publish`, `Container.publishScoped`):
    /// `publish(publishes, checked)` runs under the lock the cache's publication takes and answers nil
    /// (doing nothing) when `publishes` and the clock moved past `checked` (`moved(since:)`): then
    /// `publishes` is asked again, outside that lock. `publishes` is false once the instance is found
    /// superseded (or `publishing` was false): the publication then caches nothing (a claim still ends).
    @inline(__always)
    static func publishing<R>(_ instance: Instance, of key: Key, cachedIn container: Container, builtSince tick: UInt,
                              publishing: Bool = true, _ publish: (_ publishes: Bool, _ checked: UInt) -> R?) -> R {
        var checked = tick
        var publishes = publishing
        while true {
            if publishes && moved(since: checked) { publishes = self.publishes(instance, of: key, cachedIn: container, checked: &checked) }
            if let done = publish(publishes, checked) { return done }
        }
    }
}

/// A resolve racing a configuration change over a provided value: the rule's one home.
extension Container {
    /// `value`, a provided value's registration the resolve of `root` from here picked (the root's own,
    /// or a dependency's: `Graph.claimOne` claimed it as if to make it), was let go of after it was picked
    /// (an override cleared, the key registered again): the resolve has let go of what it made and starts
    /// over on the configuration now, before any factory, never calling the value's factory. Returns what
    /// it resolves then: `root` again, its plan picked for the configuration now (the build looks every
    /// key up again: `Graph.run`), or, for the root's own value, its key looked up again from here as a
    /// resolve started after the change would (`resolveRetained`, `tracedResolve`); nil: nothing else
    /// resolves it (the error stands).
    func startOver(after value: Registration, resolving root: Registration) -> Borrowed<Registration>? {
        guard value === root else { return Borrowed(root) }
        guard value.isValue, !value.isLive, let again = registrationToResolve(value.key), !(again === Borrowed(value)) else { return nil }
        return again
    }

    /// The root of this container's tree (itself if it has no parent): open children keep their parents.
    var root: Container {
        var at = Borrowed(self)
        while let up = at.borrow({ $0.parentBorrowed }) { at = up }
        return at.object
    }

    /// Whether this container is the one at `other` (an address) or a descendant of it.
    func isSelfOrDescendant(of other: UnsafeMutableRawPointer) -> Bool {
        var c: Borrowed<Container>? = Borrowed(self)
        while let at = c {
            if at.opaque == other { return true }
            c = at.borrow { $0.parentBorrowed }
        }
        return false
    }
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
        let tick = SupersedeClock.tick(over: key, in: self)
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
            // Read after the tick (each registration's lock taken, the state lock here): a publication
            // that read the clock before it is seen here, one after it checks itself (`SupersedeClock.publishing`).
            let scoped = c.state.withLock { s in s.scoped.all().map { ($0.registration.object, $0.instance) } }
            var stale = Set(table.filter { builtOver($0, $0.cachedAfterPublications($0.spec.scope)) }.map(ObjectIdentifier.init))
            stale.formUnion(scoped.filter { builtOver($0.0, $0.1) }.map { ObjectIdentifier($0.0) })
            // Container-scoped registrations declaring a path to `key`, made here by a resolve under way:
            // marked, so that it publishes none of them (`publishScoped(_:_:endingClaimOf:builtSince:)`).
            let inFlight = visible.filter { $0.spec.scope.isPerResolvingContainer && !$0.isValue && builtOver($0, nil) }
            stale.formUnion(inFlight.map(ObjectIdentifier.init))
            let undecorated = c.undecoratedKeys(of: Set((table + scoped.map(\.0) + inFlight).filter { stale.contains(ObjectIdentifier($0)) }.map(\.key)))
            func isStale(_ r: Registration) -> Bool { stale.contains(ObjectIdentifier(r)) || undecorated.contains(r.key) }
            var dropped: [Dropped] = []
            for r in table where isStale(r) {
                if let d = r.supersede(r.spec.scope, at: tick) { dropped.append(d) }
            }
            let marked = visible.filter { $0.spec.scope.isPerResolvingContainer && !$0.isValue && isStale($0) }
            if !marked.isEmpty || scoped.contains(where: { isStale($0.0) }) { dropped += c.supersedeScoped(marked, at: tick, isStale) }
            c.drop(consume dropped)
        }
    }

    /// Lets go of the instances of `replaced` (registrations of this container, out of its table) that
    /// its descendants cache, deepest first. A child's publication does not ask whether a parent's
    /// registration was retired (`publishScoped`): each descendant marks them superseded at a tick read
    /// after they left the table, under the lock a publication takes, so a resolve under way with one
    /// (it read the clock before) caches none, and one that reads the clock after finds what replaced it.
    func dropScopedInDescendants(of replaced: [Registration]) {
        let tick = SupersedeClock.tick(over: nil, in: self)
        for c in selfAndDescendants().dropFirst().reversed() {
            c.drop(c.supersedeScoped(replaced, at: tick) { r in replaced.contains { $0 === r } })
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
