import Synchronization

/// A resolve replayed from a recorded order. For a root whose whole graph is
/// plain (graph- and transient-scoped registrations, with any slot kind,
/// runtime-argument slots at the root only; singleton- and weak-scoped
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
/// after any build. So does a plan with WEAK, LAZY, WEAK_LAZY, ALL, FACTORY or RESOLVER slots
/// (`slots`): their words are made per resolve, a lazy cell joins the graph's cells
/// waiting for an instance, a resolver's gets build into the graph while the build's frames
/// down to its step are open (`Step.opensFrames`) (`needsGraph`). Else the replay needs no graph at all (`run`).
///
/// A plan is valid while the configuration of its container and the
/// container's parents is unchanged (`Container.configuration`), and compiled
/// against a state of the caches: the warm plan takes every singleton and weak
/// dependency from its cache; a creation plan (`recordCreating`) makes those no
/// cache held as steps of its own, their cells claimed first (`Graph.claimCreations`).
/// Anything it cannot replay exactly as `Graph` would (caches in another state,
/// a cycle, a shape the recorder declines) makes it decline, before any factory
/// ran, and the resolve picks the plan for the state found or the graph resolves
/// the ordinary way.
///
/// This file holds the plan's format and its recorder; its runs are `Executor/PlanRun.swift`.

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
        /// Some of its slots are made per resolve (`Plan.slot(n)`: `Plan.slots`): its run makes their words
        /// (`makeWithSlots`), in a plan that `needsGraph`.
        var hasSlots = false
        /// Lazy cells wait for its instance (`SlotInput.awaits`): bound once it is made, as the graph binds them.
        var bindsCells = false
        /// A singleton or weak registration no cache held when recorded (`recordCreating`): made here,
        /// its cell claimed before any factory (`creations`), published by the graph it replays into.
        var creates = false
        /// A graph- or transient-scoped step first asked for under a container step (`Recorder.markUnderContainer`):
        /// a run that finds the container steps cached makes none of these, as a build that takes them cached does not.
        var underContainer = false
        /// A shared or value step first asked for under a container step: a build finding that one
        /// cached asks for it only where a step outside takes it too (a traced run tells no hit for
        /// it then, `Plan.tellHits`, and tells them in the build's walk when one outside takes it, `Plan.tracesSkips`).
        var askedUnderContainer = false
        /// Has a RESOLVER slot: its run opens the build's frames down to it while the factory runs
        /// (`Graph.openReplayedFrames`), so what the resolver builds meets the graph as the build's would.
        var opensFrames = false
        /// A step under a singleton registered further up (`Recorder.Frame.foreign`, or that singleton): the
        /// container its frame looks up from in the build (`Graph.push`), an ancestor of the plan's owner
        /// (which keeps it); its completion callbacks run with it (`Graph.enterReplayed`). Nil: the run's lookup.
        var lookup: Borrowed<Container>?
        /// A container step after a RESOLVER slot's owner that is not one of the owner's askers (`Recorder.finishSlots`):
        /// the build claims it where a get of the owner's factory reaches it, else where its walk asks for it, so
        /// the run claims it there (`Plan.claimLate`), not before any factory (`claimContainerSteps`).
        var claimsLate = false
        /// Under a stacked level's singleton (a container a child's component stacks, `Recorder.isStacked`): a slot
        /// of that level in the component, whose registration's container is each run's level (`lookup(of:_:)`),
        /// `lookup` nil. -1: `lookup`.
        var lookupSlot = -1
    }

    /// A creation step (`Step.creates`), in the order its cell is claimed (`Graph.claimCreations`:
    /// by key, as `Graph.claimInOrder` claims), with its scope.
    struct Creation {
        let step: Int
        let scope: Scope
    }

    /// Where a run looks again whether creation step `step` (the `made`th made step) was published
    /// meanwhile, by a resolve nested in one of the plan's factories under the plan's claim
    /// (`SharedCache.Claim.createUnderOuter`): at the `at`th made step, the first of its own
    /// dependencies' steps when no later step takes one of those (the run then skips them all, as a
    /// build that finds it cached makes none), else at the step itself. In run order, outer ones first.
    /// A container step the run claims is checked alike (`container`): one rule, `Plan.takePublished`.
    struct CreationCheck {
        let at: Int
        let made: Int
        let step: Int
        let scope: Scope
        /// `at` is where the build's walk reaches the step (no step after it takes one of its own
        /// dependencies, or it has none of its own): a dead weak instance the binding still holds is
        /// revived there (`Graph.reviveCreation`), its own dependencies spared as a build reviving it spares them.
        var reachedThere = true
        /// An early check (`PublishedVariant`): at the first of the step's own dependencies' steps, though a later
        /// step takes one of those; found published there, the run goes on in `publishedVariants[variant]`. -1: none.
        var variant = -1
        /// A container step's check (its index in `containerSteps`; -1: a creation step's): what a nested resolve
        /// published under the run's claim is in the resolving container's cache, taken as the build takes it where it asks.
        var container = -1
    }

    /// What a run does when creation step `step`, whose own dependencies' steps a later step takes too, is found
    /// published (by a resolve nested in an earlier factory) where the build's walk reaches it, before those: the
    /// build takes it there and makes, of its dependencies, only those a later step asks for, where that one asks
    /// (`Recorder`'s walk again, the step a leaf: `Plan.walk`). `order`: the made steps in that run's order (the
    /// same before the check; the ones it does not make, `skip`, last); `checks`: the creation checks after it there.
    struct PublishedVariant {
        let step: Int
        let skip: UInt
        let order: UnsafeBufferPointer<Int>
        let checks: UnsafeBufferPointer<CreationCheck>
        /// Per step, the step that asked for it first in that run (`Walk.parent`; -1: the root, or one it does not make):
        /// the frames open when a step's RESOLVER slot's factory runs there (`openFrames`), what only a taken one asked for (`takeBuilt`).
        var parent = UnsafeBufferPointer<Int>(start: nil, count: 0)
    }

    /// A slot a run makes per resolve (WEAK, LAZY, WEAK_LAZY, ALL, FACTORY, RESOLVER), input `Plan.slot(n)`
    /// of `slots[n]`: what `Graph.constructSpecial` makes of it, from what the recorder knew of the graph.
    struct SlotInput {
        let kind: Param.Kind
        /// The key of a LAZY, WEAK_LAZY or FACTORY slot.
        var key: Key?
        /// WEAK: the step held weakly. LAZY: the step whose instance the cell is bound to as it is
        /// made (in the graph when the slot was filled, or made before its owner); else -1.
        var step = -1
        /// LAZY: the registration whose instance the cell waits for in the graph (`Graph.awaitCell`):
        /// made at or after its owner (that step `bindsCells`), by a completion callback, or never.
        var awaits: Borrowed<Registration>?
        /// ALL: the items' steps, in the list's order: strong edges in the slot's place.
        var items: [Int] = []
        /// While recording: the step of the slot's owner, and for a LAZY slot filled before its
        /// key's instance was in the graph, that registration and the steps there were then.
        var owner = -1
        var later: Borrowed<Registration>?
        var after = 0
        /// LAZY in a child's plan: `awaits`' slot in the component when it is one of the child's own
        /// registrations (-1: not), whose registration each run awaits in the resolving child's place.
        var awaitsLocal = -1
        /// A LAZY, WEAK_LAZY or FACTORY slot of a step under a singleton registered further up (`Step.lookup`):
        /// the container its cell resolves from, as the build's frame's (`Graph.push`). Nil: the run's lookup.
        var lookup: Borrowed<Container>?
        /// A stacked level's, as `Step.lookupSlot` (`slotLookup(_:_:)`). -1: `lookup`.
        var lookupSlot = -1
    }

    /// One slot of a child's per-request component (its own registrations, in the order their
    /// keys were first registered there: `RegistrationTable.componentSlots`), as a plan recorded
    /// through a child with that component needs it (`fits`): its key, scope, params, and whether
    /// it has completion callbacks; or that its key was cleared (`cleared`).
    struct ComponentSlot {
        let key: Key
        let scope: Scope
        let paramInfo: UInt16
        let completes: Bool
        /// Its params: `componentParams[firstParam...]`, as many as `paramInfo` says.
        let firstParam: Int
        /// The first slot of a container's registrations: a component stacks those of every container
        /// between the resolving child and the owner that registered, nearest first (`componentLevels`).
        var startsLevel = false
        /// The slot's key was registered there and cleared since (a decorated key registered again: its
        /// undecorated registrations leave the table, `Container.takeDecorations`; the slot stays): no
        /// registration, the key looked up further out, as a key never registered there. No step is its.
        var cleared = false
        /// On a level's first slot: whether the plan depends on that container's strictness (the walk checked a
        /// creation step of its singletons for captives, `Recorder.refuses`), and what it was (`Level.strict`):
        /// `fits` then compares it, so a plan recorded through a level of the other strictness serves no run.
        var keysStrict = false
        var strict = false
    }

    /// What an object resolve (`runObjects`: the step loop in object mode) reads, dense: its made steps in
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

    /// A run's buffers (a word per step, a word per slot of the factory called) hold this many
    /// steps and slots: constants, so they are plain stack memory. A plan past either `isLarge`:
    /// its run's buffers are allocated for its sizes (`withLargeRunState`), and it makes no block.
    static var maxSteps: Int { 64 }
    static var maxSlots: Int { 32 }
    /// An input that is the registration's context, not a step's instance.
    static let context = -1
    /// An input that is a resolver slot in descriptions (`PlanDescription`), whose runner makes
    /// every instance itself; the core's plans make a resolver per resolve (`SlotInput`, kind `.resolver`).
    static let resolver = -2
    /// The input of the root's `n`th runtime argument (from 0): the resolve's
    /// arguments, checked against the root's params before the plan runs.
    static func argument(_ n: Int) -> Int { -3 - n }
    /// `n` of an input `argument(n)`.
    @inline(__always) static func argumentNumber(_ input: Int) -> Int { -3 - input }
    /// Whether an input is a step's instance (an edge), not a context, resolver, argument or slot.
    @inline(__always) static func isStep(_ input: Int) -> Bool { input >= 0 }
    /// The input of a slot made per resolve, `slots[n]` (below every argument: a factory has at most `maxSlots`).
    static func slot(_ n: Int) -> Int { -(1 << 40) - n }
    @inline(__always) static func isSlot(_ input: Int) -> Bool { input <= -(1 << 40) }
    @inline(__always) static func slotNumber(_ input: Int) -> Int { -(1 << 40) - input }

    /// Every thread reads the plan per resolve: its fields and buffers (`arena`) on lines no
    /// other allocation shares (`LinePad`, `LineArena`).
    private let leadingPad = LinePad()
    /// Post-order, as `Graph` builds: the root is last. Immutable plain memory
    /// (like `Registration.params`), so a replay reads it without reference counting.
    let steps: UnsafeBufferPointer<Step>
    /// Per slot of every step: the step whose instance it receives, `context` or `argument(n)`.
    let inputs: UnsafeBufferPointer<Int>
    /// The shared steps, in step order, with the scope each was recorded under
    /// (a scope change changes the configuration, which retires the plan; a
    /// child's local step takes a registration of that scope, `fits`).
    let sharedSteps: UnsafeBufferPointer<SharedStep>
    var hasShared: Bool { !sharedSteps.isEmpty }
    /// The made steps, in creation order.
    let madeSteps: UnsafeBufferPointer<Int>
    /// The container-scoped steps (`Step.isContainer`), in creation order: each taken from the
    /// resolving container's cache, or made by the run and published there when the run succeeds.
    let containerSteps: UnsafeBufferPointer<Int>
    var hasContainer: Bool { !containerSteps.isEmpty }
    /// Whether a run reads the resolving container: container or value steps (`RequestRun`).
    let readsRequest: Bool
    /// Whether some made steps are under container steps (`Step.underContainer`): a run finding those cached skips them.
    let skipsUnderContainer: Bool
    /// The bit of each step under container steps (`Step.underContainer`, and creation steps first asked for under
    /// one; each before its container step): what a run finding every container step cached skips. Its first 64
    /// steps: a plan that `wideMasks` has them all in `underContainerSteps`.
    let underContainerMask: UInt
    /// `underContainerMask` of a plan that `wideMasks` (empty otherwise).
    let underContainerSteps: StepBits
    /// A container step past the 64th step: a run's masks are `StepBits` (`OwnWideRequestSteps`), else one word
    /// (`WordMask`: every step a container step asked for is before it). A plan that `needsGraph` (creation steps,
    /// slots, completion callbacks) replays into a graph with `StepBits` too (`replayWideRequest`), and so does a
    /// resolver's request or a run that found a cell held; the graph's masks of such a run are `StepBits` of any
    /// size (`Graph.claimedSkip`, `lateContainerClaims`, `unclaimedUnder`; `tooLarge` before branch graphmasks).
    let wideMasks: Bool
    /// The bit of each container step claimed late (`Step.claimsLate`; a plan with one `needsGraph`).
    let lateClaims: StepBits

    struct SharedStep {
        let step: Int
        let scope: Scope
        /// A declared value key's step: the value the resolving container provides
        /// (`Container.providedValue(of:)`), not a cache of the registration's.
        let isValue: Bool
        /// A singleton a block takes by a split reference (`takeShared` in block mode); a container step's
        /// instance keeps it as a split edge too (`makeInstance`): a request child's
        /// CONTAINER-scoped instance over the root's singletons writes no shared count.
        let splits: Bool
        /// A container-scoped leaf of a `cachedVariant`: the resolving container's cached instance.
        var inResolving = false
    }

    /// What a block run copies into every block it makes (`BlockTemplate`, `makeBlock`).
    let template: BlockTemplate

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

    }
    /// Whether the replay needs a graph to run completion callbacks afterwards.
    let completes: Bool
    /// A plan of a graph the build fails in, before its root: its run makes the steps the build makes
    /// before it meets the failure, lets go of them as the build's abort does, and reports the build's
    /// error (a dependency on a key taking runtime arguments: `Recorder.argumentDependency`; a
    /// constructor cycle, `Recorder.cycle`; a dependency not registered, `Recorder.missing`). Each
    /// of those steps was asked for by a frame still open then (`failing`).
    let failure: TetherError?
    let fails: Bool
    /// The slots made per resolve (`slot(n)`): their cells join the graph's (`Graph.awaitCell`).
    let slots: [SlotInput]
    /// Whether a run replays into the thread's graph (`replay(into:)`): it completes, makes slots, or
    /// creates shared instances (the graph publishes them or rolls them back).
    let needsGraph: Bool
    /// The creation steps, in claim order: a plan compiled against the caches' state (`recordCreating`),
    /// which holds while its shared leaves are cached and these are not. It replays into a graph,
    /// which publishes what they made or rolls it back (`Graph.publish`, `Graph.abort`).
    let creations: UnsafeBufferPointer<Creation>
    var createsShared: Bool { !creations.isEmpty }
    /// Some creation steps are a child's own registrations (`Step.local`): each run claims, reads and publishes
    /// the resolving child's (`registration(of:_:)`), in the order of those (`creationsInClaimOrder`).
    let hasLocalCreations: Bool
    /// Where a run looks whether a step it claimed (a creation or container step) was published meanwhile, in run order.
    let creationChecks: UnsafeBufferPointer<CreationCheck>
    /// The runs a creation step found published early switches to (`CreationCheck.variant`).
    let publishedVariants: UnsafeBufferPointer<PublishedVariant>
    /// The size of the block `run` makes (`InstanceBlock`), 0 when it makes one
    /// plain instance (a graph of one, or one that completes: callbacks may ask for any instance).
    let blockWords: Int
    /// `Container.configuration` of the lookup container when recorded.
    let configuration: UInt
    /// Whether `runObjects` can resolve the graph: every made node a plain
    /// object (`InstanceSpec.plainObject`), every shared one an object, every
    /// completion callback an `ObjectCompletion` whose targets are weak ones in this graph.
    let makesObjects: Bool
    let objectSteps: UnsafeBufferPointer<ObjectStep>
    let objectInputs: UnsafeBufferPointer<Int>
    let completionCalls: UnsafeBufferPointer<CompletionCall>
    /// A child's plan: the per-request component it was recorded through, slot by slot
    /// (`Step.local` names a slot), and the slots' params.
    let component: UnsafeBufferPointer<ComponentSlot>
    let componentParams: UnsafeBufferPointer<Param>
    /// With `failure`: where the walk met it (`Failing`), for the paths of the steps before it.
    let failing: Failing?
    /// More than `maxSteps` steps, or a made step with more than `maxSlots` slots: a run's buffers
    /// are allocated for it (`withLargeRunState`; the common sizes keep theirs on the stack).
    let isLarge: Bool
    /// The most slots of one made step's factory (a large run's words per factory call).
    let mostSlots: Int
    /// A plan whose container steps' inputs include a made step that a step outside them takes too
    /// (`Recorder.marksUnderContainer` off): what runs instead when its run finds every container step
    /// cached (`runRequest`), recorded with those as leaves taken from the resolving container's cache
    /// (`Recorder.containerLeaves`): the order the build makes the rest in then (`recordWithCachedVariant`).
    let cachedVariant: Plan?
    /// A creation plan of such a graph (`containerInput`), recorded with no step marked `underContainer`: a run
    /// finding a container step cached declines (`Graph.claimWithContainerSteps`), and the graph replays its
    /// `cachedVariant` (creating too, the container steps leaves), if any, instead.
    let needsContainersUncached: Bool
    /// The plans for runs that find some container steps cached and others not where skipping what the cached
    /// ones asked for cannot give the build's order (`skipUnderCached` declines: a step still made takes one of
    /// those; a `cachedVariant`): recorded on first need per set of cached steps (`mixedVariant`); a plan replayed
    /// into the graph switches to it there (`Graph.switchesToVariant`). Nil: a plan without container steps,
    /// a child's (its component's registrations), or a failing one.
    let mixedVariants: MixedVariants?

    /// `mixedVariants`' store: per set of container steps found cached (a bit each), its plan (nil: none covers it).
    final class MixedVariants: @unchecked Sendable {
        let plans = Lock<[(cached: UInt, plan: Plan?)]>([])
    }

    /// The most `mixedVariants` a plan keeps (sets of container steps found cached; past them, each run's recorded
    /// for it, `keptByNone`).
    static var maxMixedVariants: Int { 8 }
    /// A `mixedVariant` recorded for one run and kept by no plan (past `maxMixedVariants`, or a creating one whose
    /// walk found the caches changed since its plan's): whoever runs it holds it till the run ends (`Plan.runVariant`;
    /// a replay into the graph, `ThreadState.oneShotPlans`, as `Registration.oneShotPlan`). Set before it is returned.
    private(set) var keptByNone = false

    /// What a failing plan knows of where the walk met its error: the frames open then (outermost
    /// first: the root, down to the one asking), and for each step whose asker was one of them
    /// (`Step.parent` -1) how many of those frames were open above it, for the paths the build's
    /// frames would give (`constructing(at:)`, a factory failure's message).
    struct Failing {
        let error: TetherError
        let open: [Borrowed<Registration>]
        /// Per step: the number of `open` frames above it (its asker the last of them); 0 for a step with a parent.
        let depth: [Int]
        /// Per `open` frame, a child's plan: its slot in the component when it is one of the child's own
        /// registrations (-1: not), whose registration each run has in the resolving child's place.
        var openLocals: [Int] = []
        /// Per `open` frame: the steps before it were made before the build asked for it (its place in the
        /// build's pre-order, `Plan.meeting`: a nested resolve meeting it runs up to there).
        var openAt: [Int] = []
        /// The `open` frames of container-scoped registrations, outermost first: a build finding one cached in the
        /// resolving container takes it there and never meets the error (the outermost cached one: it asks for
        /// nothing under it). Each run checks their caches before any factory (`Plan.pickedForCaches`).
        var containers: [Int] = []
        /// Per `containers` entry (keyed by its number), recorded on its first pick: the plan of the build that takes that frame's
        /// key cached (walked again with it a leaf taken from its cache besides `leaves`, `Recorder.leafContainers`,
        /// and the rest walked on past it), which a run finding it cached (and none further out) runs instead
        /// (`Plan.failingVariant`). Nil: no container-scoped frame was open.
        var variants: MixedVariants?
        /// What a variant's walk records: from `root`, creating or not (`Plan.record(creating:)`), with these leaves.
        var root: Borrowed<Registration>?
        var creating = false
        var leaves = Leaves()
        /// Per `containers` entry: the container whose cache the build reads for that frame when not the resolving
        /// one (`Step.lookup`: a frame under a singleton from further up, `Recorder.Frame.foreign`), or a stacked
        /// level's slot (`Step.lookupSlot`, -1: `lookup`); nil and -1: the resolving container's.
        var containerLookups: [(lookup: Borrowed<Container>?, slot: Int)] = []

        func opened(by step: Int) -> [Borrowed<Registration>] { Array(open[..<depth[step]]) }
        /// Whether a frame of a shared registration was open at the error: a creation walk's (one cached is a
        /// leaf), so the build meets the error only while that registration is not cached (`matchesCaches`).
        /// (Stored when recorded: a local frame's registration in `open` is the recording child's, which may be gone;
        /// each run's at that slot has its scope, `fits`.)
        var opensShared = false
        /// `opened(by:)` of a run: a local frame's registration the resolving child's (`locals`, written by `fits`).
        func opened(by step: Int, _ locals: UnsafeMutablePointer<Borrowed<Registration>>) -> [Borrowed<Registration>] {
            (0..<depth[step]).map { openLocals.isEmpty || openLocals[$0] < 0 ? open[$0] : locals[openLocals[$0]] }
        }
        /// Every `open` frame's registration in a run (as `opened(by:_:)`).
        func allOpen(_ locals: UnsafeMutablePointer<Borrowed<Registration>>) -> [Borrowed<Registration>] {
            open.indices.map { openLocals.isEmpty || openLocals[$0] < 0 ? open[$0] : locals[openLocals[$0]] }
        }
    }
    /// Whether the plan is a child's (recorded through its component): its local steps, if
    /// any, take the child's registrations by slot.
    var hasLocals: Bool { !component.isEmpty }

    /// A plan that always declines: the graph of its root is not plain (recorded
    /// so, until the configuration changes, resolves do not try again), and why.
    static func declined(_ configuration: UInt, _ reason: Decline) -> Plan {
        let plan = Plan(steps: [], inputs: [], configuration: configuration, objects: nil)
        plan.decline = reason
        return plan
    }
    /// Why a declined plan declines (`PlanStats`); set before the plan is published.
    private(set) var decline = Decline.other

    /// The specs of its steps (`Step.spec` refers to them unretained).
    private let specsHeld: [InstanceSpec]

    /// Where the buffers above live: lines of their own (every thread reads them per resolve;
    /// the thread that planned allocates next to them per request).
    private let arena: LineArena
    private let trailingPad = LinePad()

    deinit {
        arena.deallocate()
    }

    var declines: Bool { steps.isEmpty && !fails }
    /// Neither declines nor switches to a variant (`pickedForCaches`): the plan a pick returns as found (one load
    /// on the pick's fast path, `Registration.plan(from:_:)`).
    let servesAsPicked: Bool

    /// The plan a run of this one is for the resolving container's caches now: a failing plan whose error the
    /// walk met under container-scoped frames (`Failing.containers`) is the build's only while none of those is
    /// cached there; the outermost cached one's `Failing.variants` plan (itself picked so) else (`variant(forCached:)`
    /// over `cachedNow`). `locals`: a child's plan's, written by `fits` (a local frame's registration).
    func pickedForCaches(_ container: Container, _ locals: UnsafeMutablePointer<Borrowed<Registration>>) -> Borrowed<Plan> {
        guard failing?.variants != nil, case let cached = cachedNow(in: container, locals),
              let variant = variant(forCached: cached.bits, count: cached.count, from: container, locals),
              variant !== self else { return .init(self) }
        return variant.pickedForCaches(container, locals)
    }

    /// Which plan serves a run of this one that found `cached` (a bit each, `cachedNow`: read from the caches, or a
    /// request's claims, `runRequest`) cached in the resolving container, the one rule for every variant. Read before
    /// any factory runs, as the build reads the cache where its walk asks: an instance published there stays until
    /// the container closes.
    /// - None cached: this plan.
    /// - A failing plan's `Failing.containers` frames (bit n: the n-th, outermost first): the outermost cached one's
    ///   `Failing.variants` plan, recorded on its first pick (`failingVariant`, walked from `container` for a child's
    ///   plan; the build takes that frame's key cached and never meets the error; picked again for its own frames,
    ///   `pickedForCaches`).
    /// - Container steps (bit i: step i), every one: the `cachedVariant` (nil: none, this plan skips under them; for a
    ///   run up to a cut whose met step's asker is among them, `cut`, the `mixedVariant` of them all: the plan with them
    ///   leaves, which does not meet that step there, `Graph.replayMeeting`).
    /// - Some, not the others: the `mixedVariant` for that set (nil: none fits), past `maxMixedVariants` sets one
    ///   recorded for the run and kept by no plan (`keptByNone`: the caller holds it till the run ends).
    /// `count`: how many are cached, where `cached` cannot say (a container step past the 64th step: a wide plan,
    /// which keeps no mixed variants, `wideMasks`).
    func variant(forCached cached: UInt, count: Int? = nil, cut: Bool = false, from container: Container,
                 _ locals: UnsafeMutablePointer<Borrowed<Registration>>) -> Plan? {
        let count = count ?? cached.nonzeroBitCount
        if count == 0 { return self }
        if let failing { return failing.variants == nil ? self : failingVariant(cached.trailingZeroBitCount, container, locals).object }
        if count == containerSteps.count { return cachedVariant ?? (cut ? mixedVariant(cached) : nil) }
        return mixedVariant(cached)
    }

    /// The set `variant(forCached:)` picks by, read now from the caches (without claiming) where the build would
    /// look: a failing plan's `Failing.containers` frames (only the outermost cached one: it asks for nothing under
    /// it), each where the build's frame reads it (`Failing.containerLookups`: the resolving container, a singleton's
    /// from further up, a stacked level), else its container steps, each where it looks up (`lookup(of:_:)`).
    /// `locals`: a child's plan's, written by `fits` (a local frame's or step's registration).
    func cachedNow(in resolving: Container, _ locals: UnsafeMutablePointer<Borrowed<Registration>>) -> (bits: UInt, count: Int) {
        if let failing {
            for (n, frame) in failing.containers.enumerated() {
                let local = failing.openLocals.isEmpty ? -1 : failing.openLocals[frame]
                let (lookup, slot) = failing.containerLookups[n]
                let cache = slot >= 0 ? Self.level(of: slot, locals) : lookup ?? Borrowed(resolving)
                if Self.isCached(local < 0 ? failing.open[frame] : locals[local], in: cache) { return (1 << UInt(n), 1) }
            }
            return (0, 0)
        }
        var cached: (bits: UInt, count: Int) = (0, 0)
        for i in containerSteps where Self.isCached(registration(of: i, locals), in: lookup(of: i, locals) ?? Borrowed(resolving)) {
            if i < UInt.bitWidth { cached.bits |= 1 << UInt(i) }  // (past the 64th step: counted only)
            cached.count += 1
        }
        return cached
    }

    /// Whether `registration`'s instance is cached in `container` now (read, not claimed: `SharedCache.cached`).
    private static func isCached(_ registration: Borrowed<Registration>, in container: Borrowed<Container>) -> Bool {
        guard let hit = registration.borrow({ r in container.borrow { SharedCache.cached(r, r.specReference.borrow { $0.scope }, in: $0) } }) else {
            return false
        }
        hit.release()
        return true
    }

    /// Container-scoped registrations a walk takes as leaves from their caches (`Recorder.leafContainers`), not walked
    /// into: a failing plan's variant's. A child's own registration by its slot in the component (`Recorder.leafSlots`):
    /// the same in every child the plan serves (`fits`), whose registrations there are each run's.
    struct Leaves: Sendable {
        var ids: Set<ObjectIdentifier> = []
        var slots: Set<Int> = []
    }

    /// `failing` with what records its `variants` on first need (`variant`): from `root`, `creating` or not, `leaves`.
    private static func withVariants(_ failing: Failing, _ root: Registration, creating: Bool, leaves: Leaves) -> Failing {
        guard !failing.containers.isEmpty else { return failing }
        var failing = failing
        (failing.variants, failing.root, failing.creating, failing.leaves) = (MixedVariants(), Borrowed(root), creating, leaves)
        return failing
    }

    /// The variant of container frame `failing.containers[n]` (`Failing.variants`), recorded now if no pick needed it
    /// before (as `mixedVariant`, per state under the store's lock): walked from `container` for a child's plan (the
    /// resolving child, which `fits` it). A declined plan when its walk declines (the build serves that state), or
    /// when the configuration (or a child's component) changed since this plan was recorded (not kept: a race).
    private func failingVariant(_ n: Int, _ container: Container, _ locals: UnsafeMutablePointer<Borrowed<Registration>>) -> Borrowed<Plan> {
        let failing = failing.unsafelyUnwrapped
        let frame = failing.containers[n]
        let local = failing.openLocals.isEmpty ? -1 : failing.openLocals[frame]
        var leaves = failing.leaves
        if local < 0 { leaves.ids.insert(ObjectIdentifier(failing.open[frame].object)) } else { leaves.slots.insert(local) }
        let recorded = failing.variants.unsafelyUnwrapped.plans.withLock { plans -> Plan? in
            if let known = plans.first(where: { $0.cached == UInt(n) }) { return known.plan }
            let root = failing.root.unsafelyUnwrapped.object
            guard root.container.configuration == configuration else { return nil }
            let plan: Plan
            do throws(Decline) {
                plan = try Self.recordVariant(root, configuration: configuration, creating: failing.creating,
                                              child: hasLocals ? container : nil, leaves: leaves)
            } catch {
                plan = Self.declined(configuration, error)
            }
            guard plan.declines || plan.hasSameComponent(as: self) else { return nil }
            plans.append((UInt(n), plan))
            return plan
        }
        return .init(recorded ?? Self.unrecordedVariant)
    }

    /// What `failingVariant` returns when the configuration changed meanwhile: the build serves that run.
    private static let unrecordedVariant = declined(0, .failureUnderContainer)

    /// A variant's walk (`failingVariant`): as the failing plan's, `leaves` taken from their caches. A child's creating walk
    /// that creates nothing: its warm plan.
    private static func recordVariant(_ root: Registration, configuration: UInt, creating: Bool, child: Container?,
                                      leaves: Leaves) throws(Decline) -> Plan {
        guard let child else { return try record(root, configuration: configuration, creating: creating, leaves: leaves) }
        do throws(Decline) {
            return try record(root, configuration: configuration, child: child, creating: creating, leaves: leaves)
        } catch {
            guard creating && error == .notCached else { throw error }
            return try record(root, configuration: configuration, child: child, leaves: leaves)
        }
    }

    /// Whether `other`'s component has this plan's slots (a variant recorded through the resolving child: each of its
    /// local steps names a slot `fits` wrote for this plan). None for an owner's plans.
    private func hasSameComponent(as other: Plan) -> Bool {
        component.count == other.component.count && zip(component, other.component).allSatisfy { a, b in
            a.key == b.key && a.scope == b.scope && a.paramInfo == b.paramInfo && a.completes == b.completes && a.cleared == b.cleared
                && a.startsLevel == b.startsLevel
        }
    }

    /// The reason of a variant recorded declined (`failingVariant`): why a resolve this failing plan picked for went to the build.
    var declinedVariant: Decline? {
        failing?.variants?.plans.withLock { plans in plans.first { $0.plan?.declines == true }?.plan?.decline }
    }

    var stepCount: Int { steps.count }


    /// `objects`: nil unless the plan makes objects.
    private init(steps: [Step], inputs: [Int], configuration: UInt, objects: Objects?,
                 component: [ComponentSlot] = [], componentParams: [Param] = [], slots: [SlotInput] = [], failing: Failing? = nil,
                 cachedVariant: Plan? = nil, needsContainersUncached: Bool = false) {
        self.cachedVariant = cachedVariant
        self.needsContainersUncached = needsContainersUncached
        self.failure = failing?.error
        fails = failing != nil
        servesAsPicked = !(steps.isEmpty && failing == nil) && (failing?.variants == nil)
        self.failing = failing
        var steps = steps
        var arena = LineArena()
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
        self.slots = slots
        // (A failing one with a singleton or weak frame open at its error: its first claim is the build's, `Graph.claimPastFailure`.)
        needsGraph = completes || !slots.isEmpty || steps.contains { $0.creates }
            || failing?.open.contains { $0.borrow { $0.spec.scope.isShared && !$0.spec.scope.isPerResolvingContainer } } == true
        let made = steps.count { !$0.isShared && !$0.isContainer }
        // One made step over a singleton is a block too: its edges to singletons are then split references.
        let overSingleton = steps.contains { step in
            step.isShared && step.registration.borrow { $0.specReference.borrow { $0.scope.isKeptStronglyByRegistration } }
        }
        let creating = steps.indices.filter { steps[$0].creates }.sorted {
            ObjectIdentifier(steps[$0].registration.object) < ObjectIdentifier(steps[$1].registration.object)
        }
        hasLocalCreations = creating.contains { steps[$0].local >= 0 }
        creations = arena.copy(creating.map { i in Creation(step: i, scope: steps[i].registration.borrow { $0.specReference.borrow { $0.scope } }) })
        var checks = Plan.creationChecks(steps, inputs, creating: creating.sorted())
        // (Not over container or value steps, slots other than RESOLVER ones, nor a failing plan: their runs read
        // positions in step order.)
        var variants: [PublishedVariant] = []
        if slots.allSatisfy({ $0.kind == .resolver }) && failing == nil && steps.count <= UInt.bitWidth
            && !steps.contains(where: { $0.isContainer || $0.isShared && $0.registration.borrow { $0.isDeclaredValue || $0.spec.scope.isPerResolvingContainer } }) {
            Plan.publishedVariants(steps, inputs, creating: creating.sorted(), &checks, &variants, &arena)
        }
        publishedVariants = arena.copy(variants)
        // (No variant has container steps: their checks go with the plan's only.)
        checks = (checks + Plan.containerChecks(steps, inputs)).sorted { ($0.at, -$0.made) < ($1.at, -$1.made) }
        creationChecks = arena.copy(checks)
        // Steps a run may skip (`Step.underContainer`) leave no record of a block unwritten: separate instances.
        skipsUnderContainer = steps.contains { $0.underContainer }
        // (A creation step first asked for under a container step too: a creating run finding them all cached neither claims
        // nor makes it, `Graph.claimWithContainerSteps`, as the build never asks for it.)
        func underContainer(_ i: Int) -> Bool {
            var k = steps[i].creates ? steps[i].parent : -1
            while k >= 0 && !steps[k].isContainer { k = steps[k].parent }
            return steps[i].underContainer || k >= 0
        }
        underContainerMask = steps.indices.reduce(0) { mask, i in underContainer(i) ? mask | 1 << UInt(i) : mask }
        wideMasks = steps.indices.contains { $0 >= UInt.bitWidth && steps[$0].isContainer }
        underContainerSteps = wideMasks ? steps.indices.reduce(into: StepBits()) { mask, i in if underContainer(i) { mask.insert(i) } } : StepBits()
        lateClaims = steps.indices.reduce(into: StepBits()) { mask, i in if steps[i].claimsLate { mask.insert(i) } }
        // (A container-scoped root is its container's instance, not a block's.)
        mostSlots = steps.lazy.filter { !$0.isShared }.map { $0.registration.borrow { $0.params.count } }.max() ?? 0
        isLarge = steps.count > Plan.maxSteps || mostSlots > Plan.maxSlots
        // A block's split references are bits of one word (`RunState.split`): a large plan makes none.
        // A container step over made steps takes their instances, which a block's records are not. Checked on the
        // steps, not read from how the recorder marked them (`skipsUnderContainer`, a `cachedVariant`: both imply it;
        // `Handler(O1, O3)`, `O3` container-scoped over graph-scoped `O1`, had neither and trapped).
        let containerOverMade = steps.contains { step in
            step.isContainer && inputs[step.firstInput ..< step.firstInput + step.registration.borrow { $0.params.count }]
                .contains { Plan.isStep($0) && !steps[$0].isShared && !steps[$0].isContainer }
        }
        blockWords = (made > 1 || made == 1 && overSingleton) && !needsGraph && !containerOverMade
            && steps.last?.isContainer != true && failure == nil && steps.count <= Plan.maxSteps ? words : 0
        self.steps = arena.copy(steps)
        self.inputs = arena.copy(inputs)
        self.configuration = configuration
        madeSteps = arena.copy(steps.indices.filter { !steps[$0].isShared })
        containerSteps = arena.copy(steps.indices.filter { steps[$0].isContainer })
        let shared = steps.indices.filter { steps[$0].isShared }.map { i in
            steps[i].registration.borrow { r in
                let scope = r.specReference.borrow { $0.scope }
                var step = SharedStep(step: i, scope: scope, isValue: r.isDeclaredValue, splits: scope.isKeptStronglyByRegistration)
                step.inResolving = scope.isPerResolvingContainer
                return step
            }
        }
        sharedSteps = arena.copy(shared)
        readsRequest = !containerSteps.isEmpty || shared.contains { $0.isValue || $0.inResolving }
        template = Plan.blockTemplate(self.steps, self.inputs, words: blockWords, &arena)
        makesObjects = objects != nil
        objectSteps = arena.copy(objects?.steps ?? [])
        objectInputs = arena.copy(objects?.inputs ?? [])
        completionCalls = arena.copy(objects?.calls ?? [])
        self.component = arena.copy(component)
        self.componentParams = arena.copy(componentParams)
        self.arena = arena
        // (Keyed by a word of container steps: none past the 64th step, `wideMasks`.)
        mixedVariants = containerSteps.isEmpty || !component.isEmpty || failing != nil || wideMasks ? nil : MixedVariants()
    }

    /// Whether creation step `step`'s check is where the build's walk reaches it (`CreationCheck.reachedThere`),
    /// or, in a run that goes on in a `PublishedVariant` (`switching`), its early check is (where the build's walk
    /// reaches it, before its own dependencies, which a later step takes too): revived there, the run goes on
    /// in that variant, which makes those dependencies where the later step asks, as the build reviving it does.
    func revivesWhereReached(_ step: Int, switching: Bool = false) -> Bool {
        creationChecks.contains { $0.step == step && ($0.reachedThere || switching && $0.variant >= 0) }
    }

    /// The `CreationCheck`s of creation steps `creating` (in step order). `walk`: of a run in which another
    /// order holds (`PublishedVariant`): the steps in the build's walk's post-order, the step that asked for
    /// each first, and the creation steps taken as leaves; positions are then in that order.
    private static func creationChecks(_ steps: [Step], _ inputs: [Int], creating: [Int], walk: Walk? = nil) -> [CreationCheck] {
        guard !creating.isEmpty else { return [] }
        let order = walk?.order ?? Array(steps.indices)
        var position = [Int](repeating: -1, count: steps.count)
        for p in order.indices { position[order[p]] = p }
        func parent(_ p: Int) -> Int {
            let k = walk?.parent[order[p]] ?? steps[order[p]].parent
            return k < 0 ? -1 : position[k]
        }
        func isLeaf(_ p: Int) -> Bool { steps[order[p]].isShared || walk?.leaves.contains(order[p]) == true }
        var madeIndex = [Int](repeating: -1, count: order.count)
        var made = 0
        for p in order.indices where !isLeaf(p) { madeIndex[p] = made; made += 1 }
        // (An asker comes after what it asked for: past `c`, the chain cannot reach it.)
        func descends(_ j: Int, from c: Int) -> Bool {
            var k = parent(j)
            while k >= 0 && k < c { k = parent(k) }
            return k == c
        }
        // The last made step taking each step as an input.
        var lastTaker = [Int](repeating: -1, count: order.count)
        for k in order.indices where !isLeaf(k) {
            let step = steps[order[k]]
            let slots = step.registration.borrow { $0.params.count }
            for input in inputs[step.firstInput ..< step.firstInput + slots] where input >= 0 { lastTaker[position[input]] = k }
        }
        // Per step, its own dependencies' steps: those right before it that it (or one of them) asked
        // for first, from `runStart`; `latestTaker`: the last step taking one of them. In one pass,
        // jumping over each such step's own run (linear in a chain, where step by step was cubic).
        var runStart = [Int](repeating: 0, count: order.count)
        var latestTaker = [Int](repeating: -1, count: order.count)
        for c in order.indices {
            var first = c, latest = -1
            while first > 0 && descends(first - 1, from: c) {
                let k = first - 1
                latest = max(latest, lastTaker[k], latestTaker[k])
                first = runStart[k]
            }
            (runStart[c], latestTaker[c]) = (first, latest)
        }
        var checks: [CreationCheck] = []
        for c in creating.map({ position[$0] }).sorted() where c >= 0 && !isLeaf(c) {
            let first = runStart[c]
            // Taken by a step after it (a shared step after it is a leaf: it has no inputs).
            let taken = latestTaker[c] > c
            let start = (first...c).first { !isLeaf($0) }!
            let at = taken ? c : start
            checks.append(CreationCheck(at: madeIndex[at], made: madeIndex[c], step: order[c],
                                        scope: steps[order[c]].registration.borrow { $0.specReference.borrow { $0.scope } },
                                        reachedThere: !taken || first == c))
        }
        // Outer first where two start at one step (the outer's range holds the inner's).
        return checks.sorted { ($0.at, -$0.made) < ($1.at, -$1.made) }
    }

    /// The container steps' `CreationCheck`s, placed as a creation step's: where the build asks for each (the first of
    /// its own dependencies' steps, or the step itself when a later step takes one of those). None before any factory
    /// ran (at the first made step: nothing nested published it). (Past the 64th step too since branch largemasks:
    /// the run's masks are `StepBits` then, `wideMasks`.)
    private static func containerChecks(_ steps: [Step], _ inputs: [Int]) -> [CreationCheck] {
        let containers = steps.indices.filter { steps[$0].isContainer }
        var checks = creationChecks(steps, inputs, creating: containers)
        for k in checks.indices { checks[k].container = containers.firstIndex(of: checks[k].step)! }
        return checks.filter { $0.at > 0 }
    }

    /// A walk of a plan's steps as the build's (`walk`).
    struct Walk {
        let order: [Int]
        let parent: [Int]
        let leaves: [Int]
    }

    /// The build's walk over the steps from the root: each step's DEP inputs in slot order, each step
    /// once (where first asked for), a shared step and `leaves` taken, not descended into. Nil past
    /// `maxSteps` steps deep.
    static func walk(_ steps: [Step], _ inputs: [Int], leaves: [Int]) -> Walk? {
        var order: [Int] = [], parent = [Int](repeating: -1, count: steps.count), seen = [Bool](repeating: false, count: steps.count)
        func visit(_ s: Int, depth: Int) -> Bool {
            seen[s] = true
            if !steps[s].isShared && !leaves.contains(s) {
                guard depth < maxSteps else { return false }
                let slots = steps[s].registration.borrow { $0.params.count }
                for input in inputs[steps[s].firstInput ..< steps[s].firstInput + slots] where Plan.isStep(input) && !seen[input] {
                    parent[input] = s
                    guard visit(input, depth: depth + 1) else { return false }
                }
            }
            order.append(s)
            return true
        }
        guard !steps.isEmpty, visit(steps.count - 1, depth: 0) else { return nil }
        return Walk(order: order, parent: parent, leaves: leaves)
    }

    /// The most `PublishedVariant`s of a plan (each found published early in another's run has its own).
    static var maxVariants: Int { 16 }

    /// The `PublishedVariant`s of the creation checks `checks` that are at their steps though those have
    /// dependencies' steps of their own (`reachedThere` false), each with an early check (appended to
    /// `checks`, kept in run order): a run finding the step published there makes no dependency the build
    /// would not (the rest of the build's walk, the step a leaf), and so on in that run (`current`: the walk
    /// and the made steps' order the checks are of; nil: the plan's). None where the walk does not give the
    /// plan's steps (a shape this does not model), or where that run's creation steps are not in step order
    /// (the graph publishes those in step order; it queues callbacks in the run's order, `enterCreated`, and
    /// a failed run's abort lets go of the made steps in it, `letGoMade`).
    private static func publishedVariants(_ steps: [Step], _ inputs: [Int], creating: [Int], _ checks: inout [CreationCheck],
                                          _ variants: inout [PublishedVariant], _ arena: inout LineArena,
                                          current: (walk: Walk, order: [Int])? = nil) {
        guard checks.contains(where: { !$0.reachedThere }) else { return }
        let madeSteps = steps.indices.filter { !steps[$0].isShared }
        guard let current = current ?? walk(steps, inputs, leaves: []).flatMap({ plain in
            plain.order == Array(steps.indices) && plain.parent == steps.map(\.parent) ? (plain, madeSteps) : nil
        }) else { return }
        var early: [CreationCheck] = []
        for check in checks where !check.reachedThere && variants.count < maxVariants {
            let c = check.step
            // Where the build's walk reaches it: the first made step of its own dependencies'.
            func under(_ s: Int) -> Bool {
                var k = current.walk.parent[s]
                while k >= 0 && k != c { k = current.walk.parent[k] }
                return k == c
            }
            guard let start = current.order.firstIndex(where: under), start < check.made,
                  let walked = walk(steps, inputs, leaves: current.walk.leaves + [c]) else { continue }
            let made = walked.order.filter { !steps[$0].isShared && !walked.leaves.contains($0) }
            // The same before it; the creation steps it makes in step order (the graph publishes those in step
            // order: `Graph.pendCreated`; it queues the others' callbacks in the run's, `enterCreated`).
            let entered = made.filter { steps[$0].creates }
            guard made.count >= start, Array(made[..<start]) == Array(current.order[..<start]),
                  zip(entered, entered.dropFirst()).allSatisfy({ $0 < $1 }) else { continue }
            // (RESOLVER slots, a binding's factories: a step with one enters the steps made before it in this order and
            // opens the frames of this walk's askers, `openFrames`, from `order` and `parent`.)
            let rest = madeSteps.filter { !made.contains($0) }
            var after = creationChecks(steps, inputs, creating: creating, walk: walked).compactMap { found -> CreationCheck? in
                // One the run checked before it stays checked; one it checks later, at its step past it at least.
                guard let original = checks.first(where: { $0.step == found.step }), original.at >= start else { return nil }
                guard found.at < start else { return found }
                return CreationCheck(at: found.made, made: found.made, step: found.step, scope: found.scope, reachedThere: false)
            }
            after.sort { ($0.at, -$0.made) < ($1.at, -$1.made) }
            let index = variants.count
            variants.append(PublishedVariant(step: c, skip: 0, order: .init(start: nil, count: 0), checks: .init(start: nil, count: 0)))
            // Found published early in this run too: its own variants.
            publishedVariants(steps, inputs, creating: creating, &after, &variants, &arena, current: (walked, made + rest))
            early.append(CreationCheck(at: start, made: check.made, step: c, scope: check.scope, reachedThere: false, variant: index))
            variants[index] = PublishedVariant(step: c, skip: rest.reduce(0) { $0 | 1 << UInt($1) },
                                               order: arena.copy(made + rest), checks: arena.copy(after), parent: arena.copy(walked.parent))
        }
        checks = (checks + early).sorted { ($0.at, -$0.made) < ($1.at, -$1.made) }
    }

    /// The words of every block of a plan and where a run fills them in.
    private static func blockTemplate(_ steps: UnsafeBufferPointer<Step>, _ inputs: UnsafeBufferPointer<Int>, words: Int,
                                      _ arena: inout LineArena) -> BlockTemplate {
        typealias Patch = BlockTemplate.Patch
        let template = UnsafeMutableBufferPointer(start: arena.allocate(UInt.self, capacity: words), count: words)
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
        return BlockTemplate(words: UnsafeBufferPointer(template), pointers: arena.copy(pointers), shared: arena.copy(shared),
                             localSpecs: arena.copy(localSpecs))
    }

    /// Records the plan for `root` resolved from its own container; throws why
    /// its graph is not plain (`Graph` resolves it, and reports what is wrong).
    /// `creating`: against the caches' state, in one walk: the warm plan when every shared key
    /// is cached, else the creation plan (`recordCreating`, `createsShared`) when it covers that
    /// state, else (walked again) the warm plan.
    /// `leaves`: container-scoped registrations taken from the resolving container's cache, not walked into (a
    /// failing plan's variant, `Failing.variants`).
    static func record(_ root: Registration, configuration: UInt, creating: Bool = false,
                       leaves: Leaves = Leaves()) throws(Decline) -> Plan {
        // A container-scoped root not cached in the resolving container is a container step: its run claims,
        // makes and publishes it there (`takeContainer`), or takes the one another resolve published meanwhile.
        // A singleton or weak root is a creation step when no cache holds it, else (the warm plan) a shared
        // step taken from its cache: a resolve that missed it and found it published meanwhile (another
        // thread's, or a resolve nested under this one's claim) takes it there, as the build would.
        // A declared value root is a value step (the resolving container's value; none: the build's error).
        let recorder = Recorder(lookup: root.container, allowsArguments: true)
        recorder.makesContainer = true
        recorder.createsUncached = creating
        recorder.recordsSlots = true
        recorder.leafContainers = leaves.ids
        guard recorder.visit(Borrowed(root)) != nil else {
            if recorder.declinedCreating { return try record(root, configuration: configuration, leaves: leaves) }
            if recorder.decline == .containerInput {
                if creating, let plan = recordCreatingUnmarked(root, configuration: configuration, leaves: leaves) { return plan }
                return try recordWithCachedVariant(root, configuration: configuration, leaves: leaves)
            }
            guard let met = recorder.failing() else { throw recorder.decline }
            // A creating replay into the graph passes no request: over container or value steps, creation
            // records the warm plan. Completion callbacks and slots made per resolve over them replay it
            // into the graph with the request (`Plan.replayRequest`), as a plan that succeeds.
            if recorder.readsRequest && recorder.steps.contains(where: { $0.creates }) {
                return try record(root, configuration: configuration, leaves: leaves)
            }
            // Under container-scoped frames: the plans of the builds that take one of them cached, on first need.
            let failing = withVariants(met, root, creating: creating, leaves: leaves)
            // Slots made per resolve before the failure: made as the build's (`finishSlots`).
            try recorder.finishSlots()
            return Plan(steps: recorder.steps, inputs: recorder.inputs, configuration: configuration, objects: nil,
                        slots: recorder.slots, failing: failing)
        }
        let creates = recorder.steps.contains { $0.creates }
        // Over container or value steps too: the graph claims the creation and container cells in the
        // build's order (`Graph.claimWithContainerSteps`) and the run reads the request (`Plan.replayRequest`).
        try recorder.finishSlots()
        // (A shared root's object is answered from its cache before any plan: `Container.resolve(_:as:)`.)
        let objects = creates || recorder.steps.last?.isShared == true ? nil : recorder.objects()
        return Plan(steps: recorder.steps, inputs: recorder.inputs, configuration: configuration, objects: objects, slots: recorder.slots)
    }

    /// `record` of a graph whose container steps' inputs include a made step that a step outside them
    /// takes too (`containerInput`): a build finding the container steps cached makes that step where the
    /// outside one asks, an order no skip of the plan's steps gives. So two plans: the container steps
    /// made (none skipped), and its `cachedVariant`, walked again with them as leaves taken from the
    /// resolving container's cache, which a run finding them all cached runs instead (`runRequest`).
    /// With completion callbacks or slots made per resolve both replay into the graph, which switches to the
    /// variant as `runRequest` does (`Graph.switchesToVariant`, set by `claimContainerSteps`). Throws
    /// `containerInput` for a container step claimed late (a RESOLVER slot's get may build it: the claims
    /// cannot tell at once whether every container step is cached).
    /// `child`: a child's plan (`record(_:configuration:child:)`), both over its component. `leaves`: as `record`'s.
    private static func recordWithCachedVariant(_ root: Registration, configuration: UInt, child: Container? = nil,
                                                leaves: Leaves = Leaves()) throws(Decline) -> Plan {
        guard !root.spec.scope.isPerResolvingContainer else { throw .containerInput }
        let made = try child.map { c throws(Decline) in try childRecorder(root, c) } ?? Recorder(lookup: root.container, allowsArguments: true)
        (made.makesContainer, made.recordsSlots, made.marksUnderContainer) = (true, true, false)
        (made.leafContainers, made.leafSlots) = (leaves.ids, leaves.slots)
        // (A failing walk: its steps under a container step taken outside too, `visit`; not a plan's.)
        guard made.visit(Borrowed(root)) != nil else { throw made.decline == .metFailure ? .containerInput : made.decline }
        let cached: Recorder
        if let child {
            cached = try childRecorder(root, child, allowsValues: true)
            cached.containerLeaves = true
            guard cached.visit(Borrowed(root)) != nil else { throw cached.decline }
        } else {
            cached = try walkEveryContainerCached(root)
        }
        try made.finishSlots()
        try cached.finishSlots()
        guard !made.steps.contains(where: { $0.claimsLate }) else { throw .containerInput }
        let (component, params) = child == nil ? ([], []) : componentShape(of: made, cached)
        let variant = Plan(steps: cached.steps, inputs: cached.inputs, configuration: configuration, objects: nil,
                           component: component, componentParams: params, slots: cached.slots)
        let plan = Plan(steps: made.steps, inputs: made.inputs, configuration: configuration, objects: nil,
                        component: component, componentParams: params, slots: made.slots, cachedVariant: variant)
        // (A variant replaying into the graph while the plan runs alone: never, its steps a subset of the plan's.)
        guard plan.needsGraph || !variant.needsGraph else { throw .containerInput }
        return plan
    }

    /// The plan for a run of this one that found the container steps of `cached` (a bit each) cached in the resolving
    /// container and the others not, where skipping what the cached ones asked for cannot give the build's order
    /// (`skipUnderCached`): recorded once per such set (at most `maxMixedVariants`), walked again with those as
    /// leaves taken from the resolving container's cache (`Recorder.leafContainers`) and the others made, the
    /// order the build makes them in then (a step those asked for that a made step takes is made where it asks).
    /// Nil: none (past the bound; a walk that declines, or marks none under the container steps it makes; a
    /// configuration changed since this plan was recorded). A plan that `needsGraph` (completion callbacks, slots
    /// made per resolve) has variants that do too, replayed into the graph (`Graph.switchesToVariant`). Picked
    /// by `variant(forCached:)`.
    private func mixedVariant(_ cached: UInt) -> Plan? {
        guard let mixedVariants else { return nil }
        let found = mixedVariants.plans.withLock { plans -> (known: Bool, plan: Plan?) in
            if let known = plans.first(where: { $0.cached == cached }) { return (true, known.plan) }
            guard plans.count < Plan.maxMixedVariants else { return (false, nil) }
            let plan = recordMixed(cached)
            // (A creating walk that found the caches changed since this plan's pick: not kept, `sameCreations`.)
            if let plan, createsShared && !sameCreations(as: plan) { return (false, plan) }
            plans.append((cached, plan))
            return (true, plan)
        }
        if found.known { return found.plan }
        // Past the bound (or walked in another state): recorded for this run, kept by no plan.
        guard let plan = found.plan ?? recordMixed(cached) else { return nil }
        plan.keptByNone = true
        return plan
    }

    /// The `mixedVariants` recorded so far (tests).
    var mixedVariantCount: Int { mixedVariants?.plans.withLock { $0.count { $0.plan != nil } } ?? 0 }

    /// `mixedVariant`'s walk: as `record`'s, the container steps of `cached` leaves. A run of it finding one of the
    /// container steps it makes cached skips what that one asked for (`Step.underContainer`, as every plan that
    /// marks them), or declines. Where a made step one of those asks for first is taken outside too
    /// (`containerInput`), as `recordWithCachedVariant`: every step made (none marked), and for a run finding them
    /// all cached the plan with every container step a leaf (this plan's `cachedVariant`, the same state).
    /// A creation plan's (`createsShared`): a creating walk (`Recorder.createsUncached`, the caches' state now), its
    /// run's claims redone (`Graph.claimCreations`); the one with every step made as `recordCreatingUnmarked`'s
    /// (`needsContainersUncached`).
    private func recordMixed(_ cached: UInt) -> Plan? {
        let root = steps[steps.count - 1].registration.object
        guard cached & 1 << UInt(steps.count - 1) == 0, root.container.configuration == configuration else { return nil }
        let leaves = Set(containerSteps.filter { cached & 1 << UInt($0) != 0 }.map { ObjectIdentifier(steps[$0].registration.object) })
        let creating = createsShared
        // Run as this plan: without a graph (no slots made per resolve, no completion callbacks), or replayed into it
        // (`needsGraph`: `Graph.switchesToVariant`; its slots finished as `record`'s). Creation steps: a creation plan's only.
        let fits = { [needsGraph] (recorder: Recorder) -> Bool in
            guard creating || !recorder.steps.contains(where: { $0.creates }) else { return false }
            guard needsGraph else { return recorder.slots.isEmpty && !recorder.steps.contains { $0.completes } }
            return (try? recorder.finishSlots()) != nil && !recorder.steps.contains { $0.claimsLate }
        }
        let marked = Recorder(lookup: root.container, allowsArguments: true)
        (marked.makesContainer, marked.recordsSlots, marked.leafContainers, marked.createsUncached) = (true, true, leaves, creating)
        if marked.visit(Borrowed(root)) != nil {
            return fits(marked) ? Plan(steps: marked.steps, inputs: marked.inputs, configuration: configuration, objects: nil, slots: marked.slots) : nil
        }
        guard marked.decline == .containerInput else { return nil }
        let made = Recorder(lookup: root.container, allowsArguments: true)
        (made.makesContainer, made.recordsSlots, made.marksUnderContainer, made.leafContainers) = (true, true, false, leaves)
        made.createsUncached = creating
        guard made.visit(Borrowed(root)) != nil, fits(made) else { return nil }
        var allCached = cachedVariant
        if allCached == nil {
            guard let walk = try? Plan.walkEveryContainerCached(root, creating: creating), fits(walk) else { return nil }
            allCached = Plan(steps: walk.steps, inputs: walk.inputs, configuration: configuration, objects: nil, slots: walk.slots)
        }
        return Plan(steps: made.steps, inputs: made.inputs, configuration: configuration, objects: nil, slots: made.slots,
                    cachedVariant: allCached, needsContainersUncached: creating)
    }

    /// Whether `variant`, a creating `mixedVariant` just walked, was walked in this creation plan's state of the caches:
    /// each shared registration both name a creation step in both or in neither (another thread published one, or let
    /// its last go, between this plan's pick and the walk: the variant serves that run only, `keptByNone`).
    private func sameCreations(as variant: Plan) -> Bool {
        let created = Set(creations.map { ObjectIdentifier(steps[$0.step].registration.object) })
        let named = Set(steps.indices.filter { steps[$0].isShared || steps[$0].creates }.map { ObjectIdentifier(steps[$0].registration.object) })
        return variant.steps.allSatisfy { step in
            let id = ObjectIdentifier(step.registration.object)
            return !(step.isShared || step.creates) || !named.contains(id) || step.creates == created.contains(id)
        }
    }

    /// `root`'s walk with every container-scoped registration a leaf taken from the resolving container's cache
    /// (`Recorder.containerLeaves`): a `cachedVariant`'s, the build's order when it finds them all cached.
    /// `creating`: a creation plan's (`Recorder.createsUncached`).
    private static func walkEveryContainerCached(_ root: Registration, creating: Bool = false) throws(Decline) -> Recorder {
        let cached = Recorder(lookup: root.container, allowsArguments: true, allowsValues: true)
        (cached.containerLeaves, cached.recordsSlots, cached.createsUncached) = (true, true, creating)
        guard cached.visit(Borrowed(root)) != nil else { throw cached.decline }
        return cached
    }

    /// The creation plan of a graph whose container steps' inputs include a made step a step outside them
    /// takes too (`containerInput`), for the caches' state now: every step made (none marked `underContainer`),
    /// for runs that find no container step cached (`needsContainersUncached`; one finding one cached declines:
    /// the warm plan's `cachedVariant` serves that state once the creation steps are cached). Nil: it creates
    /// nothing, or the walk declines otherwise.
    /// `child`: a child's creation plan (`record(_:configuration:child:creating:)`), both over its component, as
    /// `recordWithCachedVariant`'s (the variant's container leaves the resolving child's, `takeInResolving`).
    private static func recordCreatingUnmarked(_ root: Registration, configuration: UInt, child: Container? = nil,
                                               leaves: Leaves = Leaves()) -> Plan? {
        guard let recorder = child.map({ try? childRecorder(root, $0) }) ?? Recorder(lookup: root.container, allowsArguments: true)
        else { return nil }
        (recorder.makesContainer, recorder.recordsSlots, recorder.marksUnderContainer, recorder.createsUncached) = (true, true, false, true)
        (recorder.leafContainers, recorder.leafSlots) = (leaves.ids, leaves.slots)
        guard recorder.visit(Borrowed(root)) != nil, recorder.steps.contains(where: { $0.creates }),
              (try? recorder.finishSlots()) != nil else { return nil }
        // A run finding every container step cached: the build's walk then, those leaves taken from the resolving
        // container's cache (`containerLeaves`), its creation steps claimed anew (`Graph.replay` switches to it);
        // none when only the container steps asked for those (a warm walk: its run checks the leaves' caches).
        guard let cached = child.map({ try? childRecorder(root, $0, allowsValues: true) })
                ?? Recorder(lookup: root.container, allowsArguments: true, allowsValues: true) else { return nil }
        (cached.containerLeaves, cached.recordsSlots, cached.createsUncached) = (true, true, true)
        let walked = cached.visit(Borrowed(root)) != nil && (try? cached.finishSlots()) != nil
        let (component, params) = child == nil ? ([], []) : walked ? componentShape(of: recorder, cached) : componentShape(of: recorder)
        let variant = walked ? Plan(steps: cached.steps, inputs: cached.inputs, configuration: configuration, objects: nil,
                                    component: component, componentParams: params, slots: cached.slots) : nil
        return Plan(steps: recorder.steps, inputs: recorder.inputs, configuration: configuration, objects: nil,
                    component: component, componentParams: params, slots: recorder.slots,
                    cachedVariant: variant, needsContainersUncached: true)
    }

    /// Records the plan for `root` resolved from its own container against the caches' state now:
    /// each singleton or weak dependency no cache holds (registered in that container, not strict)
    /// becomes a creation step, its own dependencies recorded in the order `CreationOrder.walk`
    /// gives, the order `Graph.build` makes them with these caches; a singleton or weak root is one
    /// too (over container and value steps as well: `Graph.claimWithContainerSteps`). Nil when the graph
    /// is not plain or creates nothing (the
    /// warm plan, or the root's cache, serves it).
    static func recordCreating(_ root: Registration, configuration: UInt) -> Plan? {
        guard !root.spec.scope.isPerResolvingContainer, !root.isDeclaredValue else { return nil }
        let recorder = Recorder(lookup: root.container, allowsArguments: true)
        recorder.createsUncached = true
        recorder.recordsSlots = true
        recorder.makesContainer = true
        guard recorder.visit(Borrowed(root)) != nil else {
            if recorder.decline == .containerInput { return recordCreatingUnmarked(root, configuration: configuration) }
            // A failing plan over creation steps, as `record(creating:)` keeps one (a warm failing plan that found
            // a leaf gone: the build before branch declinesweep, counted `sharedRoot`); not over container or
            // value steps (`record`'s rule: the warm plan replays into the graph with the request).
            guard !recorder.declinedCreating, let met = recorder.failing(), recorder.steps.contains(where: { $0.creates }),
                  !recorder.readsRequest, (try? recorder.finishSlots()) != nil else { return nil }
            // Under container-scoped frames: the plans of the builds that take one cached, for the caches' state of their pick.
            let failing = withVariants(met, root, creating: true, leaves: Leaves())
            return Plan(steps: recorder.steps, inputs: recorder.inputs, configuration: configuration, objects: nil,
                        slots: recorder.slots, failing: failing)
        }
        // (Nil when `finishSlots` declines: the warm plan declines alike.)
        guard recorder.steps.contains(where: { $0.creates }), (try? recorder.finishSlots()) != nil else { return nil }
        return Plan(steps: recorder.steps, inputs: recorder.inputs, configuration: configuration, objects: nil, slots: recorder.slots)
    }

    /// Whether the caches are in the state this creation plan was compiled for: every shared leaf
    /// cached, every creation step's registration not (read without claiming: the claims decide).
    /// `locals`: a child's plan's, written by `fits` (a local step's cache is the resolving child's registration's).
    /// Not the request's leaves (a value, a container-scoped leaf): each resolving container's, read by the run.
    /// `takingPublished`: creation steps cached too (a pick after the caches changed: its claims take them).
    func matchesCaches(_ locals: UnsafeMutablePointer<Borrowed<Registration>>? = nil, takingPublished: Bool = false) -> Bool {
        for shared in sharedSteps where !shared.isValue && !shared.inResolving {
            guard let hit = registration(of: shared.step, locals).borrow({ $0.cachedRetained(shared.scope) }) else { return false }
            hit.release()
        }
        // A failing plan's open frames of shared registrations (`Failing.opensShared`): the build takes one cached
        // and never meets the error there.
        if let failing, failing.opensShared {
            for (i, open) in failing.open.enumerated() {
                let r = failing.openLocals.isEmpty || failing.openLocals[i] < 0 ? open : locals.unsafelyUnwrapped[failing.openLocals[i]]
                guard let hit = r.borrow({ $0.cachedRetained($0.spec.scope) }) else { continue }
                hit.release()
                return false
            }
        }
        if takingPublished { return true }
        for creation in creations {
            if let hit = registration(of: creation.step, locals).borrow({ $0.cachedRetained(creation.scope) }) {
                hit.release()
                return false
            }
        }
        return true
    }

    /// Step `i`'s registration in a run of this plan: a local step's (`Step.local`) is the resolving child's,
    /// in `locals` (written by `fits`), whose cell, cache and callbacks are that child's; else the recorded one.
    @inline(__always)
    func registration(of i: Int, _ locals: UnsafeMutablePointer<Borrowed<Registration>>?) -> Borrowed<Registration> {
        steps[i].local >= 0 ? locals.unsafelyUnwrapped[steps[i].local] : steps[i].registration
    }

    /// The container step `i` looks up from when not the run's (`Step.lookup`): a stacked level's is the run's
    /// level, the container of the registration the run takes in `Step.lookupSlot` (`fits` wrote `locals`).
    @inline(__always)
    func lookup(of i: Int, _ locals: UnsafeMutablePointer<Borrowed<Registration>>?) -> Borrowed<Container>? {
        steps[i].lookupSlot < 0 ? steps[i].lookup : Self.level(of: steps[i].lookupSlot, locals)
    }

    /// `lookup(of:_:)` of slot input `n` (`SlotInput.lookup`, `lookupSlot`).
    @inline(__always)
    func slotLookup(_ n: Int, _ locals: UnsafeMutablePointer<Borrowed<Registration>>?) -> Borrowed<Container>? {
        slots[n].lookupSlot < 0 ? slots[n].lookup : Self.level(of: slots[n].lookupSlot, locals)
    }

    /// The container of the run's registration in component slot `slot`: its level in the run's chain.
    private static func level(of slot: Int, _ locals: UnsafeMutablePointer<Borrowed<Registration>>?) -> Borrowed<Container> {
        locals.unsafelyUnwrapped[slot].borrow { Borrowed($0.container) }
    }

    /// The creation steps in the order a run claims their cells (`Graph.claimCreations`): `creations`' (by
    /// key, as `Graph.claimInOrder` claims), unless some are local: then by the resolving child's registrations.
    func creationsInClaimOrder(_ locals: UnsafeMutablePointer<Borrowed<Registration>>) -> [Creation] {
        guard hasLocalCreations else { return Array(creations) }
        return creations.sorted { ObjectIdentifier(registration(of: $0.step, locals).object) < ObjectIdentifier(registration(of: $1.step, locals).object) }
    }

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
        else { throw .sharedRoot }
        let recorder = try childRecorder(root, child)
        recorder.makesContainer = true
        recorder.createsUncached = creating
        (recorder.leafContainers, recorder.leafSlots) = (leaves.ids, leaves.slots)
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
            // Creating: a failing plan over creation steps too, as from the owner (`record(creating:)`), unless it
            // reads the request (its warm plan replays into the graph with it: `record`'s rule).
            if creating && recorder.readsRequest { throw recorder.decline }
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
    private static func childRecorder(_ root: Registration, _ child: Container, allowsValues: Bool = false) throws(Decline) -> Recorder {
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
    private static func componentShape(_ component: [Borrowed<Registration>?], _ levels: [Level], _ cleared: [Int: Key],
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
    private static func componentShape(of recorder: Recorder, _ others: Recorder...) -> ([ComponentSlot], [Param]) {
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
        /// Whether the steps so far read the resolving container: container, value or container leaf steps.
        var readsRequest: Bool {
            steps.contains { $0.isContainer || $0.registration.borrow { $0.isDeclaredValue || $0.spec.scope.isPerResolvingContainer } }
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
        private(set) var keysStrict: Set<Int> = []
        /// Whether a singleton or weak dependency no cache holds now is walked into as a creation
        /// step (`Step.creates`, `recordCreating`) rather than recorded as a leaf.
        var createsUncached = false
        /// Set when the walk declined a creation step (not one a plan covers: `reach`).
        private(set) var declinedCreating = false
        var steps: [Step] = []
        var inputs: [Int] = []
        /// Graph-scoped and shared registrations: their one step in this graph.
        var stepOf: [ObjectIdentifier: Int] = [:]
        /// Registrations with a frame open: one asked for again is a constructor cycle, the plan's
        /// error (`cycle`, a failing plan).
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
        private(set) var decline = Decline.other
        /// The error the build reports where the walk stopped, if it is one a plan reports too
        /// (`Plan.failure`: `argumentDependency`, `cycle`, `missing`).
        private(set) var failure: TetherError?
        /// With `failure`: the frames open when the walk met it (the walk closes them as it unwinds).
        private var failureFrames: [(registration: Borrowed<Registration>, firstNew: Int, local: Int)] = []
        /// With `failure`: which of those are container-scoped (`Plan.Failing.containers`), and where their caches are
        /// read (`Plan.Failing.containerLookups`).
        private var failureContainers: [Int] = []
        private var failureContainerLookups: [(lookup: Borrowed<Container>?, slot: Int)] = []

        /// The keys of the open frames, outermost first: `Graph.path` when the build reaches the same place.
        private var path: [Key] { frames.map { $0.registration.borrow { $0.key } } }

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
        private func met(_ error: TetherError?, _ reason: Decline) -> Decline {
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
        private func refuses(_ frame: Frame) -> Bool {
            frame.creates && frame.registration.borrow { $0.spec.scope.lifetime.cached && isStrict($0.container) }
        }

        /// Whether `container` is strict: a level of the component as read with its slots (the plan then keys
        /// that level's strictness, `keysStrict`), else now (the owner and further up: the configuration keys it).
        private func isStrict(_ container: Container) -> Bool {
            guard let level = level(of: container) else { return container.refusesCaptives }
            keysStrict.insert(level)
            return componentLevels[level].strict
        }

        /// `.cycle` at `key`, whose frame is open, with the build's error (`Graph.existing`). In a strict
        /// container too: the build's captive check of the slot (`Graph.refuseCaptive`, before `existing`) is
        /// the walk's, before `reach` (`refuseCaptive`), so a captive it refuses is met first, as the build's.
        private func cycle(_ key: Key) -> Decline {
            let path = path
            return met(TetherError.constructorCycle(Array(path[(path.firstIndex(of: key) ?? 0)...]) + [key]), .cycle)
        }

        /// The walk's stop at `key` not registered, asked for by the top frame (`metFailure`), with the build's error (`Graph.fill`, before any captive check).
        private func missing(_ key: Key) -> Decline {
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
        private func reach(_ registration: Borrowed<Registration>) throws(Decline) -> CreationOrder.Fill<Int, Frame> {
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
                var step = Step(registration: registration, spec: nil, firstInput: inputs.count, isShared: true,
                                isKeyed: true, completes: false, parent: -1)
                step.local = local
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
        private func isStacked(_ container: Container) -> Bool { level(of: container) != nil }

        /// `container`'s number in `componentLevels`, if the component stacks it.
        private func level(of container: Container) -> Int? {
            guard recordsLocals else { return nil }
            let address = Borrowed(container).opaque
            return componentLevels.firstIndex { $0.container == address }
        }

        /// `key`'s ALL list as the build's from `container` (`Container.allRegistrations`), but from the resolving child or
        /// a stacked level the component's as read before the walk: the owner's list, each level's slots over it, outermost
        /// first (`Container.listed`, the tables' rule). (The tables again would list an item registered in a level
        /// since, in no slot: `childLocal` before branch failunder2; `fits` compares the slots of each run.)
        private func allRegistrations(for key: Key, from container: Container) -> [Registration] {
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
        private func registration(for key: Key, from container: Container) -> Borrowed<Registration>? {
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
        private static func lookups(_ foreign: Container?, _ slot: Int) -> (Borrowed<Container>?, Int) {
            slot >= 0 ? (nil, slot) : (foreign.map { Borrowed($0) }, -1)
        }

        /// Whether `r`'s cache of `scope` holds an instance now.
        private static func isCached(_ r: Registration, _ scope: Scope) -> Bool {
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
        private func argumentDependency(_ key: Key) -> Decline {
            let path = path
            return met(Graph.argumentDependency(key, neededBy: pathText(path), path: path), .metFailure)
        }

        /// A creation step's frame in a strict container refuses a shorter-lived strong dependency `dep`
        /// (`key`) as the build's does (`Graph.refuseCaptive`, before it looks `dep` up): the plan fails there.
        private func refuseCaptive(_ dep: Borrowed<Registration>, key: Key) throws(Decline) {
            let top = frames.count - 1
            guard refuses(frames[top]) else { return }
            let holderScope = frames[top].registration.borrow { $0.spec.scope }
            let targetScope = dep.borrow { $0.spec.scope }
            guard holderScope.captures(targetScope) else { return }
            let path = path
            let via = frames.count > 1 ? " (while resolving \(pathText(path)))" : ""
            throw met(captiveError(holder: frames[top].registration.borrow { $0.key }, holderScope, target: key, targetScope,
                                   via: via, note: strictNote), .other)
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
                let made = steps.indices.first { $0 >= slots[n].after && steps[$0].registration === r && !(value && steps[$0].isShared) }
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
                guard makesContainer || steps[step].isContainer || steps[step].registration.borrow({ $0.isDeclaredValue })
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
                var step = Step(registration: frame.registration, spec: frame.local >= 0 ? nil : Borrowed(spec),
                                firstInput: firstInput, isShared: false, isKeyed: true, completes: spec.completionCount > 0, parent: -1)
                step.isContainer = true
                step.local = frame.local
                step.hasSlots = frame.inputs.contains(where: Plan.isSlot)
                (step.lookup, step.lookupSlot) = Self.lookups(frame.foreign, frame.foreignSlot)  // (its container's cache, claimed and published there)
                return try add(step, frame.id)
            }
            var step = Step(registration: frame.registration, spec: frame.local >= 0 ? nil : Borrowed(spec), firstInput: firstInput,
                            isShared: false, isKeyed: spec.scope.isKeyedInGraph, completes: spec.completionCount > 0, parent: -1)
            step.local = frame.local
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
        private func markUnderContainer() throws(Decline) {
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
                let slots = steps[k].registration.borrow { $0.params.count }
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
            guard !recordsLocals, slots.isEmpty, !readsRequest,
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

        private func add(_ step: Step, _ id: ObjectIdentifier?) throws(Decline) -> Int {
            // (A container step past the 64th step: `wideMasks`.)
            steps.append(step)
            if let id { stepOf[id] = steps.count - 1 }
            return steps.count - 1
        }
    }
}

