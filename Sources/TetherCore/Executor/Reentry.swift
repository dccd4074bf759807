/// A resolve nested in a factory (through a resolve call, a lazy provider, a
/// binding's resolve) that asks for an instance the thread is constructing
/// further out: a constructor cycle, reported with its whole path, never a
/// second instance or a recursion down to the nesting limit. A nested resolve
/// runs its plan when no step of it is under construction further out
/// (`Plan.meets`), else builds step by step, each step checked against that.
enum Reentry {
    /// The registrations resolves under way on this thread are constructing,
    /// outermost first: a plan's steps from its root to the one whose factory
    /// runs, then the frames of the thread's graph and, for each nested graph, the steps of the
    /// plan it runs (`Graph.constructing`) and its frames.
    static func constructing(_ thread: ThreadState) -> [Borrowed<Registration>] {
        // A binding's replay calls into the library only from a factory of its own: outermost.
        var registrations: [Borrowed<Registration>] = thread.replaying.map { .init($0) }
        let progress = thread.planProgress.pointee
        if let plan = progress.plan { registrations += plan.borrow { $0.constructing(at: progress.step, progress.locals) } }
        registrations += thread.graph.constructing
        for graph in thread.nestedGraphs { registrations += graph.borrow { $0.constructing } }
        return registrations
    }

    /// What a resolve from `container` meets of `outer` (`constructing`): not a container-scoped key made further
    /// out for another container while `container` has its own cached. The resolve takes that one, as a resolve of
    /// the key itself does (a cache hit): nothing is constructed twice (conformance/model.py, `resolve`).
    static func met(_ outer: [Borrowed<Registration>], from container: Container) -> [Borrowed<Registration>] {
        outer.filter { registration in
            registration.borrow { r in
                let scope = r.spec.scope
                guard scope.isPerResolvingContainer, let hit = SharedCache.cached(r, scope, in: container) else { return true }
                hit.release()
                return false
            }
        }
    }

    /// Whether anything but `graph` is constructing on this thread: a plan's step, or a frame
    /// of another graph. A graph's own frames it checks itself; what others construct is
    /// known to it only through `outer`, which must then be taken afresh: another graph may
    /// have begun constructing after this one began (an older callback's resolver used from
    /// a resolve nested further in).
    static func othersConstruct(_ thread: ThreadState, besides graph: Graph) -> Bool {
        if thread.planProgress.pointee.plan != nil || !thread.replaying.isEmpty { return true }
        if thread.graph !== graph && thread.graph.isConstructing { return true }
        for nested in thread.nestedGraphs where !(nested === Borrowed(graph)) {
            if nested.borrow({ $0.isConstructing }) { return true }
        }
        return false
    }
}

extension Reentry {
    /// How a registration on a re-entry's path was asked for by the one before it.
    enum Link: Equatable {
        /// As a dependency of it (a slot, a plan's or a replay's step).
        case slot
        /// By a completion callback of it, through that callback's resolver.
        case callback
        /// By a resolve nested in its factory (a resolve call, or a lazy provider it called): a graph of its own.
        case nested
        /// By a resolve nested in a completion callback of it (not through the resolver): a graph of its own.
        case nestedInCallback

        var isNested: Bool { self == .nested || self == .nestedInCallback }
    }

    /// A registration on the chain of what this thread is resolving, how the one before it asked
    /// for it, and whether it is under construction (else made: a nested resolve's root, or the
    /// instance, whose completion callback runs).
    struct Step {
        let registration: Borrowed<Registration>
        var link: Link
        let underConstruction: Bool
    }

    /// The cycle error of `registration` asked for by `graph`, a resolve nested while this
    /// thread constructs it further out: the path from where it is under construction, through
    /// every resolve nested since and how each key asked for the next (`TetherError.reentered`).
    /// Built only to report one (the chain is not kept while resolving).
    static func reentered(_ registration: Borrowed<Registration>, by graph: Graph) -> TetherError {
        let steps = chain(ThreadState.currentReference.object, asking: registration, in: graph)
        let identity = registration.borrow { $0.constructionIdentity }  // (a decorated registration's move is the one it moved from)
        let start = steps.dropLast().firstIndex {
            $0.underConstruction && ($0.registration === registration || $0.registration.borrow { $0.constructionIdentity } == identity)
        }
        // (Not found on the chain cannot happen: the graph found it among what was constructing further out.)
        let path = steps[(start ?? max(steps.count - 2, 0))...]
        let keys = path.map { $0.registration.borrow { $0.key } }
        guard keys.count >= 2 else { return TetherError.reentered(keys + keys, links: [.nested]) }
        return TetherError.reentered(keys, links: path.dropFirst().map(\.link))
    }

