import Synchronization

/// The plan cache of a registration, apart from the registration itself: which
/// recorded `Plan` serves a resolve from its container (`planAddress`) or from a
/// child with registrations of its own (`componentPlan`: one per per-request component), recording one when the
/// configuration changed. Plans are kept as long as the registration (`Rare.kept`):
/// a reader may still be replaying a replaced one.
extension Registration {
    /// The plan for a resolve of this registration from `container`, recorded
    /// now if the configuration changed since the last; nil when the graph must
    /// resolve it (another container, plans off, or its graph is not plain).
    /// Unretained: the registration keeps every plan it had.
    /// `locals`: where a plan of a child with registrations of its own takes them by slot (`Plan.fits`).
    @inline(__always)
    func plan(from container: Container, _ locals: UnsafeMutablePointer<Borrowed<Registration>>) -> Borrowed<Plan>? {
        guard container.usesPlans else { return nil }
        let configuration: UInt
        if container === self.container {
            configuration = container.configuration
        } else {  // unretained: the owner is read without a count, as on the way here
            let owner = Borrowed(self.container)
            guard container.fallsThroughEmpty(to: owner) else { return componentPlan(from: container, owner, locals) }
            configuration = owner.borrow { $0.configuration }
        }
        let address = planAddress.load(ordering: .acquiring)
        if address == Self.noMorePlans { return nil }
        if address != 0 {
            let plan = Borrowed<Plan>(word: address)!
            if plan.borrow({ $0.configuration == configuration }) {
                return plan.borrow { $0.declines } ? nil : plan
            }
        }
        return recordPlan(configuration)
    }

    /// Whether the last resolve from this registration's container found a plan
    /// that is still current, warm or compiled for a state of the caches (a diagnostic: tests check which path ran).
    public var hasCurrentPlan: Bool {
        let configuration = container.configuration
        if lock.withSpinLock({ withRare { $0.creationPlans.contains { $0.configuration == configuration } } ?? false }) { return true }
        let address = planAddress.load(ordering: .acquiring)
        guard address != 0, address != Self.noMorePlans else { return false }
        let plan = Borrowed<Plan>(word: address)!.object
        return !plan.declines && plan.configuration == configuration
    }

    /// Plans recorded for resolves from children with registrations of their
    /// own (`componentPlan`), and child graphs that could not be (a diagnostic).
    public var childPlanCount: Int { lock.withSpinLock { withRare { $0.componentPlans.count + $0.componentDeclines } ?? 0 } }

    /// Plans a registration records at most: a reader may still be replaying a
    /// replaced plan, so every plan is kept as long as the registration. A key
    /// whose graph keeps changing between resolves resolves the ordinary way
    /// after this many, so its memory stays bounded.
    static var maxPlans: Int { 16 }
    /// `planAddress` once `maxPlans` were recorded.
    static var noMorePlans: UInt { 1 }

    /// The plan of a resolve from `child`, a descendant of `owner` (this
    /// registration's container) with registrations of its own and nothing
    /// registered between them: the plan of `child`'s per-request component (its
    /// registrations by slot, `Plan.fits`), which wrote them to `locals`: one recorded
    /// through an earlier child with the same component serves it, else one is
    /// recorded now. Nil when the graph must resolve it.
    @inline(never)
    private func componentPlan(from child: Container, _ owner: Borrowed<Container>,
                               _ locals: UnsafeMutablePointer<Borrowed<Registration>>) -> Borrowed<Plan>? {
        guard let parent = child.parent.map({ Borrowed($0) }),
              parent.borrow({ $0.fallsThroughEmpty(to: owner) }) else { return nil }
        let configuration = owner.borrow { $0.configuration }
        let address = withRare { $0.lastComponentPlan.load(ordering: .acquiring) } ?? 0
        if address == Self.noMorePlans { return nil }
        if address != 0 {
            let plan = Borrowed<Plan>(word: address)!
            if plan.borrow({ $0.configuration == configuration && $0.fits(child, locals) }) { return plan }
        }
        return otherComponentPlan(from: child, configuration, locals)
    }

    /// `componentPlan` when the last one served does not fit `child`: another kept
    /// one that does, or one recorded now (at most `maxPlans`, as `recordPlan`).
    @inline(never)
    private func otherComponentPlan(from child: Container, _ configuration: UInt,
                                    _ locals: UnsafeMutablePointer<Borrowed<Registration>>) -> Borrowed<Plan>? {
        let found = lock.withSpinLock { () -> Plan? in
            guard let rare = withRare({ $0 }) else { return nil }
            return rare.componentPlans.last { $0.configuration == configuration && $0.fits(child, locals) }
        }
        if let found {
            withRare { $0.lastComponentPlan.store(Borrowed(found).word, ordering: .releasing) }
            return .init(found)
        }
        // Not recorded (a graph that is not plain) counts too: the child's resolves then build it.
        var decline = Plan.Decline.other
        let plan: Plan?
        do { plan = try Plan.record(self, configuration: configuration, child: child) } catch { (plan, decline) = (nil, error) }
        let installed = lock.withSpinLock { () -> Bool in
            let rare = rareForWriting
            guard rare.componentPlans.count + rare.componentDeclines < Self.maxPlans else {
                rare.lastComponentPlan.store(Self.noMorePlans, ordering: .releasing)
                return false
            }
            guard let plan else {
                rare.componentDeclines += 1
                rare.componentDecline = decline
                return false
            }
            rare.componentPlans.append(plan)
            rare.kept.append(plan)
            rare.lastComponentPlan.store(Borrowed(plan).word, ordering: .releasing)
            return true
        }
        guard installed, let plan, plan.fits(child, locals) else { return nil }
        return .init(plan)
    }

