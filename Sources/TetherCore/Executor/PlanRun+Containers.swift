// Shared and container-scoped steps: taken cached, claimed, published; the steps under them.

extension Plan {
    /// Takes every shared dependency from its cache (a declared value from the resolving
    /// container, `takeValue`); false when one is missing. A block notes each one's pointer and
    /// takes a published singleton by a split reference (`Registration.cachedSplitReference`)
    /// when its slot has not let go, its step's bit set in `split`; object mode takes the object.
    /// A singleton or weak one first asked for under container steps (`Step.askedUnderContainer`) not cached
    /// is left missing (`untaken`, a bit each) until their claims say whether a step still made asks for it
    /// (`execute`: `underCached`): a build taking them cached never asks for it (a dead weak key only a cached
    /// Session's WEAK slot names, a singleton reset under one). A value none provides under container steps is left
    /// `absent` (a bit each) alike: missing unless the build, taking them cached, never asks for it (`execute`).
    @inline(__always)
    func takeShared<B, M: RunMode>(_: M.Type, _ run: inout RunState, _ locals: Locals<B>, _ missing: inout Int,
                                           _ untaken: inout B.Mask, _ absent: inout B.Mask) -> Bool {
        for shared in sharedSteps {
            let registration = registration(shared.step, locals)
            if M.destination == .objects {
                // An object plan's shared steps hold objects (`Recorder.objects`): the word is the object.
                guard let hit = registration.borrow({ $0.cached(shared.scope) }) else { return false }
                run.objects.set(shared.step, Borrowed<AnyObject>(opaque: hit.pointer).retained())
                continue
            }
            let hit: Ref<Instance>
            if M.destination == .block && shared.splits, let reference = registration.borrow({ $0.cachedSplitReference() }) {
                run.split |= 1 << UInt64(shared.step)
                hit = reference
            } else if B.readsRequest && shared.isValue {
                // None provided: the run fails where the build reaches it (the first such step: `execute`);
                // with container steps the build may take one cached and never ask for it: it decides.
                guard let retained = takeValue(shared.step, locals) else {
                    // (Over container steps: decided once those are claimed, `execute`'s `absent`. Traced: the hits before it
                    // told, then its factory's call and return, `failMissing`, as the build's.)
                    if hasContainer { absent.insert(shared.step) } else { missing = min(missing, shared.step) }
                    continue
                }
                hit = retained
            } else {
                guard let retained = B.readsRequest && shared.inResolving ? takeInResolving(shared, locals)
                        : registration.borrow({ $0.cachedRetained(shared.scope) }) else {
                    // (Not a block's: its records name every shared step's pointer.)
                    guard B.readsRequest && hasContainer && M.destination != .block && !shared.inResolving
                            && steps[shared.step].askedUnderContainer else { return false }
                    untaken.insert(shared.step)
                    continue
                }
                hit = retained
            }
            run.instances.set(shared.step, hit)
            if M.destination == .block { run.pointers[shared.step] = UInt(bitPattern: hit.borrow { $0.pointer }) }
        }
        return true
    }

    /// The value the resolving container provides for value step `i` (retained); nil: none does
    /// (the plan declines, and `Graph` reports it missing).
    @inline(__always)
    func takeValue<B>(_ i: Int, _ locals: Locals<B>) -> Ref<Instance>? {
        // (Asked for under a singleton from further up: that one's container's, `Step.lookup`.)
        registration(i, locals).borrow { r in (self.lookup(of: i, locals.base) ?? locals.request.unsafelyUnwrapped.pointee.resolving).borrow { $0.providedValue(of: r) } }
    }

    /// A container-scoped leaf's (`inResolving`) instance cached in the resolving container (retained);
    /// nil: not cached (the plan declines).
    @inline(__always)
    func takeInResolving<B>(_ shared: SharedStep, _ locals: Locals<B>) -> Ref<Instance>? {
        // (A child's plan's local leaf: the resolving child's registration, `fits` wrote it. Asked for under a
        // singleton from further up: that one's container's cache, `Step.lookup`.)
        registration(shared.step, locals).borrow { r in
            (self.lookup(of: shared.step, locals.base) ?? locals.request.unsafelyUnwrapped.pointee.resolving)
                .borrow { SharedCache.cached(r, shared.scope, in: $0) }
        }
    }

