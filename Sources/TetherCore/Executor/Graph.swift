import Synchronization

/// One top-level resolve. Factories run depth-first along declared constructor
/// dependencies on an explicit stack (no recursion per level); every instance
/// enters the graph as soon as its factory returns; completion callbacks are
/// deferred until no factory of the graph is running, then run in creation
/// order. Any failure destroys everything the graph created and caches nothing.
///
/// A graph's storage is reused by the next resolve on the same thread, so a
/// resolve allocates little beyond the instances themselves.
///
/// This file holds the graph's state and a resolve's entry (`resolve`); `Graph+*.swift` hold the rest by
/// concern: a plan run into it (`+Replay`, `+Claims`, `+Requests`, `+RequestRuns`), the build (`+Build`),
/// completion callbacks (`+Completion`), publication and abort (`+Publication`).
final class Graph {
    /// A thread's graph is written all through its resolves: no other allocation on its lines (`LinePad`).
    let leadingPad = LinePad()
    /// Everything this graph created or reused: kept alive until the resolve
    /// returns. Other lists of the graph hold them unretained, by index here.
    /// An instance's first new owner (a dependent's edge, the caller) takes the
    /// graph's own reference, so a chain is built and handed over without
    /// reference counting; what nothing took is released at the end.
    var alive = ReferenceStack<Instance>()
    /// Per registration: under construction (it has a frame), or this graph's
    /// non-transient instance of it (its index in `alive`).
    var table = GraphTable()
    /// Frames of every build under way, outermost first (nested builds from a
    /// resolver continue above). Their registrations are the ones under construction.
    var frames = PlainStack<Frame>()
    /// Argument words of the frames, contiguous; a frame owns `wordBase ..< wordBase + params.count`.
    var words = PlainStack<UInt64>()
    /// Dependencies gathered by the frames, contiguous like `words`: indices in `alive`.
    var dependencyStack = PlainStack<Int>()
    /// Weak and lazy slots of the frames (rare), in frame order: the frame, the
    /// word the slot fills, its object. Kept out of `Frame` so frames stay plain data.
    var weakSlots: [(frame: Int, index: Int, ref: WeakRef)] = []
    var lazySlots: [(frame: Int, index: Int, cell: LazyCell)] = []
    /// Lazy cells filled in this resolve waiting for the graph's instance of their key
    /// (`LazyCell.bind`): bound when an instance of that registration enters the graph.
    var awaitingCells: [(registration: Borrowed<Registration>, cell: LazyCell)] = []
    /// ALL slots (rare): the registrations listed, how many are attached so far, and where
    /// their instances start on `dependencyStack`. FACTORY slots: the key to build.
    var allSlots: [(frame: Int, index: Int, registrations: [Registration], next: Int, first: Int)] = []
    var factorySlots: [(frame: Int, index: Int, key: Key)] = []
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
    var cutOpen: [Borrowed<Registration>] = []
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
    var nestedRoot: Borrowed<Registration>?
    var completing: Borrowed<Registration>?
    /// Instances waiting for their completion callbacks.
    var queue = PlainStack<Pending>()
    /// Completion callbacks' requests, each with what caused the instance asking (`Pending.cause`):
    /// the chain `buildAsked` checks for a lap that repeats forever. Cleared with the graph.
    var requests: [CallbackRequest] = []
    /// The keys of the frames when an instance with callbacks was made for such a request (`Pending.via`), for the lap's path.
    var viaPaths: [[Key]] = []
    /// The request whose build runs (-1: none; `unrecordedCause`: not in `requests` yet), the cause of
    /// every instance it makes. Most requests make no instance with callbacks, so they record nothing:
    /// the first such instance records it (`recordCause`: the key asked is its build's first frame).
    var currentCause = -1
    static let unrecordedCause = -2
    /// `keptMade` when that request was asked.
    var requestKeptBefore = 0
    /// The instance whose completion callbacks run: its index in `queue` (its `Pending` has its
    /// registration, cause and via), -1 when none runs.
    var runningCallback = -1
    /// Whether `buildAsked` refused a lap in the callback that runs, and that cycle: the resolve's error.
    var lapWasRefused = false
    var lapRefused: TetherError?
    /// Instances made that the graph or a cache keeps (not transient): a lap that made none left
    /// everything as it found it, so the next lap makes the same again.
    var keptMade = 0
    var queueHead = 0
    /// The resolver of the last completion callback, for the next one.
    var spareResolver: Resolver?
    /// Shared-scope instances to publish when the graph succeeds (with the
    /// container that caches a container-scoped one).
    /// Registrations and containers unretained (they outlive the resolve): a parent's registration
    /// is shared by every thread's requests, and a count on it would be a word they all write.
    var pendingShared: [(Borrowed<Registration>, Instance, Borrowed<Container>?)] = []
    /// Weak-scoped instances of objects a binding still held (`revive`), published with the others.
    var revivedShared: [(Borrowed<Registration>, Instance)] = []
    /// The creation cells this graph holds (`SharedCache`), released once it is published or failed.
    var cells: [SharedCache.Cell] = []
    /// Creation steps of the plan replaying into this graph it made under a cell a resolve further out on
    /// this thread claimed (`SharedCache.Claim.createUnderOuter`, no cell of its own: `madeCreation`), by
    /// registration: published with the graph as the build's, the cell left the outer's. Emptied with `cells`.
    var madeUnderOuter: [ObjectIdentifier] = []
    /// The cells a resolve further out on this thread claimed that this graph creates under (`createUnderOuter`),
    /// and those it made the instance under, each counted once in the cell's `madeBelow` until the graph ends
    /// (`releaseCells`): a resolve nested further in is refused that instance as unfinished. Emptied with `cells`.
    var outerCells: [SharedCache.Cell] = []
    var madeUnderOuterCells: [SharedCache.Cell] = []
    /// The root of the outermost build, whose constructor edges' cells are claimed in
    /// order at the first claim (`claimInOrder`), and whether that happened.
    var claimRoot: (registration: Borrowed<Registration>, container: Borrowed<Container>)?
    /// While `replayMeeting` claims: the cut and the step it meets (`claimWithContainerSteps` claims only what the build asks for before it).
    var cutClaims: (cut: Int, met: Int)?
    var claimedInOrder = false
    /// A failing plan's first claim that failed after factories of the build (`claimPastFailure`): where the build's
    /// walk asks for that key (the cut), the step or open frame it asks for there (`Plan.meeting`'s numbering), and the
    /// claim's error, which the run reports there (`replayPastFailure`). Set only between the claims and that run.
    var pastFailure: (cut: Int, met: Int, error: TetherError)?
    /// Instances `claimInOrder` found published: held so the build finds them cached.
    var heldAhead: [Instance] = []
    /// Creation steps of the plan replaying into this graph that another thread published between the
    /// pick and their claims (`claimCreations`), each with the instance found: the run takes it cached
    /// (`takeClaimedHits`), as the build's `claimInOrder` holds one it finds published and takes it where
    /// its walk asks. `claimedSkip`: those steps and the ones under them, which the run does not make;
    /// `claimedHeld`: the ones under them no step still made takes, held till the graph ends, as `heldAhead`.
    var claimedHits: [(step: Int, instance: Ref<Instance>)] = []
    var claimedSkip = StepBits()
    var claimedHeld = StepBits()
    /// The claims of a creation plan that found keys published it could not take were kept (`endClaims`): the
    /// cells still held, the keys found held in `heldAhead`, so the plan picked next (`run`) is the one for the
    /// state they found, which no other thread can change under them.
    var keptClaims = false
    /// `keptClaims` of a resolver's request (`claimAsked`): `runAsked` picks the request's plan again under them.
    var keptAskedClaims = false
    /// `run` holds every key its build would claim (past its bound): a plan declining keeps its claims (`replay`).
    var holdsAhead = false
    /// Creation steps `claimWithContainerSteps` (or a request's `claimAsked`) neither claimed nor found published: first
    /// asked for under a container step found cached, which no step still made asks for (`leavesUntaken`: the build
    /// never asks for them). The run checks they are skipped (`Plan.execute`).
    var unclaimedUnder = StepBits()
    /// The runtime arguments of the build under way (its root's argument slots).
    var buildArguments = UnsafeBufferPointer<Argument>(start: nil, count: 0)
    /// Factories and completion callbacks of this graph under way: while any is, this resolve cannot start over.
    var userCode = 0
    /// A wait cycle this resolve breaks by starting over once the cell is released (`SharedCache.Claim.backOff`).
    var backOff: (cell: SharedCache.Cell, error: TetherError)?
    /// How often one resolve starts over before it reports the cycle instead.
    static let maxBackOffs = 64
    /// A provided value's registration this resolve picked and then found without its value, claimed as
    /// if to make it (`claimOne`): the configuration moved on meanwhile (an override cleared, the key
    /// registered again), so the resolve starts over on the configuration now (`run`, `Container.startOver`),
    /// as a plan whose cached leaf went declines and the resolve picks the plan of the state it finds. Nil once `run` took it.
    var supersededValue: Borrowed<Registration>?
    /// The `SupersedeClock` read before this run's plan was picked (`PlanProgress.builtSince`) or its build
    /// looked anything up: what a configuration change superseded after is not cached (`publish`).
    var builtSince: UInt = 0
    /// The hook of the container this resolve was started from, while one is set (`Container.setTrace`).
    var tracer: Tracer?
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
    let trailingPad = LinePad()

