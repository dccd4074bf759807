/// A resolve replayed from a recorded order. For a root whose whole graph is
/// plain (graph- and transient-scoped registrations with DEP and CONTEXT slots
/// only, and the root's runtime-argument slots; singleton- and weak-scoped
/// dependencies are leaves taken from their caches), the order in which `Graph` would call the
/// factories, and which instance each slot gets, depend only on the
/// registrations. A plan records that once and replays it with no frames, no
/// per-registration table and no cycle checks: a resolve is then the factory
/// calls, the instances and their edges.
///
/// Completion callbacks run after the build and may ask the graph for more, so
/// a plan with any (`completes`) replays only the build, into the thread's
/// `Graph`: its instances go to the graph's `alive` in the order the frames
/// would have made them (a step's index is its instance's), the graph then
/// gets the table entries and completion queue the build would have left
/// (`Step.isKeyed`, `Step.completes`), and completes, publishes or aborts as
/// after any build. Without callbacks the replay needs no graph at all (`run`).
///
/// A plan is valid while the configuration of its container and the
/// container's parents is unchanged (`Container.configuration`). Anything it
/// cannot replay exactly as `Graph` would (a shared dependency not cached yet,
/// a cycle, a slot kind it does not know) makes it decline, before any factory
/// ran, and the graph resolves the ordinary way.
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

final class Plan: @unchecked Sendable {
    /// One instance to make (or, `isShared`, to take from its cache).
    struct Step {
        let registration: Borrowed<Registration>
        /// The registration's spec when recorded (made steps; the plan holds it: `specsHeld`):
        /// any spec change retires the plan, so it is the current one while the plan is.
        let spec: Borrowed<InstanceSpec>?
        /// This step's slots: `inputs[firstInput ..< firstInput + params.count]`.
        let firstInput: Int
        let isShared: Bool
        /// Left in the graph's table by a build (every scope but transient), so a
        /// completion callback asking for its registration gets this instance.
        let isKeyed: Bool
        /// Made here and queued for its completion callbacks.
        let completes: Bool
        /// A container-scoped registration made by a described plan's runner (`Recorder.allowsContainer`):
        /// at most once per resolving container, which keeps it (`PlanDescription.Step.container`).
        var isContainer = false
        /// The step that asked for this one first (its frame was below), -1 for the root: for messages.
        var parent: Int
        /// Where its record starts in a block (`InstanceBlock`), and its count
        /// there (its edges from the graph's made steps); made steps only.
        var blockOffset = 0
        var blockCount = 0
        /// For a plan of a child's resolves (`record(_:configuration:child:)`), the
        /// step of a registration the child holds itself: its slot in the child's
        /// per-request component (`component`), whose registration each resolve takes there; else -1.
        var local = -1
    }

    /// One slot of a child's per-request component (its own registrations, in the order their
    /// keys were first registered there: `RegistrationTable.smallSlots`), as a plan recorded
    /// through a child with that component needs it (`fits`): its key, scope, params, and whether
    /// it has completion callbacks (a local step never completes).
    struct ComponentSlot {
        let key: Key
        let scope: Scope
        let paramInfo: UInt16
        let completes: Bool
        /// Its params: `componentParams[firstParam...]`, as many as `paramInfo` says.
        let firstParam: Int
    }

    /// What an object resolve (`runObjects`) reads, dense: its made steps in
    /// creation order, their slots, and its completion calls.
    struct Objects {
        var steps: [ObjectStep] = []
        /// Per slot of `steps`: the input step's index shifted left once, with
        /// `keepBit` set when the resolve keeps its own reference to that object
        /// until the completion callbacks ran (it has some or is a target of one:
        /// a dependent's factory might drop it). Then the completion targets' steps.
        var inputs: [Int] = []
        var calls: [CompletionCall] = []
        static var keepBit: Int { 1 }
    }

    /// A made step of an object resolve: its factory (the registration keeps it),
    /// its index, and its slots `Objects.inputs[firstInput ..< firstInput + slots]`.
    struct ObjectStep {
        let factory: Borrowed<ObjectFactory>
        let index: Int
        let firstInput: Int
        let slots: Int
    }

