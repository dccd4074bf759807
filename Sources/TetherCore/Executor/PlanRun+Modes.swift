// The run modes (`RunMode`: where instances go, traced, cut, creating, request) and a run's state.

extension Plan {
    /// Where a run's instances go: the mode of the one step loop (`execute`), a type so the loop
    /// is specialized per mode (as per `StepBinding`), each mode's tests folded away.
    enum Destination { case instances, block, objects, graph }
    protocol RunMode {
        static var destination: Destination { get }
        /// Whether the plan has creation steps (`creationChecks`): graph mode only.
        static var creates: Bool { get }
        /// Whether the run tells a trace hook (`RunState.tracer`) what the build would: separate
        /// instances or a graph's only.
        static var traced: Bool { get }
        /// Whether the run stops at a cut (`CutIntoGraph`).
        static var cuts: Bool { get }
        /// Whether the run serves a resolver's request (`RequestIntoGraph`).
        static var requests: Bool { get }
    }
    /// Each made step an `Instance`, the root's handed to the caller.
    enum SeparateInstances: RunMode { static var destination: Destination { .instances } }
    /// The made steps records of one block (`InstanceBlock`), made after the loop from their
    /// factories' pointers (`RunState.pointers`); shared singletons taken by split references.
    enum OneBlock: RunMode { static var destination: Destination { .block } }
    /// Swift objects (`makesObjects`): each made step's object, made by its `ObjectFactory`, the
    /// plan's completion calls run after the steps.
    enum SwiftObjects: RunMode { static var destination: Destination { .objects } }
    /// Instances into a graph's `alive` (`Graph.replay`), which then completes, publishes or aborts.
    enum IntoGraph: RunMode { static var destination: Destination { .graph } }
    /// `IntoGraph` for a plan with creation steps: it notes each one made in the graph holding its
    /// cell, and takes one a nested resolve published meanwhile (`takePublished`).
    enum CreatingIntoGraph: RunMode { static var destination: Destination { .graph }; static var creates: Bool { true } }
    /// The traced modes (`traced`): `SeparateInstances`, `IntoGraph`, `CreatingIntoGraph` telling the hook.
    enum TracedInstances: RunMode { static var destination: Destination { .instances }; static var traced: Bool { true } }
    enum TracedIntoGraph: RunMode { static var destination: Destination { .graph }; static var traced: Bool { true } }
    enum TracedCreatingIntoGraph: RunMode {
        static var destination: Destination { .graph }; static var creates: Bool { true }; static var traced: Bool { true }
    }
    /// `IntoGraph` up to a cut (`PlanProgress.cut`: `replayCut`): the made steps before it only, then what they made let go of.
    enum CutIntoGraph: RunMode { static var destination: Destination { .graph }; static var cuts: Bool { true } }
    /// `CutIntoGraph` of a creation plan whose cells the graph claimed (`CreatingIntoGraph`).
    enum CreatingCutIntoGraph: RunMode { static var destination: Destination { .graph }; static var creates: Bool { true }; static var cuts: Bool { true } }
    /// The traced cut modes (`replayCut` while the graph tells a trace hook): `CutIntoGraph`, `CreatingCutIntoGraph` telling
    /// the hook what the build does before it meets the key (the cache hits before the cut, `tellHits`; the destructions).
    enum TracedCutIntoGraph: RunMode {
        static var destination: Destination { .graph }; static var cuts: Bool { true }; static var traced: Bool { true }
    }
    enum TracedCreatingCutIntoGraph: RunMode {
        static var destination: Destination { .graph }; static var creates: Bool { true }; static var cuts: Bool { true }
        static var traced: Bool { true }
    }
    /// `IntoGraph` for a completion callback's request (`replayAsked`): the graph enters the steps, and keeps what a failed run made.
    enum RequestIntoGraph: RunMode { static var destination: Destination { .graph }; static var requests: Bool { true } }
    /// `RequestIntoGraph` up to a cut (`replayAskedCut`): what the steps before it made kept, as a failed request's.
    enum RequestCutIntoGraph: RunMode {
        static var destination: Destination { .graph }; static var requests: Bool { true }; static var cuts: Bool { true }
    }
    /// `RequestCutIntoGraph` of a plan with creation steps (`CreatingRequestIntoGraph`), the cells the build asked for before the cut claimed.
    enum CreatingRequestCutIntoGraph: RunMode {
        static var destination: Destination { .graph }; static var creates: Bool { true }; static var requests: Bool { true }
        static var cuts: Bool { true }
    }
    /// `RequestIntoGraph` of a plan with creation steps (`CreatingIntoGraph`'s notes and takes; `Graph.claimAsked`).
    enum CreatingRequestIntoGraph: RunMode {
        static var destination: Destination { .graph }; static var creates: Bool { true }; static var requests: Bool { true }
    }
    /// The traced request modes (`replayAskedTraced`): `RequestIntoGraph`, `CreatingRequestIntoGraph` telling the hook.
    enum TracedRequestIntoGraph: RunMode {
        static var destination: Destination { .graph }; static var requests: Bool { true }; static var traced: Bool { true }
    }
    enum TracedCreatingRequestIntoGraph: RunMode {
        static var destination: Destination { .graph }; static var creates: Bool { true }; static var requests: Bool { true }
        static var traced: Bool { true }
    }
    /// `RequestCutIntoGraph` telling the hook: the cache hits before the cut only (`tellHits`), the steps the build asked for first.
    enum TracedRequestCutIntoGraph: RunMode {
        static var destination: Destination { .graph }; static var requests: Bool { true }; static var cuts: Bool { true }
        static var traced: Bool { true }
    }
    /// `CreatingRequestCutIntoGraph` telling the hook (as `TracedRequestCutIntoGraph`).
    enum TracedCreatingRequestCutIntoGraph: RunMode {
        static var destination: Destination { .graph }; static var creates: Bool { true }; static var requests: Bool { true }
        static var cuts: Bool { true }; static var traced: Bool { true }
    }