    /// What this thread is resolving, outermost first, ending in `asking` asked for by `graph` (the
    /// innermost, or an older one whose resolver the innermost used): a binding's replay, a plan's
    /// steps, then each graph's part (`Graph.chainPart`), the first of a part asked for by a resolve
    /// nested in the last of the part before.
    private static func chain(_ thread: ThreadState, asking: Borrowed<Registration>, in graph: Graph) -> [Step] {
        var steps: [Step] = []
        var inCallback = false
        func add(_ part: [Step], endsInCallback: Bool) {
            guard !part.isEmpty else { return }
            var part = part
            part[0].link = inCallback ? .nestedInCallback : .nested
            steps += part
            inCallback = endsInCallback
        }
        add(thread.replaying.map { Step(registration: .init($0), link: .slot, underConstruction: true) }, endsInCallback: false)
        let progress = thread.planProgress.pointee
        if let plan = progress.plan {
            add(plan.borrow { $0.constructing(at: progress.step, progress.locals) }.map { Step(registration: $0, link: .slot, underConstruction: true) },
                endsInCallback: false)
        }
        let graphs = [Borrowed(thread.graph)] + thread.nestedGraphs
        for (i, part) in graphs.enumerated() {
            let (own, endsInCallback) = part.borrow { $0.chainPart(asking: i == graphs.count - 1 && $0 === graph ? asking : nil) }
            add(own, endsInCallback: endsInCallback)
        }
        // An older graph asked (a completion callback's resolver used further in): for the innermost.
        if !(graphs[graphs.count - 1].object === graph) {
            add([Step(registration: asking, link: .slot, underConstruction: false)], endsInCallback: false)
        }
        return steps
    }
}

extension Reentry {
    /// A binding runs the described plan of `key` from `container` itself and calls into the
    /// library from the factory of step `step` (a resolve nested in it): until `leaveReplay`,
    /// this thread's resolves see the steps from the plan's root down to `step` under
    /// construction, as they see a plan's or a graph's own (a key among them is a cycle).
    /// Registrations already entered are not added again (the same factory calling in again
    /// from a resolve nested further in).
    static func enterReplay(_ key: Key, step: Int, from container: Container) throws(TetherError) {
        guard let plan = try container.describePlan(key, completions: true) else {
            throw TetherError.noDescribedPlan(key)
        }
        let chain = try plan.constructing(step, of: key)
        let thread = ThreadState.currentReference.object
        let added = chain.filter { r in !thread.replaying.contains { $0 === r } }
        thread.replaying += added
        thread.replayGroups.append(added.count)
    }

    /// A binding's factory for the last of `keys` (the path a resolve from `container` took to
    /// it, root first, as a failure's parts name it) suspended and goes on outside the library
    /// (Python's `await`): until `leaveReplay`, this thread's resolves see the registrations of
    /// that path under construction, as `enterReplay` does a described plan's steps, so a resolve
    /// the factory makes meanwhile that needs one of them is a cycle before any factory runs
    /// twice. Each key is looked up as a resolve walks the path: from `container`, and below a
    /// singleton from the singleton's own container; a key with no registration there any more
    /// (re-registered meanwhile) is left out.
    static func enterConstructing(_ keys: [Key], from container: Container) {
        var lookup = container
        var chain: [Registration] = []
        for key in keys {
            guard let registration = lookup.registration(for: key) else { continue }
            chain.append(registration)
            if registration.spec.scope.resolvesFromOwnContainer { lookup = registration.container }
        }
        let thread = ThreadState.currentReference.object
        let added = chain.filter { r in !thread.replaying.contains { $0 === r } }
        thread.replaying += added
        thread.replayGroups.append(added.count)
    }

