import Synchronization

/// The plan cache of a registration, apart from the registration itself: which
/// recorded `Plan` serves a resolve from its container (`planAddress`) or from a
/// child with registrations of its own (`componentPlan`: one per per-request component), recording one when the
/// configuration changed. A reader may still be replaying a replaced plan: the container's bridge retires
/// it (`SlotBridge.retire`: the ABI's reclaimer lets go of it once every call under way then has ended), so
/// a registration holds a few plans at once (`heldPlans` of each kind) and records any number over its life.
/// A bridge that does not retire (the core on its own) leaves them to the registration (`Rare.kept`): then at
/// most `maxPlans` are kept, and past them each resolve records a plan its run alone holds (`oneShotPlan`).
extension Registration {
    /// The plan for a resolve of this registration from `container`, recorded
    /// now if the configuration changed since the last; nil when the graph must
    /// resolve it (its graph is not plain; plans off before branch twooracles).
    /// Unretained: the registration keeps every plan it had.
    /// `progress`: the run's, whose `locals` a plan of a child with registrations of its own takes them in by slot (`Plan.fits`).
    @inline(__always)
    func plan(from container: Container, _ progress: UnsafeMutablePointer<PlanProgress>) -> Borrowed<Plan>? {
        let configuration: UInt
        if container === self.container {
            configuration = container.configuration
        } else {  // unretained: the owner is read without a count, as on the way here
            let owner = Borrowed(self.container)
            guard container.fallsThroughEmpty(to: owner) else { return componentPlan(from: container, owner, progress) }
            configuration = owner.borrow { $0.configuration }
        }
        let address = planAddress.load(ordering: .acquiring)
        if address == Self.noMorePlans { return nil }
        if address != 0 {
            let plan = Borrowed<Plan>(word: address)!
            if plan.borrow({ $0.configuration == configuration }) {
                return plan.borrow { $0.servesAsPicked } ? plan : Self.picked(plan, container, progress.pointee.locals)
            }
        }
        return Self.picked(recordPlan(configuration), container, progress.pointee.locals)
    }

