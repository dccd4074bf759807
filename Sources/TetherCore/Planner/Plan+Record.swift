import Synchronization

// Recording a plan: a key's plan, its cachedVariant and mixed variants, a creating plan.

extension Plan {
    /// Records the plan for `root` resolved from its own container; throws why
    /// its graph is not plain (`Graph` resolves it, and reports what is wrong).
    /// `creating`: against the caches' state, in one walk: the warm plan when every shared key
    /// is cached, else the creation plan (`recordCreating`, `createsShared`) when it covers that
    /// state, else (walked again) the warm plan.
    /// `leaves`: container-scoped registrations taken from the resolving container's cache, not walked into (a
    /// failing plan's variant, `Failing.variants`).
    static func record(_ root: Registration, configuration: UInt, creating: Bool = false,
                       leaves: Leaves = Leaves()) throws(Decline) -> Plan {
        // A container-scoped root not cached in the resolving container is a container step: its run claims,
        // makes and publishes it there (`takeContainer`), or takes the one another resolve published meanwhile.
        // A singleton or weak root is a creation step when no cache holds it, else (the warm plan) a shared
        // step taken from its cache: a resolve that missed it and found it published meanwhile (another
        // thread's, or a resolve nested under this one's claim) takes it there, as the build would.
        // A declared value root is a value step (the resolving container's value; none: the build's error).
        let recorder = Recorder(lookup: root.container, allowsArguments: true)
        recorder.makesContainer = true
        recorder.createsUncached = creating
        recorder.recordsSlots = true
        (recorder.leafContainers, recorder.graphLeaves) = (leaves.ids, leaves.graph)
        guard recorder.visit(Borrowed(root)) != nil else {
            if recorder.declinedCreating { return try record(root, configuration: configuration, leaves: leaves) }
            if recorder.decline == .containerInput {
                if creating, let plan = recordCreatingUnmarked(root, configuration: configuration, leaves: leaves) { return plan }
                return try recordWithCachedVariant(root, configuration: configuration, leaves: leaves)
            }
            guard let met = recorder.failing() else { throw recorder.decline }
            // (Over container or value steps and creation steps too, a child's alike: the graph claims both in the
            // build's order and the run reads the request, `Plan.replayRequest`; the warm plan before branch childfail,
            // which declined a creation step not cached, `notCached`.)
            // Under container-scoped frames: the plans of the builds that take one of them cached, on first need.
            let failing = withVariants(met, root, creating: creating, leaves: leaves)
            // Slots made per resolve before the failure: made as the build's (`finishSlots`).
            try recorder.finishSlots()
            return Plan(steps: recorder.steps, inputs: recorder.inputs, configuration: configuration, objects: nil,
                        slots: recorder.slots, failing: failing)
        }
        let creates = recorder.steps.contains { $0.creates }
        // Over container or value steps too: the graph claims the creation and container cells in the
        // build's order (`Graph.claimWithContainerSteps`) and the run reads the request (`Plan.replayRequest`).
        try recorder.finishSlots()
        // (A shared root's object is answered from its cache before any plan: `Container.resolve(_:as:)`.)
        let objects = creates || recorder.steps.last?.isShared == true ? nil : recorder.objects()
        return Plan(steps: recorder.steps, inputs: recorder.inputs, configuration: configuration, objects: objects, slots: recorder.slots)
    }

