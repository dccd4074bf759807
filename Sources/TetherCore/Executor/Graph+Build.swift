import Synchronization

// The build: the graph's own walk of a resolve (`build`, `CreationWalk`), frames filled and factories called
// as it goes; a resolve or request no plan serves reaches it only through `buildDeclined` (Graph+Replay.swift).
// What plan runs use too lives apart (since branch isolate): the frames (Graph+Frames.swift), what the graph
// takes rather than makes (`existing`, Graph+Existing.swift), the claims (Graph+Claims.swift).

extension Graph {
    /// Builds (or finds in this graph or a cache) the instance of `root`; returns
    /// its index in `alive` (the graph holds it until the resolve returns). The order is
    /// `CreationOrder.walk`'s; this graph fills the slots and calls the factories.
    ///
    /// The walk works on unretained references (frames, registrations, specs,
    /// instances): every one is kept alive by its container or by `alive`, and
    /// reference counting here would be most of a resolve's cost.
    func build(_ rootRegistration: Registration, from container: Container,
               arguments: UnsafeBufferPointer<Argument> = .init(start: nil, count: 0)) throws(TetherError) -> Int {
        let root = Borrowed(rootRegistration)
        let rootSpec = rootRegistration.specReference
        if let found = try existing(root, rootSpec, key: rootRegistration.key, in: .init(container)) { return found }
        // Only the root's frame has arguments; a build nested in a factory of this one has its own.
        let outerArguments = buildArguments
        buildArguments = arguments
        defer { buildArguments = outerArguments }
        return try CreationOrder.walk(self, entering: Entry(registration: root, spec: rootSpec, lookup: .init(container)))
    }

    /// A lazy cell remembers this graph's instance of its key: the one the graph
    /// has now, else the one it makes later (an instance under construction, like
    /// the owner of the slot's dependent, or one of a key not transient).
    func rememberGraph(of cell: LazyCell, lookup: Borrowed<Container>) {
        guard let registration = lookup.borrow({ $0.unretainedRegistration(for: cell.key) }) else { return }
        let state = table.state(registration)
        if state == GraphTable.constructing
            || state == GraphTable.absent && registration.borrow({ $0.spec.scope.isKeyedInGraph }) {
            awaitingCells.append((registration, cell))
        } else if state != GraphTable.absent {
            cell.bind(to: alive[GraphTable.index(state)].object)
        }
    }

    /// Frame `top`'s next slot gets `dep`'s instance: from this graph or a cache, else a frame is entered to build it.
    @inline(__always)
    func depend(on dep: Borrowed<Registration>, key: Key, _ top: Int, _ lookup: Borrowed<Container>,
                        strong: Bool) throws(TetherError) -> CreationOrder.Fill<Int, Entry> {
        let spec = dep.borrow { $0.specReference }
        // Before the graph's own instances: one the graph made with arguments does not make the key a dependency.
        guard !dep.borrow({ $0.hasArguments }) else {
            let path = path
            throw Graph.argumentDependency(key, neededBy: pathText(path), path: path)
        }
        if strong && frames[top].refusesCaptives { try refuseCaptive(top, spec, key) }
        if let found = try existing(dep, spec, key: key, in: lookup) { return .found(found) }
        return .enter(Entry(registration: dep, spec: spec, lookup: lookup))
    }

    /// Strict mode: frame `top`'s instance would hold `key`'s (of `spec`) strongly; refused when that captures it.
    @inline(never)
    func refuseCaptive(_ top: Int, _ spec: Borrowed<InstanceSpec>, _ key: Key) throws(TetherError) {
        let holderScope = frames[top].spec.borrow { $0.scope }
        let targetScope = spec.borrow { $0.scope }
        guard holderScope.captures(targetScope) else { return }
        let holder = frames[top].registration.borrow { $0.key }
        let via = frames.count > 1 ? " (while resolving \(pathText(path)))" : ""
        throw captiveError(holder: holder, holderScope, target: key, targetScope, via: via, note: strictNote)
    }