    /// `plan` as a pick returns it: nil when it declines, else the plan for the resolving container's caches
    /// (`Plan.pickedForCaches`: a failing plan's variant when a container-scoped frame open at its error is cached).
    /// Out of line: the fast path's plan `servesAsPicked`.
    @inline(never)
    private static func picked(_ plan: Borrowed<Plan>?, _ container: Container,
                               _ locals: UnsafeMutablePointer<Borrowed<Registration>>) -> Borrowed<Plan>? {
        guard let plan, !plan.borrow({ $0.declines }) else { return nil }
        // (A failing plan's variant whose walk declined: the build serves that state, `Plan.declinedVariant`; none
        // recorded, a child's component changed since the pick: the caller's next pick, `creationPlan`.)
        guard let picked = plan.borrow({ $0.pickedForCaches(container, locals) }) else { return nil }
        return picked.borrow { $0.declines } ? nil : picked
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

    /// Plans the registration holds now (warm, creating, of children; replaced ones the bridge
    /// did not retire): a diagnostic, tests check their bound.
    public var heldPlanCount: Int { lock.withSpinLock { withRare { $0.kept.count { $0 is Plan } } ?? 0 } }

    /// Plans recorded for resolves from children with registrations of their
    /// own (`componentPlan`), and child graphs that could not be (a diagnostic).
    public var childPlanCount: Int { lock.withSpinLock { withRare { $0.componentPlans.count + $0.componentDeclines } ?? 0 } }

    /// Plans a registration records at most when its bridge does not retire replaced
    /// ones (`SlotBridge.retiresReplaced`): a reader may still be replaying a replaced
    /// plan, so every plan is then kept as long as the registration. A key whose graph
    /// keeps changing between resolves resolves the ordinary way after this many, so
    /// its memory stays bounded. Retiring, it bounds the creation plans recorded (and
    /// the child graphs declined) per configuration instead.
    static var maxPlans: Int { 16 }
    /// Retiring: component plans (declined ones included) a registration holds at once, the least
    /// recently served retired first, and creation plans (one per caches' state met) of one configuration.
    static var heldPlans: Int { 8 }

    /// Whether replaced plans are retired rather than kept (the bridge says).
    private var retiresPlans: Bool { container.bridge.retiresReplaced }

    /// Hands `plans`, already unreachable for new resolves and out of `Rare.kept`, to the bridge
    /// (outside `lock`: the ABI's reclaimer takes a lock of its own).
    private func retire(_ plans: [Plan]) {
        for plan in plans { container.bridge.retire(plan) }
    }

    /// Retiring, caller holds `lock`: takes `plan` out of `rare.kept`, for `retire`.
    private static func unkeep(_ plan: Plan, _ rare: Rare) -> Plan {
        if let i = rare.kept.lastIndex(where: { $0 === plan }) { rare.kept.remove(at: i) }
        return plan
    }

    /// Retiring, caller holds `lock`: a configuration newer than the one counted so far starts the
    /// count of creation plans recorded again (`creationsRecorded`), and takes out the creation and component
    /// plans of older ones, which no resolve finds again (configurations only grow), for `retire`.
    private static func newConfiguration(_ configuration: UInt, _ rare: Rare) -> [Plan] {
        guard configuration > rare.countedConfiguration else { return [] }
        rare.countedConfiguration = configuration
        rare.creationsRecorded = 0
        var stale: [Plan] = []
        rare.creationPlans.removeAll { plan in plan.configuration < configuration && { stale.append(unkeep(plan, rare)); return true }() }
        rare.componentPlans.removeAll { plan in plan.configuration < configuration && { stale.append(unkeep(plan, rare)); return true }() }
        if let last = Borrowed<Plan>(word: rare.lastComponentPlan.load(ordering: .relaxed)), stale.contains(where: { Borrowed($0).word == last.word }) {
            rare.lastComponentPlan.store(0, ordering: .releasing)
        }
        return stale
    }
    /// `planAddress` once `maxPlans` were recorded.
    static var noMorePlans: UInt { 1 }

    /// The plan of a resolve from `child`, a descendant of `owner` (this
    /// registration's container) with registrations of its own: the plan of its
    /// per-request component (its registrations by slot, then those of each container
    /// between it and `owner` that registered, `Plan.fits`), which wrote them to `progress`' `locals`: one recorded
    /// through an earlier child with the same component serves it, else one is
    /// recorded now. Nil when the graph must resolve it.
    @inline(never)
    private func componentPlan(from child: Container, _ owner: Borrowed<Container>,
                               _ progress: UnsafeMutablePointer<PlanProgress>) -> Borrowed<Plan>? {
        let configuration = owner.borrow { $0.configuration }
        let address = withRare { $0.lastComponentPlan.load(ordering: .acquiring) } ?? 0
        if address == Self.noMorePlans { return nil }
        if address != 0 {
            let plan = Borrowed<Plan>(word: address)!
            // A declined one (retiring: a child graph that is not plain, kept by its component) builds.
            if plan.borrow({ $0.configuration == configuration && $0.fits(child, owner, progress) }) {
                return plan.borrow { $0.servesAsPicked } ? plan : Self.picked(plan, child, progress.pointee.locals)
            }
        }
        return Self.picked(otherComponentPlan(from: child, owner, configuration, progress), child, progress.pointee.locals)
    }

    /// `componentPlan` when the last one served does not fit `child`: another held
    /// one that does, or one recorded now (not retiring: at most `maxPlans`, as `recordPlan`).
    @inline(never)
    private func otherComponentPlan(from child: Container, _ owner: Borrowed<Container>, _ configuration: UInt,
                                    _ progress: UnsafeMutablePointer<PlanProgress>) -> Borrowed<Plan>? {
        let retiring = retiresPlans
        let found = lock.withSpinLock { () -> Plan? in
            guard let rare = withRare({ $0 }) else { return nil }
            guard let i = rare.componentPlans.lastIndex(where: { $0.configuration == configuration && $0.fits(child, owner, progress) }) else { return nil }
            let found = rare.componentPlans[i]
            // Retiring: least recently served first out, so the served one goes last.
            if retiring && i != rare.componentPlans.count - 1 { rare.componentPlans.append(rare.componentPlans.remove(at: i)) }
            rare.lastComponentPlan.store(Borrowed(found).word, ordering: .releasing)
            return found
        }
        if let found { return found.declines ? nil : .init(found) }
        // Not recorded (a graph that is not plain) counts too: the child's resolves then build it.
        // Retiring, such a graph's component keys a declined plan (`Plan.declined(_:_:child:)`), held
        // as the others; a child whose table is not small has none (its record declines at once).
        var decline = Plan.Decline.other
        var plan: Plan?
        do { plan = try Plan.record(self, configuration: configuration, child: child) } catch { (plan, decline) = (nil, error) }
        if let made = plan, made.declines { decline = made.decline }  // (its own reason, as `oneShotPlan`'s: `other` is no reason)
        if retiring && plan == nil { plan = Plan.declined(configuration, decline, child: child, below: owner) }
        var retired: [Plan] = []
        let installed = lock.withSpinLock { () -> Bool in
            let rare = rareForWriting
            if retiring {
                retired = Self.newConfiguration(configuration, rare)
            } else if rare.componentPlans.count + rare.componentDeclines >= Self.maxPlans {
                rare.lastComponentPlan.store(Self.noMorePlans, ordering: .releasing)
                return false
            }
            if plan?.declines ?? true { rare.componentDecline = decline }
            guard let plan else {
                if !retiring { rare.componentDeclines += 1 }
                return false
            }
            if retiring && rare.componentPlans.count >= Self.heldPlans { retired.append(Self.unkeep(rare.componentPlans.removeFirst(), rare)) }
            rare.componentPlans.append(plan)
            rare.kept.append(plan)
            rare.lastComponentPlan.store(Borrowed(plan).word, ordering: .releasing)
            return true
        }
        retire(retired)
        guard installed, let plan, !plan.declines, plan.fits(child, owner, progress) else { return nil }
        return .init(plan)
    }

    /// The plan for a resolve from `container` whose warm plan (every shared leaf cached) found one
    /// not cached: the one compiled for the caches' state now (`Plan.recordCreating`, checked with
    /// `Plan.matchesCaches`, like a schema cookie), recorded now if none was. Nil when the graph must
    /// build it: no such plan (not plain), or `maxPlans` tried. From a child with registrations of its own,
    /// its component's (`componentCreationPlan`, which writes the child's registrations to `progress`' `locals`).
    /// The plan's claims (`Graph.claimCreations`) check the state again before any factory.
    @inline(never)
    func creationPlan(from container: Container, _ progress: UnsafeMutablePointer<PlanProgress>) -> Borrowed<Plan>? {
        guard let found = creationPlanFound(from: container, progress) else { return nil }
        let picked = Self.picked(found, container, progress.pointee.locals)
        // A failing plan's variant with a `cachedVariant` runs alone only (`runRequest`), as a warm plan with one:
        // none here, where the graph replays what it picks (`creationPlanFound` skips those too).
        return picked.map { $0.word == found.word || $0.borrow { $0.cachedVariant == nil } } ?? true ? picked : nil
    }

    /// `creationPlan` before `picked` (a failing plan's variant for the resolving container's caches).
    private func creationPlanFound(from container: Container, _ progress: UnsafeMutablePointer<PlanProgress>) -> Borrowed<Plan>? {
        let configuration: UInt
        if container === self.container {
            configuration = container.configuration
        } else {
            let owner = Borrowed(self.container)
            guard container.fallsThroughEmpty(to: owner) else { return componentCreationPlan(from: container, owner, progress) }
            configuration = owner.borrow { $0.configuration }
        }
        // The warm plan, when the caches hold every leaf again (another thread published them): replayed
        // into the graph too (one that reads the request with it, `Plan.replayRequest`; not one with a
        // `cachedVariant`, which a replay into the graph would not skip to).
        // None recorded for this configuration yet: the plan for the state now, warm or creating.
        let address = planAddress.load(ordering: .acquiring)
        if address != Self.noMorePlans {
            let warm = address == 0 ? nil : Borrowed<Plan>(word: address)!
            guard let warm, warm.borrow({ $0.configuration == configuration }) else {
                guard let plan = recordPlan(configuration) else { return nil }
                return plan.borrow { $0.cachedVariant != nil || !$0.matchesCaches() }
                    ? pickAfterChange(configuration, planAddress.load(ordering: .acquiring)) : plan
            }
            // A graph no plan covers (its root not shared): built, with no more looking.
            if warm.borrow({ $0.declines }) && !spec.scope.isKeptByRegistration { return nil }
            if warm.borrow({ !$0.declines && $0.cachedVariant == nil && $0.matchesCaches() }) { return warm }
        }
        if Self.pickHooked.load(ordering: .acquiring), let hook = Self.afterWarmCheck.withLock({ $0 }) { hook(self) }
        if let known = knownCreationPlan(configuration) { return known }
        // Past `maxPlans` warm plans (a bridge that keeps replaced plans): one for this run, for any state.
        if address == Self.noMorePlans { return oneShotPlan(configuration) }
        if mayRecordCreation(configuration),
           let recorded = installCreationPlan(Plan.recordCreating(self, configuration: configuration), configuration) { return recorded }
        return pickAfterChange(configuration, address)
    }

    /// A plan for the caches' state now that no registration keeps (`Plan.record(creating:)`: warm or
    /// creating), held by the calling thread until the resolve that picked it lets go of it
    /// (`ThreadState.dropOneShots`, after its run): what a bridge that keeps replaced plans (the core on its
    /// own) runs past `maxPlans`, so a key whose configuration or caches keep changing still runs a plan and
    /// the registration's memory stays bounded. Its run is a replay into the graph (only `Graph.run` picks it);
    /// nil when its graph declines (why, `creationDecline`).
    /// `child`: from a child with registrations of its own (`Plan.fits` writes them to `progress`' `locals`).
    @inline(never)
    private func oneShotPlan(_ configuration: UInt, child: Container? = nil, _ owner: Borrowed<Container>? = nil,
                             _ progress: UnsafeMutablePointer<PlanProgress>? = nil) -> Borrowed<Plan>? {
        var plan: Plan?
        var decline = Plan.Decline.other
        do throws(Plan.Decline) {
            if let child {
                // (Creating nothing, every shared key cached: the warm plan, as `record(creating:)` gives from the owner.)
                do throws(Plan.Decline) { plan = try Plan.record(self, configuration: configuration, child: child, creating: true) } catch {
                    guard error == .notCached else { throw error }
                    plan = try Plan.record(self, configuration: configuration, child: child)
                }
            } else {
                plan = try Plan.record(self, configuration: configuration, creating: true)
            }
        } catch { decline = error }
        if let made = plan, made.declines { (plan, decline) = (nil, made.decline) }
        // (A plan with a `cachedVariant` replays into the graph too: `Graph.replay` switches to it.)
        if let made = plan, child != nil && !made.fits(child!, owner!, progress!) { plan = nil }
        guard let plan else {
            lock.withSpinLock { rareForWriting.creationDecline = decline == .other ? nil : decline }
            return nil
        }
        return ThreadState.currentReference.borrow { thread in
            thread.oneShotPlans.append(plan)
            return .init(plan)
        }
    }

    /// `creationPlan` when the caches left each state it checked before it read them again (another thread
    /// published a key or let its last one go between the checks), or `maxPlans` were recorded: the warm
    /// plan if it fits the caches now, else a creation plan whose shared leaves are all cached, its creation
    /// steps cached or not (`Plan.matchesCaches(takingPublished:)`: its claims take one published,
    /// `Graph.claimCreations`, as the build takes it where its walk asks); else, past `maxPlans` creation plans
    /// (keeping them), a one-shot plan for the caches now (`oneShotPlan`). Nil: none (the graph builds it).
    /// Out of line: a race.
    @inline(never)
    private func pickAfterChange(_ configuration: UInt, _ address: UInt) -> Borrowed<Plan>? {
        if address != 0 && address != Self.noMorePlans, let warm = Borrowed<Plan>(word: address),
           warm.borrow({ $0.configuration == configuration && !$0.declines && $0.cachedVariant == nil && $0.matchesCaches() }) {
            return warm
        }
        let known = lock.withSpinLock { withRare { rare in rare.creationPlans.filter { $0.configuration == configuration && !$0.hasLocals } } ?? [] }
        if let found = known.last(where: { $0.matchesCaches(takingPublished: true) }) { return .init(found) }
        // Past `maxPlans` creation plans of this configuration (keeping them): one for this run. Also where a new
        // configuration's plan was just recorded (`recordPlan`): another thread may have recorded the last creation
        // plan between this one's `mayRecordCreation` and its install (since branch raced; the build before, `other`:
        // the warm plan recorded next, no reason of its own).
        return mayRecordCreation(configuration) ? nil : oneShotPlan(configuration)
    }

    /// Tests only (`setAfterWarmCheck`): called with the registration in `creationPlan` right after its warm
    /// plan's check failed, where another thread's publication (or last release) lands in a race. Read only
    /// while `pickHooked`: a creation plan's pick pays one load.
    private static let afterWarmCheck = Lock<(@Sendable (Registration) -> Void)?>(nil)
    private static let pickHooked = Atomic<Bool>(false)
    static func setAfterWarmCheck(_ hook: (@Sendable (Registration) -> Void)?) {
        afterWarmCheck.withLock { $0 = hook }
        pickHooked.store(hook != nil, ordering: .releasing)
    }

    /// `creationPlan` from `child`, a descendant of `owner` with registrations of its own, whose component
    /// plan found a shared leaf not cached: a creation plan of that component (`Plan.fits`, which wrote the
    /// child's registrations to `progress`' `locals`) for the caches' state now, recorded now if none was
    /// (`Plan.record(_:configuration:child:creating:)`: singletons of the owner's made as creation steps).
    @inline(never)
    private func componentCreationPlan(from child: Container, _ owner: Borrowed<Container>,
                                       _ progress: UnsafeMutablePointer<PlanProgress>) -> Borrowed<Plan>? {
        let configuration = owner.borrow { $0.configuration }
        let known = lock.withSpinLock { withRare { rare in rare.creationPlans.filter { $0.configuration == configuration && $0.hasLocals } } ?? [] }
        // The last `fits` wrote `locals` for the plan found.
        if let found = known.last(where: { $0.fits(child, owner, progress) && $0.matchesCaches(progress.pointee.locals) }) { return .init(found) }
        // Past `maxPlans` component plans (a bridge that keeps replaced plans: `componentPlan` found none): one for this
        // run, warm or creating, as `creationPlanFound` past `maxPlans` warm plans (the build before branch pickrest, `other`).
        if withRare({ $0.lastComponentPlan.load(ordering: .acquiring) }) == Self.noMorePlans {
            return oneShotPlan(configuration, child: child, owner, progress)
        }
        // A plan that does not fit `child` once recorded: a level of it registered while the walk read the component
        // (an ALL slot's new item, say); recorded once more through the child as it is now, as the build reads it.
        for _ in 0..<2 {
            guard mayRecordCreation(configuration) else { return oneShotPlan(configuration, child: child, owner, progress) }
            // A walk that declines keeps its reason (`creationDecline`, for `PlanStats`; `other` is none, as `oneShotPlan`'s).
            let plan: Plan?
            do { plan = try Plan.record(self, configuration: configuration, child: child, creating: true) } catch {
                plan = error == .other ? nil : Plan.declined(configuration, error)
            }
            guard let installed = installCreationPlan(plan, configuration) else { return nil }
            if installed.borrow({ $0.fits(child, owner, progress) }) { return installed }
        }
        return nil
    }

    /// Whether a creation plan may be recorded and kept for `configuration`: retiring, always (the oldest
    /// past `heldPlans` retired, `installCreationPlan`); keeping them, while fewer than `maxPlans` were
    /// (past them, `oneShotPlan`).
    private func mayRecordCreation(_ configuration: UInt) -> Bool {
        if retiresPlans { return true }
        return lock.withSpinLock {
            guard let rare = withRare({ $0 }) else { return true }
            return rare.creationsRecorded < Self.maxPlans
        }
    }

    /// A creation plan recorded for `configuration` whose state the caches are in (`matchesCaches`).
    private func knownCreationPlan(_ configuration: UInt) -> Borrowed<Plan>? {
        let known = lock.withSpinLock { withRare { rare in rare.creationPlans.filter { $0.configuration == configuration && !$0.hasLocals } } ?? [] }
        // Read outside this lock: a weak leaf's cache takes its registration's.
        return known.last(where: { $0.matchesCaches() }).map { .init($0) }
    }

    /// Keeps `plan`, a creation plan just recorded for `configuration` (nil: none could be), unless
    /// `maxPlans` were (retiring: any number, holding at most `heldPlans` of this configuration, oldest out).
    private func installCreationPlan(_ plan: Plan?, _ configuration: UInt) -> Borrowed<Plan>? {
        let retiring = retiresPlans
        var retired: [Plan] = []
        defer { retire(retired) }
        return lock.withSpinLock { () -> Borrowed<Plan>? in
            let rare = rareForWriting
            if retiring { retired = Self.newConfiguration(configuration, rare) }
            guard retiring || rare.creationsRecorded < Self.maxPlans else { return nil }
            rare.creationsRecorded += 1
            // A declined one is not kept: it names why (`creationDecline`, for `PlanStats`).
            rare.creationDecline = plan?.declines == true ? plan!.decline : nil
            guard let plan, !plan.declines else { return nil }
            if retiring && rare.creationPlans.count >= Self.heldPlans { retired.append(Self.unkeep(rare.creationPlans.removeFirst(), rare)) }
            rare.creationPlans.append(plan)
            rare.kept.append(plan)
            return .init(plan)
        }
    }

    /// Creation plans recorded so far (`creationPlan`; a diagnostic: tests check their bound).
    public var creationPlanCount: Int { lock.withSpinLock { withRare { $0.creationPlans.count } ?? 0 } }

    /// Why the last creation plan recorded was none (`Rare.creationDecline`), if that has a reason of its own.
    var creationDecline: Plan.Decline? { lock.withSpinLock { withRare { $0.creationDecline } ?? nil } }

    /// Why `plan(from:)` finds no plan for a resolve from `container`, read again for
    /// `PlanStats` once the resolve goes to `Graph.build` (each test as `plan(from:)` makes it).
    func planDecline(from container: Container) -> Plan.Decline {
        var address = planAddress.load(ordering: .acquiring)
        if container !== self.container {
            let owner = Borrowed(self.container)
            if !container.fallsThroughEmpty(to: owner) {
                address = withRare { $0.lastComponentPlan.load(ordering: .acquiring) } ?? 0
                if address == Self.noMorePlans { return creationDecline ?? .other }  // (the one-shot plan's)
                // The declined plan the resolve found (retiring), else the last decline recorded.
                if address != 0, let declined = Borrowed<Plan>(word: address)!.borrow({ $0.declines ? $0.decline : $0.declinedVariant }) { return declined }
                return lock.withSpinLock { withRare { $0.componentDecline } ?? nil } ?? .other
            }
        }
        if address == Self.noMorePlans { return creationDecline ?? .other }  // (the one-shot plan's)
        guard address != 0 else { return .other }
        return Borrowed<Plan>(word: address)!.borrow { $0.declines ? $0.decline : $0.declinedVariant ?? .other }
    }

    /// Records the plan of a new configuration against the caches' state (`Plan.record(creating:)`):
    /// a first resolve finding singleton or weak keys uncached runs the creation plan for that state
    /// (one walk, the warm plan not recorded yet: the first resolve that finds them cached records it).
    @inline(never)
    private func recordPlan(_ configuration: UInt) -> Borrowed<Plan>? {
        if let known = knownCreationPlan(configuration) { return known }
        let creating = mayRecordCreation(configuration)
        let plan: Plan
        do { plan = try Plan.record(self, configuration: configuration, creating: creating) } catch { plan = Plan.declined(configuration, error) }
        if plan.createsShared { return installCreationPlan(plan, configuration) }
        // Retiring, the plan it replaces (and the other kinds' of older configurations) go to the
        // bridge once installed: a resolve under way may still be replaying them.
        let retiring = retiresPlans
        var retired: [Plan] = []
        let installed = lock.withSpinLock { () -> Bool in
            let rare = rareForWriting
            if retiring {
                retired = Self.newConfiguration(configuration, rare)
                let replaced = planAddress.load(ordering: .relaxed)
                if replaced != 0 && replaced != Self.noMorePlans { retired.append(Self.unkeep(Borrowed<Plan>(word: replaced)!.object, rare)) }
            } else {
                guard rare.plans < Self.maxPlans else {
                    planAddress.store(Self.noMorePlans, ordering: .releasing)
                    return false
                }
            }
            rare.plans += 1
            rare.kept.append(plan)
            planAddress.store(Borrowed(plan).word, ordering: .releasing)
            return true
        }
        retire(retired)
        return installed && !plan.declines ? .init(plan) : nil
    }
}
