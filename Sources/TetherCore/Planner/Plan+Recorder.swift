import Synchronization

// The recorder: the planner's walk of a resolve (`CreationWalk`), which records the steps.

extension Plan {
    /// Records a plan's steps in creation order: `CreationOrder.walk` decides the order (as it
    /// does for `Graph.build`), this fills the slots with steps and declines what a plan does not
    /// cover (`Decline`, thrown where it declines).
    final class Recorder: CreationWalk {
        let lookup: Container
        /// Tests only (`setBeforeReadingCache`): called with each shared registration `reach` looked up,
        /// before it reads its cache, where a configuration change on another thread lands in a race
        /// (`Graph.claimOne`'s superseded value). Read only while `hooked`: recording pays one load.
        private static let beforeReadingCache = Lock<(@Sendable (Registration) -> Void)?>(nil)
        private static let hooked = Atomic<Bool>(false)
        static func setBeforeReadingCache(_ hook: (@Sendable (Registration) -> Void)?) {
            beforeReadingCache.withLock { $0 = hook }
            hooked.store(hook != nil, ordering: .releasing)
        }
        /// Whether resolver slots are recorded as `Plan.resolver` (a description) rather than as slots (`recordsSlots`) or declined.
        var allowsResolvers = false
        /// Whether the root's runtime arguments are recorded (as `Plan.argument(n)`) rather than declined.
        var allowsArguments = false
        /// Whether declared value keys are recorded (as shared leaves named by key, the resolving
        /// container's value: `PlanDescription.Step.value`) rather than declined.
        var allowsValues = false
        /// Whether container-scoped registrations are recorded as made steps the runner makes once
        /// per resolving container (`PlanDescription.Step.container`) rather than declined; only
        /// those whose dependency slots all take declared values or other such steps (and CONTEXT,
        /// RESOLVER slots), with no completion callback: then whether the resolving container holds
        /// one already changes no other step.
        var allowsContainer = false
        /// Whether container-scoped registrations become steps the core's run makes
        /// (`Plan.containerSteps`): the same registrations as `allowsContainer`, whose dependency
        /// slots may also take singletons (values provided in a child are singleton-scoped), at
        /// most 64 (`ContainerClaims`' words: `Recorder.add`), with completion callbacks or not (with some the plan replays into the graph, which
        /// claims their cells and publishes them after the callbacks: `Plan.replayRequest`).
        /// Declared value keys then become steps taking the resolving container's value (`SharedStep.isValue`).
        var makesContainer = false
        /// Whether registrations of `lookup` itself become local steps (`Plan.record(_:configuration:child:)`).
        var recordsLocals = false
        /// With `makesContainer`: whether the made steps only container steps asked for are marked
        /// (`markUnderContainer`); off for a plan with a `cachedVariant`, which never skips them.
        var marksUnderContainer = true
        /// Whether container-scoped registrations are leaves taken from the resolving container's cache
        /// (`SharedStep.inResolving`): a `cachedVariant`'s walk, the build's when it finds them cached.
        var containerLeaves = false
        /// Container-scoped registrations recorded as leaves taken from the resolving container's cache though
        /// `containerLeaves` is off (the others walked into as container steps, `makesContainer`): a failing plan's
        /// variant (`Failing.variants`) or a `mixedVariant`'s walk, the build's when it finds those cached.
        var leafContainers: Set<ObjectIdentifier> = []
        /// With `recordsLocals`: a child's own container-scoped registrations taken as leaves so, by slot in `component`.
        var leafSlots: Set<Int> = []
        /// Keys a request's graph has, recorded as keyed steps its run takes from the graph (`Plan.graphVariant`,
        /// `takeFromGraph`), not walked into: the build takes the graph's and never asks for what is below it.
        var graphLeaves: Set<ObjectIdentifier> = []
        /// Whether the steps so far read the resolving container: container, value or container leaf steps.
        var readsRequest: Bool {
            steps.contains { $0.isContainer || $0.recorded.borrow { $0.isDeclaredValue || $0.spec.scope.isPerResolvingContainer } }
        }
        /// Whether WEAK, LAZY, WEAK_LAZY, ALL, FACTORY and RESOLVER slots are recorded (`slots`) rather than declined:
        /// the core's plans (of a root's own container, of a child's component), replayed into the graph (`needsGraph`).
        var recordsSlots = false
        var slots: [SlotInput] = []
        /// With `recordsLocals`: `lookup`'s own registrations, by slot (its per-request component), then
        /// those of each container between it and the owner that registered (`componentLevels`).
        var component: [Borrowed<Registration>?] = []
        /// Those containers, nearest first: each one's first slot and strictness (`Plan.Level`).
        var componentLevels: [Level] = []
        /// The component's cleared slots (nil in `component`) and their keys (`componentLevels`).
        var componentCleared: [Int: Key] = [:]
        /// The container past the last level (the root's): where a key no level registered is looked up.
        var componentOwner: Container?
        /// The levels (numbers in `componentLevels`) whose strictness the walk read: the plan keys it (`fits`).
        var keysStrict: Set<Int> = []
        /// Whether a singleton or weak dependency no cache holds now is walked into as a creation
        /// step (`Step.creates`, `recordCreating`) rather than recorded as a leaf.
        var createsUncached = false
        /// Set when the walk declined a creation step (not one a plan covers: `reach`).
        var declinedCreating = false
        var steps: [Step] = []
        var inputs: [Int] = []
        /// Graph-scoped and shared registrations: their one step in this graph.
        var stepOf: [ObjectIdentifier: Int] = [:]
        /// Registrations with a frame open: one asked for again is a constructor cycle, the plan's
        /// error (`cycle`, a failing plan).
        var onPath: Set<ObjectIdentifier> = []
        /// The frames of the walk, outermost first.
        var frames: [Frame] = []