    /// Takes every container step's instance from the resolving container's cache, or claims its
    /// creation cell there, under the one lock of the lookup (`Container.claimScoped`; a block notes
    /// its pointer, as `takeShared`). False, before any factory ran: a cell is held
    /// (this thread's resolve further out, or another thread's), or some are cached and others
    /// not (`Graph` makes only what the cached ones do not already hold).
    func takeContainer<B, M: RunMode>(_: M.Type, _ run: RunState, _ locals: Locals<B>) -> Bool {
        let request = locals.request.unsafelyUnwrapped.pointee
        let claims = self.claims(locals)
        let container = request.resolving
        var cached = 0
        for n in 0..<containerSteps.count {
            let i = containerSteps[n]
            let made = B.Mask.place(i, in: claims.kind(2))
            let found = registration(i, locals).borrow { r in
                container.borrow { $0.claimScoped(r, thread: request.thread, madeWord: made.word, madeBit: made.bit) }
            }
            switch found {
            case .published(let hit):
                run.instances.set(i, hit)
                if M.destination == .block { run.pointers[i] = UInt(bitPattern: hit.borrow { $0.pointer }) }
                B.Mask.set(i, in: claims.kind(0))
                cached += 1
            case .claimed:
                B.Mask.set(n, in: claims.kind(1))
            case .heldElsewhere(let cell):
                // Held by the token this thread resolves for (a factory of it suspended): taken back, as a build's claim does.
                switch claimForToken(i, locals) {
                case .published(let hit)?:
                    run.instances.set(i, hit)
                    if M.destination == .block { run.pointers[i] = UInt(bitPattern: hit.borrow { $0.pointer }) }
                    B.Mask.set(i, in: claims.kind(0))
                    cached += 1
                case .claimed?:
                    B.Mask.set(n, in: claims.kind(1))
                case .heldElsewhere(let held)?:
                    claims.failed = Ref(retaining: held).word
                    return false
                case nil:
                    claims.failed = Ref(retaining: cell).word  // waited for once the run let go of its claims (`runRequest`)
                    return false
                case .heldHere?:
                    return false
                }
            case .heldHere:
                return false
            }
        }
        // Every one cached, with a `cachedVariant`: that plan runs instead (`runRequest`).
        if cached == containerSteps.count { return cachedVariant == nil }
        return cached == 0 || skipUnderCached(claims, locals, endClaims: true)
    }

    /// Container step `i`'s cell, held by another thread, claimed again for the token this thread resolves
    /// for, if any (`SharedCache.token(of:)`: nil without one). Out of line: a request's run meets it rarely.
    @inline(never)
    private func claimForToken<B>(_ i: Int, _ locals: Locals<B>) -> Container.ScopedClaim? {
        let request = locals.request.unsafelyUnwrapped.pointee
        guard let token = SharedCache.token(of: request.thread) else { return nil }
        let made = B.Mask.place(i, in: claims(locals).kind(2))
        return registration(i, locals).borrow { r in
            request.resolving.borrow { $0.claimScoped(r, thread: request.thread, token: token, madeWord: made.word, madeBit: made.bit) }
        }
    }

