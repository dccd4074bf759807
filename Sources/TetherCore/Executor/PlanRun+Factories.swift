// A step's factory call and its slots.

extension Plan {
    /// Calls step `i`'s factory (the `n`th made step): the one place a run calls one. A C
    /// factory gets its inputs' pointers (a block's from `RunState.pointers`, which has every
    /// step's a block's factories may take; else their instances'), contexts and runtime arguments; in
    /// object mode an `ObjectFactory` gets its inputs' objects, each with the reference the run
    /// holds for it (taken over unless kept for a completion call, `Objects.keepBit`), and the
    /// result is the object, retained. A failure names the path to the step.
    @inline(__always)
    func callFactory<B, M: RunMode>(_: M.Type, _ i: Int, _ n: Int, _ run: RunState,
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
    func makeWithSlots<B, M: RunMode>(_: M.Type, _ i: Int, _ n: Int, _ run: RunState, _ specs: ThreadSpecs, _ locals: Locals<B>,
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
    func allContainersCached<Mask>(_ claims: ContainerClaims<Mask>) -> Bool {
        claims.any(0) && claims.load(0).count == containerSteps.count
    }

    /// The steps a run does not make for its container steps (a bit each): those taken cached, and the steps under
    /// them (every one cached: `underContainerMask`; some: `skipUnderCached`'s, word 4).
    @inline(__always)
    func containerSkips<Mask>(_ claims: ContainerClaims<Mask>) -> Mask {
        var skip = claims.load(0)
        skip.formUnion(allContainersCached(claims) ? Mask.isWide ? Mask(underContainerSteps) : Mask(word: underContainerMask) : claims.load(4))
        return skip
    }

    /// Whether the build never takes shared step `j`, first asked for under a container step (`Step.askedUnderContainer`):
    /// no step the run makes (`containerSkips`: not under a container step taken cached) asks for it in a DEP, WEAK or ALL slot.
    func underCached<B>(_ j: Int, _ locals: Locals<B>) -> Bool {
        untaken(j, skipping: containerSkips(claims(locals)), locals)
    }

    /// Whether step `j` is untaken: no step the run makes outside `skip` (a bit each) asks for it in a DEP, WEAK or ALL slot.
    func untaken<B>(_ j: Int, skipping skip: B.Mask, _ locals: Locals<B>) -> Bool {
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
    func untakenUnderCached<B>(_ untaken: B.Mask, _ locals: Locals<B>) -> Bool {
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
    /// one a step still made asks for (not `underCached`). Nil: none (only container steps taken cached asked for them).
    /// A container step's claim failed (`graph`: a replay's, `claims.failed` the step where the build asks for it): the
    /// claims stopped there, those before it known (they go in the order the build asks), so only a value before that
    /// step counts, one its first askers ask for (none skipped: the build's walk reaches it there); -1 (the build): one
    /// only a step asking later takes. Out of line: rare.
    @inline(never)
    func firstAbsent<B>(_ absent: B.Mask, _ locals: Locals<B>, graph: Bool) -> Int? {
        let failed = claims(locals).failed
        guard failed == 0 || graph else { return -1 }
        var left = absent
        while let j = left.first, failed == 0 || UInt(j) + 1 < failed {
            left.remove(j)
            if underCached(j, locals) { continue }
            guard failed != 0 else { return j }
            let skip = containerSkips(claims(locals))
            var k = steps[j].parent
            while k >= 0 && !skip.contains(k) { k = steps[k].parent }
            return k < 0 ? j : -1
        }
        return nil
    }

    /// `makeWithSlots` of a step with slots made per resolve.
    func makeSlots<B, M: RunMode>(_: M.Type, _ i: Int, _ n: Int, _ run: RunState, _ specs: ThreadSpecs, _ locals: Locals<B>,
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
}
