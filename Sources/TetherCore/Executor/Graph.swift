import Synchronization

/// One top-level resolve. Factories run depth-first along declared constructor
/// dependencies on an explicit stack (no recursion per level); every instance
/// enters the graph as soon as its factory returns; completion callbacks are
/// deferred until no factory of the graph is running, then run in creation
/// order. Any failure destroys everything the graph created and caches nothing.
///
/// A graph's storage is reused by the next resolve on the same thread, so a
/// resolve allocates little beyond the instances themselves.
final class Graph {
    /// A thread's graph is written all through its resolves: no other allocation on its lines (`LinePad`).
    private let leadingPad = LinePad()
    /// Everything this graph created or reused: kept alive until the resolve
    /// returns. Other lists of the graph hold them unretained, by index here.
    /// An instance's first new owner (a dependent's edge, the caller) takes the
    /// graph's own reference, so a chain is built and handed over without
    /// reference counting; what nothing took is released at the end.
    private var alive = ReferenceStack<Instance>()
    /// Per registration: under construction (it has a frame), or this graph's
    /// non-transient instance of it (its index in `alive`).
    private var table = GraphTable()
    /// Frames of every build under way, outermost first (nested builds from a
    /// resolver continue above). Their registrations are the ones under construction.
    private var frames = PlainStack<Frame>()
    /// Argument words of the frames, contiguous; a frame owns `wordBase ..< wordBase + params.count`.
    private var words = PlainStack<UInt64>()
    /// Dependencies gathered by the frames, contiguous like `words`: indices in `alive`.
    private var dependencyStack = PlainStack<Int>()
    /// Weak and lazy slots of the frames (rare), in frame order: the frame, the
    /// word the slot fills, its object. Kept out of `Frame` so frames stay plain data.
    private var weakSlots: [(frame: Int, index: Int, ref: WeakRef)] = []
    private var lazySlots: [(frame: Int, index: Int, cell: LazyCell)] = []
    /// Lazy cells filled in this resolve waiting for the graph's instance of their key
    /// (`LazyCell.bind`): bound when an instance of that registration enters the graph.
    private var awaitingCells: [(registration: Borrowed<Registration>, cell: LazyCell)] = []
    /// ALL slots (rare): the registrations listed, how many are attached so far, and where
    /// their instances start on `dependencyStack`. FACTORY slots: the key to build.
    private var allSlots: [(frame: Int, index: Int, registrations: [Registration], next: Int, first: Int)] = []
    private var factorySlots: [(frame: Int, index: Int, key: Key)] = []
    /// Keys of the frames, for messages; a request made while a request's plan runs (`requestedMeanwhile`):
    /// that plan's steps under construction where the build's frames would hold them.
    var path: [Key] {
        guard let open = meanwhileOpen else { return (0..<frames.count).map { frames[$0].registration.object.key } }
        return (0..<open.base).map { frames[$0].registration.object.key } + open.steps.map { $0.borrow { $0.key } }
            + (open.base..<frames.count).map { frames[$0].registration.object.key }
    }
    /// The registrations of the frames, outermost first (`Reentry`), after those of the plan a
    /// nested resolve runs on its own progress (`ownProgress`) from its root to the step under way.
    var constructing: [Borrowed<Registration>] {
        // (A request made meanwhile: the running request's steps under construction inside the frames, `path`.)
        if let open = meanwhileOpen {
            return planConstructing + cutOpen + (0..<open.base).map { frames[$0].registration } + open.steps + (open.base..<frames.count).map { frames[$0].registration }
                + (meanwhileRuns ? requestConstructing : [])
        }
        return planConstructing + cutOpen + (0..<frames.count).map { frames[$0].registration } + requestConstructing
    }
    /// The frames a build has open where a plan's run up to a cut stopped (`replayMeeting`), while its error is made.
    private var cutOpen: [Borrowed<Registration>] = []
    /// What the plan of a nested resolve is constructing (its progress, `ownProgress`): the steps from its root.
    private var planConstructing: [Borrowed<Registration>] {
        guard let own = ownProgress, let plan = own.pointee.plan else { return [] }
        return plan.borrow { $0.constructing(at: own.pointee.step, own.pointee.locals) }
    }
    /// What the plan of a resolver's request runs (`runAsked`, on `requestProgress`): the steps from its root, inside the frames.
    private var requestConstructing: [Borrowed<Registration>] {
        guard requestRunning, let own = requestProgress, let plan = own.pointee.plan else { return [] }
        return plan.borrow { $0.constructing(at: own.pointee.step, own.pointee.locals) }
    }
    /// This graph's part of a re-entry's path (`Reentry.reentered`): while a completion callback of a
    /// nested resolve runs, its root and the instance completed (both made), then the frames, and
    /// `asking` (what this graph asks for, when it is the innermost) as one more; whether a resolve
    /// nested now comes from that callback.
    func chainPart(asking: Borrowed<Registration>?) -> (steps: [Reentry.Step], inCallback: Bool) {
        var steps: [Reentry.Step] = []
        if let completing {
            if let nestedRoot, !(nestedRoot === completing) { steps.append(.init(registration: nestedRoot, link: .slot, underConstruction: false)) }
            steps.append(.init(registration: completing, link: .slot, underConstruction: false))
        }
        let constructing = constructing
        for (i, registration) in (constructing + (asking.map { [$0] } ?? [])).enumerated() {
            steps.append(.init(registration: registration, link: i == 0 && completing != nil ? .callback : .slot,
                               underConstruction: i < constructing.count))
        }
        // (A request's plan running for that callback: its factories are what constructs, `requestConstructing`.)
        return (steps, completing != nil && frames.count == 0 && !requestRunning)
    }
    /// Whether a factory of this graph is under way (`constructing` is not empty).
    var isConstructing: Bool { frames.count > 0 || ownProgress?.pointee.plan != nil || requestRunning }
    /// What resolves further out on this thread were constructing when this
    /// nested one began (`Reentry.constructing`): asking for one of them is a cycle.
    var outer: [Borrowed<Registration>] = []
    /// With `outer`: the registration this nested resolve was asked for, and the one whose
    /// completion callback runs (if any), for the path of a re-entry (`chainPart`).
    private var nestedRoot: Borrowed<Registration>?
    private var completing: Borrowed<Registration>?
    /// Instances waiting for their completion callbacks.
    private var queue = PlainStack<Pending>()
    /// Completion callbacks' requests, each with what caused the instance asking (`Pending.cause`):
    /// the chain `buildAsked` checks for a lap that repeats forever. Cleared with the graph.
    private var requests: [CallbackRequest] = []
    /// The keys of the frames when an instance with callbacks was made for such a request (`Pending.via`), for the lap's path.
    private var viaPaths: [[Key]] = []
    /// The request whose build runs (-1: none; `unrecordedCause`: not in `requests` yet), the cause of
    /// every instance it makes. Most requests make no instance with callbacks, so they record nothing:
    /// the first such instance records it (`recordCause`: the key asked is its build's first frame).
    private var currentCause = -1
    private static let unrecordedCause = -2
    /// `keptMade` when that request was asked.
    private var requestKeptBefore = 0
    /// The instance whose completion callbacks run: its index in `queue` (its `Pending` has its
    /// registration, cause and via), -1 when none runs.
    private var runningCallback = -1
    /// Whether `buildAsked` refused a lap in the callback that runs, and that cycle: the resolve's error.
    private var lapWasRefused = false
    private var lapRefused: TetherError?
    /// Instances made that the graph or a cache keeps (not transient): a lap that made none left
    /// everything as it found it, so the next lap makes the same again.
    private var keptMade = 0
    private var queueHead = 0
    /// The resolver of the last completion callback, for the next one.
    private var spareResolver: Resolver?
    /// Shared-scope instances to publish when the graph succeeds (with the
    /// container that caches a container-scoped one).
    /// Registrations and containers unretained (they outlive the resolve): a parent's registration
    /// is shared by every thread's requests, and a count on it would be a word they all write.
    private var pendingShared: [(Borrowed<Registration>, Instance, Borrowed<Container>?)] = []
    /// Weak-scoped instances of objects a binding still held (`revive`), published with the others.
    private var revivedShared: [(Borrowed<Registration>, Instance)] = []
    /// The creation cells this graph holds (`SharedCache`), released once it is published or failed.
    private var cells: [SharedCache.Cell] = []
    /// Creation steps of the plan replaying into this graph it made under a cell a resolve further out on
    /// this thread claimed (`SharedCache.Claim.createUnderOuter`, no cell of its own: `madeCreation`), by
    /// registration: published with the graph as the build's, the cell left the outer's. Emptied with `cells`.
    private var madeUnderOuter: [ObjectIdentifier] = []
    /// The cells a resolve further out on this thread claimed that this graph creates under (`createUnderOuter`),
    /// and those it made the instance under, each counted once in the cell's `madeBelow` until the graph ends
    /// (`releaseCells`): a resolve nested further in is refused that instance as unfinished. Emptied with `cells`.
    private var outerCells: [SharedCache.Cell] = []
    private var madeUnderOuterCells: [SharedCache.Cell] = []
    /// The root of the outermost build, whose constructor edges' cells are claimed in
    /// order at the first claim (`claimInOrder`), and whether that happened.
    private var claimRoot: (registration: Borrowed<Registration>, container: Borrowed<Container>)?
    /// While `replayMeeting` claims: the cut and the step it meets (`claimWithContainerSteps` claims only what the build asks for before it).
    private var cutClaims: (cut: Int, met: Int)?
    private var claimedInOrder = false
    /// A failing plan's first claim that failed after factories of the build (`claimPastFailure`): where the build's
    /// walk asks for that key (the cut), the step or open frame it asks for there (`Plan.meeting`'s numbering), and the
    /// claim's error, which the run reports there (`replayPastFailure`). Set only between the claims and that run.
    private var pastFailure: (cut: Int, met: Int, error: TetherError)?
    /// Instances `claimInOrder` found published: held so the build finds them cached.
    private var heldAhead: [Instance] = []
    /// Creation steps of the plan replaying into this graph that another thread published between the
    /// pick and their claims (`claimCreations`), each with the instance found: the run takes it cached
    /// (`takeClaimedHits`), as the build's `claimInOrder` holds one it finds published and takes it where
    /// its walk asks. `claimedSkip`: those steps and the ones under them, which the run does not make;
    /// `claimedHeld`: the ones under them no step still made takes, held till the graph ends, as `heldAhead`.
    private var claimedHits: [(step: Int, instance: Ref<Instance>)] = []
    private(set) var claimedSkip = StepBits()
    private var claimedHeld = StepBits()
    /// The claims of a creation plan that found keys published it could not take were kept (`endClaims`): the
    /// cells still held, the keys found held in `heldAhead`, so the plan picked next (`run`) is the one for the
    /// state they found, which no other thread can change under them.
    private var keptClaims = false
    /// `keptClaims` of a resolver's request (`claimAsked`): `runAsked` picks the request's plan again under them.
    private var keptAskedClaims = false
    /// Creation steps `claimWithContainerSteps` (or a request's `claimAsked`) neither claimed nor found published: first
    /// asked for under a container step found cached, which no step still made asks for (`leavesUntaken`: the build
    /// never asks for them). The run checks they are skipped (`Plan.execute`).
    private(set) var unclaimedUnder = StepBits()
    /// The runtime arguments of the build under way (its root's argument slots).
    private var buildArguments = UnsafeBufferPointer<Argument>(start: nil, count: 0)
    /// Factories and completion callbacks of this graph under way: while any is, this resolve cannot start over.
    private var userCode = 0
    /// A wait cycle this resolve breaks by starting over once the cell is released (`SharedCache.Claim.backOff`).
    private var backOff: (cell: SharedCache.Cell, error: TetherError)?
    /// How often one resolve starts over before it reports the cycle instead.
    private static let maxBackOffs = 64
    /// A provided value's registration this resolve picked and then found without its value, claimed as
    /// if to make it (`claimOne`): the configuration moved on meanwhile (an override cleared, the key
    /// registered again), so the resolve starts over on the configuration now (`run`, `Container.startOver`),
    /// as a plan whose cached leaf went declines and the resolve picks the plan of the state it finds. Nil once `run` took it.
    private var supersededValue: Borrowed<Registration>?
    /// The `SupersedeClock` read before this run's plan was picked (`PlanProgress.builtSince`) or its build
    /// looked anything up: what a configuration change superseded after is not cached (`publish`).
    private var builtSince: UInt = 0
    /// The hook of the container this resolve was started from, while one is set (`Container.setTrace`).
    private(set) var tracer: Tracer?
    /// The thread this graph runs on (its `ThreadState`'s address).
    var thread: UnsafeMutableRawPointer
    /// A nested resolve's graph (made while the thread constructs further out, `resolveNested`): where
    /// its plan notes its progress and binds a child's registrations, apart from the thread's
    /// (`ThreadState.planProgress`), which a plan further out may be running on.
    private var ownProgress: UnsafeMutablePointer<PlanProgress>?
    /// Where this graph's plans note their progress: its own, else the thread's.
    var progress: UnsafeMutablePointer<PlanProgress> {
        ownProgress ?? Borrowed<ThreadState>(opaque: thread).borrow { $0.planProgress }
    }
    private let trailingPad = LinePad()

    private var specs: ThreadSpecs { Borrowed<ThreadState>(opaque: thread).borrow { $0.specs } }

    init(thread: UnsafeMutableRawPointer, ownsProgress: Bool = false) {
        self.thread = thread
        words.reserve(16)  // a factory without parameters still gets a valid words pointer
        if ownsProgress {
            ownProgress = .allocate(capacity: 1)
            ownProgress!.initialize(to: PlanProgress())
        }
    }

    deinit {
        clear()
        alive.free()
        table.free()
        queue.free()
        frames.free()
        words.free()
        dependencyStack.free()
        for own in [ownProgress, requestProgress] {
            if let own { PlanProgress.free(own) }
        }
    }

    /// Nested top-level resolves on one thread beyond this depth are a runaway recursion.
    static let maxNesting = 256

    /// The root instance, with a reference for the caller.
    static func resolve(_ registration: Registration, from container: Container,
                        arguments: UnsafeBufferPointer<Argument>) throws(TetherError) -> Ref<Instance> {
        try resolve(registration, from: container, arguments: arguments, tracing: nil)
    }

    /// `resolve` while a trace hook is set (`Container.tracedResolve`): the same plans, run in their
    /// traced modes (`Plan.RunMode.traced`: the build's events in the build's order), or the build.
    /// Its own copy of the body: the untraced one tests nothing for it.
    @inline(never)
    static func resolve(_ registration: Registration, from container: Container,
                        arguments: UnsafeBufferPointer<Argument>, tracer: Tracer) throws(TetherError) -> Ref<Instance> {
        try resolve(registration, from: container, arguments: arguments, tracing: tracer)
    }

    @inline(__always)
    private static func resolve(_ registration: Registration, from container: Container,
                                arguments: UnsafeBufferPointer<Argument>, tracing tracer: Tracer?) throws(TetherError) -> Ref<Instance> {
        // A singleton's graph is its own container's, whichever container asks (`push`): so is its plan.
        // (A call again, not a `var`: a mutable copy costs every resolve a retain and a release.)
        if container !== registration.container && registration.specReference.borrow({ $0.scope.resolvesFromOwnContainer }) {
            return try resolveFromOwn(registration, arguments: arguments, tracer: tracer)
        }
        let outcome = ThreadState.currentReference.borrow { thread in
            thread.nesting += 1
            defer { thread.nesting -= 1 }
            if let counts = thread.planCounts { counts.countResolve() }
            guard thread.nesting <= maxNesting else {
                return Result<Ref<Instance>, TetherError>.failure(TetherError(.cycle, "resolves nested \(maxNesting) deep on one thread while resolving \(registration.key.quoted): a factory or provider keeps resolving itself; break the loop with a completion callback (tether_on_complete)", ErrorParts(.recursion, key: registration.key)))
            }
            // Nested while something is under construction: built step by step, each step checked against that.
            // (No array for the outermost resolve: an empty one still costs a release.)
            let outer = thread.nesting > 1 || !thread.replaying.isEmpty ? Reentry.constructing(thread) : nil
            if let outer, !outer.isEmpty {
                return resolveNested(registration, from: container, arguments: arguments, tracer: tracer, outer: outer, thread)
            }
            // Before the pick: a plan picked for the configuration before a change publishes nothing it superseded.
            thread.planProgress.pointee.builtSince = SupersedeClock.now
            var plan = registration.plan(from: container, thread.planProgress)
            if let alone = plan, !alone.borrow({ $0.needsGraph }) {
                switch alone.borrow({ tracer == nil ? $0.run(thread.specs, thread.planProgress, arguments, from: container, thread: Borrowed(thread).opaque)
                                        : $0.runTraced(thread.specs, thread.planProgress, arguments, from: container, thread: Borrowed(thread).opaque, tracer!) }) {
                case .success(let root?): return .success(root)
                case .success(nil): plan = heldReplay(alone, thread.planProgress)  // declined: picked below
                case .failure(let error): return .failure(error)
                }
            }
            // The plan compiled for the caches' state (a warm plan declined, or a singleton or weak root
            // not cached: its hits never come here), if any, else the graph builds it.
            let oneShots = thread.oneShotPlans.count  // (those this resolve picks go once its run has ended)
            defer { thread.dropOneShots(to: oneShots) }
            if plan == nil { plan = creationPlan(registration, from: container, thread.planProgress) }
            // The thread's own graph for the outermost resolve; nested ones get their own.
            let graph: Graph
            if thread.nesting == 1 {
                graph = thread.graph
            } else {
                graph = Graph(thread: Borrowed(thread).opaque)
                thread.nestedGraphs.append(.init(graph))
            }
            defer { if thread.nesting > 1 { thread.nestedGraphs.removeLast() } }
            guard let tracer else { return graph.run(registration, from: container, arguments: arguments, plan: plan) }
            graph.tracer = tracer
            defer { graph.tracer = nil }
            return graph.run(registration, from: container, arguments: arguments, plan: plan)
        }
        return try outcome.get()
    }