        init(lookup: Container, allowsResolvers: Bool = false, allowsArguments: Bool = false,
             allowsValues: Bool = false, allowsContainer: Bool = false) {
            self.lookup = lookup
            self.allowsResolvers = allowsResolvers
            self.allowsArguments = allowsArguments
            self.allowsValues = allowsValues
            self.allowsContainer = allowsContainer
        }

        /// A step being recorded: its registration, and its slots' inputs so far.
        struct Frame {
            let registration: Borrowed<Registration>
            let id: ObjectIdentifier
            /// Its slot in `component`, or -1.
            let local: Int
            /// A container-scoped registration (`allowsContainer`, `makesContainer`): a made step
            /// whose slots take only declared values, other container steps and (`makesContainer`) singletons.
            let isContainer: Bool
            /// Whether its runtime-argument slots are recorded (the root's, under `allowsArguments`).
            let takesArguments: Bool
            /// `steps.count` when it opened: steps made since were first asked for by it or above.
            let firstNew: Int
            var slot = 0
            var inputs: [Int] = []
            var arguments = 0
            /// A creation step (`createsUncached`): a shared registration no cache held.
            var creates = false
            /// The ALL slot whose items are being recorded (-1: none), its registrations and their steps so far.
            var listSlot = -1
            var listItems: [Registration] = []
            var listSteps: [Int] = []
            /// Where its dependencies are looked up when not `lookup`: a creation step of a singleton registered
            /// further up (the build looks a singleton's up in its own container, `Graph.push`), and every frame under it.
            var foreign: Container?
            /// With a stacked level's `foreign`: a slot of that level in `component` (`Step.lookupSlot`), else -1.
            var foreignSlot = -1

            init(registration: Borrowed<Registration>, id: ObjectIdentifier, local: Int, isContainer: Bool,
                 takesArguments: Bool, firstNew: Int, creates: Bool = false) {
                (self.registration, self.id, self.local, self.isContainer) = (registration, id, local, isContainer)
                (self.takesArguments, self.firstNew, self.creates) = (takesArguments, firstNew, creates)
            }
        }

        /// Why `visit` found the graph not plain (the recording stopped there).
        var decline = Decline.other
        /// The error the build reports where the walk stopped, if it is one a plan reports too
        /// (`Plan.failure`: `argumentDependency`, `cycle`, `missing`, `refuseCaptive`).
        var failure: TetherError?
        /// With `failure`: the frames open when the walk met it (the walk closes them as it unwinds).
        private var failureFrames: [(registration: Borrowed<Registration>, firstNew: Int, local: Int)] = []
        /// With `failure`: which of those are container-scoped (`Plan.Failing.containers`), and where their caches are
        /// read (`Plan.Failing.containerLookups`).
        private var failureContainers: [Int] = []
        private var failureContainerLookups: [(lookup: Borrowed<Container>?, slot: Int)] = []

        /// The keys of the open frames, outermost first: `Graph.path` when the build reaches the same place.
        var path: [Key] { frames.map { $0.registration.borrow { $0.key } } }

        /// After `visit` met a `failure`: what a failing plan of the steps made so far needs
        /// (`Plan.Failing`); nil when there is none.
        func failing() -> Plan.Failing? {
            guard let failure else { return nil }
            // A step without a parent was asked for by an open frame: the deepest one open when it was made.
            let open = failureFrames
            let depth = steps.indices.map { i in steps[i].parent >= 0 ? 0 : open.lastIndex { $0.firstNew <= i }.map { $0 + 1 } ?? 0 }
            return Plan.Failing(error: failure, open: open.map(\.registration), depth: depth,
                                openLocals: recordsLocals ? open.map(\.local) : [], openAt: open.map(\.firstNew),
                                containers: failureContainers, containerLookups: failureContainerLookups,
                                opensShared: open.contains { $0.registration.borrow { $0.spec.scope.isShared } })
        }

        /// The walk stops at `reason`, where the build reports `error` (nil: not one a plan reports).
        func met(_ error: TetherError?, _ reason: Decline) -> Decline {
            // Under a container-scoped frame: a build finding that key cached in the resolving container takes it
            // and never meets the error (re-registered since: `all:` slots, a dependency replaced; fuzz finding
            // 59f44910). The failing plan notes those frames: its run checks their caches first and goes on in the
            // plan of the build that takes one cached (`Failing.variants`, `Plan.pickedForCaches`). One under a
            // singleton from further up is that container's cache (`Frame.foreign`: `Failing.containerLookups`).
            failure = error
            failureFrames = frames.map { ($0.registration, $0.firstNew, $0.local) }
            failureContainers = frames.indices.filter { frames[$0].isContainer }
            failureContainerLookups = failureContainers.map { Self.lookups(frames[$0].foreign, frames[$0].foreignSlot) }
            return reason
        }