    /// A completion callback of an object resolve, in the order `Graph` would
    /// run it: the step it completes, which of the step's callbacks, and the
    /// steps of its declared targets (`Objects.inputs[firstTarget ..< firstTarget + targets]`).
    struct CompletionCall {
        let step: Int
        let number: Int
        let completion: Borrowed<ObjectCompletion>
        let firstTarget: Int
        let targets: Int
    }

    /// Past this many instances, or this many slots in one factory, a graph
    /// resolves the ordinary way (its frames cost little next to that many calls).
    /// Constants, so a replay's buffers are plain stack memory.
    static var maxSteps: Int { 64 }
    static var maxSlots: Int { 32 }
    /// An input that is the registration's context, not a step's instance.
    static let context = -1
    /// An input that is a resolver slot: only in descriptions (`PlanDescription`),
    /// whose runner makes every instance itself; a replay here declines them.
    static let resolver = -2
    /// The input of the root's `n`th runtime argument (from 0): the resolve's
    /// arguments, checked against the root's params before the plan runs.
    static func argument(_ n: Int) -> Int { -3 - n }
    /// `n` of an input `argument(n)`.
    @inline(__always) static func argumentNumber(_ input: Int) -> Int { -3 - input }
    /// Whether an input is a step's instance (an edge), not a context, resolver or argument.
    @inline(__always) static func isStep(_ input: Int) -> Bool { input >= 0 }

    /// Post-order, as `Graph` builds: the root is last. Immutable plain memory
    /// (like `Registration.params`), so a replay reads it without reference counting.
    private let steps: UnsafeBufferPointer<Step>
    /// Per slot of every step: the step whose instance it receives, `context` or `argument(n)`.
    private let inputs: UnsafeBufferPointer<Int>
    /// The shared steps, in step order, with the scope each was recorded under
    /// (a scope change changes the configuration, which retires the plan; a
    /// child's local step takes a registration of that scope, `fits`).
    private let sharedSteps: UnsafeBufferPointer<SharedStep>
    private var hasShared: Bool { !sharedSteps.isEmpty }
    /// The made steps, in creation order.
    private let madeSteps: UnsafeBufferPointer<Int>
    /// The container-scoped steps (`Step.isContainer`), in creation order: each taken from the
    /// resolving container's cache, or made by the run and published there when the run succeeds.
    private let containerSteps: UnsafeBufferPointer<Int>
    private var hasContainer: Bool { !containerSteps.isEmpty }
    /// Whether a run reads the resolving container: container or value steps (`RequestRun`).
    private let readsRequest: Bool
    /// Container steps a plan has at most (`ContainerClaims` holds their cells in place).
    static var maxContainerSteps: Int { 4 }

    struct SharedStep {
        let step: Int
        let scope: Scope
        /// A declared value key's step: the value the resolving container provides
        /// (`Container.providedValue(of:)`), not a cache of the registration's.
        let isValue: Bool
        /// A singleton a block takes by a split reference (`runBlock`); a container step's
        /// instance keeps it as a split edge too (`makeInstance`): a request child's
        /// CONTAINER-scoped instance over the root's singletons writes no shared count.
        let splits: Bool
    }

    /// What `runBlock` copies into every block it makes (`BlockTemplate`).
    private let template: BlockTemplate

    /// A block's words as every run writes them (`blockWords` of them), the nodes'
    /// pointers, the shared instances' entries and local steps' specs left 0, and where
    /// those go: per word, the step whose factory's pointer (`pointers`), shared
    /// instance (`shared`, an external edge, in the order edges are recorded) or
    /// local step's spec (`localSpecs`, a child's plan) fills it.
    struct BlockTemplate {
        struct Patch {
            let word: Int
            let step: Int
        }
        let words: UnsafeBufferPointer<UInt>
        let pointers: UnsafeBufferPointer<Patch>
        let shared: UnsafeBufferPointer<Patch>
        let localSpecs: UnsafeBufferPointer<Patch>

