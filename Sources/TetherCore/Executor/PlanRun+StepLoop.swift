// The step loop every plan runs through (`execute`), its failures and a run up to a cut.

extension Plan {
    /// The one step loop: every run of a plan. Takes the shared steps from their caches and the
    /// container steps from the resolving container (or claims them there), then calls each made
    /// step's factory in creation order (`callFactory`), noting the step in `progress` (`Reentry`),
    /// then, in object mode, the completion calls. False: the plan declined (a shared or container
    /// step not there, before any factory ran). On a decline or a failure `made` holds nothing
    /// (`letGo`); on success what the mode's caller makes of it (a root, a block, the graph's).
    /// The loop of mode `M` and binding `B` is inlined in the run's entry, specialized, when `specializes`
    /// (the shapes runs take often); other modes', and `rare` (a plan that `isLarge`), go to `executeRare`.
    @inline(__always)
    func execute<B, M: RunMode>(_: M.Type, _ run: inout RunState, _ specs: ThreadSpecs?,
                                _ progress: UnsafeMutablePointer<PlanProgress>, _ locals: Locals<B>,
                                into graph: GraphRun? = nil, rare: Bool = false) -> Result<Bool, TetherError> {
        if rare || !Plan.specializes(M.self, B.self) { return executeRare(M.self, &run, specs, progress, locals, into: graph) }
        return stepLoop(M.self, &run, specs, progress, locals, into: graph)
    }

    /// Whether a run of mode `M` and binding `B` has its own specialized step loop: a run untraced, not up to a
    /// cut, not a resolver's request, of one-word masks (a creating run's too: a weak key's, each resolve). The
    /// rest (rare: a trace hook, a cycle, a completion callback's request, a plan that `wideMasks`) share one loop.
    @inline(__always)
    static func specializes<M: RunMode, B: StepBinding>(_: M.Type, _: B.Type) -> Bool {
        !M.traced && !M.cuts && !M.requests && !B.Mask.isWide
    }

    /// `stepLoop` unspecialized: one copy for every rare mode and binding (their tests read at run time), which
    /// keeps the library's size from growing with each mode's and binding's combinations.
    @inline(never) @_semantics("optimize.sil.specialize.generic.never")
    func executeRare<B, M: RunMode>(_: M.Type, _ run: inout RunState, _ specs: ThreadSpecs?,
                                    _ progress: UnsafeMutablePointer<PlanProgress>, _ locals: Locals<B>,
                                    into graph: GraphRun?) -> Result<Bool, TetherError> {
        stepLoop(M.self, &run, specs, progress, locals, into: graph)
    }

