import Synchronization

// A child container's plan: its component (the slots a child's registrations fill) and its fit.

extension Plan {
    /// Records the plan for `root` resolved from `child`, a descendant of its
    /// container with registrations of its own (one per request, say; and of any container
    /// between them that registered, stacked: `componentLevels`): those registrations are its per-request component
    /// over the owner's configuration, and the steps of those the graph reaches (if any) are
    /// local, each naming its slot in the component. The plan serves every child whose
    /// component has the same slots (`fits`), each resolve running that child's factories
    /// with its contexts: its container-scoped ones as container steps (made once per child,
    /// published into it), those with completion callbacks, and slots made per resolve, in a plan
    /// that replays into the graph as the owner's do (`needsGraph`). Throws when the component has no
    /// slots to key it by (`componentLevels`), or the graph is not plain (`Graph` resolves it).
    /// `creating`: the plan for the caches' state now, as `recordCreating`: the singletons of the owner (and further
    /// up: `Frame.foreign`) and its weak keys (a weak root too) no cache holds as creation steps, and the child's
    /// own singleton and weak registrations no cache holds (local creation steps: each run's are the resolving
    /// child's, `registration(of:_:)`); over container and value steps too (`Graph.claimWithContainerSteps`);
    /// throws unless it makes one.
    /// `leaves`: as `record`'s (a failing plan's variant).
    static func record(_ root: Registration, configuration: UInt, child: Container, creating: Bool = false,
                       leaves: Leaves = Leaves()) throws(Decline) -> Plan {
        // A container-scoped root is a container step, as from its own container (`record`). A singleton's
        // resolve is its own container's (`Graph.resolve`); a weak root not cached is a creation step (`creating`).
        guard !root.spec.scope.isShared || root.spec.scope.isPerResolvingContainer || (creating && root.spec.scope.isKeptWeakly)
        else { throw .notCached }
        let recorder = try childRecorder(root, child)
        recorder.makesContainer = true
        recorder.createsUncached = creating
        (recorder.leafContainers, recorder.leafSlots, recorder.graphLeaves) = (leaves.ids, leaves.slots, leaves.graph)
        // With completion callbacks or slots made per resolve the graph replays it (`Graph.replay`),
        // each local step entered under the resolving child's registration (`Plan.replay(into:)`).
        // A graph that reaches none of the child's registrations gets a plan too (no local
        // steps): the next child of that component runs it, not the ordinary build.
        // A graph the build fails in (a cycle, a key not registered) gets a failing plan, as from the owner (`record`).
        var failing: Failing?
        if recorder.visit(Borrowed(root)) == nil {
            // A container step's made input a step outside takes too: two plans, as from the owner (`recordWithCachedVariant`;
            // creating, `recordCreatingUnmarked`: every step made, its creating variant for the container steps cached).
            if recorder.decline == .containerInput {
                if !creating { return try recordWithCachedVariant(root, configuration: configuration, child: child, leaves: leaves) }
                if let plan = recordCreatingUnmarked(root, configuration: configuration, child: child, leaves: leaves) { return plan }
            }
            guard let met = recorder.failing() else { throw recorder.decline }
            // Creating: a failing plan over creation steps too, as from the owner (`record(creating:)`), over container
            // or value steps too (a child's warm plan of a shared root is none, `notCached`: the build before branch childfail).
            // Under container-scoped frames: the plans of the builds that take one of them cached (the warm one when
            // that creates nothing).
            failing = withVariants(met, root, creating: creating, leaves: leaves)
        }
        try recorder.finishSlots()
        if creating {
            // A failing one met inside a creation frame (a strict level's singleton refusing a captive) creates
            // nothing: its run reports the build's error while that frame's registration is not cached (`matchesCaches`).
            guard recorder.steps.contains(where: { $0.creates }) || failing?.opensShared == true
            else { throw .notCached }
        }
        let (slots, params) = componentShape(of: recorder)
        return Plan(steps: recorder.steps, inputs: recorder.inputs, configuration: configuration, objects: nil,
                    component: slots, componentParams: params, slots: recorder.slots, failing: failing)
    }