    var specs: ThreadSpecs { Borrowed<ThreadState>(opaque: thread).borrow { $0.specs } }

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
    static func resolve(_ registration: Registration, from container: Container,
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
    static func creationPlan(_ registration: Registration, from container: Container,
                                     _ progress: UnsafeMutablePointer<PlanProgress>) -> Borrowed<Plan>? {
        registration.creationPlan(from: container, progress)
    }

    /// How often a resolve picks a creation plan again after the one it picked found the caches
    /// changed in a way its run cannot take (`claimCreations`: a key another thread published in a run up to a
    /// cut, a weak one died, a leaf reset), its claims let go of, before it holds every key its build would
    /// claim and picks once more (`run`).
    static let maxCreationPicks = 4
    /// How often a resolve picks again after its claims were kept (`keptClaims`): each such pick follows a key found
    /// published, held from then on (`heldAhead`), so the picks end when the keys do; a bound all the same, past
    /// which the resolve (a resolver's request too, `runAsked`) holds every key its build would claim and picks once more.
    static let maxKeptPicks = 16

    /// A container step's claim failed (`claimContainerStep`): the error the replay reports where the build would.
    var deferredFailure: TetherError?

    /// The container steps `Plan.claimContainerSteps` left to claim late (a bit each), for the run it precedes.
    var lateContainerClaims = StepBits()

    /// Set by the claims when the container steps they found cached (`bits`, a bit each, and how many) are a state the
    /// plan does not run in (`Plan.claimContainerSteps`: every one, with a `cachedVariant`; some, which no skip gives the
    /// build's order; `claimWithContainerSteps`: one, of a creation plan recorded with every step made): the run
    /// declined, and `replay` (a request's `runAsked`) runs the plan `variant(_:for:)` picks instead (read and cleared there).
    var switchesToVariant: (bits: UInt, count: Int)?
    /// Set by a cut run's claims that found the asker of the step it meets cached (`Plan.claimContainerSteps`): where
    /// no variant `switchesToVariant` picks serves, `replayMeeting` runs the plan with the cached ones leaves (`leafVariant`).
    var cutAskerCached = false

    /// While a resolver's request's plan runs (`runAsked`): the graph's cells before it (kept when its claims
    /// are let go of), and the container steps it made (`madeContainerCell`: entered as made, `enterStep`).
    var requestCellsFrom: Int?
    var requestMadeContainers: [ObjectIdentifier] = []

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
    func clear() {
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
        (keptClaims, keptAskedClaims, holdsAhead) = (false, false, false)
        if let built { letGoReplayed(built) }
        alive.removeAll()
    }

    /// The steps of the plan replaying into this graph entered (`enterReplayed`) before the run ended:
    /// those made before a step with a RESOLVER slot (`Plan.makeSlots`), as the build enters them as made.
    var replayEntered = 0
    /// Those made steps as positions in the run's order (`Plan.openFrames`; a `PublishedVariant`'s may not be step order).
    var replayEnteredAt = 0
    /// Per step with a RESOLVER slot whose factory ran: the instances its gets built (`alive[from ..< to]`,
    /// after the plan's words), made before the step's: a failed run lets go of them in that place (`Plan.letGoBuilt`).
    var replayBuilt: [(step: Int, from: Int, to: Int)] = []
    /// Steps of that plan its run does not make (a bit per step, `Plan.takeBuilt`): taken from what a
    /// resolver's gets built first, or asked for only under those (the build never reaches them).
    var replaySkips = StepBits()

    /// Whether a request's plan runs in this graph (`runAsked`): a request made meanwhile (a factory of
    /// that plan using an open resolver of this graph) is built (`requestedMeanwhile`).
    var requestRunning = false
    /// The request whose plan runs (`runAsked`): its words, root and resolving container, and `frames.count`
    /// when it began (its steps sit above those frames, `path`).
    var runningRequest: (words: ReferenceWords<Instance>, root: Borrowed<Registration>, lookup: Borrowed<Container>, base: Int)?
    /// The running request's steps entered into the graph before it ended (`enterRunning`), not entered again (`enterAsked`).
    /// Each with its index in `alive`.
    var enteredEarly: [(step: Int, at: Int)] = []
    /// While a request made meanwhile is served (`requestedMeanwhile`): the running request's steps under
    /// construction, above its frames `base`, for `path` and `constructing`.
    var meanwhileOpen: (base: Int, steps: [Borrowed<Registration>])?

    /// Where a request's plan notes its progress (made by the first): not the graph's, which a plan
    /// further out may be under way on (a RESOLVER slot's factory, its `locals` bound); its steps are
    /// `constructing` inside the frames (`requestConstructing`).
    var requestProgress: UnsafeMutablePointer<PlanProgress>?
    /// The steps of the request's plan under way not made (`Plan.takeFromGraph`, `Plan.takeBuiltAsked`): taken
    /// from this graph, or asked for only under one of those (a bit each).
    var requestSkips = StepBits()

    /// Whether the plan of a request made meanwhile runs (`runAskedMeanwhile`): its steps under way are
    /// `constructing` after the running request's open ones (`meanwhileOpen`); not while its build runs.
    var meanwhileRuns = false

    /// A creating request's claim that failed (`claimAsked` cutting): its step and the build's error there.
    var refusedClaim: (step: Int, error: TetherError)?
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
