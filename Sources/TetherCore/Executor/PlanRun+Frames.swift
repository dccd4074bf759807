// Frames a run opens for a factory's resolver, what it takes from a graph, and paths for messages.

extension Plan {
    /// Before the factory of step `i` (`count` slots), which has a RESOLVER slot: the graph as the build's is
    /// then (`Graph.openReplayedFrames`): the steps made so far entered (its table, its completion queue, its
    /// publications: in the order the build enters them, before what the resolver builds), the frames from the root down to
    /// the step open; the thread's progress names no plan meanwhile (those frames are what it constructs).
    /// The resolver's word is in its slot; returns it, the slot, the frames opened and where its gets' instances start.
    /// A run gone on in a `PublishedVariant` (`variant`, step `i` at position `n` of its order): the steps made before it
    /// in that order entered (the creation steps among them in step order: `publishedVariants`), that walk's askers' frames.
    @inline(never)
    func openFrames<B, M: RunMode>(_: M.Type, _ i: Int, _ n: Int, _ variant: Int, _ count: Int, _ made: ReferenceWords<Instance>,
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
    func openAskedFrames<B>(_ i: Int, _ count: Int, _ locals: Locals<B>, _ into: GraphRun) -> (resolver: Resolver, word: Int, frames: Int, built: Int) {
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
    func takeBuilt<B>(after i: Int, at n: Int, variant: Int, _ made: ReferenceWords<Instance>, _ locals: Locals<B>,
                              _ graph: Borrowed<Graph>) {
        var skips = graph.borrow { $0.replaySkips }
        func take(_ j: Int) {
            guard steps[j].isKeyed && !steps[j].isShared && !skips.contains(j),
                  let index = graph.borrow({ $0.builtIndex(registration(j, locals)) }) else { return }
            made.set(j, graph.borrow { $0.instance(index) }.retained())
            skips.insert(j)
        }
        if variant >= 0 {
            let v = publishedVariants[variant]
            for p in (n + 1)..<v.order.count where v.skip & 1 << UInt(v.order[p]) == 0 { take(v.order[p]) }
            for p in stride(from: v.order.count - 1, to: n, by: -1) {
                let (j, parent) = (v.order[p], v.parent[v.order[p]])
                if !steps[j].isShared && !skips.contains(j) && parent >= 0 && skips.contains(parent) { skips.insert(j) }
            }
        } else {
            for j in (i + 1)..<steps.count { take(j) }
            // (A step a step still made takes too is made: a container step claimed late taken cached, `claimLate`'s rule.)
            skips = stepsOnlyUnder(skips, from: i + 1, keeping: true, shared: false)!
        }
        graph.borrow { $0.replaySkips = skips }
    }

    /// A resolver's request (`Graph.runAsked`): the steps whose keys `graph` has made taken from it (`made`, a
    /// reference of their own), the steps only they asked for not made (each step's first asker is after it:
    /// `Step.parent`), as the build takes the graph's instance and never asks for what is below it. Returns those
    /// steps' bits (none: empty) and, where a step below a taken one is made all the same (`walkedWithGraphKeys`),
    /// the parents the build's walk gives (nil: the plan's). Fails, taking nothing: a key the graph constructs (the
    /// build reports the cycle), or a step below a taken one that a step made takes too (the build makes it later,
    /// where that one asks: another order) where that walk does not fit (`requestInGraph`), or a slot naming a step
    /// not made there (`requestSlots`: the build's slot makes it).
    /// `locals`: a child's registrations bound to the local steps (`hasLocals`), whose keys the graph holds.
    /// `before`: a run up to a cut there (`Graph.meetAsked`) looks at the steps before it only (it makes none past it).
    /// `request`: the request's lookup (a value's, a container-scoped leaf's, where the step names none).
    func takeFromGraph(_ made: ReferenceWords<Instance>, _ graph: Graph, _ locals: UnsafeMutablePointer<Borrowed<Registration>>,
                       before end: Int, from request: Container) -> Result<(skips: StepBits, parents: [Int]?), Decline> {
        var taken = StepBits()
        for j in 0..<end where steps[j].isKeyed && !steps[j].isShared {
            if graph.constructs(registration(of: j, locals)) { return .failure(.requestInGraph) }
            guard graph.builtIndex(registration(of: j, locals)) != nil else { continue }
            taken.insert(j)
        }
        guard !taken.isEmpty else { return .success((taken, nil)) }
        var skips = stepsOnlyUnder(taken, from: 0)
        var parents: [Int]?
        var declined: Decline? = skips == nil ? .requestInGraph : slotsMeetSkips(skips!, taken: taken) ? .requestSlots : nil
        if declined != nil && end == steps.count, let walked = walkedWithGraphKeys(taken, graph, locals, from: request) {
            (skips, parents, declined) = (walked.skips, walked.parents, nil)
        }
        if let declined { return .failure(declined) }
        for j in 0..<steps.count where taken.contains(j) {
            made.set(j, graph.instance(graph.builtIndex(registration(of: j, locals))!).retained())
        }
        return .success((skips!, parents))
    }

    /// `takeFromGraph` where skipping what only the taken keys asked for is not the build's walk (a made step, or a
    /// WEAK or ALL slot, takes a step one of them asked for first: built before branch reqgraph, `requestInGraph`,
    /// `requestSlots`): the build's walk with the taken keys as leaves (`Plan.walk`, slots walked where they are filled),
    /// its made steps the plan's not skipped, in step order (each made where the plan has it; its asker the walk's:
    /// `parents`, for the frames and paths the run gives, nil where every one is the plan's). The steps it does not
    /// reach are skipped. A value or container-scoped leaf: the one the run takes (`takeShared` takes each) must be
    /// there and, where the graph has the key, its instance (the build takes the graph's). Nil: none of that holds, a
    /// slot names a step skipped, or a plan with creation, container or failing steps (a shape this does not model).
    func walkedWithGraphKeys(_ taken: StepBits, _ graph: Graph, _ locals: UnsafeMutablePointer<Borrowed<Registration>>,
                             from request: Container) -> (skips: StepBits, parents: [Int]?)? {
        guard !createsShared && !hasContainer && !fails, cachedVariant == nil else { return nil }
        let (all, edges) = (Array(steps), Array(inputs))
        guard Plan.walk(all, edges, leaves: [], slots: slots)?.order == Array(steps.indices),
              let walked = Plan.walk(all, edges, leaves: steps.indices.filter { taken.contains($0) }, slots: slots) else { return nil }
        var skips = taken
        var reached = [Bool](repeating: false, count: steps.count)
        for j in walked.order { reached[j] = true }
        for j in steps.indices where !reached[j] { skips.insert(j) }
        guard walked.order.filter({ !steps[$0].isShared && !taken.contains($0) }) == madeSteps.filter({ !skips.contains($0) }),
              !slotsMeetSkips(skips, taken: taken) else { return nil }
        for shared in sharedSteps where shared.isValue || shared.inResolving {
            let r = registration(of: shared.step, locals)
            let from = lookup(of: shared.step, locals)?.object ?? request
            let hit = r.borrow { shared.isValue ? from.providedValue(of: $0) : SharedCache.cached($0, shared.scope, in: from) }
            defer { hit?.release() }
            guard let hit else { return nil }
            if let index = graph.builtIndex(r), graph.instance(index).opaque != hit.opaque { return nil }
        }
        let parents = steps.indices.map { skips.contains($0) || steps[$0].isShared ? steps[$0].parent : walked.parent[$0] }
        return (skips, parents.elementsEqual(steps.lazy.map(\.parent)) ? nil : parents)
    }

    /// This plan with `parents` for its steps' (`walkedWithGraphKeys`): a request's run of it asks for each step
    /// where the build's walk does (its frames, its paths), held by the thread till the run ends.
    func withParents(_ parents: [Int]) -> Plan {
        var copied = Array(steps)
        // (`init` counts each step's takers again.)
        for j in copied.indices { (copied[j].parent, copied[j].blockCount) = (parents[j], 0) }
        return Plan(steps: copied, inputs: Array(inputs), configuration: configuration, objects: nil, component: Array(component),
                    componentParams: Array(componentParams), slots: slots, cachedVariant: cachedVariant,
                    needsContainersUncached: needsContainersUncached)
    }

    /// `takeFromGraph` amid a request's run, step `i`'s factory having made a request meanwhile that built into
    /// `graph` (`Graph.requestedMeanwhile`): the steps after `i` (not in `old`) whose keys the graph has now taken
    /// from it (`made`, a reference of their own), the steps only they asked for not made, as the build finds them
    /// where its walk asks (a RESOLVER slot's replay: `takeBuilt`). Returns those steps' bits; 0, taking nothing:
    /// none, or a step still made (or a slot) taking one only those asked for.
    func takeBuiltAsked(after i: Int, _ made: ReferenceWords<Instance>, _ graph: Graph, skips old: StepBits,
                        _ locals: UnsafeMutablePointer<Borrowed<Registration>>) -> StepBits {
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

    /// `taken` (keys the graph has, a container step taken cached) and the steps from `first` on only they asked for
    /// (each step's first asker is after it: `Step.parent`; `shared`: shared steps too), for `takeFromGraph` and
    /// `takeBuiltAsked`; nil when a step from `first` on, not among those nor in `old`, takes one only they asked for
    /// (the build makes it later, where that one asks). `keeping`: that one is not among them, made where the plan has
    /// it (`takeBuilt`, `claimLate`: the build's order where `lateHitsKeepOrder` holds), and so are what it asked for.
    /// Not keeping, a singleton or weak step taken from its cache stays among them all the same: the run takes it
    /// (`takeShared`), the instance the build finds in the graph where a step still made asks for it.
    func stepsOnlyUnder(_ taken: StepBits, from first: Int, besides old: StepBits = StepBits(), keeping: Bool = false,
                        shared: Bool = true) -> StepBits? {
        var skips = taken, asked = StepBits()
        func takenFromCache(_ k: Int) -> Bool {
            steps[k].isShared && steps[k].fromSharedCache
        }
        // (Takers after what they take: what a step still made asks for is known before that step is reached.)
        for j in stride(from: steps.count - 1, through: first, by: -1) where !skips.contains(j) {
            if steps[j].parent >= 0 && skips.contains(steps[j].parent) && (shared || !steps[j].isShared) {
                if !asked.contains(j) || !keeping && takenFromCache(j) { skips.insert(j); continue }
                if !keeping { return nil }
            }
            // (A shared step is a leaf: no inputs of its own.)
            if !old.contains(j) && !steps[j].isShared { forEachEdge(of: j, slots: steps[j].slotCount) { asked.insert($0) } }
        }
        return skips
    }

    /// In `takeFromGraph` (`skips` its bits, `taken` the keys the graph has): whether a slot made per resolve names a
    /// step the run does not make (a WEAK slot's, an ALL slot's item, a LAZY slot's bound step), which only a taken key
    /// asked for. Not a shared step: the run takes every one from its cache all the same (`takeShared`), the one the
    /// build's slot finds (a singleton the graph's key took: the same instance), or declines. Not a slot whose owner is
    /// skipped too: never made, as the build takes that owner's key from the graph (or never asks for it).
    func slotsMeetSkips(_ skips: StepBits, taken: StepBits) -> Bool {
        func skipped(_ j: Int) -> Bool { j >= 0 && !steps[j].isShared && skips.contains(j) && !taken.contains(j) }
        return slots.contains { ($0.owner < 0 || !skips.contains($0.owner)) && (skipped($0.step) || $0.items.contains(where: skipped)) }
    }

    /// Step `i`'s factory failed: the error, naming the path to it. Out of line, so the run stays short.
    @inline(never)
    func factoryFailure<B>(_ i: Int, _ failure: CallbackFailure, _ locals: Locals<B>) -> TetherError {
        registration(i, locals).borrow { Graph.factoryFailure($0, failure, path: path(to: i, locals)) }
    }

    /// Step `i`'s instance for the factory's result, its edges taking the inputs' references
    /// (split ones for the steps in `run.split`: `SplitEdge`).
    /// A traced mode's (`M.traced`) spec tells `run.tracer` of the destruction, as a build's (`Tracer.spec(for:)`).
    @inline(__always)
    func makeInstance<B, M: RunMode>(_: M.Type, _ i: Int, _ pointer: UnsafeMutableRawPointer, _ run: RunState,
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

    /// The keys of the frames a build has open when it asks for step `i`: from the root down to its first
    /// asker, for the messages of its claim. `locals`: a child's plan's, written by `fits` (a local step's or open
    /// frame's registration the resolving child's; the recorded one before branch localreg, read after its child went).
    func askingPath(to i: Int, _ locals: UnsafeMutablePointer<Borrowed<Registration>>) -> [Key] {
        // A failing plan's step asked for by a frame open when the walk met the error: those frames.
        if steps[i].parent < 0 { return failing.map { $0.opened(by: i, locals).map { $0.borrow { $0.key } } } ?? [] }
        return keys(to: steps[i].parent, locals)
    }

    /// The keys from the root down to step `i` in a run, as `Graph`'s frames hold them when its factory returns: a local
    /// step's key the resolving child's registration's (`locals`, written by `fits`).
    func keys(to i: Int, _ locals: UnsafeMutablePointer<Borrowed<Registration>>) -> [Key] { path(to: i, Locals<ChildSteps>(base: locals)) }

    /// The keys from the root down to step `i`, as `Graph`'s frames would hold them.
    func path<B>(to i: Int, _ locals: Locals<B>) -> [Key] {
        var keys: [Key] = []
        var step = i
        while step >= 0 {
            keys.append(registration(step, locals).borrow { $0.key })
            if steps[step].parent < 0, let failing = failing {
                return failing.opened(by: step, locals.base).map { $0.borrow { $0.key } } + keys.reversed()
            }
            step = steps[step].parent
        }
        return keys.reversed()
    }
}