        /// Whether the build's frame of `frame` refuses captives (`Graph.push`): a creation step of a cached scope
        /// (a singleton) registered in a strict container; a stacked level's strictness as the component read it.
        func refuses(_ frame: Frame) -> Bool {
            frame.creates && frame.registration.borrow { $0.spec.scope.lifetime.cached && isStrict($0.container) }
        }

        /// Whether `container` is strict: a level of the component as read with its slots (the plan then keys
        /// that level's strictness, `keysStrict`), else now (the owner and further up: the configuration keys it).
        func isStrict(_ container: Container) -> Bool {
            guard let level = level(of: container) else { return container.refusesCaptives }
            keysStrict.insert(level)
            return componentLevels[level].strict
        }

        /// A cycle at `key`, whose frame is open (`metFailure`), with the build's error (`Graph.existing`). In a strict
        /// container too: the build's captive check of the slot (`Graph.refuseCaptive`, before `existing`) is
        /// the walk's, before `reach` (`refuseCaptive`), so a captive it refuses is met first, as the build's.
        func cycle(_ key: Key) -> Decline {
            let path = path
            return met(TetherError.constructorCycle(Array(path[(path.firstIndex(of: key) ?? 0)...]) + [key]), .metFailure)
        }

        /// The walk's stop at `key` not registered, asked for by the top frame (`metFailure`), with the build's error (`Graph.fill`, before any captive check).
        func missing(_ key: Key) -> Decline {
            let path = path
            return met(TetherError.notRegistered(key, neededBy: pathText(path), ErrorParts(.register, key: key, path: path)), .metFailure)
        }

        /// The step of `registration`'s instance, its dependencies recorded first in creation
        /// order (`CreationOrder.walk`); nil when the graph is not plain (`decline` says why).
        func visit(_ registration: Borrowed<Registration>) -> Int? {
            do throws(Decline) {
                switch try reach(registration) {
                case .found(let step): return step
                case .enter(let frame):
                    let root = try CreationOrder.walk(self, entering: frame)
                    if makesContainer && marksUnderContainer { try markUnderContainer() }
                    return root
                case .filled: return nil  // (a registration's instance is never a word)
                }
            } catch {
                decline = error
                // A failing walk's steps first asked for under a container step are marked too: a run finding it cached
                // skips them before the error, as the build taking it never asks for them (it made them before). One a
                // step outside takes too (`containerInput`): no failing plan, the build serves it.
                if failure != nil && makesContainer && marksUnderContainer {
                    do throws(Decline) { try markUnderContainer() } catch {
                        (failure, decline) = (nil, .containerInput)
                    }
                }
                return nil
            }
        }