    /// The plan for a resolve from `container` whose warm plan (every shared leaf cached) found one
    /// not cached: the one compiled for the caches' state now (`Plan.recordCreating`, checked with
    /// `Plan.matchesCaches`, like a schema cookie), recorded now if none was. Nil when the graph must
    /// build it: not the warm plan's container, no such plan (not plain), or `maxPlans` tried.
    /// The plan's claims (`Graph.claimCreations`) check the state again before any factory.
    @inline(never)
    func creationPlan(from container: Container) -> Borrowed<Plan>? {
        guard container.usesPlans else { return nil }
        let configuration: UInt
        if container === self.container {
            configuration = container.configuration
        } else {
            let owner = Borrowed(self.container)
            guard container.fallsThroughEmpty(to: owner) else { return nil }
            configuration = owner.borrow { $0.configuration }
        }
        // The warm plan, when the caches hold every leaf again (another thread published them): replayed
        // into the graph too, unless it reads the resolving container (which such a replay does not pass).
        // None recorded for this configuration yet: the plan for the state now, warm or creating.
        let address = planAddress.load(ordering: .acquiring)
        if address != Self.noMorePlans {
            let warm = address == 0 ? nil : Borrowed<Plan>(word: address)!
            guard let warm, warm.borrow({ $0.configuration == configuration }) else {
                guard !spec.scope.isShared, let plan = recordPlan(configuration) else { return nil }
                return plan.borrow { $0.readsRequest || !$0.matchesCaches() } ? nil : plan
            }
            // A graph no plan covers (its root not shared): built, with no more looking.
            if warm.borrow({ $0.declines }) && !spec.scope.isKeptByRegistration { return nil }
            if warm.borrow({ !$0.declines && !$0.readsRequest && $0.matchesCaches() }) { return warm }
        }
        if let known = knownCreationPlan(configuration) { return known }
        guard lock.withSpinLock({ (withRare { $0.creationsRecorded } ?? 0) < Self.maxPlans }) else { return nil }
        return installCreationPlan(Plan.recordCreating(self, configuration: configuration))
    }

    /// A creation plan recorded for `configuration` whose state the caches are in (`matchesCaches`).
    private func knownCreationPlan(_ configuration: UInt) -> Borrowed<Plan>? {
        let known = lock.withSpinLock { withRare { rare in rare.creationPlans.filter { $0.configuration == configuration } } ?? [] }
        // Read outside this lock: a weak leaf's cache takes its registration's.
        return known.last(where: { $0.matchesCaches() }).map { .init($0) }
    }

    /// Keeps `plan`, a creation plan just recorded (nil: none could be), unless `maxPlans` were.
    private func installCreationPlan(_ plan: Plan?) -> Borrowed<Plan>? {
        lock.withSpinLock { () -> Borrowed<Plan>? in
            let rare = rareForWriting
            guard rare.creationsRecorded < Self.maxPlans else { return nil }
            rare.creationsRecorded += 1
            guard let plan else { return nil }
            rare.creationPlans.append(plan)
            rare.kept.append(plan)
            return .init(plan)
        }
    }

    /// Creation plans recorded so far (`creationPlan`; a diagnostic: tests check their bound).
    public var creationPlanCount: Int { lock.withSpinLock { withRare { $0.creationPlans.count } ?? 0 } }

    /// Why `plan(from:)` finds no plan for a resolve from `container`, read again for
    /// `PlanStats` once the resolve goes to `Graph.build` (each test as `plan(from:)` makes it).
    func planDecline(from container: Container) -> Plan.Decline {
        guard container.usesPlans else { return .plansOff }
        var address = planAddress.load(ordering: .acquiring)
        if container !== self.container {
            let owner = Borrowed(self.container)
            if !container.fallsThroughEmpty(to: owner) {
                guard let parent = container.parent, parent.fallsThroughEmpty(to: owner) else { return .childDepth }
                address = withRare { $0.lastComponentPlan.load(ordering: .acquiring) } ?? 0
                if address == Self.noMorePlans { return .planLimit }
                return lock.withSpinLock { withRare { $0.componentDecline } ?? nil } ?? .other
            }
        }
        if address == Self.noMorePlans { return .planLimit }
        guard address != 0 else { return .other }
        return Borrowed<Plan>(word: address)!.borrow { $0.declines ? $0.decline : .other }
    }

    /// Records the plan of a new configuration against the caches' state (`Plan.record(creating:)`):
    /// a first resolve finding singleton or weak keys uncached runs the creation plan for that state
    /// (one walk, the warm plan not recorded yet: the first resolve that finds them cached records it).
    @inline(never)
    private func recordPlan(_ configuration: UInt) -> Borrowed<Plan>? {
        if let known = knownCreationPlan(configuration) { return known }
        let creating = lock.withSpinLock { (withRare { $0.creationsRecorded } ?? 0) < Self.maxPlans }
        let plan: Plan
        do { plan = try Plan.record(self, configuration: configuration, creating: creating) } catch { plan = Plan.declined(configuration, error) }
        if plan.createsShared { return installCreationPlan(plan) }
        let installed = lock.withSpinLock { () -> Bool in
            let rare = rareForWriting
            guard rare.plans < Self.maxPlans else {
                planAddress.store(Self.noMorePlans, ordering: .releasing)
                return false
            }
            rare.plans += 1
            rare.kept.append(plan)
            planAddress.store(Borrowed(plan).word, ordering: .releasing)
            return true
        }
        return installed && !plan.declines ? .init(plan) : nil
    }
}