    /// The recorder of a plan of `root` resolved from `child` (`record(_:configuration:child:creating:)`): the root's
    /// runtime arguments, as from its own container (the run passes the resolve's), the child's component its locals.
    static func childRecorder(_ root: Registration, _ child: Container, allowsValues: Bool = false) throws(Decline) -> Recorder {
        let recorder = Recorder(lookup: child, allowsArguments: true, allowsValues: allowsValues)
        guard let levels = componentLevels(child, below: Borrowed(root.container), into: &recorder.component,
                                           cleared: &recorder.componentCleared) else { throw .other }
        recorder.componentLevels = levels
        recorder.componentOwner = root.container
        recorder.recordsLocals = true
        recorder.recordsSlots = true
        return recorder
    }

    /// The per-request component of a resolve from `child` over `owner`'s plans: the registrations, slot by
    /// slot (`RegistrationTable.componentSlots`), of `child` and of every container between it and `owner` that
    /// registered, nearest first (a request's child under a request's child stacks both), appended to
    /// `component`; returns those containers (`Level`: each one's first slot and strictness, read once with
    /// its slots). A cleared slot (its key's registration taken out) is nil, its key noted in `cleared`.
    /// Any number of slots: a run's `locals` grows to hold them (`PlanProgress.reserveLocals`, `fits`).
    /// (`childTable` before branch childtable: past `maxSteps` slots, or a cleared slot.) Nil only where no
    /// child is (a registering level without slots, a chain not reaching `owner`: `record` says `other`).
    static func componentLevels(_ child: Container, below owner: Borrowed<Container>, into component: inout [Borrowed<Registration>?],
                                cleared: inout [Int: Key]) -> [Level]? {
        var levels: [Level] = []
        var level = Borrowed(child)
        while level.opaque != owner.opaque {
            if !level.borrow({ $0.neverRegistered }) {
                guard let block = level.borrow({ $0.tableIfAny?.borrow { $0.componentSlots } }) else { return nil }
                let count = RegistrationTable.slotCount(block)
                guard count > 0 else { return nil }
                let start = component.count
                for slot in 0..<count {
                    let r = RegistrationTable.registration(atSlot: slot, in: block)
                    if r == nil { cleared[component.count] = RegistrationTable.key(atSlot: slot, in: block) }
                    component.append(r)
                }
                levels.append(Level(container: level.opaque, start: start, strict: level.borrow { $0.refusesCaptives }))
            }
            guard let parent = level.borrow({ $0.parentBorrowed }) else { return nil }
            level = parent
        }
        return levels
    }

    /// A container a child's component stacks (`componentLevels`): its address, its first slot in the
    /// component, and its strictness as read with its slots (the walk's captive checks read this, `Recorder.isStrict`).
    struct Level {
        let container: UnsafeMutableRawPointer
        let start: Int
        let strict: Bool
    }

    /// The slots `fits` compares, and their params, of a per-request component (`component`, by slot, in
    /// `levels`; a cleared slot's key in `cleared`); the levels numbered in `keysStrict` key their strictness
    /// (`ComponentSlot.keysStrict`).
    static func componentShape(_ component: [Borrowed<Registration>?], _ levels: [Level], _ cleared: [Int: Key],
                                       keysStrict: Set<Int> = []) -> ([ComponentSlot], [Param]) {
        var slots: [ComponentSlot] = []
        var params: [Param] = []
        for (slot, registration) in component.enumerated() {
            guard let registration else {
                slots.append(ComponentSlot(key: cleared[slot]!, scope: .transient, paramInfo: 0, completes: false, firstParam: params.count,
                                           cleared: true))
                continue
            }
            registration.borrow { r in
                let spec = r.spec
                slots.append(ComponentSlot(key: r.key, scope: spec.scope, paramInfo: r.paramInfo,
                                           completes: spec.completionCount > 0, firstParam: params.count))
                params += r.params
            }
        }
        for (i, level) in levels.enumerated() {
            slots[level.start].startsLevel = true
            (slots[level.start].keysStrict, slots[level.start].strict) = (keysStrict.contains(i), level.strict)
        }
        return (slots, params)
    }

