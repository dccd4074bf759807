/// A plan's execution: the runs of a recorded plan (`Plan.swift` holds its format and its
/// recorder). Each run replays the steps in creation order, taking shared steps from their
/// caches and calling the made steps' factories.

/// Whether a replay takes a child's own registrations for local steps (`Plan.Locals`), and whether it
/// reads the request (`Plan.RequestRun`): specialized per type, so a plan without either reads neither.
/// `Mask`: the type of the run's step masks (`StepMask`): one word, or `StepBits` for a plan that `wideMasks`.
protocol StepBinding {
    static var bindsLocals: Bool { get }
    static var readsRequest: Bool { get }
    associatedtype Mask: StepMask = WordMask
}
/// A plan's own steps only.
enum OwnSteps: StepBinding { static var bindsLocals: Bool { false }; static var readsRequest: Bool { false } }
/// A child's plan: local steps take the child's registrations by slot (`Plan.fits`).
enum ChildSteps: StepBinding { static var bindsLocals: Bool { true }; static var readsRequest: Bool { false } }
/// `OwnSteps` of a plan with value or container steps.
enum OwnRequestSteps: StepBinding { static var bindsLocals: Bool { false }; static var readsRequest: Bool { true } }
/// `ChildSteps` of a plan with value or container steps.
enum ChildRequestSteps: StepBinding { static var bindsLocals: Bool { true }; static var readsRequest: Bool { true } }
/// `OwnRequestSteps` of a plan that `wideMasks` (a container step past the 64th step): its masks `StepBits`.
enum OwnWideRequestSteps: StepBinding {
    static var bindsLocals: Bool { false }; static var readsRequest: Bool { true }; typealias Mask = StepBits
}
/// `ChildRequestSteps` of a plan that `wideMasks`.
enum ChildWideRequestSteps: StepBinding {
    static var bindsLocals: Bool { true }; static var readsRequest: Bool { true }; typealias Mask = StepBits
}

extension Plan {
    /// Step `i`'s registration: a local step's is the resolving child's in its slot.
    @inline(__always)
    private func registration<B>(_ i: Int, _ locals: Locals<B>) -> Borrowed<Registration> {
        guard B.bindsLocals, steps[i].local >= 0 else { return steps[i].registration }
        return locals.base[steps[i].local]
    }

    /// A made step's spec: a local step's is its child's registration's current one.
    @inline(__always)
    private func spec<B>(_ i: Int, _ locals: Locals<B>) -> Borrowed<InstanceSpec> {
        guard B.bindsLocals, steps[i].local >= 0 else { return steps[i].spec! }
        return locals.base[steps[i].local].borrow { $0.specReference }
    }

    /// A replay's view of the child's registrations by slot (`PlanProgress.locals`, written by `fits`):
    /// specialized per `B`, so the replay of a plan without local steps reads its own steps only.
    /// Also the resolve's runtime arguments (the root's `argument(n)` inputs), checked against the root's params.
    struct Locals<B: StepBinding> {
        let base: UnsafeMutablePointer<Borrowed<Registration>>
        var arguments: UnsafePointer<Argument>? = nil
        /// For a plan that `readsRequest`: what its run reads of the request (else nil).
        var request: UnsafeMutablePointer<RequestRun>? = nil
        /// The request's `ContainerClaims` words (`RequestRun.words`, at its address; a wide run's, `RequestRun.wide`).
        var claims: UnsafeMutablePointer<UInt> {
            @inline(__always) get {
                if B.Mask.isWide { return request.unsafelyUnwrapped.pointee.wide.unsafelyUnwrapped }
                return UnsafeMutableRawPointer(request.unsafelyUnwrapped).assumingMemoryBound(to: UInt.self)
            }
        }
    }

    /// What a run of a plan that `readsRequest` reads: the run's `ContainerClaims` words, the
    /// resolving container (its values, the cache its container steps go to) and the calling
    /// thread's `ThreadState` (the cells' owner). On the run's stack, the words in place (first:
    /// `Locals.claims`): no buffer of their own to allocate and clear.
    struct RequestRun {
        var words: (UInt, UInt, UInt, UInt, UInt) = (0, 0, 0, 0, 0)
        /// A plan that `wideMasks`: its `ContainerClaims`' words (5 kinds of `StepBits.width` words), instead of `words`.
        var wide: UnsafeMutablePointer<UInt>? = nil
        let resolving: Borrowed<Container>
        let thread: UnsafeMutableRawPointer
        /// The `SupersedeClock` read before the plan was picked (`PlanProgress.builtSince`): a container step
        /// a configuration change since superseded is not cached (`Container.publishScoped(_:_:endingClaimOf:builtSince:)`).
        let builtSince: UInt
        init(resolving: Borrowed<Container>, thread: UnsafeMutableRawPointer, builtSince: UInt) {
            assert(MemoryLayout<RequestRun>.offset(of: \RequestRun.words) == 0, "Locals.claims reads the words at the request's address")
            self.resolving = resolving
            self.thread = thread
            self.builtSince = builtSince
        }
    }

    /// A run's container steps, in 5 words: word 0 has the bit of each step taken from the
    /// resolving container's cache, word 1 the bit of each `containerSteps[n]` whose creation cell
    /// the run holds (`Container.claimScoped`) and has not published, word 2 the bit of each step
    /// made (read by a resolve nested on this thread, through the claim), word 3 the cell another
    /// thread holds that made the run decline (retained, `Ref.word`; 0: none): waited for, then run again
    /// (a graph's replay: the step + 1 where a failed claim is reported), word 4 the steps a run finding
    /// some container steps cached and others not skips (`skipUnderCached`).
    /// Each kind is a `Mask` in `width` words (`StepMask.width`: one for `WordMask`), one after the other (word 3: its first).
    private struct ContainerClaims<Mask: StepMask> {
        let words: UnsafeMutablePointer<UInt>
        let width: Int
        @inline(__always) init(words: UnsafeMutablePointer<UInt>, steps: Int) {
            self.words = words
            width = Mask.isWide ? Mask.width(steps: steps) : 1
        }
        /// Kind `k`'s words.
        @inline(__always) func kind(_ k: Int) -> UnsafeMutablePointer<UInt> { words + k * width }
        @inline(__always) func isCached(_ step: Int) -> Bool { Mask.test(step, in: words) }
        @inline(__always) func holds(_ n: Int) -> Bool { Mask.test(n, in: kind(1)) }
        /// Kind `k` as a set.
        @inline(__always) func load(_ k: Int) -> Mask { Mask.load(kind(k), width: width) }
        /// Whether kind `k` has any bit.
        @inline(__always) func any(_ k: Int) -> Bool { Mask.isWide ? (0..<width).contains { kind(k)[$0] != 0 } : words[k] != 0 }
        /// Word 3: the cell another thread holds, or the step + 1 where a failed claim is reported (0: none).
        var failed: UInt {
            @inline(__always) get { kind(3)[0] }
            @inline(__always) nonmutating set { kind(3)[0] = newValue }
        }
    }

    /// The run's `ContainerClaims` (`Locals.claims`).
    @inline(__always)
    private func claims<B>(_ locals: Locals<B>) -> ContainerClaims<B.Mask> { .init(words: locals.claims, steps: steps.count) }

    /// Replays a plan that does not complete, on its own; the root carries a
    /// reference for the caller. Nil: the plan declined (a shared dependency is
    /// not cached), before any factory ran. `specs`: the calling thread's;
    /// `arguments`: the resolve's runtime arguments, checked against the root's params.
    /// `container`: the resolving one (its cache has the container steps' instances);
    /// `thread`: the calling thread's `ThreadState`.
    func run(_ specs: ThreadSpecs, _ progress: UnsafeMutablePointer<PlanProgress>,
             _ arguments: UnsafeBufferPointer<Argument>, from container: Container,
             thread: UnsafeMutableRawPointer) -> Result<Ref<Instance>?, TetherError> {
        if readsRequest { return runRequest(SeparateInstances.self, specs, progress, arguments, from: container, thread: thread) }
        if hasLocals { return run(specs, progress, Locals<ChildSteps>(base: progress.pointee.locals, arguments: arguments.baseAddress)) }
        return run(specs, progress, Locals<OwnSteps>(base: progress.pointee.locals, arguments: arguments.baseAddress))
    }

    /// `run` while a trace hook is set (`Graph.resolve(_:from:arguments:tracer:)`): separate instances
    /// (`TracedInstances`, never a block: each instance's spec tells `tracer` of its destruction),
    /// telling `tracer` what the build would, in its order (`execute`).
    @inline(never)
    func runTraced(_ specs: ThreadSpecs, _ progress: UnsafeMutablePointer<PlanProgress>,
                   _ arguments: UnsafeBufferPointer<Argument>, from container: Container,
                   thread: UnsafeMutableRawPointer, _ tracer: Tracer) -> Result<Ref<Instance>?, TetherError> {
        let traced = Borrowed(tracer)
        if readsRequest { return runRequest(TracedInstances.self, specs, progress, arguments, from: container, thread: thread, tracer: traced) }
        if hasLocals { return run(specs, progress, Locals<ChildSteps>(base: progress.pointee.locals, arguments: arguments.baseAddress), tracer: traced) }
        return run(specs, progress, Locals<OwnSteps>(base: progress.pointee.locals, arguments: arguments.baseAddress), tracer: traced)
    }

    /// `run` of a plan that `readsRequest`: its `RequestRun` (the claims' words in it) on the stack; the
    /// cells claimed are let go of once the run published what it made (or failed, or declined).
    /// `M`: `TracedInstances` for `runTraced` (its own copy: the untraced one passes no tracer on).
    @inline(never)
    private func runRequest<M: RunMode>(_: M.Type, _ specs: ThreadSpecs, _ progress: UnsafeMutablePointer<PlanProgress>,
                            _ arguments: UnsafeBufferPointer<Argument>, from container: Container,
                            thread: UnsafeMutableRawPointer, tracer: Borrowed<Tracer>? = nil) -> Result<Ref<Instance>?, TetherError> {
        if wideMasks { return runWideRequest(M.self, specs, progress, arguments, from: container, thread: thread, tracer: tracer) }
        var waits = 0
        let builtSince = progress.pointee.builtSince  // before a factory's nested resolve writes it
        while true {
            var request = RequestRun(resolving: .init(container), thread: thread, builtSince: builtSince)
            let outcome = withUnsafeMutablePointer(to: &request) { request in
                if hasLocals {
                    return run(specs, progress, Locals<ChildRequestSteps>(base: progress.pointee.locals, arguments: arguments.baseAddress, request: request),
                               tracer: M.traced ? tracer : nil)
                }
                return run(specs, progress, Locals<OwnRequestSteps>(base: progress.pointee.locals, arguments: arguments.baseAddress, request: request),
                           tracer: M.traced ? tracer : nil)
            }
            // Claims a failed or declined run still holds (a run that succeeded published them).
            if request.words.1 != 0 { endClaims(WordMask(word: request.words.1), progress, from: container, thread: thread) }
            // Declined for the container steps found cached (word 0 first: a run that took none tests nothing more), every
            // one looked at (no cell held elsewhere): the plan for that set (`variant(forCached:)`: every one cached, the
            // `cachedVariant`; some, which the run could not skip to the build's order, the `mixedVariant`).
            if request.words.0 != 0, case .success(nil) = outcome, progress.pointee.decline == .containerHeld, request.words.3 == 0,
               request.words.0.nonzeroBitCount + request.words.1.nonzeroBitCount == containerSteps.count,
               let ran = runVariant(request.words.0, specs, progress, arguments, from: container, thread: thread,
                                    tracer: M.traced ? tracer : nil) {
                return ran
            }
            guard request.words.3 != 0, waitedForHeld(request.words.3, &waits, progress, thread: thread) else { return outcome }
        }
    }