        func deallocate() {
            words.deallocate()
            pointers.deallocate()
            shared.deallocate()
            localSpecs.deallocate()
        }
    }
    /// Whether the replay needs a graph to run completion callbacks afterwards.
    let completes: Bool
    /// The size of the block `run` makes (`InstanceBlock`), 0 when it makes one
    /// plain instance (a graph of one, or one that completes: callbacks may ask for any instance).
    private let blockWords: Int
    /// `Container.configuration` of the lookup container when recorded.
    let configuration: UInt
    /// Whether `runObjects` can resolve the graph: every made node a plain
    /// object (`InstanceSpec.plainObject`), every shared one an object, every
    /// completion callback an `ObjectCompletion` whose targets are weak ones in this graph.
    let makesObjects: Bool
    private let objectSteps: UnsafeBufferPointer<ObjectStep>
    private let objectInputs: UnsafeBufferPointer<Int>
    private let completionCalls: UnsafeBufferPointer<CompletionCall>
    /// A child's plan: the per-request component it was recorded through, slot by slot
    /// (`Step.local` names a slot), and the slots' params.
    private let component: UnsafeBufferPointer<ComponentSlot>
    private let componentParams: UnsafeBufferPointer<Param>
    /// Whether the plan is a child's (recorded through its component): its local steps, if
    /// any, take the child's registrations by slot.
    private var hasLocals: Bool { !component.isEmpty }

    /// A plan that always declines: the graph of its root is not plain (recorded
    /// so, until the configuration changes, resolves do not try again).
    static func declined(_ configuration: UInt) -> Plan { Plan(steps: [], inputs: [], configuration: configuration, objects: nil) }

    /// The specs of its steps (`Step.spec` refers to them unretained).
    private let specsHeld: [InstanceSpec]

    deinit {
        steps.deallocate()
        inputs.deallocate()
        objectSteps.deallocate()
        objectInputs.deallocate()
        completionCalls.deallocate()
        component.deallocate()
        componentParams.deallocate()
        sharedSteps.deallocate()
        madeSteps.deallocate()
        containerSteps.deallocate()
        template.deallocate()
    }

    private static func copy<T>(_ array: [T]) -> UnsafeBufferPointer<T> {
        let storage = UnsafeMutableBufferPointer<T>.allocate(capacity: array.count)
        _ = storage.initialize(from: array)
        return UnsafeBufferPointer(storage)
    }

    var declines: Bool { steps.isEmpty }
    var stepCount: Int { steps.count }

    /// Calls `body` with every step, in creation order.
    @inline(__always)
    func forEachStep(_ body: (Int, Step) -> Void) {
        for i in 0..<steps.count { body(i, steps[i]) }
    }