    /// `componentShape` of the component a child's recorders walked (`childRecorder`): the levels whose strictness
    /// any of them read key it.
    static func componentShape(of recorder: Recorder, _ others: Recorder...) -> ([ComponentSlot], [Param]) {
        let keysStrict = others.reduce(recorder.keysStrict) { $0.union($1.keysStrict) }
        return componentShape(recorder.component, recorder.componentLevels, recorder.componentCleared, keysStrict: keysStrict)
    }

    /// A declined plan of resolves from `child` (`record(_:configuration:child:)` threw `reason`),
    /// keyed by `child`'s component (`fits`): a later child of that component builds at once, with no
    /// recording again (`Registration.otherComponentPlan`). Nil when `componentLevels` is.
    static func declined(_ configuration: UInt, _ reason: Decline, child: Container, below owner: Borrowed<Container>) -> Plan? {
        var component: [Borrowed<Registration>?] = []
        var cleared: [Int: Key] = [:]
        guard let levels = componentLevels(child, below: owner, into: &component, cleared: &cleared) else { return nil }
        let (slots, params) = componentShape(component, levels, cleared)
        let plan = Plan(steps: [], inputs: [], configuration: configuration, objects: nil, component: slots, componentParams: params)
        plan.decline = reason
        return plan
    }

    /// Whether `child`'s per-request component (its own registrations, slot by slot:
    /// `RegistrationTable.componentSlots`) is the one this child's plan was recorded through:
    /// as many slots, each of the recorded key, scope, params and completion callbacks or
    /// none, or cleared as recorded, each level as strict as recorded where the plan depends on it
    /// (`ComponentSlot.keysStrict`). Then the graph from `child` is the recorded one, and each slot's
    /// registration goes to `progress`' `locals` for the run (read once: one replaced meanwhile stays alive,
    /// kept by its container; grown first for a component of more than `maxSteps` slots; a cleared slot's
    /// left as it was, no step reads it). The owner's configuration is checked by the caller.
    func fits(_ child: Container, _ owner: Borrowed<Container>, _ progress: UnsafeMutablePointer<PlanProgress>) -> Bool {
        progress.pointee.reserveLocals(component.count)
        let locals = progress.pointee.locals
        // Each container from `child` up to `owner` that registered is a level (`componentLevels`).
        var first = 0
        var level = Borrowed(child)
        while level.opaque != owner.opaque {
            if !level.borrow({ $0.neverRegistered }) {
                guard let block = level.borrow({ $0.tableIfAny?.borrow { $0.componentSlots } }) else { return false }
                let count = RegistrationTable.slotCount(block)
                guard count > 0, first + count <= component.count, component[first].startsLevel,
                      !component[first].keysStrict || level.borrow({ $0.refusesCaptives }) == component[first].strict else { return false }
                for slot in 0..<count {
                    let shape = component[first + slot]
                    guard slot == 0 || !shape.startsLevel else { return false }
                    guard let registration = RegistrationTable.registration(atSlot: slot, in: block) else {
                        guard shape.cleared, RegistrationTable.key(atSlot: slot, in: block) == shape.key else { return false }
                        continue
                    }
                    guard !shape.cleared,
                          registration.borrow({ r in
                              r.key == shape.key && r.paramInfo == shape.paramInfo
                                  && r.specReference.borrow { $0.scope == shape.scope && ($0.completionCount > 0) == shape.completes }
                                  && Self.sameParams(r.params, componentParams.baseAddress.map { $0 + shape.firstParam })
                          }) else { return false }
                    locals[first + slot] = registration
                }
                first += count
            }
            guard let parent = level.borrow({ $0.parentBorrowed }) else { return false }
            level = parent
        }
        return first == component.count
    }

    /// Whether `params` are the `params.count` recorded at `recorded` (a plain loop: a child's
    /// registration has a param or two, which `elementsEqual` over a slice compared in ~40 instructions).
    @inline(__always)
    private static func sameParams(_ params: UnsafeBufferPointer<Param>, _ recorded: UnsafePointer<Param>?) -> Bool {
        for i in 0..<params.count where params[i] != recorded![i] { return false }
        return true
    }
}