    /// `resolve` of a singleton (or weak) from another container: its own container's. Out of line, so
    /// the body it calls again is not recursive: `resolve`'s callers inline it (a call back into it kept
    /// it out of line, a call and a frame more every resolve).
    @inline(never)
    private static func resolveFromOwn(_ registration: Registration, arguments: UnsafeBufferPointer<Argument>,
                                       tracer: Tracer?) throws(TetherError) -> Ref<Instance> {
        let own = registration.container
        return if let tracer { try resolve(registration, from: own, arguments: arguments, tracer: tracer) }
            else { try resolve(registration, from: own, arguments: arguments) }
    }

    /// A resolve nested while this thread constructs `outer` (`Reentry.constructing`: in a factory
    /// of a resolve further out, or in a binding's replay). Its plan runs as an outermost one's,
    /// on a progress of its own (`Graph.ownProgress`: a plan further out may be under way on the
    /// thread's), so resolves nested in its factories see its steps under construction; unless a
    /// step of the plan is among `outer` (`Plan.meets`): that is a cycle, which the build reports
    /// with its path after the factories it reaches first, as without plans.
    @inline(never)
    private static func resolveNested(_ registration: Registration, from container: Container, arguments: UnsafeBufferPointer<Argument>,
                                      tracer: Tracer?, outer: [Borrowed<Registration>], _ thread: ThreadState) -> Result<Ref<Instance>, TetherError> {
        // The thread's own graph for a binding's replay (`Reentry.enterReplay`: no resolve further out).
        let outer = Reentry.met(outer, from: container)
        let nested = thread.nesting > 1
        let graph = nested ? Graph(thread: Borrowed(thread).opaque, ownsProgress: true) : thread.graph
        graph.outer = outer
        if nested { thread.nestedGraphs.append(.init(graph)) }
        defer { if nested { thread.nestedGraphs.removeLast() } else { graph.outer = [] } }
        // Traced: the same plans, in their traced modes (the graph's replay reads its `tracer`).
        graph.tracer = tracer
        defer { graph.tracer = nil }
        let progress = graph.progress
        progress.pointee.builtSince = SupersedeClock.now  // before the pick, as `resolve`'s
        var plan = registration.plan(from: container, progress)
        if let alone = plan, !alone.borrow({ $0.needsGraph }), !alone.borrow({ $0.meets(outer, progress.pointee.locals) }) {
            switch alone.borrow({ tracer == nil ? $0.run(thread.specs, progress, arguments, from: container, thread: Borrowed(thread).opaque)
                                    : $0.runTraced(thread.specs, progress, arguments, from: container, thread: Borrowed(thread).opaque, tracer!) }) {
            case .success(let root?): return .success(root)
            case .success(nil): plan = heldReplay(alone, progress)  // declined: picked below
            case .failure(let error): return .failure(error)
            }
        }
        let oneShots = thread.oneShotPlans.count  // (those this resolve picks go once its run has ended)
        defer { thread.dropOneShots(to: oneShots) }
        if plan == nil { plan = creationPlan(registration, from: container, progress) }
        return graph.run(registration, from: container, arguments: arguments, plan: plan)
    }

    /// `resolve` for a caller that wants the root's object (its registration
    /// `holdsObject`), owned: without instances when the plan makes objects.
    /// Unretained throughout: the container keeps the registration, which keeps its plans.
    @inline(__always)
    static func resolveObject(_ registration: Borrowed<Registration>, from container: Container) throws(TetherError) -> AnyObject {
        let thread = ThreadState.currentReference
        // Too deep: `resolve` reports it.
        if let plan = registration.borrow({ r in thread.borrow { r.plan(from: container, $0.planProgress) } }),
           plan.borrow({ $0.makesObjects }),
           thread.borrow({ ($0.nesting == 0 && $0.replaying.isEmpty) || ($0.nesting < maxNesting && Reentry.constructing($0).isEmpty) }) {
            thread.borrow { $0.nesting += 1 }
            let outcome = plan.borrow { p in thread.borrow { p.runObjects($0.planProgress) } }
            thread.borrow { $0.nesting -= 1 }
            switch consume outcome {
            case .root(let object):
                if let counts = thread.borrow({ $0.planCounts }) { counts.countResolve() }
                return object
            case .failure(let error):
                if let counts = thread.borrow({ $0.planCounts }) { counts.countResolve() }
                throw error
            case .declined: break
            }
        }
        let instance = try resolve(registration.object, from: container, arguments: .init(start: nil, count: 0))
        defer { instance.release() }
        return Borrowed<AnyObject>(opaque: instance.borrow { $0.pointer }).object
    }

    /// After `plan`'s run without a graph declined: `plan` again, replayed into the graph, when a container
    /// step's cell was held (`containerHeld`: by this thread's resolve further out, or by another thread
    /// for one that must not wait, acts for a token or is nested): the graph claims it as the build does
    /// (`Graph.claimContainerStep`, after `checkBeforeNotWaiting`), else nil (the plan for the caches' state
    /// is picked). Not a plan with a `cachedVariant`: a replay into the graph would not skip as it does.
    @inline(never)
    private static func heldReplay(_ plan: Borrowed<Plan>, _ progress: UnsafeMutablePointer<PlanProgress>) -> Borrowed<Plan>? {
        progress.pointee.decline == .containerHeld && plan.borrow({ $0.cachedVariant == nil }) ? plan : nil
    }

    /// The plan of `registration` compiled for the caches' state (`Registration.creationPlan`), after
    /// its warm plan declined; nil when the graph builds it. (A thread that must not wait, `WaitMode`,
    /// or acts for a token runs it too: its claims check first as the build's do, `claimCreations`.)
    @inline(never)
    private static func creationPlan(_ registration: Registration, from container: Container,
                                     _ progress: UnsafeMutablePointer<PlanProgress>) -> Borrowed<Plan>? {
        registration.creationPlan(from: container, progress)
    }

    /// How often a resolve picks a creation plan again after the one it picked found the caches
    /// changed in a way its run cannot take (`claimCreations`: a key another thread published that a
    /// step still made needs under it, a weak one died, a leaf reset) before it builds instead.
    private static let maxCreationPicks = 4
    /// How often a resolve picks again after its claims were kept (`keptClaims`): each such pick follows a key found
    /// published, held from then on (`heldAhead`), so the picks end when the keys do; a bound all the same, past
    /// which the resolve holds every key its build would claim and picks once more (`run`).
    private static let maxKeptPicks = 16

    /// One resolve on this graph, its build replayed from `plan` unless that
    /// declines (a warm plan's decline, or a creation plan's, picks the plan for the
    /// caches' state it found); the result carries a reference for the caller.
    private func run(_ registration: Registration, from container: Container,
                     arguments: UnsafeBufferPointer<Argument>, plan: Borrowed<Plan>?) -> Result<Ref<Instance>, TetherError> {
        var plan = plan
        defer {
            claimRoot = nil
            supersededValue = nil  // (a claim's error some caller swallowed must not start the next resolve over)
            clear()
        }
        if !outer.isEmpty { nestedRoot = .init(registration) }
        defer { nestedRoot = nil }
        var backOffs = 0  // start-overs: a wait cycle broken, or a value superseded
        builtSince = progress.pointee.builtSince  // read before `plan` was picked
        while true {
            do throws(TetherError) {
                var built: Int?
                var picks = 0
                while built == nil, let replayed = plan {
                    // A step under construction further out on this thread: the plan runs up to where the
                    // build asks for it, and reports the cycle (`replayMeeting`), unless it is one that does not.
                    if !outer.isEmpty && replayed.borrow({ $0.meets(outer, progress.pointee.locals) }) {
                        guard let met = replayed.borrow({ $0.meeting(outer, progress.pointee.locals) }) else {
                            progress.pointee.decline = .cycle
                            break
                        }
                        // Its claims found container steps cached: the variant for them, met again (bounded as the picks).
                        if let variant = try replayMeeting(replayed, met, registration, from: container, arguments: arguments) {
                            if picks < Self.maxCreationPicks {
                                picks += 1
                                plan = variant
                                continue
                            }
                            progress.pointee.decline = .containerHeld
                        }
                    } else {
                        built = try replay(replayed, registration, from: container, arguments: arguments)
                    }
                    if built != nil { break }
                    picks += 1
                    // Its claims kept (`endClaims`): the plan for the state they found, under them.
                    let kept = keptClaims
                    keptClaims = false
                    // Past `maxKeptPicks`: the claims kept, every other cell the build would claim claimed too, and the
                    // weak keys cached held (`claimInOrder`, as a no-wait resolve's first claims): no other thread changes
                    // the state they hold, so the plan picked for it once more finds it as it is and serves it.
                    let holdsAll = kept && picks == Self.maxKeptPicks + 1
                    if holdsAll { try claimInOrder(registration, from: container, evenOne: true) }
                    plan = picks <= Self.maxCreationPicks || kept && (picks <= Self.maxKeptPicks || holdsAll)
                        ? Self.creationPlan(registration, from: container, progress) : nil
                }
                if built != nil {
                    progress.pointee.decline = nil  // a warm plan's decline, served by the plan picked after it
                } else {
                    Borrowed<ThreadState>(opaque: thread).borrow { $0.builds &+= 1 }
                    if backOffs == 0, let counts = Borrowed<ThreadState>(opaque: thread).borrow({ $0.planCounts }) {
                        PlanStats.countBuild(counts, registration, from: container, progress: progress)
                    }
                    claimedInOrder = false
                    try checkBeforeNotWaiting(registration, from: container)
                    claimRoot = (.init(registration), .init(container))
                    built = try build(registration, from: container, arguments: arguments)
                }
                try runCompletions()
                let root = alive.take(built!)
                publish()
                return .success(root)
            } catch {
                abort()
                // A value superseded (`claimOne`): it let go of its cells and what it made; it runs again
                // on the configuration now (`Container.startOver`: its plan picked anew, the build looks every
                // key up again). The root's own value: its caller looks the key up again.
                if let value = supersededValue {
                    supersededValue = nil
                    backOffs += 1
                    guard backOffs <= Self.maxBackOffs, let next = container.startOver(after: value.object, resolving: registration),
                          next === Borrowed(registration) else { return .failure(error) }
                    builtSince = SupersedeClock.now
                    plan = Self.creationPlan(registration, from: container, progress)
                    continue
                }
                // A wait cycle this resolve breaks: it let go of its cells and what it made;
                // it waits for the cell it wanted and runs again.
                if let (cell, cycle) = backOff.take() {
                    backOffs += 1
                    guard backOffs <= Self.maxBackOffs else { return .failure(cycle) }
                    SharedCache.shared.waitReleased(cell)
                    // A child's plan takes the child's registrations from its progress' `locals`, which a
                    // resolve nested in a completion callback may have rebound (or grown) meanwhile: bound again.
                    if let p = plan, p.borrow({ $0.hasLocals }),
                       !p.borrow({ $0.fits(container, Borrowed(registration.container), progress) }) {
                        plan = nil
                    }
                    continue
                }
                return .failure(error)
            }
        }
    }

    /// Replays `plan`'s build into this (empty) graph: the plan's run (`Plan.replay(into:)`,
    /// the one step loop) leaves what the frames would have: the instances in `alive`, the
    /// table's entries, the completion queue (`enterReplayed`). Returns the root's index; nil,
    /// with the graph empty again, when the plan declined. The plan writes into `alive` in
    /// place: nothing else appends to it meanwhile (a factory resolving from a container gets
    /// a graph of its own).
    private func replay(_ plan: Borrowed<Plan>, _ registration: Registration, from container: Container,
                        arguments: UnsafeBufferPointer<Argument>) throws(TetherError) -> Int? {
        let creates = plan.borrow { $0.createsShared }
        switchesToVariant = nil  // (set by this plan's claims or run only)
        if creates, try !claimCreations(plan, root: registration, from: container) {
            try replayPastFailure(plan, from: container, arguments: arguments)
            return try switchedToVariant(plan, registration, from: container, arguments: arguments)
        }
        // Container steps, or a failing plan's shared keys: a resolve that must not wait or acts for a token checks or
        // claims first, as the build.
        if !creates && plan.borrow({ $0.hasContainer || $0.fails }) { try checkBeforeNotWaiting(registration, from: container) }
        // A failing plan creating nothing, a frame of a shared key open at its error: that key's claim, as the build's.
        if !creates && plan.borrow({ $0.fails }), try !claimPastFailure(plan, root: registration, from: container) {
            try replayPastFailure(plan, from: container, arguments: arguments)
            return nil
        }
        // Borrowed: the registration keeps its plans.
        let ran = try plan.borrow { plan in
            if tracer != nil {
                return plan.replayTraced(into: self, creating: creates, alive.appendNone(count: plan.stepCount), specs, progress, arguments,
                                         lookup: container)
            }
            if creates {
                return plan.replayCreating(into: self, alive.appendNone(count: plan.stepCount), specs, progress, arguments, lookup: container)
            }
            return plan.replay(into: self, alive.appendNone(count: plan.stepCount), specs, progress, arguments, lookup: container)
        }.get()
        guard ran else {
            alive.removeAll()  // its words, empty: the plan let go of what it took (`Plan.execute`)
            if creates { dropClaimedHits() }  // (a run declining before it took them)
            releaseCells()  // a leaf gone meanwhile, container steps some cached: nothing was made under them
            return try switchedToVariant(plan, registration, from: container, arguments: arguments)
        }
        // (Those before a step with a RESOLVER slot were pended before its factory: `Plan.openFrames`; a run that
        // read the request pended them among its container steps, in step order: `Plan.enterRequest`.)
        if creates && plan.borrow({ !$0.readsRequest }) {
            // (Gone on in a `PublishedVariant` past a RESOLVER slot's factory: by positions in its order, `Plan.openFrames`.)
            let variant = progress.pointee.variant
            plan.borrow {
                if variant >= 0 && !$0.slots.isEmpty {
                    pendCreated($0, from: replayEnteredAt, to: $0.publishedVariants[variant].order.count, container: container,
                                order: $0.publishedVariants[variant].order)
                } else {
                    pendCreated($0, from: replayEntered, to: $0.stepCount, container: container)
                }
            }
        }
        return plan.borrow { $0.stepCount } - 1
    }

    /// After `plan`'s run or claims declined for the container steps they found cached (`switchesToVariant`:
    /// `Plan.claimContainerSteps`, `claimWithContainerSteps`): the plan `variant(_:forCached:)` picks for that set
    /// replayed instead (every one cached, the `cachedVariant`; some, the `mixedVariant` for that set, a creating run's a
    /// creating one, its claims redone), the build's order then, as `Plan.runRequest` runs it; else nil (declined).
    private func switchedToVariant(_ plan: Borrowed<Plan>, _ registration: Registration, from container: Container,
                                   arguments: UnsafeBufferPointer<Argument>) throws(TetherError) -> Int? {
        guard let variant = switchedVariant(plan, from: container) else { return nil }
        return try replay(variant, registration, from: container, arguments: arguments)
    }