    /// `takeContainer` of a replay into a graph: the graph claims each container step's cell in the
    /// resolving container as its build claims one it reaches (`Graph.claimContainerStep`: waiting for
    /// another thread's, taking back a token's), before any factory; the one published there is taken.
    /// False (the graph let go of what it claimed): a claim the build would refuse or back off from,
    /// which it reports where it reaches the step.
    /// A claim that fails (`Graph.claimContainerStep`'s `failure`) is the error the run throws at the
    /// first step the build makes once it asked for that container step (`claims[3]`: that step + 1); the
    /// claims stop there, as the build's. They go in the order the build asks: by that step, outer first.
    @inline(never)
    func claimContainerSteps<B, M: RunMode>(_: M.Type, _ run: RunState, _ locals: Locals<B>, _ into: GraphRun,
                                                    _ progress: UnsafeMutablePointer<PlanProgress>) -> Bool {
        let claims = self.claims(locals)
        // A run up to a cut (`replayCut`): only those the build asks for before the step it meets (made
        // before the cut, or that step's askers), which it then refuses before any cache (`Graph.existing`).
        let (cut, met) = M.cuts ? (progress.pointee.cut, progress.pointee.met) : (Int.max, -1)
        // Where the build asks for each container step: the first of the steps it asked for first (its range).
        let asked = containerSteps.map { c in (at: firstAsked(c), step: c) }.sorted { ($0.at, -$0.step) < ($1.at, -$1.step) }
        // Under a creation step another thread published before its claim (`Graph.claimedSkip`): never asked for.
        let published = M.creates ? B.Mask(into.graph.borrow { $0.claimedSkip }) : B.Mask()
                // Claimed late, where the build asks (`claimLate`): not a request's (its plan has no RESOLVER slot), not
        // the askers of the step a cut run meets (the build asks for them before it meets it), not ahead-claiming threads.
        let late = !M.requests && !lateClaims.isEmpty && !into.graph.borrow({ $0.claimsLateAhead }) ? B.Mask(lateClaims) : B.Mask()
        var deferred = B.Mask()
        var unlooked = 0  // (container steps not looked at: the set found cached is not every one's)
        for (at, i) in asked {
            let asker = M.cuts && i > met && descends(met, from: i)
            if M.cuts && i >= cut && !asker { continue }
            if published.contains(i) { unlooked += 1; continue }
            // A resolver's request: a key the graph has is taken from it, and nothing under it asked for (`Graph.requestSkips`).
            if M.requests && into.graph.borrow({ $0.requestSkips.contains(i) }) { unlooked += 1; continue }
            if late.contains(i) && !asker { deferred.insert(i); continue }
            let (claimed, hit, failure) = into.graph.borrow { graph in
                graph.claimContainerStep(registration(i, locals), in: self.lookup(of: i, locals.base) ?? into.lookup) { self.askingPath(to: i, locals.base) }
            }
            guard claimed else { return false }
            if let failure {
                into.graph.borrow { $0.deferredFailure = failure }
                claims.failed = UInt(at) + 1
                break
            }
            if let hit {
                run.instances.set(i, hit)
                B.Mask.set(i, in: claims.kind(0))
                // Taken cached, the build never asks for the step it would meet there: the plan for the caches now (those
                // claimed, the others read: the build asks for them past the cut), which the graph runs instead
                // (`Graph.replayMeeting`: up to where it meets a step further out, if it does).
                if asker {
                    into.graph.borrow { g in
                        g.dropContainerClaims()
                        g.cutAskerCached = true  // (a failing or wide plan's bits cannot name the set: `Graph.leafVariant`)
                        if failing == nil && !wideMasks {
                            let bits = claims.load(0).word | cachedNow(in: into.lookup.object, locals.base).bits
                            g.switchesToVariant = (bits, bits.nonzeroBitCount)
                        }
                    }
                    return false
                }
            }
        }
        // Some cached, others not: the build makes only what the cached ones do not already hold. (A request's plan with a
        // `cachedVariant` found none cached, `Graph.runAsked`: one cached since is the build's, which makes fewer.)
        let cached = claims.load(0).count
        // Every one looked at (none refused, none left to claim late, none skipped; up to a cut, those the build asks for
        // before it), in a state this plan does not run in: the plan `variant(forCached:)` picks for the set found cached,
        // which the graph replays instead (`Graph.switchesToVariant`: `replay`, up to the same cut in a cut run's,
        // `Graph.replayMeeting`; a request's `runAsked`), as `runRequest` runs it. Every one cached, with a
        // `cachedVariant`: that one; some, which no skip gives the build's order: the `mixedVariant` for that set (a
        // creating run's a creating one, its claims redone).
        let switches = claims.failed == 0 && deferred.isEmpty && unlooked == 0
        if switches && cachedVariant != nil && cached == containerSteps.count {
            into.graph.borrow { $0.dropContainerClaims(); $0.switchesToVariant = (claims.load(0).word, cached) }
            return false
        }
        guard cached == 0 || (cached == containerSteps.count && !(M.requests && cachedVariant != nil))
                || claims.failed == 0 && skipUnderCached(claims, locals, endClaims: false) else {
            into.graph.borrow { $0.deferredFailure = nil; $0.dropContainerClaims() }
            if switches && mixedVariants != nil && cached < containerSteps.count {
                into.graph.borrow { $0.switchesToVariant = (claims.load(0).word, cached) }
            }
            return false
        }
        if !lateClaims.isEmpty && !M.requests { into.graph.borrow { $0.lateContainerClaims = deferred.stepBits } }
        return true
    }