    /// A frame to open (`CreationWalk.Entry`): the registration to make, its spec, where it is looked up from.
    struct Entry {
        let registration: Borrowed<Registration>
        let spec: Borrowed<InstanceSpec>
        let lookup: Borrowed<Container>
    }

    /// Hands the instance at `instance` (in `alive`) to slot `slot`, a `param`, of frame `index`.
    @inline(__always)
    func attach(_ instance: Int, _ param: Param, at slot: Int, to index: Int) {
        let wordIndex = frames[index].wordBase + slot
        switch param {
        case .weak:
            weakSlots.append((index, wordIndex, alive[instance].borrow { $0.weakRef }))
        case .all:
            // An item: a strong edge like a DEP's; the slot is filled when the list is (`fill`).
            dependencyStack.append(instance)
            allSlots[allSlots.count - 1].next += 1
        case .dependency, .lazy, .weakLazy, .context, .resolver, .argument, .factory:  // only DEP slots take an instance here
            words[wordIndex] = UInt64(UInt(bitPattern: alive[instance].borrow { $0.pointer }))
            dependencyStack.append(instance)
        }
    }

    /// Where the slots of frame `index` start in `slots` (they are the last ones:
    /// deeper frames were constructed and popped, taking theirs).
    @inline(__always)
    private func firstSlot<T>(of index: Int, in slots: [T], frame: (T) -> Int) -> Int {
        var from = slots.count
        while from > 0 && frame(slots[from - 1]) == index { from -= 1 }
        return from
    }

    /// Calls the factory of frame `index` and enters the new instance into the
    /// graph; returns its index in `alive`. Traced: around the call, then the new instance's edges.
    func construct(_ index: Int) throws(TetherError) -> Int {
        guard let tracer else { return try constructUntraced(index) }
        let key = frames[index].registration.borrow { $0.key }
        tracer.emit(.factoryCall, key)
        let made: Int
        do throws(TetherError) { made = try constructUntraced(index) } catch {
            tracer.emit(.factoryReturn, key, status: error.code)
            throw error
        }
        let weak = weakSlots[firstSlot(of: index, in: weakSlots) { $0.frame }...].compactMap { $0.2.upgrade() }
        tracer.constructed(key, alive[made].object, weak: weak)
        return made
    }

    private func constructUntraced(_ index: Int) throws(TetherError) -> Int {
        let registration = frames[index].registration
        let count = frames[index].params.count
        let wordBase = frames[index].wordBase
        let special = frames[index].resolverSlot != nil
            || (!weakSlots.isEmpty && weakSlots[weakSlots.count - 1].frame == index)
            || (!lazySlots.isEmpty && lazySlots[lazySlots.count - 1].frame == index)
            || (!allSlots.isEmpty && allSlots[allSlots.count - 1].frame == index)
            || (!factorySlots.isEmpty && factorySlots[factorySlots.count - 1].frame == index)
        let pointer: UnsafeMutableRawPointer
        var late: LateEdges?
        if special {
            (pointer, late) = try constructSpecial(index)
        } else {
            let words = words.address(of: wordBase)
            userCode += 1
            let outcome = registration.borrow { r -> Result<UnsafeMutableRawPointer, CallbackFailure> in
                do throws(CallbackFailure) { return .success(try r.factoryReference.borrow { f throws(CallbackFailure) in try f.make(words, count: count) }) }
                catch { return .failure(error) }
            }
            userCode -= 1
            switch outcome {
            case .success(let p): pointer = p
            case .failure(let failure): throw factoryFailure(registration.object, failure)
            }
        }
        return enter(index, pointer, late)
    }