    /// The variant of `plan` its claims or run switched to (`switchesToVariant`: read and cleared), not declined after
    /// all; nil: none (declined). `cut`: a run up to a cut switched (`replayMeeting`; its met step's asker among them).
    private func switchedVariant(_ plan: Borrowed<Plan>, from container: Container, cut: Bool = false) -> Borrowed<Plan>? {
        guard let cached = switchesToVariant, cached.count > 0 else { return nil }
        switchesToVariant = nil
        guard let variant = variant(plan, forCached: cached, cut: cut, in: container, progress) else { return nil }
        progress.pointee.decline = nil  // not declined after all
        return variant
    }

    /// The plan `Plan.variant(forCached:)` picks of `plan` for the container steps `cached` (those its claims found
    /// cached, `switchesToVariant`; a request's, read from the caches; `cut`: a cut run's); one kept by no plan
    /// (`Plan.keptByNone`: past `Plan.maxMixedVariants`) held by the thread till the resolve (or the request's run) ends
    /// (`ThreadState.oneShotPlans`, as `Registration.oneShotPlan`'s). Nil: none (a walk that does not fit). Out of line:
    /// a cache state met once per child.
    @inline(never)
    private func variant(_ plan: Borrowed<Plan>, forCached cached: (bits: UInt, count: Int), cut: Bool = false, in container: Container,
                         _ progress: UnsafeMutablePointer<PlanProgress>) -> Borrowed<Plan>? {
        guard let variant = plan.borrow({ $0.variant(forCached: cached.bits, count: cached.count, cut: cut, from: container, progress.pointee.locals) })
        else { return nil }
        if variant.keptByNone { Borrowed<ThreadState>(opaque: thread).borrow { $0.oneShotPlans.append(variant) } }
        return Borrowed(variant)
    }

    /// The creation steps `from ..< to` of `plan`, replayed into this graph, published with the graph, as a
    /// build's (`enter`), in creation order: those it made (a nested resolve may have published one under
    /// its claim: the run took that). Not one a resolver's get built (`replaySkips`: pended as it was made).
    /// `order`: `from ..< to` are positions in it (a `PublishedVariant`'s, whose creation steps are in step order).
    func pendCreated(_ plan: Plan, from: Int, to: Int, container: Container, order: UnsafeBufferPointer<Int>? = nil) {
        // A set past a few: a plan may create thousands (a deep singleton chain).
        let made = plan.creations.count > 8 ? Set(cells.lazy.filter(\.made).map(\.key)) : nil
        for p in from..<to {
            let i = order?[p] ?? p
            guard plan.steps[i].creates && !replaySkips.contains(i) else { continue }
            // (A local step publishes the resolving child's registration's: `Plan.registration(of:_:)`.)
            let registration = plan.registration(of: i, progress.pointee.locals)
            let key = registration.borrow { SharedCache.cellKey($0, .singleton, in: container) }
            guard made?.contains(key) ?? cells.contains(where: { $0.key == key && $0.made }) || madeUnderOuter.contains(key.registration),
                  !revivedHere(registration) else { continue }  // (a revived one: `revivedShared`)
            pendingShared.append((registration, alive[i].object, nil))
            keptMade &+= 1
        }
    }

    /// Creation step `i` of a plan that read the request, made here (`madeHere`): published with the graph,
    /// queued among its container steps in step order, as the build's `enter` queues both.
    func madeCreationStep(_ registration: Borrowed<Registration>, at i: Int) {
        pendingShared.append((registration, alive[i].object, nil))
        keptMade &+= 1
    }

    /// Replays `plan` up to where a build asks for `met`'s step, which this thread constructs further out
    /// (`Plan.meeting`): the steps before it, let go of, then the build's error (`Reentry.reentered`,
    /// this graph's part of the path the frames the build has open then). Returns when the plan declined: the
    /// variant its claims switched to for the container steps they found cached (`switchedVariant`, as `replay`'s),
    /// which `run` runs instead (up to where it meets that step, if it does: not where its asker was found cached).
    private func replayMeeting(_ plan: Borrowed<Plan>, _ met: (step: Int, registration: Borrowed<Registration>, cut: Int, claims: Bool),
                               _ root: Registration, from container: Container,
                               arguments: UnsafeBufferPointer<Argument>) throws(TetherError) -> Borrowed<Plan>? {
        // Creation steps asked for before it: their cells claimed first, as the build's first claim does (with container
        // steps, those the build asks for before the cut, `claimWithContainerSteps`).
        cutClaims = (met.cut, met.step)
        defer { cutClaims = nil }
        switchesToVariant = nil  // (set by this plan's claims or run only)
        if met.claims, try !claimCreations(plan, root: root, from: container, meeting: true) {
            try replayPastFailure(plan, from: container, arguments: arguments)
            return switchedVariant(plan, from: container, cut: true)
        }
        // Else, as before a build: a resolve that must not wait or acts for a token checks first.
        if !met.claims { try checkBeforeNotWaiting(root, from: container) }
        _ = try plan.borrow { plan in
            plan.replayCut(into: self, alive.appendNone(count: plan.stepCount), specs, progress, arguments, lookup: container,
                           cut: met.cut, met: met.step, creates: met.claims)
        }.get()
        alive.removeAll()  // its words, empty: the run let go of what it made (`Plan.cutReached`)
        guard progress.pointee.cut == -1 else {
            if met.claims { releaseCells() }
            return switchedVariant(plan, from: container, cut: true)
        }
        cutOpen = plan.borrow { $0.opened(before: met.step, progress.pointee.locals) }
        defer { cutOpen = [] }
        throw Reentry.reentered(met.registration, by: self)
    }

    /// A creation step of the plan replaying into this graph made `registration`'s instance: its
    /// cell now holds it (as `enter` notes for a build's), so a nested resolve asking for it is
    /// refused as unfinished rather than making another.
    func madeCreation(_ registration: Borrowed<Registration>) {
        let key = SharedCache.CellKey(registration: ObjectIdentifier(registration.object), container: nil)
        var noted = false
        for cell in cells where cell.key == key { cell.made = true; noted = true }
        // Under the outer's claim: that cell stays unmade, as the build leaves it (`enter`), its instance this graph's.
        if !noted {
            madeUnderOuter.append(key.registration)
            madeUnderOuterCell(key)
        }
    }

    /// This graph made the instance of `key` under a cell a resolve further out on this thread claimed
    /// (`createUnderOuter`): until the graph ends, a resolve nested on this thread is refused it as
    /// unfinished (`SharedCache.claim`, the cell's `madeBelow`), as one of a cell this graph made under.
    private func madeUnderOuterCell(_ key: SharedCache.CellKey) {
        guard let cell = outerCells.first(where: { $0.key == key }), !madeUnderOuterCells.contains(where: { $0 === cell }) else { return }
        cell.madeBelow += 1
        madeUnderOuterCells.append(cell)
    }

    /// A container step of the plan replaying into this graph (`Plan.claimContainerSteps`): its cell in
    /// `container` claimed as `existing` claims one the build reaches (`claimOne`), before any factory.
    /// `hit`: the instance published there (retained); nil, claimed: this graph makes it. `failure`: the
    /// claim's error (a cell this thread's resolve further out made, a wait cycle to back off from), which
    /// the run reports where the build reaches the step (`Plan.execute`), after the factories before it; a
    /// claim refused to a thread that must not wait or acts for a token too (its cells claimed or checked
    /// before, `checkBeforeNotWaiting`: another thread claimed it since, as the build's claim finds it).
    /// Always `claimed`.
    func claimContainerStep(_ registration: Borrowed<Registration>, in container: Borrowed<Container>,
                            askingPath: @escaping () -> [Key]) -> (claimed: Bool, hit: Ref<Instance>?, failure: TetherError?) {
        do throws(TetherError) {
            let scope = registration.borrow { $0.specReference.borrow { $0.scope } }
            // A resolver's request (`runAsked`): a cell the graph holds (claimed by the run further out, not made yet)
            // is taken from there, as the build's `claim` does, not claimed twice; its path runs from the frames open.
            var asking = askingPath
            if let from = requestCellsFrom {
                let key = registration.borrow { r in container.borrow { SharedCache.cellKey(r, scope, in: $0) } }
                if cells[..<from].contains(where: { $0.key == key }) { return (true, nil, nil) }
                asking = { self.path + askingPath() }
            }
            return (true, try registration.borrow { r throws(TetherError) in
                try container.borrow { c throws(TetherError) in try claimOne(r, scope, in: c, askingPath: asking) }
            }, nil)
        } catch {
            // `backOff`, if set, is the build's too. A claim refused to a thread that must not wait or acts for a
            // token (another thread took the cell since `checkBeforeNotWaiting`) is the build's refusal there too.
            return (true, nil, error)
        }
    }

    /// A container step's claim failed (`claimContainerStep`): the error the replay reports where the build would.
    var deferredFailure: TetherError?

    /// Whether the plan replaying into this graph claims the container steps it would claim late (`Plan.Step.claimsLate`)
    /// before any factory instead: a thread that must not wait or acts for a token (the build claims or checks
    /// ahead, `checkBeforeNotWaiting`; a refusal then declines, `claimContainerStep`, not after factories ran).
    var claimsLateAhead: Bool {
        Borrowed<ThreadState>(opaque: thread).borrow { $0.noWait || SharedCache.refusing(thread) != nil }
    }

    /// The container steps `Plan.claimContainerSteps` left to claim late (a bit each), for the run it precedes.
    var lateContainerClaims = StepBits()

    /// Set by the claims when the container steps they found cached (`bits`, a bit each, and how many) are a state the
    /// plan does not run in (`Plan.claimContainerSteps`: every one, with a `cachedVariant`; some, which no skip gives the
    /// build's order; `claimWithContainerSteps`: one, of a creation plan recorded with every step made): the run
    /// declined, and `replay` (a request's `runAsked`) runs the plan `variant(_:for:)` picks instead (read and cleared there).
    var switchesToVariant: (bits: UInt, count: Int)?

    /// Container step `registration` of the plan replaying into this graph, claimed late (`Plan.claimLate`) where
    /// the build's walk asks for it, as `existing` does: the instance cached there (retained), or nil: claimed
    /// (one this graph holds already, `claim`, is its own), or the claim's error, which the build reports there.
    func claimLateContainerStep(_ registration: Borrowed<Registration>, in container: Borrowed<Container>,
                                askingPath: @escaping () -> [Key]) -> Result<Ref<Instance>?, TetherError> {
        do throws(TetherError) {
            let scope = registration.borrow { $0.specReference.borrow { $0.scope } }
            if let hit = registration.borrow({ r in container.borrow { SharedCache.cached(r, scope, in: $0) } }) { return .success(hit) }
            return .success(try registration.borrow { r throws(TetherError) in
                try container.borrow { c throws(TetherError) in try claim(r, scope, in: c, askingPath: askingPath) }
            })
        } catch {
            return .failure(error)
        }
    }
    func takeDeferredFailure() -> TetherError {
        defer { deferredFailure = nil }
        return deferredFailure!
    }

    /// Lets go of the container steps' claims of a plan replaying into this graph that declines.
    func dropContainerClaims() {
        backOff = nil
        // A request's run: the cells before it are the graph's (further out), kept.
        if let from = requestCellsFrom { releaseCells(from: from) } else { releaseCells() }
    }
    /// While a resolver's request's plan runs (`runAsked`): the graph's cells before it (kept when its claims
    /// are let go of), and the container steps it made (`madeContainerCell`: entered as made, `enterStep`).
    private var requestCellsFrom: Int?
    private var requestMadeContainers: [ObjectIdentifier] = []

    /// Container step `registration` of the plan replaying into this graph was made: its cell in
    /// `container` now holds a made instance (as `enter` notes), so a nested resolve is refused it as unfinished.
    func madeContainerCell(_ registration: Borrowed<Registration>, in container: Borrowed<Container>) {
        let key = registration.borrow { r in container.borrow { SharedCache.cellKey(r, .container, in: $0) } }
        for cell in cells where cell.key == key { cell.made = true }
        if !outerCells.isEmpty { madeUnderOuterCell(key) }
        if requestCellsFrom != nil { requestMadeContainers.append(ObjectIdentifier(registration.object)) }
    }

    /// After a replay: container step `i`, made, is published into `container` with the graph (`publish`), as `enter` queues it.
    func madeContainerStep(_ registration: Borrowed<Registration>, at i: Int, in container: Container) {
        pendingShared.append((registration, alive[i].object, .init(container)))
        keptMade &+= 1
    }

    /// Whether a creation step of the plan replaying into this graph made `registration`'s instance
    /// (`madeCreation`); false: the run took the one a nested resolve published (`Plan.takePublished`).
    func madeHere(_ registration: Borrowed<Registration>) -> Bool {
        let key = SharedCache.CellKey(registration: ObjectIdentifier(registration.object), container: nil)
        return (cells.contains { $0.key == key && $0.made } || madeUnderOuter.contains(key.registration)) && !revivedHere(registration)
    }

    /// Claims the cells of `plan`'s creation steps, before any factory, in the order `claimInOrder`
    /// claims (by key), through `claimOne` (waiting, backing off, refusing as a build's claims do).
    /// One another thread published meanwhile is taken cached by the run, the steps under it not made
    /// (`claimedHits`, `Plan.stepsUnder(published:)`), as the build takes it where its walk asks.
    /// False, with every cell it claimed let go of: the caches are not in the plan's state in a way the
    /// run cannot take (a dead weak instance would be revived where the plan's check is not where the
    /// build revives it; a step still made takes one under a published one that the run would make: the
    /// build makes that one where that step asks, another order; one published meanwhile in a run up to a
    /// cut, `meeting`): the resolve picks the plan for the state it finds. A resolve in
    /// `WaitMode` or acting for a token (of `root`) first claims or checks as the build does before
    /// its first factory (`checkBeforeNotWaiting`: the same cells, the same refusal); cells claimed
    /// there are this plan's. One a resolve further out on this thread claimed and has not made is
    /// claimed as the build's claim is (no cell): the run makes it under that claim (`madeCreation`).
    /// A plan with container steps too claims as the build does (`claimWithContainerSteps`).
    private func claimCreations(_ plan: Borrowed<Plan>, root: Registration, from container: Container,
                                meeting: Bool = false) throws(TetherError) -> Bool {
        Self.beforeClaiming(root)
        if plan.borrow({ $0.hasContainer }) { return try claimWithContainerSteps(plan, root: root, from: container, meeting: meeting) }
        try checkBeforeNotWaiting(root, from: container)
        if plan.borrow({ $0.fails }), try !claimPastFailure(plan, root: root, from: container) { return false }
        // A child's own registrations among them (local steps): the resolving child's, in their order.
        let locals = progress.pointee.locals
        let ordered = plan.borrow { $0.hasLocalCreations } ? plan.borrow { $0.creationsInClaimOrder(locals) } : nil
        let count = plan.borrow { $0.creations.count }
        for n in 0..<count {
            let (step, scope) = ordered.map { ($0[n].step, $0[n].scope) } ?? plan.borrow { ($0.creations[n].step, $0.creations[n].scope) }
            let registration = plan.borrow { $0.registration(of: step, locals) }
            let key = registration.borrow { SharedCache.cellKey($0, scope, in: container) }
            // Claimed ahead (`checkBeforeNotWaiting`: a no-wait resolve, or one acting for a token) is this plan's
            // to make. A dead weak instance to revive is revived where the build's walk reaches it
            // (`Plan.takePublished`: at its early check, going on in its `PublishedVariant`, in a run that switches:
            // not one up to a cut; a traced one tells its hits in the build's walk, `Plan.tellPublishedInWalk`), unless the plan's check is not there: that is the build's.
            // (The build claims them all at its first claim, `claimInOrder`: its path there's; refused, its error there.)
            var hit: Ref<Instance>?
            if !cells.contains(where: { $0.key == key }) {
                do throws(TetherError) {
                    hit = try claimOne(registration.object, scope, in: container, askingPath: { self.firstClaim(plan, from: container)?.path ?? [] })
                } catch {
                    try claimFailed(plan, error, at: firstClaim(plan, from: container))
                    return false
                }
            }
            // Claimed further out on this thread and not made there (`createUnderOuter`: no cell added), the run
            // makes it under that claim as the build does (`madeCreation`), and publishes it with the graph.
            if registration.borrow({ Plan.Recorder.revives($0, scope) }) && !plan.borrow({ $0.revivesWhereReached(step, switching: !meeting) })
                || (hit != nil && meeting) {
                // A dead weak instance to revive where the plan does not, which the build handles if no plan
                // picked next does. (Published meanwhile, in a run up to a cut: the plan picked next.)
                progress.pointee.decline = hit != nil ? .creationPicks : step == plan.borrow({ $0.stepCount }) - 1 ? .sharedRoot : .notCached
                hit?.release()
                dropClaimedHits()
                releaseCells()
                return false
            }
            if let hit { claimedHits.append((step, hit)) }
        }
        return endClaims(plan, from: container)
    }