    /// The container steps claimed late (`late`: `Step.claimsLate`, not claimed yet) the build asks for at step `i` (the
    /// first of the steps asked for under each): one a resolver's get reached was claimed there (the graph built it
    /// or took it cached, `takeBuilt`); else claimed now (`Graph.claimLateContainerStep`), before any factory under
    /// it: one found cached taken, as the build takes it where it asks, the steps only it asked for not made (`skip`).
    /// Returns the claim's error, which the build reports there. Traced: `told`, or `walked` from `position` (`tellWalkedHits`).
    /// One taken so (here, or by a get) where the build's walk with it a leaf makes the steps still made in another order
    /// (`lateHitsKeepOrder`): the run goes on in that order from made step `n` (`goOnInWalk`, `order` then its own, `reordered`).
    @inline(never)
    func claimLate<B, M: RunMode>(_: M.Type, at i: Int, _ late: inout B.Mask, _ skip: inout B.Mask, _ run: RunState,
                                          _ locals: Locals<B>, _ into: GraphRun, told: inout Int,
                                          walked: inout Plan.Walk?, position: inout Int,
                                          n: Int, order: inout UnsafeBufferPointer<Int>, reordered: inout Bool,
                                          checks: inout UnsafeBufferPointer<CreationCheck>, check: Int) -> TetherError? {
        for c in containerSteps where late.contains(c) {
            let first = firstAsked(c)
            guard first <= i else { continue }
            late.remove(c)
            // Under a step taken so (or under a container step taken cached): not asked for here.
            if skip.contains(c) { continue }
            // Taken from what a get built (or took cached: `takeBuilt`, which skips what only it asked for): not claimed.
            if into.graph.borrow({ $0.replaySkips.contains(c) }) {
                let replayed = into.graph.borrow { $0.replaySkips }
                let going = reordered
                goOnInWalk(M.self, c, n, &order, &reordered, checks: &checks, check: check,
                           skipped: { skip.contains($0) || replayed.contains($0) }, pending: { late.contains($0) && replayed.contains($0) },
                           run, locals, walked: &walked, position: &position, told: told)
                // Traced, not gone on here: the hits only it asked for (a shared step's too) not told, as a hit's (below).
                if run.tracer != nil && going == reordered {
                    var (taken, besides) = (StepBits(), skip.stepBits)
                    taken.insert(c)
                    besides.formUnion(replayed)
                    let under = stepsOnlyUnder(taken, from: first, besides: besides, keeping: true)!
                    tellTakenLate(M.self, c, first: first, under: under, run, locals, told: &told, walked: &walked, position: &position)
                }
                continue
            }
            let claimed = into.graph.borrow { g in
                g.claimLateContainerStep(registration(c, locals), in: self.lookup(of: c, locals.base) ?? into.lookup) { self.askingPath(to: c, locals.base) }
            }
            switch claimed {
            case .failure(let error): return error
            case .success(nil): continue
            case .success(let hit?):
                run.instances.set(c, hit)
                B.Mask.set(c, in: claims(locals).kind(0))
                // Not made: what only it asked for. One a step still made takes too (a graph-scoped input taken outside)
                // is made where the plan has it, which is where the build makes it (`lateHitsKeepOrder`).
                var (taken, besides) = (StepBits(), skip.stepBits)
                taken.insert(c)
                besides.formUnion(into.graph.borrow { $0.replaySkips })
                let under = stepsOnlyUnder(taken, from: first, besides: besides, keeping: true)!
                skip.formUnion(B.Mask(under))
                let replayed = into.graph.borrow { $0.replaySkips }
                goOnInWalk(M.self, c, n, &order, &reordered, checks: &checks, check: check,
                           skipped: { skip.contains($0) || replayed.contains($0) }, pending: { late.contains($0) && replayed.contains($0) },
                           run, locals, walked: &walked, position: &position, told: told)
                if let tracer = run.tracer {
                    tellTakenLate(M.self, c, first: first, under: under, run, locals, told: &told, walked: &walked, position: &position)
                    tracer.borrow { t in hit.borrow { h in t.emit(.cacheHit, h.key, h.pointer) } }
                }
            }
        }
        return nil
    }