    /// `record` of a graph whose container steps' inputs include a made step that a step outside them
    /// takes too (`containerInput`): a build finding the container steps cached makes that step where the
    /// outside one asks, an order no skip of the plan's steps gives. So two plans: the container steps
    /// made (none skipped), and its `cachedVariant`, walked again with them as leaves taken from the
    /// resolving container's cache, which a run finding them all cached runs instead (`runRequest`).
    /// With completion callbacks or slots made per resolve both replay into the graph, which switches to the
    /// variant as `runRequest` does (`Graph.switchesToVariant`, set by `claimContainerSteps`). A container step
    /// claimed late (a RESOLVER slot's get may build it: the claims cannot tell at once whether every container
    /// step is cached): a run finding it cached there goes on in the plan, making what a step outside takes too
    /// (`Plan.claimLate`); throws `containerInput` where that is not the build's order (`lateHitsKeepOrder`).
    /// `child`: a child's plan (`record(_:configuration:child:)`), both over its component. `leaves`: as `record`'s.
    static func recordWithCachedVariant(_ root: Registration, configuration: UInt, child: Container? = nil,
                                                leaves: Leaves = Leaves()) throws(Decline) -> Plan {
        guard !root.spec.scope.isPerResolvingContainer else { throw .containerInput }
        let made = try child.map { c throws(Decline) in try childRecorder(root, c) } ?? Recorder(lookup: root.container, allowsArguments: true)
        (made.makesContainer, made.recordsSlots, made.marksUnderContainer) = (true, true, false)
        (made.leafContainers, made.leafSlots, made.graphLeaves) = (leaves.ids, leaves.slots, leaves.graph)
        // (A failing walk: its steps under a container step taken outside too, `visit`; not a plan's.)
        guard made.visit(Borrowed(root)) != nil else { throw made.decline == .metFailure ? .containerInput : made.decline }
        let cached: Recorder
        if let child {
            cached = try childRecorder(root, child, allowsValues: true)
            cached.containerLeaves = true
            guard cached.visit(Borrowed(root)) != nil else { throw cached.decline }
        } else {
            cached = try walkEveryContainerCached(root)
        }
        try made.finishSlots()
        try cached.finishSlots()
        let (component, params) = child == nil ? ([], []) : componentShape(of: made, cached)
        let variant = Plan(steps: cached.steps, inputs: cached.inputs, configuration: configuration, objects: nil,
                           component: component, componentParams: params, slots: cached.slots)
        let plan = Plan(steps: made.steps, inputs: made.inputs, configuration: configuration, objects: nil,
                        component: component, componentParams: params, slots: made.slots, cachedVariant: variant)
        // (A variant replaying into the graph while the plan runs alone: never, its steps a subset of the plan's.)
        guard plan.needsGraph || !variant.needsGraph else { throw .containerInput }
        guard plan.lateClaimsKeepOrder() else { throw .containerInput }
        return plan
    }

    /// Whether a run of this plan keeps the build's order at the container steps it claims late (`Step.claimsLate`):
    /// none, or their hits keep it (`lateHitsKeepOrder`). Every plan with such steps that records a walk of its own
    /// asks it: `recordWithCachedVariant`, `recordCreatingUnmarked`, a `mixedVariant` (`recordMixed`).
    func lateClaimsKeepOrder() -> Bool { lateClaims.isEmpty || lateHitsKeepOrder() }

    /// Whether a run of this plan (every step made, none marked) finding container steps it claims late cached where
    /// it claims them (`claimLate`; a resolver's get taking one cached, `takeBuilt`) makes what the build then makes,
    /// in its order: for each set of them found so, in each order, the steps left (`stepsOnlyUnder`, `keeping`) are
    /// in step order the made steps of the build's walk with those leaves (`Plan.walk`), or the run goes on in that
    /// walk's order from the claim (`goOnInWalk`: at the last claim left, `reordering`, where `goesOnInWalk`), or, several,
    /// every run's own order of the claims and gets goes on so (`goesOnEveryWay`, since branch late2). Not past
    /// three such steps, nor with a slot made per resolve naming a step under one (the walk and the skip read DEP edges).
    func lateHitsKeepOrder(reordering: Bool = true) -> Bool {
        let late = containerSteps.filter { steps[$0].claimsLate }
        let underLate = { (j: Int) in j >= 0 && late.contains { self.descends(j, from: $0) } }
        guard late.count <= 3, Plan.walk(Array(steps), Array(inputs), leaves: [])?.order == Array(steps.indices),
              !slots.contains(where: { underLate($0.step) || $0.items.contains(where: underLate) }) else { return false }
        let goesOn = reordering && goesOnInWalk(late)
        func keepsOrder(_ taken: [Int], _ skip: StepBits) -> Bool {
            if !taken.isEmpty {
                guard let walked = Plan.walk(Array(steps), Array(inputs), leaves: taken) else { return false }
                if walked.order.filter({ !steps[$0].isShared && !taken.contains($0) }) != madeSteps.filter({ !skip.contains($0) }) {
                    // (No late claim left after it: the next one's place in the walk's order is not its step's. Its checks
                    // where that walk reaches their steps, `goingOn`, from where the run claims it.)
                    let n = madeSteps.firstIndex { $0 >= firstAsked(taken.last!) } ?? madeSteps.count
                    return goesOn && late.allSatisfy { taken.contains($0) || skip.contains($0) }
                        && goingOn(walked, Array(madeSteps), from: n, skipped: { skip.contains($0) || taken.contains($0) }) != nil
                }
            }
            return late.allSatisfy { c in
                guard !taken.contains(c) && !skip.contains(c) else { return true }
                var only = StepBits()
                only.insert(c)
                var next = stepsOnlyUnder(only, from: firstAsked(c), besides: skip, keeping: true)!
                next.formUnion(skip)
                return keepsOrder(taken + [c], next)
            }
        }
        return keepsOrder([], StepBits()) || goesOn && late.count > 1 && goesOnEveryWay(late)
    }

