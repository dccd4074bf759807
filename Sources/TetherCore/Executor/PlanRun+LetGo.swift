// What a run lets go of, the block it makes, and its completion calls.

extension Plan {
    /// What a run holds of its steps and did not hand on, let go of (`Plan.letGo`); a graph's
    /// words then hold nothing, so its own abort finds them empty. Out of line: the cold path.
    /// An instance run's references moved into a dependent's edge are taken back first (as `Graph.abort`'s
    /// `reown(from:)`; edges take them only once a factory succeeded), so each instance goes in its own
    /// place, last made first, not with its dependent.
    @inline(never)
    func letGo<M: RunMode>(_: M.Type, _ run: inout RunState, count: Int) {
        if M.destination == .objects {
            Plan.letGo(run.objects, count: count)
        } else {
            for i in 0..<count where run.split & 1 << UInt64(i) == 0 { run.instances.reown(i) }
            Plan.letGo(run.instances, count: count, split: run.split)
            run.split = 0
        }
        if M.destination == .graph { run.made.update(repeating: ReferenceWords<Instance>.none, count: count) }
    }

    /// A failed run's claims, released before what it made is let go of, as `Graph.abort` releases its cells before
    /// it lets go of `alive`: a destructor that runs then holds no cell (another thread's resolve of a key claimed
    /// beside those waits for no destructor of a key it does not ask for; one resolving on this thread claims anew).
    /// Into a graph: what it pended and its cells (`Graph.abort`'s, which then finds none); a request's run alone: its
    /// container steps' claims (`runRequest` ends those a declined run holds). Out of line: the cold path.
    @inline(never)
    func releaseClaims<B, M: RunMode>(_: M.Type, _ claims: ContainerClaims<B.Mask>?, _ locals: Locals<B>, _ graph: GraphRun?) {
        if M.destination == .graph { return graph.unsafelyUnwrapped.graph.borrow { $0.unpendShared(); $0.releaseCells(failed: true) } }
        guard let claims, claims.any(1) else { return }
        let request = locals.request.unsafelyUnwrapped.pointee
        for n in 0..<containerSteps.count where claims.holds(n) {
            registration(containerSteps[n], locals).borrow { r in request.resolving.borrow { $0.endScopedClaim(r, thread: request.thread) } }
        }
        claims.kind(1).update(repeating: 0, count: claims.width)
    }

    /// Before `letGo` of a run gone on in a `PublishedVariant`'s order, failed at its `n`th made step: the steps
    /// made before it let go of last made first, as the build's abort does (that order is not step order there).
    @inline(never)
    func letGoMade(_ order: UnsafeBufferPointer<Int>, before n: Int, _ run: RunState) {
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
    func letGoBuilt(_ run: inout RunState, count: Int, _ graph: Borrowed<Graph>, order: UnsafeBufferPointer<Int>? = nil) {
        let (words, built) = graph.borrow { ($0.replayedWords, $0.replayBuilt) }
        run.made = words.base
        run.pointers = words.base
        // Every one reowned before any is released (`ReferenceStack.reown(from:)`): a release may free what a moved word names.
        for k in 0..<count { words.reown(k) }
        for range in built { for j in range.from ..< range.to { words.reown(j) } }
        words.releaseUnmoved(lastFirst: count, built: built, end: built[built.count - 1].to, order: order)
    }

    /// A block run that failed in step `i`: leaves what a run of separate instances would have,
    /// an instance for every step made before it, its edges ordinary references (a container
    /// step's made already keeps its split ones), for `letGo`.
    @inline(never)
    func recordsAsInstances<B>(before i: Int, _ run: inout RunState, _ specs: ThreadSpecs, _ locals: Locals<B>) {
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
    func makeBlock<B>(_ run: RunState, _ specs: ThreadSpecs, _ locals: Locals<B>) -> Ref<Instance> {
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
    func runCompletionCalls(_ run: RunState) -> TetherError? {
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
    static func letGo<Element>(_ made: ReferenceWords<Element>, count: Int, split: UInt64 = 0) {
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
    func forEachEdge(of i: Int, slots: Int, _ body: (Int) -> Void) {
        let first = steps[i].firstInput
        for s in 0..<slots where Plan.isStep(inputs[first + s]) { body(inputs[first + s]) }
    }
}