    /// A failing plan's first claim, as the build's (`claim`): where the build's walk first asks for a shared key
    /// not cached (a creation step, or a frame open at the error, `Failing.openAt`), a singleton or weak one with
    /// no cell held yet claims, in one sorted pass, every cell the root's constructor edges reach (`claimInOrder`),
    /// those past the error too, which no step names: one this thread made further out and has not finished is
    /// the build's error there (`SharedCache.claim`), before the plan's. Asked for before any factory of the build:
    /// claimed here, its error the resolve's (the path: that key's askers). Asked for after some: a claim that
    /// fails is noted (`pastFailure`), every cell let go of, and false: the run makes what the build makes before
    /// it asks for that key and reports the claim's error there (`replayPastFailure`). A wait cycle: the resolve
    /// starts over (`run`), as the build's. A container-scoped key asked for first is claimed alone (the run's).
    /// Out of line: rare.
    @inline(never)
    private func claimPastFailure(_ plan: Borrowed<Plan>, root: Registration, from container: Container) throws(TetherError) -> Bool {
        guard !claimedInOrder, cells.isEmpty else { return true }
        guard let first = firstClaim(plan, from: container), !first.scope.isPerResolvingContainer else { return true }
        claimedInOrder = true
        do throws(TetherError) {
            try claimInOrder(root, from: container, askingPath: { first.path })
        } catch {
            claimedInOrder = false
            try claimFailed(plan, error, at: first)
            return false
        }
        return true
    }

    /// A claim of `plan`'s creation claims that failed (a cell this thread made further out and has not finished, a
    /// refusal to a thread that must not wait or acts for a token), which the build makes where its walk asks for the key
    /// `at` (`firstClaim`): before any factory of the build, the resolve's error now; after some, noted (`pastFailure`),
    /// every cell let go of, for the run up to there (`replayPastFailure`); a wait cycle, or a creation step asked for
    /// before there (the cut run claims none), thrown as before (the resolve starts over, `run`).
    private func claimFailed(_ plan: Borrowed<Plan>, _ error: TetherError, at first: (at: Int, step: Int, scope: Scope, path: [Key])?) throws(TetherError) {
        guard let first, first.at > 0, backOff == nil,
              !plan.borrow({ p in p.creations.contains { p.firstAsked($0.step) < first.at } }) else { throw error }
        dropClaimedHits()
        releaseCells()
        pastFailure = (first.at, first.step, error)
    }

    /// Where the build's walk of `plan` first asks for a shared key not cached, which its first claim claims (`claim`; its
    /// pre-order: by where it is first asked, an asker first): there (`at`, a cut), the key's step (a creation or container
    /// step, or a failing plan's frame open at its error, `Failing.openAt`, as `steps.count + k`: `Plan.meeting`'s numbering),
    /// its scope and its askers' keys. A container step found cached is no claim, nor are the steps under it asked for.
    private func firstClaim(_ plan: Borrowed<Plan>, from container: Container) -> (at: Int, step: Int, scope: Scope, path: [Key])? {
        let locals = progress.pointee.locals
        return plan.borrow { p in
            var best: (at: Int, step: Int, scope: Scope, path: [Key])?
            var cached: [Int] = []
            for c in p.containerSteps {
                let lookup = p.lookup(of: c, locals)?.object ?? container
                if let hit = p.registration(of: c, locals).borrow({ SharedCache.cached($0, .container, in: lookup) }) {
                    hit.release()
                    cached.append(c)
                    continue
                }
                let at = p.firstAsked(c)
                if let b = best, at > b.at || at == b.at && c < b.step { continue }
                best = (at, c, .container, [])
            }
            for creation in p.creations where !cached.contains(where: { p.descends(creation.step, from: $0) }) {
                let at = p.firstAsked(creation.step)
                if let b = best, at > b.at || at == b.at && creation.step < b.step { continue }
                best = (at, creation.step, creation.scope, p.askingPath(to: creation.step))
            }
            guard let failing = p.failing else { return best }
            let open = failing.allOpen(locals)
            for k in open.indices {
                let scope = open[k].borrow { $0.specReference.borrow { $0.scope } }
                guard scope.isShared, best.map({ failing.openAt[k] <= $0.at }) ?? true else { continue }
                return (failing.openAt[k], p.stepCount + k, scope, open[..<k].map { $0.borrow { $0.key } })
            }
            return best
        }
    }

    /// After the claims of `plan` returned false: if its first claim failed after factories of the build (`pastFailure`),
    /// the run up to where the build's walk asks for that key (`Plan.replayCut`, as `replayMeeting` runs: the steps
    /// before it made, then let go of, last made first), then the claim's error, the build's status, message and path.
    /// Returns (the claims declined, `pastFailure` unset) or when that run declined before any factory (a warm leaf
    /// gone: the plan picked next). Out of line: rare.
    @inline(never)
    private func replayPastFailure(_ plan: Borrowed<Plan>, from container: Container, arguments: UnsafeBufferPointer<Argument>) throws(TetherError) {
        guard let past = pastFailure else { return }
        pastFailure = nil
        _ = try plan.borrow { plan in
            plan.replayCut(into: self, alive.appendNone(count: plan.stepCount), specs, progress, arguments, lookup: container,
                           cut: past.cut, met: past.met, creates: false)
        }.get()
        alive.removeAll()  // its words, empty: the run let go of what it made (`Plan.cutReached`)
        guard progress.pointee.cut == -1 else { return }
        throw past.error
    }

    /// After `claimCreations` found creation steps of `plan` published (`claimedHits`): whether the run can
    /// take them cached (`Plan.stepsUnder(published:)`), the masks it reads then noted and the cells of
    /// the creation steps under them let go of (claimed for nothing: the build never asks for those).
    /// Out of line: a race.
    /// `keeping`: the cells before it are not the plan's (a request's, `claimAsked`: the graph's own).
    @inline(never)
    private func takesClaimedHits(_ plan: Borrowed<Plan>, from container: Container, keeping: Int = 0) -> Bool {
        let taken = claimedHits.reduce(into: StepBits()) { $0.insert($1.step) }
        guard let (skip, used) = plan.borrow({ $0.stepsUnder(published: taken, progress.pointee.locals, traced: tracer != nil) })
        else { return false }
        // (`skip`: the steps under one taken, some of them taken too; a cell each of those made, claimed.)
        for creation in plan.borrow({ $0.creations }) where skip.contains(creation.step) {
            let key = plan.borrow { $0.registration(of: creation.step, progress.pointee.locals) }
                .borrow { SharedCache.cellKey($0, creation.scope, in: container) }
            guard let c = cells.firstIndex(where: { $0.key == key }), c >= keeping else { continue }
            SharedCache.shared.release(cells.remove(at: c))
        }
        (claimedSkip, claimedHeld) = (skip, skip.subtracting(used))
        claimedSkip.formUnion(taken)
        Borrowed<ThreadState>(opaque: thread).borrow { $0.claimedTakes &+= 1 }
        return true
    }

    /// The claims' last act (`claimCreations`, `claimWithContainerSteps`): take the keys found published at
    /// their claims (`takesClaimedHits`), else decline: the claims kept (`keepClaims`) for the plan picked next.
    /// (A thread that must not wait or acts for a token too: its check before the next claims,
    /// `checkBeforeNotWaiting`, skips the cells this graph holds, and finds none of them another thread's.)
    private func endClaims(_ plan: Borrowed<Plan>, from container: Container) -> Bool {
        if claimedHits.isEmpty || takesClaimedHits(plan, from: container) { return true }
        progress.pointee.decline = .creationPicks
        return keepClaims()
    }

    /// `endClaims`' decline keeping its claims, as the build claims as it goes: the keys found published held till
    /// the graph ends (`heldAhead`: cached for the pick that follows and its run, which take them as shared leaves),
    /// the cells held (the plan picked next takes them as its own: `claimCreations`' `claimedAhead`; the build's
    /// `claim` finds them in `cells`). The plan picked next is the one for the state the claims found (`run`; a
    /// resolver's request's, `request`: `runAsked`, its cells then among the graph's, `claimAsked` takes them as its own).
    /// Out of line: a race.
    @inline(never)
    private func keepClaims(request: Bool = false) -> Bool {
        for (_, hit) in claimedHits { heldAhead.append(hit.take()) }
        claimedHits.removeAll()
        (claimedSkip, claimedHeld) = (StepBits(), StepBits())
        if request { keptAskedClaims = true } else { keptClaims = true }
        return false
    }

    /// The run of the plan replaying into this graph, its shared steps taken (`Plan.execute`): the creation
    /// steps found published at their claims put in `words` (`claimedHits`), what is under them that no step
    /// still made takes held till the graph ends instead (`claimedHeld`, as `heldAhead`). Returns the steps
    /// the run does not make (`claimedSkip`). Out of line: a race.
    @inline(never)
    func takeClaimedHits(into words: ReferenceWords<Instance>) -> StepBits {
        for (step, hit) in claimedHits {
            if claimedHeld.contains(step) { heldAhead.append(hit.take()) } else { words.set(step, hit) }
        }
        claimedHits.removeAll()
        var held = claimedHeld
        while let j = held.first {
            held.remove(j)
            if !words.isNone(j) { heldAhead.append(words.take(j).take()); words.base[j] = ReferenceWords<Instance>.none }
        }
        return claimedSkip
    }

    /// Lets go of `claimedHits` and the masks: the plan declined, or the graph ends.
    private func dropClaimedHits() {
        claimedSkip.removeAll()
        claimedHeld.removeAll()
        unclaimedUnder.removeAll()
        guard !claimedHits.isEmpty else { return }
        let hits = claimedHits
        claimedHits.removeAll()
        for (_, hit) in hits { hit.release() }
    }

    /// Tests only (`setBeforeClaimingCreations`): called with the root of each creation plan's run before it
    /// claims its cells (`claimCreations`), where another thread's publication lands in a race. Read only
    /// while `claimHooked`: a creation plan's run pays one load.
    private static let beforeClaimingCreations = Lock<(@Sendable (Registration) -> Void)?>(nil)
    private static let claimHooked = Atomic<Bool>(false)
    static func setBeforeClaimingCreations(_ hook: (@Sendable (Registration) -> Void)?) {
        beforeClaimingCreations.withLock { $0 = hook }
        claimHooked.store(hook != nil, ordering: .releasing)
    }
    /// `beforeClaimingCreations`' call for `root`, if set (`claimCreations`; a request's claims, `claimAsked`).
    @inline(__always)
    private static func beforeClaiming(_ root: Registration) {
        if claimHooked.load(ordering: .acquiring), let hook = beforeClaimingCreations.withLock({ $0 }) { hook(root) }
    }

    /// Tests only (`setAfterCheckBeforeNotWaiting`): called with the root of a resolve that must not wait or acts
    /// for a token once `checkBeforeNotWaiting` checked (not claimed) its cells, where another thread's claim
    /// lands in a race (`containerHeld` before branch cyclecut). Read only by such a resolve, while `checkHooked`.
    private static let afterCheckBeforeNotWaiting = Lock<(@Sendable (Registration) -> Void)?>(nil)
    private static let checkHooked = Atomic<Bool>(false)
    static func setAfterCheckBeforeNotWaiting(_ hook: (@Sendable (Registration) -> Void)?) {
        afterCheckBeforeNotWaiting.withLock { $0 = hook }
        checkHooked.store(hook != nil, ordering: .releasing)
    }


    /// `claimCreations` of a plan with container steps too (a creating run that reads the request): the
    /// build's claims in the build's order, before any factory. Each creation or container step where the
    /// build's walk first asks for it (`Plan.requestClaimOrder`), looked up in its cache and else claimed
    /// through `claim`, as `existing` does: a singleton or weak claim with no cell held yet claims every
    /// cell the root's constructor edges reach in one sorted pass (`claimInOrder`), a container step
    /// claimed first is claimed alone, and each later one where the walk asks for it. The run claims the
    /// container steps again (`Plan.claimContainerSteps`: a cell held here is this graph's, one cached is
    /// taken). False, every cell let go of: a creation step published meanwhile or under a claim further
    /// out (as `claimCreations`), or asked for only under a container step found cached (the build never
    /// makes it). A container step's claim that fails (a cell this thread made further out; refused to a
    /// thread that must not wait or acts for a token) stops the claims there, as the build stops: the run
    /// reports it where the build asks for that step.
    private func claimWithContainerSteps(_ plan: Borrowed<Plan>, root: Registration, from container: Container,
                                         meeting: Bool = false) throws(TetherError) -> Bool {
        claimedInOrder = false
        // A run up to a cut (`replayMeeting`): not the steps the build asks for from there on (`Plan.neverAsked`); a creation step
        // found published, the plan picked next (as `claimCreations`).
        let neverAsked = meeting ? cutClaims.map { c in plan.borrow { $0.neverAsked(from: c.cut, met: c.met) } } ?? StepBits() : StepBits()
        unclaimedUnder.removeAll()
        try checkBeforeNotWaiting(root, from: container)
        claimRoot = (.init(root), .init(container))
        defer { claimRoot = nil }
        // A failing plan: its first claim where the build's walk first asks for a shared key, a frame open at its error too.
        if plan.borrow({ $0.fails }), try !claimPastFailure(plan, root: root, from: container) { return false }
        let (locals, resolving) = (progress.pointee.locals, container)
        var cachedContainers: [Int] = []
        // Creation steps another thread published before their claims (`claimedHits`): the steps asked for
        // under them the build never asks for, so they are not claimed (a cell a sorted pass claimed for one
        // is let go of by `takesClaimedHits`), nor made (`claimedSkip`).
        var published: [Int] = []
        let last = plan.borrow { $0.stepCount } - 1
        claims: for step in plan.borrow({ $0.requestClaimOrder() }) {
            let (registration, isContainer, stepLookup, late) = plan.borrow { p in
                (p.steps[step].local >= 0 ? locals[p.steps[step].local] : p.steps[step].registration, p.steps[step].isContainer,
                 p.lookup(of: step, locals), p.steps[step].claimsLate)
            }
            if !published.isEmpty && plan.borrow({ p in published.contains { p.descends(step, from: $0) } }) { continue }
            if neverAsked.contains(step) { continue }
            // A container step under a singleton from further up is that one's container's (`Plan.Step.lookup`), as its build frame's.
            let container = isContainer ? stepLookup?.object ?? container : container
            let scope = registration.borrow { $0.specReference.borrow { $0.scope } }
            let under = plan.borrow { p in cachedContainers.contains { p.descends(step, from: $0) } }
            // As `existing`: its cache first, else its claim.
            let asking = { plan.borrow { $0.askingPath(to: step) } }
            let found = { () throws(TetherError) -> Ref<Instance>? in
                if let hit = registration.borrow({ SharedCache.cached($0, scope, in: container) }) { return hit }
                return try registration.borrow { r throws(TetherError) in try self.claim(r, scope, in: container, askingPath: asking) }
            }
            if isContainer {
                // Claimed where the build asks for it, after factories (`Plan.claimLate`).
                if under || late && !claimsLateAhead { continue }
                do throws(TetherError) {
                    if let hit = try found() {
                        hit.release()
                        cachedContainers.append(step)
                        // Recorded with every step made (`Plan.needsContainersUncached`): the build makes fewer now.
                        if plan.borrow({ $0.needsContainersUncached }) {
                            progress.pointee.decline = .containerInput
                            // The plan for the set cached now instead (`replay`; all: its `cachedVariant`, some: the creating
                            // `mixedVariant`), whose claims decline if that changed since.
                            switchesToVariant = plan.borrow { p in p.cachedNow(in: resolving, locals) }
                            dropClaimedHits()
                            releaseCells()
                            return false
                        }
                    }
                } catch {
                    if backOff != nil { throw error }  // a wait cycle: the resolve starts over (`run`)
                    // The claims stop where the build's do; the run claims it again where the build asks for it
                    // (`Plan.claimContainerSteps`) and reports its failure there (refused to a thread that must not
                    // wait or acts for a token, the cell taken since `checkBeforeNotWaiting`: `containerHeld` before).
                    break claims
                }
                continue
            }
            if under && leavesUntaken(plan, step, under: cachedContainers, locals) { continue }
            let key = registration.borrow { SharedCache.cellKey($0, scope, in: container) }
            var hit: Ref<Instance>?
            if !under && !cells.contains(where: { $0.key == key }) {
                do throws(TetherError) { hit = try found() } catch {
                    try claimFailed(plan, error, at: plan.borrow { p in (p.firstAsked(step), step, scope, []) })
                    return false
                }
            }
            // A dead weak instance to revive: the run revives it where its check is where the build's walk reaches it
            // (`Plan.takePublished`, as `claimCreations`' run); else the build's.
            let revives = registration.borrow { Plan.Recorder.revives($0, scope) } && !plan.borrow { $0.revivesWhereReached(step) }
            // Published before its claim: taken, as the build takes it where its walk asks (`claimCreations`); not in a run up to a cut.
            if let hit, !under && !revives && !meeting {
                claimedHits.append((step, hit))
                published.append(step)
                continue
            }
            // (No cell, no hit: claimed further out on this thread and not made there, `createUnderOuter`: the run makes it
            // under that claim, `madeCreation`, as `claimCreations`' run does and the build.)
            if under || revives || hit != nil {
                progress.pointee.decline = hit != nil ? .creationPicks : step == last ? .sharedRoot : .notCached
                hit?.release()
                dropClaimedHits()
                releaseCells()
                return false
            }
        }
        return endClaims(plan, from: container)
    }