    @inline(__always)
    private func stepLoop<B, M: RunMode>(_: M.Type, _ run: inout RunState, _ specs: ThreadSpecs?,
                                         _ progress: UnsafeMutablePointer<PlanProgress>, _ locals: Locals<B>,
                                         into graph: GraphRun?) -> Result<Bool, TetherError> {
        let count = steps.count
        if M.destination != .graph { run.made.initialize(repeating: ReferenceWords<Instance>.none, count: count) }
        // A decline notes why, for `PlanStats` (the build that follows counts it). A value no container
        // on the way provides (`missing`, its step) fails the run where the build's walk reaches it.
        var missing = Int.max
        // Shared steps first asked for under container steps, not cached: decided once those are claimed (`takeShared`).
        var untaken = B.Mask(), absent = B.Mask()
        if hasShared && !takeShared(M.self, &run, locals, &missing, &untaken, &absent) {
            letGo(M.self, &run, count: count)
            // (A warm plan's shared root too: the resolve missed it, and the creation plan, if any, makes it.)
            progress.pointee.decline = .notCached
            return .success(false)
        }
        if B.readsRequest && hasContainer
            && !(M.destination == .graph ? claimContainerSteps(M.self, run, locals, graph.unsafelyUnwrapped, progress) : takeContainer(M.self, run, locals)) {
            letGo(M.self, &run, count: count)
            progress.pointee.decline = .containerHeld
            return .success(false)
        }
        // One a step still made asks for (a container step not cached over it): the plan for the caches' state makes it.
        if B.readsRequest && !untaken.isEmpty && !untakenUnderCached(untaken, locals) {
            if M.destination == .graph { graph.unsafelyUnwrapped.graph.borrow { $0.deferredFailure = nil; $0.dropContainerClaims() } }
            letGo(M.self, &run, count: count)
            progress.pointee.decline = .notCached
            return .success(false)
        }
        // A value none provides under container steps: missing where the build's walk reaches it (the first a step
        // still made asks for); one only container steps taken cached asked for, never asked for. (Past a container step's
        // failed claim: one the build asks for before that claim, whose error it then never reaches.)
        if B.readsRequest && !absent.isEmpty, let first = firstAbsent(absent, locals, graph: M.destination == .graph) {
            guard first >= 0 else {
                if M.destination == .graph { graph.unsafelyUnwrapped.graph.borrow { $0.deferredFailure = nil; $0.dropContainerClaims() } }
                letGo(M.self, &run, count: count)
                progress.pointee.decline = .notCached
                return .success(false)
            }
            missing = first
            if M.destination == .graph && claims(locals).failed != 0 { graph.unsafelyUnwrapped.graph.borrow { $0.deferredFailure = nil } }
        }
        // Read once: a plan without container steps checks no step for one.
        let claims = B.readsRequest && hasContainer ? self.claims(locals) : nil
        // The container steps taken cached: the steps only they asked for are not made (a build never reaches them).
        let cachedAll = claims != nil && allContainersCached(claims!)
        // The steps the run does not make, decided once (a bit each): the container steps taken cached, and the steps under them.
        var skip = claims == nil ? B.Mask() : containerSkips(claims!)
        // Creation steps the claims left under container steps found cached (`Graph.unclaimedUnder`): not made, the
        // build never asks for them; one of those not cached now (reset meanwhile) would be: the plan for the state now.
        if M.creates && graph.unsafelyUnwrapped.graph.borrow({ !$0.unclaimedUnder.isEmpty }),
           !B.Mask(graph.unsafelyUnwrapped.graph.borrow { $0.unclaimedUnder }).subtracting(skip).isEmpty {
            graph.unsafelyUnwrapped.graph.borrow { $0.deferredFailure = nil; $0.dropContainerClaims() }
            letGo(M.self, &run, count: count)
            progress.pointee.decline = .notCached
            return .success(false)
        }
        // Creation steps another thread published before their claims: taken, and the steps under them not made.
        if M.creates && graph.unsafelyUnwrapped.graph.borrow({ !$0.claimedSkip.isEmpty }) {
            skip.formUnion(B.Mask(graph.unsafelyUnwrapped.graph.borrow { $0.takeClaimedHits(into: run.instances) }))
        }
        // A value none provides (`missing`): the run stops before the first made step past it (`failMissing`).
        var end = madeSteps.count
        if B.readsRequest && missing != Int.max { end = madeSteps.firstIndex { $0 > missing } ?? end }
        // Read once: a replay into a graph without slots made per resolve checks no step for them.
        let makesSlots = M.destination == .graph && !slots.isEmpty
        progress.pointee.plan = .init(self)
        // The next check (`CreationCheck`: a creation or container step published meanwhile, `takePublished`), and the
        // last made step a creation step published meanwhile spares the run (graph mode).
        var check = 0, skipTo = -1
        // The made steps' order and the checks: another run's once a creation step is found published early (`PublishedVariant`).
        var order = madeSteps, checks = creationChecks
        if M.creates { progress.pointee.variant = -1 }
        // Traced: the steps before this one have told their events (`tellHits`); the container
        // steps taken cached, a build's order of hits for what they asked for first (`tracesSkips`).
        var told = 0
        let containersCached = M.traced && cachedAll
        // A shared step first asked for under them that a step outside takes too: the build finds it where
        // that one asks, out of step order; the hits are told in the build's walk then (`tellWalkedHits`).
        // (A creating run's: a creation step found published where its checks look is a leaf of the walk from then on, `tellPublishedInWalk`.)
        var walked: Plan.Walk? = nil, position = 0
        if containersCached && !tracesSkips() {
            walked = M.cuts ? nil : Plan.walk(Array(steps), Array(inputs), leaves: Array(containerSteps))
            if walked == nil {  // (a cut run, whose hits are told in step order, or past `maxSteps` deep)
                progress.pointee.plan = nil  // the build runs next: this thread constructs none of the plan's steps
                letGo(M.self, &run, count: count)
                progress.pointee.decline = .containerInput
                return .success(false)
            }
        }
        // The container steps claimed late, where the build asks for each (`claimLate`): none claimed yet.
        var late = M.destination == .graph && !M.requests && !lateClaims.isEmpty
            ? B.Mask(graph.unsafelyUnwrapped.graph.borrow { $0.lateContainerClaims }) : B.Mask()
        // A late claim's hit may make the run go on in the build's walk's order (`goOnInWalk`): not one up to a cut, nor
        // one stopping at a missing value (their ends are positions in the plan's order), which the build serves.
        if M.destination == .graph && (M.cuts || missing != Int.max) && !late.isEmpty && !lateHitsKeepOrder(reordering: false) {
            progress.pointee.plan = nil
            letGo(M.self, &run, count: count)
            progress.pointee.decline = .containerInput
            return .success(false)
        }
        // Gone on in that order (`claimLate`): `order` is the run's own, deallocated at its end. (Only a replay into a
        // graph claims late: the other modes' loops test nothing more.)
        var reordered = false
        defer {
            if M.destination == .graph && reordered {
                UnsafeMutableBufferPointer(mutating: order).deallocate()
                UnsafeMutableBufferPointer(mutating: checks).deallocate()
            }
        }
        // A run up to a cut: the made steps before it (in the order of a `PublishedVariant` gone on in, `cutPosition`).
        var cutAt = M.cuts ? madeSteps.firstIndex { $0 >= progress.pointee.cut } ?? madeSteps.count : Int.max
        for n in 0..<end {
            var i = madeSteps[n]
            // (A check at the cut over the step met, which may move it: `PlanProgress.cutMoves`, `takePublished`.)
            if M.cuts && n >= cutAt && !(M.creates && n == cutAt && progress.pointee.cutMoves && check < checks.count && checks[check].at == n) { break }
            if M.creates && n <= skipTo { continue }
            // A step this run claimed, published meanwhile (a creation step; a container step, not up to a cut nor a request's).
            if (M.creates || !M.cuts && !M.requests) && check < checks.count && checks[check].at == n {
                let spared = takePublished(M.self, &check, &checks, &order, n, run, locals, graph, told: &told, taken: &skip, progress,
                                           unclaimed: late, walked: &walked, position: &position, cut: &cutAt)
                if M.creates { skipTo = spared; if n <= skipTo { continue } }
                if M.cuts && n >= cutAt { break }
            }
            if M.creates || M.destination == .graph && reordered { i = order[n] }
            if M.destination == .graph && !late.isEmpty {
                // A container step claimed late whose claim failed: the build reports it where it asks for it.
                if let error = claimLate(M.self, at: i, &late, &skip, run, locals, graph.unsafelyUnwrapped, told: &told,
                                         walked: &walked, position: &position, n: n, order: &order, reordered: &reordered,
                                         checks: &checks, check: check) {
                    progress.pointee.plan = nil
                    releaseClaims(M.self, claims, locals, graph)
                    if graph.unsafelyUnwrapped.graph.borrow({ !$0.replayBuilt.isEmpty }) {
                        letGoBuilt(&run, count: count, graph.unsafelyUnwrapped.graph)
                    } else {
                        if (M.creates || reordered) && order.baseAddress != madeSteps.baseAddress { letGoMade(order, before: n, run) }
                        letGo(M.self, &run, count: count)
                    }
                    return .failure(error)
                }
                if reordered {
                    // Gone on in the walk's order from here: a check here is that walk's (`goingOn`), where the build reaches its step.
                    if check < checks.count && checks[check].at == n {
                        let spared = takePublished(M.self, &check, &checks, &order, n, run, locals, graph, told: &told, taken: &skip, progress,
                                                   unclaimed: late, walked: &walked, position: &position, cut: &cutAt)
                        if M.creates { skipTo = spared; if n <= skipTo { continue } }
                    }
                    i = order[n]
                }
            }
            // A resolver's gets built it first, or it was asked for only under one of those (`takeBuilt`).
            // (Not a resolver's request's: a replay further out, whose RESOLVER slot's factory asks, owns `replaySkips`.)
            if makesSlots && !M.requests && graph.unsafelyUnwrapped.graph.borrow({ $0.replaySkips.contains(i) }) { continue }
            // A resolver's request: the graph has it, or it was asked for only under one of those (`takeFromGraph`).
            // (Read at each step: a request made meanwhile may have built a later step's key, `takeBuiltAsked`.)
            if M.requests && graph.unsafelyUnwrapped.graph.borrow({ $0.requestSkips.contains(i) }) { continue }
            // A container step's claim failed: the build reports it where it asks for that step.
            if M.destination == .graph && claims != nil && claims!.failed != 0 && UInt(i) + 1 >= claims!.failed {
                progress.pointee.plan = nil
                // A resolver's request: what the steps made stays in the graph (`Graph.enterAsked`), as the build leaves it.
                if M.requests { progress.pointee.step = i; return .failure(graph.unsafelyUnwrapped.graph.borrow { $0.takeDeferredFailure() }) }
                releaseClaims(M.self, claims, locals, graph)
                // (Gone on in a `PublishedVariant`: last made first in its order, as a failure's.)
                if M.creates && order.baseAddress != madeSteps.baseAddress { letGoMade(order, before: n, run) }
                letGo(M.self, &run, count: count)
                return .failure(graph.unsafelyUnwrapped.graph.borrow { $0.takeDeferredFailure() })
            }
            if (B.Mask.isWide || !skip.isEmpty) && skip.contains(i) { continue }
            let isContainer = claims != nil && steps[i].isContainer
            progress.pointee.step = i
            if M.traced {
                if let walked { tellWalkedHits(M.self, walked.order, &position, to: i, run, locals) } else { tellHits(M.self, &told, to: i, run, locals, skipsUnder: containersCached) }
                run.tracer.unsafelyUnwrapped.borrow { t in registration(i, locals).borrow { t.emit(.factoryCall, $0.key) } }
            }
            do throws(TetherError) {
                if makesSlots && (steps[i].hasSlots || steps[i].bindsCells) {
                    let instance = try makeWithSlots(M.self, i, n, run, specs.unsafelyUnwrapped, locals, graph.unsafelyUnwrapped)
                    // (A request's words are its own: its gets append to `alive` only.)
                    if !M.requests && steps[i].opensFrames { run.made = graph.unsafelyUnwrapped.graph.borrow { $0.replayedWords.base }; run.pointers = run.made }
                    run.instances.set(i, instance)
                    if isContainer {
                        madeContainer(i, locals)
                        graph.unsafelyUnwrapped.graph.borrow { $0.madeContainerCell(registration(i, locals), in: self.lookup(of: i, locals.base) ?? graph.unsafelyUnwrapped.lookup) }
                    }
                } else if isContainer || M.destination == .instances || M.destination == .graph {
                    // A container step's is its own instance in every mode (its container caches it).
                    let instance = makeInstance(M.self, i, try callFactory(M.self, i, n, run, locals), run, specs.unsafelyUnwrapped, locals)
                    run.instances.set(i, instance)
                    if isContainer {
                        madeContainer(i, locals)
                        if M.destination == .graph {
                            graph.unsafelyUnwrapped.graph.borrow { $0.madeContainerCell(registration(i, locals), in: self.lookup(of: i, locals.base) ?? graph.unsafelyUnwrapped.lookup) }
                        }
                        if M.destination == .block { run.pointers[i] = UInt(bitPattern: instance.borrow { $0.pointer }) }
                    }
                } else if M.destination == .block {
                    run.pointers[i] = UInt(bitPattern: try callFactory(M.self, i, n, run, locals))
                } else {
                    run.objects.set(i, Ref(opaque: try callFactory(M.self, i, n, run, locals)))
                }
                if M.creates && steps[i].creates {
                    // Its cell now holds a made instance: a nested resolve asking for it is refused as unfinished.
                    graph.unsafelyUnwrapped.graph.borrow { $0.madeCreation(registration(i, locals)) }
                }
                if M.traced { tellMade(i, &told, run, locals) }
            } catch {
                if M.traced { run.tracer.unsafelyUnwrapped.borrow { t in registration(i, locals).borrow { t.emit(.factoryReturn, $0.key, status: error.code) } } }
                progress.pointee.plan = nil  // before anything is let go of (destructors may resolve)
                if M.requests { return .failure(error) }  // what it made stays in the graph (`Graph.enterAsked`)
                if M.destination == .block { recordsAsInstances(before: i, &run, specs.unsafelyUnwrapped, locals) }
                // (Creations pended before a RESOLVER slot's factory, `openFrames`, go in their place, not after.)
                releaseClaims(M.self, claims, locals, graph)
                if makesSlots && graph.unsafelyUnwrapped.graph.borrow({ !$0.replayBuilt.isEmpty }) {
                    // (Gone on in a `PublishedVariant`: last made first in its order, as `letGoMade`.)
                    letGoBuilt(&run, count: count, graph.unsafelyUnwrapped.graph,
                               order: (M.creates || reordered) && order.baseAddress != madeSteps.baseAddress ? order : nil)
                } else {
                    if (M.creates || reordered) && order.baseAddress != madeSteps.baseAddress { letGoMade(order, before: n, run) }
                    letGo(M.self, &run, count: count)
                }
                return .failure(error)
            }
        }
        progress.pointee.plan = nil
        // (A cut moved past the end, `cutMoves`: the run made every step, as one not cut.)
        let cuts = M.cuts && cutAt != Int.max
        // (A cut run stopped where the build meets its cycle: a missing value before that fails first.)
        let missed = B.readsRequest && missing != Int.max && (!cuts || missing < progress.pointee.cut)
        // (A run up to a cut: the build asked for nothing from it on, `Plan.meeting`. A missing value: nothing past it.)
        if M.traced {
            // (A cut run's walk is a `PublishedVariant`'s, `tellPublishedInWalk`: the cut where it asks for the step met.)
            if let walked { tellWalkedHits(M.self, walked.order, &position, to: missed ? missing : cuts ? walked.cut(progress.pointee.met) : nil, run, locals) }
            else { tellHits(M.self, &told, to: missed ? missing : cuts ? min(progress.pointee.cut, count) : count, run, locals, skipsUnder: containersCached) }
        }
        if missed {
            if !M.requests { releaseClaims(M.self, claims, locals, graph) }
            return failMissing(M.self, &run, missing, before: end < madeSteps.count ? madeSteps[end] : count, specs, progress, locals)
        }
        if cuts {
            // A resolver's request: what the steps made stays in the graph (`Graph.enterAsked`), as the build leaves it.
            if M.requests { progress.pointee.cut = -1; return .success(false) }
            // What a resolver's gets built goes in its place among the steps (`letGoBuilt`), before the rest.
            releaseClaims(M.self, claims, locals, graph)
            // (Gone on in a `PublishedVariant`: last made first in its order, a resolver's gets in their place, as a failure's.)
            let variantOrder = M.creates && order.baseAddress != madeSteps.baseAddress
            if makesSlots && graph.unsafelyUnwrapped.graph.borrow({ !$0.replayBuilt.isEmpty }) {
                letGoBuilt(&run, count: count, graph.unsafelyUnwrapped.graph, order: variantOrder ? order : nil)
            } else if variantOrder {
                letGoMade(order, before: min(cutAt, end), run)
            }
            // A container step the build asks for before the one it meets: its claim's failure comes first.
            if claims != nil && claims!.failed != 0 {
                if M.requests { progress.pointee.step = progress.pointee.cut; return .failure(graph.unsafelyUnwrapped.graph.borrow { $0.takeDeferredFailure() }) }
                letGo(M.self, &run, count: count)
                return .failure(graph.unsafelyUnwrapped.graph.borrow { $0.takeDeferredFailure() })
            }
            return cutReached(M.self, &run, progress, count: count)
        }
        if fails {
            // A resolver's request: what the steps made stays in the graph (`Graph.enterAsked`), as the build leaves it.
            if M.requests { progress.pointee.step = count; return .failure(failure.unsafelyUnwrapped) }
            releaseClaims(M.self, claims, locals, graph)
            if makesSlots && graph.unsafelyUnwrapped.graph.borrow({ !$0.replayBuilt.isEmpty }) { letGoBuilt(&run, count: count, graph.unsafelyUnwrapped.graph) }
            return fail(M.self, &run, count: count)
        }
        if M.destination == .objects, !completionCalls.isEmpty, let error = runCompletionCalls(run) {
            releaseClaims(M.self, claims, locals, graph)
            letGo(M.self, &run, count: count)
            return .failure(error)
        }
        return .success(true)
    }

