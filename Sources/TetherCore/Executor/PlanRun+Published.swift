// Steps a run takes published rather than makes, and what a traced run tells the graph.

extension Plan {
    /// The checks due at made step `n` (from `check` on, outer first): "taken published meanwhile", one rule. A step
    /// this run claimed whose instance a resolve nested in an earlier factory published under that claim takes that
    /// one, its own dependencies not made, as the build finds it cached where its walk asks for it. Returns the last
    /// made step spared (-1: none); `check` moves past the checks it covers. Out of line: a nested resolve of a
    /// claimed key is rare.
    /// A creation step: from its registration's cache. A container step (`CreationCheck.container`; not in a run up to
    /// a cut nor a request's, which claim none of their own): from the resolving container's, one instance per
    /// container, its claim ended; it and the steps under it go in `taken` (in a variant's run the same steps, `publishedVariants`).
    /// Traced (`RunState.tracer`): the build finds it cached where its walk asks for it, after the
    /// steps before its own dependencies (`told`: what was told; its spared dependencies tell nothing).
    /// A weak one no resolve published that the build's walk reaches there (`CreationCheck.reachedThere`):
    /// the object a binding still holds, revived (`Graph.reviveCreation`: no factory, no callbacks), its own
    /// dependencies spared alike.
    /// An early check (`CreationCheck.variant`) found published: the run goes on in that `PublishedVariant`'s
    /// `order` and `checks` (not in a request's run, which skips early checks, nor in one up to a cut unless that
    /// variant makes the step it meets: then up to where it asks for it, `cut`, `cutPosition`; a traced one
    /// telling its hits in the build's walk, `tellPublishedInWalk`), what it does not make added to `taken` (the
    /// steps the run does not make).
    @inline(never)
    func takePublished<B, M: RunMode>(_: M.Type, _ check: inout Int, _ checks: inout UnsafeBufferPointer<CreationCheck>,
                                              _ order: inout UnsafeBufferPointer<Int>, _ n: Int, _ run: RunState, _ locals: Locals<B>,
                                              _ graph: GraphRun?, told: inout Int, taken: inout B.Mask,
                                              _ progress: UnsafeMutablePointer<PlanProgress>, unclaimed: B.Mask,
                                              walked: inout Plan.Walk?, position: inout Int, cut: inout Int) -> Int {
        // (A traced run tells its hits in the build's walk once it switches, `tellPublishedInWalk`: not one over container steps.
        // One up to a cut only into a variant that makes the step it meets, `cutPosition`; not one over container steps,
        // whose claims stop at the cut, `neverAsked`.)
        let switches = !M.requests && (!M.traced && !M.cuts || !hasContainer)
        // One a resolver's get built first the run holds already (`takeBuilt`, a reference of its own): taking
        // the published one too would overwrite that word, a reference never let go of (the instance leaked).
        // (Not a resolver's request's: a replay further out, whose RESOLVER slot's factory asks, owns `replaySkips`.)
        let built = M.destination == .graph && !slots.isEmpty && !M.requests
        var skipTo = -1
        // (Up to a cut: none at or past it, which the run does not reach; at it, one over the step met where the cut moves.)
        while check < checks.count && checks[check].at <= max(n, skipTo)
                && (checks[check].at < cut || M.cuts && checks[check].at == cut && movesCut(checks[check], progress)) {
            let found = checks[check]
            check += 1
            // (A cut moved past the end, `movesCut`: as a run not cut, the step met never asked for.)
            let cuts = M.cuts && cut != .max
            let cutThere = cuts && found.variant >= 0 ? cutPosition(found.variant, met: progress.pointee.met) : nil
            guard found.made > skipTo, found.variant < 0 || switches && (!cuts || cutThere != nil),
                  found.container < 0 || !M.cuts && !M.requests else { continue }
            guard !built || !graph.unsafelyUnwrapped.graph.borrow({ $0.replaySkips.contains(found.step) }) else { continue }
            // (A creating request's key the graph has, or a step only such keys asked for, `Graph.requestSkips`, read as the
            // step loop reads it, a plan of any size: neither taken published nor revived.)
            guard !M.requests || !graph.unsafelyUnwrapped.graph.borrow({ $0.requestSkips.contains(found.step) }) else { continue }
            // (Not a container step claimed late and not claimed yet: `claimLate` takes one published before its claim.)
            guard found.container < 0 || !unclaimed.contains(found.step) else { continue }
            // (Not one taken at its claim, or under one: `Graph.takeClaimedHits`, a container step taken cached. In a
            // variant's order, the steps it asked for first there are not made either, as the build finding it cached makes none.)
            guard !taken.contains(found.step) else {
                if order.baseAddress != madeSteps.baseAddress { skipTo = found.made }
                continue
            }
            let registration = registration(found.step, locals)
            var revived = false
            let hit: Ref<Instance>
            if found.container >= 0 {
                guard let published = takeContainerPublished(M.self, found, run, locals, graph) else { continue }
                hit = published
            } else {
                var cached = registration.borrow { $0.cachedRetained(found.scope) }
                // (An early check, `variant`, is where the build's walk reaches it too: revived, the run goes on in the variant.)
                revived = cached == nil && found.scope.isKeptWeakly && (found.reachedThere || found.variant >= 0)
                if revived {  // (a local step's spec: the resolving child's registration's)
                    cached = graph.unsafelyUnwrapped.graph.borrow {
                        $0.reviveCreation(registration, steps[found.step].spec ?? registration.borrow { $0.specReference })
                    }
                }
                guard let cached else { continue }
                hit = cached
            }
            run.instances.set(found.step, hit)
            if found.variant >= 0 {
                let variant = publishedVariants[found.variant]
                // (A revived one tells nothing: `Graph.existing` hands it out without a hit.)
                if let tracer = run.tracer {
                    // (Told in step order so far: the plain walk's, which `Plan.publishedVariants` requires.)
                    if walked == nil { (walked, position) = (Plan.walk(Array(steps), Array(inputs), leaves: []), told) }
                    if walked != nil { tellPublishedInWalk(M.self, found.step, &walked!, &position, run, locals) }
                    if !revived { tracer.borrow { t in hit.borrow { h in t.emit(.cacheHit, h.key, h.pointer) } } }
                }
                (order, checks, check, skipTo) = (variant.order, variant.checks, 0, -1)
                if cuts { cut = cutThere.unsafelyUnwrapped }
                progress.pointee.variant = found.variant
                taken.formUnion(B.Mask(word: variant.skip))  // (a plan of at most 64 steps: one word)
                continue
            }
            // Over the step a cut run meets, where the build's walk reaches it: the build never asks for that one then, and
            // meets the next one it asks for past it, if any (since branch revivev: where the plan meets other keys too).
            if M.cuts && movesCut(found, progress) { cut = movedCut(M.self, past: found.step, graph, progress) }
            // Its dependencies' steps: those right before it that descend from it (post-order).
            let first = firstAsked(found.step)
            if found.container >= 0 {
                // (Checked at the step itself, a later step taking one of its dependencies: those are made. In a variant's order,
                // those it asked for first in that walk, `PublishedVariant.movesUnderContainer`.)
                if order.baseAddress != madeSteps.baseAddress {
                    for p in found.at...found.made { taken.insert(order[p]) }
                } else {
                    for j in (found.at == found.made ? found.step : first)...found.step { taken.insert(j) }
                }
            } else {
                skipTo = found.made
            }
            if let tracer = run.tracer {
                if walked != nil {
                    tellPublishedInWalk(M.self, found.step, &walked!, &position, run, locals)
                } else {
                    tellHits(M.self, &told, to: first, run, locals)
                    told = found.step + 1
                }
                // (A revived one tells nothing: `Graph.existing` hands it out without a hit.)
                if !revived { tracer.borrow { t in hit.borrow { h in t.emit(.cacheHit, h.key, h.pointer) } } }
            }
        }
        return skipTo
    }