        /// `registration`'s step when it has one (or is a cached or value leaf, recorded now), else
        /// the frame that records it; declines what the plan does not cover.
        func reach(_ registration: Borrowed<Registration>) throws(Decline) -> CreationOrder.Fill<Int, Frame> {
            let r = registration.object
            let id = ObjectIdentifier(r)
            if let step = stepOf[id] { return .found(step) }
            let spec = r.spec
            // Per-container caches and declared values: `Graph` resolves them (and reports a missing value);
            // a described plan names a declared value by key, its runner takes the resolving container's
            // The core's container steps may complete (the plan replays into the graph, which publishes them
            // after the callbacks); a described plan's may not. (No shared registration takes runtime arguments.)
            guard !spec.scope.isPerResolvingContainer || makesContainer || containerLeaves || (allowsContainer && spec.completionCount == 0)
            else { throw .described }
            // (A declared value: a value step. Each recorder makes container steps or takes values, so none
            // declines one: `declaredValue` before branch declinesweep, never thrown.)
            var local = -1
            if isStacked(r.container) {
                // Its slot: a local step takes each child's registration there (a container step too:
                // made once per child, published into it, `Plan.takeContainer`). A stacked level's (a container
                // further out than the resolving child) too: a container-scoped one is the resolving child's, its
                // completion callbacks resolve from there, as the build's frame (not `resolvesFromOwnContainer`).
                // (The walk takes a level's registrations from the component, `registration(for:from:)`, an ALL
                // slot's items too, `allRegistrations(for:from:)`: one in no slot is never met.)
                guard let slot = component.firstIndex(where: { $0?.opaque == registration.opaque }) else { throw .other }
                local = slot
            }
            if graphLeaves.contains(id) {
                // Taken from the graph, never made: its slots recorded as CONTEXT, none a step's (no edge, `slotCount` its params').
                var step = Step(recorded: registration, spec: local >= 0 ? nil : Borrowed(spec), firstInput: inputs.count,
                                isShared: false, isKeyed: true, completes: false, parent: -1)
                step.local = local
                step.slotCount = r.params.count
                inputs += repeatElement(Plan.context, count: r.params.count)
                return .found(try add(step, id))
            }
            let isContainer = spec.scope.isPerResolvingContainer && !containerLeaves && !leafContainers.contains(id)
                && !(local >= 0 && leafSlots.contains(local))
            if Self.hooked.load(ordering: .acquiring), createsUncached && spec.scope.isShared,
               let hook = Self.beforeReadingCache.withLock({ $0 }) { hook(r) }
            // (A container-scoped registration is a container step or a leaf taken from the resolving container, a
            // `cachedVariant`'s or a failing plan's variant's: never a creation step.)
            let creates = createsUncached && !spec.scope.isPerResolvingContainer && spec.scope.isShared && !r.isDeclaredValue
                && !Self.isCached(r, spec.scope)
            // Under a creation step of a singleton registered further up (`foreign`), or one itself: each step
            // notes that container (`Step.lookup`), which its completion callbacks and its slots' cells resolve
            // from, a container step is claimed, made and published in, a value step is that one's, and whose
            // strictness its captive checks read (`refuseCaptive`), as the build's frames (`Graph.push`). A container
            // a child's component stacks is each run's level (`foreignSlot`: `Step.lookupSlot`), its strictness as
            // the component read it, which the plan then keys (`isStrict`, `ComponentSlot.keysStrict`).
            // One of `lookup`'s own is `foreign` too unless the plan is a child's (`recordsLocals`: `lookup` is each run's
            // resolving child): the owner's plans run from its empty children, where a container step or value under
            // it is still its container's, as the build's frame (a root singleton made from a child took the child's).
            let foreign = creates && spec.scope.resolvesFromOwnContainer ? (r.container === lookup && recordsLocals ? nil : r.container)
                : frames.last?.foreign
            var foreignSlot = -1
            if let foreign, let level = level(of: foreign) {
                foreignSlot = foreign === frames.last?.foreign ? frames[frames.count - 1].foreignSlot : componentLevels[level].start
            }
            if creates {
                // Its dependencies are looked up where the build looks them up (a singleton's in its own container,
                // `foreign`; a weak one's where the plan's are, from a container further up too, as its cache is
                // its registration's); in a strict container its strong slots are checked for captives (`refuseCaptive`).
                // A child's plan (`recordsLocals`): a singleton from further up (all its steps the owner's), or
                // a weak one (its cache its registration's; its dependencies the child's, as the build's), or
                // one of the component's (a local step: each run claims, makes and publishes the resolving
                // child's registration in its slot, `registration(of:_:)`; a stacked level's singleton is
                // `foreign`, its dependencies looked up in its container, as the build's).
                // (A dead weak instance a binding still holds is a creation step too: its run revives it, `takePublished`.)
                guard local >= 0 || !recordsLocals || foreign != nil || spec.scope.isKeptWeakly
                else { throw declineCreating() }
            } else if !isContainer && (spec.scope.isShared || r.isDeclaredValue) {
                var step = Step(recorded: registration, spec: nil, firstInput: inputs.count, isShared: true,
                                isKeyed: true, completes: false, parent: -1)
                step.local = local
                step.fromSharedCache = !r.isDeclaredValue && spec.scope.isShared && !spec.scope.isPerResolvingContainer
                step.askedUnderContainer = frames.contains { $0.isContainer }
                // A value, or a container-scoped leaf, asked for under a singleton from further up: that container's
                // (`Plan.takeValue`, `takeInResolving`), as the build's frame reads it.
                if r.isDeclaredValue || spec.scope.isPerResolvingContainer { (step.lookup, step.lookupSlot) = Self.lookups(foreign, foreignSlot) }
                return .found(try add(step, id))
            }
            // A cycle (its frame is open) declines.
            guard !onPath.contains(id) else { throw cycle(r.key) }
            let isRoot = frames.isEmpty && steps.isEmpty
            // (No cap on container steps: `containerSteps` before branch declinesweep, at 4, from when the run held
            // their cells in place; the cells are the container's now, their words `StepBits` past the 64th step.)
            if !isContainer {
                // (Never below the root: `fill` met `argumentDependency` first; `arguments` before branch resolverslot2.)
                guard !r.hasArguments || (allowsArguments && isRoot) else { throw .other }
            }
            // A request's container steps take no runtime arguments (only a root does, and it is not one).
            var frame = Frame(registration: registration, id: id, local: local, isContainer: isContainer,
                              takesArguments: allowsArguments && isRoot && !isContainer, firstNew: steps.count, creates: creates)
            frame.foreign = foreign
            frame.foreignSlot = foreignSlot
            return .enter(frame)
        }

        /// A creation step (or one under it) no plan covers: the warm plan instead (`record`), or the build (`recordCreating`).
        private func declineCreating() -> Decline {
            declinedCreating = true
            return .other
        }

        /// Whether `container` is one of those a child's component stacks (`componentLevels`): a run's is the resolving child's.
        func isStacked(_ container: Container) -> Bool { level(of: container) != nil }

        /// `container`'s number in `componentLevels`, if the component stacks it.
        func level(of container: Container) -> Int? {
            guard recordsLocals else { return nil }
            let address = Borrowed(container).opaque
            return componentLevels.firstIndex { $0.container == address }
        }

