import Synchronization

// A resolver's request run as a plan into the graph: its pick, its claims, a run up to a cut,
// and what it enters into the graph.

extension Graph {
    /// A resolver's request for `registration`, not in this graph (nor, shared, cached: `buildShared`): its plan
    /// run into words of this graph's and entered as the build leaves what it makes (`enterAsked`): the
    /// graph-scoped instances keyed, those with completion callbacks queued (the request their cause, for
    /// `checkLap`), the creation steps made pended to be published with the graph (their cells claimed first,
    /// `claimAsked`), on a factory's failure what was made before it kept, its message naming the frames open
    /// further out (a factory's request). A plan meeting a key the thread constructs elsewhere (`outer`) or this
    /// graph constructs, or whose creation step's claim fails (`claimAsked`), runs up to where the build asks for
    /// it, then the build's error (`meetAsked`). Nil, with the reason in `declined`, when the build serves it: a
    /// claim finding the caches changed, a failing plan's open frame the graph has that no walk with it a leaf
    /// serves (`Plan.graphVariant`), or a step below a key the graph has that a step it makes takes (`Plan.takeFromGraph`).
    /// A request whose creation steps' claims found keys another thread published that its run cannot take
    /// (`claimAsked`) keeps those claims (`keepClaims`) and picks its plan again, for the state they found, as `run`
    /// does (past `maxKeptPicks` times, once more holding every key its build would claim, as `run`).
    @inline(never)
    func runAsked(_ registration: Registration, from lookup: Container, declined reason: inout Plan.Decline?,
                          _ counts: PlanStats.Counts?, creating: Bool = false) throws(TetherError) -> Int? {
        if requestRunning { return try runAskedMeanwhile(registration, from: lookup, declined: &reason, counts, creating: creating) }
        var picks = 0, holding = false
        while true {
            let built = try runAskedPick(registration, from: lookup, declined: &reason, counts, creating: creating)
            guard keptAskedClaims else { return built }
            keptAskedClaims = false
            picks += 1
            if picks > Self.maxKeptPicks {
                guard !holding else { return built }
                holding = true
                // (From where its pick looks up: a singleton's or weak key's own container, `runAskedPick`.)
                let own = registration.specReference.borrow { $0.scope.resolvesFromOwnContainer }
                try claimInOrder(registration, from: own ? registration.container : lookup, evenOne: true)
            }
            reason = nil
        }
    }

