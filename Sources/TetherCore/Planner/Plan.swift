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
/// This file holds the plan's format; its recorder is `Plan+Recorder.swift`, its recording `Plan+Record.swift`,
/// the pick of a variant `Plan+Variants.swift`, its runs `Executor/PlanRun*.swift`.

final class Plan: @unchecked Sendable {
    /// One instance to make (or, `isShared`, to take from its cache).
    struct Step {
        /// The registration when recorded. A local step's (`local`) is the recording child's, gone with that child
        /// while the plan serves others: read it only while recording (the recorder, `Plan.init`); a run reads
        /// `Plan.registration(of:_:)` (the run's), or the fields recorded from it (`slotCount`, `fromSharedCache`, `spec`).
        let recorded: Borrowed<Registration>
        /// `recorded` of a step that is not local: a plan of no child's (an object plan, a `mixedVariant`'s walk, a
        /// description), read at any time. A local step's traps in debug builds (issue 28, since branch localreg: the
        /// run-time reads of a child's plan's local steps read the recording child's freed registration).
        var registration: Borrowed<Registration> {
            assert(local < 0, "a local step's recorded registration is its recording child's: read Plan.registration(of:_:)")
            return recorded
        }
        /// The registration's spec when recorded (made steps; the plan holds it: `specsHeld`):
        /// any spec change retires the plan, so it is the current one while the plan is.
        let spec: Borrowed<InstanceSpec>?
        /// This step's slots: `inputs[firstInput ..< firstInput + slotCount]`.
        let firstInput: Int
        /// Its registration's `params.count` when recorded (0 for a shared step: a leaf), the same in every run (`fits`).
        var slotCount = 0
        /// A shared step taken from a singleton or weak cache (not a value, not container-scoped), as recorded.
        var fromSharedCache = false
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
        /// A step it makes goes under a container step in that walk that none asked for first in the plan's (D over the revived
        /// W asked for under Session, which a later step takes: since branch revivev). Recorded only where the run switches
        /// before any factory; its revive only where the claims found each container step to claim (`Plan.revivesOnlyUnderMoved`).
        var movesUnderContainer = false
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
    let leadingPad = LinePad()
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

    /// `mixedVariants`' store (a failing plan's `Failing.variants` too, per container frame): per set of container
    /// steps found cached (a bit each), its plan (nil: none covers it). Looked up and kept under its lock, walked
    /// without it (issue 27: a walk under it made every other run of the plan wait for it, and one reaching the store
    /// again would deadlock): `known`, the caller's walk, then `keep`.
    final class MixedVariants: @unchecked Sendable {
        let plans = Lock<[(cached: UInt, plan: Plan?)]>([])

        /// The plan kept for `cached` (`found` false: none yet).
        func known(_ cached: UInt) -> (found: Bool, plan: Plan?) {
            plans.withLock { plans in plans.first { $0.cached == cached }.map { (true, $0.plan) } ?? (false, nil) }
        }

        /// Keeps `plan`, walked for `cached` without the lock, unless another thread kept one for it meanwhile: the
        /// first kept wins (every run of that set the same plan), returned instead; the loser's is let go of by its
        /// caller, after the lock. `found` false: `limit` sets kept already, none for this one (nothing kept).
        func keep(_ cached: UInt, _ plan: Plan?, limit: Int = .max) -> (found: Bool, plan: Plan?) {
            plans.withLock { plans in
                if let known = plans.first(where: { $0.cached == cached }) { return (true, known.plan) }
                guard plans.count < limit else { return (false, nil) }
                plans.append((cached, plan))
                return (true, plan)
            }
        }
    }

    /// The most `mixedVariants` a plan keeps (sets of container steps found cached; past them, each run's recorded
    /// for it, `keptByNone`).
    static var maxMixedVariants: Int { 8 }
    /// A `mixedVariant` recorded for one run and kept by no plan (past `maxMixedVariants`, or a creating one whose
    /// walk found the caches changed since its plan's): whoever runs it holds it till the run ends (`Plan.runVariant`;
    /// a replay into the graph, `ThreadState.oneShotPlans`, as `Registration.oneShotPlan`). Set before it is returned.
    var keptByNone = false

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

