// A plan run into a graph (`Graph` replays it): the entry points per mode and binding, and
// what the graph enters of the steps made.

extension Plan {
    /// Makes every step's instance into `made` (`graph`'s `alive`, a word per step holding
    /// nothing yet), in the order `Graph` would append them to it, then enters each step in
    /// `graph` as its build would have (`Graph.enterReplayed`: its table, its completion queue).
    /// False: the plan declined (a shared dependency is not cached) before any factory ran.
    /// Unless true, `made` holds nothing: the run let go of what it took or made (`letGo`).
    /// `progress`: the thread's, where the step whose factory runs is noted (`Reentry`).
    @inline(__always)
    func replay(into graph: Graph, _ made: ReferenceWords<Instance>, _ specs: ThreadSpecs,
                _ progress: UnsafeMutablePointer<PlanProgress>, _ arguments: UnsafeBufferPointer<Argument>,
                lookup: Container) -> Result<Bool, TetherError> {
        replay(IntoGraph.self, into: graph, made, specs, progress, arguments, lookup: lookup)
    }

    /// `replay(into:)` of a plan with creation steps (`CreatingIntoGraph`; the graph holds their
    /// cells, `Graph.claimCreations`). Out of line: the warm replays keep their code.
    @inline(never)
    func replayCreating(into graph: Graph, _ made: ReferenceWords<Instance>, _ specs: ThreadSpecs,
                        _ progress: UnsafeMutablePointer<PlanProgress>, _ arguments: UnsafeBufferPointer<Argument>,
                        lookup: Container) -> Result<Bool, TetherError> {
        replay(CreatingIntoGraph.self, into: graph, made, specs, progress, arguments, lookup: lookup)
    }

    /// `replay(into:)` while `graph` tells a trace hook (`Graph.tracer`): modes `TracedIntoGraph` and
    /// `TracedCreatingIntoGraph`. Out of line: the untraced replays keep their code.
    @inline(never)
    func replayTraced(into graph: Graph, creating: Bool, _ made: ReferenceWords<Instance>, _ specs: ThreadSpecs,
                      _ progress: UnsafeMutablePointer<PlanProgress>, _ arguments: UnsafeBufferPointer<Argument>,
                      lookup: Container) -> Result<Bool, TetherError> {
        if creating { return replay(TracedCreatingIntoGraph.self, into: graph, made, specs, progress, arguments, lookup: lookup) }
        return replay(TracedIntoGraph.self, into: graph, made, specs, progress, arguments, lookup: lookup)
    }

    /// `replay(into:)` of a resolve nested while this thread constructs step `meeting(_:_:)`'s registration
    /// further out: the made steps before `cut` only (those a build makes before it asks for that
    /// one), then what they made let go of. False, with `PlanProgress.cut` -1: the cut was reached (the
    /// caller reports the cycle); else as `replay(into:)` (a decline, a factory's failure). Out of line: rare.
    @inline(never)
    func replayCut(into graph: Graph, _ made: ReferenceWords<Instance>, _ specs: ThreadSpecs,
                   _ progress: UnsafeMutablePointer<PlanProgress>, _ arguments: UnsafeBufferPointer<Argument>,
                   lookup: Container, cut: Int, met: Int, creates: Bool) -> Result<Bool, TetherError> {
        (progress.pointee.cut, progress.pointee.met) = (cut, met)
        if graph.tracer != nil {
            if creates { return replay(TracedCreatingCutIntoGraph.self, into: graph, made, specs, progress, arguments, lookup: lookup) }
            return replay(TracedCutIntoGraph.self, into: graph, made, specs, progress, arguments, lookup: lookup)
        }
        if creates { return replay(CreatingCutIntoGraph.self, into: graph, made, specs, progress, arguments, lookup: lookup) }
        return replay(CutIntoGraph.self, into: graph, made, specs, progress, arguments, lookup: lookup)
    }