    /// `runAsked`'s pick of the request's plan and its run.
    /// `picked`: the plan for the container steps the last run's claims found cached (`switchesToVariant`), run instead.
    private func runAskedPick(_ registration: Registration, from lookup: Container, declined reason: inout Plan.Decline?,
                              _ counts: PlanStats.Counts?, creating: Bool, picked: Borrowed<Plan>? = nil) throws(TetherError) -> Int? {
        // A one-shot plan picked here (`Registration.oneShotPlan`) goes once the request's run has ended.
        let oneShots = Borrowed<ThreadState>(opaque: thread).borrow { $0.oneShotPlans.count }
        defer { Borrowed<ThreadState>(opaque: thread).borrow { $0.dropOneShots(to: oneShots) } }
        if requestProgress == nil {
            requestProgress = .allocate(capacity: 1)
            requestProgress!.initialize(to: PlanProgress())
        }
        let progress = requestProgress!
        // A shared key not cached (`buildShared`): the plan for the caches' state now, from the container a
        // resolve of it would run in (a singleton's own, `Graph.resolve`), which its build's frames look up from.
        // (A container-scoped key: its warm plan, its root a container step the run claims in the resolving container.)
        let shared = registration.specReference.borrow { $0.scope.isShared && !$0.scope.isPerResolvingContainer }
        let lookup = shared && registration.specReference.borrow({ $0.scope.resolvesFromOwnContainer }) ? registration.container : lookup
        // (`creating`: a key not shared whose warm plan declined `notCached`, `requested`.)
        guard var plan = picked ?? (shared || creating ? registration.creationPlan(from: lookup, progress)
                : registration.plan(from: lookup, progress)) else {
            // (None for the caches' state: why, as `PlanStats.countBuild` tells a top-level resolve's.)
            reason = creating ? registration.creationDecline ?? .notCached : registration.planDecline(from: lookup)
            if shared && reason == .other { reason = .notCached }  // (its warm plan serves it cached only)
            return nil
        }
        // A failing plan's open frames the graph has (a configuration changed before the request,
        // `aFailingPlansOpenFrameTheGraphHasRunsThePlanTakingIt`): the build takes each from the graph and never meets
        // the error below it, so the plan of that walk, those keys leaves taken from the graph (`Plan.graphVariant`,
        // held till this pick's end as `walkedWithGraphKeys`' are; built before branch failopen). One it constructs:
        // its cycle (`meeting`).
        if plan.borrow({ $0.failing?.allOpen(progress.pointee.locals).contains { builtIndex($0) != nil } ?? false }) {
            guard let variant = plan.borrow({ p in p.graphVariant(registration, creating: shared || creating, from: lookup,
                                                                  progress.pointee.locals) { builtIndex($0) != nil } }) else {
                reason = .requestInGraph
                return nil
            }
            Borrowed<ThreadState>(opaque: thread).borrow { $0.oneShotPlans.append(variant) }
            plan = Borrowed(variant)
        }
        // A plan with a `cachedVariant`: the one the container steps' caches pick (`Plan.variant(forCached:)`), as
        // `runRequest` switches (its claims in the graph switch again if that changes, `Plan.claimContainerSteps`); some
        // cached and others not: the plan for that set (a `mixedVariant`); none fits: the build.
        if picked == nil && plan.borrow({ $0.cachedVariant != nil }) {
            guard let variant = variant(plan, forCached: plan.borrow { $0.cachedNow(in: lookup, progress.pointee.locals) }, in: lookup, progress) else {
                reason = .requestReadsRequest
                return nil
            }
            plan = variant
        }
        // (Container steps over creation steps: claimed in the build's walk's order, `claimAsked`. A RESOLVER slot's
        // owner with container steps: those found cached at the claims are entered before its factory, `enterRunning`,
        // and one its gets find in the graph taken, `Plan.takeBuiltAsked`.)
        // (Slots over creation steps are made as a creating replay makes them; a RESOLVER slot's factory runs
        // with the request's frames open, its gets requests made meanwhile: `Plan.openAskedFrames`.)
        // The thread constructs elsewhere: the build refuses a key of that where it asks for it (`Reentry`): the
        // run stops there (`replayAskedCut`, a failing plan's too: `meeting` finds its cut), unless it cannot.
        // A request reading the request whose claims fail or decline lets go of its own cells only (`dropContainerClaims`).
        let savedCells = (requestCellsFrom, requestMadeContainers)
        (requestCellsFrom, requestMadeContainers) = (cells.count, [])
        defer { (requestCellsFrom, requestMadeContainers) = savedCells }
        let count = plan.borrow { $0.stepCount }
        var met: (step: Int, registration: Borrowed<Registration>, cut: Int, claims: Bool)?
        var refusal: TetherError?
        // A step this graph constructs (a frame's: a RESOLVER slot's factory further out asking): the build reports the
        // cycle where its walk asks for it (`existing`, before `outer`), and the run stops there too (`meetAsked`); in a
        // request made meanwhile, one of the running request's open steps too (its path through them, `meanwhileOpen`),
        // unless frames opened since (not known: built).
        let open = meanwhileOpen.map { $0.base == frames.count } ?? true ? constructedSteps(plan, progress.pointee.locals) : []
        // (Over creation steps: the cells the build asked for before the cut claimed, `Plan.neverAsked`. `meeting` finds
        // what `meets` and `constructedSteps` do: `cycle` before branch pickrest, where it would not.)
        if !open.isEmpty || !outer.isEmpty, let m = plan.borrow({ $0.meeting(open + outer, progress.pointee.locals) }) {
            met = m
        } else if meanwhileOpen != nil && plan.borrow({ p in (0..<p.stepCount).contains { !p.steps[$0].isShared && constructs(p.registration(of: $0, progress.pointee.locals)) } }) {
            reason = .requestInGraph
            return nil
        }
        let creates = plan.borrow { $0.createsShared }
        requestRunning = true
        defer { requestRunning = false }
        // (A failing plan may have no step: a word all the same, for the buffer's address.)
        let outcome = withUnsafeTemporaryAllocation(of: UInt.self, capacity: max(count, 1)) { buffer -> Result<Int?, TetherError> in
            buffer.initialize(repeating: ReferenceWords<Instance>.none)
            let words = ReferenceWords<Instance>(base: buffer.baseAddress!)
            // Keys the graph has: taken from it, the steps only they asked for not made (the build's walk); up to a cut, those before it.
            // (A slot naming a step not made, only a taken key asked for it: the build's slot makes it, `slotsMeetSkips`.)
            let skips: StepBits
            switch plan.borrow({ $0.takeFromGraph(words, self, progress.pointee.locals, before: met?.cut ?? count, from: lookup) }) {
            case .failure(let declined):
                reason = declined
                return .success(nil)
            case .success(let taken):
                skips = taken.skips
                // A step below a taken one made all the same: asked for where the build's walk asks (`walkedWithGraphKeys`).
                if let parents = taken.parents {
                    let variant = plan.borrow { $0.withParents(parents) }
                    Borrowed<ThreadState>(opaque: thread).borrow { $0.oneShotPlans.append(variant) }
                    plan = Borrowed(variant)
                }
            }
            requestSkips = skips
            runningRequest = (words, Borrowed(registration), Borrowed(lookup), frames.count)
            defer { (requestSkips, runningRequest) = (StepBits(), nil) }
            // Creation steps: their cells claimed first, the masks of a creating run further out kept aside meanwhile.
            let cellsBefore = cells.count
            let outerTakes = creates ? (claimedSkip, claimedHeld, unclaimedUnder) : nil
            defer { if let outerTakes { (claimedSkip, claimedHeld, unclaimedUnder) = outerTakes } }
            if creates {
                (claimedSkip, claimedHeld, unclaimedUnder) = (StepBits(), StepBits(), StepBits())
                // (Up to a cut: not the cells of the steps the build asks for from there on.)
                var neverAsked = met.map { m in plan.borrow { $0.neverAsked(from: m.cut, met: m.step) } } ?? StepBits()
                progress.pointee.cutMoves = met.map { askedCutMoves(plan, $0.step, cut: $0.cut, neverAsked, meeting: open + outer) } ?? false
                Self.beforeClaiming(registration)
                neverAsked.formUnion(skips)
                guard claimAsked(plan, from: lookup, skips: neverAsked, cellsBefore: cellsBefore, progress, met: met?.step) else {
                    words.releaseUnmoved(lastFirst: count)  // what it took from the graph
                    reason = progress.pointee.decline ?? .other
                    progress.pointee.decline = nil
                    return .success(nil)
                }
                // (A refused claim: the run up to it, then its error, as the build's walk reaches it.)
                if let refused = refusedClaim {
                    refusedClaim = nil
                    let registration = plan.borrow { $0.registration(of: refused.step, progress.pointee.locals) }
                    met = (refused.step, registration, plan.borrow { $0.firstAsked(refused.step) }, false)
                    refusal = refused.error
                    progress.pointee.cutMoves = false
                }
            } else if met == nil && plan.borrow({ $0.fails }), let refused = claimOpenFrames(plan, from: lookup, progress) {
                // A failing plan creating nothing: a shared frame open at its error whose claim failed, the build's error there.
                (met, refusal) = ((refused.step, refused.registration, refused.cut, false), refused.error)
            }
            if let met {
                cutAskerCached = false  // (set by this run's claims only)
                let outcome = meetAsked(plan, met, words, count: count, root: Borrowed(registration), lookup, creating: creates, refusal: refusal)
                if case .success(nil) = outcome {
                    (reason, progress.pointee.decline) = (progress.pointee.decline ?? .other, nil)
                    // (Its creation or container steps' claims: nothing was made under them.)
                    if creates || plan.borrow({ $0.hasContainer }) { releaseCells(from: cellsBefore) }
                }
                return outcome
            }
            switch plan.borrow({ $0.replayAsked(into: self, words, specs, progress, lookup: lookup, creating: creates) }) {
            case .success(false):
                reason = progress.pointee.decline ?? .other
                progress.pointee.decline = nil
                // Nothing was made under them (creation steps', container steps' a declining run claimed).
                if creates || plan.borrow({ $0.hasContainer }) { releaseCells(from: cellsBefore) }
                return .success(nil)
            case .success(true):
                return .success(enterAsked(plan, words, count: count, failed: nil, root: Borrowed(registration), lookup))
            case .failure(let error):
                _ = enterAsked(plan, words, count: count, failed: progress.pointee.step, root: Borrowed(registration), lookup)
                return .failure(frames.count == 0 && meanwhileOpen == nil ? error : withFrames(error))
            }
        }
        // Declined for the container steps its claims found cached (`switchesToVariant`): the plan for that set, once
        // (held till this pick's end, `oneShots`; up to a cut, its met step's asker among them: the plan with them leaves).
        if let cached = switchesToVariant {
            switchesToVariant = nil
            if picked == nil, cached.count > 0, let variant = variant(plan, forCached: cached, cut: met != nil, in: lookup, progress) {
                reason = nil
                return try runAskedPick(registration, from: lookup, declined: &reason, counts, creating: creating, picked: variant)
            }
        }
        // Up to a cut, its asker cached in a failing, wide or child's plan, which no variant above serves: the plan with
        // the cached container steps leaves, once (held as those).
        if picked == nil, met != nil, let variant = leafVariant(plan, registration, from: lookup) {
            reason = nil
            return try runAskedPick(registration, from: lookup, declined: &reason, counts, creating: creating, picked: variant)
        }
        if let counts, case .success(_?) = outcome { counts.countRequest(found: false, built: nil) }
        if let counts, case .failure = outcome { counts.countRequest(found: false, built: nil) }
        return try outcome.get()
    }