    /// `construct` for a frame with weak, lazy, resolver, ALL or FACTORY slots (rare): their
    /// words are made only now that the factory will really run, so a failure
    /// earlier leaks nothing.
    func constructSpecial(_ index: Int) throws(TetherError) -> (UnsafeMutableRawPointer, LateEdges?) {
        let registration = frames[index].registration.object
        let lookup = frames[index].lookup.object
        let wordBase = frames[index].wordBase
        let resolverSlot = frames[index].resolverSlot
        let weakFrom = firstSlot(of: index, in: weakSlots) { $0.frame }
        let lazyFrom = firstSlot(of: index, in: lazySlots) { $0.frame }
        let bridge = lookup.bridge
        for (_, i, ref) in weakSlots[weakFrom...] { words[i] = bridge.weakWord(ref) }
        for (_, i, cell) in lazySlots[lazyFrom...] { words[i] = try bridge.lazyWord(cell) }
        var lists: [SlotList] = []
        for entry in allSlots[firstSlot(of: index, in: allSlots) { $0.frame }...] {
            let list = SlotList((0..<entry.registrations.count).map { alive[dependencyStack[entry.first + $0]].borrow { $0.pointer } })
            words[entry.index] = UInt64(UInt(bitPattern: list.address))
            lists.append(list)
        }
        // Last: from here the factory owns them, whatever it returns.
        for (_, i, key) in factorySlots[firstSlot(of: index, in: factorySlots) { $0.frame }...] {
            words[i] = bridge.factoryWord(FactoryCell(container: lookup, key: key))
        }
        var resolver: Resolver?
        if let i = resolverSlot {
            let r = Resolver(graph: self, lookup: frames[index].lookup, owner: frames[index].registration)
            words[i] = bridge.resolverWord(r)
            resolver = r
        }
        let count = registration.params.count
        // A copy: a factory with a resolver may build more and grow `words`.
        userCode += 1
        let outcome: Result<UnsafeMutableRawPointer, CallbackFailure> = withUnsafeTemporaryAllocation(of: UInt64.self, capacity: max(count, 1)) { buffer in
            for i in 0..<count { buffer[i] = words[wordBase + i] }
            do throws(CallbackFailure) {
                return .success(try registration.factoryReference.borrow { f throws(CallbackFailure) in try f.make(buffer.baseAddress!, count: count) })
            }
            catch { return .failure(error) }
        }
        userCode -= 1
        if let resolver, let i = resolverSlot {
            resolver.close()
            bridge.closeResolver(words[i])
        }
        let pointer: UnsafeMutableRawPointer
        switch outcome {
        case .success(let p): pointer = p
        case .failure(let failure): throw factoryFailure(registration, failure)
        }
        var pendingStrong = resolver?.takePending() ?? []
        guard lazyFrom < lazySlots.count || !pendingStrong.isEmpty || !lists.isEmpty else { return (pointer, nil) }
        // A lazy dependency the factory resolved already is a strong edge like
        // the others, seen by later retain-cycle checks (nothing reaches the
        // new instance yet, so it closes none now).
        let cells = lazySlots[lazyFrom...].map(\.cell)
        for cell in cells { if let resolved = cell.resolved { pendingStrong.append(resolved) } }
        return (pointer, LateEdges(strong: pendingStrong, lazyCells: cells, owned: lists))
    }

    func factoryFailure(_ registration: Registration, _ failure: CallbackFailure) -> TetherError {
        Graph.factoryFailure(registration, failure, path: path)
    }