    /// `objects`: nil unless the plan makes objects.
    private init(steps: [Step], inputs: [Int], configuration: UInt, objects: Objects?,
                 component: [ComponentSlot] = [], componentParams: [Param] = []) {
        var steps = steps
        var words = InstanceBlock.firstOffset
        // A container step's instance is its container's (cached there), so it is an
        // external edge of the block, as a shared step's, never a record in it.
        for i in steps.indices where !steps[i].isShared && !steps[i].isContainer {
            let first = steps[i].firstInput
            let slots = inputs[first ..< first + steps[i].registration.borrow { $0.params.count }]
            for input in slots where Plan.isStep(input) { steps[input].blockCount += 1 }
            let edges = slots.count { Plan.isStep($0) }
            steps[i].blockOffset = words
            words += i == steps.count - 1 ? InstanceBlock.rootWords(edges: edges) : InstanceBlock.innerWords(edges: edges)
        }
        specsHeld = steps.compactMap { $0.spec?.object }  // registrations keep their visible specs meanwhile
        completes = steps.contains { $0.completes }
        let made = steps.count { !$0.isShared && !$0.isContainer }
        // One made step over a singleton is a block too: its edges to singletons are then split references.
        let overSingleton = steps.contains { step in
            step.isShared && step.registration.borrow { $0.specReference.borrow { $0.scope.isKeptStronglyByRegistration } }
        }
        blockWords = (made > 1 || made == 1 && overSingleton) && !completes ? words : 0
        self.steps = Plan.copy(steps)
        self.inputs = Plan.copy(inputs)
        self.configuration = configuration
        madeSteps = Plan.copy(steps.indices.filter { !steps[$0].isShared })
        containerSteps = Plan.copy(steps.indices.filter { steps[$0].isContainer })
        let shared = steps.indices.filter { steps[$0].isShared }.map { i in
            steps[i].registration.borrow { r in
                let scope = r.specReference.borrow { $0.scope }
                return SharedStep(step: i, scope: scope, isValue: r.isDeclaredValue, splits: scope.isKeptStronglyByRegistration)
            }
        }
        sharedSteps = Plan.copy(shared)
        readsRequest = !containerSteps.isEmpty || shared.contains { $0.isValue }
        template = Plan.blockTemplate(self.steps, self.inputs, words: blockWords)
        makesObjects = objects != nil
        objectSteps = Plan.copy(objects?.steps ?? [])
        objectInputs = Plan.copy(objects?.inputs ?? [])
        completionCalls = Plan.copy(objects?.calls ?? [])
        self.component = Plan.copy(component)
        self.componentParams = Plan.copy(componentParams)
    }

    /// The words of every block of a plan and where a run fills them in.
    private static func blockTemplate(_ steps: UnsafeBufferPointer<Step>, _ inputs: UnsafeBufferPointer<Int>, words: Int) -> BlockTemplate {
        typealias Patch = BlockTemplate.Patch
        let template = UnsafeMutableBufferPointer<UInt>.allocate(capacity: words)
        template.initialize(repeating: 0)
        var pointers: [Patch] = []
        var shared: [Patch] = []
        var localSpecs: [Patch] = []
        if words > 0 {
            let block = InstanceBlock(words: template.baseAddress!)
            let root = steps.count - 1
            for i in 0...root where !steps[i].isShared && !steps[i].isContainer {
                let offset = steps[i].blockOffset
                if i < root {
                    pointers.append(Patch(word: InstanceBlock.pointerWord(at: offset), step: i))
                    if steps[i].local >= 0 { localSpecs.append(Patch(word: InstanceBlock.specWord(at: offset), step: i)) }
                }
                var entry = InstanceBlock.firstEntry(at: offset, isRoot: i == root)
                let first = steps[i].firstInput
                // A local step's registration has the recorded params (`fits`).
                let slots = steps[i].registration.borrow { $0.params.count }
                // A local step's record gets its spec per run (0 here; `write` takes the recording registration's).
                let spec = i == root ? nil : steps[i].spec ?? steps[i].registration.borrow { $0.specReference }
                block.write(at: offset, pointer: 0, spec: spec, count: steps[i].blockCount) { add in
                    for input in inputs[first ..< first + slots] where Plan.isStep(input) {
                        if steps[input].isShared || steps[input].isContainer {
                            shared.append(Patch(word: entry, step: input))
                            add(0)
                        } else {
                            add(InstanceBlock.inner(at: steps[input].blockOffset))
                        }
                        entry += 1
                    }
                }
                if i < root && steps[i].local >= 0 { template[InstanceBlock.specWord(at: offset)] = 0 }
            }
        }
        return BlockTemplate(words: UnsafeBufferPointer(template), pointers: Plan.copy(pointers), shared: Plan.copy(shared),
                             localSpecs: Plan.copy(localSpecs))
    }

    /// Records the plan for `root` resolved from its own container, or nil when
    /// its graph is not plain (`Graph` resolves it, and reports what is wrong).
    static func record(_ root: Registration, configuration: UInt) -> Plan? {
        guard !root.spec.scope.isShared, !root.isDeclaredValue else { return nil }
        let recorder = Recorder(lookup: root.container, allowsArguments: true)
        recorder.makesContainer = true
        guard recorder.visit(Borrowed(root)) != nil, !recorder.containerWithCompletions else { return nil }
        return Plan(steps: recorder.steps, inputs: recorder.inputs, configuration: configuration, objects: recorder.objects())
    }

