import Synchronization

// The graph's frames, one per factory under way (those a plan run opens for a RESOLVER slot's factory or a
// cut run's, `openReplayedFrames`; the build's walk's), what a plan run reads of the graph's instances
// (`builtIndex`, `instance`, `replayedWords`), the lazy cells waiting for one, and the errors naming the
// frames' path. Moved out of Graph+Build.swift in branch isolate.

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

    /// A DEP, WEAK or ALL slot reached a key that takes runtime arguments (a resolve's and `tether_validate`'s message).
    /// Its fix (a binding renders `ErrorParts.Fix.runtimeArguments` in its own terms) is the FACTORY slot.
    static func argumentDependency(_ key: Key, neededBy: String, path: [Key]) -> TetherError {
        TetherError(.argumentMismatch, "\(key.quoted) takes runtime arguments and cannot be a dependency (needed by \(neededBy)); declare the slot TETHER_FACTORY(\(key.quoted)) to build it with arguments from the factory, or resolve it at the top level with tether_resolve_args",
                    ErrorParts(.runtimeArguments, key: key, path: path))
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
}
