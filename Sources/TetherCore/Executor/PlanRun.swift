/// A plan's execution: the runs of a recorded plan (`Plan.swift` holds its format and its
/// recorder). Each run replays the steps in creation order, taking shared steps from their
/// caches and calling the made steps' factories.

/// Whether a replay takes a child's own registrations for local steps (`Plan.Locals`), and whether it
/// reads the request (`Plan.RequestRun`): specialized per type, so a plan without either reads neither.
protocol StepBinding {
    static var bindsLocals: Bool { get }
    static var readsRequest: Bool { get }
}
/// A plan's own steps only.
enum OwnSteps: StepBinding { static var bindsLocals: Bool { false }; static var readsRequest: Bool { false } }
/// A child's plan: local steps take the child's registrations by slot (`Plan.fits`).
enum ChildSteps: StepBinding { static var bindsLocals: Bool { true }; static var readsRequest: Bool { false } }
/// `OwnSteps` of a plan with value or container steps.
enum OwnRequestSteps: StepBinding { static var bindsLocals: Bool { false }; static var readsRequest: Bool { true } }
/// `ChildSteps` of a plan with value or container steps.
enum ChildRequestSteps: StepBinding { static var bindsLocals: Bool { true }; static var readsRequest: Bool { true } }

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
    }

    /// What a run of a plan that `readsRequest` reads: the resolving container (its values,
    /// the cache its container steps go to), the calling thread's `ThreadState` (the cells'
    /// owner) and the run's `ContainerClaims` words.
    struct RequestRun {
        let resolving: Borrowed<Container>
        let thread: UnsafeMutableRawPointer
        let claims: UnsafeMutablePointer<UInt>
    }

    /// A run's container steps, in 3 words: word 0 has the bit of each step taken from the
    /// resolving container's cache, word 1 the bit of each `containerSteps[n]` whose creation cell
    /// the run holds (`Container.claimScoped`) and has not published, word 2 the bit of each step
    /// made (read by a resolve nested on this thread, through the claim).
    private struct ContainerClaims {
        let words: UnsafeMutablePointer<UInt>
        @inline(__always) func isCached(_ step: Int) -> Bool { words[0] & 1 << UInt(step) != 0 }
        @inline(__always) func holds(_ n: Int) -> Bool { words[1] & 1 << UInt(n) != 0 }
    }

    /// Replays a plan that does not complete, on its own; the root carries a
    /// reference for the caller. Nil: the plan declined (a shared dependency is
    /// not cached), before any factory ran. `specs`: the calling thread's;
    /// `arguments`: the resolve's runtime arguments, checked against the root's params.
    /// `container`: the resolving one (its cache has the container steps' instances);
    /// `thread`: the calling thread's `ThreadState`.
    func run(_ specs: ThreadSpecs, _ progress: UnsafeMutablePointer<PlanProgress>,
             _ arguments: UnsafeBufferPointer<Argument>, from container: Container,
             thread: UnsafeMutableRawPointer) -> Result<Ref<Instance>?, TetherError> {
        if readsRequest { return runRequest(specs, progress, arguments, from: container, thread: thread) }
        if hasLocals { return run(specs, progress, Locals<ChildSteps>(base: progress.pointee.locals, arguments: arguments.baseAddress)) }
        return run(specs, progress, Locals<OwnSteps>(base: progress.pointee.locals, arguments: arguments.baseAddress))
    }

    /// `run` of a plan that `readsRequest`: its `RequestRun` and claims' words on the stack; the
    /// cells claimed are let go of once the run published what it made (or failed, or declined).
    @inline(never)
    private func runRequest(_ specs: ThreadSpecs, _ progress: UnsafeMutablePointer<PlanProgress>,
                            _ arguments: UnsafeBufferPointer<Argument>, from container: Container,
                            thread: UnsafeMutableRawPointer) -> Result<Ref<Instance>?, TetherError> {
        withUnsafeTemporaryAllocation(of: UInt.self, capacity: 3) { buffer in
            buffer.initialize(repeating: 0)
            var request = RequestRun(resolving: .init(container), thread: thread, claims: buffer.baseAddress!)
            let outcome = withUnsafeMutablePointer(to: &request) { request in
                if hasLocals {
                    return run(specs, progress, Locals<ChildRequestSteps>(base: progress.pointee.locals, arguments: arguments.baseAddress, request: request))
                }
                return run(specs, progress, Locals<OwnRequestSteps>(base: progress.pointee.locals, arguments: arguments.baseAddress, request: request))
            }
            // Claims a failed or declined run still holds (a run that succeeded published them).
            let claims = ContainerClaims(words: buffer.baseAddress!)
            if claims.words[1] != 0 {
                for n in 0..<containerSteps.count where claims.holds(n) {
                    steps[containerSteps[n]].registration.borrow { container.endScopedClaim($0, thread: thread) }
                }
            }
            return outcome
        }
    }

    @inline(__always)
    private func run<B>(_ specs: ThreadSpecs, _ progress: UnsafeMutablePointer<PlanProgress>,
                        _ locals: Locals<B>) -> Result<Ref<Instance>?, TetherError> {
        if blockWords > 0 { return runBlock(specs, progress, locals) }
        let count = steps.count
        return withUnsafeTemporaryAllocation(of: UInt.self, capacity: Plan.maxSteps) { buffer in
            let made = ReferenceWords<Instance>(base: buffer.baseAddress!)
            made.base.initialize(repeating: ReferenceWords<Instance>.none, count: count)
            let outcome = replay(into: made, specs, progress, locals)
            if case .success(true) = outcome {
                // Every other step is some step's input, so its instance went to
                // that step's edges: nothing is left to release.
                return .success(made.take(count - 1))
            }
            Plan.letGo(made, count: count)
            return outcome.map { _ in nil }
        }
    }

    /// Makes every step's instance into `made` (a word per step, holding nothing
    /// yet), in the order `Graph` would append them to its `alive`. False: the
    /// plan declined (a shared dependency is not cached) before any factory ran.
    /// Unless true, `made` holds what was taken or made, for the caller to release.
    /// `progress`: the thread's, where the step whose factory runs is noted (`Reentry`).
    @inline(__always)
    func replay(into made: ReferenceWords<Instance>, _ specs: ThreadSpecs, _ progress: UnsafeMutablePointer<PlanProgress>,
                _ arguments: UnsafeBufferPointer<Argument>) -> Result<Bool, TetherError> {
        if hasLocals {
            return replay(into: made, specs, progress, Locals<ChildSteps>(base: progress.pointee.locals, arguments: arguments.baseAddress))
        }
        return replay(into: made, specs, progress, Locals<OwnSteps>(base: progress.pointee.locals, arguments: arguments.baseAddress))
    }

    @inline(__always)
    private func replay<B>(into made: ReferenceWords<Instance>, _ specs: ThreadSpecs,
                           _ progress: UnsafeMutablePointer<PlanProgress>, _ locals: Locals<B>) -> Result<Bool, TetherError> {
        if hasShared && !takeShared(made, locals) { return .success(false) }
        let claims = B.readsRequest && hasContainer ? ContainerClaims(words: locals.request.unsafelyUnwrapped.pointee.claims) : nil
        if claims != nil && !takeContainer(made, locals, pointers: nil) { return .success(false) }
        progress.pointee.plan = .init(self)
        defer { progress.pointee.plan = nil }  // before the caller releases anything (destructors may resolve)
        return withUnsafeTemporaryAllocation(of: UInt64.self, capacity: Plan.maxSlots) { words in
            for i in madeSteps {
                let isContainer = claims != nil && steps[i].isContainer
                if isContainer && claims!.isCached(i) { continue }
                progress.pointee.step = i
                do throws(TetherError) { made.set(i, try make(i, words.baseAddress!, made, specs, locals)) }
                catch { return .failure(error) }
                if isContainer { madeContainer(i, locals) }
            }
            if claims != nil { publishContainer(made, locals) }
            return .success(true)
        }
    }

    /// `run` for a graph of several instances, made as one block: the factories
    /// are called as in `replay`, but only the root becomes an `Instance`; the
    /// others become records in its allocation (see `InstanceBlock`). Nothing
    /// else can reach them: without callbacks or resolvers, the only references
    /// they ever have are the edges inside the graph.
    private func runBlock<B>(_ specs: ThreadSpecs, _ progress: UnsafeMutablePointer<PlanProgress>, _ locals: Locals<B>) -> Result<Ref<Instance>?, TetherError> {
        // Two buffers of at most 1 KiB: each is small enough to live on the stack.
        withUnsafeTemporaryAllocation(of: UInt.self, capacity: 2 * Plan.maxSteps) { steps in
            withUnsafeTemporaryAllocation(of: UInt64.self, capacity: Plan.maxSlots) { words in
                runBlock(ReferenceWords(base: steps.baseAddress!), steps.baseAddress! + Plan.maxSteps, words.baseAddress!, specs, progress, locals)
            }
        }
    }

    /// `runBlock` with its buffers: per step, the shared instances taken (`made`)
    /// and the factories' results.
    @inline(__always)
    private func runBlock<B>(_ made: ReferenceWords<Instance>, _ pointers: UnsafeMutablePointer<UInt>,
                             _ words: UnsafeMutablePointer<UInt64>, _ specs: ThreadSpecs,
                             _ progress: UnsafeMutablePointer<PlanProgress>, _ locals: Locals<B>) -> Result<Ref<Instance>?, TetherError> {
        let count = steps.count
        made.base.initialize(repeating: ReferenceWords<Instance>.none, count: count)
        // The steps (bits) whose instance `made` holds by a split reference (`SplitEdge`).
        var split: UInt64 = 0
        if hasShared && !takeShared(made, locals, pointers: pointers, split: &split)
            || B.readsRequest && hasContainer && !takeContainer(made, locals, pointers: pointers) {
            Plan.letGo(made, count: count, split: split)
            return .success(nil)
        }
        progress.pointee.plan = .init(self)
        // Read once: a plan without container steps checks no step for one.
        let claims = B.readsRequest && hasContainer ? ContainerClaims(words: locals.request.unsafelyUnwrapped.pointee.claims) : nil
        for i in madeSteps {
            let isContainer = claims != nil && steps[i].isContainer
            if isContainer && claims!.isCached(i) { continue }
            progress.pointee.step = i
            let outcome: Result<UnsafeMutableRawPointer, TetherError>
            if isContainer {
                // Its own instance (the container caches it), over shared and container steps only.
                do throws(TetherError) {
                    let instance = try make(i, words, made, specs, locals, split: split)
                    made.set(i, instance)
                    madeContainer(i, locals)
                    outcome = .success(instance.borrow { $0.pointer })
                } catch {
                    outcome = .failure(error)
                }
            } else {
                outcome = callFactory(i, words, locals) { UnsafeMutableRawPointer(bitPattern: pointers[$0]).unsafelyUnwrapped }
            }
            switch outcome {
            case .success(let pointer):
                pointers[i] = UInt(bitPattern: pointer)
            case .failure(let error):
                progress.pointee.plan = nil
                // Leaves what `replay` would have: an instance for every step made so far,
                // its edges ordinary references (a container step's made already keeps its split ones).
                for j in 0..<count where split & 1 << UInt64(j) != 0 && made.owns(j) { SplitEdge.makeOrdinary(made[j]) }
                for j in 0..<i where !steps[j].isShared && !steps[j].isContainer {
                    made.set(j, makeInstance(j, UnsafeMutableRawPointer(bitPattern: pointers[j])!, made, specs, locals))
                }
                Plan.letGo(made, count: count)
                return .failure(error)
            }
        }
        progress.pointee.plan = nil
        let root = count - 1
        defer { if claims != nil { publishContainer(made, locals, split: split) } }  // the block holds them meanwhile
        // The root's spec keeps this plan alive, which holds the specs of the records.
        return .success(Instance.makeBlock(pointer: UnsafeMutableRawPointer(bitPattern: pointers[root])!,
                                           spec: specs.retainedCopy(of: steps[root].spec!, in: .init(self)),
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
        })
    }

    /// Resolves a plan that `makesObjects` with no `Instance`: the root's object,
    /// owned by the caller. A dependency goes to its first dependent's factory
    /// with the reference made for it (later ones get new references), except
    /// the objects completion callbacks complete or target: the plan keeps its
    /// own reference to those until the callbacks ran (a factory may drop its
    /// dependency). `.declined`: a shared dependency is not cached (before any factory ran).
    @inline(__always)
    func runObjects(_ progress: UnsafeMutablePointer<PlanProgress>) -> ObjectOutcome {
        // One buffer (less than 1 KiB, on the stack): a word per step, then a word per slot.
        withUnsafeTemporaryAllocation(of: UInt.self, capacity: Plan.maxSteps + Plan.maxSlots) { buffer in
            runObjects(ReferenceWords(base: buffer.baseAddress!), UnsafeMutableRawPointer(buffer.baseAddress! + Plan.maxSteps), progress)
        }
    }

    @inline(__always)
    private func runObjects(_ made: ReferenceWords<AnyObject>, _ words: UnsafeMutableRawPointer,
                            _ progress: UnsafeMutablePointer<PlanProgress>) -> ObjectOutcome {
        let count = steps.count
        made.base.initialize(repeating: ReferenceWords<AnyObject>.none, count: count)
        for shared in sharedSteps {  // an object plan has no local steps (`Recorder.objects`)
            guard let hit = steps[shared.step].registration.borrow({ $0.cached(shared.scope) }) else {
                release(made)
                return .declined
            }
            made.set(shared.step, Borrowed<AnyObject>(opaque: hit.pointer).retained())
        }
        progress.pointee.plan = .init(self)
        for step in objectSteps {
            progress.pointee.step = step.index
            for s in 0..<step.slots {  // wrapping arithmetic: the plan's indices are small
                let input = objectInputs[step.firstInput &+ s]
                let reference = input & Objects.keepBit != 0 ? made[input &>> 1].retained() : made.take(input &>> 1)
                words.storeBytes(of: reference.word, toByteOffset: s &* 8, as: UInt.self)
            }
            let arguments = ObjectArguments(words: words, count: step.slots, owns: true)
            let failure = step.factory.borrow { factory -> CallbackFailure? in
                do throws(CallbackFailure) { made.set(step.index, .init(retaining: try factory.make(arguments))) } catch { return error }
                return nil
            }
            arguments.releaseUntaken()
            if let failure {
                progress.pointee.plan = nil
                return .failure(abandon(made, step: step.index, failure, completion: nil))
            }
        }
        progress.pointee.plan = nil
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
            if let failure { return .failure(abandon(made, step: call.step, failure, completion: call.number)) }
        }
        let root = made.take(count - 1)
        // Without callbacks every other object went to its first dependent (each step is some step's input).
        if !completionCalls.isEmpty { release(made) }
        return .root(root.take())
    }

    /// Releases what `made` still holds (`letGo`).
    private func release(_ made: ReferenceWords<AnyObject>) {
        Plan.letGo(made, count: steps.count)
    }

    /// What a run holds of steps `0..<count` and did not hand on, let go of last first (dependents
    /// before their dependencies, as a graph's `alive`: `ReferenceWords.releaseUnmoved(lastFirst:)`),
    /// a split reference still held (a step in `split`: `SplitEdge`) as one. Every run of a plan
    /// (`run`, `runBlock`, `runObjects`) lets go of what it made or took through this one function:
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

    /// An object resolve that failed in step `step`'s factory, or its completion
    /// callback `completion`: releases what it made; the error. Out of line, so the resolve path stays short.
    @inline(never)
    private func abandon(_ made: ReferenceWords<AnyObject>, step: Int, _ failure: CallbackFailure, completion: Int?) -> TetherError {
        release(made)
        return steps[step].registration.borrow { registration in
            if let completion { return Graph.completionFailure(registration.key, completion, failure) }
            return Graph.factoryFailure(registration, failure, path: path(to: step, Locals<OwnSteps>?.none))
        }
    }

    /// Calls `body` with the step of every non-context input of step `i`, in slot order.
    @inline(__always)
    private func forEachEdge(of i: Int, slots: Int, _ body: (Int) -> Void) {
        let first = steps[i].firstInput
        for s in 0..<slots where Plan.isStep(inputs[first + s]) { body(inputs[first + s]) }
    }

    /// Takes every shared dependency from its cache (and notes its pointer in
    /// `pointers`, when given); false when one is missing.
    private func takeShared<B>(_ made: ReferenceWords<Instance>, _ locals: Locals<B>, pointers: UnsafeMutablePointer<UInt>? = nil) -> Bool {
        for shared in sharedSteps {
            guard let hit = B.readsRequest && shared.isValue ? takeValue(shared.step, locals)
                    : registration(shared.step, locals).borrow({ $0.cachedRetained(shared.scope) }) else { return false }
            made.set(shared.step, hit)
            pointers?[shared.step] = UInt(bitPattern: hit.borrow { $0.pointer })
        }
        return true
    }

    /// `takeShared` for a block: a published singleton is taken by a split reference
    /// (`Registration.cachedSplitReference`) when its slot has not let go, its step's bit set in `split`.
    private func takeShared<B>(_ made: ReferenceWords<Instance>, _ locals: Locals<B>, pointers: UnsafeMutablePointer<UInt>,
                               split: inout UInt64) -> Bool {
        for shared in sharedSteps {
            let registration = registration(shared.step, locals)
            let hit: Ref<Instance>
            if shared.splits, let reference = registration.borrow({ $0.cachedSplitReference() }) {
                split |= 1 << UInt64(shared.step)
                hit = reference
            } else {
                guard let retained = B.readsRequest && shared.isValue ? takeValue(shared.step, locals)
                        : registration.borrow({ $0.cachedRetained(shared.scope) }) else { return false }
                hit = retained
            }
            made.set(shared.step, hit)
            pointers[shared.step] = UInt(bitPattern: hit.borrow { $0.pointer })
        }
        return true
    }

    /// The value the resolving container provides for value step `i` (retained); nil: none does
    /// (the plan declines, and `Graph` reports it missing).
    @inline(__always)
    private func takeValue<B>(_ i: Int, _ locals: Locals<B>) -> Ref<Instance>? {
        steps[i].registration.borrow { r in locals.request.unsafelyUnwrapped.pointee.resolving.borrow { $0.providedValue(of: r) } }
    }

    /// Takes every container step's instance from the resolving container's cache, or claims its
    /// creation cell there, under the one lock of the lookup (`Container.claimScoped`; noted in
    /// `pointers`, when given, as `takeShared`). False, before any factory ran: a cell is held
    /// (this thread's resolve further out, or another thread's), or some are cached and others
    /// not (`Graph` makes only what the cached ones do not already hold).
    private func takeContainer<B>(_ made: ReferenceWords<Instance>, _ locals: Locals<B>, pointers: UnsafeMutablePointer<UInt>?) -> Bool {
        let request = locals.request.unsafelyUnwrapped.pointee
        let claims = request.claims
        let container = request.resolving
        var cached = 0
        for n in 0..<containerSteps.count {
            let i = containerSteps[n]
            let found = steps[i].registration.borrow { r in
                container.borrow { $0.claimScoped(r, thread: request.thread, madeWord: claims + 2, madeBit: 1 << UInt(i)) }
            }
            switch found {
            case .published(let hit):
                made.set(i, hit)
                pointers?[i] = UInt(bitPattern: hit.borrow { $0.pointer })
                claims[0] |= 1 << UInt(i)
                cached += 1
            case .claimed:
                claims[1] |= 1 << UInt(n)
            case .heldHere, .heldElsewhere:
                return false
            }
        }
        return cached == 0 || cached == containerSteps.count
    }

    /// Container step `i` made: its claim now holds a made instance (a resolve nested on this
    /// thread that needs it is refused as unfinished, as under `Graph`, `SharedCache.claim`).
    @inline(__always)
    private func madeContainer<B>(_ i: Int, _ locals: Locals<B>) {
        locals.request.unsafelyUnwrapped.pointee.claims[2] |= 1 << UInt(i)
    }

    /// After a successful run: the container steps made go to the resolving container's cache,
    /// each ending its claim under the same lock. `made` still names each (the graph holds them).
    /// `split`: the steps `made` holds by split references (`runBlock`).
    private func publishContainer<B>(_ made: ReferenceWords<Instance>, _ locals: Locals<B>, split: UInt64 = 0) {
        let request = locals.request.unsafelyUnwrapped.pointee
        let claims = ContainerClaims(words: request.claims)
        // Cached ones were not made: what was taken for them alone is let go of (the root is the caller's).
        if claims.words[0] != 0 {
            Plan.letGo(made, count: steps.count - 1, split: split)
            return
        }
        for n in 0..<containerSteps.count where claims.holds(n) {
            let i = containerSteps[n]
            steps[i].registration.borrow { r in
                made[i].borrow { instance in request.resolving.borrow { _ = $0.publishScoped(r, instance, endingClaimOf: request.thread) } }
            }
            claims.words[1] &= ~(1 << UInt(n))
        }
    }

    /// Calls step `i`'s factory and makes its instance, its edges taking the inputs' references
    /// (`split`: the steps `made` holds by split references, which its edges keep as such).
    @inline(__always)
    private func make<B>(_ i: Int, _ words: UnsafeMutablePointer<UInt64>, _ made: ReferenceWords<Instance>,
                         _ specs: ThreadSpecs, _ locals: Locals<B>, split: UInt64 = 0) throws(TetherError) -> Ref<Instance> {
        let pointer = try callFactory(i, words, locals) { made[$0].borrow { $0.pointer } }.get()
        return makeInstance(i, pointer, made, specs, locals, split: split)
    }

    /// Calls step `i`'s factory with its inputs' pointers (`pointer(step)`), contexts and runtime arguments.
    @inline(__always)
    private func callFactory<B>(_ i: Int, _ words: UnsafeMutablePointer<UInt64>, _ locals: Locals<B>,
                             _ pointer: (Int) -> UnsafeMutableRawPointer) -> Result<UnsafeMutableRawPointer, TetherError> {
        let step = steps[i]
        let spec = spec(i, locals)
        return registration(i, locals).borrow { registration in
            let slots = registration.params.count
            for s in 0..<slots {
                let input = inputs[step.firstInput + s]
                words[s] = Plan.isStep(input) ? UInt64(UInt(bitPattern: pointer(input)))
                    : input == Plan.context ? UInt64(UInt(bitPattern: spec.borrow { $0.context }))
                    : locals.arguments.unsafelyUnwrapped[Plan.argumentNumber(input)].bits
            }
            do throws(CallbackFailure) {
                return .success(try registration.factoryReference.borrow { f throws(CallbackFailure) in try f.make(words, count: slots) })
            } catch {
                return .failure(Graph.factoryFailure(registration, error, path: path(to: i, locals)))
            }
        }
    }

    /// Step `i`'s instance for the factory's result, its edges taking the inputs' references
    /// (split ones for the steps in `split`: `SplitEdge`).
    @inline(__always)
    private func makeInstance<B>(_ i: Int, _ pointer: UnsafeMutableRawPointer, _ made: ReferenceWords<Instance>,
                              _ specs: ThreadSpecs, _ locals: Locals<B>, split: UInt64 = 0) -> Ref<Instance> {
        var edges = 0
        forEachEdge(of: i, slots: registration(i, locals).borrow { $0.params.count }) { _ in edges += 1 }
        // `make` asks for edges 0, 1, ... in order: the non-context inputs in slot order.
        var next = steps[i].firstInput
        // A local step's spec is its child's, made for this request: no thread copy (`ThreadSpecs`) to share.
        let spec = !B.bindsLocals || steps[i].local < 0 ? specs.retainedCopy(of: steps[i].spec!) : self.spec(i, locals).retained()
        return Instance.make(pointer: pointer, spec: spec, dependencies: edges, edge: { _ in
            while !Plan.isStep(inputs[next]) { next += 1 }
            next += 1
            let input = inputs[next - 1]
            return split & 1 << UInt64(input) != 0 ? SplitEdge.take(made, input) : made.take(input).word
        })
    }

    /// The registrations from the root down to step `i`, as `Graph`'s frames would hold them.
    func constructing(at i: Int, _ locals: UnsafeMutablePointer<Borrowed<Registration>>) -> [Borrowed<Registration>] {
        let locals = Locals<ChildSteps>(base: locals)
        var registrations: [Borrowed<Registration>] = []
        var step = i
        while step >= 0 {
            registrations.append(registration(step, locals))
            step = steps[step].parent
        }
        return registrations.reversed()
    }

    /// The keys from the root down to step `i`, as `Graph`'s frames would hold them.
    /// `locals`: nil for a plan with no local steps.
    private func path<B>(to i: Int, _ locals: Locals<B>?) -> [Key] {
        var keys: [Key] = []
        var step = i
        while step >= 0 {
            keys.append((locals.map { registration(step, $0) } ?? steps[step].registration).borrow { $0.key })
            step = steps[step].parent
        }
        return keys.reversed()
    }
}