    /// `runAsked` of a request made while a request's plan runs (`requestedMeanwhile`, the running request's
    /// steps made so far entered, those under construction marked): on a progress of its own, the running
    /// request's (`requestProgress`, `runningRequest`, `requestSkips`, `enteredEarly`) kept aside till it ends,
    /// as the build's frames open inside the running request's steps (`meanwhileOpen`). Out of line: rare.
    @inline(never)
    func runAskedMeanwhile(_ registration: Registration, from lookup: Container, declined reason: inout Plan.Decline?,
                                   _ counts: PlanStats.Counts?, creating: Bool) throws(TetherError) -> Int? {
        let nested = UnsafeMutablePointer<PlanProgress>.allocate(capacity: 1)
        nested.initialize(to: PlanProgress())
        let saved = (requestProgress, runningRequest, requestSkips, enteredEarly, meanwhileRuns)
        (requestProgress, requestRunning, enteredEarly, meanwhileRuns) = (nested, false, [], true)
        defer {
            (requestProgress, runningRequest, requestSkips, enteredEarly, meanwhileRuns) = saved
            requestRunning = true
            PlanProgress.free(nested)
        }
        return try runAsked(registration, from: lookup, declined: &reason, counts, creating: creating)
    }
    /// A request's plan meeting `met`, which the thread constructs further out (`runAsked`): run up to where the
    /// build asks for it (`replayAskedCut`), what it made kept in the graph as a failed request's, then the build's
    /// error (`Reentry.reentered`), the plan's steps open then inside the frames (`meanwhileOpen`).
    @inline(never)
    func meetAsked(_ plan: Borrowed<Plan>, _ met: (step: Int, registration: Borrowed<Registration>, cut: Int, claims: Bool),
                           _ words: ReferenceWords<Instance>, count: Int, root: Borrowed<Registration>, _ lookup: Container,
                           creating: Bool, refusal: TetherError?) -> Result<Int?, TetherError> {
        let progress = requestProgress!
        let outcome = plan.borrow { $0.replayAskedCut(into: self, words, specs, progress, lookup: lookup, cut: met.cut, met: met.step, creating: creating) }
        switch outcome {
        case .success(true):  // gone past its cut (`PlanProgress.cutMoves`): as a request not cut
            return .success(enterAsked(plan, words, count: count, failed: nil, root: root, lookup))
        case .success(false) where progress.pointee.cut != -1:  // a decline, before any factory ran
            return .success(nil)
        case .success(false):
            _ = enterAsked(plan, words, count: count, failed: met.cut, root: root, lookup)
            // (Its askers; a failing plan's open frame met, `steps.count + k`: those outside it.)
            let open = plan.borrow { $0.opened(before: met.step, progress.pointee.locals) }
            // (A request made meanwhile: inside the running request's open steps, as `requestedMeanwhile` nests them.)
            let saved = meanwhileOpen
            meanwhileOpen = saved.map { ($0.base, $0.steps + open) } ?? (frames.count, open)
            defer { meanwhileOpen = saved }
            if let refusal { return .failure(refusal) }  // (its claim's: `claimAsked`)
            // A key this graph constructs: the build's cycle (`existing`), its path through the plan's open steps.
            if constructs(met.registration) {
                let key = met.registration.borrow { $0.key }
                let path = path
                return .failure(TetherError.constructorCycle(Array(path[(path.firstIndex(of: key) ?? 0)...]) + [key]))
            }
            return .failure(Reentry.reentered(met.registration, by: self))
        case .failure(let error):
            _ = enterAsked(plan, words, count: count, failed: progress.pointee.step, root: root, lookup)
            return .failure(frames.count == 0 && meanwhileOpen == nil ? error : withFrames(error))
        }
    }

