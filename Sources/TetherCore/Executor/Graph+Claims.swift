import Synchronization

// The graph's claims: a shared instance's creation cell (`claim`, `claimOne`: what `existing` finds no
// cache holding), every cell a root reaches in one order (`claimInOrder`); those of a plan run into the
// graph: creation cells and container steps' cells, claimed in the build's order, kept, let go of or taken
// over; the hooks tests use to force races. (`claim` to `claimInOrder` were Graph+Build.swift's before branch isolate.)

extension Graph {
    /// Claims the creation cell of a shared instance this graph must make, or
    /// takes the instance another thread published meanwhile (`SharedCache.claim`).
    /// The first claim of a singleton or weak cell claims, in one order, every
    /// cell the root's constructor edges reach (`claimInOrder`): graphs needing
    /// the same keys in other orders then never hold one each while waiting for
    /// the other's (which would make one start over, its factories run twice).
    func claim(_ registration: Registration, _ scope: Scope, in container: Container,
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
    func claimOne(_ registration: Registration, _ scope: Scope, in container: Container,
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
    func superseded(_ registration: Registration, _ cell: SharedCache.Cell) -> TetherError {
        SharedCache.shared.release(cell)
        if userCode == 0 { supersededValue = .init(registration) }
        return TetherError.valueLetGo(registration.key)
    }

    /// Whether this resolve can start over: the thread's outermost, no factory or callback of it under way.
    var canBackOff: Bool {
        userCode == 0 && Borrowed<ThreadState>(opaque: thread).borrow { $0.nesting == 1 && $0.graph === self }
    }

    /// Claims the cells of the uncached shared instances `root`'s constructor
    /// edges reach, sorted by key, when there are several (`evenOne`, claiming
    /// ahead for a no-wait resolve: also a single one, and the cached weak ones
    /// held). A claim refused (`.wouldBlock`, no-wait mode) is reported as `root`'s.
    /// `askingPath`: as `claimOne`'s (a failing plan's claims, `claimPastFailure`).
    func claimInOrder(_ root: Registration, from container: Container, evenOne: Bool = false,
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

    /// Whether the plan replaying into this graph claims the container steps it would claim late (`Plan.Step.claimsLate`)
    /// before any factory instead: a thread that must not wait or acts for a token (the build claims or checks
    /// ahead, `checkBeforeNotWaiting`; a refusal then declines, `claimContainerStep`, not after factories ran).
    var claimsLateAhead: Bool {
        Borrowed<ThreadState>(opaque: thread).borrow { $0.noWait || SharedCache.refusing(thread) != nil }
    }

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
    func claimCreations(_ plan: Borrowed<Plan>, root: Registration, from container: Container,
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
            // (`Plan.takePublished`: at its early check, going on in its `PublishedVariant`; one up to a cut when each such
            // run makes the step it meets, `Plan.switchesUpToCut`; a traced one tells its hits in the build's walk,
            // `Plan.tellPublishedInWalk`), unless the plan's check is not there: that is the build's.
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
            if registration.borrow({ Plan.Recorder.revives($0, scope) })
                && !plan.borrow({ p in p.revivesWhereReached(step, switching: !meeting || cutClaims.map { p.switchesUpToCut(step, met: $0.met) } == true,
                                                       met: meeting ? cutClaims?.met : nil, cutMoves: meeting && progress.pointee.cutMoves) })
                || (hit != nil && meeting) {
                // A dead weak instance to revive where the plan does not, which the build handles if no plan
                // picked next does. (Published meanwhile, in a run up to a cut: the plan picked next.)
                progress.pointee.decline = .notCached
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
    func claimPastFailure(_ plan: Borrowed<Plan>, root: Registration, from container: Container) throws(TetherError) -> Bool {
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
                best = (at, creation.step, creation.scope, p.askingPath(to: creation.step, locals))
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
    func replayPastFailure(_ plan: Borrowed<Plan>, from container: Container, arguments: UnsafeBufferPointer<Argument>) throws(TetherError) {
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
    func takesClaimedHits(_ plan: Borrowed<Plan>, from container: Container, keeping: Int = 0) -> Bool {
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
    func endClaims(_ plan: Borrowed<Plan>, from container: Container) -> Bool {
        if claimedHits.isEmpty || takesClaimedHits(plan, from: container) { return true }
        progress.pointee.decline = .notCached
        return keepClaims()
    }

    /// `endClaims`' decline keeping its claims, as the build claims as it goes: the keys found published held till
    /// the graph ends (`heldAhead`: cached for the pick that follows and its run, which take them as shared leaves),
    /// the cells held (the plan picked next takes them as its own: `claimCreations`' `claimedAhead`; the build's
    /// `claim` finds them in `cells`). The plan picked next is the one for the state the claims found (`run`; a
    /// resolver's request's, `request`: `runAsked`, its cells then among the graph's, `claimAsked` takes them as its own).
    /// Out of line: a race.
    @inline(never)
    func keepClaims(request: Bool = false) -> Bool {
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
    func dropClaimedHits() {
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
    static func beforeClaiming(_ root: Registration) {
        if claimHooked.load(ordering: .acquiring), let hook = beforeClaimingCreations.withLock({ $0 }) { hook(root) }
    }

    /// Tests only (`setAfterCheckBeforeNotWaiting`): called with the root of a resolve that must not wait or acts
    /// for a token once `checkBeforeNotWaiting` checked (not claimed) its cells, where another thread's claim
    /// lands in a race (`containerHeld` before branch cyclecut). Read only by such a resolve, while `checkHooked`.
    static let afterCheckBeforeNotWaiting = Lock<(@Sendable (Registration) -> Void)?>(nil)
    static let checkHooked = Atomic<Bool>(false)
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
    func claimWithContainerSteps(_ plan: Borrowed<Plan>, root: Registration, from container: Container,
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
        // A revive only a `PublishedVariant` moving steps under a container step takes (`Plan.revivesOnlyUnderMoved`), and a
        // container step's claim refused: past the claims, that revive is the build's unless every container step was claimed.
        var revivesMoved = false, refused = false
        // The plan for the set of container steps cached now instead (`replay`; all: its `cachedVariant`, else the creating
        // `mixedVariant`), whose claims decline if that changed since.
        func switchesForCached(_ reason: Plan.Decline) -> Bool {
            progress.pointee.decline = reason
            switchesToVariant = plan.borrow { p in p.cachedNow(in: resolving, locals) }
            dropClaimedHits()
            releaseCells()
            return false
        }
        claims: for step in plan.borrow({ $0.requestClaimOrder() }) {
            let (registration, isContainer, stepLookup, late) = plan.borrow { p in
                (p.registration(of: step, locals), p.steps[step].isContainer,
                 p.lookup(of: step, locals), p.steps[step].claimsLate)
            }
            if !published.isEmpty && plan.borrow({ p in published.contains { p.descends(step, from: $0) } }) { continue }
            if neverAsked.contains(step) { continue }
            // A container step under a singleton from further up is that one's container's (`Plan.Step.lookup`), as its build frame's.
            let container = isContainer ? stepLookup?.object ?? container : container
            let scope = registration.borrow { $0.specReference.borrow { $0.scope } }
            let under = plan.borrow { p in cachedContainers.contains { p.descends(step, from: $0) } }
            // As `existing`: its cache first, else its claim.
            let asking = { plan.borrow { $0.askingPath(to: step, locals) } }
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
                        if plan.borrow({ $0.needsContainersUncached }) { return switchesForCached(.containerInput) }
                    }
                } catch {
                    if backOff != nil { throw error }  // a wait cycle: the resolve starts over (`run`)
                    // The claims stop where the build's do; the run claims it again where the build asks for it
                    // (`Plan.claimContainerSteps`) and reports its failure there (refused to a thread that must not
                    // wait or acts for a token, the cell taken since `checkBeforeNotWaiting`: `containerHeld` before).
                    refused = true
                    break claims
                }
                continue
            }
            if under && leavesUntaken(plan, step, under: cachedContainers, locals) { continue }
            // One a step still made asks for too: the build makes it where that one asks, as the variant for the set does.
            if under { return switchesForCached(.notCached) }
            let key = registration.borrow { SharedCache.cellKey($0, scope, in: container) }
            var hit: Ref<Instance>?
            if !under && !cells.contains(where: { $0.key == key }) {
                do throws(TetherError) { hit = try found() } catch {
                    try claimFailed(plan, error, at: plan.borrow { p in (p.firstAsked(step), step, scope, []) })
                    return false
                }
            }
            // A dead weak instance to revive: the run revives it where its check is where the build's walk reaches it
            // (`Plan.takePublished`, as `claimCreations`' run; at its early check, going on in its `PublishedVariant`, in a run
            // neither traced nor up to a cut); else the build's.
            let revivable = registration.borrow { Plan.Recorder.revives($0, scope) }
            let revives = revivable
                && !plan.borrow { $0.revivesWhereReached(step, switching: !meeting && tracer == nil, met: meeting ? cutClaims?.met : nil) }
            if revivable && !revives && plan.borrow({ $0.revivesOnlyUnderMoved(step) }) { revivesMoved = true }
            // Published before its claim: taken, as the build takes it where its walk asks (`claimCreations`); not in a run up to a cut.
            if let hit, !under && !revives && !meeting {
                claimedHits.append((step, hit))
                published.append(step)
                continue
            }
            // (No cell, no hit: claimed further out on this thread and not made there, `createUnderOuter`: the run makes it
            // under that claim, `madeCreation`, as `claimCreations`' run does and the build.)
            // Traced, revived at an early check only, every container step cached now: the plan with them leaves, which has
            // none, switches to that `PublishedVariant` traced too (`Plan.tellPublishedInWalk`; since branch revsess).
            if revives && hit == nil && tracer != nil && !meeting && plan.borrow({ p in
                p.revivesWhereReached(step, switching: true) && p.cachedNow(in: resolving, locals).count == p.containerSteps.count
            }) {
                return switchesForCached(.notCached)
            }
            if revives || hit != nil {
                progress.pointee.decline = .notCached
                hit?.release()
                dropClaimedHits()
                releaseCells()
                return false
            }
        }
        // (A container step cached, refused, or a creation step published: the variant's run would not keep the build's order
        // under the container step it moves steps under, `Plan.PublishedVariant.movesUnderContainer`. Cached, none refused nor
        // published: the plan with those leaves instead (since branch revsess: its `PublishedVariant`s over container-scoped
        // leaves, the build's walk with them cached); else the build's.)
        if revivesMoved && !cachedContainers.isEmpty && !refused && published.isEmpty { return switchesForCached(.notCached) }
        if revivesMoved && (!cachedContainers.isEmpty || refused || !published.isEmpty) {
            progress.pointee.decline = .notCached
            dropClaimedHits()
            releaseCells()
            return false
        }
        return endClaims(plan, from: container)
    }

    /// Whether creation step `step`, first asked for under a container step found cached (`cached`), is one no step
    /// still made asks for: the build never asks for it (a dead weak key only a cached Session names, a singleton reset
    /// under one), so the claims (`claimWithContainerSteps`, a request's `claimAsked`) neither claim it nor the run makes
    /// it; noted in `unclaimedUnder`, which the run checks it skips (`Plan.execute`). False: the build's walk asks for it.
    func leavesUntaken(_ plan: Borrowed<Plan>, _ step: Int, under cached: [Int],
                               _ locals: UnsafeMutablePointer<Borrowed<Registration>>) -> Bool {
        guard plan.borrow({ $0.untaken(step, under: cached, locals) }) else { return false }
        unclaimedUnder.insert(step)
        return true
    }
}