    /// What the step loop keeps, on the stack: a word per step (`made`: what the run took or
    /// made and has not handed on), a block's factories' pointers per step, a word per slot of the
    /// factory being called, and the steps held by split references (`SplitEdge`: a block's).
    struct RunState {
        /// (A graph's words: read again after a resolver's build appended to it, `Graph.replayedWords`.)
        var made: UnsafeMutablePointer<UInt>
        var pointers: UnsafeMutablePointer<UInt>
        let words: UnsafeMutablePointer<UInt64>
        var split: UInt64 = 0
        /// A traced mode's hook (`RunMode.traced`); nil otherwise.
        var tracer: Borrowed<Tracer>? = nil
        /// A traced request mode's graph (`replayAskedTraced`): the keys it has tell no hit (`tellHits`, `Graph.requestSkips`);
        /// a traced replay's, with RESOLVER slots: what their gets built or took (`Graph.replaySkips`, a shared key the graph
        /// has) tells no hit, as the build finds it in the graph (which of the two: `RunMode.requests`); nil otherwise.
        /// (One field for both: the run's state is initialized on every resolve.)
        var asking: Borrowed<Graph>? = nil
        var instances: ReferenceWords<Instance> { @inline(__always) get { .init(base: made) } }
        /// `made` in object mode.
        var objects: ReferenceWords<AnyObject> { @inline(__always) get { .init(base: made) } }
    }

    /// `body` with a run's state for mode `M` (a graph's run has its words: `replay(into:)`), on
    /// the stack: buffers of at most 1 KiB each (larger ones `withUnsafeTemporaryAllocation` takes
    /// from the heap): the steps' words (and a block's pointers), the slots' words. Object mode
    /// reads its slots' words raw (`ObjectArguments`), so they follow the steps' in one buffer.
    /// `large`: a plan that `isLarge`'s (`runLarge`, `runLargeObjects`: a constant false inlined elsewhere).
    @inline(__always)
    func withRunState<M: RunMode, R>(_: M.Type, large: Bool = false, _ body: (inout RunState) -> R) -> R {
        if large { return withLargeRunState(body) }
        if M.destination == .objects {
            return withUnsafeTemporaryAllocation(of: UInt.self, capacity: Plan.maxSteps + Plan.maxSlots) { buffer in
                let made = buffer.baseAddress!
                // Never read as typed `UInt64`s: object mode's arguments are raw words.
                var run = RunState(made: made, pointers: made,
                                   words: UnsafeMutableRawPointer(made + Plan.maxSteps).assumingMemoryBound(to: UInt64.self))
                return body(&run)
            }
        }
        return withUnsafeTemporaryAllocation(of: UInt.self, capacity: (M.destination == .block ? 2 : 1) * Plan.maxSteps) { steps in
            withUnsafeTemporaryAllocation(of: UInt64.self, capacity: Plan.maxSlots) { words in
                var run = RunState(made: steps.baseAddress!, pointers: steps.baseAddress! + (M.destination == .block ? Plan.maxSteps : 0),
                                   words: words.baseAddress!)
                return body(&run)
            }
        }
    }

    /// `withRunState` of a plan that `isLarge` (never a block): a word per step, then the slots'
    /// words of its largest factory, in one buffer sized for it (on the heap past 1 KiB).
    @inline(__always)
    func withLargeRunState<R>(_ body: (inout RunState) -> R) -> R {
        withUnsafeTemporaryAllocation(of: UInt.self, capacity: steps.count + max(mostSlots, 1)) { buffer in
            let made = buffer.baseAddress!
            var run = RunState(made: made, pointers: made,
                               words: UnsafeMutableRawPointer(made + steps.count).assumingMemoryBound(to: UInt64.self))
            return body(&run)
        }
    }

    /// A replay into a graph (`replay(into:)`): the graph, whose awaiting cells a lazy slot joins, and the
    /// resolving container, whose cells and handles the slots made per resolve are (`makeWithSlots`).
    typealias GraphRun = (graph: Borrowed<Graph>, lookup: Borrowed<Container>)
}

extension Plan.RunMode {
    static var creates: Bool { false }
    static var traced: Bool { false }
    static var cuts: Bool { false }
    static var requests: Bool { false }
}