        /// Whether a frame of a shared registration was open at the error: a creation walk's (one cached is a
        /// leaf), so the build meets the error only while that registration is not cached (`matchesCaches`).
        /// (Stored when recorded: a local frame's registration in `open` is the recording child's, which may be gone;
        /// each run's at that slot has its scope, `fits`.)
        var opensShared = false
        /// The `open` frames above step `step` in a run: a local frame's registration the resolving child's (`locals`,
        /// written by `fits`; `open`'s is the recording child's, gone with it: no run reads that since branch localreg).
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
    var decline = Decline.other

    /// The specs of its steps (`Step.spec` refers to them unretained).
    private let specsHeld: [InstanceSpec]

    /// Where the buffers above live: lines of their own (every thread reads them per resolve;
    /// the thread that planned allocates next to them per request).
    let arena: LineArena
    let trailingPad = LinePad()

    deinit {
        arena.deallocate()
    }

    var declines: Bool { steps.isEmpty && !fails }
    /// Neither declines nor switches to a variant (`pickedForCaches`): the plan a pick returns as found (one load
    /// on the pick's fast path, `Registration.plan(from:_:)`).
    let servesAsPicked: Bool

    /// `objects`: nil unless the plan makes objects.
    init(steps: [Step], inputs: [Int], configuration: UInt, objects: Objects?,
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
            let slots = inputs[first ..< first + steps[i].slotCount]
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
            step.isShared && step.recorded.borrow { $0.specReference.borrow { $0.scope.isKeptStronglyByRegistration } }
        }
        let creating = steps.indices.filter { steps[$0].creates }.sorted {
            ObjectIdentifier(steps[$0].recorded.object) < ObjectIdentifier(steps[$1].recorded.object)
        }
        hasLocalCreations = creating.contains { steps[$0].local >= 0 }
        creations = arena.copy(creating.map { i in Creation(step: i, scope: steps[i].recorded.borrow { $0.specReference.borrow { $0.scope } }) })
        var checks = Plan.creationChecks(steps, inputs, creating: creating.sorted())
        // (Not over value steps, slots other than RESOLVER ones, nor a failing plan: their runs read positions in step order;
        // over container steps only without slots, `publishedVariants` saying where; over container-scoped leaves (a
        // `cachedVariant`'s, since branch revsess: each taken before any factory, `takeShared`, entered after the made
        // steps, `enterRequest`) alike.)
        var variants: [PublishedVariant] = []
        if slots.allSatisfy({ $0.kind == .resolver }) && failing == nil && steps.count <= UInt.bitWidth
            && !steps.contains(where: { step in step.isShared && step.recorded.borrow { $0.isDeclaredValue }
                || !slots.isEmpty && (step.isContainer || step.isShared && step.recorded.borrow { $0.spec.scope.isPerResolvingContainer }) }) {
            Plan.publishedVariants(steps, inputs, creating: creating.sorted(), &checks, &variants, &arena)
        }
        publishedVariants = arena.copy(variants)
        // (A variant over container steps has their checks in its order, `publishedVariants`.)
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
        mostSlots = steps.lazy.filter { !$0.isShared }.map { $0.recorded.borrow { $0.params.count } }.max() ?? 0
        isLarge = steps.count > Plan.maxSteps || mostSlots > Plan.maxSlots
        // A block's split references are bits of one word (`RunState.split`): a large plan makes none.
        // A container step over made steps takes their instances, which a block's records are not. Checked on the
        // steps, not read from how the recorder marked them (`skipsUnderContainer`, a `cachedVariant`: both imply it;
        // `Handler(O1, O3)`, `O3` container-scoped over graph-scoped `O1`, had neither and trapped).
        let containerOverMade = steps.contains { step in
            step.isContainer && inputs[step.firstInput ..< step.firstInput + step.slotCount]
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
            steps[i].recorded.borrow { r in
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

    /// Step `i`'s registration in a run of this plan: a local step's (`Step.local`) is the resolving child's,
    /// in `locals` (written by `fits`), whose cell, cache and callbacks are that child's; else the recorded one.
    @inline(__always)
    func registration(of i: Int, _ locals: UnsafeMutablePointer<Borrowed<Registration>>?) -> Borrowed<Registration> {
        steps[i].local >= 0 ? locals.unsafelyUnwrapped[steps[i].local] : steps[i].recorded
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
    static func level(of slot: Int, _ locals: UnsafeMutablePointer<Borrowed<Registration>>?) -> Borrowed<Container> {
        locals.unsafelyUnwrapped[slot].borrow { Borrowed($0.container) }
    }
}