    /// Traced, `claimLate`'s container step `c` taken (found cached at its claim, or by a get), `under` the steps only it
    /// asked for, first asked for at `first`: the hits before it told; some kept, in the build's walk, `c` a leaf from here
    /// on (told in step order so far); else none of those under it (the build never asks for them). `c`'s own: the caller's.
    private func tellTakenLate<B, M: RunMode>(_: M.Type, _ c: Int, first: Int, under: StepBits, _ run: RunState, _ locals: Locals<B>,
                                              told: inout Int, walked: inout Plan.Walk?, position: inout Int) {
        if walked != nil || (first..<c).contains(where: { !under.contains($0) }) {
            if walked == nil { (walked, position) = (Plan.walk(Array(steps), Array(inputs), leaves: []), told) }
            if walked != nil { tellPublishedInWalk(M.self, c, &walked!, &position, run, locals) }
        } else {
            tellHits(M.self, &told, to: first, run, locals)
            told = c + 1
        }
    }

    /// `claimLate`'s container step `c` taken (a leaf of the build's walk from here on) at made step `n`, the steps `skipped`
    /// not made: where that walk makes the rest in another order than `order` (`lateHitsKeepOrder`, the last late claim
    /// left), `order` becomes the made steps before `n`, then the rest in the walk's order, then the skipped ones, and the
    /// checks from `check` on those of that walk (`goingOn`: a creating run's creation steps checked where the build reaches
    /// them, since branch cincreate) (both allocated, `reordered`: the step loop deallocates them). Traced: its hits told in
    /// that walk from here on (`tellPublishedInWalk`; `c`'s own, a hit, by the caller; a get's, none: the graph told it).
    private func goOnInWalk<B, M: RunMode>(_: M.Type, _ c: Int, _ n: Int, _ order: inout UnsafeBufferPointer<Int>, _ reordered: inout Bool,
                                           checks: inout UnsafeBufferPointer<CreationCheck>, check: Int,
                                           skipped: (Int) -> Bool, pending: (Int) -> Bool, _ run: RunState, _ locals: Locals<B>,
                                           walked: inout Plan.Walk?, position: inout Int, told: Int) {
        // (Its leaves the late steps taken, as `lateHitsKeepOrder` walks: the plan's order is the walk's for every other set.)
        let late = containerSteps.filter { steps[$0].claimsLate }
        guard !M.cuts && !reordered, goesOnInWalk(late),
              let walk = Plan.walk(Array(steps), Array(inputs), leaves: late.filter(skipped)),
              let going = goingOn(walk, Array(order), from: n, skipped: skipped), going.reorders else { return }
        let buffer = UnsafeMutableBufferPointer<Int>.allocate(capacity: order.count)
        _ = buffer.initialize(from: going.order)
        (order, reordered) = (UnsafeBufferPointer(buffer), true)
        let kept = Array(checks[..<check]) + going.checks
        let remapped = UnsafeMutableBufferPointer<CreationCheck>.allocate(capacity: max(kept.count, 1))
        _ = remapped.initialize(from: kept)
        checks = UnsafeBufferPointer(start: remapped.baseAddress, count: kept.count)
        if run.tracer != nil {
            // (A get's late steps not reached yet, `pending`: leaves of it too, the graph told their hits; since branch late2.)
            if walked == nil { (walked, position) = (Plan.walk(Array(steps), Array(inputs), leaves: late.filter { pending($0) && firstAsked($0) >= told }), told) }
            if walked != nil { tellPublishedInWalk(M.self, c, &walked!, &position, run, locals) }
        }
    }