    /// Whether creation check `found`, found (revived, published), moves a cut run's cut past its end: the plan meets only
    /// `met` further out (`PlanProgress.cutMoves`) and `found` is where the build's walk reaches its step (`reachedThere`:
    /// no later step takes one of its own dependencies), `met` one of those: the build takes it there and never asks for `met`.
    /// (Not in a `PublishedVariant`'s order, whose askers are another walk's.)
    private func movesCut(_ found: CreationCheck, _ progress: UnsafeMutablePointer<PlanProgress>) -> Bool {
        let met = progress.pointee.met
        return progress.pointee.cutMoves && progress.pointee.variant < 0 && found.variant < 0 && found.container < 0 && found.reachedThere
            && met >= 0 && met < steps.count && descends(met, from: found.step)
    }

    /// The position in `madeSteps` of a cut run's cut moved past creation step `revived` (`movesCut`): where the build asks for
    /// the next step it meets (`nextMeeting`; `PlanProgress.met` and `cut` that step's), `.max` if none: past the run's end.
    /// (A request's meets only the one it moved past, `Graph.askedCutMoves`.) Out of line: rare.
    @inline(never)
    private func movedCut<M: RunMode>(_: M.Type, past revived: Int, _ graph: GraphRun?, _ progress: UnsafeMutablePointer<PlanProgress>) -> Int {
        guard !M.requests, let next = graph.unsafelyUnwrapped.graph.borrow({ nextMeeting(past: revived, $0.outer, progress.pointee.locals) })
        else { return .max }
        (progress.pointee.cut, progress.pointee.met) = (next.cut, next.step)
        return madeSteps.firstIndex { $0 >= next.cut } ?? madeSteps.count
    }