    /// `replay(into:)` of a completion callback's request (`Graph.runAsked`: a plan without local, container,
    /// value steps or RESOLVER slots; its other slots made per resolve as a replay's, `makeSlots`): into `made`,
    /// words of the graph's apart from its `alive` (which a request of the graph made meanwhile may grow), entered
    /// by the graph (`Graph.enterAsked`); on a factory's failure `made` keeps what the run made before it (the
    /// build leaves that in the graph) and `progress.step` names the step that failed; a failing plan's (`fails`)
    /// keeps every step, `progress.step` past the last. Out of line: rare.
    /// `creating`: a plan with creation steps (`CreatingRequestIntoGraph`), whose cells the graph claimed as its
    /// build's walk reaches each (`Graph.claimAsked`): each made one noted in its cell, one published meanwhile taken.
    @inline(never)
    func replayAsked(into graph: Graph, _ made: ReferenceWords<Instance>, _ specs: ThreadSpecs,
                     _ progress: UnsafeMutablePointer<PlanProgress>, lookup: Container, creating: Bool = false) -> Result<Bool, TetherError> {
        if graph.tracer != nil { return replayAskedTraced(into: graph, made, specs, progress, lookup: lookup, creating: creating) }
        if creating { return replayAsked(CreatingRequestIntoGraph.self, into: graph, made, specs, progress, lookup: lookup) }
        return replayAsked(RequestIntoGraph.self, into: graph, made, specs, progress, lookup: lookup)
    }

    /// A request's run in mode `M`: a child's plan (`hasLocals`) takes the resolving child's registrations at
    /// its local steps (`ChildSteps`, as `replayChild`), out of line.
    @inline(__always)
    func replayAsked<M: RunMode>(_: M.Type, into graph: Graph, _ made: ReferenceWords<Instance>, _ specs: ThreadSpecs,
                                         _ progress: UnsafeMutablePointer<PlanProgress>, lookup: Container) -> Result<Bool, TetherError> {
        // Container or value steps: the run reads the request (`RequestRun`), the graph claims its container steps.
        if readsRequest { return replayRequest(M.self, into: graph, made, specs, progress, .init(start: nil, count: 0), lookup: lookup) }
        if hasLocals { return replayAskedChild(M.self, into: graph, made, specs, progress, lookup: lookup) }
        return replay(M.self, into: graph, made, specs, progress, Locals<OwnSteps>(base: progress.pointee.locals), lookup: lookup)
    }

    @inline(never) @_semantics("optimize.sil.specialize.generic.never")  // rare: one copy (`executeRare`)
    private func replayAskedChild<M: RunMode>(_: M.Type, into graph: Graph, _ made: ReferenceWords<Instance>, _ specs: ThreadSpecs,
                                              _ progress: UnsafeMutablePointer<PlanProgress>, lookup: Container) -> Result<Bool, TetherError> {
        replay(M.self, into: graph, made, specs, progress, Locals<ChildSteps>(base: progress.pointee.locals), lookup: lookup)
    }

    /// `replayAsked` while `graph` tells a trace hook (`Graph.tracer`): modes `TracedRequestIntoGraph` and
    /// `TracedCreatingRequestIntoGraph`, the build's events where its walk inside the request has them (no hit
    /// for a key the graph has, `tellHits`). Out of line: the untraced requests keep their code.
    @inline(never)
    func replayAskedTraced(into graph: Graph, _ made: ReferenceWords<Instance>, _ specs: ThreadSpecs,
                                   _ progress: UnsafeMutablePointer<PlanProgress>, lookup: Container, creating: Bool) -> Result<Bool, TetherError> {
        if creating { return replayAsked(TracedCreatingRequestIntoGraph.self, into: graph, made, specs, progress, lookup: lookup) }
        return replayAsked(TracedRequestIntoGraph.self, into: graph, made, specs, progress, lookup: lookup)
    }

    /// `replayAsked` of a request while the thread constructs step `met`'s registration further out (`Graph.runAsked`,
    /// `meeting`): the made steps before `cut` only (those the build makes before it asks for that one), kept in
    /// `made` as a failed request's (`RequestCutIntoGraph`); `PlanProgress.cut` -1 when the cut was reached (the
    /// graph reports the cycle). Out of line: rare.
    @inline(never)
    func replayAskedCut(into graph: Graph, _ made: ReferenceWords<Instance>, _ specs: ThreadSpecs,
                        _ progress: UnsafeMutablePointer<PlanProgress>, lookup: Container, cut: Int, met: Int,
                        creating: Bool = false) -> Result<Bool, TetherError> {
        (progress.pointee.cut, progress.pointee.met) = (cut, met)
        // (A creation plan's cells claimed up to the cut, `Graph.claimAsked`.)
        if creating && graph.tracer != nil {
            return replayAsked(TracedCreatingRequestCutIntoGraph.self, into: graph, made, specs, progress, lookup: lookup)
        }
        if creating { return replayAsked(CreatingRequestCutIntoGraph.self, into: graph, made, specs, progress, lookup: lookup) }
        if graph.tracer != nil { return replayAsked(TracedRequestCutIntoGraph.self, into: graph, made, specs, progress, lookup: lookup) }
        return replayAsked(RequestCutIntoGraph.self, into: graph, made, specs, progress, lookup: lookup)
    }

