/// A plan's execution: the runs of a recorded plan (`Plan.swift` holds its format, `Plan+Recorder.swift`
/// its recorder). Each run replays the steps in creation order, taking shared steps from their
/// caches and calling the made steps' factories. This file holds the runs' entry points; the step
/// loop is `PlanRun+StepLoop.swift`, the other `PlanRun+*.swift` files hold its parts by concern.

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
    func registration<B>(_ i: Int, _ locals: Locals<B>) -> Borrowed<Registration> {
        guard B.bindsLocals, steps[i].local >= 0 else { return steps[i].registration }
        return locals.base[steps[i].local]
    }

    /// A made step's spec: a local step's is its child's registration's current one.
    @inline(__always)
    func spec<B>(_ i: Int, _ locals: Locals<B>) -> Borrowed<InstanceSpec> {
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
    struct ContainerClaims<Mask: StepMask> {
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
    func claims<B>(_ locals: Locals<B>) -> ContainerClaims<B.Mask> { .init(words: locals.claims, steps: steps.count) }

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
    func runRequest<M: RunMode>(_: M.Type, _ specs: ThreadSpecs, _ progress: UnsafeMutablePointer<PlanProgress>,
                            _ arguments: UnsafeBufferPointer<Argument>, from container: Container,
                            thread: UnsafeMutableRawPointer, tracer: Borrowed<Tracer>? = nil) -> Result<Ref<Instance>?, TetherError> {
        if wideMasks { return runWideRequest(M.self, specs, progress, arguments, from: container, thread: thread, tracer: tracer) }
        var waits = 0
        let builtSince = progress.pointee.builtSince  // before a factory's nested resolve writes it
        // (Traced: `runTraced`'s tracer, known there, so the traced copy inlines no untraced run.)
        let traced: Borrowed<Tracer>? = M.traced ? tracer.unsafelyUnwrapped : nil
        while true {
            var request = RequestRun(resolving: .init(container), thread: thread, builtSince: builtSince)
            let outcome = withUnsafeMutablePointer(to: &request) { request in
                if hasLocals {
                    return run(specs, progress, Locals<ChildRequestSteps>(base: progress.pointee.locals, arguments: arguments.baseAddress, request: request),
                               tracer: traced)
                }
                return run(specs, progress, Locals<OwnRequestSteps>(base: progress.pointee.locals, arguments: arguments.baseAddress, request: request),
                           tracer: traced)
            }
            // Claims a failed or declined run still holds (a run that succeeded published them).
            if request.words.1 != 0 { endClaims(WordMask(word: request.words.1), progress, from: container, thread: thread) }
            // Declined for the container steps found cached (word 0 first: a run that took none tests nothing more), every
            // one looked at (no cell held elsewhere): the plan for that set (`variant(forCached:)`: every one cached, the
            // `cachedVariant`; some, which the run could not skip to the build's order, the `mixedVariant`).
            if request.words.0 != 0, case .success(nil) = outcome, progress.pointee.decline == .containerHeld, request.words.3 == 0,
               request.words.0.nonzeroBitCount + request.words.1.nonzeroBitCount == containerSteps.count,
               let ran = runVariant(request.words.0, specs, progress, arguments, from: container, thread: thread,
                                    tracer: traced) {
                return ran
            }
            guard request.words.3 != 0, waitedForHeld(request.words.3, &waits, progress, thread: thread) else { return outcome }
        }
    }

    /// `runRequest` of a plan that `wideMasks`: its claims' words (`RequestRun.wide`) in a buffer sized for it; no
    /// `mixedVariant` (their key is a word). Out of line, as `runLarge`.
    @inline(never) @_semantics("optimize.sil.specialize.generic.never")  // rare: one copy (`executeRare`)
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
    func endClaims<Mask: StepMask>(_ held: Mask, _ progress: UnsafeMutablePointer<PlanProgress>, from container: Container,
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
    func runVariant(_ cached: UInt, _ specs: ThreadSpecs, _ progress: UnsafeMutablePointer<PlanProgress>,
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
    func run<B>(_ specs: ThreadSpecs, _ progress: UnsafeMutablePointer<PlanProgress>,
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
    @inline(never) @_semantics("optimize.sil.specialize.generic.never")  // rare: one copy (`executeRare`)
    func runLarge<B>(_ specs: ThreadSpecs, _ progress: UnsafeMutablePointer<PlanProgress>,
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
            let outcome = execute(M.self, &run, specs, progress, locals, rare: large).map { $0 ? run.instances.take(steps.count - 1) : nil }
            // The root holds them meanwhile.
            if B.readsRequest && hasContainer, case .success(_?) = outcome { publishContainer(run, locals) }
            return outcome
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
    func runLargeObjects(_ progress: UnsafeMutablePointer<PlanProgress>) -> ObjectOutcome {
        runObjects(progress, large: true)
    }

    @inline(__always)
    func runObjects(_ progress: UnsafeMutablePointer<PlanProgress>, large: Bool) -> ObjectOutcome {
        // An object plan has no local steps and no arguments (`Recorder.objects`).
        let locals = Locals<OwnSteps>(base: progress.pointee.locals)
        return withRunState(SwiftObjects.self, large: large) { run in
            switch execute(SwiftObjects.self, &run, ThreadSpecs?.none, progress, locals, rare: large) {
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
}