    /// Whether every run of this plan over several container steps claimed late (`late`, `goesOnInWalk`) that goes on in
    /// the build's walk's order makes what the build makes, in its order: each late step taken by a get before the first
    /// of their claims (cached, or built with what it asked for), found cached at its claim or made, the claims in the
    /// order `claimLate` makes them. The run goes on at the first claim (or a get's step reached) whose walk, every late
    /// step taken so far a leaf, is not the plan's (`goingOn` from there, as `goOnInWalk`); a late step made or found
    /// cached past that point declines (its claim's place in that walk's order is not its step's). (The orders of
    /// `keepsOrder` are not a run's: a get's step is a leaf from the first claim on, which is where the run goes on when
    /// another is found cached there; since branch late2. No late step with slots, cells or frames: a get of its own.)
    private func goesOnEveryWay(_ late: [Int]) -> Bool {
        guard !late.contains(where: { steps[$0].hasSlots || steps[$0].bindsCells || steps[$0].opensFrames }) else { return false }
        let claims = late.sorted { (firstAsked($0), $0) < (firstAsked($1), $1) }
        let made = Array(madeSteps)
        func only(_ c: Int) -> StepBits { var bits = StepBits(); bits.insert(c); return bits }
        // Each late step's outcome: 0 a get took it cached, 1 a get built it, 2 found cached at its claim, 3 made.
        var outcome = [Int](repeating: 0, count: late.count)
        func keeps() -> Bool {
            var skip = StepBits()
            for (k, c) in late.enumerated() where outcome[k] < 2 && !skip.contains(c) {
                if outcome[k] == 0 { skip.formUnion(stepsOnlyUnder(only(c), from: firstAsked(c), besides: skip, keeping: true)!) }
                else { skip.insert(c); for j in steps.indices where descends(j, from: c) && !steps[j].isShared { skip.insert(j) } }
            }
            var reordered = false
            for c in claims where !skip.contains(c) {
                let k = late.firstIndex(of: c)!
                guard outcome[k] < 2 || !reordered else { return false }
                if outcome[k] == 3 { continue }
                if outcome[k] == 2 { skip.formUnion(stepsOnlyUnder(only(c), from: firstAsked(c), besides: skip, keeping: true)!) }
                guard !reordered else { continue }
                guard let walk = Plan.walk(Array(steps), Array(inputs), leaves: late.filter { skip.contains($0) }) else { return false }
                let n = made.firstIndex { $0 >= firstAsked(c) } ?? made.count
                guard let going = goingOn(walk, made, from: n, skipped: { skip.contains($0) }) else { return false }
                reordered = going.reorders
            }
            return true
        }
        func every(_ k: Int) -> Bool {
            guard k < late.count else { return keeps() }
            return (0..<4).allSatisfy { outcome[k] = $0; return every(k + 1) }
        }
        return every(0)
    }