    /// Wraps the factory's result of frame `index` in an instance and enters it into the graph.
    func enter(_ index: Int, _ pointer: UnsafeMutableRawPointer, _ late: LateEdges?) -> Int {
        let registration = frames[index].registration
        let spec = frames[index].spec
        let first = frames[index].dependencyBase
        let edgeCount = dependencyStack.count - first
        let copy = tracer == nil ? specs.retainedCopy(of: spec) : tracer!.spec(for: spec)
        let reference = Instance.make(pointer: pointer, spec: copy, dependencies: edgeCount,
                                      reference: { alive.take(dependencyStack[first + $0]) }, late: late)
        let aliveIndex = alive.append(reference)  // the allocation's reference is the graph's
        if let late, !late.lazyCells.isEmpty {
            let owner = reference.borrow { $0.weakRef }
            for cell in late.lazyCells { cell.owner = owner }
        }
        let (scope, completes) = spec.borrow { ($0.scope, $0.completionCount > 0) }
        if scope.isKeyedInGraph { table.set(registration, GraphTable.state(aliveIndex)) }
        if scope.isKeyedInGraph || scope.isShared { keptMade &+= 1 }
        if !awaitingCells.isEmpty { bindAwaiting(registration, reference.borrowed) }
        if scope.isShared {
            let instance = reference.object
            let lookup = frames[index].lookup
            pendingShared.append((registration, instance, scope.isPerResolvingContainer ? lookup : nil))
            // Its cell (none when made under an outer resolve's: `createUnderOuter`) now holds a made instance.
            let key = registration.borrow { r in lookup.borrow { SharedCache.cellKey(r, scope, in: $0) } }
            for cell in cells where cell.key == key { cell.made = true }
            if !outerCells.isEmpty { madeUnderOuterCell(key) }
        }
        if completes {
            var (cause, via) = (-1, -1)
            if currentCause != -1 { (cause, via) = recordCause() }
            queue.append(Pending(instance: reference.borrowed, registration: registration, lookup: frames[index].lookup,
                                 cause: cause, via: via))
        }
        return aliveIndex
    }
}

/// The graph's side of `CreationOrder.walk`: how each slot is filled, and making an instance.
extension Graph: CreationWalk {
    typealias Failure = TetherError
    var depth: Int { @inline(__always) get { frames.count } }
    var topParams: UnsafeBufferPointer<Param> { @inline(__always) get { frames[frames.count - 1].params } }
    var topSlot: Int { @inline(__always) get { frames[frames.count - 1].slot } }
    @inline(__always) func advance() { frames[frames.count - 1].slot += 1 }
    @inline(__always) func open(_ entry: Entry) { push(entry.registration, entry.spec, from: entry.lookup) }
    @inline(__always) func close() { pop() }
    @inline(__always) func make() throws(TetherError) -> Int { try construct(frames.count - 1) }
    @inline(__always) func take(_ made: Int, _ param: Param, at slot: Int) { attach(made, param, at: slot, to: frames.count - 1) }

    func fill(_ param: Param, at slot: Int) throws(TetherError) -> CreationOrder.Fill<Int, Entry> {
        let top = frames.count - 1
        let wordIndex = frames[top].wordBase + slot
        switch param {
        case .dependency(let key), .weak(let key):
            let lookup = frames[top].lookup
            guard let dep = lookup.borrow({ $0.unretainedRegistration(for: key) }) else {
                let path = path
                throw TetherError.notRegistered(key, neededBy: pathText(path), ErrorParts(.register, key: key, path: path))
            }
            return try depend(on: dep, key: key, top, lookup, strong: param == .dependency(key))
        case .all(let key):
            // One item per pass; the word is made in `constructSpecial`.
            if allSlots.last.map({ $0.frame != top || $0.index != wordIndex }) ?? true {
                let listed = frames[top].lookup.borrow { $0.allRegistrations(for: key) }
                allSlots.append((top, wordIndex, listed, 0, dependencyStack.count))
            }
            let entry = allSlots[allSlots.count - 1]
            guard entry.next < entry.registrations.count else { return .filled }
            let item = entry.registrations[entry.next]
            return try depend(on: .init(item), key: item.key, top, frames[top].lookup, strong: true)
        case .factory(let key):
            factorySlots.append((top, wordIndex, key))
        case .lazy(let key), .weakLazy(let key):
            let cell = LazyCell(holding: frames[top].lookup, key: key, isWeak: param != .lazy(key))
            lazySlots.append((top, wordIndex, cell))
            rememberGraph(of: cell, lookup: frames[top].lookup)
        case .context:
            words[wordIndex] = UInt64(UInt(bitPattern: frames[top].spec.borrow { $0.context }))
        case .resolver:
            frames[top].resolverSlot = wordIndex
        case .argument:
            // Only a root's frame has arguments: checked before the build.
            words[wordIndex] = buildArguments[frames[top].argumentIndex].bits
            frames[top].argumentIndex += 1
        }
        return .filled
    }
}