    /// Records the plan for `root` resolved from `child`, a descendant of its
    /// container with registrations of its own (one per request, say), nothing
    /// registered between them: `child`'s registrations are its per-request component
    /// over the owner's configuration, and the steps of those the graph reaches (if any) are
    /// local, each naming its slot in the component. The plan serves every child whose
    /// component has the same slots (`fits`), each resolve running that child's factories
    /// with its contexts. Nil when the child's table is not small, or the graph is not
    /// plain or has completion callbacks (`Graph` resolves it).
    static func record(_ root: Registration, configuration: UInt, child: Container) -> Plan? {
        guard !root.spec.scope.isShared, let block = child.tableIfAny?.borrow({ $0.smallSlots }) else { return nil }
        let recorder = Recorder(lookup: child)
        for slot in 0..<RegistrationTable.slotCount(block) {
            guard let r = RegistrationTable.registration(atSlot: slot, in: block) else { return nil }
            recorder.component.append(r)
        }
        recorder.recordsLocals = true
        recorder.makesContainer = true
        // With completion callbacks the graph replays it (`Graph.replay`), keyed by the steps'
        // own registrations: a local step's is the recording child's, so such graphs are built.
        // A graph that reaches none of the child's registrations gets a plan too (no local
        // steps): the next child of that component runs it, not the ordinary build.
        guard recorder.visit(Borrowed(root)) != nil, !recorder.steps.contains(where: { $0.completes }) else { return nil }
        var slots: [ComponentSlot] = []
        var params: [Param] = []
        for registration in recorder.component {
            registration.borrow { r in
                let spec = r.spec
                slots.append(ComponentSlot(key: r.key, scope: spec.scope, paramInfo: r.paramInfo,
                                           completes: spec.completionCount > 0, firstParam: params.count))
                params += r.params
            }
        }
        return Plan(steps: recorder.steps, inputs: recorder.inputs, configuration: configuration, objects: nil,
                    component: slots, componentParams: params)
    }

    /// Whether `child`'s per-request component (its own registrations, slot by slot:
    /// `RegistrationTable.smallSlots`) is the one this child's plan was recorded through:
    /// as many slots, each of the recorded key, scope, params and completion callbacks or
    /// none. Then the graph from `child` is the recorded one, and each slot's registration
    /// goes to `locals` for the run (read once: one replaced meanwhile stays alive, kept
    /// by its container). The owner's configuration is checked by the caller.
    func fits(_ child: Container, _ locals: UnsafeMutablePointer<Borrowed<Registration>>) -> Bool {
        guard let block = child.tableIfAny?.borrow({ $0.smallSlots }), RegistrationTable.slotCount(block) == component.count else { return false }
        for slot in 0..<component.count {
            let shape = component[slot]
            guard let registration = RegistrationTable.registration(atSlot: slot, in: block),
                  registration.borrow({ r in
                      r.key == shape.key && r.paramInfo == shape.paramInfo
                          && r.specReference.borrow { $0.scope == shape.scope && ($0.completionCount > 0) == shape.completes }
                          && r.params.elementsEqual(componentParams[shape.firstParam ..< shape.firstParam + r.params.count])
                  }) else { return false }
            locals[slot] = registration
        }
        return true
    }

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

