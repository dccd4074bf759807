import Synchronization

// The build: the graph's own walk of a resolve (`build`, `CreationWalk`), which a plan run
// continues past a cut; frames, slots, cached instances found or revived, factories called.

extension Graph {
    /// Plain data with unretained references, so frames move and are read without
    /// reference counting: the registration is kept by its container (or its
    /// retired list, even once the container is closed, until it is dismantled)
    /// and keeps its specs; its container is the caller's or a parent of it, and
    /// so is the lookup container.
    struct Frame {
        let registration: Borrowed<Registration>
        let spec: Borrowed<InstanceSpec>
        /// Where this frame's dependencies are looked up.
        let lookup: Borrowed<Container>
        let wordBase: Int
        /// Where this frame's dependencies start on `dependencyStack`.
        let dependencyBase: Int
        /// A cached instance of a strict container: refuses shorter-lived strong dependencies.
        let refusesCaptives: Bool
        var slot = 0
        var resolverSlot: Int?
        var argumentIndex = 0

        var params: UnsafeBufferPointer<Param> {
            @inline(__always) get { registration.borrow { $0.params } }
        }
    }

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

    /// `cell`, a lazy slot's of a plan replayed into this graph (`Plan.makeWithSlots`), waits for
    /// `registration`'s instance, as `rememberGraph` leaves one.
    func awaitCell(_ registration: Borrowed<Registration>, _ cell: LazyCell) {
        awaitingCells.append((registration, cell))
    }

    /// `registration`'s instance made in this graph (its index in `alive`), nil when none is (absent, under construction).
    func builtIndex(_ registration: Borrowed<Registration>) -> Int? {
        let state = table.state(registration)
        return state == GraphTable.absent || state == GraphTable.constructing ? nil : GraphTable.index(state)
    }

    /// The words of a plan replayed into this graph (from index 0, `replay`): read again after a
    /// resolver's build may have appended (and moved them).
    var replayedWords: ReferenceWords<Instance> { alive.wordsFromStart }

    /// A plan replayed into this graph calls the factory of a step with a RESOLVER slot (`Plan.makeSlots`):
    /// the frames of `path` (the root down to that step, the build's frames then) are opened, so what the
    /// resolver builds meets the graph as in the build (those under construction: a cycle, with the path;
    /// messages; `constructing` for re-entries), and the factory is user code (no start-over meanwhile).
    /// Returns the lookup of the step's frame (the resolver's) and where its gets' instances start in `alive`.
    func openReplayedFrames(_ path: [Borrowed<Registration>], from lookup: Container) -> (lookup: Borrowed<Container>, built: Int) {
        var lookup = Borrowed(lookup)
        for registration in path {
            push(registration, registration.borrow { $0.specReference }, from: lookup)
            lookup = frames[frames.count - 1].lookup
        }
        userCode += 1
        return (lookup, alive.count)
    }

    /// After `openReplayedFrames`' factory returned: its `count` frames closed, and what its gets built
    /// noted for step `step` (`replayBuilt`), from `from` in `alive`.
    func closeReplayedFrames(_ count: Int, step: Int, builtFrom from: Int) {
        userCode -= 1
        for _ in 0..<count { pop() }
        if alive.count > from { replayBuilt.append((step, from, alive.count)) }
    }