    /// `takePublished`'s container step (`found`): the instance a resolve nested in an earlier factory published in
    /// the resolving container's cache under this run's claim, retained, the claim ended (a graph's is its cell, let go
    /// of with the graph's); nil: none there.
    private func takeContainerPublished<B, M: RunMode>(_: M.Type, _ found: CreationCheck, _ run: RunState, _ locals: Locals<B>,
                                                       _ graph: GraphRun?) -> Ref<Instance>? {
        let c = found.step
        let request = M.destination == .graph ? nil : locals.request.unsafelyUnwrapped.pointee
        let container = request?.resolving ?? self.lookup(of: c, locals.base) ?? graph.unsafelyUnwrapped.lookup
        guard let hit = registration(c, locals).borrow({ r in container.borrow { $0.retainedScoped(of: r) } }) else { return nil }
        if M.destination == .block { run.pointers[c] = UInt(bitPattern: hit.borrow { $0.pointer }) }
        let claims = self.claims(locals)
        B.Mask.set(c, in: claims.kind(0))
        if let request {
            B.Mask.clear(found.container, in: claims.kind(1))
            registration(c, locals).borrow { r in container.borrow { $0.endScopedClaim(r, thread: request.thread) } }
        }
        return hit
    }

    /// Traced, the container steps taken cached: whether the build asks for nothing first asked
    /// for under them except where the plan's steps have it (a shared step one outside takes too
    /// the build finds where that one asks, out of the plan's order: `tellWalkedHits` tells them).
    @inline(never)
    func tracesSkips() -> Bool {
        for k in steps.indices where !steps[k].isShared && !steps[k].isContainer && !steps[k].underContainer {
            for input in inputs[steps[k].firstInput ..< steps[k].firstInput + steps[k].slotCount] where Plan.isStep(input) {
                if steps[input].askedUnderContainer { return false }
            }
        }
        return true
    }

    /// Whether a container step asked for step `j` (its factory or one of its dependencies').
    private func descendsFromContainer(_ j: Int) -> Bool {
        var k = steps[j].parent
        while k >= 0 && !steps[k].isContainer { k = steps[k].parent }
        return k >= 0
    }

