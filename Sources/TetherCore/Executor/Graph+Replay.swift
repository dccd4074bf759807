import Synchronization

// A plan run into the graph: the run of a resolve's plan (`run`), its replay, the variant it
// switches to, and what the graph records of the steps a plan made.

extension Graph {
    /// One resolve on this graph, its build replayed from `plan` unless that
    /// declines (a warm plan's decline, or a creation plan's, picks the plan for the
    /// caches' state it found); the result carries a reference for the caller.
    func run(_ registration: Registration, from container: Container,
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
                var picks = 0, holding = false, heldPicks = 0
                while built == nil, let replayed = plan {
                    // A step under construction further out on this thread: the plan runs up to where the
                    // build asks for it, and reports the cycle (`replayMeeting`; `meeting` finds a cut wherever
                    // `meets` is true: `cycle` before branch pickrest).
                    if !outer.isEmpty, let met = replayed.borrow({ $0.meeting(outer, progress.pointee.locals) }) {
                        // Its claims found container steps cached: the variant for them, met again (bounded as the picks).
                        if let variant = try replayMeeting(replayed, met, registration, from: container, arguments: arguments, built: &built) {
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
                    // Past the bound (`maxKeptPicks` after claims kept, else `maxCreationPicks`: claims let go of, a leaf
                    // gone): every cell the build would claim claimed (those kept its own) and the weak keys cached held
                    // (`claimInOrder`, as a no-wait resolve's first claims): no other thread changes the state they hold,
                    // so the plan picked for it once more finds it as it is and serves it. One declining all the same
                    // (a cached singleton reset under them, which no claim holds): its claims kept (`holdsAhead`), the
                    // keys found uncached now claimed too, and a pick again, as the build claims the reset key where it
                    // asks; each such pick holds one key more (past `maxCreationPicks` of them: the build).
                    if picks > (kept ? Self.maxKeptPicks : Self.maxCreationPicks) {
                        if holding {
                            heldPicks += 1
                            if heldPicks > Self.maxCreationPicks { plan = nil; break }
                        }
                        (holding, holdsAhead) = (true, true)
                        try claimInOrder(registration, from: container, evenOne: true)
                    }
                    plan = Self.creationPlan(registration, from: container, progress)
                }
                if built != nil {
                    progress.pointee.decline = nil  // a warm plan's decline, served by the plan picked after it
                } else {
                    Borrowed<ThreadState>(opaque: thread).borrow { $0.builds &+= 1 }
                    if backOffs == 0, let counts = Borrowed<ThreadState>(opaque: thread).borrow({ $0.planCounts }) {
                        PlanStats.countBuild(counts, registration, from: container, progress: progress)
                    }
                    (claimedInOrder, holdsAhead) = (false, false)
                    try checkBeforeNotWaiting(registration, from: container)
                    claimRoot = (.init(registration), .init(container))
                    built = try buildDeclined(registration, from: container, arguments: arguments)
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

    /// The build (`Graph+Build.swift`) of what no plan serves, for a reason `Plan.Decline` names: the last resort of
    /// a resolve (`run`) and of a resolver's request (`requestedUnkept`, `buildShared`). The walker's one caller (since
    /// branch isolate): deleting the build is deleting that file and this call.
    func buildDeclined(_ registration: Registration, from container: Container,
                       arguments: UnsafeBufferPointer<Argument> = .init(start: nil, count: 0)) throws(TetherError) -> Int {
        try build(registration, from: container, arguments: arguments)
    }

    /// Replays `plan`'s build into this (empty) graph: the plan's run (`Plan.replay(into:)`,
    /// the one step loop) leaves what the frames would have: the instances in `alive`, the
    /// table's entries, the completion queue (`enterReplayed`). Returns the root's index; nil,
    /// with the graph empty again, when the plan declined. The plan writes into `alive` in
    /// place: nothing else appends to it meanwhile (a factory resolving from a container gets
    /// a graph of its own).
    func replay(_ plan: Borrowed<Plan>, _ registration: Registration, from container: Container,
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
            // Holding every key its build would claim (`run` past its bound): the claims kept, and the keys found
            // published held, for the pick after it (its claims take them as their own).
            if holdsAhead { _ = keepClaims(); keptClaims = false }
            if creates { dropClaimedHits() }  // (a run declining before it took them)
            if !holdsAhead { releaseCells() }  // a leaf gone meanwhile, container steps some cached: nothing was made under them
            return try switchedToVariant(plan, registration, from: container, arguments: arguments)
        }
        return replayed(plan, creates: creates, from: container)
    }

    /// After `plan`'s run into this graph (`replay`, or `replayMeeting`'s gone past its cut): its creation steps pended
    /// to be published with the graph. Returns the root's index.
    @inline(__always)
    private func replayed(_ plan: Borrowed<Plan>, creates: Bool, from container: Container) -> Int {
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
    func variant(_ plan: Borrowed<Plan>, forCached cached: (bits: UInt, count: Int), cut: Bool = false, in container: Container,
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
    /// `built`: the root's index when the run went past the cut (`PlanProgress.cutMoves`: a dead weak step over the
    /// one met revived where the build's walk reaches it, which never meets it then), as `replay`'s.
    func replayMeeting(_ plan: Borrowed<Plan>, _ met: (step: Int, registration: Borrowed<Registration>, cut: Int, claims: Bool),
                               _ root: Registration, from container: Container,
                               arguments: UnsafeBufferPointer<Argument>, built: inout Int?) throws(TetherError) -> Borrowed<Plan>? {
        // Creation steps asked for before it: their cells claimed first, as the build's first claim does (with container
        // steps, those the build asks for before the cut, `claimWithContainerSteps`, which claims none past it: no move).
        cutClaims = (met.cut, met.step)
        defer { cutClaims = nil }
        progress.pointee.cutMoves = met.claims && plan.borrow { !$0.hasContainer && $0.failing == nil }
        (switchesToVariant, cutAskerCached) = (nil, false)  // (set by this plan's claims or run only)
        if met.claims, try !claimCreations(plan, root: root, from: container, meeting: true) {
            try replayPastFailure(plan, from: container, arguments: arguments)
            return switchedVariant(plan, from: container, cut: true)
        }
        // Else, as before a build: a resolve that must not wait or acts for a token checks first.
        if !met.claims { try checkBeforeNotWaiting(root, from: container) }
        let ran = try plan.borrow { plan in
            plan.replayCut(into: self, alive.appendNone(count: plan.stepCount), specs, progress, arguments, lookup: container,
                           cut: met.cut, met: met.step, creates: met.claims)
        }.get()
        if ran {
            built = replayed(plan, creates: met.claims, from: container)
            return nil
        }
        alive.removeAll()  // its words, empty: the run let go of what it made (`Plan.cutReached`)
        guard progress.pointee.cut == -1 else {
            if met.claims { releaseCells() }
            return switchedVariant(plan, from: container, cut: true) ?? leafVariant(plan, root, from: container)
        }
        // (A creating run gone on in a `PublishedVariant`, `Plan.cutPosition`: the askers in that walk. Its cut moved past a
        // revived step, `PlanProgress.cutMoves`: the next step met, `PlanProgress.met`.)
        let variant = met.claims ? progress.pointee.variant : -1
        let step = met.claims ? progress.pointee.met : met.step
        cutOpen = plan.borrow { $0.opened(before: step, progress.pointee.locals, parents: variant >= 0 ? $0.publishedVariants[variant].parent : nil) }
        defer { cutOpen = [] }
        throw Reentry.reentered(step == met.step ? met.registration : plan.borrow { $0.registration(of: step, progress.pointee.locals) }, by: self)
    }

    /// After a cut run's claims found the asker of the step it meets cached (`cutAskerCached`: read and cleared) where
    /// no variant `switchedVariant` picks serves (a failing, wide or child's plan): `Plan.leafVariant`, the plan with the
    /// cached container steps leaves, held by the thread till the resolve ends (`ThreadState.oneShotPlans`), which `run`
    /// runs instead (up to where it meets that step, if it does; a request's `runAskedPick`, as its pick). Nil: none (its
    /// walk declines). Out of line: rare.
    @inline(never)
    func leafVariant(_ plan: Borrowed<Plan>, _ root: Registration, from container: Container) -> Borrowed<Plan>? {
        guard cutAskerCached else { return nil }
        cutAskerCached = false
        switchesToVariant = nil
        guard let variant = plan.borrow({ $0.leafVariant(root, from: container, progress.pointee.locals) }) else { return nil }
        Borrowed<ThreadState>(opaque: thread).borrow { $0.oneShotPlans.append(variant) }
        progress.pointee.decline = nil  // not declined after all
        return Borrowed(variant)
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
    func madeUnderOuterCell(_ key: SharedCache.CellKey) {
        guard let cell = outerCells.first(where: { $0.key == key }), !madeUnderOuterCells.contains(where: { $0 === cell }) else { return }
        cell.madeBelow += 1
        madeUnderOuterCells.append(cell)
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

    /// `alive` let go of last made first where a plan replayed into it with RESOLVER slots whose gets
    /// built (`replayBuilt`): its steps' words are not in creation order then. What was appended after
    /// the run (completion callbacks' gets) goes first, then the plan's words, a step's resolver's right
    /// after it (`ReferenceWords.releaseUnmoved(lastFirst:built:)`, the failed run's order, `Plan.letGoBuilt`).
    /// The plan's words are those before the first range (nothing appends during a replay but its resolvers).
    /// Out of line: rare.
    @inline(never)
    func letGoReplayed(_ built: [(step: Int, from: Int, to: Int)]) {
        guard built[built.count - 1].to <= alive.count else { return }  // let go of by the run (`Plan.cutReached`)
        alive.wordsFromStart.releaseUnmoved(lastFirst: built[0].from, built: built, end: alive.count)
    }
}