        /// `key`'s ALL list as the build's from `container` (`Container.allRegistrations`), but from the resolving child or
        /// a stacked level the component's as read before the walk: the owner's list, each level's slots over it, outermost
        /// first (`Container.listed`, the tables' rule). (The tables again would list an item registered in a level
        /// since, in no slot: `childLocal` before branch failunder2; `fits` compares the slots of each run.)
        func allRegistrations(for key: Key, from container: Container) -> [Registration] {
            let first: Int
            if recordsLocals && container === lookup {
                first = 0
            } else if let level = level(of: container) {
                first = level
            } else {
                return container.allRegistrations(for: key)
            }
            var list = componentOwner!.allRegistrations(for: key)
            for n in (first..<componentLevels.count).reversed() {
                let end = n + 1 < componentLevels.count ? componentLevels[n + 1].start : component.count
                let own = component[componentLevels[n].start..<end].compactMap { $0?.object }
                let moved = Borrowed<Container>(opaque: componentLevels[n].container).borrow { $0.undecoratedKeys() }
                list = Container.listed(own, for: key, moved: moved, over: list)
            }
            return list
        }

        /// `key`'s registration as the build's lookup from `container` (`unretainedRegistration`) finds it, but
        /// from the resolving child or a stacked level the component's as read before the walk (`componentLevels`):
        /// the nearest level's from there that has the key, else the owner's. (The table again would find one
        /// replaced meanwhile, in no slot: `childLocal` before branch strictlevels; `fits` compares the slots of each run.)
        func registration(for key: Key, from container: Container) -> Borrowed<Registration>? {
            let start: Int
            if recordsLocals && container === lookup {
                start = 0
            } else if let level = level(of: container) {
                start = componentLevels[level].start
            } else {
                return container.unretainedRegistration(for: key)
            }
            // (A cleared slot, nil, is passed over: its key is looked up further out, as the build's lookup does.)
            for slot in start..<component.count { if let r = component[slot], r.borrow({ $0.key == key }) { return r } }
            return componentOwner!.unretainedRegistration(for: key)
        }

        /// A step's or slot's `lookup` and `lookupSlot` under `foreign`: a stacked level's by its slot (each run's
        /// level; the recorded container may be gone by then), an ancestor's by address (the owner keeps it).
        static func lookups(_ foreign: Container?, _ slot: Int) -> (Borrowed<Container>?, Int) {
            slot >= 0 ? (nil, slot) : (foreign.map { Borrowed($0) }, -1)
        }

        /// Whether `r`'s cache of `scope` holds an instance now.
        static func isCached(_ r: Registration, _ scope: Scope) -> Bool {
            guard let hit = r.cachedRetained(scope) else { return false }
            hit.release()
            return true
        }

        /// Whether a build would revive `r`'s dead weak instance (a binding still holds its object:
        /// `Graph.revive`) rather than call its factory: a plan does where its check is where the build's
        /// walk reaches it (`Plan.revivesWhereReached`), else the build does (`Graph.claimCreations`).
        static func revives(_ r: Registration, _ scope: Scope) -> Bool {
            scope.isKeptWeakly && r.hasRevivable
        }

        var depth: Int { frames.count }
        var topParams: UnsafeBufferPointer<Param> { frames[frames.count - 1].registration.borrow { $0.params } }
        var topSlot: Int { frames[frames.count - 1].slot }
        func advance() { frames[frames.count - 1].slot += 1 }

        func open(_ frame: Frame) {
            onPath.insert(frame.id)
            frames.append(frame)
        }

        func close() {
            onPath.remove(frames.removeLast().id)
        }