    /// Traced: a cache hit for each step from `told` up to `end` the run took and did not make (a
    /// shared, value or cached container step), in step order: where the build finds each in a
    /// cache (`Graph.existing`), between the factories of the steps around it.
    /// `skipsUnder`: the container steps were taken cached, so what was first asked for under
    /// them was not (`Step.askedUnderContainer`, a container step under another).
    func tellHits<M: RunMode, B>(_: M.Type, _ told: inout Int, to end: Int, _ run: RunState, _ locals: Locals<B>, skipsUnder: Bool = false) {
        let made = run.instances
        while told < end {
            let j = told
            told += 1
            guard !made.isNone(j) else { continue }  // spared: not asked for
            // A request's (a replay's whose resolvers' gets built some, `asking`): a key the graph has (taken from it, or
            // shared and keyed there: the build's `existing` finds it in the table), or a step only such a key asked for: no hit.
            if let graph = run.asking, graph.borrow({ g in (M.requests ? g.requestSkips : g.replaySkips).contains(j)
                || steps[j].isShared && g.builtIndex(registration(j, locals)) != nil }) { continue }
            if skipsUnder && (steps[j].askedUnderContainer || steps[j].isContainer && descendsFromContainer(j)) { continue }
            let key = registration(j, locals).borrow { $0.key }
            run.tracer.unsafelyUnwrapped.borrow { $0.emit(.cacheHit, key, made[j].borrow { $0.pointer }) }
        }
    }

    /// Traced, the container steps taken cached, a step outside them taking a shared step first asked for
    /// under them (`tracesSkips` false): the hits before step `end`'s factory (nil: all the rest), in the
    /// build's walk then (`Plan.walk`, the container steps leaves: what only they asked for is not in it),
    /// from `position` in it. The made steps are in that walk's order too (none outside takes one under them,
    /// `Recorder.markUnderContainer`), each told by `tellMade`.
    func tellWalkedHits<M: RunMode, B>(_: M.Type, _ walk: [Int], _ position: inout Int, to end: Int?, _ run: RunState, _ locals: Locals<B>) {
        while position < walk.count {
            let j = walk[position]
            position += 1
            if j == end { return }
            guard steps[j].isShared || steps[j].isContainer else { continue }
            var first = j
            tellHits(M.self, &first, to: j + 1, run, locals)
        }
    }

    /// Traced in the build's walk (`tellWalkedHits`), creation step `c` found published where the run checks (`takePublished`):
    /// the build takes it where it asks for it, descending no further, so the rest of the walk is the one with `c` a leaf too
    /// (what only it asked for is not in it), after what was told; the hits before `c` told, its own by the caller.
    func tellPublishedInWalk<M: RunMode, B>(_: M.Type, _ c: Int, _ walk: inout Plan.Walk, _ position: inout Int, _ run: RunState, _ locals: Locals<B>) {
        // (No deeper than the walk it replaces: never nil.)
        guard !walk.leaves.contains(c), let again = Plan.walk(Array(steps), Array(inputs), leaves: walk.leaves + [c]) else { return }
        let told = walk.order[..<position]
        let seen = Set(told)
        guard !seen.contains(c) else { return }  // (reached already: the hits past it told, `tellWalkedHits`)
        walk = Plan.Walk(order: Array(told) + again.order.filter { !seen.contains($0) }, parent: again.parent, leaves: again.leaves)
        tellWalkedHits(M.self, walk.order, &position, to: c, run, locals)
    }

    /// Traced: step `i` made (`Tracer.constructed`: its return, its edges, what its WEAK slots hold).
    func tellMade<B>(_ i: Int, _ told: inout Int, _ run: RunState, _ locals: Locals<B>) {
        var weak: [Instance] = []
        if steps[i].hasSlots {
            let first = steps[i].firstInput
            for s in 0..<registration(i, locals).borrow({ $0.params.count }) where Plan.isSlot(inputs[first + s]) {
                let n = Plan.slotNumber(inputs[first + s])
                if slots[n].kind == .weak { weak.append(run.instances[slots[n].step].object) }
            }
        }
        let key = registration(i, locals).borrow { $0.key }
        run.tracer.unsafelyUnwrapped.borrow { $0.constructed(key, run.instances[i].object, weak: weak) }
        told = i + 1
    }
}