    /// Value step `missing` no container on the way provides, reached after the made steps before `before`:
    /// what they made let go of, and the build's error: its registration's factory (`DeclaredValueFactory`)
    /// fails where the build's walk reaches it, as a made step's (`factoryFailure`).
    @inline(never)
    func failMissing<B, M: RunMode>(_: M.Type, _ run: inout RunState, _ missing: Int, before: Int, _ specs: ThreadSpecs?,
                                            _ progress: UnsafeMutablePointer<PlanProgress>, _ locals: Locals<B>) -> Result<Bool, TetherError> {
        progress.pointee.plan = nil
        if M.destination == .block { recordsAsInstances(before: before, &run, specs.unsafelyUnwrapped, locals) }
        let words = run.words
        let made = registration(missing, locals).borrow { r -> Result<UnsafeMutableRawPointer, CallbackFailure> in
            do throws(CallbackFailure) { return .success(try r.factoryReference.borrow { f throws(CallbackFailure) in try f.make(words, count: 0) }) }
            catch { return .failure(error) }
        }
        guard case .failure(let failure) = made else { preconditionFailure("a declared value's factory makes nothing") }
        let error = factoryFailure(missing, failure, locals)
        // Traced: its factory's call and return, as the build's frame (`Graph.construct`), before anything is let go of.
        if M.traced {
            let key = registration(missing, locals).borrow { $0.key }
            run.tracer.unsafelyUnwrapped.borrow { $0.emit(.factoryCall, key); $0.emit(.factoryReturn, key, status: error.code) }
        }
        // A resolver's request: what the steps before it made stays in the graph (`Graph.enterAsked`), as the build leaves it.
        if M.requests { progress.pointee.step = before } else { letGo(M.self, &run, count: steps.count) }
        return .failure(error)
    }

    /// A plan that `fails`, after its steps: what they made let go of, as the build's abort does, and the build's error.
    @inline(never)
    func fail<M: RunMode>(_: M.Type, _ run: inout RunState, count: Int) -> Result<Bool, TetherError> {
        letGo(M.self, &run, count: count)
        return .failure(failure.unsafelyUnwrapped)
    }

    /// A run up to its cut (`CutIntoGraph`), after the steps before it: what they made let go of, as the
    /// build's abort does; `PlanProgress.cut` -1 says the cut was reached (the caller reports the build's error).
    @inline(never)
    func cutReached<M: RunMode>(_: M.Type, _ run: inout RunState, _ progress: UnsafeMutablePointer<PlanProgress>,
                                        count: Int) -> Result<Bool, TetherError> {
        letGo(M.self, &run, count: count)
        progress.pointee.cut = -1
        return .success(false)
    }
}