    @inline(__always)
    func replay<M: RunMode>(_ mode: M.Type, into graph: Graph, _ made: ReferenceWords<Instance>, _ specs: ThreadSpecs,
                                    _ progress: UnsafeMutablePointer<PlanProgress>, _ arguments: UnsafeBufferPointer<Argument>,
                                    lookup: Container) -> Result<Bool, TetherError> {
        if readsRequest { return replayRequest(M.self, into: graph, made, specs, progress, arguments, lookup: lookup) }
        if hasLocals { return replayChild(M.self, into: graph, made, specs, progress, arguments, lookup: lookup) }
        return replay(M.self, into: graph, made, specs, progress,
                      Locals<OwnSteps>(base: progress.pointee.locals, arguments: arguments.baseAddress), lookup: lookup)
    }

    /// `replay(into:)` of a child's plan (completion callbacks or slots made per resolve): its local
    /// steps take the resolving child's registrations (`fits` wrote them), and enter the graph under
    /// them. Out of line: the owner's replays keep their code.
    @inline(never)
    private func replayChild<M: RunMode>(_ mode: M.Type, into graph: Graph, _ made: ReferenceWords<Instance>, _ specs: ThreadSpecs,
                                         _ progress: UnsafeMutablePointer<PlanProgress>, _ arguments: UnsafeBufferPointer<Argument>,
                                         lookup: Container) -> Result<Bool, TetherError> {
        replay(M.self, into: graph, made, specs, progress,
               Locals<ChildSteps>(base: progress.pointee.locals, arguments: arguments.baseAddress), lookup: lookup)
    }

    /// `replay(into:)` of a plan that `readsRequest` (container or value steps, with completion callbacks):
    /// its `RequestRun` reads the resolving container (`lookup`); the graph claims the container steps'
    /// cells as its build does (`claimContainerSteps`) and publishes those made with the graph, after the
    /// callbacks (`enterRequest`). Out of line: the owner's replays keep their code.
    @inline(never)
    func replayRequest<M: RunMode>(_ mode: M.Type, into graph: Graph, _ made: ReferenceWords<Instance>, _ specs: ThreadSpecs,
                                           _ progress: UnsafeMutablePointer<PlanProgress>, _ arguments: UnsafeBufferPointer<Argument>,
                                           lookup: Container) -> Result<Bool, TetherError> {
        if wideMasks { return replayWideRequest(M.self, into: graph, made, specs, progress, arguments, lookup: lookup) }
        var request = RequestRun(resolving: .init(lookup), thread: graph.thread, builtSince: .max)  // the graph publishes (its own)
        return withUnsafeMutablePointer(to: &request) { request in
            if hasLocals {
                return replay(M.self, into: graph, made, specs, progress,
                              Locals<ChildRequestSteps>(base: progress.pointee.locals, arguments: arguments.baseAddress, request: request), lookup: lookup)
            }
            return replay(M.self, into: graph, made, specs, progress,
                          Locals<OwnRequestSteps>(base: progress.pointee.locals, arguments: arguments.baseAddress, request: request), lookup: lookup)
        }
    }

    /// `replayRequest` of a plan that `wideMasks`: its claims' words (`RequestRun.wide`) in a buffer sized for it. Such
    /// a plan has no creation steps, slots or completion callbacks (`Recorder.finishSlots`): the graph's one-word masks
    /// (`Graph.claimedSkip`, `lateContainerClaims`, `unclaimedUnder`) stay empty. Out of line, as `replayLarge`.
    @inline(never) @_semantics("optimize.sil.specialize.generic.never")  // rare: one copy (`executeRare`)
    func replayWideRequest<M: RunMode>(_ mode: M.Type, into graph: Graph, _ made: ReferenceWords<Instance>, _ specs: ThreadSpecs,
                                               _ progress: UnsafeMutablePointer<PlanProgress>, _ arguments: UnsafeBufferPointer<Argument>,
                                               lookup: Container) -> Result<Bool, TetherError> {
        withUnsafeTemporaryAllocation(of: UInt.self, capacity: 5 * StepBits.width(steps: steps.count)) { buffer in
            buffer.initialize(repeating: 0)
            var request = RequestRun(resolving: .init(lookup), thread: graph.thread, builtSince: .max)  // the graph publishes (its own)
            request.wide = buffer.baseAddress!
            return withUnsafeMutablePointer(to: &request) { request in
                if hasLocals {
                    return replay(M.self, into: graph, made, specs, progress,
                                  Locals<ChildWideRequestSteps>(base: progress.pointee.locals, arguments: arguments.baseAddress, request: request),
                                  lookup: lookup)
                }
                return replay(M.self, into: graph, made, specs, progress,
                              Locals<OwnWideRequestSteps>(base: progress.pointee.locals, arguments: arguments.baseAddress, request: request),
                              lookup: lookup)
            }
        }
    }