    /// Records a plan's steps in creation order: `CreationOrder.walk` decides the order (as it
    /// does for `Graph.build`), this fills the slots with steps and declines what a plan does not
    /// cover (`Declines`).
    final class Recorder: CreationWalk {
        let lookup: Container
        /// Whether resolver slots are recorded (as `Plan.resolver`) rather than declined.
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
        /// most `maxContainerSteps`, in plans without completion callbacks (`containerWithCompletions`).
        /// Declared value keys then become steps taking the resolving container's value (`SharedStep.isValue`).
        var makesContainer = false
        /// Whether registrations of `lookup` itself become local steps (`Plan.record(_:configuration:child:)`).
        var recordsLocals = false
        /// With `recordsLocals`: `lookup`'s own registrations, by slot (its per-request component).
        var component: [Borrowed<Registration>] = []
        var steps: [Step] = []
        var inputs: [Int] = []
        /// Graph-scoped and shared registrations: their one step in this graph.
        var stepOf: [ObjectIdentifier: Int] = [:]
        /// Registrations with a frame open: one asked for again is a constructor cycle, which
        /// the recorder declines (`Graph` reports it).
        var onPath: Set<ObjectIdentifier> = []
        /// The frames of the walk, outermost first.
        private var frames: [Frame] = []

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
        }

        /// The graph is not plain: the recording stops.
        struct Declines: Error {}

        /// The step of `registration`'s instance, its dependencies recorded first in creation
        /// order (`CreationOrder.walk`); nil when the graph is not plain.
        func visit(_ registration: Borrowed<Registration>) -> Int? {
            do throws(Declines) {
                switch try reach(registration) {
                case .found(let step): return step
                case .enter(let frame): return try CreationOrder.walk(self, entering: frame)
                case .filled: return nil  // (a registration's instance is never a word)
                }
            } catch {
                return nil
            }
        }