    /// Whether a run may go on in the build's walk's order from a late claim's hit (`goOnInWalk`): one without
    /// `PublishedVariant`s (their orders are the plan's from the claim on) nor completion callbacks (queued in step order),
    /// where from the first place a late step is asked for no step but those has slots or cells, opens frames or is a
    /// container step. (Creation steps there, checked where that walk reaches them, `goingOn`, since branch cincreate;
    /// a creating run declined before: its positions are its checks'.)
    func goesOnInWalk(_ late: [Int]) -> Bool {
        guard publishedVariants.isEmpty, !completes, let from = late.map({ firstAsked($0) }).min() else { return false }
        let tail = madeSteps.filter { $0 >= from && !late.contains($0) }
        return !tail.contains { steps[$0].hasSlots || steps[$0].bindsCells || steps[$0].opensFrames || steps[$0].isContainer }
    }

    /// A run going on in the build's walk `walk` (the late steps taken its leaves) from made step `n` (`goOnInWalk`), `order` the
    /// made steps' order so far, the steps `skipped` not made: the made steps' order then (`order`'s before `n`, the rest in
    /// the walk's, the skipped last; `reorders`: another than `order`'s for the steps made), and the checks from `n` on
    /// (`CreationCheck`, positions in that order): each creation step's and late container step's the run still makes where
    /// that walk reaches it (`creationChecks` of the walk), as the build checks them. Nil: not a permutation of `order`; a
    /// check at or before `n` of a step made past it (the run checked it before the claim: not where the build does); a
    /// walk's check before `n` (at `n`: checked once the run goes on, `stepLoop`); creation steps made out of step order (the graph publishes them in
    /// step order, `Graph.pendCreated`, and a failed run lets go of them in the run's, `letGoMade`). The same for a warm
    /// run (its late container steps' checks) and a creating one.
    func goingOn(_ walk: Walk, _ order: [Int], from n: Int, skipped: (Int) -> Bool)
        -> (order: [Int], checks: [CreationCheck], reorders: Bool)? {
        let made = Set(order[..<n])
        let rest = walk.order.filter { !steps[$0].isShared && !made.contains($0) && !skipped($0) }
        let left = order[n...].filter { !rest.contains($0) }
        guard n + rest.count + left.count == order.count else { return nil }
        let ordered = Array(order[..<n]) + rest + left
        let reorders = rest != order[n...].filter { !skipped($0) }
        let late = containerSteps.filter { steps[$0].claimsLate }
        guard !creationChecks.contains(where: { c in
            c.at <= n && c.made >= n && !skipped(c.step) && (c.container < 0 || late.contains(c.step))
        }) else { return nil }
        // (Those before `n` come before every one after: `order` is the plan's there, in step order.)
        let entered = rest.filter { steps[$0].creates }
        guard zip(entered, entered.dropFirst()).allSatisfy({ $0 < $1 }) else { return nil }
        let checked = creations.map(\.step) + late.filter { !skipped($0) }
        guard !checked.isEmpty else { return (ordered, [], reorders) }
        var position = [Int](repeating: -1, count: steps.count)
        for (p, s) in ordered.enumerated() { position[s] = p }
        let madeInWalk = walk.order.filter { !steps[$0].isShared && !walk.leaves.contains($0) }
        var checks: [CreationCheck] = []
        // (Run time too, `goOnInWalk`: the scopes as recorded, `creations`', a container step's `.container`.)
        let scope = { (s: Int) in self.steps[s].isContainer ? Scope.container : self.creations.first { $0.step == s }!.scope }
        for found in Plan.creationChecks(Array(steps), Array(inputs), creating: checked.sorted(), walk: walk, scope: scope) {
            let (at, step) = (position[madeInWalk[found.at]], position[found.step])
            guard step >= n else { continue }
            guard at >= n, at <= step else { return nil }
            checks.append(CreationCheck(at: at, made: step, step: found.step, scope: found.scope, reachedThere: found.reachedThere,
                                        container: containerSteps.firstIndex(of: found.step) ?? -1))
        }
        return (ordered, checks.sorted { ($0.at, -$0.made) < ($1.at, -$1.made) }, reorders)
    }