    /// `runRequest` of a plan that `wideMasks`: its claims' words (`RequestRun.wide`) in a buffer sized for it; no
    /// `mixedVariant` (their key is a word). Out of line, as `runLarge`.
    @inline(never)
    private func runWideRequest<M: RunMode>(_: M.Type, _ specs: ThreadSpecs, _ progress: UnsafeMutablePointer<PlanProgress>,
                                            _ arguments: UnsafeBufferPointer<Argument>, from container: Container,
                                            thread: UnsafeMutableRawPointer, tracer: Borrowed<Tracer>?) -> Result<Ref<Instance>?, TetherError> {
        var waits = 0
        let builtSince = progress.pointee.builtSince  // before a factory's nested resolve writes it
        let width = StepBits.width(steps: steps.count)
        while true {
            let (outcome, cached, failed) = withUnsafeTemporaryAllocation(of: UInt.self, capacity: 5 * width) { buffer in
                buffer.initialize(repeating: 0)
                var request = RequestRun(resolving: .init(container), thread: thread, builtSince: builtSince)
                request.wide = buffer.baseAddress!
                let outcome = withUnsafeMutablePointer(to: &request) { request in
                    if hasLocals {
                        return run(specs, progress, Locals<ChildWideRequestSteps>(base: progress.pointee.locals, arguments: arguments.baseAddress,
                                                                                  request: request), tracer: M.traced ? tracer : nil)
                    }
                    return run(specs, progress, Locals<OwnWideRequestSteps>(base: progress.pointee.locals, arguments: arguments.baseAddress,
                                                                            request: request), tracer: M.traced ? tracer : nil)
                }
                let claims = ContainerClaims<StepBits>(words: buffer.baseAddress!, steps: steps.count)
                // Claims a failed or declined run still holds (a run that succeeded published them).
                if claims.any(1) { endClaims(claims.load(1), progress, from: container, thread: thread) }
                return (outcome, claims.load(0).count, claims.failed)
            }
            // Every container step cached: the `cachedVariant` (`variant(forCached:)`'s rule; a wide plan keeps no mixed ones).
            if cached != 0, cached == containerSteps.count, case .success(nil) = outcome, let variant = cachedVariant {
                return runPicked(variant, specs, progress, arguments, from: container, thread: thread, tracer: M.traced ? tracer : nil)
            }
            guard failed != 0, waitedForHeld(failed, &waits, progress, thread: thread) else { return outcome }
        }
    }

    /// The claims a failed or declined run of `runRequest` still holds (`held`, by container step number), ended.
    /// Out of line: the cold path.
    @inline(never)
    private func endClaims<Mask: StepMask>(_ held: Mask, _ progress: UnsafeMutablePointer<PlanProgress>, from container: Container,
                                           thread: UnsafeMutableRawPointer) {
        // (A local container step's registration is the resolving child's: `fits` wrote it to `locals`.)
        let locals = Locals<ChildSteps>(base: progress.pointee.locals)
        for n in 0..<containerSteps.count where held.contains(n) {
            registration(containerSteps[n], locals).borrow { container.endScopedClaim($0, thread: thread) }
        }
    }

    /// A run that declined, a container step's cell held by another thread (`held`, retained): waits until
    /// it is released, as a build would (`SharedCache.waitReleasedForPlan`), holding no cell (the run let go
    /// of its claims), for the thread's outermost resolve acting for no token; true: run again (the
    /// instance published meanwhile, or the cell free to claim). Out of line: contention.
    @inline(never)
    private func waitedForHeld(_ held: UInt, _ waits: inout Int, _ progress: UnsafeMutablePointer<PlanProgress>,
                               thread: UnsafeMutableRawPointer) -> Bool {
        let cell = Ref<SharedCache.Cell>(word: held)!.take()
        guard waits < Plan.maxWaits,
              Borrowed<ThreadState>(opaque: thread).borrow({ $0.nesting == 1 && $0.replaying.isEmpty && $0.tokens.isEmpty }),
              SharedCache.shared.waitReleasedForPlan(cell, thread: thread) else { return false }
        waits += 1
        progress.pointee.decline = nil  // not declined after all
        return true
    }

    /// A run that declined for the container steps of `cached` found cached (the others claimed): the run of the plan
    /// `variant(forCached:)` picks for them (`cachedVariant`, a `mixedVariant`), which takes those from the resolving
    /// container's cache and claims the others again. Nil: none (the build). Not a failing plan's: it picks by the
    /// frames open at its error before it runs (`pickedForCaches`), its claims' set is not one of those.
    @inline(never)
    private func runVariant(_ cached: UInt, _ specs: ThreadSpecs, _ progress: UnsafeMutablePointer<PlanProgress>,
                            _ arguments: UnsafeBufferPointer<Argument>, from container: Container,
                            thread: UnsafeMutableRawPointer, tracer: Borrowed<Tracer>?) -> Result<Ref<Instance>?, TetherError>? {
        guard failing == nil, let variant = variant(forCached: cached, from: container, progress.pointee.locals) else { return nil }
        return runPicked(variant, specs, progress, arguments, from: container, thread: thread, tracer: tracer)
    }

    /// The run of `variant`, picked for the caches a declined run found (traced if this one was).
    private func runPicked(_ variant: Plan, _ specs: ThreadSpecs, _ progress: UnsafeMutablePointer<PlanProgress>,
                           _ arguments: UnsafeBufferPointer<Argument>, from container: Container,
                           thread: UnsafeMutableRawPointer, tracer: Borrowed<Tracer>?) -> Result<Ref<Instance>?, TetherError> {
        progress.pointee.decline = nil  // not declined after all
        if let tracer { return variant.runTraced(specs, progress, arguments, from: container, thread: thread, tracer.object) }
        return variant.run(specs, progress, arguments, from: container, thread: thread)
    }

    /// How often a run waits for another thread's container step and runs again before the build takes over.
    static var maxWaits: Int { 8 }

    /// A run without a graph: the steps as separate instances, or (`blockWords`) as one block,
    /// then the container steps made published into the resolving container.
    @inline(__always)
    private func run<B>(_ specs: ThreadSpecs, _ progress: UnsafeMutablePointer<PlanProgress>,
                        _ locals: Locals<B>, tracer: Borrowed<Tracer>? = nil) -> Result<Ref<Instance>?, TetherError> {
        if isLarge { return runLarge(specs, progress, locals, tracer: tracer) }
        if let tracer { return separately(TracedInstances.self, specs, progress, locals, tracer: tracer) }
        if blockWords > 0 {
            return withRunState(OneBlock.self) { run in
                let outcome = execute(OneBlock.self, &run, specs, progress, locals).map { $0 ? makeBlock(run, specs, locals) : nil }
                // The block holds them meanwhile.
                if B.readsRequest && hasContainer, case .success(_?) = outcome { publishContainer(run, locals) }
                return outcome
            }
        }
        return separately(SeparateInstances.self, specs, progress, locals)
    }

    /// `run` of a plan that `isLarge` (never a block), its buffers sized for it. Out of line, and the only
    /// caller of `withLargeRunState`: the common run's closures then go to no call out of line, where
    /// the closure's capture of the plan cost every run a retain and a release of it (its count, one
    /// line every core's runs of the plan wrote). The plan needs no count: its registration keeps it,
    /// a replaced one retired by the reclaimer until every call under way has ended (`Registration+Plans`).
    @inline(never)
    private func runLarge<B>(_ specs: ThreadSpecs, _ progress: UnsafeMutablePointer<PlanProgress>,
                             _ locals: Locals<B>, tracer: Borrowed<Tracer>?) -> Result<Ref<Instance>?, TetherError> {
        if let tracer { return separately(TracedInstances.self, specs, progress, locals, tracer: tracer, large: true) }
        return separately(SeparateInstances.self, specs, progress, locals, large: true)
    }

    /// `run` as separate instances (mode `M`: `SeparateInstances` or `TracedInstances`); `large`: `runLarge`'s.
    @inline(__always)
    private func separately<B, M: RunMode>(_: M.Type, _ specs: ThreadSpecs, _ progress: UnsafeMutablePointer<PlanProgress>,
                                           _ locals: Locals<B>, tracer: Borrowed<Tracer>? = nil, large: Bool = false) -> Result<Ref<Instance>?, TetherError> {
        withRunState(M.self, large: large) { run in
            if M.traced { run.tracer = tracer }
            // Every other step is some step's input, so its instance went to that step's edges.
            let outcome = execute(M.self, &run, specs, progress, locals).map { $0 ? run.instances.take(steps.count - 1) : nil }
            // The root holds them meanwhile.
            if B.readsRequest && hasContainer, case .success(_?) = outcome { publishContainer(run, locals) }
            return outcome
        }
    }

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
    private func replayAsked<M: RunMode>(_: M.Type, into graph: Graph, _ made: ReferenceWords<Instance>, _ specs: ThreadSpecs,
                                         _ progress: UnsafeMutablePointer<PlanProgress>, lookup: Container) -> Result<Bool, TetherError> {
        // Container or value steps: the run reads the request (`RequestRun`), the graph claims its container steps.
        if readsRequest { return replayRequest(M.self, into: graph, made, specs, progress, .init(start: nil, count: 0), lookup: lookup) }
        if hasLocals { return replayAskedChild(M.self, into: graph, made, specs, progress, lookup: lookup) }
        return replay(M.self, into: graph, made, specs, progress, Locals<OwnSteps>(base: progress.pointee.locals), lookup: lookup)
    }

    @inline(never)
    private func replayAskedChild<M: RunMode>(_: M.Type, into graph: Graph, _ made: ReferenceWords<Instance>, _ specs: ThreadSpecs,
                                              _ progress: UnsafeMutablePointer<PlanProgress>, lookup: Container) -> Result<Bool, TetherError> {
        replay(M.self, into: graph, made, specs, progress, Locals<ChildSteps>(base: progress.pointee.locals), lookup: lookup)
    }