        /// `registration`'s step when it has one (or is a cached or value leaf, recorded now), else
        /// the frame that records it; declines what the plan does not cover.
        private func reach(_ registration: Borrowed<Registration>) throws(Declines) -> CreationOrder.Fill<Int, Frame> {
            let r = registration.object
            let id = ObjectIdentifier(r)
            if let step = stepOf[id] { return .found(step) }
            let spec = r.spec
            // Per-container caches and declared values: `Graph` resolves them (and reports a missing value);
            // a described plan names a declared value by key, its runner takes the resolving container's
            guard !spec.scope.isPerResolvingContainer || ((allowsContainer || makesContainer) && spec.completionCount == 0 && !r.hasArguments),
                  !r.isDeclaredValue || allowsValues || makesContainer else { throw Declines() }
            var local = -1
            if recordsLocals && r.container === lookup {
                // Its slot; a child's own container-scoped registration, or one with completion
                // callbacks: `Graph` builds it (a local step takes each child's registration).
                guard let slot = component.firstIndex(where: { $0.opaque == registration.opaque }),
                      !spec.scope.isPerResolvingContainer, spec.completionCount == 0 else { throw Declines() }
                local = slot
            }
            let isContainer = spec.scope.isPerResolvingContainer
            if !isContainer && (spec.scope.isShared || r.isDeclaredValue) {
                var step = Step(registration: registration, spec: nil, firstInput: inputs.count, isShared: true,
                                isKeyed: true, completes: false, parent: -1)
                step.local = local
                return .found(try add(step, id))
            }
            // A cycle (its frame is open) declines; the depth is bounded as the steps are.
            guard steps.count < Plan.maxSteps, onPath.count < Plan.maxSteps, r.params.count <= Plan.maxSlots,
                  !onPath.contains(id) else { throw Declines() }
            let isRoot = frames.isEmpty && steps.isEmpty
            if isContainer {
                guard !makesContainer || steps.count(where: { $0.isContainer }) < Plan.maxContainerSteps else { throw Declines() }
            } else {
                guard !r.hasArguments || (allowsArguments && isRoot) else { throw Declines() }
            }
            // A request's container steps take no runtime arguments (only a root does, and it is not one).
            return .enter(Frame(registration: registration, id: id, local: local, isContainer: isContainer,
                                takesArguments: allowsArguments && isRoot && !isContainer, firstNew: steps.count))
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

        func fill(_ param: Param, at slot: Int) throws(Declines) -> CreationOrder.Fill<Int, Frame> {
            let top = frames.count - 1
            switch param.kind.planned {
            case .instance:
                guard let dep = lookup.unretainedRegistration(for: param.key!), !dep.borrow({ $0.hasArguments }) else { throw Declines() }
                return try reach(dep)
            case .context:
                frames[top].inputs.append(Plan.context)
            case .resolver:
                guard allowsResolvers else { throw Declines() }
                frames[top].inputs.append(Plan.resolver)
            case .argument:
                guard frames[top].takesArguments else { throw Declines() }
                frames[top].inputs.append(Plan.argument(frames[top].arguments))
                frames[top].arguments += 1
            case .declined:
                throw Declines()
            }
            return .filled
        }

        func take(_ step: Int, _ param: Param, at slot: Int) throws(Declines) {
            let top = frames.count - 1
            if frames[top].isContainer {
                let dep = steps[step].registration
                guard steps[step].isContainer || dep.borrow({ $0.isDeclaredValue })
                      || makesContainer && steps[step].isShared && dep.borrow({ $0.spec.scope.isKeptStronglyByRegistration })
                else { throw Declines() }
            }
            frames[top].inputs.append(step)
        }

        /// The top frame's step, after the steps of its inputs.
        func make() throws(Declines) -> Int {
            let frame = frames[frames.count - 1]
            let index = steps.count
            // A step made since the frame opened and named by a slot here was first asked for by
            // this one (a sibling that asked first set it already): the frame below it in `Graph`.
            for input in frame.inputs where input >= frame.firstNew && steps[input].parent == -1 { steps[input].parent = index }
            let firstInput = inputs.count
            inputs += frame.inputs
            let spec = frame.registration.borrow { $0.spec }
            if frame.isContainer {
                var step = Step(registration: frame.registration, spec: Borrowed(spec),
                                firstInput: firstInput, isShared: false, isKeyed: false, completes: false, parent: -1)
                step.isContainer = true
                return try add(step, frame.id)
            }
            var step = Step(registration: frame.registration, spec: frame.local >= 0 ? nil : Borrowed(spec), firstInput: firstInput,
                            isShared: false, isKeyed: spec.scope.isKeyedInGraph, completes: spec.completionCount > 0, parent: -1)
            step.local = frame.local
            return try add(step, spec.scope.isKeyedInGraph ? frame.id : nil)
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
            do throws(Declines) {
                try Graph.inCompletionOrder(next: {
                    guard let next = completing.next() else { return nil }
                    i = next
                    return steps[i].spec!.object.completions.count
                }) { (number: Int) throws(Declines) in
                    let completion = steps[i].spec!.object.completions[number]
                    guard let declared = completion as? DeclaredCompletion else {
                        guard resolvers else { throw Declines() }
                        calls.append((i, number, nil, []))
                        return
                    }
                    var targets: [Int] = []
                    for param in declared.params {
                        guard let target = lookup.unretainedRegistration(for: param.key!),
                              let step = stepOf[ObjectIdentifier(target.object)] else { throw Declines() }
                        targets.append(step)
                    }
                    calls.append((i, number, declared, targets))
                }
            } catch {
                return nil
            }
            return calls
        }

        /// After `visit`: whether the graph has container or value steps and completion callbacks:
        /// the core's run of those reads the resolving container, which a replay into a graph
        /// does not pass (`Graph.replay`), so `Graph` builds it.
        var containerWithCompletions: Bool {
            steps.contains { $0.isContainer || $0.registration.borrow { $0.isDeclaredValue } } && steps.contains { $0.completes }
        }

        /// After `visit`: what an object resolve reads, or nil when the plan cannot make objects (`makesObjects`).
        func objects() -> Objects? {
            guard !recordsLocals, !steps.contains(where: { $0.isContainer || $0.registration.borrow { $0.isDeclaredValue } }), let declared = declaredCompletions() else { return nil }
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
                let r = steps[i].registration.object
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

        private func add(_ step: Step, _ id: ObjectIdentifier?) throws(Declines) -> Int {
            guard steps.count < Plan.maxSteps else { throw Declines() }
            steps.append(step)
            if let id { stepOf[id] = steps.count - 1 }
            return steps.count - 1
        }
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
                return .success(try registration.factory.make(words, count: slots))
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