    /// Undoes the last `enterReplay` or `enterConstructing` of this thread; false when there was none.
    static func leaveReplay() -> Bool {
        let thread = ThreadState.currentReference.object
        guard let count = thread.replayGroups.popLast() else { return false }
        thread.replaying.removeLast(count)
        return true
    }
}

extension Container {
    /// See `Reentry.enterReplay`.
    public func enterReplay(_ key: Key, step: Int) throws(TetherError) { try Reentry.enterReplay(key, step: step, from: self) }
    /// See `Reentry.enterConstructing`.
    public func enterConstructing(_ keys: [Key]) { Reentry.enterConstructing(keys, from: self) }
    /// See `Reentry.leaveReplay`.
    public static func leaveReplay() -> Bool { Reentry.leaveReplay() }
}

/// The plan whose factories a resolve on this thread is calling and the step whose
/// factory runs; written by the plan, read by `Reentry`. The thread's, for a resolve
/// while nothing else is under construction; a nested resolve's graph has its own.
struct PlanProgress {
    var plan: Borrowed<Plan>?
    var step = 0
    /// A child's own registrations bound to a plan's local steps by slot (`Plan.fits` writes them),
    /// `Plan.maxSteps` words allocated with the progress, grown for a component of more slots (`reserveLocals`).
    private(set) var locals = UnsafeMutablePointer<Borrowed<Registration>>.allocate(capacity: Plan.maxSteps)
    private var localsCapacity = Plan.maxSteps
    /// Buffers `locals` outgrew, freed with the progress (`free`): a reader that took the address before the
    /// growth reads what it read before, as when a nested resolve binds `locals` again (`Graph.run`'s back-off).
    private var outgrownLocals: [UnsafeMutablePointer<Borrowed<Registration>>] = []
    /// Why the last run declined (`Plan.execute`), for `PlanStats` (read only while counting).
    var decline: Plan.Decline?
    /// A run up to a cut (`Plan.replayCut`): the first step it does not make; -1 once it reached it.
    var cut = 0
    /// With `cut`: the step the build meets under construction further out (`Plan.meeting`).
    var met = -1
    /// With `met`: the run may go past the cut (a creating one's, no failing plan's nor one with container steps; a request's
    /// where the plan meets no other key further out, `Plan.meetsOnly`): a creation step over `met` found where the build's
    /// walk reaches it, at or before the cut (a dead weak one revived), moves the cut (`Plan.takePublished`), as the build then
    /// never asks for `met`: to where it asks for the next key it meets (`Plan.nextMeeting`, `met` and `cut` that one's, since
    /// branch revivev), else past the run's end. Set before the claims (which read it).
    var cutMoves = false
    /// The `SupersedeClock` read before the resolve picked its plan (`Graph.resolve`): what a change since
    /// superseded is not cached (`Graph.run`, `Plan.RequestRun` copy it before any factory runs).
    var builtSince: UInt = 0
    /// The `Plan.PublishedVariant` a creating run went on in (`Plan.takePublished`), -1: none; its steps are
    /// entered into the graph in that order (`Plan.enterCreated`).
    var variant = -1

    /// Makes `locals` hold at least `slots` registrations (a plan of a child whose component stacks more
    /// than `Plan.maxSteps` slots: `Plan.fits`).
    @inline(__always)
    mutating func reserveLocals(_ slots: Int) {
        if slots > localsCapacity { growLocals(slots) }
    }

    @inline(never)
    private mutating func growLocals(_ slots: Int) {
        let capacity = max(slots, 2 * localsCapacity)
        outgrownLocals.append(locals)
        locals = .allocate(capacity: capacity)
        localsCapacity = capacity
    }

    /// Frees the progress at `progress` (allocated and initialized by its owner) and its `locals`.
    static func free(_ progress: UnsafeMutablePointer<PlanProgress>) {
        progress.pointee.locals.deallocate()
        for buffer in progress.pointee.outgrownLocals { buffer.deallocate() }
        progress.deinitialize(count: 1)
        progress.deallocate()
    }
}