    /// The plan for a run of this one that found the container steps of `cached` (a bit each) cached in the resolving
    /// container and the others not, where skipping what the cached ones asked for cannot give the build's order
    /// (`skipUnderCached`): recorded once per such set (at most `maxMixedVariants`), walked again with those as
    /// leaves taken from the resolving container's cache (`Recorder.leafContainers`) and the others made, the
    /// order the build makes them in then (a step those asked for that a made step takes is made where it asks).
    /// Nil: none (past the bound; a walk that declines, or marks none under the container steps it makes). A
    /// configuration changed since this plan was recorded (a race: another thread registered between the pick and the
    /// walk) is the one the build walks then too: the variant is walked for it, for the run only (`keptByNone`; since
    /// branch raced, the build before: a request's `requestReadsRequest`). A plan that `needsGraph` (completion callbacks, slots
    /// made per resolve) has variants that do too, replayed into the graph (`Graph.switchesToVariant`). Picked
    /// by `variant(forCached:)`.
    /// Walked without the store's lock (`MixedVariants`): two runs of a set not kept yet both walk, the first kept serves both.
    func mixedVariant(_ cached: UInt) -> Plan? {
        guard let mixedVariants else { return nil }
        let known = mixedVariants.known(cached)
        if known.found { return known.plan }
        let plan = recordMixed(cached)
        // (A creating walk that found the caches changed since this plan's pick, or a walk of another configuration: not
        // kept, `sameCreations`.)
        if plan.map({ $0.configuration == configuration && (!createsShared || sameCreations(as: $0)) }) ?? true {
            let kept = mixedVariants.keep(cached, plan, limit: Plan.maxMixedVariants)
            if kept.found { return kept.plan }
        }
        // Past the bound (or walked in another state): recorded for this run, kept by no plan.
        guard let plan else { return nil }
        plan.keptByNone = true
        return plan
    }

    /// The `mixedVariants` recorded so far (tests).
    var mixedVariantCount: Int { mixedVariants?.plans.withLock { $0.count { $0.plan != nil } } ?? 0 }

    /// `mixedVariant`'s walk: as `record`'s, the container steps of `cached` leaves. A run of it finding one of the
    /// container steps it makes cached skips what that one asked for (`Step.underContainer`, as every plan that
    /// marks them), or declines. Where a made step one of those asks for first is taken outside too
    /// (`containerInput`), as `recordWithCachedVariant`: every step made (none marked), and for a run finding them
    /// all cached the plan with every container step a leaf (this plan's `cachedVariant`, the same state).
    /// A creation plan's (`createsShared`): a creating walk (`Recorder.createsUncached`, the caches' state now), its
    /// run's claims redone (`Graph.claimCreations`); the one with every step made as `recordCreatingUnmarked`'s
    /// (`needsContainersUncached`).
    private func recordMixed(_ cached: UInt) -> Plan? {
        let root = steps[steps.count - 1].registration.object
        guard cached & 1 << UInt(steps.count - 1) == 0 else { return nil }
        // (Read before the walk, as `record`'s callers read it: another than this plan's, the variant is for this run only.)
        let configuration = root.container.configuration
        let leaves = Set(containerSteps.filter { cached & 1 << UInt($0) != 0 }.map { ObjectIdentifier(steps[$0].registration.object) })
        let creating = createsShared
        // Run as this plan: without a graph (no slots made per resolve, no completion callbacks), or replayed into it
        // (`needsGraph`: `Graph.switchesToVariant`; its slots finished as `record`'s). Creation steps: a creation plan's only.
        // Container steps claimed late (after a RESOLVER slot's owner): where their hits keep the build's order, as the
        // plan's own (`lateClaimsKeepOrder`; none before branch reqrest: a request's run declined `requestReadsRequest`).
        let fits = { [needsGraph] (recorder: Recorder) -> Bool in
            guard creating || !recorder.steps.contains(where: { $0.creates }) else { return false }
            guard needsGraph else { return recorder.slots.isEmpty && !recorder.steps.contains { $0.completes } }
            return (try? recorder.finishSlots()) != nil
        }
        let kept = { (plan: Plan) in plan.lateClaimsKeepOrder() ? plan : nil }
        let marked = Recorder(lookup: root.container, allowsArguments: true)
        (marked.makesContainer, marked.recordsSlots, marked.leafContainers, marked.createsUncached) = (true, true, leaves, creating)
        if marked.visit(Borrowed(root)) != nil {
            return fits(marked) ? kept(Plan(steps: marked.steps, inputs: marked.inputs, configuration: configuration, objects: nil, slots: marked.slots)) : nil
        }
        guard marked.decline == .containerInput else { return nil }
        let made = Recorder(lookup: root.container, allowsArguments: true)
        (made.makesContainer, made.recordsSlots, made.marksUnderContainer, made.leafContainers) = (true, true, false, leaves)
        made.createsUncached = creating
        guard made.visit(Borrowed(root)) != nil, fits(made) else { return nil }
        var allCached = configuration == self.configuration ? cachedVariant : nil  // (another's: walked for it)
        if allCached == nil {
            guard let walk = try? Plan.walkEveryContainerCached(root, creating: creating), fits(walk) else { return nil }
            allCached = kept(Plan(steps: walk.steps, inputs: walk.inputs, configuration: configuration, objects: nil, slots: walk.slots))
            guard allCached != nil else { return nil }
        }
        return kept(Plan(steps: made.steps, inputs: made.inputs, configuration: configuration, objects: nil, slots: made.slots,
                         cachedVariant: allCached, needsContainersUncached: creating))
    }