        func fill(_ param: Param, at slot: Int) throws(Decline) -> CreationOrder.Fill<Int, Frame> {
            let top = frames.count - 1
            // Under a singleton from further up (`Frame.foreign`) its slots look up there, as the build's frame
            // (`Graph.push`): the cell's or list's container is that one (`SlotInput.lookup`; a stacked level's the run's).
            let lookup = frames[top].foreign ?? self.lookup
            switch param.kind.planned {
            case .instance:
                guard let dep = registration(for: param.key!, from: lookup) else { throw missing(param.key!) }
                guard !dep.borrow({ $0.hasArguments }) else { throw argumentDependency(param.key!) }
                try refuseCaptive(dep, key: param.key!)
                return try reach(dep)
            case .context:
                frames[top].inputs.append(Plan.context)
            case .resolver:
                if allowsResolvers {  // a description: its runner makes every instance itself
                    frames[top].inputs.append(Plan.resolver)
                } else {
                    // A resolver for the factory's call, made per resolve: its gets build into the graph the
                    // plan replays into (`Plan.makeSlots`), as the build's do (a container step's too: `finishSlots`).
                    guard recordsSlots else { throw .described }
                    addSlot(SlotInput(kind: .resolver))
                }
            case .argument:
                // (Never: only a root's frame takes them, and a shared scope none, `Registration.check`.)
                guard frames[top].takesArguments else { throw .other }
                frames[top].inputs.append(Plan.argument(frames[top].arguments))
                frames[top].arguments += 1
            // Slots made per resolve (in a container step too: such a plan replays into the graph, `Plan.replayRequest`).
            case .weak:
                guard recordsSlots else { throw .described }
                guard let dep = registration(for: param.key!, from: lookup) else { throw missing(param.key!) }
                guard !dep.borrow({ $0.hasArguments }) else { throw argumentDependency(param.key!) }
                return try reach(dep)
            case .all:
                // One item per pass, as `Graph.fill`: the list as the configuration fixes it.
                guard recordsSlots else { throw .described }
                if frames[top].listSlot != slot {
                    let items = allRegistrations(for: param.key!, from: lookup)
                    (frames[top].listSlot, frames[top].listItems, frames[top].listSteps) = (slot, items, [])
                }
                let next = frames[top].listSteps.count
                if next < frames[top].listItems.count {
                    let item = Borrowed(frames[top].listItems[next])
                    guard !item.borrow({ $0.hasArguments }) else { throw argumentDependency(item.borrow { $0.key }) }
                    try refuseCaptive(item, key: item.borrow { $0.key })
                    return try reach(item)
                }
                addSlot(SlotInput(kind: .all, items: frames[top].listSteps))
                (frames[top].listSlot, frames[top].listItems, frames[top].listSteps) = (-1, [], [])
            case .lazy(let isWeak):
                guard recordsSlots else { throw .described }
                var input = SlotInput(kind: isWeak ? .weakLazy : .lazy, key: param.key!)
                // What `Graph.rememberGraph` finds: the graph's instance now, one under construction or
                // one it may make later (bound as it enters), or none (the cell resolves on its first call).
                if let r = registration(for: param.key!, from: lookup) {
                    let id = ObjectIdentifier(r.object)
                    let scope = r.borrow { $0.specReference.borrow { $0.scope } }
                    if let step = stepOf[id] {
                        input.step = step
                    } else if onPath.contains(id) || scope.isKeyedInGraph {
                        // A container step or a value taken from the resolving container enters no instance
                        // (`Graph.existing`): the cell stays waiting, as the run decides (`makeSlots`).
                        (input.later, input.after) = (r, steps.count)
                    }
                }
                addSlot(input)
            case .factory:
                guard recordsSlots else { throw .described }
                addSlot(SlotInput(kind: .factory, key: param.key!))
            }
            return .filled
        }

        /// A DEP, WEAK or ALL slot reaching `key`, which takes runtime arguments: the build's error
        /// (`Graph.argumentDependency`, naming the frames open), kept for a plan that fails as the build does.
        func argumentDependency(_ key: Key) -> Decline {
            let path = path
            return met(Graph.argumentDependency(key, neededBy: pathText(path), path: path), .metFailure)
        }

        /// A creation step's frame in a strict container refuses a shorter-lived strong dependency `dep`
        /// (`key`) as the build's does (`Graph.refuseCaptive`, before it looks `dep` up): the plan fails there (`metFailure`).
        func refuseCaptive(_ dep: Borrowed<Registration>, key: Key) throws(Decline) {
            let top = frames.count - 1
            guard refuses(frames[top]) else { return }
            let holderScope = frames[top].registration.borrow { $0.spec.scope }
            let targetScope = dep.borrow { $0.spec.scope }
            guard holderScope.captures(targetScope) else { return }
            let path = path
            let via = frames.count > 1 ? " (while resolving \(pathText(path)))" : ""
            throw met(captiveError(holder: frames[top].registration.borrow { $0.key }, holderScope, target: key, targetScope,
                                   via: via, note: strictNote), .metFailure)
        }

        /// The top frame's next input is `slot`, a slot made per resolve (its cell resolving where the frame looks up).
        private func addSlot(_ slot: SlotInput) {
            var slot = slot
            (slot.lookup, slot.lookupSlot) = Self.lookups(frames[frames.count - 1].foreign, frames[frames.count - 1].foreignSlot)
            frames[frames.count - 1].inputs.append(Plan.slot(slots.count))
            slots.append(slot)
        }

        /// The steps an input names: its step, a WEAK slot's, an ALL slot's items.
        private func stepsNamed(by input: Int) -> [Int] {
            if Plan.isStep(input) { return [input] }
            guard Plan.isSlot(input) else { return [] }
            let slot = slots[Plan.slotNumber(input)]
            return slot.kind == .weak ? [slot.step] : slot.items
        }