extension Plan {
    /// Whether a step of this plan is among `outer`, what this thread constructs further out
    /// (`Reentry.constructing`), as `Graph.existing` compares (a decorated registration's move is
    /// the registration it moved from): a nested resolve running it would reach a cycle, which
    /// the build reports. `locals`: a child's registrations bound by the plan's lookup.
    func meets(_ outer: [Borrowed<Registration>], _ locals: UnsafeMutablePointer<Borrowed<Registration>>) -> Bool {
        let identities = outer.map { $0.borrow { $0.constructionIdentity } }
        // A failing plan's open frames: the build checks them first (its root's, then each it enters).
        for registration in failing?.allOpen(locals) ?? [] where identities.contains(registration.borrow { $0.constructionIdentity }) { return true }
        for i in 0..<steps.count {
            if identities.contains(registration(of: i, locals).borrow { $0.constructionIdentity }) { return true }
        }
        return false
    }

    /// With `meeting`'s step `met`: whether it is the only key among `outer` the plan meets (no other step, no failing
    /// plan's open frame), so a creation step over it the run finds where the build's walk reaches it (revived, published:
    /// `takePublished`) spares the run its cut: the build never asks for `met` then, nor meets another (`PlanProgress.cutMoves`).
    func meetsOnly(_ met: Int, _ outer: [Borrowed<Registration>], _ locals: UnsafeMutablePointer<Borrowed<Registration>>) -> Bool {
        guard met < steps.count, failing == nil else { return false }
        let identities = outer.map { $0.borrow { $0.constructionIdentity } }
        return !steps.indices.contains { i in
            i != met && identities.contains(registration(of: i, locals).borrow { $0.constructionIdentity })
        }
    }

    /// With `meets`: where a build of this graph stops, the first step it asks for (in its walk's
    /// pre-order) whose registration is among `outer` (`Graph.existing` refuses it before its
    /// dependencies): that step, its registration, and `cut`, the first of its dependencies' steps
    /// (every step before it the build made by then, none from it on: `replayCut`). A step's
    /// dependencies' steps run from `cut` to itself (post-order), so the pre-order is by `cut`, an
    /// asker before what it asked. A failing plan's open frame `k` (`Failing.openAt`: asked for once the
    /// steps before it are made, before any from there on) is met as `step` `steps.count + k` (no step's).
    /// Nil for a plan this does not cover. A plan that reads the request claims the container steps the build asks for
    /// before that one (`Plan.claimContainerSteps`). A creation plan's run claims its cells first (`Graph.claimCreations`),
    /// as the build does at its first claim (`Graph.claimInOrder`), when it asks for a creation step before that one.
    /// The frames a build has open when it asks for what `meeting` met, `step`: its askers (a failing plan's
    /// open frames above them too); a failing plan's open frame `k` (`steps.count + k`): those outside it.
    /// `parents`: a `PublishedVariant`'s askers, the run up to the cut gone on in it (nil: the plan's, `Step.parent`).
    func opened(before step: Int, _ locals: UnsafeMutablePointer<Borrowed<Registration>>,
                parents: UnsafeBufferPointer<Int>? = nil) -> [Borrowed<Registration>] {
        if step >= steps.count { return Array(failing.unsafelyUnwrapped.allOpen(locals)[..<(step - steps.count)]) }
        let parent = parents?[step] ?? steps[step].parent
        if parent >= 0 { return constructing(at: parent, locals, parents: parents) }
        return failing?.opened(by: step, locals) ?? []
    }