    @inline(__always)
    func replay<M: RunMode, B>(_ mode: M.Type, into graph: Graph, _ made: ReferenceWords<Instance>, _ specs: ThreadSpecs,
                                       _ progress: UnsafeMutablePointer<PlanProgress>, _ locals: Locals<B>,
                                       lookup: Container) -> Result<Bool, TetherError> {
        // (A large plan's out of line, as `runLarge`.)
        let outcome = isLarge ? replayLarge(M.self, into: graph, made, specs, progress, locals, lookup: lookup)
            : withUnsafeTemporaryAllocation(of: UInt64.self, capacity: Plan.maxSlots) {
                replaySteps(M.self, into: graph, made, specs, progress, locals, lookup: lookup, words: $0.baseAddress!, rare: false)
            }
        if !M.requests, case .success(true) = outcome {
            // Those made before a step with a RESOLVER slot were entered before its factory (`openFrames`).
            let from = slots.isEmpty ? 0 : graph.replayEntered
            if B.readsRequest {
                let variant = M.creates ? progress.pointee.variant : -1
                enterRequest(into: graph, slots.isEmpty ? made : graph.replayedWords, locals, lookup: lookup, creates: M.creates, from: from,
                             order: variant < 0 ? nil : publishedVariants[variant].order)
            } else if M.creates {
                let variant = progress.pointee.variant
                enterCreated(into: graph, slots.isEmpty ? made : graph.replayedWords, locals, lookup: lookup, from: from, to: steps.count,
                             variant: variant, positions: variant < 0 ? 0..<0
                                : (slots.isEmpty ? 0 : graph.replayEnteredAt)..<publishedVariants[variant].order.count)
            } else {
                enterSteps(into: graph, locals, lookup: lookup, from: from, to: steps.count)
            }
        }
        return outcome
    }

    /// The step loop of a replay into `graph`, `words` the slots' words.
    @inline(__always)
    private func replaySteps<M: RunMode, B>(_: M.Type, into graph: Graph, _ made: ReferenceWords<Instance>, _ specs: ThreadSpecs,
                                            _ progress: UnsafeMutablePointer<PlanProgress>, _ locals: Locals<B>, lookup: Container,
                                            words: UnsafeMutablePointer<UInt64>, rare: Bool) -> Result<Bool, TetherError> {
        // A graph's run makes no block: no pointers of its own.
        var run = RunState(made: made.base, pointers: made.base, words: words)
        if M.traced { run.tracer = graph.tracer.map(Borrowed.init) }
        if M.traced && (M.requests || !slots.isEmpty) { run.asking = .init(graph) }
        return execute(M.self, &run, specs, progress, locals, into: (.init(graph), .init(lookup)), rare: rare)
    }

    /// `replaySteps` of a plan that `isLarge`: the slots' words sized for its largest factory (on the heap past 1 KiB).
    @inline(never) @_semantics("optimize.sil.specialize.generic.never")  // rare: one copy (`executeRare`)
    private func replayLarge<M: RunMode, B>(_: M.Type, into graph: Graph, _ made: ReferenceWords<Instance>, _ specs: ThreadSpecs,
                                            _ progress: UnsafeMutablePointer<PlanProgress>, _ locals: Locals<B>,
                                            lookup: Container) -> Result<Bool, TetherError> {
        withUnsafeTemporaryAllocation(of: UInt64.self, capacity: max(mostSlots, 1)) {
            replaySteps(M.self, into: graph, made, specs, progress, locals, lookup: lookup, words: $0.baseAddress!, rare: true)
        }
    }