    /// Whether a creating request's run up to the cut at `cut`, meeting step `met` (`Plan.meeting` of the keys `meeting`),
    /// goes past it where a creation step over `met` is found where the build's walk reaches it (`PlanProgress.cutMoves`):
    /// the plan meets no other of those keys, has no container step (claimed up to the cut only), the steps the build never
    /// asks for up to the cut (`neverAsked`, not claimed) are `met` and those under it (the build reviving there never asks
    /// for them either), and the graph has none of `met`'s askers past the cut (`Plan.takeFromGraph` takes those before it
    /// only). Out of line: rare.
    @inline(never)
    private func askedCutMoves(_ plan: Borrowed<Plan>, _ met: Int, cut: Int, _ neverAsked: StepBits, meeting keys: [Borrowed<Registration>]) -> Bool {
        let locals = requestProgress!.pointee.locals
        return plan.borrow { p in
            guard !p.hasContainer, p.meetsOnly(met, keys, locals) else { return false }
            return !(0..<p.stepCount).contains { j in
                neverAsked.contains(j) ? j != met && !p.descends(j, from: met)
                    : j >= cut && p.steps[j].isKeyed && !p.steps[j].isShared && builtIndex(p.registration(of: j, locals)) != nil
            }
        }
    }

    /// A resolver's request's failing plan creating nothing (`runAsked`): its singleton or weak frames open at its error,
    /// outermost first, each claimed where the build's walk enters it (`Failing.openAt`: its cache first, else `claim`, the
    /// cell held as the build's, `cells`). The first whose claim fails (a cell this thread made further out and has not
    /// finished, a refusal to a thread that must not wait or acts for a token): that frame (`steps.count + k`, `Plan.meeting`'s
    /// numbering), where the build asks for it (a cut) and the claim's error, which the run reports there (`meetAsked`).
    /// Nil: every one claimed (or one found cached: the run as before). Out of line: rare.
    @inline(never)
    func claimOpenFrames(_ plan: Borrowed<Plan>, from lookup: Container, _ progress: UnsafeMutablePointer<PlanProgress>)
        -> (step: Int, registration: Borrowed<Registration>, cut: Int, error: TetherError)? {
        guard let failing = plan.borrow({ $0.failing }) else { return nil }
        let open = failing.allOpen(progress.pointee.locals)
        for k in open.indices {
            let scope = open[k].borrow { $0.specReference.borrow { $0.scope } }
            guard scope.isShared && !scope.isPerResolvingContainer else { continue }
            if let hit = open[k].borrow({ SharedCache.cached($0, scope, in: lookup) }) {
                hit.release()
                return nil
            }
            do throws(TetherError) {
                let asking = { self.path + open[..<k].map { $0.borrow { $0.key } } }
                if let hit = try open[k].borrow({ r throws(TetherError) in try claim(r, scope, in: lookup, askingPath: asking) }) {
                    hit.release()
                    return nil
                }
            } catch {
                return (plan.borrow { $0.stepCount } + k, open[k], failing.openAt[k], error)
            }
        }
        return nil
    }