        /// After `visit`: each LAZY slot filled before its key's instance was in the graph gets what
        /// `Graph.bindAwaiting` would do: bound as its owner is made when that instance was made
        /// before or taken from a cache (the owner was not: no retain-cycle check), else waiting for it in
        /// the graph. Over container or value steps the run replays into the graph with the request
        /// (`Plan.replayRequest`); a shared step only a container step taken cached asked for is not taken
        /// (`makeSlots`), nor is a value bound: the cell waits.
        /// Over container or value steps a RESOLVER slot's run enters the steps before its owner as the run's end
        /// does (`Plan.openFrames`, `enterRequest`); a container step after its owner that is not one of the owner's
        /// askers (its frame not open then) is claimed late (`Step.claimsLate`): a get may build it, which the build
        /// claims there (the run takes it from the graph, `takeBuilt`), else the build claims it where its walk asks.
        /// The steps its gets built are noted in `Graph.replaySkips` (`takeBuilt`), a plan of any size's (`StepBits`;
        /// `tooLarge` past 64 steps before branch largemasks). A container step past the 64th step in a plan that
        /// `needsGraph` (slots, completion callbacks, creation steps): the graph's masks are `StepBits` (`Graph.claimedSkip`,
        /// `lateContainerClaims`, `unclaimedUnder`; `tooLarge` before branch graphmasks).
        func finishSlots() throws(Decline) {
            guard !slots.isEmpty else { return }
            if readsRequest {
                for slot in slots where slot.kind == .resolver && slot.owner >= 0 {
                    var askers = Set<Int>()
                    var k = slot.owner
                    while k >= 0 { askers.insert(k); k = steps[k].parent }
                    for c in steps.indices where c > slot.owner && steps[c].isContainer && !askers.contains(c) { steps[c].claimsLate = true }
                }
            }
            // (A failing plan's slot whose owner's frame was still open at the failure has no owner step: never called.)
            for n in slots.indices where slots[n].kind == .resolver && slots[n].owner >= 0 { steps[slots[n].owner].opensFrames = true }
            for n in slots.indices {
                guard let r = slots[n].later else { continue }
                // The first instance of `r` the graph takes after the slot was filled: made, or taken from its
                // cache (`Graph.existing` binds it as it takes it; the run has it before any factory, `takeShared`,
                // so the owner binds it as made). A value taken is not bound (`existing`): the cell waits.
                let value = r.borrow { $0.isDeclaredValue }
                let made = steps.indices.first { $0 >= slots[n].after && steps[$0].recorded === r && !(value && steps[$0].isShared) }
                if let s = made, s < slots[n].owner || steps[s].isShared {
                    slots[n].step = s
                } else {
                    slots[n].awaits = r
                    if recordsLocals { slots[n].awaitsLocal = component.firstIndex { $0.map { $0 === r } ?? false } ?? -1 }
                    if let s = made { steps[s].bindsCells = true }
                    // A container step made after the owner, unless the run takes it cached (before any factory,
                    // `claimContainerSteps`): the owner binds it then, as `existing` does; else it waits (`makeSlots`).
                    if let s = made, steps[s].isContainer { slots[n].step = s }
                }
            }
        }

        func take(_ step: Int, _ param: Param, at slot: Int) throws(Decline) {
            let top = frames.count - 1
            if frames[top].isContainer {
                // A creation step (a singleton's or a weak one's) is made before the container step, its cell
                // claimed with the container steps' (`Graph.claimWithContainerSteps`); a shared one (either) is
                // taken from its cache before any factory, as the build takes it where the container step asks.
                // A made (graph- or transient-scoped) step: the core's run makes it before the container
                // step, or none of those under it when the container steps are cached (`markUnderContainer`).
                // (Not `makesContainer`: a described plan's walk, whose runner takes only those under a container step.)
                guard makesContainer || steps[step].isContainer || steps[step].recorded.borrow({ $0.isDeclaredValue })
                else { throw .containerInput }
            }
            switch param.kind.planned {
            case .weak: addSlot(SlotInput(kind: .weak, step: step))
            case .all: frames[top].listSteps.append(step)  // an item: the slot is filled when the list is (`fill`)
            case .instance, .context, .resolver, .argument, .lazy, .factory: frames[top].inputs.append(step)  // only DEP slots take a step here
            }
        }

        /// The top frame's step, after the steps of its inputs.
        func make() throws(Decline) -> Int {
            let frame = frames[frames.count - 1]
            let index = steps.count
            // A step made since the frame opened and named by a slot here was first asked for by
            // this one (a sibling that asked first set it already): the frame below it in `Graph`.
            for input in frame.inputs {
                for named in stepsNamed(by: input) where named >= frame.firstNew && steps[named].parent == -1 { steps[named].parent = index }
                if Plan.isSlot(input) { slots[Plan.slotNumber(input)].owner = index }
            }
            let firstInput = inputs.count
            inputs += frame.inputs
            let spec = frame.registration.borrow { $0.spec }
            if frame.isContainer {
                // Keyed and queued as a build enters it (`Graph.enter`): a replay into the graph (completion
                // callbacks) enters it so when made, keyed only when taken from the resolving container's cache.
                var step = Step(recorded: frame.registration, spec: frame.local >= 0 ? nil : Borrowed(spec),
                                firstInput: firstInput, isShared: false, isKeyed: true, completes: spec.completionCount > 0, parent: -1)
                step.isContainer = true
                step.local = frame.local
                step.slotCount = frame.inputs.count
                step.hasSlots = frame.inputs.contains(where: Plan.isSlot)
                (step.lookup, step.lookupSlot) = Self.lookups(frame.foreign, frame.foreignSlot)  // (its container's cache, claimed and published there)
                return try add(step, frame.id)
            }
            var step = Step(recorded: frame.registration, spec: frame.local >= 0 ? nil : Borrowed(spec), firstInput: firstInput,
                            isShared: false, isKeyed: spec.scope.isKeyedInGraph, completes: spec.completionCount > 0, parent: -1)
            step.local = frame.local
            step.slotCount = frame.inputs.count
            step.hasSlots = frame.inputs.contains(where: Plan.isSlot)
            step.creates = frame.creates
            (step.lookup, step.lookupSlot) = Self.lookups(frame.foreign, frame.foreignSlot)
            return try add(step, spec.scope.isKeyedInGraph ? frame.id : nil)
        }