    /// `replayAsked` while `graph` tells a trace hook (`Graph.tracer`): modes `TracedRequestIntoGraph` and
    /// `TracedCreatingRequestIntoGraph`, the build's events where its walk inside the request has them (no hit
    /// for a key the graph has, `tellHits`). Out of line: the untraced requests keep their code.
    @inline(never)
    private func replayAskedTraced(into graph: Graph, _ made: ReferenceWords<Instance>, _ specs: ThreadSpecs,
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
    private func replay<M: RunMode>(_ mode: M.Type, into graph: Graph, _ made: ReferenceWords<Instance>, _ specs: ThreadSpecs,
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
    private func replayRequest<M: RunMode>(_ mode: M.Type, into graph: Graph, _ made: ReferenceWords<Instance>, _ specs: ThreadSpecs,
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
    @inline(never)
    private func replayWideRequest<M: RunMode>(_ mode: M.Type, into graph: Graph, _ made: ReferenceWords<Instance>, _ specs: ThreadSpecs,
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
    private func replay<M: RunMode, B>(_ mode: M.Type, into graph: Graph, _ made: ReferenceWords<Instance>, _ specs: ThreadSpecs,
                                       _ progress: UnsafeMutablePointer<PlanProgress>, _ locals: Locals<B>,
                                       lookup: Container) -> Result<Bool, TetherError> {
        // (A large plan's out of line, as `runLarge`.)
        let outcome = isLarge ? replayLarge(M.self, into: graph, made, specs, progress, locals, lookup: lookup)
            : withUnsafeTemporaryAllocation(of: UInt64.self, capacity: Plan.maxSlots) {
                replaySteps(M.self, into: graph, made, specs, progress, locals, lookup: lookup, words: $0.baseAddress!)
            }
        if !M.requests, case .success(true) = outcome {
            // Those made before a step with a RESOLVER slot were entered before its factory (`openFrames`).
            let from = slots.isEmpty ? 0 : graph.replayEntered
            if B.readsRequest {
                enterRequest(into: graph, slots.isEmpty ? made : graph.replayedWords, locals, lookup: lookup, creates: M.creates, from: from)
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
                                            words: UnsafeMutablePointer<UInt64>) -> Result<Bool, TetherError> {
        // A graph's run makes no block: no pointers of its own.
        var run = RunState(made: made.base, pointers: made.base, words: words)
        if M.traced { run.tracer = graph.tracer.map(Borrowed.init) }
        if M.traced && M.requests { run.asking = .init(graph) }
        return execute(M.self, &run, specs, progress, locals, into: (.init(graph), .init(lookup)))
    }

    /// `replaySteps` of a plan that `isLarge`: the slots' words sized for its largest factory (on the heap past 1 KiB).
    @inline(never)
    private func replayLarge<M: RunMode, B>(_: M.Type, into graph: Graph, _ made: ReferenceWords<Instance>, _ specs: ThreadSpecs,
                                            _ progress: UnsafeMutablePointer<PlanProgress>, _ locals: Locals<B>,
                                            lookup: Container) -> Result<Bool, TetherError> {
        withUnsafeTemporaryAllocation(of: UInt64.self, capacity: max(mostSlots, 1)) {
            replaySteps(M.self, into: graph, made, specs, progress, locals, lookup: lookup, words: $0.baseAddress!)
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
    private func enterRequest<B>(into graph: Graph, _ made: ReferenceWords<Instance>, _ locals: Locals<B>, lookup: Container,
                                 creates: Bool, from: Int = 0, to: Int? = nil) {
        let claims = self.claims(locals)
        let skips = !slots.isEmpty
        for i in from..<(to ?? steps.count) where (steps[i].isKeyed || steps[i].completes) && !made.isNone(i) && !(skips && graph.replaySkips.contains(i)) {
            let cached = steps[i].isContainer && claims.isCached(i) || creates && steps[i].creates && !graph.madeHere(registration(i, locals))
            if steps[i].isContainer && !cached { graph.madeContainerStep(registration(i, locals), at: i, in: self.lookup(of: i, locals.base)?.object ?? lookup) }
            if creates && steps[i].creates && !cached { graph.madeCreationStep(registration(i, locals), at: i) }
            graph.enterReplayed(registration(i, locals), at: i, keyed: steps[i].isKeyed, completes: steps[i].completes && !cached,
                                lookup: self.lookup(of: i, locals.base) ?? Borrowed(lookup))
        }
    }

    /// `enterSteps` after a run with creation steps, as a build that finds a creation step's
    /// instance published by a resolve nested in an earlier factory (`takePublished`) leaves its
    /// graph: that instance keyed but not queued (its completion callbacks ran in the resolve that
    /// made it: never twice), the dependencies the run spared not entered (it never reached them).
    /// A run gone on in a `PublishedVariant` (`variant`): its made steps queued in the order it made them, as the build's
    /// (those at `positions` in its order; the shared steps `from ..< to`).
    @inline(never)
    private func enterCreated<B>(into graph: Graph, _ made: ReferenceWords<Instance>, _ locals: Locals<B>, lookup: Container,
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
    private func enterSteps<B>(into graph: Graph, _ locals: Locals<B>, lookup: Container, from: Int, to: Int) {
        let skips = !slots.isEmpty  // taken from what a resolver built (entered then), or not made
        for i in from..<to where (steps[i].isKeyed || steps[i].completes) && !(skips && graph.replaySkips.contains(i)) {
            // (A step under a singleton from further up: its callbacks resolve from that one's container, `Step.lookup`.)
            graph.enterReplayed(registration(i, locals), at: i, keyed: steps[i].isKeyed, completes: steps[i].completes,
                                lookup: self.lookup(of: i, locals.base) ?? Borrowed(lookup))
        }
    }

    /// Resolves a plan that `makesObjects` with no `Instance`: the root's object,
    /// owned by the caller. A dependency goes to its first dependent's factory
    /// with the reference made for it (later ones get new references), except
    /// the objects completion callbacks complete or target: the plan keeps its
    /// own reference to those until the callbacks ran (a factory may drop its
    /// dependency). `.declined`: a shared dependency is not cached (before any factory ran).
    @inline(__always)
    func runObjects(_ progress: UnsafeMutablePointer<PlanProgress>) -> ObjectOutcome {
        isLarge ? runLargeObjects(progress) : runObjects(progress, large: false)
    }

    /// `runObjects` of a plan that `isLarge`, out of line (as `runLarge`).
    @inline(never)
    private func runLargeObjects(_ progress: UnsafeMutablePointer<PlanProgress>) -> ObjectOutcome {
        runObjects(progress, large: true)
    }

    @inline(__always)
    private func runObjects(_ progress: UnsafeMutablePointer<PlanProgress>, large: Bool) -> ObjectOutcome {
        // An object plan has no local steps and no arguments (`Recorder.objects`).
        let locals = Locals<OwnSteps>(base: progress.pointee.locals)
        return withRunState(SwiftObjects.self, large: large) { run in
            switch execute(SwiftObjects.self, &run, ThreadSpecs?.none, progress, locals) {
            case .failure(let error): return .failure(error)
            case .success(false): return .declined
            case .success(true):
                let root = run.objects.take(steps.count - 1)
                // Without callbacks every other object went to its first dependent (each step is some step's input).
                if !completionCalls.isEmpty { Plan.letGo(run.objects, count: steps.count) }
                return .root(root.take())
            }
        }
    }

    // MARK: the step loop

    /// Where a run's instances go: the mode of the one step loop (`execute`), a type so the loop
    /// is specialized per mode (as per `StepBinding`), each mode's tests folded away.
    enum Destination { case instances, block, objects, graph }
    protocol RunMode {
        static var destination: Destination { get }
        /// Whether the plan has creation steps (`creationChecks`): graph mode only.
        static var creates: Bool { get }
        /// Whether the run tells a trace hook (`RunState.tracer`) what the build would: separate
        /// instances or a graph's only.
        static var traced: Bool { get }
        /// Whether the run stops at a cut (`CutIntoGraph`).
        static var cuts: Bool { get }
        /// Whether the run serves a resolver's request (`RequestIntoGraph`).
        static var requests: Bool { get }
    }
    /// Each made step an `Instance`, the root's handed to the caller.
    enum SeparateInstances: RunMode { static var destination: Destination { .instances } }
    /// The made steps records of one block (`InstanceBlock`), made after the loop from their
    /// factories' pointers (`RunState.pointers`); shared singletons taken by split references.
    enum OneBlock: RunMode { static var destination: Destination { .block } }
    /// Swift objects (`makesObjects`): each made step's object, made by its `ObjectFactory`, the
    /// plan's completion calls run after the steps.
    enum SwiftObjects: RunMode { static var destination: Destination { .objects } }
    /// Instances into a graph's `alive` (`Graph.replay`), which then completes, publishes or aborts.
    enum IntoGraph: RunMode { static var destination: Destination { .graph } }
    /// `IntoGraph` for a plan with creation steps: it notes each one made in the graph holding its
    /// cell, and takes one a nested resolve published meanwhile (`takePublished`).
    enum CreatingIntoGraph: RunMode { static var destination: Destination { .graph }; static var creates: Bool { true } }
    /// The traced modes (`traced`): `SeparateInstances`, `IntoGraph`, `CreatingIntoGraph` telling the hook.
    enum TracedInstances: RunMode { static var destination: Destination { .instances }; static var traced: Bool { true } }
    enum TracedIntoGraph: RunMode { static var destination: Destination { .graph }; static var traced: Bool { true } }
    enum TracedCreatingIntoGraph: RunMode {
        static var destination: Destination { .graph }; static var creates: Bool { true }; static var traced: Bool { true }
    }
    /// `IntoGraph` up to a cut (`PlanProgress.cut`: `replayCut`): the made steps before it only, then what they made let go of.
    enum CutIntoGraph: RunMode { static var destination: Destination { .graph }; static var cuts: Bool { true } }
    /// `CutIntoGraph` of a creation plan whose cells the graph claimed (`CreatingIntoGraph`).
    enum CreatingCutIntoGraph: RunMode { static var destination: Destination { .graph }; static var creates: Bool { true }; static var cuts: Bool { true } }
    /// The traced cut modes (`replayCut` while the graph tells a trace hook): `CutIntoGraph`, `CreatingCutIntoGraph` telling
    /// the hook what the build does before it meets the key (the cache hits before the cut, `tellHits`; the destructions).
    enum TracedCutIntoGraph: RunMode {
        static var destination: Destination { .graph }; static var cuts: Bool { true }; static var traced: Bool { true }
    }
    enum TracedCreatingCutIntoGraph: RunMode {
        static var destination: Destination { .graph }; static var creates: Bool { true }; static var cuts: Bool { true }
        static var traced: Bool { true }
    }
    /// `IntoGraph` for a completion callback's request (`replayAsked`): the graph enters the steps, and keeps what a failed run made.
    enum RequestIntoGraph: RunMode { static var destination: Destination { .graph }; static var requests: Bool { true } }
    /// `RequestIntoGraph` up to a cut (`replayAskedCut`): what the steps before it made kept, as a failed request's.
    enum RequestCutIntoGraph: RunMode {
        static var destination: Destination { .graph }; static var requests: Bool { true }; static var cuts: Bool { true }
    }
    /// `RequestCutIntoGraph` of a plan with creation steps (`CreatingRequestIntoGraph`), the cells the build asked for before the cut claimed.
    enum CreatingRequestCutIntoGraph: RunMode {
        static var destination: Destination { .graph }; static var creates: Bool { true }; static var requests: Bool { true }
        static var cuts: Bool { true }
    }
    /// `RequestIntoGraph` of a plan with creation steps (`CreatingIntoGraph`'s notes and takes; `Graph.claimAsked`).
    enum CreatingRequestIntoGraph: RunMode {
        static var destination: Destination { .graph }; static var creates: Bool { true }; static var requests: Bool { true }
    }
    /// The traced request modes (`replayAskedTraced`): `RequestIntoGraph`, `CreatingRequestIntoGraph` telling the hook.
    enum TracedRequestIntoGraph: RunMode {
        static var destination: Destination { .graph }; static var requests: Bool { true }; static var traced: Bool { true }
    }
    enum TracedCreatingRequestIntoGraph: RunMode {
        static var destination: Destination { .graph }; static var creates: Bool { true }; static var requests: Bool { true }
        static var traced: Bool { true }
    }
    /// `RequestCutIntoGraph` telling the hook: the cache hits before the cut only (`tellHits`), the steps the build asked for first.
    enum TracedRequestCutIntoGraph: RunMode {
        static var destination: Destination { .graph }; static var requests: Bool { true }; static var cuts: Bool { true }
        static var traced: Bool { true }
    }
    /// `CreatingRequestCutIntoGraph` telling the hook (as `TracedRequestCutIntoGraph`).
    enum TracedCreatingRequestCutIntoGraph: RunMode {
        static var destination: Destination { .graph }; static var creates: Bool { true }; static var requests: Bool { true }
        static var cuts: Bool { true }; static var traced: Bool { true }
    }

    /// What the step loop keeps, on the stack: a word per step (`made`: what the run took or
    /// made and has not handed on), a block's factories' pointers per step, a word per slot of the
    /// factory being called, and the steps held by split references (`SplitEdge`: a block's).
    struct RunState {
        /// (A graph's words: read again after a resolver's build appended to it, `Graph.replayedWords`.)
        var made: UnsafeMutablePointer<UInt>
        var pointers: UnsafeMutablePointer<UInt>
        let words: UnsafeMutablePointer<UInt64>
        var split: UInt64 = 0
        /// A traced mode's hook (`RunMode.traced`); nil otherwise.
        var tracer: Borrowed<Tracer>? = nil
        /// A traced request mode's graph (`replayAskedTraced`): the keys it has tell no hit (`tellHits`); nil otherwise.
        var asking: Borrowed<Graph>? = nil
        var instances: ReferenceWords<Instance> { @inline(__always) get { .init(base: made) } }
        /// `made` in object mode.
        var objects: ReferenceWords<AnyObject> { @inline(__always) get { .init(base: made) } }
    }

    /// `body` with a run's state for mode `M` (a graph's run has its words: `replay(into:)`), on
    /// the stack: buffers of at most 1 KiB each (larger ones `withUnsafeTemporaryAllocation` takes
    /// from the heap): the steps' words (and a block's pointers), the slots' words. Object mode
    /// reads its slots' words raw (`ObjectArguments`), so they follow the steps' in one buffer.
    /// `large`: a plan that `isLarge`'s (`runLarge`, `runLargeObjects`: a constant false inlined elsewhere).
    @inline(__always)
    private func withRunState<M: RunMode, R>(_: M.Type, large: Bool = false, _ body: (inout RunState) -> R) -> R {
        if large { return withLargeRunState(body) }
        if M.destination == .objects {
            return withUnsafeTemporaryAllocation(of: UInt.self, capacity: Plan.maxSteps + Plan.maxSlots) { buffer in
                let made = buffer.baseAddress!
                // Never read as typed `UInt64`s: object mode's arguments are raw words.
                var run = RunState(made: made, pointers: made,
                                   words: UnsafeMutableRawPointer(made + Plan.maxSteps).assumingMemoryBound(to: UInt64.self))
                return body(&run)
            }
        }
        return withUnsafeTemporaryAllocation(of: UInt.self, capacity: (M.destination == .block ? 2 : 1) * Plan.maxSteps) { steps in
            withUnsafeTemporaryAllocation(of: UInt64.self, capacity: Plan.maxSlots) { words in
                var run = RunState(made: steps.baseAddress!, pointers: steps.baseAddress! + (M.destination == .block ? Plan.maxSteps : 0),
                                   words: words.baseAddress!)
                return body(&run)
            }
        }
    }

    /// `withRunState` of a plan that `isLarge` (never a block): a word per step, then the slots'
    /// words of its largest factory, in one buffer sized for it (on the heap past 1 KiB).
    @inline(__always)
    private func withLargeRunState<R>(_ body: (inout RunState) -> R) -> R {
        withUnsafeTemporaryAllocation(of: UInt.self, capacity: steps.count + max(mostSlots, 1)) { buffer in
            let made = buffer.baseAddress!
            var run = RunState(made: made, pointers: made,
                               words: UnsafeMutableRawPointer(made + steps.count).assumingMemoryBound(to: UInt64.self))
            return body(&run)
        }
    }

    /// A replay into a graph (`replay(into:)`): the graph, whose awaiting cells a lazy slot joins, and the
    /// resolving container, whose cells and handles the slots made per resolve are (`makeWithSlots`).
    typealias GraphRun = (graph: Borrowed<Graph>, lookup: Borrowed<Container>)

    /// The one step loop: every run of a plan. Takes the shared steps from their caches and the
    /// container steps from the resolving container (or claims them there), then calls each made
    /// step's factory in creation order (`callFactory`), noting the step in `progress` (`Reentry`),
    /// then, in object mode, the completion calls. False: the plan declined (a shared or container
    /// step not there, before any factory ran). On a decline or a failure `made` holds nothing
    /// (`letGo`); on success what the mode's caller makes of it (a root, a block, the graph's).
    @inline(__always)
    private func execute<B, M: RunMode>(_: M.Type, _ run: inout RunState, _ specs: ThreadSpecs?,
                                        _ progress: UnsafeMutablePointer<PlanProgress>, _ locals: Locals<B>,
                                        into graph: GraphRun? = nil) -> Result<Bool, TetherError> {
        let count = steps.count
        if M.destination != .graph { run.made.initialize(repeating: ReferenceWords<Instance>.none, count: count) }
        // A decline notes why, for `PlanStats` (the build that follows counts it). A value no container
        // on the way provides (`missing`, its step) fails the run where the build's walk reaches it.
        var missing = Int.max
        // Shared steps first asked for under container steps, not cached: decided once those are claimed (`takeShared`).
        var untaken = B.Mask(), absent = B.Mask()
        if hasShared && !takeShared(M.self, &run, locals, &missing, &untaken, &absent) {
            letGo(M.self, &run, count: count)
            // (A warm plan's shared root: the resolve missed it, and the creation plan, if any, makes it. A failing
            // plan's last step is not its root.)
            progress.pointee.decline = steps[count - 1].isShared && !fails ? .sharedRoot : .notCached
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
        // still made asks for); one only container steps taken cached asked for, never asked for. (A container step's
        // claim failed: the claims stopped there, the rest not known cached: the build.)
        if B.readsRequest && !absent.isEmpty, let first = firstAbsent(absent, locals) {
            guard first >= 0 else {
                if M.destination == .graph { graph.unsafelyUnwrapped.graph.borrow { $0.deferredFailure = nil; $0.dropContainerClaims() } }
                letGo(M.self, &run, count: count)
                progress.pointee.decline = .notCached
                return .success(false)
            }
            missing = first
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
        // (A creating request's: neither taken published nor revived where the run checks, `takePublished`.)
        if M.requests && M.creates { skip.formUnion(B.Mask(graph.unsafelyUnwrapped.graph.borrow { $0.requestSkips })) }
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
        for n in 0..<end {
            var i = madeSteps[n]
            if M.cuts && i >= progress.pointee.cut { break }
            if M.creates && n <= skipTo { continue }
            // A step this run claimed, published meanwhile (a creation step; a container step, not up to a cut nor a request's).
            if (M.creates || !M.cuts && !M.requests) && check < checks.count && checks[check].at == n {
                let spared = takePublished(M.self, &check, &checks, &order, n, run, locals, graph, told: &told, taken: &skip, progress,
                                           unclaimed: late, walked: &walked, position: &position)
                if M.creates { skipTo = spared; if n <= skipTo { continue } }
            }
            if M.creates { i = order[n] }
            // A container step claimed late whose claim failed: the build reports it where it asks for it.
            if !late.isEmpty, let error = claimLate(M.self, at: i, &late, &skip, run, locals, graph.unsafelyUnwrapped, told: &told) {
                progress.pointee.plan = nil
                graph.unsafelyUnwrapped.graph.borrow { $0.unpendShared() }
                if graph.unsafelyUnwrapped.graph.borrow({ !$0.replayBuilt.isEmpty }) {
                    letGoBuilt(&run, count: count, graph.unsafelyUnwrapped.graph)
                } else {
                    if M.creates && order.baseAddress != madeSteps.baseAddress { letGoMade(order, before: n, run) }
                    letGo(M.self, &run, count: count)
                }
                return .failure(error)
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
                letGo(M.self, &run, count: count)
                return .failure(graph.unsafelyUnwrapped.graph.borrow { $0.takeDeferredFailure() })
            }
            if (B.Mask.isWide || !skip.isEmpty) && skip.contains(i) { continue }
            let isContainer = claims != nil && steps[i].isContainer
            progress.pointee.step = i
            if M.traced {
                if let walked { tellWalkedHits(walked.order, &position, to: i, run, locals) } else { tellHits(&told, to: i, run, locals, skipsUnder: containersCached) }
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
                if makesSlots { graph.unsafelyUnwrapped.graph.borrow { $0.unpendShared() } }
                if makesSlots && graph.unsafelyUnwrapped.graph.borrow({ !$0.replayBuilt.isEmpty }) {
                    // (Gone on in a `PublishedVariant`: last made first in its order, as `letGoMade`.)
                    letGoBuilt(&run, count: count, graph.unsafelyUnwrapped.graph,
                               order: M.creates && order.baseAddress != madeSteps.baseAddress ? order : nil)
                } else {
                    if M.creates && order.baseAddress != madeSteps.baseAddress { letGoMade(order, before: n, run) }
                    letGo(M.self, &run, count: count)
                }
                return .failure(error)
            }
        }
        progress.pointee.plan = nil
        // (A cut run stopped where the build meets its cycle: a missing value before that fails first.)
        let missed = B.readsRequest && missing != Int.max && (!M.cuts || missing < progress.pointee.cut)
        // (A run up to a cut: the build asked for nothing from it on, `Plan.meeting`. A missing value: nothing past it.)
        if M.traced {
            if let walked { tellWalkedHits(walked.order, &position, to: missed ? missing : nil, run, locals) }
            else { tellHits(&told, to: missed ? missing : M.cuts ? min(progress.pointee.cut, count) : count, run, locals, skipsUnder: containersCached) }
        }
        if missed {
            return failMissing(M.self, &run, missing, before: end < madeSteps.count ? madeSteps[end] : count, specs, progress, locals)
        }
        if M.cuts {
            // A resolver's request: what the steps made stays in the graph (`Graph.enterAsked`), as the build leaves it.
            if M.requests { progress.pointee.cut = -1; return .success(false) }
            // What a resolver's gets built goes in its place among the steps (`letGoBuilt`), before the rest.
            if makesSlots { graph.unsafelyUnwrapped.graph.borrow { $0.unpendShared() } }
            if makesSlots && graph.unsafelyUnwrapped.graph.borrow({ !$0.replayBuilt.isEmpty }) { letGoBuilt(&run, count: count, graph.unsafelyUnwrapped.graph) }
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
            if makesSlots { graph.unsafelyUnwrapped.graph.borrow { $0.unpendShared() } }
            if makesSlots && graph.unsafelyUnwrapped.graph.borrow({ !$0.replayBuilt.isEmpty }) { letGoBuilt(&run, count: count, graph.unsafelyUnwrapped.graph) }
            return fail(M.self, &run, count: count)
        }
        if M.destination == .objects, !completionCalls.isEmpty, let error = runCompletionCalls(run) {
            letGo(M.self, &run, count: count)
            return .failure(error)
        }
        return .success(true)
    }

    /// Value step `missing` no container on the way provides, reached after the made steps before `before`:
    /// what they made let go of, and the build's error: its registration's factory (`DeclaredValueFactory`)
    /// fails where the build's walk reaches it, as a made step's (`factoryFailure`).
    @inline(never)
    private func failMissing<B, M: RunMode>(_: M.Type, _ run: inout RunState, _ missing: Int, before: Int, _ specs: ThreadSpecs?,
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
    private func fail<M: RunMode>(_: M.Type, _ run: inout RunState, count: Int) -> Result<Bool, TetherError> {
        letGo(M.self, &run, count: count)
        return .failure(failure.unsafelyUnwrapped)
    }

    /// A run up to its cut (`CutIntoGraph`), after the steps before it: what they made let go of, as the
    /// build's abort does; `PlanProgress.cut` -1 says the cut was reached (the caller reports the build's error).
    @inline(never)
    private func cutReached<M: RunMode>(_: M.Type, _ run: inout RunState, _ progress: UnsafeMutablePointer<PlanProgress>,
                                        count: Int) -> Result<Bool, TetherError> {
        letGo(M.self, &run, count: count)
        progress.pointee.cut = -1
        return .success(false)
    }

    /// The checks due at made step `n` (from `check` on, outer first): "taken published meanwhile", one rule. A step
    /// this run claimed whose instance a resolve nested in an earlier factory published under that claim takes that
    /// one, its own dependencies not made, as the build finds it cached where its walk asks for it. Returns the last
    /// made step spared (-1: none); `check` moves past the checks it covers. Out of line: a nested resolve of a
    /// claimed key is rare.
    /// A creation step: from its registration's cache. A container step (`CreationCheck.container`; not in a run up to
    /// a cut nor a request's, which claim none of their own): from the resolving container's, one instance per
    /// container, its claim ended; it and the steps under it go in `taken` (a plan with one has no variant).
    /// Traced (`RunState.tracer`): the build finds it cached where its walk asks for it, after the
    /// steps before its own dependencies (`told`: what was told; its spared dependencies tell nothing).
    /// A weak one no resolve published that the build's walk reaches there (`CreationCheck.reachedThere`):
    /// the object a binding still holds, revived (`Graph.reviveCreation`: no factory, no callbacks), its own
    /// dependencies spared alike.
    /// An early check (`CreationCheck.variant`) found published: the run goes on in that `PublishedVariant`'s
    /// `order` and `checks` (not in a run up to a cut or a request's: those skip early checks; a traced one only
    /// telling its hits in the build's walk, `tellPublishedInWalk`), what it does not make added to `taken` (the
    /// steps the run does not make).
    @inline(never)
    private func takePublished<B, M: RunMode>(_: M.Type, _ check: inout Int, _ checks: inout UnsafeBufferPointer<CreationCheck>,
                                              _ order: inout UnsafeBufferPointer<Int>, _ n: Int, _ run: RunState, _ locals: Locals<B>,
                                              _ graph: GraphRun?, told: inout Int, taken: inout B.Mask,
                                              _ progress: UnsafeMutablePointer<PlanProgress>, unclaimed: B.Mask,
                                              walked: inout Plan.Walk?, position: inout Int) -> Int {
        // (A traced run tells its hits in the build's walk once it switches, `tellPublishedInWalk`: not one over container steps.)
        let switches = !M.cuts && !M.requests && (!M.traced || !hasContainer)
        // One a resolver's get built first the run holds already (`takeBuilt`, a reference of its own): taking
        // the published one too would overwrite that word, a reference never let go of (the instance leaked).
        // (Not a resolver's request's: a replay further out, whose RESOLVER slot's factory asks, owns `replaySkips`.)
        let built = M.destination == .graph && !slots.isEmpty && !M.requests
        var skipTo = -1
        while check < checks.count && checks[check].at <= max(n, skipTo) {
            let found = checks[check]
            check += 1
            guard found.made > skipTo, found.variant < 0 || switches, found.container < 0 || !M.cuts && !M.requests else { continue }
            guard !built || !graph.unsafelyUnwrapped.graph.borrow({ $0.replaySkips.contains(found.step) }) else { continue }
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
                    if walked != nil { tellPublishedInWalk(found.step, &walked!, &position, run, locals) }
                    if !revived { tracer.borrow { t in hit.borrow { h in t.emit(.cacheHit, h.key, h.pointer) } } }
                }
                (order, checks, check, skipTo) = (variant.order, variant.checks, 0, -1)
                progress.pointee.variant = found.variant
                taken.formUnion(B.Mask(word: variant.skip))  // (no variant over container steps: one word)
                continue
            }
            // Its dependencies' steps: those right before it that descend from it (post-order).
            let first = firstAsked(found.step)
            if found.container >= 0 {
                // (Checked at the step itself, a later step taking one of its dependencies: those are made.)
                for j in (found.at == found.made ? found.step : first)...found.step { taken.insert(j) }
            } else {
                skipTo = found.made
            }
            if let tracer = run.tracer {
                if walked != nil {
                    tellPublishedInWalk(found.step, &walked!, &position, run, locals)
                } else {
                    tellHits(&told, to: first, run, Locals<OwnSteps>?.none)
                    told = found.step + 1
                }
                // (A revived one tells nothing: `Graph.existing` hands it out without a hit.)
                if !revived { tracer.borrow { t in hit.borrow { h in t.emit(.cacheHit, h.key, h.pointer) } } }
            }
        }
        return skipTo
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
    private func tracesSkips() -> Bool {
        for k in steps.indices where !steps[k].isShared && !steps[k].isContainer && !steps[k].underContainer {
            let slots = steps[k].registration.borrow { $0.params.count }
            for input in inputs[steps[k].firstInput ..< steps[k].firstInput + slots] where Plan.isStep(input) {
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
    private func tellHits<B>(_ told: inout Int, to end: Int, _ run: RunState, _ locals: Locals<B>?, skipsUnder: Bool = false) {
        let made = run.instances
        while told < end {
            let j = told
            told += 1
            guard !made.isNone(j) else { continue }  // spared: not asked for
            // A request's: a key the graph has (taken from it, or shared and keyed there: the build's `existing`
            // finds it in the table), or a step only such a key asked for: no hit.
            if let graph = run.asking, graph.borrow({ g in g.requestSkips.contains(j)
                || steps[j].isShared && g.builtIndex((locals.map { registration(j, $0) } ?? steps[j].registration)) != nil }) { continue }
            if skipsUnder && (steps[j].askedUnderContainer || steps[j].isContainer && descendsFromContainer(j)) { continue }
            let key = (locals.map { registration(j, $0) } ?? steps[j].registration).borrow { $0.key }
            run.tracer.unsafelyUnwrapped.borrow { $0.emit(.cacheHit, key, made[j].borrow { $0.pointer }) }
        }
    }

    /// Traced, the container steps taken cached, a step outside them taking a shared step first asked for
    /// under them (`tracesSkips` false): the hits before step `end`'s factory (nil: all the rest), in the
    /// build's walk then (`Plan.walk`, the container steps leaves: what only they asked for is not in it),
    /// from `position` in it. The made steps are in that walk's order too (none outside takes one under them,
    /// `Recorder.markUnderContainer`), each told by `tellMade`.
    private func tellWalkedHits<B>(_ walk: [Int], _ position: inout Int, to end: Int?, _ run: RunState, _ locals: Locals<B>?) {
        while position < walk.count {
            let j = walk[position]
            position += 1
            if j == end { return }
            guard steps[j].isShared || steps[j].isContainer else { continue }
            var first = j
            tellHits(&first, to: j + 1, run, locals)
        }
    }

    /// Traced in the build's walk (`tellWalkedHits`), creation step `c` found published where the run checks (`takePublished`):
    /// the build takes it where it asks for it, descending no further, so the rest of the walk is the one with `c` a leaf too
    /// (what only it asked for is not in it), after what was told; the hits before `c` told, its own by the caller.
    private func tellPublishedInWalk<B>(_ c: Int, _ walk: inout Plan.Walk, _ position: inout Int, _ run: RunState, _ locals: Locals<B>) {
        // (No deeper than the walk it replaces: never nil.)
        guard !walk.leaves.contains(c), let again = Plan.walk(Array(steps), Array(inputs), leaves: walk.leaves + [c]) else { return }
        let told = walk.order[..<position]
        let seen = Set(told)
        guard !seen.contains(c) else { return }  // (reached already: the hits past it told, `tellWalkedHits`)
        walk = Plan.Walk(order: Array(told) + again.order.filter { !seen.contains($0) }, parent: again.parent, leaves: again.leaves)
        tellWalkedHits(walk.order, &position, to: c, run, locals)
    }

    /// Traced: step `i` made (`Tracer.constructed`: its return, its edges, what its WEAK slots hold).
    private func tellMade<B>(_ i: Int, _ told: inout Int, _ run: RunState, _ locals: Locals<B>) {
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

    /// What a run holds of its steps and did not hand on, let go of (`Plan.letGo`); a graph's
    /// words then hold nothing, so its own abort finds them empty. Out of line: the cold path.
    /// An instance run's references moved into a dependent's edge are taken back first (as `Graph.abort`'s
    /// `reownAll`; edges take them only once a factory succeeded), so each instance goes in its own
    /// place, last made first, not with its dependent.
    @inline(never)
    private func letGo<M: RunMode>(_: M.Type, _ run: inout RunState, count: Int) {
        if M.destination == .objects {
            Plan.letGo(run.objects, count: count)
        } else {
            for i in 0..<count where run.split & 1 << UInt64(i) == 0 { run.instances.reown(i) }
            Plan.letGo(run.instances, count: count, split: run.split)
            run.split = 0
        }
        if M.destination == .graph { run.made.update(repeating: ReferenceWords<Instance>.none, count: count) }
    }

    /// Before `letGo` of a run gone on in a `PublishedVariant`'s order, failed at its `n`th made step: the steps
    /// made before it let go of last made first, as the build's abort does (that order is not step order there).
    @inline(never)
    private func letGoMade(_ order: UnsafeBufferPointer<Int>, before n: Int, _ run: RunState) {
        for p in stride(from: n - 1, through: 0, by: -1) where !run.instances.isNone(order[p]) {
            // (Left `none` before its release, as `ReferenceStack.removeAll` hides it: a destructor may read the graph.)
            let (word, owned) = (run.made[order[p]], run.instances.owns(order[p]))
            run.made[order[p]] = ReferenceWords<Instance>.none
            if owned { Ref<Instance>(word: word)!.release() }
        }
    }

    /// `letGo` of a replay into `graph` whose resolvers built instances (`Graph.replayBuilt`): what the build's
    /// abort does, every instance released in its own place, last made first, those a step's resolver built
    /// right before that step's (all reowned first: whoever else holds one, it goes in its place). `order`: a
    /// `PublishedVariant`'s, the made steps' order (nil: step order). Out of line: rare.
    @inline(never)
    private func letGoBuilt(_ run: inout RunState, count: Int, _ graph: Borrowed<Graph>, order: UnsafeBufferPointer<Int>? = nil) {
        let (words, built) = graph.borrow { ($0.replayedWords, $0.replayBuilt) }
        run.made = words.base
        run.pointers = words.base
        // Every one reowned before any is released (`ReferenceStack.reownAll`): a release may free what a moved word names.
        for k in 0..<count { words.reown(k) }
        for range in built { for j in range.from ..< range.to { words.reown(j) } }
        words.releaseUnmoved(lastFirst: count, built: built, end: built[built.count - 1].to, order: order)
    }

    /// A block run that failed in step `i`: leaves what a run of separate instances would have,
    /// an instance for every step made before it, its edges ordinary references (a container
    /// step's made already keeps its split ones), for `letGo`.
    @inline(never)
    private func recordsAsInstances<B>(before i: Int, _ run: inout RunState, _ specs: ThreadSpecs, _ locals: Locals<B>) {
        let made = run.instances
        for j in 0..<steps.count where run.split & 1 << UInt64(j) != 0 && made.owns(j) { SplitEdge.makeOrdinary(made[j]) }
        run.split = 0
        for j in 0..<i where !steps[j].isShared && !steps[j].isContainer {
            made.set(j, makeInstance(OneBlock.self, j, UnsafeMutableRawPointer(bitPattern: run.pointers[j])!, run, specs, locals))
        }
    }

    /// After a block run: the root's `Instance`, its allocation holding the other steps'
    /// records (see `InstanceBlock`). Nothing else can reach them: without callbacks or
    /// resolvers, the only references they ever have are the edges inside the graph.
    @inline(__always)
    private func makeBlock<B>(_ run: RunState, _ specs: ThreadSpecs, _ locals: Locals<B>) -> Ref<Instance> {
        let (made, pointers, split) = (run.instances, run.pointers, run.split)
        // The root's spec keeps this plan alive, which holds the specs of the records.
        return Instance.makeBlock(pointer: UnsafeMutableRawPointer(bitPattern: pointers[steps.count - 1])!,
                                  spec: specs.retainedCopy(of: steps[steps.count - 1].spec!, in: .init(self)),
                                  words: blockWords) { block in
            block.copy(template.words)
            for patch in template.pointers { block.words[patch.word] = pointers[patch.step] }
            for patch in template.shared {
                if split & 1 << UInt64(patch.step) != 0 {
                    block.words[patch.word] = SplitEdge.take(made, patch.step)
                } else {
                    block.words[patch.word] = InstanceBlock.external(made.take(patch.step))
                }
            }
            // A local step's record holds its child's spec (the plan holds the others).
            if B.bindsLocals {
                for patch in template.localSpecs { block.words[patch.word] = InstanceBlock.ownedSpec(spec(patch.step, locals).retained()) }
            }
        }
    }

    /// Object mode: the plan's completion calls, in the order `Graph` would run them (recorded,
    /// `Recorder.declaredCompletions`), each given its declared targets' objects; the failure.
    @inline(__always)
    private func runCompletionCalls(_ run: RunState) -> TetherError? {
        let (made, words) = (run.objects, UnsafeMutableRawPointer(run.words))
        for call in completionCalls {
            for t in 0..<call.targets {
                words.storeBytes(of: UInt(bitPattern: made[objectInputs[call.firstTarget + t]].opaque), toByteOffset: t * 8, as: UInt.self)
            }
            let failure = made[call.step].borrow { object in
                call.completion.borrow { completion -> CallbackFailure? in
                    do throws(CallbackFailure) {
                        try completion.complete(object, with: ObjectArguments(words: words, count: call.targets, owns: false))
                    } catch { return error }
                    return nil
                }
            }
            if let failure { return steps[call.step].registration.borrow { Graph.completionFailure($0.key, call.number, failure) } }
        }
        return nil
    }

    /// What a run holds of steps `0..<count` and did not hand on, let go of last first (dependents
    /// before their dependencies, as a graph's `alive`: `ReferenceWords.releaseUnmoved(lastFirst:)`),
    /// a split reference still held (a step in `split`: `SplitEdge`) as one. Every run of a plan
    /// (`execute`, whatever its mode) lets go of what it made or took through this one function:
    /// on a failure, a decline, and what cached container steps left unused.
    private static func letGo<Element>(_ made: ReferenceWords<Element>, count: Int, split: UInt64 = 0) {
        guard split != 0 else { return made.releaseUnmoved(lastFirst: count) }
        for i in stride(from: count - 1, through: 0, by: -1) {
            if split & 1 << UInt64(i) == 0 {
                made.releaseUnmoved(i)
            } else if made.owns(i) {
                SplitEdge.release(Borrowed<Instance>(opaque: made[i].opaque))
            }
        }
    }

    /// Calls `body` with the step of every non-context input of step `i`, in slot order.
    @inline(__always)
    private func forEachEdge(of i: Int, slots: Int, _ body: (Int) -> Void) {
        let first = steps[i].firstInput
        for s in 0..<slots where Plan.isStep(inputs[first + s]) { body(inputs[first + s]) }
    }

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
    private func takeShared<B, M: RunMode>(_: M.Type, _ run: inout RunState, _ locals: Locals<B>, _ missing: inout Int,
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
    private func takeValue<B>(_ i: Int, _ locals: Locals<B>) -> Ref<Instance>? {
        // (Asked for under a singleton from further up: that one's container's, `Step.lookup`.)
        steps[i].registration.borrow { r in (self.lookup(of: i, locals.base) ?? locals.request.unsafelyUnwrapped.pointee.resolving).borrow { $0.providedValue(of: r) } }
    }

    /// A container-scoped leaf's (`inResolving`) instance cached in the resolving container (retained);
    /// nil: not cached (the plan declines).
    @inline(__always)
    private func takeInResolving<B>(_ shared: SharedStep, _ locals: Locals<B>) -> Ref<Instance>? {
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
    private func takeContainer<B, M: RunMode>(_: M.Type, _ run: RunState, _ locals: Locals<B>) -> Bool {
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
    private func claimContainerSteps<B, M: RunMode>(_: M.Type, _ run: RunState, _ locals: Locals<B>, _ into: GraphRun,
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
                graph.claimContainerStep(registration(i, locals), in: self.lookup(of: i, locals.base) ?? into.lookup) { self.askingPath(to: i) }
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
                        if failing == nil && !M.requests && !M.creates && !wideMasks {
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
        // creating run's a creating one, its claims redone). Not a creating or request run up to a cut.
        let switches = claims.failed == 0 && deferred.isEmpty && unlooked == 0 && !(M.cuts && (M.creates || M.requests))
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
    /// it: one found cached taken, as the build takes it where it asks, the steps under it not made (`skip`). Returns
    /// the claim's error, which the build reports there.
    @inline(never)
    private func claimLate<B, M: RunMode>(_: M.Type, at i: Int, _ late: inout B.Mask, _ skip: inout B.Mask, _ run: RunState,
                                          _ locals: Locals<B>, _ into: GraphRun, told: inout Int) -> TetherError? {
        for c in containerSteps where late.contains(c) {
            let first = firstAsked(c)
            guard first <= i else { continue }
            late.remove(c)
            // Taken from what a get built, or under a step taken so (or under a container step taken cached): not asked for here.
            if into.graph.borrow({ $0.replaySkips.contains(c) }) || skip.contains(c) { continue }
            let claimed = into.graph.borrow { g in
                g.claimLateContainerStep(registration(c, locals), in: self.lookup(of: c, locals.base) ?? into.lookup) { self.askingPath(to: c) }
            }
            switch claimed {
            case .failure(let error): return error
            case .success(nil): continue
            case .success(let hit?):
                run.instances.set(c, hit)
                B.Mask.set(c, in: claims(locals).kind(0))
                for j in first...c where j == c || descends(j, from: c) { skip.insert(j) }
                if let tracer = run.tracer {
                    tellHits(&told, to: first, run, Locals<OwnSteps>?.none)
                    told = c + 1
                    tracer.borrow { t in hit.borrow { h in t.emit(.cacheHit, h.key, h.pointer) } }
                }
            }
        }
        return nil
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
    private func madeContainer<B>(_ i: Int, _ locals: Locals<B>) {
        B.Mask.set(i, in: claims(locals).kind(2))
    }

    /// After a successful run: the container steps made go to the resolving container's cache,
    /// each ending its claim under the same lock. `made` still names each (the root or the block
    /// holds them).
    private func publishContainer<B>(_ run: RunState, _ locals: Locals<B>) {
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
    private func skipUnderCached<B>(_ claims: ContainerClaims<B.Mask>, _ locals: Locals<B>, endClaims: Bool) -> Bool {
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
    private func stepsUnder<B>(_ taken: B.Mask, held: B.Mask, _ locals: Locals<B>) -> (skip: B.Mask, used: B.Mask)? {
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

    /// Calls step `i`'s factory (the `n`th made step): the one place a run calls one. A C
    /// factory gets its inputs' pointers (a block's from `RunState.pointers`, which has every
    /// step's a block's factories may take; else their instances'), contexts and runtime arguments; in
    /// object mode an `ObjectFactory` gets its inputs' objects, each with the reference the run
    /// holds for it (taken over unless kept for a completion call, `Objects.keepBit`), and the
    /// result is the object, retained. A failure names the path to the step.
    @inline(__always)
    private func callFactory<B, M: RunMode>(_: M.Type, _ i: Int, _ n: Int, _ run: RunState,
                                            _ locals: Locals<B>) throws(TetherError) -> UnsafeMutableRawPointer {
        let failure: CallbackFailure
        if M.destination == .objects {
            let step = objectSteps[n]
            let (made, words) = (run.objects, UnsafeMutableRawPointer(run.words))
            for s in 0..<step.slots {  // wrapping arithmetic: the plan's indices are small
                let input = objectInputs[step.firstInput &+ s]
                let reference = input & Objects.keepBit != 0 ? made[input &>> 1].retained() : made.take(input &>> 1)
                words.storeBytes(of: reference.word, toByteOffset: s &* 8, as: UInt.self)
            }
            let arguments = ObjectArguments(words: words, count: step.slots, owns: true)
            let result = step.factory.borrow { factory -> Result<AnyObject, CallbackFailure> in
                do throws(CallbackFailure) { return .success(try factory.make(arguments)) } catch { return .failure(error) }
            }
            arguments.releaseUntaken()
            switch result {
            case .success(let object): return Ref(retaining: object).opaque
            case .failure(let error): failure = error
            }
        } else {
            let step = steps[i]
            let spec = spec(i, locals)
            let (words, made, pointers) = (run.words, run.instances, run.pointers)
            let outcome = registration(i, locals).borrow { registration -> Result<UnsafeMutableRawPointer, CallbackFailure> in
                let slots = registration.params.count
                for s in 0..<slots {
                    let input = inputs[step.firstInput + s]
                    words[s] = !Plan.isStep(input)
                        ? input == Plan.context ? UInt64(UInt(bitPattern: spec.borrow { $0.context }))
                            : locals.arguments.unsafelyUnwrapped[Plan.argumentNumber(input)].bits
                        : M.destination == .block ? UInt64(pointers[input]) : UInt64(UInt(bitPattern: made[input].borrow { $0.pointer }))
                }
                do throws(CallbackFailure) {
                    return .success(try registration.factoryReference.borrow { f throws(CallbackFailure) in try f.make(words, count: slots) })
                } catch {
                    return .failure(error)
                }
            }
            switch outcome {
            case .success(let pointer): return pointer
            case .failure(let error): failure = error
            }
        }
        throw factoryFailure(i, failure, locals)
    }

    /// Step `i` of a replay into a graph, some of its slots made per resolve (`Step.hasSlots`) or lazy
    /// cells waiting for it (`Step.bindsCells`), as
    /// `Graph.constructSpecial` and `enter` make it: weak handles, then lazy cells (each bound to
    /// the graph's instance made before, else waiting for it in the graph: `SlotInput`), ALL lists,
    /// and factory handles last (the factory owns them from here); then the instance, its strong
    /// edges in slot order with each ALL slot's items in its place, what the cells resolved during
    /// the factory as late edges, the cells' owner. A local step's are its child's registration's (`fits`).
    @inline(never)
    private func makeWithSlots<B, M: RunMode>(_: M.Type, _ i: Int, _ n: Int, _ run: RunState, _ specs: ThreadSpecs, _ locals: Locals<B>,
                                              _ into: GraphRun) throws(TetherError) -> Ref<Instance> {
        let instance = steps[i].hasSlots ? try makeSlots(M.self, i, n, run, specs, locals, into)
            : run.tracer != nil ? makeInstance(TracedIntoGraph.self, i, try callFactory(IntoGraph.self, i, n, run, locals), run, specs, locals)
                : makeInstance(IntoGraph.self, i, try callFactory(IntoGraph.self, i, n, run, locals), run, specs, locals)
        // Cells wait for this step's instance: bound now that it is made and their owners' are (`Graph.enter`).
        if steps[i].bindsCells { into.graph.borrow { $0.bindAwaiting(registration(i, locals), instance.borrowed) } }
        return instance
    }

    /// Whether every container step was taken cached (`claims`' word 0).
    @inline(__always)
    private func allContainersCached<Mask>(_ claims: ContainerClaims<Mask>) -> Bool {
        claims.any(0) && claims.load(0).count == containerSteps.count
    }

    /// The steps a run does not make for its container steps (a bit each): those taken cached, and the steps under
    /// them (every one cached: `underContainerMask`; some: `skipUnderCached`'s, word 4).
    @inline(__always)
    private func containerSkips<Mask>(_ claims: ContainerClaims<Mask>) -> Mask {
        var skip = claims.load(0)
        skip.formUnion(allContainersCached(claims) ? Mask.isWide ? Mask(underContainerSteps) : Mask(word: underContainerMask) : claims.load(4))
        return skip
    }

    /// Whether the build never takes shared step `j`, first asked for under a container step (`Step.askedUnderContainer`):
    /// no step the run makes (`containerSkips`: not under a container step taken cached) asks for it in a DEP, WEAK or ALL slot.
    private func underCached<B>(_ j: Int, _ locals: Locals<B>) -> Bool {
        untaken(j, skipping: containerSkips(claims(locals)), locals)
    }

    /// Whether step `j` is untaken: no step the run makes outside `skip` (a bit each) asks for it in a DEP, WEAK or ALL slot.
    private func untaken<B>(_ j: Int, skipping skip: B.Mask, _ locals: Locals<B>) -> Bool {
        for k in madeSteps where !skip.contains(k) {
            let first = steps[k].firstInput
            for s in 0..<registration(k, locals).borrow({ $0.params.count }) {
                let input = inputs[first + s]
                if input == j { return false }
                guard Plan.isSlot(input) else { continue }
                let n = Plan.slotNumber(input)
                if slots[n].kind == .weak && slots[n].step == j || slots[n].kind == .all && slots[n].items.contains(j) { return false }
            }
        }
        return true
    }

    /// Whether the build never takes any of shared steps `untaken` (a bit each, `takeShared`: not cached, each first
    /// asked for under a container step): those are claimed and each one over it taken cached (`underCached`). Out of
    /// line: a key gone under a cached container step is rare.
    @inline(never)
    private func untakenUnderCached<B>(_ untaken: B.Mask, _ locals: Locals<B>) -> Bool {
        // (A container step's claim failed, `words[3]`: the claims stopped there, the rest not known cached.)
        guard claims(locals).failed == 0 else { return false }
        var left = untaken
        while let j = left.first {
            left.remove(j)
            if !underCached(j, locals) { return false }
        }
        return true
    }

    /// The first of the values none provides (`absent`, a bit each) that the build asks for, the container steps claimed:
    /// one a step still made asks for (not `underCached`). Nil: none (only container steps taken cached asked for them);
    /// -1: a container step's claim failed (the claims stopped there, the rest not known cached). Out of line: rare.
    @inline(never)
    private func firstAbsent<B>(_ absent: B.Mask, _ locals: Locals<B>) -> Int? {
        guard claims(locals).failed == 0 else { return -1 }
        var left = absent
        while let j = left.first {
            left.remove(j)
            if !underCached(j, locals) { return j }
        }
        return nil
    }

    /// `makeWithSlots` of a step with slots made per resolve.
    private func makeSlots<B, M: RunMode>(_: M.Type, _ i: Int, _ n: Int, _ run: RunState, _ specs: ThreadSpecs, _ locals: Locals<B>,
                                          _ into: GraphRun) throws(TetherError) -> Ref<Instance> {
        var (made, words) = (run.instances, run.words)
        let (graph, lookup) = into
        let registration = registration(i, locals)
        let spec = spec(i, locals)
        let count = registration.borrow { $0.params.count }
        let first = steps[i].firstInput
        let bridge = lookup.borrow { $0.bridge }
        var edges: [Int] = []
        for s in 0..<count {
            let input = inputs[first + s]
            if Plan.isStep(input) {
                words[s] = UInt64(UInt(bitPattern: made[input].borrow { $0.pointer }))
                edges.append(input)
            } else if input == Plan.context {
                words[s] = UInt64(UInt(bitPattern: spec.borrow { $0.context }))
            } else if !Plan.isSlot(input) {
                words[s] = locals.arguments.unsafelyUnwrapped[Plan.argumentNumber(input)].bits
            } else {
                // The slot's fields read in place (`slots[n].kind`): a copy of the whole
                // `SlotInput` retains and releases its key and items per slot per resolve.
                let n = Plan.slotNumber(input)
                let kind = slots[n].kind
                if kind == .weak { words[s] = bridge.weakWord(made[slots[n].step].borrow { $0.weakRef }) }
                if kind == .all { edges += slots[n].items }
            }
        }
        var cells: [LazyCell] = []
        var lists: [SlotList] = []
        for s in 0..<count where Plan.isSlot(inputs[first + s]) {
            let n = Plan.slotNumber(inputs[first + s])
            let kind = slots[n].kind
            guard kind == .lazy || kind == .weakLazy else { continue }
            let cell = LazyCell(holding: slotLookup(n, locals.base) ?? lookup, key: slots[n].key!, isWeak: kind == .weakLazy)
            let step = slots[n].step
            // Not in the build's graph (yet): a step the run skipped (under a container step taken cached,
            // `skipUnderCached`; spared, `takePublished`) or makes after the owner (a container step not
            // taken cached), or a shared one only a container step taken cached asked for: the cell waits, as there.
            if step >= 0 && (made.isNone(step) || B.readsRequest && steps[step].askedUnderContainer && underCached(step, locals)) {
                graph.borrow { $0.awaitCell(self.registration(step, locals), cell) }
            } else if step >= 0 {
                cell.bind(to: made[step].object)
            } else if let awaited = slots[n].awaits {
                // One of a child's own registrations: the resolving child's in its slot.
                let local = B.bindsLocals ? slots[n].awaitsLocal : -1
                let registration = local >= 0 ? locals.base[local] : awaited
                // A resolver's request: the graph's instance made before it, bound as the build binds it (`rememberGraph`).
                if M.requests, let index = graph.borrow({ $0.builtIndex(registration) }) {
                    cell.bind(to: graph.borrow { $0.instance(index) }.object)
                } else {
                    graph.borrow { $0.awaitCell(registration, cell) }
                }
            }
            cells.append(cell)
            words[s] = try bridge.lazyWord(cell)
        }
        for s in 0..<count where Plan.isSlot(inputs[first + s]) {
            let n = Plan.slotNumber(inputs[first + s])
            guard slots[n].kind == .all else { continue }
            let list = SlotList(slots[n].items.map { item in made[item].borrow { $0.pointer } })
            words[s] = UInt64(UInt(bitPattern: list.address))
            lists.append(list)
        }
        for s in 0..<count where Plan.isSlot(inputs[first + s]) {
            let n = Plan.slotNumber(inputs[first + s])
            guard slots[n].kind == .factory else { continue }
            words[s] = bridge.factoryWord(FactoryCell(container: (slotLookup(n, locals.base) ?? lookup).object, key: slots[n].key!))
        }
        // A RESOLVER slot, last as `Graph.constructSpecial` makes it: the graph as the build's is while the factory runs.
        var resolver: (resolver: Resolver, word: Int, frames: Int, built: Int)?
        // A run gone on in a `PublishedVariant`: the steps made before this one are its order's (`n` the position).
        let variant = M.creates && !M.requests && steps[i].opensFrames ? graph.borrow { $0.progress }.pointee.variant : -1
        if steps[i].opensFrames {
            resolver = M.requests ? openAskedFrames(i, count, locals, into) : openFrames(M.self, i, n, variant, count, made, locals, into)
            words[resolver!.word] = bridge.resolverWord(resolver!.resolver)
        }
        let outcome = registration.borrow { r -> Result<UnsafeMutableRawPointer, CallbackFailure> in
            do throws(CallbackFailure) {
                return .success(try r.factoryReference.borrow { f throws(CallbackFailure) in try f.make(words, count: count) })
            } catch {
                return .failure(error)
            }
        }
        var pendingStrong: [Instance] = []
        if let (resolver, s, frames, built) = resolver {
            resolver.close()
            bridge.closeResolver(words[s])
            if M.requests {
                graph.borrow { $0.closeAskedFrames(frames, self, after: i) }
                pendingStrong = resolver.takePending()
            } else {
                graph.borrow { $0.closeReplayedFrames(frames, step: i, builtFrom: built) }
                graph.borrow { $0.progress }.pointee.plan = .init(self)
                // What its gets appended may have moved the graph's words.
                made = graph.borrow { $0.replayedWords }
                pendingStrong = resolver.takePending()
                takeBuilt(after: i, at: n, variant: variant, made, locals, graph)
            }
        }
        let pointer: UnsafeMutableRawPointer
        switch outcome {
        case .success(let p): pointer = p
        case .failure(let failure): throw factoryFailure(i, failure, locals)
        }
        // A lazy dependency the factory resolved already is a strong edge like the others, after those its
        // resolver's gets asked for (`Graph.constructSpecial`).
        let late = cells.isEmpty && lists.isEmpty && pendingStrong.isEmpty ? nil
            : LateEdges(strong: pendingStrong.isEmpty ? cells.compactMap(\.resolved) : pendingStrong + cells.compactMap(\.resolved),
                        lazyCells: cells, owned: lists)  // (no second array without a resolver's gets)
        // A local step's spec is its child's, made for this request: no thread copy (as `makeInstance`).
        let instance = Instance.make(pointer: pointer, spec: run.tracer.map { t in t.borrow { $0.spec(for: spec) } }
                                        ?? (!B.bindsLocals || steps[i].local < 0 ? specs.retainedCopy(of: spec) : spec.retained()),
                                     dependencies: edges.count,
                                     edge: { made.take(edges[$0]).word }, late: late)
        if !cells.isEmpty {
            let owner = instance.borrow { $0.weakRef }
            for cell in cells { cell.owner = owner }
        }
        return instance
    }

    /// Before the factory of step `i` (`count` slots), which has a RESOLVER slot: the graph as the build's is
    /// then (`Graph.openReplayedFrames`): the steps made so far entered (its table, its completion queue, its
    /// publications: in the order the build enters them, before what the resolver builds), the frames from the root down to
    /// the step open; the thread's progress names no plan meanwhile (those frames are what it constructs).
    /// The resolver's word is in its slot; returns it, the slot, the frames opened and where its gets' instances start.
    /// A run gone on in a `PublishedVariant` (`variant`, step `i` at position `n` of its order): the steps made before it
    /// in that order entered (the creation steps among them in step order: `publishedVariants`), that walk's askers' frames.
    @inline(never)
    private func openFrames<B, M: RunMode>(_: M.Type, _ i: Int, _ n: Int, _ variant: Int, _ count: Int, _ made: ReferenceWords<Instance>,
                                           _ locals: Locals<B>, _ into: GraphRun) -> (resolver: Resolver, word: Int, frames: Int, built: Int) {
        let (graph, lookup) = into
        let from = graph.borrow { $0.replayEntered }
        if B.readsRequest {
            // As the run's end enters them (`enterRequest`): container and creation steps queued in step order.
            enterRequest(into: graph.object, made, locals, lookup: lookup.object, creates: M.creates, from: from, to: i)
        } else if M.creates && variant >= 0 {
            // (The shared steps below it, as in step order; a step made later in this order may be below one entered.)
            let at = graph.borrow { $0.replayEnteredAt }
            enterCreated(into: graph.object, made, locals, lookup: lookup.object, from: from, to: max(from, i), variant: variant, positions: at..<n)
            graph.borrow { $0.pendCreated(self, from: at, to: n, container: lookup.object, order: publishedVariants[variant].order) }
        } else if M.creates {
            enterCreated(into: graph.object, made, locals, lookup: lookup.object, from: from, to: i, variant: -1)
            graph.borrow { $0.pendCreated(self, from: from, to: i, container: lookup.object) }
        } else {
            enterSteps(into: graph.object, locals, lookup: lookup.object, from: from, to: i)
        }
        graph.borrow { $0.replayEntered = max(from, i); $0.replayEnteredAt = n }
        let path = constructing(at: i, locals.base, parents: variant >= 0 ? publishedVariants[variant].parent : nil)
        let (frameLookup, built) = graph.borrow { $0.openReplayedFrames(path, from: lookup.object) }
        graph.borrow { $0.progress }.pointee.plan = nil
        let resolver = Resolver(graph: graph.object, lookup: frameLookup, owner: registration(i, locals))
        let first = steps[i].firstInput
        let s = (0..<count).first { Plan.isSlot(inputs[first + $0]) && slots[Plan.slotNumber(inputs[first + $0])].kind == .resolver }!
        return (resolver, s, path.count, built)
    }

    /// `openFrames` of a resolver's request (`Graph.runAsked`, mode `RequestIntoGraph`): the request's steps made so far
    /// entered and the frames from its root down to step `i` opened by the graph (`Graph.openAskedFrames`); its words
    /// stay its own (its gets append to `alive` only). Returns as `openFrames` (no `built`: a failed request keeps them).
    @inline(never)
    private func openAskedFrames<B>(_ i: Int, _ count: Int, _ locals: Locals<B>, _ into: GraphRun) -> (resolver: Resolver, word: Int, frames: Int, built: Int) {
        let (graph, lookup) = into
        let path = constructing(at: i, locals.base)
        let frameLookup = graph.borrow { $0.openAskedFrames(self, path, from: lookup.object) }
        let resolver = Resolver(graph: graph.object, lookup: frameLookup, owner: registration(i, locals))
        let first = steps[i].firstInput
        let s = (0..<count).first { Plan.isSlot(inputs[first + $0]) && slots[Plan.slotNumber(inputs[first + $0])].kind == .resolver }!
        return (resolver, s, path.count, 0)
    }

    /// After the factory of step `i`, whose resolver's gets may have built keys the plan makes later (graph-scoped
    /// or creation steps, not among the frames open then): as the build then takes each from its graph, the run
    /// takes it (`made`, a reference of its own) and makes none of the steps only it asked for (each step's
    /// first asker is after it: `Step.parent`), all noted in `Graph.replaySkips`: not made, not entered again.
    /// A run gone on in a `PublishedVariant` (`variant`, step `i` at position `n`): the steps after it in that order, its askers.
    @inline(never)
    private func takeBuilt<B>(after i: Int, at n: Int, variant: Int, _ made: ReferenceWords<Instance>, _ locals: Locals<B>,
                              _ graph: Borrowed<Graph>) {
        var skips = graph.borrow { $0.replaySkips }
        func take(_ j: Int) {
            guard steps[j].isKeyed && !steps[j].isShared && !skips.contains(j),
                  let index = graph.borrow({ $0.builtIndex(registration(j, locals)) }) else { return }
            made.set(j, graph.borrow { $0.instance(index) }.retained())
            skips.insert(j)
        }
        func under(_ j: Int, _ parent: Int) {
            if !steps[j].isShared && !skips.contains(j) && parent >= 0 && skips.contains(parent) { skips.insert(j) }
        }
        if variant >= 0 {
            let v = publishedVariants[variant]
            for p in (n + 1)..<v.order.count where v.skip & 1 << UInt(v.order[p]) == 0 { take(v.order[p]) }
            for p in stride(from: v.order.count - 1, to: n, by: -1) { under(v.order[p], v.parent[v.order[p]]) }
        } else {
            for j in (i + 1)..<steps.count { take(j) }
            for j in stride(from: steps.count - 2, to: i, by: -1) { under(j, steps[j].parent) }
        }
        graph.borrow { $0.replaySkips = skips }
    }

    /// A resolver's request (`Graph.runAsked`, a plan without slots made per resolve): the steps whose keys
    /// `graph` has made taken from it (`made`, a reference of their own), the steps only they asked for not
    /// made (each step's first asker is after it: `Step.parent`), as the build takes the graph's instance and
    /// never asks for what is below it. Returns those steps' bits (0: none). Nil, taking nothing: a key the
    /// graph constructs (the build reports the cycle), a plan past 64 steps with such a key, or a step below
    /// a taken one that a step made takes too (the build makes it later, where that one asks: another order).
    /// `locals`: a child's registrations bound to the local steps (`hasLocals`), whose keys the graph holds.
    /// `before`: a run up to a cut there (`Graph.meetAsked`) looks at the steps before it only (it makes none past it).
    func takeFromGraph(_ made: ReferenceWords<Instance>, _ graph: Graph, _ locals: UnsafeMutablePointer<Borrowed<Registration>>,
                       before end: Int) -> StepBits? {
        var taken = StepBits()
        for j in 0..<end where steps[j].isKeyed && !steps[j].isShared {
            if graph.constructs(registration(of: j, locals)) { return nil }
            guard graph.builtIndex(registration(of: j, locals)) != nil else { continue }
            // (A creating run's masks are one word unless it `wideMasks`, `takePublished`'s `taken`: a creation plan past
            // 64 steps with one-word masks takes none.)
            guard steps.count <= UInt.bitWidth || !createsShared || wideMasks else { return nil }
            taken.insert(j)
        }
        guard !taken.isEmpty else { return taken }
        guard let skips = stepsOnlyUnder(taken, from: 0) else { return nil }
        for j in 0..<steps.count where taken.contains(j) {
            made.set(j, graph.instance(graph.builtIndex(registration(of: j, locals))!).retained())
        }
        return skips
    }

    /// `takeFromGraph` amid a request's run, step `i`'s factory having made a request meanwhile that built into
    /// `graph` (`Graph.requestedMeanwhile`): the steps after `i` (not in `old`) whose keys the graph has now taken
    /// from it (`made`, a reference of their own), the steps only they asked for not made, as the build finds them
    /// where its walk asks (a RESOLVER slot's replay: `takeBuilt`). Returns those steps' bits; 0, taking nothing:
    /// none, a plan past 64 steps, or a step still made (or a slot) taking one only those asked for.
    func takeBuiltAsked(after i: Int, _ made: ReferenceWords<Instance>, _ graph: Graph, skips old: StepBits,
                        _ locals: UnsafeMutablePointer<Borrowed<Registration>>) -> StepBits {
        // (A creating run's masks are one word unless it `wideMasks`, `takePublished`'s `taken`.)
        guard steps.count <= UInt.bitWidth || !createsShared || wideMasks else { return StepBits() }
        var taken = StepBits()
        for j in (i + 1)..<steps.count where steps[j].isKeyed && !steps[j].isShared && !old.contains(j) {
            if graph.builtIndex(registration(of: j, locals)) != nil { taken.insert(j) }
        }
        guard !taken.isEmpty, let skips = stepsOnlyUnder(taken, from: i + 1, besides: old) else { return StepBits() }
        let below = skips.subtracting(taken)
        func isBelow(_ j: Int) -> Bool { j >= 0 && below.contains(j) }
        if slots.contains(where: { isBelow($0.step) || $0.items.contains(where: isBelow) }) { return StepBits() }
        for j in (i + 1)..<steps.count where taken.contains(j) {
            // A step whose word holds its instance already (a container step found cached at the claims, entered
            // early by `Graph.enterRunning`, so the graph has it): that reference let go of, the graph's taken.
            made.releaseUnmoved(j)
            made.set(j, graph.instance(graph.builtIndex(registration(of: j, locals))!).retained())
        }
        return skips
    }

    /// `taken` (keys the graph has) and the steps from `first` on only they asked for (each step's first asker is
    /// after it: `Step.parent`), for `takeFromGraph` and `takeBuiltAsked`; nil when a step from `first` on, not
    /// among those nor in `old`, takes one only they asked for (the build makes it later, where that one asks).
    private func stepsOnlyUnder(_ taken: StepBits, from first: Int, besides old: StepBits = StepBits()) -> StepBits? {
        var skips = taken
        for j in stride(from: steps.count - 2, through: first, by: -1) where !skips.contains(j) {
            if steps[j].parent >= 0 && skips.contains(steps[j].parent) { skips.insert(j) }
        }
        let below = skips.subtracting(taken)
        for j in first..<steps.count where !skips.contains(j) && !old.contains(j) {
            var asks = false
            forEachEdge(of: j, slots: steps[j].registration.borrow { $0.params.count }) { k in asks = asks || below.contains(k) }
            if asks { return nil }
        }
        return skips
    }

    /// After `takeFromGraph` (`skips` its bits): whether a slot made per resolve names a step the run does not
    /// make (a WEAK slot's, an ALL slot's item, a LAZY slot's bound step), which only a taken key asked for. Not a
    /// shared step: the run takes every one from its cache all the same (`takeShared`), the one the build's slot
    /// finds (a singleton the graph's key took: the same instance), or declines.
    func slotsMeetSkips(_ made: ReferenceWords<Instance>, _ skips: StepBits) -> Bool {
        func skipped(_ j: Int) -> Bool { j >= 0 && !steps[j].isShared && skips.contains(j) && made.isNone(j) }
        return slots.contains { skipped($0.step) || $0.items.contains(where: skipped) }
    }

    /// Step `i`'s factory failed: the error, naming the path to it. Out of line, so the run stays short.
    @inline(never)
    private func factoryFailure<B>(_ i: Int, _ failure: CallbackFailure, _ locals: Locals<B>) -> TetherError {
        registration(i, locals).borrow { Graph.factoryFailure($0, failure, path: path(to: i, locals)) }
    }

    /// Step `i`'s instance for the factory's result, its edges taking the inputs' references
    /// (split ones for the steps in `run.split`: `SplitEdge`).
    /// A traced mode's (`M.traced`) spec tells `run.tracer` of the destruction, as a build's (`Tracer.spec(for:)`).
    @inline(__always)
    private func makeInstance<B, M: RunMode>(_: M.Type, _ i: Int, _ pointer: UnsafeMutableRawPointer, _ run: RunState,
                                             _ specs: ThreadSpecs, _ locals: Locals<B>) -> Ref<Instance> {
        let (made, split) = (run.instances, run.split)
        var edges = 0
        forEachEdge(of: i, slots: registration(i, locals).borrow { $0.params.count }) { _ in edges += 1 }
        // `make` asks for edges 0, 1, ... in order: the non-context inputs in slot order.
        var next = steps[i].firstInput
        // A local step's spec is its child's, made for this request: no thread copy (`ThreadSpecs`) to share.
        let spec = M.traced ? run.tracer.unsafelyUnwrapped.borrow { $0.spec(for: self.spec(i, locals)) }
            : !B.bindsLocals || steps[i].local < 0 ? specs.retainedCopy(of: steps[i].spec!) : self.spec(i, locals).retained()
        return Instance.make(pointer: pointer, spec: spec, dependencies: edges, edge: { _ in
            while !Plan.isStep(inputs[next]) { next += 1 }
            next += 1
            let input = inputs[next - 1]
            return split & 1 << UInt64(input) != 0 ? SplitEdge.take(made, input) : made.take(input).word
        })
    }

    /// The registrations from the root down to step `i`, as `Graph`'s frames would hold them
    /// (`parents`: a `PublishedVariant`'s askers; nil: the plan's, `Step.parent`).
    func constructing(at i: Int, _ locals: UnsafeMutablePointer<Borrowed<Registration>>,
                      parents: UnsafeBufferPointer<Int>? = nil) -> [Borrowed<Registration>] {
        let locals = Locals<ChildSteps>(base: locals)
        var registrations: [Borrowed<Registration>] = []
        var step = i
        while step >= 0 {
            registrations.append(registration(step, locals))
            if steps[step].parent < 0, let failing = failing { return failing.opened(by: step, locals.base) + registrations.reversed() }
            step = parents?[step] ?? steps[step].parent
        }
        return registrations.reversed()
    }

    /// The keys of the frames a build has open when it asks for step `i` (a plan without local
    /// steps): from the root down to its first asker, for the messages of its claim.
    func askingPath(to i: Int) -> [Key] {
        // A failing plan's step asked for by a frame open when the walk met the error: those frames.
        if steps[i].parent < 0 { return failing.map { $0.opened(by: i).map { $0.borrow { $0.key } } } ?? [] }
        return path(to: steps[i].parent, Locals<OwnSteps>?.none)
    }

    /// The keys from the root down to step `i` of a plan without local steps, as `Graph`'s frames hold them when its factory returns.
    func keys(to i: Int) -> [Key] { path(to: i, Locals<OwnSteps>?.none) }
    /// `keys(to:)` of a run: a local step's key the resolving child's registration's (`locals`, written by `fits`).
    func keys(to i: Int, _ locals: UnsafeMutablePointer<Borrowed<Registration>>) -> [Key] { path(to: i, Locals<ChildSteps>(base: locals)) }

    /// The keys from the root down to step `i`, as `Graph`'s frames would hold them.
    /// `locals`: nil for a plan with no local steps.
    private func path<B>(to i: Int, _ locals: Locals<B>?) -> [Key] {
        var keys: [Key] = []
        var step = i
        while step >= 0 {
            keys.append((locals.map { registration(step, $0) } ?? steps[step].registration).borrow { $0.key })
            if steps[step].parent < 0, let failing = failing {
                return failing.opened(by: step).map { $0.borrow { $0.key } } + keys.reversed()
            }
            step = steps[step].parent
        }
        return keys.reversed()
    }
}

extension Plan.RunMode {
    static var creates: Bool { false }
    static var traced: Bool { false }
    static var cuts: Bool { false }
    static var requests: Bool { false }
}