    /// The registrations of `plan`'s made steps this graph constructs (a frame's: `existing` reports a request for one as a cycle),
    /// and of a failing plan's open frames it constructs (the build asks for those too, `Failing.openAt`).
    private func constructedSteps(_ plan: Borrowed<Plan>, _ locals: UnsafeMutablePointer<Borrowed<Registration>>) -> [Borrowed<Registration>] {
        guard frames.count > 0 || meanwhileOpen != nil else { return [] }
        return plan.borrow { p in
            (0..<p.stepCount).compactMap { j in
                let registration = p.registration(of: j, locals)
                return !p.steps[j].isShared && constructs(registration) ? registration : nil
            } + (p.failing?.allOpen(locals).filter { constructs($0) } ?? [])
        }
    }

    /// The cells of the creation steps of a request's plan (`runAsked`) claimed before any factory, each as the
    /// build's `existing` does where its walk first asks for it inside the request (`Plan.requestClaimOrder`: its
    /// cache first, else `claim`, which holds a cell this graph holds already, or makes it under a claim further
    /// out on this thread), not those below a key the graph has (`skips`: the build never asks for them). One
    /// published meanwhile is taken cached, the steps under it not made (`takesClaimedHits`), as the build takes
    /// it where its walk asks. A claim that fails (a cell this thread made further out, a wait cycle, a token's or a
    /// no-wait refusal: the build reports it where its walk asks for that key, after the factories before it) is
    /// noted (`refusedClaim`), the cells claimed before it kept: the run makes what the build makes before it asks
    /// for that key (`runAsked`, a cut there). False, with `PlanProgress.decline` and every cell claimed here let
    /// go of (those from `cellsBefore` on): a dead weak instance to revive where the plan does not, or a key
    /// published meanwhile the run cannot take. `progress`: the request's (`requestProgress`).
    /// `met`: the step a run up to a cut meets (`Plan.meeting`), which does not switch to a variant.
    func claimAsked(_ plan: Borrowed<Plan>, from container: Container, skips: StepBits, cellsBefore: Int,
                            _ progress: UnsafeMutablePointer<PlanProgress>, met: Int?) -> Bool {
        let cut = met != nil
        let inOrderBefore = claimedInOrder
        var declined: Plan.Decline?, keeps = false
        // Container steps found cached (the build never asks for what is under them), creation steps found
        // published (nor under those): as `claimWithContainerSteps`.
        var cachedContainers: [Int] = []
        var published: [Int] = []
        claims: for step in plan.borrow({ $0.requestClaimOrder() }) where !skips.contains(step) {
            let (registration, isContainer, stepLookup) = plan.borrow { p in
                (p.registration(of: step, progress.pointee.locals), p.steps[step].isContainer, p.lookup(of: step, progress.pointee.locals))
            }
            if !published.isEmpty && plan.borrow({ p in published.contains { p.descends(step, from: $0) } }) { continue }
            let under = !cachedContainers.isEmpty && plan.borrow { p in cachedContainers.contains { p.descends(step, from: $0) } }
            let scope = registration.borrow { $0.specReference.borrow { $0.scope } }
            let asking = { self.path + plan.borrow { $0.askingPath(to: step, progress.pointee.locals) } }
            if isContainer {
                // (A request's run claims every container step ahead, `Plan.claimContainerSteps`: none late.)
                if under { continue }
                let container = stepLookup?.object ?? container
                do throws(TetherError) {
                    var hit = registration.borrow { SharedCache.cached($0, scope, in: container) }
                    if hit == nil { hit = try registration.borrow { r throws(TetherError) in try claim(r, scope, in: container, askingPath: asking) } }
                    guard let hit else { continue }
                    hit.release()
                    cachedContainers.append(step)
                    // Recorded with every step made (`Plan.needsContainersUncached`): the build makes fewer now.
                    if plan.borrow({ $0.needsContainersUncached }) { declined = .containerInput; break claims }
                } catch {
                    // The claims stop where the build's do; the run claims it again (`Plan.claimContainerSteps`) and
                    // reports its failure where the build asks for that step.
                    break claims
                }
                continue
            }
            // Asked for only under a container step found cached, no step still made asking for it: neither claimed nor made
            // (as `claimWithContainerSteps`). One a step still made asks for: the build makes it where that one asks.
            if under && leavesUntaken(plan, step, under: cachedContainers, progress.pointee.locals) { continue }
            if under || registration.borrow({ Plan.Recorder.revives($0, scope) })
                && !plan.borrow({ $0.revivesWhereReached(step, met: met, cutMoves: cut && progress.pointee.cutMoves) }) {
                declined = .notCached
                // Under them, a step still made asks for it too: the plan for the set cached now (`runAsked`), as
                // `claimWithContainerSteps` (not a run up to a cut: no switch).
                if under && !cut { switchesToVariant = plan.borrow { $0.cachedNow(in: container, progress.pointee.locals) } }
                break
            }
            do throws(TetherError) {
                var hit = registration.borrow { SharedCache.cached($0, scope, in: container) }
                if hit == nil { hit = try registration.borrow { r throws(TetherError) in try claim(r, scope, in: container, askingPath: asking) } }
                if let hit {
                    claimedHits.append((step, hit))
                    published.append(step)
                }
            } catch {
                refusedClaim = (step, error)
                break
            }
        }
        if declined == nil && !claimedHits.isEmpty && !takesClaimedHits(plan, from: container, keeping: cellsBefore) {
            (declined, keeps) = (.notCached, true)
        }
        guard let declined else { return true }
        progress.pointee.decline = declined
        refusedClaim = nil
        // Keys published it cannot take: the claims kept (the graph's from then on) for the plan picked next (`runAsked`).
        if keeps { return keepClaims(request: true) }
        dropClaimedHits()
        releaseCells(from: cellsBefore)
        claimedInOrder = inOrderBefore
        return false
    }