    /// Whether creation step `step`, first asked for under a container step found cached (`cached`), is one no step
    /// still made asks for: the build never asks for it (a dead weak key only a cached Session names, a singleton reset
    /// under one), so the claims (`claimWithContainerSteps`, a request's `claimAsked`) neither claim it nor the run makes
    /// it; noted in `unclaimedUnder`, which the run checks it skips (`Plan.execute`). False: the build's walk asks for it.
    private func leavesUntaken(_ plan: Borrowed<Plan>, _ step: Int, under cached: [Int],
                               _ locals: UnsafeMutablePointer<Borrowed<Registration>>) -> Bool {
        guard plan.borrow({ $0.untaken(step, under: cached, locals) }) else { return false }
        unclaimedUnder.insert(step)
        return true
    }

    /// Step `i` of a plan replayed into this graph, as its build would have left it: in the
    /// table (`keyed`: its scope keeps it in a graph) and queued for its completion callbacks.
    /// A plan's steps are resolved from the root's own container (`Registration.plan`), `lookup`.
    @inline(__always)
    /// Borrowed: the plan's steps name theirs unretained (`Plan.Step.lookup`).
    func enterReplayed(_ registration: Borrowed<Registration>, at i: Int, keyed: Bool, completes: Bool, lookup: Borrowed<Container>) {
        if keyed { table.set(registration, GraphTable.state(i)) }
        if completes { queue.append(Pending(instance: alive[i], registration: registration, lookup: lookup)) }
    }

    /// Refuses `arguments` unless they match the runtime-argument params of `registration`.
    /// Inlined: a resolve without arguments of a registration without any costs two tests.
    @inline(__always)
    static func checkArguments(_ registration: Registration, _ arguments: UnsafeBufferPointer<Argument>) throws(TetherError) {
        if registration.hasArguments || !arguments.isEmpty { try checkDeclaredArguments(registration, arguments) }
    }

    @inline(never)
    private static func checkDeclaredArguments(_ registration: Registration, _ arguments: UnsafeBufferPointer<Argument>) throws(TetherError) {
        // The common case read straight from the params (no array made): every kind matches.
        var matched = 0
        for param in registration.params {
            guard case .argument(let t) = param else { continue }
            guard matched < arguments.count, arguments[matched].type == t else { matched = -1; break }
            matched += 1
        }
        if matched == arguments.count { return }
        let types = registration.argumentTypes
        guard arguments.count == types.count else {
            throw TetherError(.argumentMismatch,
                "\(registration.key.quoted) takes \(types.count) runtime argument\(types.count == 1 ? "" : "s"), got \(arguments.count)")
        }
        for (i, t) in types.enumerated() where arguments[i].type != t {
            throw TetherError(.argumentMismatch,
                "runtime argument \(i + 1) of \(registration.key.quoted) must be \(t.name), got \(arguments[i].type.name)")
        }
    }

    /// Drops everything for reuse, keeping capacity.
    /// (Arrays are touched only when non-empty: `removeAll` costs a uniqueness check.)
    private func clear() {
        table.removeAll()
        frames.truncate(to: 0)
        words.truncate(to: 0)
        dependencyStack.truncate(to: 0)
        if !weakSlots.isEmpty { weakSlots.removeAll(keepingCapacity: true) }
        if !lazySlots.isEmpty { lazySlots.removeAll(keepingCapacity: true) }
        if !awaitingCells.isEmpty { awaitingCells.removeAll(keepingCapacity: true) }
        replayEntered = 0
        replayEnteredAt = 0
        replaySkips.removeAll()
        lateContainerClaims.removeAll()
        switchesToVariant = nil
        // (Taken here, let go of last: `letGoReplayed`.)
        var built: [(step: Int, from: Int, to: Int)]?
        if !replayBuilt.isEmpty { built = replayBuilt; replayBuilt.removeAll() }
        if !allSlots.isEmpty { allSlots.removeAll(keepingCapacity: true) }
        if !factorySlots.isEmpty { factorySlots.removeAll(keepingCapacity: true) }
        queue.truncate(to: 0)
        queueHead = 0
        if !requests.isEmpty { requests.removeAll(keepingCapacity: true); viaPaths.removeAll(keepingCapacity: true) }
        keptMade = 0
        if !pendingShared.isEmpty { pendingShared.removeAll(keepingCapacity: true) }
        if !revivedShared.isEmpty { revivedShared.removeAll() }
        // Last: releasing may run destructors, which may resolve again on this thread.
        if !heldAhead.isEmpty { heldAhead.removeAll(keepingCapacity: true) }
        if !claimedSkip.isEmpty || !unclaimedUnder.isEmpty || !claimedHits.isEmpty { dropClaimedHits() }
        (keptClaims, keptAskedClaims) = (false, false)
        if let built { letGoReplayed(built) }
        alive.removeAll()
    }

    /// `alive` let go of last made first where a plan replayed into it with RESOLVER slots whose gets
    /// built (`replayBuilt`): its steps' words are not in creation order then. What was appended after
    /// the run (completion callbacks' gets) goes first, then the plan's words, a step's resolver's right
    /// after it (`ReferenceWords.releaseUnmoved(lastFirst:built:)`, the failed run's order, `Plan.letGoBuilt`).
    /// The plan's words are those before the first range (nothing appends during a replay but its resolvers).
    /// Out of line: rare.
    @inline(never)
    private func letGoReplayed(_ built: [(step: Int, from: Int, to: Int)]) {
        guard built[built.count - 1].to <= alive.count else { return }  // let go of by the run (`Plan.cutReached`)
        alive.wordsFromStart.releaseUnmoved(lastFirst: built[0].from, built: built, end: alive.count)
    }

    // MARK: building