    /// Whether `variant`, a creating `mixedVariant` just walked, was walked in this creation plan's state of the caches:
    /// each shared registration both name a creation step in both or in neither (another thread published one, or let
    /// its last go, between this plan's pick and the walk: the variant serves that run only, `keptByNone`).
    private func sameCreations(as variant: Plan) -> Bool {
        let created = Set(creations.map { ObjectIdentifier(steps[$0.step].registration.object) })
        let named = Set(steps.indices.filter { steps[$0].isShared || steps[$0].creates }.map { ObjectIdentifier(steps[$0].registration.object) })
        return variant.steps.allSatisfy { step in
            let id = ObjectIdentifier(step.registration.object)
            return !(step.isShared || step.creates) || !named.contains(id) || step.creates == created.contains(id)
        }
    }

    /// `root`'s walk with every container-scoped registration a leaf taken from the resolving container's cache
    /// (`Recorder.containerLeaves`): a `cachedVariant`'s, the build's order when it finds them all cached.
    /// `creating`: a creation plan's (`Recorder.createsUncached`).
    private static func walkEveryContainerCached(_ root: Registration, creating: Bool = false) throws(Decline) -> Recorder {
        let cached = Recorder(lookup: root.container, allowsArguments: true, allowsValues: true)
        (cached.containerLeaves, cached.recordsSlots, cached.createsUncached) = (true, true, creating)
        guard cached.visit(Borrowed(root)) != nil else { throw cached.decline }
        return cached
    }