    /// The creation and container steps in the order the build's walk first asks for each (pre-order: by the
    /// first of the steps asked for under it, an asker before what it asked), for `Graph.claimWithContainerSteps`.
    func requestClaimOrder() -> [Int] {
        let first = firstAskedOfEach()
        return steps.indices.filter { steps[$0].creates || steps[$0].isContainer }.sorted { (first[$0], -$0) < (first[$1], -$1) }
    }

    /// Whether creation step `j`, first asked for under one of container steps `cached`, is untaken by the build taking
    /// those from the cache: no step it still makes (not under those) asks for it (`Graph.claimWithContainerSteps`;
    /// not `neverAsked`, the steps a cut run does not reach).
    func untaken(_ j: Int, under cached: [Int], _ locals: UnsafeMutablePointer<Borrowed<Registration>>) -> Bool {
        let skip = steps.indices.reduce(into: StepBits()) { mask, k in if cached.contains(where: { k == $0 || descends(k, from: $0) }) { mask.insert(k) } }
        // (A plan of any size: `StepBits`, the locals' binding reads no request here.)
        return untaken(j, skipping: skip, Locals<ChildWideRequestSteps>(base: locals))
    }

    /// Whether step `j` was asked for under step `c` (`c` or a step under it asked for it first).
    func descends(_ j: Int, from c: Int) -> Bool {
        var k = steps[j].parent
        while k >= 0 && k != c { k = steps[k].parent }
        return k == c
    }

    /// Container step `i` made: its claim now holds a made instance (a resolve nested on this
    /// thread that needs it is refused as unfinished, as under `Graph`, `SharedCache.claim`).
    @inline(__always)
    func madeContainer<B>(_ i: Int, _ locals: Locals<B>) {
        B.Mask.set(i, in: claims(locals).kind(2))
    }

    /// After a successful run: the container steps made go to the resolving container's cache,
    /// each ending its claim under the same lock. `made` still names each (the root or the block
    /// holds them).
    func publishContainer<B>(_ run: RunState, _ locals: Locals<B>) {
        let made = run.instances
        let request = locals.request.unsafelyUnwrapped.pointee
        let claims = self.claims(locals)
        for n in 0..<containerSteps.count where claims.holds(n) {
            let i = containerSteps[n]
            registration(i, locals).borrow { r in
                made[i].borrow { instance in
                    request.resolving.borrow { _ = $0.publishScoped(r, instance, endingClaimOf: request.thread, builtSince: request.builtSince) }
                }
            }
            B.Mask.clear(n, in: claims.kind(1))
        }
        // Cached ones were not made: what was taken for them alone is let go of (the root is the caller's).
        if claims.any(0) { Plan.letGo(made, count: steps.count - 1, split: run.split) }
    }

