import Synchronization

// A resolver's requests (a RESOLVER slot's or a completion callback's get) made while the graph
// builds or a plan runs: found, planned or built.

extension Graph {
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

    /// `requestedUnkept`, what a failed one made kept as the graph's (`keepFailedRequest`).
    @inline(__always)
    func requested(_ registration: Registration, from lookup: Container, _ counts: PlanStats.Counts?) throws(TetherError) -> Int {
        let from = alive.count
        do { return try requestedUnkept(registration, from: lookup, counts) } catch {
            keepFailedRequest(from: from)
            throw error
        }
    }

    /// A resolver's request that failed, having made `alive[from...]` (the build's, or its plan's run entered,
    /// `enterAsked`): every one of those the graph's own again (`ReferenceStack.reown(from:)`), whoever holds it
    /// too, so the graph lets go of each in its place, last made first, with its others (not with a dependent
    /// the request made: a failure's order, as `abort`'s). Out of line: the cold path.
    @inline(never)
    func keepFailedRequest(from: Int) { alive.reown(from: from) }

    @inline(__always)
    private func requestedUnkept(_ registration: Registration, from lookup: Container, _ counts: PlanStats.Counts?) throws(TetherError) -> Int {
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
        return try buildDeclined(registration, from: lookup)
    }

    /// `buildRequested` of a singleton, weak or container-scoped key: this graph's or its cache's instance (`existing`
    /// takes it, claiming nothing), else its plan for the caches' state (a creation plan: its cells
    /// claimed as the build's walk reaches each, `claimAsked`) replayed into this graph (`runAsked`), else the build.
    /// Out of line: most requests ask for a key the graph has.
    @inline(never)
    func buildShared(_ registration: Registration, from lookup: Container, _ counts: PlanStats.Counts?) throws(TetherError) -> Int {
        if isFound(Borrowed(registration), in: lookup) {
            if let counts { counts.countRequest(found: true, built: nil) }
            // (`build`'s own look before branch isolate, the same one. Nil only when its cache let go of it since
            // `isFound` looked, another thread's reset or a weak instance's last holder gone: its cell claimed, the
            // build, whose look finds it claimed, as before.)
            if let found = try existing(Borrowed(registration), registration.specReference, key: registration.key, in: .init(lookup)) {
                return found
            }
            return try buildDeclined(registration, from: lookup)
        }
        // (A container-scoped key's plan is its warm one, its root a container step claimed in the request's container;
        // declining `notCached`, its creation plan, below.)
        var declined: Plan.Decline?
        if let made = try runAsked(registration, from: lookup, declined: &declined, counts) { return made }
        // A container-scoped key over a singleton or weak key not cached (its warm plan's leaf missing, from a child with
        // registrations of its own: the component's warm plan declining `notCached`): the plan for the caches' state, as
        // `requestedUnkept` picks one not shared (the build before branch fuzzreq).
        if declined == .notCached, registration.specReference.borrow({ $0.scope.isPerResolvingContainer }),
           let made = try runAsked(registration, from: lookup, declined: &declined, counts, creating: true) {
            return made
        }
        if let counts { counts.countRequest(found: false, built: declined) }
        return try buildDeclined(registration, from: lookup)
    }

    /// A resolver's request made while a request's plan runs on this graph (a factory of that plan using an
    /// open resolver of the graph, a callback's kept in a global): built, on the graph the build would have
    /// by then: the plan's steps made so far entered (`enterRunning`: a graph-scoped key is the plan's), the
    /// ones under construction marked so (a request for one is the build's cycle, its path through them).
    @inline(never)
    func requestedMeanwhile(_ registration: Registration, from lookup: Container, _ counts: PlanStats.Counts?) throws(TetherError) -> Int {
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
    /// completion callbacks (`enterStep`). Every made one (a transient too), in the order made (a request's run
    /// is in step order), so what the request made meanwhile comes after them, as the build's order; a failed
    /// request lets go of them in that order (`keepFailedRequest`). `enterAsked` lets go of their words' references.
    func enterRunning(_ plan: Borrowed<Plan>, _ running: (words: ReferenceWords<Instance>, root: Borrowed<Registration>, lookup: Borrowed<Container>, base: Int)) {
        plan.borrow { p in
            for i in 0..<p.stepCount where !running.words.isNone(i) && !requestSkips.contains(i) && !enteredEarly.contains(where: { $0.step == i }) {
                guard !p.steps[i].isShared else { continue }
                let index = alive.append(running.words[i].retained())
                enteredEarly.append((i, index))
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

    /// Whether `registration` is under construction in this graph (a frame's).
    func constructs(_ registration: Borrowed<Registration>) -> Bool { table.state(registration) == GraphTable.constructing }
}