    /// The creation plan of a graph whose container steps' inputs include a made step a step outside them
    /// takes too (`containerInput`), for the caches' state now: every step made (none marked `underContainer`),
    /// for runs that find no container step cached (`needsContainersUncached`; one finding one cached declines:
    /// the warm plan's `cachedVariant` serves that state once the creation steps are cached). Nil: it creates
    /// nothing, or the walk declines otherwise.
    /// `child`: a child's creation plan (`record(_:configuration:child:creating:)`), both over its component, as
    /// `recordWithCachedVariant`'s (the variant's container leaves the resolving child's, `takeInResolving`).
    static func recordCreatingUnmarked(_ root: Registration, configuration: UInt, child: Container? = nil,
                                               leaves: Leaves = Leaves()) -> Plan? {
        guard let recorder = child.map({ try? childRecorder(root, $0) }) ?? Recorder(lookup: root.container, allowsArguments: true)
        else { return nil }
        (recorder.makesContainer, recorder.recordsSlots, recorder.marksUnderContainer, recorder.createsUncached) = (true, true, false, true)
        (recorder.leafContainers, recorder.leafSlots, recorder.graphLeaves) = (leaves.ids, leaves.slots, leaves.graph)
        guard recorder.visit(Borrowed(root)) != nil, recorder.steps.contains(where: { $0.creates }),
              (try? recorder.finishSlots()) != nil else { return nil }
        // A run finding every container step cached: the build's walk then, those leaves taken from the resolving
        // container's cache (`containerLeaves`), its creation steps claimed anew (`Graph.replay` switches to it);
        // none when only the container steps asked for those (a warm walk: its run checks the leaves' caches).
        guard let cached = child.map({ try? childRecorder(root, $0, allowsValues: true) })
                ?? Recorder(lookup: root.container, allowsArguments: true, allowsValues: true) else { return nil }
        (cached.containerLeaves, cached.recordsSlots, cached.createsUncached) = (true, true, true)
        let walked = cached.visit(Borrowed(root)) != nil && (try? cached.finishSlots()) != nil
        let (component, params) = child == nil ? ([], []) : walked ? componentShape(of: recorder, cached) : componentShape(of: recorder)
        let variant = walked ? Plan(steps: cached.steps, inputs: cached.inputs, configuration: configuration, objects: nil,
                                    component: component, componentParams: params, slots: cached.slots) : nil
        let plan = Plan(steps: recorder.steps, inputs: recorder.inputs, configuration: configuration, objects: nil,
                        component: component, componentParams: params, slots: recorder.slots,
                        cachedVariant: variant, needsContainersUncached: true)
        // (A container step claimed late is found cached after factories ran: as `recordWithCachedVariant`'s.)
        return plan.lateClaimsKeepOrder() ? plan : nil
    }

    /// Records the plan for `root` resolved from its own container against the caches' state now:
    /// each singleton or weak dependency no cache holds (registered in that container, not strict)
    /// becomes a creation step, its own dependencies recorded in the order `CreationOrder.walk`
    /// gives, the order `Graph.build` makes them with these caches; a singleton or weak root is one
    /// too (over container and value steps as well: `Graph.claimWithContainerSteps`). Nil when the graph
    /// is not plain or creates nothing (the
    /// warm plan, or the root's cache, serves it).
    static func recordCreating(_ root: Registration, configuration: UInt) -> Plan? {
        guard !root.spec.scope.isPerResolvingContainer, !root.isDeclaredValue else { return nil }
        let recorder = Recorder(lookup: root.container, allowsArguments: true)
        recorder.createsUncached = true
        recorder.recordsSlots = true
        recorder.makesContainer = true
        guard recorder.visit(Borrowed(root)) != nil else {
            if recorder.decline == .containerInput { return recordCreatingUnmarked(root, configuration: configuration) }
            // A failing plan over creation steps, as `record(creating:)` keeps one (a warm failing plan that found
            // a leaf gone: the build before branch declinesweep, counted `sharedRoot`); not over container or
            // value steps (`record`'s rule: the warm plan replays into the graph with the request).
            guard !recorder.declinedCreating, let met = recorder.failing(), recorder.steps.contains(where: { $0.creates }),
                  !recorder.readsRequest, (try? recorder.finishSlots()) != nil else { return nil }
            // Under container-scoped frames: the plans of the builds that take one cached, for the caches' state of their pick.
            let failing = withVariants(met, root, creating: true, leaves: Leaves())
            return Plan(steps: recorder.steps, inputs: recorder.inputs, configuration: configuration, objects: nil,
                        slots: recorder.slots, failing: failing)
        }
        // (Nil when `finishSlots` declines: the warm plan declines alike.)
        guard recorder.steps.contains(where: { $0.creates }), (try? recorder.finishSlots()) != nil else { return nil }
        return Plan(steps: recorder.steps, inputs: recorder.inputs, configuration: configuration, objects: nil, slots: recorder.slots)
    }
}