    /// `enterSteps` after a run that read the request, as a build leaves its graph: a container step
    /// taken from the resolving container's cache keyed, not queued; one made keyed, queued and published
    /// with the graph (`Graph.madeContainerStep`); the steps only cached ones asked for not entered (not made).
    /// `creates` (a creating run): a creation step made here queued to be published with them, in step order
    /// (`Graph.madeCreationStep`); one a nested resolve published taken, keyed and not queued (`enterCreated`).
    /// From `from` to `to`: a RESOLVER slot's owner enters those before it first (`openFrames`); not those taken
    /// from what its gets built (`Graph.replaySkips`: entered as the gets made them).
    @inline(never)
    func enterRequest<B>(into graph: Graph, _ made: ReferenceWords<Instance>, _ locals: Locals<B>, lookup: Container,
                                 creates: Bool, from: Int = 0, to: Int? = nil, order: UnsafeBufferPointer<Int>? = nil) {
        let claims = self.claims(locals)
        let skips = !slots.isEmpty
        // (`order`: a run gone on in a `PublishedVariant`, without slots: its made steps in the order it made them, as the
        // build's, then the shared ones.)
        func enter(_ i: Int) {
            guard (steps[i].isKeyed || steps[i].completes) && !made.isNone(i) && !(skips && graph.replaySkips.contains(i)) else { return }
            let cached = steps[i].isContainer && claims.isCached(i) || creates && steps[i].creates && !graph.madeHere(registration(i, locals))
            if steps[i].isContainer && !cached { graph.madeContainerStep(registration(i, locals), at: i, in: self.lookup(of: i, locals.base)?.object ?? lookup) }
            if creates && steps[i].creates && !cached { graph.madeCreationStep(registration(i, locals), at: i) }
            graph.enterReplayed(registration(i, locals), at: i, keyed: steps[i].isKeyed, completes: steps[i].completes && !cached,
                                lookup: self.lookup(of: i, locals.base) ?? Borrowed(lookup))
        }
        guard let order else { return (from..<(to ?? steps.count)).forEach(enter) }
        for i in order { enter(i) }
        for i in steps.indices where steps[i].isShared { enter(i) }
    }

    /// `enterSteps` after a run with creation steps, as a build that finds a creation step's
    /// instance published by a resolve nested in an earlier factory (`takePublished`) leaves its
    /// graph: that instance keyed but not queued (its completion callbacks ran in the resolve that
    /// made it: never twice), the dependencies the run spared not entered (it never reached them).
    /// A run gone on in a `PublishedVariant` (`variant`): its made steps queued in the order it made them, as the build's
    /// (those at `positions` in its order; the shared steps `from ..< to`).
    @inline(never)
    func enterCreated<B>(into graph: Graph, _ made: ReferenceWords<Instance>, _ locals: Locals<B>, lookup: Container,
                                 from: Int, to: Int, variant: Int, positions: Range<Int> = 0..<0) {
        let skips = !slots.isEmpty  // (none is `made.isNone`; one taken the graph entered as made)
        func enter(_ i: Int) {
            guard (steps[i].isKeyed || steps[i].completes) && !made.isNone(i) && !(skips && graph.replaySkips.contains(i)) else { return }
            let completes = steps[i].completes && (!steps[i].creates || graph.madeHere(registration(i, locals)))
            graph.enterReplayed(registration(i, locals), at: i, keyed: steps[i].isKeyed, completes: completes, lookup: self.lookup(of: i, locals.base) ?? Borrowed(lookup))
        }
        guard variant >= 0 else { return (from..<to).forEach(enter) }
        // (The shared steps are keyed only. Past `positions.lowerBound`: those a RESOLVER slot's factory had entered
        // before it, `openFrames`.)
        let order = publishedVariants[variant].order
        for p in positions { enter(order[p]) }
        for i in from..<to where steps[i].isShared { enter(i) }
    }

    /// After a replay into `graph`: each step entered as its build would have (`Graph.enterReplayed`),
    /// a local step under the resolving child's registration (its completion callbacks are that one's).
    @inline(__always)
    func enterSteps<B>(into graph: Graph, _ locals: Locals<B>, lookup: Container, from: Int, to: Int) {
        let skips = !slots.isEmpty  // taken from what a resolver built (entered then), or not made
        for i in from..<to where (steps[i].isKeyed || steps[i].completes) && !(skips && graph.replaySkips.contains(i)) {
            // (A step under a singleton from further up: its callbacks resolve from that one's container, `Step.lookup`.)
            graph.enterReplayed(registration(i, locals), at: i, keyed: steps[i].isKeyed, completes: steps[i].completes,
                                lookup: self.lookup(of: i, locals.base) ?? Borrowed(lookup))
        }
    }
}