    /// Some container steps taken cached, others claimed (`takeContainer`, `claimContainerSteps`): the
    /// steps asked for first under a cached one are skipped (`claims[4]`), as a build taking it cached
    /// never asks for them; a claimed container step among them has its claim ended (`endClaims`: a run
    /// without a graph; a graph lets go of its cells when it ends). False (declined): a step still made
    /// takes a made one skipped (the build makes that one where it asks), a block would miss a record,
    /// or the plan has a `cachedVariant` (its made steps are not marked).
    @inline(never)
    func skipUnderCached<B>(_ claims: ContainerClaims<B.Mask>, _ locals: Locals<B>, endClaims: Bool) -> Bool {
        guard cachedVariant == nil else { return false }
        // (Only container steps have bits in word 0.)
        guard let (skip, _) = stepsUnder(claims.load(0), held: sharedMask() as B.Mask, locals) else { return false }
        if blockWords > 0 && madeSteps.contains(where: { skip.contains($0) && !steps[$0].isContainer }) { return false }
        skip.store(in: claims.kind(4), width: claims.width)
        guard endClaims else { return true }
        for n in 0..<containerSteps.count where claims.holds(n) && skip.contains(containerSteps[n]) {
            let container = locals.request.unsafelyUnwrapped.pointee.resolving
            registration(containerSteps[n], locals).borrow { r in container.borrow { $0.endScopedClaim(r, thread: locals.request.unsafelyUnwrapped.pointee.thread) } }
            B.Mask.clear(n, in: claims.kind(1))
        }
        return true
    }

    /// The steps asked for first under a step of `taken` (a bit each: taken, not made: a container step
    /// cached, a creation step published meanwhile), which a build taking those never asks for, and
    /// (`used`) those of them a step still made takes. Nil when a step still made takes one of them not in
    /// `held` (as a DEP, a WEAK slot's step, an ALL slot's item): the build makes it where that step asks,
    /// another order (a LAZY cell waits for one skipped: `makeSlots`).
    func stepsUnder<B>(_ taken: B.Mask, held: B.Mask, _ locals: Locals<B>) -> (skip: B.Mask, used: B.Mask)? {
        var skip = B.Mask(), used = B.Mask()
        for j in 0..<steps.count {
            var k = steps[j].parent
            while k >= 0 && !taken.contains(k) { k = steps[k].parent }
            if k >= 0 { skip.insert(j) }
        }
        // (A step taken is not made: its inputs are among those skipped.)
        for j in madeSteps where !skip.contains(j) && !taken.contains(j) {
            let count = registration(j, locals).borrow { $0.params.count }
            for s in 0..<count {
                let input = inputs[steps[j].firstInput + s]
                // A WEAK slot's step, an ALL slot's items: as a DEP's.
                var named = Plan.isStep(input) ? [input] : []
                if Plan.isSlot(input) {
                    let n = Plan.slotNumber(input)
                    if slots[n].kind == .weak { named = [slots[n].step] } else if slots[n].kind == .all { named = slots[n].items }
                }
                for k in named where skip.contains(k) {
                    guard held.contains(k) else { return nil }
                    used.insert(k)
                }
            }
        }
        return (skip, used)
    }

    /// The bit of each shared step (the run takes them from their caches before any factory).
    private func sharedMask<Mask: StepMask>() -> Mask { sharedSteps.reduce(into: Mask()) { $0.insert($1.step) } }

    /// `stepsUnder` of creation steps `taken` that `Graph.claimCreations` found published: the steps the run
    /// does not make besides them, and those of them a step still made takes (a shared step, or one taken:
    /// held; traced, none: the build's event for it would come where that step asks). Nil: the resolve
    /// picks the plan for the state found (past a word of steps in a run whose masks are one word, too: not `wideMasks`).
    func stepsUnder(published taken: StepBits, _ locals: UnsafeMutablePointer<Borrowed<Registration>>, traced: Bool) -> (skip: StepBits, used: StepBits)? {
        guard steps.count <= UInt.bitWidth || wideMasks else { return nil }
        var held = StepBits()
        if !traced { held = sharedMask(); held.formUnion(taken) }
        // (A plan of any size: `StepBits`, the locals' binding reads no request here.)
        return stepsUnder(taken, held: held, Locals<ChildWideRequestSteps>(base: locals))
    }
}