    func meeting(_ outer: [Borrowed<Registration>], _ locals: UnsafeMutablePointer<Borrowed<Registration>>)
        -> (step: Int, registration: Borrowed<Registration>, cut: Int, claims: Bool)? {
        let identities = outer.map { $0.borrow { $0.constructionIdentity } }
        // (Read on the first step met: a nested resolve meeting none pays what `meets` does.)
        var first: [Int] = []
        var met = firstMet(identities, locals, past: -1, &first).map { (step: $0.step, registration: $0.registration, cut: $0.cut, claims: false) }
        // A failing plan's open frames, outermost first: one asked for no later than that step (it asks for what follows it).
        if let failing {
            let open = failing.allOpen(locals)
            if let k = open.indices.first(where: { k in identities.contains(open[k].borrow { $0.constructionIdentity }) }),
               met == nil || failing.openAt[k] <= met!.cut {
                met = (steps.count + k, open[k], failing.openAt[k], false)
            }
        }
        // A creation step asked for before it: the build claimed every creation cell by then.
        if let m = met {
            if first.isEmpty { first = firstAskedOfEach() }
            met!.claims = creations.contains { first[$0.step] < m.cut || first[$0.step] == m.cut && $0.step > m.step }
        }
        // Nil exactly where `meets` is false (every step or open frame it finds is met here): the runs take no
        // other path for a plan that meets a key further out (`cycle` before branch pickrest, none counted since branch requests).
        assert((met != nil) == meets(outer, locals), "meeting finds no cut for a plan that meets \(outer.count) keys")
        return met
    }

    /// The step among `identities` (what this thread constructs further out) the build's walk asks for first (its pre-order:
    /// by where it is first asked, `firstAskedOfEach`, written to `first` on the first one found, an asker first), of those first
    /// asked for past step `past` (-1: all): `meeting`'s, and the next one once a step over that is revived where the walk
    /// reaches it (`nextMeeting`).
    private func firstMet(_ identities: [ObjectIdentifier], _ locals: UnsafeMutablePointer<Borrowed<Registration>>, past: Int,
                          _ first: inout [Int]) -> (step: Int, registration: Borrowed<Registration>, cut: Int)? {
        var met: (step: Int, registration: Borrowed<Registration>, cut: Int)?
        for i in 0..<steps.count {
            let registration = self.registration(of: i, locals)
            guard identities.contains(registration.borrow({ $0.constructionIdentity })) else { continue }
            if first.isEmpty { first = firstAskedOfEach() }
            guard first[i] > past else { continue }
            if met == nil || first[i] < met!.cut || first[i] == met!.cut && i > met!.step { met = (i, registration, first[i]) }
        }
        return met
    }

    /// A run up to a cut (`meeting`, no failing plan's) past creation step `revived`, taken where the build's walk reaches it
    /// (revived, published, `Plan.takePublished`) over the step it met: the build never asks for what `revived` asked for, and
    /// goes on to the next step among `outer` it asks for, past `revived` (every other step met is: one under none of its
    /// askers), which the run meets there (its cut, `PlanProgress.cutMoves`). Nil: none, the run goes on to its end.
    func nextMeeting(past revived: Int, _ outer: [Borrowed<Registration>], _ locals: UnsafeMutablePointer<Borrowed<Registration>>)
        -> (step: Int, cut: Int)? {
        var first: [Int] = []
        return firstMet(outer.map { $0.borrow { $0.constructionIdentity } }, locals, past: revived, &first).map { ($0.step, $0.cut) }
    }

    /// Where the build's walk first asks for step `i`: the first of its dependencies' steps (post-order), a cut there.
    func firstAsked(_ i: Int) -> Int {
        var first = i
        while first > 0 && descends(first - 1, from: i) { first -= 1 }
        return first
    }

    /// `firstAsked` of every step, in one pass (a step's dependencies' steps come right before it, post-order).
    func firstAskedOfEach() -> [Int] {
        var first = Array(0..<steps.count)
        for i in 0..<steps.count where steps[i].parent >= 0 { first[steps[i].parent] = min(first[steps[i].parent], first[i]) }
        return first
    }

    /// The steps a build meeting step `met` at `cut` (`meeting`) never asks for, a bit each (a plan of any size):
    /// those first asked for from the cut on, but `met`'s askers (first asked for at the cut, after it in post-order).
    /// A creating request's run up to the cut claims none of their cells (`Graph.claimAsked`), as the build never does.
    /// (Not `Plan.untaken`: a step the build reaches that no step still made takes.)
    func neverAsked(from cut: Int, met: Int) -> StepBits {
        let first = firstAskedOfEach()
        var bits = StepBits()
        for i in 0..<steps.count where first[i] > cut || first[i] == cut && i <= met { bits.insert(i) }
        return bits
    }
}