    /// Binds the cells waiting for `registration`'s instance in this graph to `instance`.
    @inline(never)
    func bindAwaiting(_ registration: Borrowed<Registration>, _ instance: Borrowed<Instance>) {
        var i = 0
        while i < awaitingCells.count {
            guard awaitingCells[i].registration === registration else { i += 1; continue }
            let cell = awaitingCells.remove(at: i).cell
            cell.bind(to: instance.object)
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

    /// A DEP, WEAK or ALL slot reached a key that takes runtime arguments (a resolve's and `tether_validate`'s message).
    /// Its fix (a binding renders `ErrorParts.Fix.runtimeArguments` in its own terms) is the FACTORY slot.
    static func argumentDependency(_ key: Key, neededBy: String, path: [Key]) -> TetherError {
        TetherError(.argumentMismatch, "\(key.quoted) takes runtime arguments and cannot be a dependency (needed by \(neededBy)); declare the slot TETHER_FACTORY(\(key.quoted)) to build it with arguments from the factory, or resolve it at the top level with tether_resolve_args",
                    ErrorParts(.runtimeArguments, key: key, path: path))
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

    /// The instance at `index` in `alive`, unretained.
    func instance(_ index: Int) -> Borrowed<Instance> { alive[index] }

    /// The instance of this graph whose pointer is `pointer`, if any.
    func instance(at pointer: UnsafeMutableRawPointer) -> Instance? {
        for i in stride(from: alive.count - 1, through: 0, by: -1) {
            // (A plan replaying into this graph holds steps not made yet: a RESOLVER slot's factory runs meanwhile.)
            guard !alive.wordsFromStart.isNone(i) else { continue }
            let instance = alive[i].object
            if instance.pointer == pointer { return instance }
        }
        return nil
    }

    /// A frame to open (`CreationWalk.Entry`): the registration to make, its spec, where it is looked up from.
    struct Entry {
        let registration: Borrowed<Registration>
        let spec: Borrowed<InstanceSpec>
        let lookup: Borrowed<Container>
    }

    func push(_ registration: Borrowed<Registration>, _ spec: Borrowed<InstanceSpec>, from lookup: Borrowed<Container>) {
        // A singleton's dependencies come from its own container, so the shared
        // instance does not depend on which child asked first.
        let scope = spec.borrow { $0.scope }
        let depLookup = scope.resolvesFromOwnContainer
            ? registration.borrow { Borrowed($0.container) } : lookup
        let strict = scope.lifetime.cached && registration.borrow { $0.container.refusesCaptives }
        let base = words.count
        let frame = Frame(registration: registration, spec: spec, lookup: depLookup, wordBase: base,
                          dependencyBase: dependencyStack.count, refusesCaptives: strict)
        words.appendUnwritten(count: frame.params.count)  // every slot is written before the factory runs
        frames.append(frame)
        table.set(registration, GraphTable.constructing)
    }

    func pop() {
        let frame = frames.removeLast()
        dependencyStack.truncate(to: frame.dependencyBase)
        if !weakSlots.isEmpty { while let last = weakSlots.last, last.frame == frames.count { weakSlots.removeLast() } }
        if !lazySlots.isEmpty { while let last = lazySlots.last, last.frame == frames.count { lazySlots.removeLast() } }
        if !allSlots.isEmpty { while let last = allSlots.last, last.frame == frames.count { allSlots.removeLast() } }
        if !factorySlots.isEmpty { while let last = factorySlots.last, last.frame == frames.count { factorySlots.removeLast() } }
        // Built (the table now has its instance) or abandoned; transients keep nothing.
        table.endConstruction(frame.registration)
        words.truncate(to: frame.wordBase)
    }

    /// The index in `alive` of the instance of `registration` this graph already
    /// has or a cache holds (a container-scoped one: `lookup`'s); nil when it
    /// must be built. A request for one under construction is a cycle.
    func existing(_ registration: Borrowed<Registration>, _ spec: Borrowed<InstanceSpec>, key: Key,
                          in lookup: Borrowed<Container>) throws(TetherError) -> Int? {
        let state = table.state(registration)
        if state == GraphTable.constructing {
            let path = path
            let start = path.firstIndex(of: key) ?? 0
            let keys = Array(path[start...]) + [key]
            throw TetherError.constructorCycle(keys)
        }
        if state != GraphTable.absent { return GraphTable.index(state) }
        if !outer.isEmpty {  // (a decorated registration's move is the registration it moved from)
            let identity = registration.borrow { $0.constructionIdentity }
            if outer.contains(where: { $0 === registration || $0.borrow { $0.constructionIdentity } == identity }) {
                throw Reentry.reentered(registration, by: self)
            }
        }
        let scope = spec.borrow { $0.scope }
        guard scope.isShared else {
            // A declared value key: the value a container on the way provides, else its factory reports it missing.
            guard registration.borrow({ $0.isDeclaredValue }),
                  let hit = registration.borrow({ r in lookup.borrow { $0.providedValue(of: r) } }) else { return nil }
            if let tracer { tracer.emit(.cacheHit, key, hit.borrow { $0.pointer }) }
            let index = alive.append(hit)
            table.set(registration, GraphTable.state(index))
            return index
        }
        // Unretained: a parent's registration is shared by every thread's requests (no count written).
        var found = registration.borrow { cache in
            lookup.borrow { container in SharedCache.cached(cache, scope, in: container) }
        }
        if found == nil {
            found = try registration.borrow { cache throws(TetherError) in
                try lookup.borrow { container throws(TetherError) in try claim(cache, scope, in: container) }
            }
        }
        if let hit = found {
            if let tracer { tracer.emit(.cacheHit, key, hit.borrow { $0.pointer }) }
            let index = alive.append(hit)
            table.set(registration, GraphTable.state(index))
            // Taken from its cache after a lazy slot on it was filled: the graph's instance it answers (`rememberGraph`).
            if !awaitingCells.isEmpty { bindAwaiting(registration, alive[index]) }
            return index
        }
        if scope.isKeptWeakly, let pointer = registration.borrow({ $0.revivedObject() }) {
            let index = revive(registration, spec, pointer)
            if !awaitingCells.isEmpty { bindAwaiting(registration, alive[index]) }
            return index
        }
        return nil
    }

    /// Enters a weak-scoped instance of `pointer`, an object a binding still held after its box
    /// died (`Registration.revivedObject`), and publishes it with the graph: a new box without edges (the
    /// object holds its dependencies itself) and without completion callbacks (they ran when it was
    /// made), so no factory or callback runs for it again.
    func revive(_ registration: Borrowed<Registration>, _ spec: Borrowed<InstanceSpec>,
                        _ pointer: UnsafeMutableRawPointer) -> Int {
        let index = alive.append(revived(registration, spec, pointer))
        table.set(registration, GraphTable.state(index))
        return index
    }

    /// `revive`'s instance of `pointer` (the graph's reference), published with the graph, its cell noted made.
    func revived(_ registration: Borrowed<Registration>, _ spec: Borrowed<InstanceSpec>,
                         _ pointer: UnsafeMutableRawPointer) -> Ref<Instance> {
        let copy = tracer == nil ? specs.retainedCopy(of: spec) : tracer!.spec(for: spec)
        let reference = Instance.make(pointer: pointer, spec: copy, dependencies: 0, reference: { _ in preconditionFailure() })
        revivedShared.append((registration, reference.object))
        let key = SharedCache.CellKey(registration: ObjectIdentifier(registration.object), container: nil)  // (a weak cell's)
        // Made, and finished: a resolve nested on this thread is handed it (`SharedCache.claim`), never refused it.
        for cell in cells where cell.key == key { cell.made = true; cell.revived = reference.object }
        return reference
    }

    /// A weak creation step of the plan replaying into this graph, where the build's walk reaches it
    /// (`Plan.CreationCheck.reachedThere`): the instance of the object a binding still holds (`revive`,
    /// retained for the run's word), nil when there is none (the run calls its factory).
    func reviveCreation(_ registration: Borrowed<Registration>, _ spec: Borrowed<InstanceSpec>) -> Ref<Instance>? {
        guard let pointer = registration.borrow({ $0.revivedObject() }) else { return nil }
        return revived(registration, spec, pointer)
    }

    /// Whether this graph revived `registration`'s weak instance (`revived`): published apart, no completion callbacks.
    func revivedHere(_ registration: Borrowed<Registration>) -> Bool {
        !revivedShared.isEmpty && revivedShared.contains { $0.0 === registration }
    }

    /// Claims the creation cell of a shared instance this graph must make, or
    /// takes the instance another thread published meanwhile (`SharedCache.claim`).
    /// The first claim of a singleton or weak cell claims, in one order, every
    /// cell the root's constructor edges reach (`claimInOrder`): graphs needing
    /// the same keys in other orders then never hold one each while waiting for
    /// the other's (which would make one start over, its factories run twice).
    func claim(_ registration: Registration, _ scope: Scope, in container: Container,
                       askingPath: (() -> [Key])? = nil) throws(TetherError) -> Ref<Instance>? {
        let key = SharedCache.cellKey(registration, scope, in: container)
        // Not for a first claim of the container scope (a request's child, created once per
        // request and rarely by two threads at once): the walk would cost it more than a
        // rare start-over (`SharedCache`) would.
        if !claimedInOrder, cells.isEmpty, !scope.isPerResolvingContainer, let root = claimRoot {
            claimedInOrder = true
            try claimInOrder(root.registration.object, from: root.container.object, askingPath: askingPath)
        }
        if cells.contains(where: { $0.key == key }) { return nil }
        return try claimOne(registration, scope, in: container, askingPath: askingPath)
    }

    /// `askingPath`: the keys of the frames asking (a plan's claims: its path to the step); else this graph's frames.
    func claimOne(_ registration: Registration, _ scope: Scope, in container: Container,
                          askingPath: (() -> [Key])? = nil) throws(TetherError) -> Ref<Instance>? {
        switch try SharedCache.shared.claim(registration, scope, in: container, thread: thread, canBackOff: canBackOff, path: askingPath ?? { self.path }) {
        case .published(let hit): return hit
        case .create(let cell):
            // A provided value is never made: without its value it was superseded after this resolve picked it.
            if scope.isKeptStronglyByRegistration && registration.isValue { throw superseded(registration, cell) }
            cells.append(cell)
            return nil
        case .createUnderOuter(let cell):
            if !outerCells.contains(where: { $0 === cell }) { outerCells.append(cell) }
            return nil
        case .backOff(let cell, let error):
            backOff = (cell, error)
            throw error
        }
    }

    /// `claimOne` of `registration`, a provided value's, found it let go of (`supersededValue`): its
    /// cell let go of, and the error a resolve that cannot start over reports (a factory or callback
    /// of this graph under way: the value's factory's own).
    @inline(never)
    func superseded(_ registration: Registration, _ cell: SharedCache.Cell) -> TetherError {
        SharedCache.shared.release(cell)
        if userCode == 0 { supersededValue = .init(registration) }
        return TetherError.valueLetGo(registration.key)
    }

    /// Whether this resolve can start over: the thread's outermost, no factory or callback of it under way.
    var canBackOff: Bool {
        userCode == 0 && Borrowed<ThreadState>(opaque: thread).borrow { $0.nesting == 1 && $0.graph === self }
    }

    /// Claims the cells of the uncached shared instances `root`'s constructor
    /// edges reach, sorted by key, when there are several (`evenOne`, claiming
    /// ahead for a no-wait resolve: also a single one, and the cached weak ones
    /// held). A claim refused (`.wouldBlock`, no-wait mode) is reported as `root`'s.
    /// `askingPath`: as `claimOne`'s (a failing plan's claims, `claimPastFailure`).
    func claimInOrder(_ root: Registration, from container: Container, evenOne: Bool = false,
                              askingPath: (() -> [Key])? = nil) throws(TetherError) {
        var wanted: [(key: SharedCache.CellKey, registration: Registration, container: Container)] = []
        // Claiming ahead, the weak instances found cached are held too: let go of by their other
        // holders before the build reaches them, they would be claimed then, after factories ran.
        Self.forEachUncachedShared(root, from: container, keepingWeak: evenOne ? { self.heldAhead.append($0.take()) } : nil) { registration, lookup in
            wanted.append((SharedCache.cellKey(registration, registration.specReference.borrow { $0.scope }, in: lookup), registration, lookup))
            return true
        }
        guard wanted.count > 1 || (evenOne && !wanted.isEmpty) else { return }
        wanted.sort { ($0.key.registration, $0.key.container.map(UInt.init(bitPattern:)) ?? 0) < ($1.key.registration, $1.key.container.map(UInt.init(bitPattern:)) ?? 0) }
        for (key, registration, lookup) in wanted {
            // Held by this graph already (claims kept for the plan picked next, `keepClaims`): its own.
            if cells.contains(where: { $0.key == key }) { continue }
            // Published meanwhile: held until the graph ends, so the build finds it in the cache (a weak
            // instance let go of would be claimed again, and, held by another thread by then, refused).
            do throws(TetherError) {
                if let hit = try claimOne(registration, registration.spec.scope, in: lookup, askingPath: askingPath) { heldAhead.append(hit.take()) }
            } catch where error.code == .wouldBlock {
                throw Self.wouldBlock(root, blocked: registration)
            }
        }
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

    /// The error of a factory that failed while the frames of `path` (root first) were open.
    static func factoryFailure(_ registration: Registration, _ failure: CallbackFailure, path: [Key]) -> TetherError {
        factoryFailure(registration.key, failure, path: path)
    }

    static func factoryFailure(_ key: Key, _ failure: CallbackFailure, path: [Key]) -> TetherError {
        if let target = failure.target {  // a declared value no container provides, or one let go of (`Values.swift`)
            var parts = target.parts
            parts.path = Array(path.dropLast())
            let message = path.count > 1 ? "\(target.message) (needed by \(pathText(parts.path)))" : target.message
            return TetherError(target.code, message, parts.fix == .none ? nil : parts)
        }
        let parts = ErrorParts(.factory, key: key, path: path,
                               reason: failure.reason.flatMap { $0.isEmpty ? nil : $0 })
        var message = "factory for \(key.quoted) returned NULL"
        if let reason = parts.reason { message += ": \(reason)" }
        if path.count > 1 { message += " (while resolving \(pathText(path)))" }
        return TetherError(.factoryFailed, message, parts)
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