    /// Plain data with unretained references, so frames move and are read without
    /// reference counting: the registration is kept by its container (or its
    /// retired list, even once the container is closed, until it is dismantled)
    /// and keeps its specs; its container is the caller's or a parent of it, and
    /// so is the lookup container.
    private struct Frame {
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
    private func rememberGraph(of cell: LazyCell, lookup: Borrowed<Container>) {
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

    /// The steps of the plan replaying into this graph entered (`enterReplayed`) before the run ended:
    /// those made before a step with a RESOLVER slot (`Plan.makeSlots`), as the build enters them as made.
    var replayEntered = 0
    /// Those made steps as positions in the run's order (`Plan.openFrames`; a `PublishedVariant`'s may not be step order).
    var replayEnteredAt = 0
    /// Per step with a RESOLVER slot whose factory ran: the instances its gets built (`alive[from ..< to]`,
    /// after the plan's words), made before the step's: a failed run lets go of them in that place (`Plan.letGoBuilt`).
    private(set) var replayBuilt: [(step: Int, from: Int, to: Int)] = []
    /// Steps of that plan its run does not make (a bit per step, `Plan.takeBuilt`): taken from what a
    /// resolver's gets built first, or asked for only under those (the build never reaches them).
    var replaySkips = StepBits()

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
    private func depend(on dep: Borrowed<Registration>, key: Key, _ top: Int, _ lookup: Borrowed<Container>,
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
    private func refuseCaptive(_ top: Int, _ spec: Borrowed<InstanceSpec>, _ key: Key) throws(TetherError) {
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

    private func push(_ registration: Borrowed<Registration>, _ spec: Borrowed<InstanceSpec>, from lookup: Borrowed<Container>) {
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

    private func pop() {
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
    private func existing(_ registration: Borrowed<Registration>, _ spec: Borrowed<InstanceSpec>, key: Key,
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
    private func revive(_ registration: Borrowed<Registration>, _ spec: Borrowed<InstanceSpec>,
                        _ pointer: UnsafeMutableRawPointer) -> Int {
        let index = alive.append(revived(registration, spec, pointer))
        table.set(registration, GraphTable.state(index))
        return index
    }

    /// `revive`'s instance of `pointer` (the graph's reference), published with the graph, its cell noted made.
    private func revived(_ registration: Borrowed<Registration>, _ spec: Borrowed<InstanceSpec>,
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
    private func claim(_ registration: Registration, _ scope: Scope, in container: Container,
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
    private func claimOne(_ registration: Registration, _ scope: Scope, in container: Container,
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
    private func superseded(_ registration: Registration, _ cell: SharedCache.Cell) -> TetherError {
        SharedCache.shared.release(cell)
        if userCode == 0 { supersededValue = .init(registration) }
        return TetherError.valueLetGo(registration.key)
    }

    /// Whether this resolve can start over: the thread's outermost, no factory or callback of it under way.
    private var canBackOff: Bool {
        userCode == 0 && Borrowed<ThreadState>(opaque: thread).borrow { $0.nesting == 1 && $0.graph === self }
    }

    /// Claims the cells of the uncached shared instances `root`'s constructor
    /// edges reach, sorted by key, when there are several (`evenOne`, claiming
    /// ahead for a no-wait resolve: also a single one, and the cached weak ones
    /// held). A claim refused (`.wouldBlock`, no-wait mode) is reported as `root`'s.
    /// `askingPath`: as `claimOne`'s (a failing plan's claims, `claimPastFailure`).
    private func claimInOrder(_ root: Registration, from container: Container, evenOne: Bool = false,
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
    private func attach(_ instance: Int, _ param: Param, at slot: Int, to index: Int) {
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
    private func construct(_ index: Int) throws(TetherError) -> Int {
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
    private func constructSpecial(_ index: Int) throws(TetherError) -> (UnsafeMutableRawPointer, LateEdges?) {
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

    private func factoryFailure(_ registration: Registration, _ failure: CallbackFailure) -> TetherError {
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
    private func enter(_ index: Int, _ pointer: UnsafeMutableRawPointer, _ late: LateEdges?) -> Int {
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

    // MARK: completion, publication, failure

    /// The order of completion callbacks, their rule's one home: once no factory of the graph
    /// runs, each instance that has callbacks in the order it entered the graph (its creation
    /// order; instances the callbacks' own resolves make come behind, the queue growing), its
    /// callbacks in the order added. `next()` gives the next such instance (nil: none left) and
    /// its callback count; `call(n)` runs callback `n` of that one. `runCompletions` runs a
    /// graph's queue through it; the plan recorder records a plan's calls through it
    /// (`Plan.Recorder.declaredCompletions`), which an object plan (`Plan.runObjects`) and a
    /// binding's runner then run as recorded.
    @inline(__always)
    static func inCompletionOrder<E: Error>(next: () -> Int?, call: (Int) throws(E) -> Void) throws(E) {
        while let count = next() {
            for n in 0..<count { try call(n) }
        }
    }

    /// Runs queued completion callbacks (`inCompletionOrder`); callbacks that create instances append theirs.
    /// What a callback's requests read (`userCode`, `runningCallback`, `completing`) is let go of once
    /// after the loop, not after each callback: only callbacks run in the loop. Both closures stay
    /// small enough to be inlined (a callback's rare outcomes out of line, `callbackEnded`): each one
    /// not inlined cost s3 some 20-80 instructions a resolve (benchmarks/README, branch `smalls`).
    private func runCompletions() throws(TetherError) {
        guard queueHead < queue.count else { return }
        userCode += 1
        defer {
            userCode -= 1
            runningCallback = -1
            completing = nil
        }
        var pending = Pending?.none
        var spec = Borrowed<InstanceSpec>?.none
        try Graph.inCompletionOrder(next: {
            guard queueHead < queue.count else { return nil }
            pending = queue[queueHead]
            queueHead += 1
            // Borrowed, not retained: the instance holds its spec, the graph the resolver.
            spec = pending.unsafelyUnwrapped.instance.borrow { Borrowed($0.spec) }
            return spec.unsafelyUnwrapped.borrow { $0.completionCount }
        }) { (n: Int) throws(TetherError) in
            let pending = pending.unsafelyUnwrapped
            runningCallback = queueHead - 1
            if !outer.isEmpty { completing = pending.registration }
            let resolver = completionResolver(pending)
            defer { resolver.borrow { $0.close() } }
            let outcome = pending.instance.borrow { instance in
                spec.unsafelyUnwrapped.borrow { spec in
                    resolver.borrow { resolver -> CallbackFailure? in
                        do throws(CallbackFailure) { try spec.complete(n, resolver, instance: instance) } catch { return error }
                        return nil
                    }
                }
            }
            if outcome != nil || lapWasRefused || tracer != nil { try callbackEnded(pending, n, outcome) }
        }
    }

    /// After callback `n` of `pending`: its failure, or the lap `buildAsked` refused in it (which fails
    /// the resolve as that cycle, whatever the callback made of it), and the trace's event.
    @inline(never)
    private func callbackEnded(_ pending: Pending, _ n: Int, _ outcome: CallbackFailure?) throws(TetherError) {
        let error = lapWasRefused ? lapRefused.take() : outcome.map { Graph.completionFailure(pending.instance.object.key, n, $0) }
        lapWasRefused = false
        if let tracer {
            let instance = pending.instance.object
            tracer.emit(.complete, instance.key, instance.pointer, status: error?.code)
        }
        if let error { throw error }
    }

    /// The error of completion callback `n` (from 0) of an instance of `key`:
    /// a declared target that could not be handed over keeps its own status.
    static func completionFailure(_ key: Key, _ n: Int, _ failure: CallbackFailure) -> TetherError {
        if let target = failure.target {
            var parts = target.parts
            (parts.callback, parts.callbackOf) = (n + 1, key)
            return TetherError(target.code, "a declared target of completion callback #\(n + 1) of \(key.quoted): \(target.message)", parts)
        }
        var parts = ErrorParts(.callback, reason: failure.reason.flatMap { $0.isEmpty ? nil : $0 })
        (parts.callback, parts.callbackOf) = (n + 1, key)
        var message = "completion callback #\(n + 1) of \(key.quoted) failed"
        if let reason = parts.reason { message += ": \(reason)" }
        // One status per kind of failure: a callback stopped by a refused strong edge
        // (it returned TETHER_E_RETAIN_CYCLE) fails the resolve as a retain cycle.
        return TetherError(failure.code == .retainCycle ? .retainCycle : .factoryFailed, message, parts)
    }

    /// A resolver for a completion callback of `pending`: the last one again when
    /// nobody else kept it (callbacks run one at a time), else a new one. The
    /// graph holds it (`spareResolver`) until the next.
    private func completionResolver(_ pending: Pending) -> Borrowed<Resolver> {
        if spareResolver != nil, isKnownUniquelyReferenced(&spareResolver!) {
            spareResolver!.reopen(lookup: pending.lookup, owner: pending.registration, instance: pending.instance)
        } else {
            spareResolver = Resolver(graph: self, lookup: pending.lookup, owner: pending.registration, instance: pending.instance)
        }
        return .init(spareResolver!)
    }

    /// An instance waiting for its completion callbacks (all kept alive by the graph or containers).
    private struct Pending {
        let instance: Borrowed<Instance>
        let registration: Borrowed<Registration>
        let lookup: Borrowed<Container>
        /// The completion callback's request it was made for (in `requests`; -1: none) and
        /// the frames' keys then (in `viaPaths`; -1: none).
        var cause = -1
        var via = -1
    }

    /// A completion callback of an instance of `owner` asked for `asked`; that instance was
    /// made for request `parent` (-1: none) with the keys `viaPaths[via]` on the way.
    private struct CallbackRequest {
        let owner: Borrowed<Registration>
        let asked: Borrowed<Registration>
        let parent: Int
        let via: Int
        /// `keptMade` when it was asked.
        let keptBefore: Int
    }

    /// Builds `registration` for a resolver of `owner` (`Resolver.get`, `getWeak`). The request of a
    /// completion callback is refused when it repeats a lap forever: its instance of `owner` was made,
    /// through the chain of such requests, because an instance of `owner` asked for `registration`,
    /// and nothing made since is kept (all transient), so this request would make another instance
    /// of `owner` asking the same, without end. (Each callback is taken to ask the same for every
    /// instance of its registration.) One check for every executor: plans and objects reach callbacks' requests here.
    /// Inlined into `Resolver`'s request: the walk runs out of line, only when the completing instance
    /// was made for a callback's request (`checkLap`); the common callback's instance, made by the
    /// resolve itself, pays the guard and the cause saved around its request's build.
    @inline(__always)
    func buildAsked(_ registration: Registration, by owner: Borrowed<Registration>,
                    from lookup: Container) throws(TetherError) -> Int {
        let counts = Borrowed<ThreadState>(opaque: thread).borrow { $0.planCounts }
        guard runningCallback >= 0, frames.count == 0 else { return try buildRequested(registration, from: lookup, counts) }
        if queue[runningCallback].cause >= 0 { try checkLap(Borrowed(registration), by: owner) }
        // (Nested only when a resolve nested in this graph uses this callback's resolver.)
        let saved = (currentCause, requestKeptBefore)
        (currentCause, requestKeptBefore) = (Graph.unrecordedCause, keptMade)
        defer { (currentCause, requestKeptBefore) = saved }
        return try buildRequested(registration, from: lookup, counts)
    }

    /// A resolver's request for `registration` (a completion callback's, a factory's RESOLVER slot's): this
    /// graph's or a cache's instance (`existing`, as `build` looks first), else the plan of it replayed into
    /// this graph (`runAsked`), else the build. A shared key: `buildShared`.
    @inline(__always)
    private func buildRequested(_ registration: Registration, from lookup: Container, _ counts: PlanStats.Counts?) throws(TetherError) -> Int {
        if requestRunning { return try requestedMeanwhile(registration, from: lookup, counts) }
        return try requested(registration, from: lookup, counts)
    }

    @inline(__always)
    private func requested(_ registration: Registration, from lookup: Container, _ counts: PlanStats.Counts?) throws(TetherError) -> Int {
        let spec = registration.specReference
        guard !spec.borrow({ $0.scope.isShared }) else { return try buildShared(registration, from: lookup, counts) }
        // (Not shared: it claims nothing, so the build's own look finds the same.)
        if let found = try existing(Borrowed(registration), spec, key: registration.key, in: .init(lookup)) {
            if let counts { counts.countRequest(found: true, built: nil) }
            return found
        }
        var declined: Plan.Decline?
        if let made = try runAsked(registration, from: lookup, declined: &declined, counts) { return made }
        // A singleton or weak key below it not cached (its warm plan's leaf missing, a child's component plan declining
        // `notCached`): the plan for the caches' state, as a top-level resolve picks next (`Graph.creationPlan`).
        if declined == .notCached, let made = try runAsked(registration, from: lookup, declined: &declined, counts, creating: true) {
            return made
        }
        if let counts { counts.countRequest(found: false, built: declined) }
        return try build(registration, from: lookup)
    }

    /// `buildRequested` of a singleton, weak or container-scoped key: this graph's or its cache's instance (`build`'s
    /// `existing` takes it, claiming nothing), else its plan for the caches' state (a creation plan: its cells
    /// claimed as the build's walk reaches each, `claimAsked`) replayed into this graph (`runAsked`), else the build.
    /// Out of line: most requests ask for a key the graph has.
    @inline(never)
    private func buildShared(_ registration: Registration, from lookup: Container, _ counts: PlanStats.Counts?) throws(TetherError) -> Int {
        if isFound(Borrowed(registration), in: lookup) {
            if let counts { counts.countRequest(found: true, built: nil) }
            return try build(registration, from: lookup)
        }
        // (A container-scoped key's plan is its warm one: its root a container step, claimed in the request's container.)
        var declined: Plan.Decline?
        if let made = try runAsked(registration, from: lookup, declined: &declined, counts) { return made }
        if let counts { counts.countRequest(found: false, built: declined) }
        return try build(registration, from: lookup)
    }

    /// Whether a request's plan runs in this graph (`runAsked`): a request made meanwhile (a factory of
    /// that plan using an open resolver of this graph) is built (`requestedMeanwhile`).
    private var requestRunning = false
    /// The request whose plan runs (`runAsked`): its words, root and resolving container, and `frames.count`
    /// when it began (its steps sit above those frames, `path`).
    private var runningRequest: (words: ReferenceWords<Instance>, root: Borrowed<Registration>, lookup: Borrowed<Container>, base: Int)?
    /// The running request's steps entered into the graph before it ended (`enterRunning`), not entered again (`enterAsked`).
    private var enteredEarly: [Int] = []
    /// While a request made meanwhile is served (`requestedMeanwhile`): the running request's steps under
    /// construction, above its frames `base`, for `path` and `constructing`.
    private var meanwhileOpen: (base: Int, steps: [Borrowed<Registration>])?

    /// A resolver's request made while a request's plan runs on this graph (a factory of that plan using an
    /// open resolver of the graph, a callback's kept in a global): built, on the graph the build would have
    /// by then: the plan's steps made so far entered (`enterRunning`: a graph-scoped key is the plan's), the
    /// ones under construction marked so (a request for one is the build's cycle, its path through them).
    @inline(never)
    private func requestedMeanwhile(_ registration: Registration, from lookup: Container, _ counts: PlanStats.Counts?) throws(TetherError) -> Int {
        guard let running = runningRequest, let own = requestProgress, let plan = own.pointee.plan else {
            return try requested(registration, from: lookup, counts)
        }
        enterRunning(plan, running)
        let steps = plan.borrow { $0.constructing(at: own.pointee.step, own.pointee.locals) }
        var marked: [Borrowed<Registration>] = []
        for step in steps where table.state(step) == GraphTable.absent {
            table.set(step, GraphTable.constructing)
            marked.append(step)
        }
        // (A request made meanwhile inside one whose plan runs meanwhile: both requests' open steps.)
        let saved = (meanwhileOpen, meanwhileRuns)
        meanwhileOpen = saved.1 && saved.0 != nil ? (saved.0!.base, saved.0!.steps + steps) : (running.base, steps)
        meanwhileRuns = false
        defer {
            (meanwhileOpen, meanwhileRuns) = saved
            for step in marked { table.endConstruction(step) }
            // Keys it built that the plan makes later: the graph's, as the build finds them where its walk asks.
            let built = plan.borrow { $0.takeBuiltAsked(after: own.pointee.step, running.words, self, skips: requestSkips, own.pointee.locals) }
            requestSkips.formUnion(built)
        }
        return try requested(registration, from: lookup, counts)
    }

    /// The running request's steps made so far (`requestedMeanwhile`), entered as the build left them by then:
    /// each in `alive` (a reference of its own: the run's words still hand theirs on), keyed, queued for its
    /// completion callbacks (`enterStep`). `enterAsked` lets go of their words' references.
    private func enterRunning(_ plan: Borrowed<Plan>, _ running: (words: ReferenceWords<Instance>, root: Borrowed<Registration>, lookup: Borrowed<Container>, base: Int)) {
        plan.borrow { p in
            for i in 0..<p.stepCount where !running.words.isNone(i) && !requestSkips.contains(i) && !enteredEarly.contains(i) {
                guard p.steps[i].isKeyed || p.steps[i].completes, !p.steps[i].isShared else { continue }
                let index = alive.append(running.words[i].retained())
                enteredEarly.append(i)
                enterStep(p, i, at: index, root: running.root, running.lookup.object)
            }
        }
    }
    /// The running request's step with a RESOLVER slot calls its factory (`Plan.openAskedFrames`): the graph as the
    /// build's is then: the steps made so far entered (`enterRunning`), the frames of `path` (the request's root down to
    /// that step) opened inside those further out (`openReplayedFrames`), the request's progress naming no plan
    /// meanwhile (the frames are what it constructs). Its gets are requests made meanwhile (`requestedMeanwhile` finds
    /// no plan under way, so none is marked twice; `runAskedMeanwhile`: on a progress of their own). Returns the step's frame's lookup.
    func openAskedFrames(_ plan: Plan, _ path: [Borrowed<Registration>], from lookup: Container) -> Borrowed<Container> {
        enterRunning(Borrowed(plan), runningRequest.unsafelyUnwrapped)
        requestProgress.unsafelyUnwrapped.pointee.plan = nil
        return openReplayedFrames(path, from: lookup).lookup
    }

    /// After `openAskedFrames`' factory (step `i`) returned: its `count` frames closed, the request's plan under way
    /// again, and the keys its gets built that the plan makes later taken from the graph, the steps only they asked
    /// for not made (`Plan.takeBuiltAsked`, into `requestSkips`), as the build finds them where its walk asks.
    func closeAskedFrames(_ count: Int, _ plan: Plan, after i: Int) {
        userCode -= 1
        for _ in 0..<count { pop() }
        let own = requestProgress.unsafelyUnwrapped
        own.pointee.plan = .init(plan)
        requestSkips.formUnion(plan.takeBuiltAsked(after: i, runningRequest.unsafelyUnwrapped.words, self, skips: requestSkips, own.pointee.locals))
    }

    /// Where a request's plan notes its progress (made by the first): not the graph's, which a plan
    /// further out may be under way on (a RESOLVER slot's factory, its `locals` bound); its steps are
    /// `constructing` inside the frames (`requestConstructing`).
    private var requestProgress: UnsafeMutablePointer<PlanProgress>?
    /// The steps of the request's plan under way not made (`Plan.takeFromGraph`, `Plan.takeBuiltAsked`): taken
    /// from this graph, or asked for only under one of those (a bit each).
    private(set) var requestSkips = StepBits()

    /// Whether `registration` is under construction in this graph (a frame's).
    func constructs(_ registration: Borrowed<Registration>) -> Bool { table.state(registration) == GraphTable.constructing }

    /// A resolver's request for `registration`, not in this graph (nor, shared, cached: `buildShared`): its plan
    /// run into words of this graph's and entered as the build leaves what it makes (`enterAsked`): the
    /// graph-scoped instances keyed, those with completion callbacks queued (the request their cause, for
    /// `checkLap`), the creation steps made pended to be published with the graph (their cells claimed first,
    /// `claimAsked`), on a factory's failure what was made before it kept, its message naming the frames open
    /// further out (a factory's request). A plan meeting a key the thread constructs elsewhere (`outer`) or this
    /// graph constructs, or whose creation step's claim fails (`claimAsked`), runs up to where the build asks for
    /// it, then the build's error (`meetAsked`). Nil, with the reason in `declined`, when the build serves it: a
    /// creation plan past 64 steps doing so, a claim finding the caches changed, a failing plan's open frame the
    /// graph has, or a step below a key the graph has that a step it makes takes (`Plan.takeFromGraph`).
    /// A request whose creation steps' claims found keys another thread published that its run cannot take
    /// (`claimAsked`) keeps those claims (`keepClaims`) and picks its plan again, for the state they found, as `run`
    /// does (at most `maxKeptPicks` times).
    @inline(never)
    private func runAsked(_ registration: Registration, from lookup: Container, declined reason: inout Plan.Decline?,
                          _ counts: PlanStats.Counts?, creating: Bool = false) throws(TetherError) -> Int? {
        if requestRunning { return try runAskedMeanwhile(registration, from: lookup, declined: &reason, counts, creating: creating) }
        var picks = 0
        while true {
            let built = try runAskedPick(registration, from: lookup, declined: &reason, counts, creating: creating)
            guard keptAskedClaims else { return built }
            keptAskedClaims = false
            picks += 1
            guard picks <= Self.maxKeptPicks else { return built }
            reason = nil
        }
    }

    /// `runAsked`'s pick of the request's plan and its run.
    /// `picked`: the plan for the container steps the last run's claims found cached (`switchesToVariant`), run instead.
    private func runAskedPick(_ registration: Registration, from lookup: Container, declined reason: inout Plan.Decline?,
                              _ counts: PlanStats.Counts?, creating: Bool, picked: Borrowed<Plan>? = nil) throws(TetherError) -> Int? {
        // A one-shot plan picked here (`Registration.oneShotPlan`) goes once the request's run has ended.
        let oneShots = Borrowed<ThreadState>(opaque: thread).borrow { $0.oneShotPlans.count }
        defer { Borrowed<ThreadState>(opaque: thread).borrow { $0.dropOneShots(to: oneShots) } }
        if requestProgress == nil {
            requestProgress = .allocate(capacity: 1)
            requestProgress!.initialize(to: PlanProgress())
        }
        let progress = requestProgress!
        // A shared key not cached (`buildShared`): the plan for the caches' state now, from the container a
        // resolve of it would run in (a singleton's own, `Graph.resolve`), which its build's frames look up from.
        // (A container-scoped key: its warm plan, its root a container step the run claims in the resolving container.)
        let shared = registration.specReference.borrow { $0.scope.isShared && !$0.scope.isPerResolvingContainer }
        let lookup = shared && registration.specReference.borrow({ $0.scope.resolvesFromOwnContainer }) ? registration.container : lookup
        // (`creating`: a key not shared whose warm plan declined `notCached`, `requested`.)
        guard var plan = picked ?? (shared || creating ? registration.creationPlan(from: lookup, progress)
                : registration.plan(from: lookup, progress)) else {
            // (None for the caches' state: why, as `PlanStats.countBuild` tells a top-level resolve's.)
            reason = creating ? registration.creationDecline ?? .notCached : registration.planDecline(from: lookup)
            if shared && reason == .other { reason = .sharedRoot }  // (its warm plan serves it cached only)
            return nil
        }
        // A plan with a `cachedVariant`: the one the container steps' caches pick (`Plan.variant(forCached:)`), as
        // `runRequest` switches (its claims in the graph switch again if that changes, `Plan.claimContainerSteps`); some
        // cached and others not: the plan for that set (a `mixedVariant`); none fits: the build.
        if picked == nil && plan.borrow({ $0.cachedVariant != nil }) {
            guard let variant = variant(plan, forCached: plan.borrow { $0.cachedNow(in: lookup, progress.pointee.locals) }, in: lookup, progress) else {
                reason = .requestReadsRequest
                return nil
            }
            plan = variant
        }
        let shape: Plan.Decline? = plan.borrow { p in
            // (Container steps over creation steps: claimed in the build's walk's order, `claimAsked`. A RESOLVER slot's
            // owner with container steps: those found cached at the claims are entered before its factory, `enterRunning`,
            // and one its gets find in the graph taken, `Plan.takeBuiltAsked`.)
            // (Slots over creation steps are made as a creating replay makes them; a RESOLVER slot's factory runs
            // with the request's frames open, its gets requests made meanwhile: `Plan.openAskedFrames`.)
            // A failing plan's open frames the graph has: the build takes it (one it constructs: its cycle, `meeting`).
            if let failing = p.failing, failing.allOpen(progress.pointee.locals).contains(where: { builtIndex($0) != nil }) {
                return .requestInGraph
            }
            return nil
        }
        if let shape { reason = shape; return nil }
        // The thread constructs elsewhere: the build refuses a key of that where it asks for it (`Reentry`): the
        // run stops there (`replayAskedCut`, a failing plan's too: `meeting` finds its cut), unless it cannot.
        // A request reading the request whose claims fail or decline lets go of its own cells only (`dropContainerClaims`).
        let savedCells = (requestCellsFrom, requestMadeContainers)
        (requestCellsFrom, requestMadeContainers) = (cells.count, [])
        defer { (requestCellsFrom, requestMadeContainers) = savedCells }
        let count = plan.borrow { $0.stepCount }
        var met: (step: Int, registration: Borrowed<Registration>, cut: Int, claims: Bool)?
        var refusal: TetherError?
        // A step this graph constructs (a frame's: a RESOLVER slot's factory further out asking): the build reports the
        // cycle where its walk asks for it (`existing`, before `outer`), and the run stops there too (`meetAsked`); in a
        // request made meanwhile, one of the running request's open steps too (its path through them, `meanwhileOpen`),
        // unless frames opened since (not known: built).
        let open = meanwhileOpen.map { $0.base == frames.count } ?? true ? constructedSteps(plan, progress.pointee.locals) : []
        if !open.isEmpty || !outer.isEmpty && plan.borrow({ $0.meets(outer, progress.pointee.locals) }) {
            met = plan.borrow { $0.meeting(open + outer, progress.pointee.locals) }
            let cycle = met.map { constructs($0.registration) } ?? !open.isEmpty
            // (Over creation steps: the cells the build asked for before the cut claimed, `Plan.neverAsked`; not past 64 steps.)
            guard met != nil, !plan.borrow({ $0.createsShared }) || count <= 64 else {
                reason = cycle ? .requestInGraph : .requestNested
                return nil
            }
        } else if meanwhileOpen != nil && plan.borrow({ p in (0..<p.stepCount).contains { !p.steps[$0].isShared && constructs(p.registration(of: $0, progress.pointee.locals)) } }) {
            reason = .requestInGraph
            return nil
        }
        let creates = plan.borrow { $0.createsShared }
        requestRunning = true
        defer { requestRunning = false }
        // (A failing plan may have no step: a word all the same, for the buffer's address.)
        let outcome = withUnsafeTemporaryAllocation(of: UInt.self, capacity: max(count, 1)) { buffer -> Result<Int?, TetherError> in
            buffer.initialize(repeating: ReferenceWords<Instance>.none)
            let words = ReferenceWords<Instance>(base: buffer.baseAddress!)
            // Keys the graph has: taken from it, the steps only they asked for not made (the build's walk); up to a cut, those before it.
            guard let skips = plan.borrow({ $0.takeFromGraph(words, self, progress.pointee.locals, before: met?.cut ?? count) }) else {
                reason = .requestInGraph
                return .success(nil)
            }
            // A slot naming a step not made (only a taken key asked for it): the build's slot is another (`slotsMeetSkips`).
            if !skips.isEmpty && plan.borrow({ $0.slotsMeetSkips(words, skips) }) {
                words.releaseUnmoved(lastFirst: count)
                reason = .requestSlots
                return .success(nil)
            }
            requestSkips = skips
            runningRequest = (words, Borrowed(registration), Borrowed(lookup), frames.count)
            defer { (requestSkips, runningRequest) = (StepBits(), nil) }
            // Creation steps: their cells claimed first, the masks of a creating run further out kept aside meanwhile.
            let cellsBefore = cells.count
            let outerTakes = creates ? (claimedSkip, claimedHeld, unclaimedUnder) : nil
            defer { if let outerTakes { (claimedSkip, claimedHeld, unclaimedUnder) = outerTakes } }
            if creates {
                (claimedSkip, claimedHeld, unclaimedUnder) = (StepBits(), StepBits(), StepBits())
                // (Up to a cut: not the cells of the steps the build asks for from there on.)
                var neverAsked = met.map { m in plan.borrow { $0.neverAsked(from: m.cut, met: m.step) } } ?? StepBits()
                // (A refused claim: the run up to it, then its error, as the build's walk reaches it.)
                let cutting = count <= 64
                Self.beforeClaiming(registration)
                neverAsked.formUnion(skips)
                guard claimAsked(plan, from: lookup, skips: neverAsked, cellsBefore: cellsBefore, progress, cutting: cutting) else {
                    words.releaseUnmoved(lastFirst: count)  // what it took from the graph
                    reason = progress.pointee.decline ?? .other
                    progress.pointee.decline = nil
                    return .success(nil)
                }
                if let refused = refusedClaim {
                    refusedClaim = nil
                    let registration = plan.borrow { $0.registration(of: refused.step, progress.pointee.locals) }
                    met = (refused.step, registration, plan.borrow { $0.firstAsked(refused.step) }, false)
                    refusal = refused.error
                }
            } else if met == nil && plan.borrow({ $0.fails }), let refused = claimOpenFrames(plan, from: lookup, progress) {
                // A failing plan creating nothing: a shared frame open at its error whose claim failed, the build's error there.
                (met, refusal) = ((refused.step, refused.registration, refused.cut, false), refused.error)
            }
            if let met {
                let outcome = meetAsked(plan, met, words, count: count, root: Borrowed(registration), lookup, creating: creates, refusal: refusal)
                if case .success(nil) = outcome {
                    (reason, progress.pointee.decline) = (progress.pointee.decline ?? .other, nil)
                    // (Its creation or container steps' claims: nothing was made under them.)
                    if creates || plan.borrow({ $0.hasContainer }) { releaseCells(from: cellsBefore) }
                }
                return outcome
            }
            switch plan.borrow({ $0.replayAsked(into: self, words, specs, progress, lookup: lookup, creating: creates) }) {
            case .success(false):
                reason = progress.pointee.decline ?? .other
                progress.pointee.decline = nil
                // Nothing was made under them (creation steps', container steps' a declining run claimed).
                if creates || plan.borrow({ $0.hasContainer }) { releaseCells(from: cellsBefore) }
                return .success(nil)
            case .success(true):
                return .success(enterAsked(plan, words, count: count, failed: nil, root: Borrowed(registration), lookup))
            case .failure(let error):
                _ = enterAsked(plan, words, count: count, failed: progress.pointee.step, root: Borrowed(registration), lookup)
                return .failure(frames.count == 0 && meanwhileOpen == nil ? error : withFrames(error))
            }
        }
        // Declined for the container steps its claims found cached (`switchesToVariant`): the plan for that set, once
        // (held till this pick's end, `oneShots`).
        if let cached = switchesToVariant {
            switchesToVariant = nil
            if picked == nil, cached.count > 0, let variant = variant(plan, forCached: cached, in: lookup, progress) {
                reason = nil
                return try runAskedPick(registration, from: lookup, declined: &reason, counts, creating: creating, picked: variant)
            }
        }
        if let counts, case .success(_?) = outcome { counts.countRequest(found: false, built: nil) }
        if let counts, case .failure = outcome { counts.countRequest(found: false, built: nil) }
        return try outcome.get()
    }

    /// `runAsked` of a request made while a request's plan runs (`requestedMeanwhile`, the running request's
    /// steps made so far entered, those under construction marked): on a progress of its own, the running
    /// request's (`requestProgress`, `runningRequest`, `requestSkips`, `enteredEarly`) kept aside till it ends,
    /// as the build's frames open inside the running request's steps (`meanwhileOpen`). Out of line: rare.
    @inline(never)
    private func runAskedMeanwhile(_ registration: Registration, from lookup: Container, declined reason: inout Plan.Decline?,
                                   _ counts: PlanStats.Counts?, creating: Bool) throws(TetherError) -> Int? {
        let nested = UnsafeMutablePointer<PlanProgress>.allocate(capacity: 1)
        nested.initialize(to: PlanProgress())
        let saved = (requestProgress, runningRequest, requestSkips, enteredEarly, meanwhileRuns)
        (requestProgress, requestRunning, enteredEarly, meanwhileRuns) = (nested, false, [], true)
        defer {
            (requestProgress, runningRequest, requestSkips, enteredEarly, meanwhileRuns) = saved
            requestRunning = true
            PlanProgress.free(nested)
        }
        return try runAsked(registration, from: lookup, declined: &reason, counts, creating: creating)
    }
    /// Whether the plan of a request made meanwhile runs (`runAskedMeanwhile`): its steps under way are
    /// `constructing` after the running request's open ones (`meanwhileOpen`); not while its build runs.
    private var meanwhileRuns = false

    /// A request's plan meeting `met`, which the thread constructs further out (`runAsked`): run up to where the
    /// build asks for it (`replayAskedCut`), what it made kept in the graph as a failed request's, then the build's
    /// error (`Reentry.reentered`), the plan's steps open then inside the frames (`meanwhileOpen`).
    @inline(never)
    private func meetAsked(_ plan: Borrowed<Plan>, _ met: (step: Int, registration: Borrowed<Registration>, cut: Int, claims: Bool),
                           _ words: ReferenceWords<Instance>, count: Int, root: Borrowed<Registration>, _ lookup: Container,
                           creating: Bool, refusal: TetherError?) -> Result<Int?, TetherError> {
        let progress = requestProgress!
        let outcome = plan.borrow { $0.replayAskedCut(into: self, words, specs, progress, lookup: lookup, cut: met.cut, met: met.step, creating: creating) }
        switch outcome {
        case .success(true): preconditionFailure("a run up to a cut ends there")
        case .success(false) where progress.pointee.cut != -1:  // a decline, before any factory ran
            return .success(nil)
        case .success(false):
            _ = enterAsked(plan, words, count: count, failed: met.cut, root: root, lookup)
            // (Its askers; a failing plan's open frame met, `steps.count + k`: those outside it.)
            let open = plan.borrow { $0.opened(before: met.step, progress.pointee.locals) }
            // (A request made meanwhile: inside the running request's open steps, as `requestedMeanwhile` nests them.)
            let saved = meanwhileOpen
            meanwhileOpen = saved.map { ($0.base, $0.steps + open) } ?? (frames.count, open)
            defer { meanwhileOpen = saved }
            if let refusal { return .failure(refusal) }  // (its claim's: `claimAsked`)
            // A key this graph constructs: the build's cycle (`existing`), its path through the plan's open steps.
            if constructs(met.registration) {
                let key = met.registration.borrow { $0.key }
                let path = path
                return .failure(TetherError.constructorCycle(Array(path[(path.firstIndex(of: key) ?? 0)...]) + [key]))
            }
            return .failure(Reentry.reentered(met.registration, by: self))
        case .failure(let error):
            _ = enterAsked(plan, words, count: count, failed: progress.pointee.step, root: root, lookup)
            return .failure(frames.count == 0 && meanwhileOpen == nil ? error : withFrames(error))
        }
    }

    /// A creating request's claim that failed (`claimAsked` cutting): its step and the build's error there.
    private var refusedClaim: (step: Int, error: TetherError)?

    /// A resolver's request's failing plan creating nothing (`runAsked`): its singleton or weak frames open at its error,
    /// outermost first, each claimed where the build's walk enters it (`Failing.openAt`: its cache first, else `claim`, the
    /// cell held as the build's, `cells`). The first whose claim fails (a cell this thread made further out and has not
    /// finished, a refusal to a thread that must not wait or acts for a token): that frame (`steps.count + k`, `Plan.meeting`'s
    /// numbering), where the build asks for it (a cut) and the claim's error, which the run reports there (`meetAsked`).
    /// Nil: every one claimed (or one found cached: the run as before). Out of line: rare.
    @inline(never)
    private func claimOpenFrames(_ plan: Borrowed<Plan>, from lookup: Container, _ progress: UnsafeMutablePointer<PlanProgress>)
        -> (step: Int, registration: Borrowed<Registration>, cut: Int, error: TetherError)? {
        guard let failing = plan.borrow({ $0.failing }) else { return nil }
        let open = failing.allOpen(progress.pointee.locals)
        for k in open.indices {
            let scope = open[k].borrow { $0.specReference.borrow { $0.scope } }
            guard scope.isShared && !scope.isPerResolvingContainer else { continue }
            if let hit = open[k].borrow({ SharedCache.cached($0, scope, in: lookup) }) {
                hit.release()
                return nil
            }
            do throws(TetherError) {
                let asking = { self.path + open[..<k].map { $0.borrow { $0.key } } }
                if let hit = try open[k].borrow({ r throws(TetherError) in try claim(r, scope, in: lookup, askingPath: asking) }) {
                    hit.release()
                    return nil
                }
            } catch {
                return (plan.borrow { $0.stepCount } + k, open[k], failing.openAt[k], error)
            }
        }
        return nil
    }

    /// The registrations of `plan`'s made steps this graph constructs (a frame's: `existing` reports a request for one as a cycle),
    /// and of a failing plan's open frames it constructs (the build asks for those too, `Failing.openAt`).
    private func constructedSteps(_ plan: Borrowed<Plan>, _ locals: UnsafeMutablePointer<Borrowed<Registration>>) -> [Borrowed<Registration>] {
        guard frames.count > 0 || meanwhileOpen != nil else { return [] }
        return plan.borrow { p in
            (0..<p.stepCount).compactMap { j in
                let registration = p.registration(of: j, locals)
                return !p.steps[j].isShared && constructs(registration) ? registration : nil
            } + (p.failing?.allOpen(locals).filter { constructs($0) } ?? [])
        }
    }

    /// The cells of the creation steps of a request's plan (`runAsked`) claimed before any factory, each as the
    /// build's `existing` does where its walk first asks for it inside the request (`Plan.requestClaimOrder`: its
    /// cache first, else `claim`, which holds a cell this graph holds already, or makes it under a claim further
    /// out on this thread), not those below a key the graph has (`skips`: the build never asks for them). One
    /// published meanwhile is taken cached, the steps under it not made (`takesClaimedHits`), as the build takes
    /// it where its walk asks. False, with `PlanProgress.decline` and every cell claimed here let go of (those
    /// from `cellsBefore` on): a claim that fails (a cell this thread made further out, a wait cycle, a token's
    /// or a no-wait refusal: the build reports it where its walk asks for that key, after the factories
    /// before it, and claims as it goes), a dead weak instance to revive where the plan does not, or a key
    /// published meanwhile the run cannot take. `progress`: the request's (`requestProgress`).
    /// `cutting`: a claim that fails is noted instead (`refusedClaim`), the cells claimed before it kept: true, the run
    /// making what the build makes before it asks for that key (`runAsked`, a cut there).
    private func claimAsked(_ plan: Borrowed<Plan>, from container: Container, skips: StepBits, cellsBefore: Int,
                            _ progress: UnsafeMutablePointer<PlanProgress>, cutting: Bool) -> Bool {
        let inOrderBefore = claimedInOrder
        let last = plan.borrow { $0.stepCount } - 1
        var declined: Plan.Decline?
        // Container steps found cached (the build never asks for what is under them), creation steps found
        // published (nor under those): as `claimWithContainerSteps`.
        var cachedContainers: [Int] = []
        var published: [Int] = []
        claims: for step in plan.borrow({ $0.requestClaimOrder() }) where !skips.contains(step) {
            let (registration, isContainer, stepLookup) = plan.borrow { p in
                (p.registration(of: step, progress.pointee.locals), p.steps[step].isContainer, p.lookup(of: step, progress.pointee.locals))
            }
            if !published.isEmpty && plan.borrow({ p in published.contains { p.descends(step, from: $0) } }) { continue }
            let under = !cachedContainers.isEmpty && plan.borrow { p in cachedContainers.contains { p.descends(step, from: $0) } }
            let scope = registration.borrow { $0.specReference.borrow { $0.scope } }
            let asking = { self.path + plan.borrow { $0.askingPath(to: step) } }
            if isContainer {
                // (A request's run claims every container step ahead, `Plan.claimContainerSteps`: none late.)
                if under { continue }
                let container = stepLookup?.object ?? container
                do throws(TetherError) {
                    var hit = registration.borrow { SharedCache.cached($0, scope, in: container) }
                    if hit == nil { hit = try registration.borrow { r throws(TetherError) in try claim(r, scope, in: container, askingPath: asking) } }
                    guard let hit else { continue }
                    hit.release()
                    cachedContainers.append(step)
                    // Recorded with every step made (`Plan.needsContainersUncached`): the build makes fewer now.
                    if plan.borrow({ $0.needsContainersUncached }) { declined = .containerInput; break claims }
                } catch {
                    // The claims stop where the build's do; the run claims it again (`Plan.claimContainerSteps`) and
                    // reports its failure where the build asks for that step.
                    break claims
                }
                continue
            }
            // Asked for only under a container step found cached, no step still made asking for it: neither claimed nor made
            // (as `claimWithContainerSteps`). One a step still made asks for: the build makes it where that one asks.
            if under && leavesUntaken(plan, step, under: cachedContainers, progress.pointee.locals) { continue }
            if under || registration.borrow({ Plan.Recorder.revives($0, scope) }) && !plan.borrow({ $0.revivesWhereReached(step) }) {
                declined = step == last ? .sharedRoot : .notCached
                break
            }
            do throws(TetherError) {
                var hit = registration.borrow { SharedCache.cached($0, scope, in: container) }
                if hit == nil { hit = try registration.borrow { r throws(TetherError) in try claim(r, scope, in: container, askingPath: asking) } }
                if let hit {
                    claimedHits.append((step, hit))
                    published.append(step)
                }
            } catch {
                if cutting { refusedClaim = (step, error) } else { declined = .requestShared }
                break
            }
        }
        if declined == nil && !claimedHits.isEmpty && !takesClaimedHits(plan, from: container, keeping: cellsBefore) { declined = .creationPicks }
        guard let declined else { return true }
        progress.pointee.decline = declined
        refusedClaim = nil
        // Keys published it cannot take: the claims kept (the graph's from then on) for the plan picked next (`runAsked`).
        if declined == .creationPicks { return keepClaims(request: true) }
        dropClaimedHits()
        releaseCells(from: cellsBefore)
        claimedInOrder = inOrderBefore
        return false
    }

    /// A failure in the plan of a factory's request (`runAsked`): its path from the frames open further out,
    /// as the build's (`factoryFailure`, `fill`'s key not registered, `depend`'s key taking arguments), not
    /// from the request's root. A cycle's keys run from the key met, one of the plan's (none the frames hold:
    /// `takeFromGraph`, the failing plan's open frames checked), so they are the build's already.
    @inline(never)
    private func withFrames(_ error: TetherError) -> TetherError {
        let parts = error.parts
        guard let key = parts.key else { return error }
        let path = path + parts.path
        switch parts.fix {
        case .factory: return Graph.factoryFailure(key, CallbackFailure(reason: parts.reason), path: path)
        case .register: return TetherError.notRegistered(key, neededBy: pathText(path), ErrorParts(.register, key: key, path: path))
        case .runtimeArguments: return Graph.argumentDependency(key, neededBy: pathText(path), path: path)
        default: return error
        }
    }

    /// After a request's plan ran (`runAsked`): its words appended to `alive`, each step entered as the
    /// build's `enter` leaves it: keyed in the table, a lazy cell awaiting it bound, counted as kept, queued
    /// for its completion callbacks with the request as its cause. `failed`: the step whose factory failed:
    /// what was made before it stays in the graph, as the build's; the shared steps the run took past it
    /// (the build never reached them) are let go of, and so are the graph's instances it took and the shared
    /// steps only those asked for (`requestSkips`). Returns the root's index in `alive`.
    private func enterAsked(_ plan: Borrowed<Plan>, _ words: ReferenceWords<Instance>, count: Int, failed: Int?,
                            root: Borrowed<Registration>, _ lookup: Container) -> Int {
        // Past the failed step, and what the graph had or only those asked for: not the request's to enter.
        for i in 0..<count where i >= failed ?? count || requestSkips.contains(i) {
            words.releaseUnmoved(i)
            words.base[i] = ReferenceWords<Instance>.none
        }
        // Entered while it ran (`enterRunning`): the graph holds its own reference already.
        if !enteredEarly.isEmpty {
            for i in enteredEarly {
                words.releaseUnmoved(i)
                words.base[i] = ReferenceWords<Instance>.none
            }
        }
        let base = alive.count
        let into = alive.appendNone(count: count)
        into.base.update(from: words.base, count: count)  // the words' references, moved
        plan.borrow { p in
            for i in 0..<count where !into.isNone(i) { enterStep(p, i, at: base + i, root: root, lookup) }
        }
        enteredEarly.removeAll()
        return base + count - 1
    }

    /// Step `i` of a request's plan (`enterAsked`, `enterRunning`), its instance at `index` in `alive`, entered as
    /// the build's `enter` leaves it: keyed, a lazy cell awaiting it bound, counted as kept, queued for its
    /// completion callbacks with the request as its cause.
    private func enterStep(_ p: Plan, _ i: Int, at index: Int, root: Borrowed<Registration>, _ lookup: Container) {
        // (A child's plan: a local step's the resolving child's registration, bound on the request's progress.)
        let locals = requestProgress.unsafelyUnwrapped.pointee.locals
        let registration = p.registration(of: i, locals)
        if p.steps[i].isKeyed { table.set(registration, GraphTable.state(index)) }
        // A container step made: published into its container with the graph, as `enter` queues it.
        let madeContainer = p.steps[i].isContainer && requestMadeContainers.contains(ObjectIdentifier(registration.object))
        if madeContainer { pendingShared.append((registration, alive[index].object, p.steps[i].lookup ?? .init(lookup))) }
        // Taken from its cache (a container step too), or a creation step published meanwhile (taken at its claim or
        // check) or revived: as `existing` takes it, binding a lazy cell waiting for it (a value's is not bound).
        if p.steps[i].isShared || p.steps[i].isContainer && !madeContainer || p.steps[i].creates && !madeHere(registration) {
            if !awaitingCells.isEmpty && !registration.borrow({ $0.isDeclaredValue }) { bindAwaiting(registration, alive[index]) }
            return
        }
        if p.steps[i].creates {
            madeCreationStep(registration, at: index)  // published with the graph, in `enter`'s order
        } else if p.steps[i].isKeyed {
            keptMade &+= 1
        }
        if !awaitingCells.isEmpty { bindAwaiting(registration, alive[index]) }
        if p.steps[i].completes {
            var (cause, via) = (-1, -1)
            // (A factory's request: the build's frames hold the ones further out first.)
            if currentCause != -1 { (cause, via) = recordCause(asked: frames.count == 0 ? root : frames[0].registration, via: path + p.keys(to: i, locals)) }
            queue.append(Pending(instance: alive[index], registration: registration, lookup: .init(lookup), cause: cause, via: via))
        }
    }

    /// Whether `build` would find `registration`'s instance without making one: this graph's, a cached
    /// shared one or a provided value (a diagnostic's look, for `PlanStats`; it claims nothing).
    private func isFound(_ registration: Borrowed<Registration>, in lookup: Container) -> Bool {
        let state = table.state(registration)
        if state != GraphTable.absent { return state != GraphTable.constructing }
        let scope = registration.borrow { $0.spec.scope }
        let hit = scope.isShared ? registration.borrow { SharedCache.cached($0, scope, in: lookup) }
            : registration.borrow { $0.isDeclaredValue } ? registration.borrow { lookup.providedValue(of: $0) } : nil
        defer { hit?.release() }
        return hit != nil
    }

    /// `buildAsked`'s refusal: the running callback's request for `asked` repeats one of the chain of
    /// requests that caused its instance with nothing kept made since.
    @inline(never)
    private func checkLap(_ asked: Borrowed<Registration>, by owner: Borrowed<Registration>) throws(TetherError) {
        let running = queue[runningCallback]
        var c = running.cause
        while c >= 0 {
            let request = requests[c]
            if request.owner === owner && request.asked === asked {
                if request.keptBefore == keptMade {
                    let error = callbackLap(from: c, running.cause, running.via)
                    (lapRefused, lapWasRefused) = (error, true)
                    throw error
                }
                return
            }
            c = request.parent
        }
    }

    /// For an instance with callbacks made for the request whose build runs: that request (recorded now,
    /// if it was not) and the frames' keys, as its `Pending.cause` and `via`.
    /// `asked` and `via`: a request's plan's root and path to the instance (`enterAsked`), else the frames'.
    @inline(never)
    private func recordCause(asked: Borrowed<Registration>? = nil, via: [Key]? = nil) -> (cause: Int, via: Int) {
        if currentCause == Graph.unrecordedCause {
            let running = queue[runningCallback]
            requests.append(CallbackRequest(owner: running.registration, asked: asked ?? frames[0].registration, parent: running.cause,
                                            via: running.via, keptBefore: requestKeptBefore))
            currentCause = requests.count - 1
        }
        viaPaths.append(via ?? path)
        return (currentCause, viaPaths.count - 1)
    }

    /// The error of the lap from request `first` to the running callback's (`buildAsked`):
    /// its path, each instance whose callback asks marked, its first key repeated last.
    private func callbackLap(from first: Int, _ cause: Int, _ via: Int) -> TetherError {
        var chain: [Int] = []
        var c = cause
        while c != first { chain.append(c); c = requests[c].parent }
        var segments = [[requests[first].owner.borrow { $0.key }]]
        for c in chain.reversed() { segments.append(viaPaths[requests[c].via]) }
        segments.append(viaPaths[via])
        return TetherError.callbackLap(segments)
    }

    private func publish() {
        if !pendingShared.isEmpty {
            let unwrapped = unwrappedLayers()
            for (n, (registration, instance, container)) in pendingShared.enumerated() {
                if !unwrapped.isEmpty && unwrapped.contains(n) {
                    if instance.spec.scope.isKeptWeakly { registration.borrow { $0.forgetPublished(at: instance.pointer) } }
                    continue
                }
                registration.borrow { r in
                    if let container {
                        container.borrow { SharedCache.publish(r, instance, in: $0, builtSince: builtSince) }
                    } else {
                        SharedCache.publish(r, instance, in: nil, builtSince: builtSince)
                    }
                }
            }
            pendingShared.removeAll(keepingCapacity: true)
        }
        if !revivedShared.isEmpty {
            for (registration, instance) in revivedShared { registration.borrow { SharedCache.publish($0, instance, in: nil, builtSince: builtSince) } }
            revivedShared.removeAll()
        }
        releaseCells()
    }

    /// The pended decorator layers (`movedFrom`: `K (before decorator n)`) that no instance published after them
    /// holds by a strong edge (the layer above failed, under a request the resolve survived: a completion callback's
    /// get, a RESOLVER slot's), by index: they go with the graph, published under no key, and so do the layers below
    /// them: a decorated key caches its decorated result, never an undecorated original alone (README "Decorators").
    private func unwrappedLayers() -> [Int] {
        var skipped: [Int] = []
        for n in pendingShared.indices.reversed() where pendingShared[n].0.borrow({ $0.movedFrom != nil }) {
            let layer = pendingShared[n].1
            let held = EdgeLock.withLock {
                pendingShared.indices[(n + 1)...].contains { m in !skipped.contains(m) && !pendingShared[m].1.forEachStrongEdge { $0 !== layer } }
            }
            if !held { skipped.append(n) }
        }
        return skipped
    }

    /// A failed resolve publishes nothing: the shared instances it pended let go of (their references
    /// here too, so a failed replay's own release order holds: `Plan.openFrames` pends before the last factory).
    func unpendShared() {
        guard !pendingShared.isEmpty else { return }
        // A weak-scoped object this resolve made at the address of the one last published
        // (dead, its memory reused) must not be taken for it by a binding asked to revive it.
        for (registration, instance, _) in pendingShared where instance.spec.scope.isKeptWeakly {
            registration.borrow { $0.forgetPublished(at: instance.pointer) }
        }
        pendingShared.removeAll(keepingCapacity: true)
    }

    private func abort() {
        // The graph holds everything it made again, so dropping its references destroys
        // each once, last made first (dependents first: the newer), as the model's rollback
        // does; cached instances it merely reused stay cached. (A second call finds it empty.)
        alive.reownAll()
        unpendShared()
        releaseCells(failed: true)
        clear()
    }

    /// A resolve that must not wait for another thread's creation cell
    /// (`WaitMode`) fails before any factory runs when a shared instance its
    /// constructor edges reach is being created by another thread: finding that
    /// only later would fail the resolve after factories ran, and the caller's
    /// retry would run them again. So the thread's outermost resolve claims
    /// those cells ahead (a check alone would let another thread claim one
    /// between the check and the build); a nested one, whose thread may hold
    /// cells further out, checks. (What lazy, resolver slots and completion
    /// callbacks reach is known only as they run.)
    private func checkBeforeNotWaiting(_ root: Registration, from container: Container) throws(TetherError) {
        let (noWait, acting) = (Borrowed<ThreadState>(opaque: thread).borrow { $0.noWait }, SharedCache.refusing(thread) != nil)
        guard noWait || acting else { return }
        // The outermost resolve of a thread acting for no token holds no cell yet.
        let outermost = Borrowed<ThreadState>(opaque: thread).borrow { $0.nesting == 1 && $0.replaying.isEmpty && $0.tokens.isEmpty }
        if !acting && outermost && outer.isEmpty {
            claimedInOrder = true
            return try claimInOrder(root, from: container, evenOne: true)
        }
        var blocked: (Registration, Container)?
        Self.forEachUncachedShared(root, from: container) { registration, lookup in
            guard SharedCache.shared.heldElsewhere(registration, registration.spec.scope, in: lookup, thread: thread) else { return true }
            blocked = (registration, lookup)
            return false
        }
        // Acting for a token: its claim refuses the wait (the token then waits for that cell),
        // or finds the cell let go of meanwhile and holds it for this build.
        if acting, let (registration, lookup) = blocked {
            try claimOne(registration, registration.spec.scope, in: lookup)?.release()
            return
        }
        if let (blocked, _) = blocked {
            Borrowed<ThreadState>(opaque: thread).borrow { $0.blocked = true }
            throw Self.wouldBlock(root, blocked: blocked)
        }
        if Self.checkHooked.load(ordering: .acquiring), let hook = Self.afterCheckBeforeNotWaiting.withLock({ $0 }) { hook(root) }
    }

    /// The refusal of a no-wait resolve of `root` that would wait for another thread creating `blocked`.
    private static func wouldBlock(_ root: Registration, blocked: Registration) -> TetherError {
        TetherError(.wouldBlock, "resolving \(root.key.quoted) must wait for another thread that is creating \(blocked.key.quoted); this resolve was asked not to wait (TETHER_RESOLVE_NO_WAIT): retry without it")
    }

    /// Calls `body` with each singleton-, weak- or container-scoped registration
    /// (and the container it is looked up from) that building `root` from
    /// `container` reaches through constructor edges and no cache holds, until
    /// `body` returns false. Unretained throughout (containers keep their
    /// registrations, registrations their specs); what was seen kept in a small
    /// array (graphs are small; a set past 32), as it runs on every graph that creates.
    /// `keep` takes the weak instances found cached (else let go of at once).
    private static func forEachUncachedShared(_ root: Registration, from container: Container,
                                              keepingWeak keep: ((Ref<Instance>) -> Void)? = nil,
                                              _ body: (Registration, Container) -> Bool) {
        var seenList: [ObjectIdentifier] = []
        var seenSet: Set<ObjectIdentifier>?
        var stack = [(Borrowed(root), Borrowed(container))]
        while let (next, lookup) = stack.popLast() {
            let id = ObjectIdentifier(next.object)
            if seenSet != nil {
                guard seenSet!.insert(id).inserted else { continue }
            } else {
                guard !seenList.contains(id) else { continue }
                seenList.append(id)
                if seenList.count > 32 { seenSet = Set(seenList) }
            }
            let scope = next.borrow { $0.specReference.borrow { $0.scope } }
            if scope.isShared {
                if let hit = next.borrow({ SharedCache.cached($0, scope, in: lookup.object) }) {
                    if let keep, scope.isKeptWeakly { keep(hit) } else { hit.release() }
                    continue
                }
                if !body(next.object, lookup.object) { return }
            }
            let depLookup = scope.resolvesFromOwnContainer ? next.borrow { Borrowed($0.container) } : lookup
            for param in next.borrow({ $0.params }) where param.isConstructorEdge {
                switch depLookup.borrow({ param.targets(from: $0) }) {
                case .key(let key):
                    if let dep = depLookup.borrow({ $0.unretainedRegistration(for: key) }) { stack.append((dep, depLookup)) }
                case .list(let items):
                    for dep in items { stack.append((.init(dep), depLookup)) }
                case .none: break
                }
            }
        }
    }

    /// The cells claimed from `first` on let go of (a request's plan declined: `claimAsked`; the graph keeps the others).
    private func releaseCells(from first: Int) {
        guard first < cells.count else { return }
        for cell in cells[first...] { SharedCache.shared.release(cell) }
        cells.removeSubrange(first...)
    }

    /// The instances this graph made under its thread's outer claims are no longer unfinished ones of its.
    private func endUnderOuter() {
        for cell in madeUnderOuterCells { cell.madeBelow -= 1 }
        madeUnderOuterCells.removeAll()
        outerCells.removeAll()
    }

    /// `failed`: a cell whose factory suspended goes to its token (`SharedCache.release`).
    private func releaseCells(failed: Bool = false) {
        if !madeUnderOuter.isEmpty { madeUnderOuter.removeAll() }
        if !outerCells.isEmpty { endUnderOuter() }
        guard !cells.isEmpty else { return }
        for cell in cells { SharedCache.shared.release(cell, failed: failed) }
        cells.removeAll(keepingCapacity: true)
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


/// `keys` as a message quotes them, a long path cut in the middle (`ErrorParts.cappedPath`).
func pathText(_ keys: [Key]) -> String {
    cappedList(keys, separator: " -> ", \.quoted)
}

/// `items` as `text` shows them, joined by `separator`; a long list cut in the middle as a path is.
func cappedList<T>(_ items: [T], separator: String, _ text: (T) -> String) -> String {
    let (shown, omitted) = ErrorParts.cappedPath(items)
    guard omitted > 0 else { return shown.map(text).joined(separator: separator) }
    let head = shown[..<ErrorParts.pathHead].map(text), tail = shown[ErrorParts.pathHead...].map(text)
    return (head + ["... (\(omitted) more)"] + tail).joined(separator: separator)
}