    /// A failure in the plan of a factory's request (`runAsked`): its path from the frames open further out,
    /// as the build's (`factoryFailure`, `fill`'s key not registered, `depend`'s key taking arguments), not
    /// from the request's root. A cycle's keys run from the key met, one of the plan's (none the frames hold:
    /// `takeFromGraph`, the failing plan's open frames checked), so they are the build's already.
    @inline(never)
    private func withFrames(_ error: TetherError) -> TetherError {
        let parts = error.parts
        guard let key = parts.key else { return error }
        let path = path + parts.path
        switch parts.fix {
        case .factory: return Graph.factoryFailure(key, CallbackFailure(reason: parts.reason), path: path)
        case .register: return TetherError.notRegistered(key, neededBy: pathText(path), ErrorParts(.register, key: key, path: path))
        case .runtimeArguments: return Graph.argumentDependency(key, neededBy: pathText(path), path: path)
        default: return error
        }
    }

    /// After a request's plan ran (`runAsked`): its words appended to `alive`, each step entered as the
    /// build's `enter` leaves it: keyed in the table, a lazy cell awaiting it bound, counted as kept, queued
    /// for its completion callbacks with the request as its cause. `failed`: the step whose factory failed:
    /// what was made before it stays in the graph, as the build's; the shared steps the run took past it
    /// (the build never reached them) are let go of, and so are the graph's instances it took and the shared
    /// steps only those asked for (`requestSkips`). Returns the root's index in `alive`.
    func enterAsked(_ plan: Borrowed<Plan>, _ words: ReferenceWords<Instance>, count: Int, failed: Int?,
                            root: Borrowed<Registration>, _ lookup: Container) -> Int {
        // Past the failed step, and what the graph had or only those asked for: not the request's to enter.
        for i in 0..<count where i >= failed ?? count || requestSkips.contains(i) {
            words.releaseUnmoved(i)
            words.base[i] = ReferenceWords<Instance>.none
        }
        // Entered while it ran (`enterRunning`): the graph holds its own reference already, unless a dependent's
        // edge took the words' (the build's edge takes the graph's: the instance goes with that dependent).
        if !enteredEarly.isEmpty {
            for (i, at) in enteredEarly where !words.isNone(i) {  // (none: let go of above)
                if words.owns(i) { words.releaseUnmoved(i) } else { alive.disown(at) }
                words.base[i] = ReferenceWords<Instance>.none
            }
        }
        let base = alive.count
        let into = alive.appendNone(count: count)
        into.base.update(from: words.base, count: count)  // the words' references, moved
        plan.borrow { p in
            for i in 0..<count where !into.isNone(i) { enterStep(p, i, at: base + i, root: root, lookup) }
        }
        enteredEarly.removeAll()
        return base + count - 1
    }