        /// After the walk: marks the made steps first asked for under a container step
        /// (`Step.underContainer`), which a run finding the container steps cached skips, as a build
        /// that takes them from the cache never asks for them. Declines (`containerInput`) when a step
        /// outside takes one of those (a graph-scoped instance both share): that build makes it
        /// later, where the step outside asks for it, an order a skip does not give.
        func markUnderContainer() throws(Decline) {
            guard steps.contains(where: { $0.isContainer }) else { return }
            // A creation step under one is not marked: a run finding the container step it was asked for under
            // cached declines (`Graph.claimWithContainerSteps`), so none is skipped, and a step outside may take it.
            var under = [Bool](repeating: false, count: steps.count)
            for i in steps.indices where !steps[i].isShared && !steps[i].isContainer {
                var k = steps[i].parent
                while k >= 0 && !steps[k].isContainer { k = steps[k].parent }
                under[i] = k >= 0
                steps[i].underContainer = under[i] && !steps[i].creates
            }
            guard steps.contains(where: { $0.underContainer }) else { return }
            for k in steps.indices where !steps[k].isShared && !steps[k].isContainer && !under[k] {
                let slots = steps[k].slotCount
                for input in inputs[steps[k].firstInput ..< steps[k].firstInput + slots] {
                    if stepsNamed(by: input).contains(where: { steps[$0].underContainer }) { throw .containerInput }
                }
            }
        }

        /// After `visit`: every completion callback of the made steps, in the order
        /// `Graph` runs them (`Graph.inCompletionOrder`: by step, then as added), with the steps of its
        /// declared targets; nil when one is not a `DeclaredCompletion` (unless
        /// `resolvers`: then its `completion` is nil, a resolver-form callback) or a
        /// target is not a step of this graph (the callback would build it: `Graph` does that).
        func declaredCompletions(resolvers: Bool = false) -> [(step: Int, number: Int, completion: DeclaredCompletion?, targets: [Int])]? {
            let (steps, stepOf, lookup) = (self.steps, self.stepOf, self.lookup)
            var calls: [(step: Int, number: Int, completion: DeclaredCompletion?, targets: [Int])] = []
            // Made steps are in creation order: the order their instances enter the graph.
            var completing = steps.indices.lazy.filter { steps[$0].completes }.makeIterator()
            var i = 0
            // Not a decline (`callbackNotDeclared`, `callbackTarget` before branch declinesweep, never counted):
            // nil only means no object mode (`objects`: the resolve runs the same plan for an instance) or no
            // description (`Container.describePlan`).
            struct Undescribed: Error {}
            do throws(Undescribed) {
                try Graph.inCompletionOrder(next: {
                    guard let next = completing.next() else { return nil }
                    i = next
                    return steps[i].spec!.object.completions.count
                }) { (number: Int) throws(Undescribed) in
                    let completion = steps[i].spec!.object.completions[number]
                    guard let declared = completion as? DeclaredCompletion else {
                        guard resolvers else { throw Undescribed() }
                        calls.append((i, number, nil, []))
                        return
                    }
                    var targets: [Int] = []
                    for param in declared.params {
                        guard let target = lookup.unretainedRegistration(for: param.key!),
                              let step = stepOf[ObjectIdentifier(target.object)] else { throw Undescribed() }
                        targets.append(step)
                    }
                    calls.append((i, number, declared, targets))
                }
            } catch {
                return nil
            }
            return calls
        }

        /// After `visit`: what an object resolve reads, or nil when the plan cannot make objects (`makesObjects`).
        func objects() -> Objects? {
            guard !recordsLocals, slots.isEmpty, !readsRequest, graphLeaves.isEmpty,
                  let declared = declaredCompletions() else { return nil }
            var objects = Objects()
            var keeps = [Bool](repeating: false, count: steps.count)
            for call in declared {
                guard let completion = call.completion as? ObjectCompletion,
                      completion.params.allSatisfy({ if case .weak = $0 { true } else { false } }) else { return nil }
                objects.calls.append(CompletionCall(step: call.step, number: call.number, completion: .init(completion),
                                                    firstTarget: objects.inputs.count, targets: call.targets.count))
                objects.inputs += call.targets
                for target in call.targets { keeps[target] = true }
                keeps[call.step] = true
            }
            for i in steps.indices {
                let r = steps[i].recorded.object
                guard !steps[i].isShared else {
                    guard r.spec.holdsObject else { return nil }
                    continue
                }
                // Object registrations declare .dependency params only (`Container.register`).
                guard steps[i].spec!.object.plainObject, let factory = r.factory as? ObjectFactory else { return nil }
                let slots = r.params.count
                objects.steps.append(ObjectStep(factory: .init(factory), index: i, firstInput: objects.inputs.count, slots: slots))
                for input in inputs[steps[i].firstInput ..< steps[i].firstInput + slots] {
                    objects.inputs.append(input << 1 | (keeps[input] ? Objects.keepBit : 0))
                }
            }
            return objects
        }

        func add(_ step: Step, _ id: ObjectIdentifier?) throws(Decline) -> Int {
            // (A container step past the 64th step: `wideMasks`.)
            steps.append(step)
            if let id { stepOf[id] = steps.count - 1 }
            return steps.count - 1
        }
    }
}