    /// Step `i` of a request's plan (`enterAsked`, `enterRunning`), its instance at `index` in `alive`, entered as
    /// the build's `enter` leaves it: keyed, a lazy cell awaiting it bound, counted as kept, queued for its
    /// completion callbacks with the request as its cause.
    func enterStep(_ p: Plan, _ i: Int, at index: Int, root: Borrowed<Registration>, _ lookup: Container) {
        // (A child's plan: a local step's the resolving child's registration, bound on the request's progress.)
        let locals = requestProgress.unsafelyUnwrapped.pointee.locals
        let registration = p.registration(of: i, locals)
        if p.steps[i].isKeyed { table.set(registration, GraphTable.state(index)) }
        // A container step made: published into its container with the graph, as `enter` queues it.
        let madeContainer = p.steps[i].isContainer && requestMadeContainers.contains(ObjectIdentifier(registration.object))
        if madeContainer { pendingShared.append((registration, alive[index].object, p.steps[i].lookup ?? .init(lookup))) }
        // Taken from its cache (a container step too), or a creation step published meanwhile (taken at its claim or
        // check) or revived: as `existing` takes it, binding a lazy cell waiting for it (a value's is not bound).
        if p.steps[i].isShared || p.steps[i].isContainer && !madeContainer || p.steps[i].creates && !madeHere(registration) {
            if !awaitingCells.isEmpty && !registration.borrow({ $0.isDeclaredValue }) { bindAwaiting(registration, alive[index]) }
            return
        }
        if p.steps[i].creates {
            madeCreationStep(registration, at: index)  // published with the graph, in `enter`'s order
        } else if p.steps[i].isKeyed {
            keptMade &+= 1
        }
        if !awaitingCells.isEmpty { bindAwaiting(registration, alive[index]) }
        if p.steps[i].completes {
            var (cause, via) = (-1, -1)
            // (A factory's request: the build's frames hold the ones further out first.)
            if currentCause != -1 { (cause, via) = recordCause(asked: frames.count == 0 ? root : frames[0].registration, via: path + p.keys(to: i, locals)) }
            queue.append(Pending(instance: alive[index], registration: registration, lookup: .init(lookup), cause: cause, via: via))
        }
    }

    /// Whether `existing` would find `registration`'s instance without making one: this graph's, a cached
    /// shared one or a provided value (a diagnostic's look, for `PlanStats`; it claims nothing).
    func isFound(_ registration: Borrowed<Registration>, in lookup: Container) -> Bool {
        let state = table.state(registration)
        if state != GraphTable.absent { return state != GraphTable.constructing }
        let scope = registration.borrow { $0.spec.scope }
        let hit = scope.isShared ? registration.borrow { SharedCache.cached($0, scope, in: lookup) }
            : registration.borrow { $0.isDeclaredValue } ? registration.borrow { lookup.providedValue(of: $0) } : nil
        defer { hit?.release() }
        return hit != nil
    }
}
