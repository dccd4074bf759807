#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

extension Plan {
    /// Why a resolve went to `Graph.build` instead of a plan: why no plan was
    /// found (`Registration.planDecline`), what the recorder declined (thrown at its site in
    /// `Plan.Recorder` and `Plan.record`, kept by a declined plan), or what a run found before
    /// any factory ran (`Plan.execute`). `PlanStats` counts resolves by it.
    enum Decline: Int, Error, CaseIterable {
        // (`plansOff` before branch twooracles: `Container.usesPlans` set false, the build oracles of
        // ContainerInputPlanTests and RevivePlanTests last, TETHER_NO_PLANS=1 too before branch noplansoff.)
        // The recorder: the graph is not one a plan replays.
        case containerInput
        // (`sharedRoot` before branch pickrest: a singleton or weak root not cached that no plan makes, `notCached`'s
        // shapes for a root, counted `notCached` now; `cycle`: a nested resolve's or a request's plan meeting a key further
        // out where `Plan.meeting` found no cut, never since `meeting` finds one wherever `Plan.meets` is true, and the
        // recorder's cycle, a failing plan's, `metFailure`.)
        // (`tooLarge` before branch graphmasks: a container step past the 64th step in a plan that replays into a graph,
        // whose one-word masks the graph's are now `StepBits`, `Graph.claimedSkip`, `lateContainerClaims`, `unclaimedUnder`.)
        // (`failureUnderContainer` before the third branch picks: a failing plan's variant, `Plan.failingVariant`, not
        // recorded when the configuration changed between the pick and its walk, which records it for the configuration
        // it sees now; a child's component changed: the resolve picks again, `Plan.pickedForCaches`' nil.)
        // (`foreignCreation` before branch strictlevels: a stacked level's singleton in a strict container, which
        // the component keys now, `Plan.ComponentSlot.keysStrict`; `childTable` before branch childtable: a component
        // past `Plan.maxSteps` slots or with a cleared slot, which `locals` grown per plan and `Plan.ComponentSlot.cleared` plan;
        // `childLocal` before branch failunder2: an ALL slot's item registered in a level after the component's read, which
        // the walk lists from the component now, `Plan.Recorder.allRegistrations`.)
        /// What only a description's walk declines (`Container.describePlan`: a slot made per resolve, a
        /// container-scoped key with completion callbacks): never a resolve's, which the core's recorders
        /// plan (branch declinesweep: `weakSlot`, `lazySlot`, `weakLazySlot`, `allSlot`, `factorySlot`,
        /// `containerScoped` before, none ever counted).
        case described
        /// The walk met an error the build reports (a key not registered, runtime arguments below the root, a
        /// constructor cycle, a captive refused: `Recorder.met`'s marker): a failing plan (`Plan.Failing`) serves it,
        /// never counted (`missing`, `arguments` before branch resolverslot2, counted only where `finishSlots` declined
        /// a failing plan's slot; the cycle `cycle`, the captive `other`, before branch pickrest).
        case metFailure
        // A run, before any factory ran.
        case notCached, containerHeld
        // (`creationPicks` before the third branch picks: caches another thread changed under every creation plan picked,
        // past `Graph.maxCreationPicks` or `maxKeptPicks`, which the resolve now holds every key its build would claim
        // for, then picks once more, `Graph.run`, `runAsked`.)
        /// None of the above (a plan recorded but not installed, say).
        case other
        // A resolver's request (a RESOLVER slot's or a completion callback's get): counted apart (`PlanStats.Counts.countRequest`).
        case requestInGraph, requestSlots, requestReadsRequest
        // (`requestNested`, `requestShared` before branch reqlarge: a creation plan past 64 steps meeting a key the thread
        // constructs further out, or whose claim is refused: its run goes up to where the build asks for that key now, as a
        // smaller plan's, `Graph.runAsked`, and so does one meeting a key this graph constructs, `requestInGraph` before, as
        // does a singleton or weak step below a key the graph has that a step made takes too, `Plan.stepsOnlyUnder`.)
        // (`claimPastFailure` before branch cutpast: a failing plan's first claim failing after factories of the build,
        // which the run reports where the build's walk asks for that key now, after a run up to it, `Graph.replayPastFailure`.)

        /// False for the reasons no resolve or request reaches `Graph.build` with (`described`: a description's walk
        /// only; `metFailure`: a failing plan serves it), asserted where `PlanStats` counts a build.
        var reachesBuild: Bool { self != .described && self != .metFailure }

        /// One line for the table (`PlanStats.report`).
        var text: String {
            switch self {
            case .containerInput: "a graph-scoped instance made for a container-scoped step that a step outside it takes too, where no cachedVariant serves: a traced run up to a cut (a nested resolve's or a request's) finding the container steps cached, a container step claimed late found cached where it is claimed (or by a get) whose build makes what a step outside takes too in an order the plan's steps do not give where the run cannot go on in the walk's order (Plan.lateHitsKeepOrder, Plan.goesOnInWalk: past the claim a step with slots or cells or opening frames, a container step, a late claim left past where the run goes on (Plan.goesOnEveryWay, several late steps, each way a get or claim finds them, since branch late2: a third late step claimed past that point, or past a get's step and another's hit, ContainerInputPlanTests.aThirdLateClaimedContainerStepIsStillBuilt; a late step with slots, cells or frames); a PublishedVariant; completion callbacks; Plan.goingOn: a check before the claim of a step made past it, one that walk puts before the claim, creation steps made out of step order; a run up to a cut or stopping at a missing value; past three such steps, or a slot made per resolve naming a step under one) (a described plan: any made one)"
            case .described: "a shape only a described plan declines (never a resolve's)"
            case .metFailure: "an error the build reports (a key not registered, an argument below the root, a cycle, a captive), which a failing plan reports too (never a resolve's)"
            case .notCached: "at run time: a shared dependency or root not cached that no plan makes (a dead weak one a binding would revive, one of whose own dependencies a later step takes too, in a run that does not switch to a PublishedVariant: a request's, a traced one or one up to a cut over container steps (a traced one finding them all cached switches to the plan with them leaves, since branch revsess), one whose variant over container steps a moved dependency goes under one of those in where that variant's check is not before any factory of the plan's own run, or the claims find a container step refused or a creation step published (since branch revivev: PublishedVariant.movesUnderContainer; one found cached switches to the plan with it a leaf, whose variant serves it, since branch revsess; or the step under one, one under it, slots), one up to a cut into a variant that never makes the step it meets, or one whose check is where the walk reaches it over the step the cut meets where the run cannot go past the cut (PlanProgress.cutMoves: the plan has container steps or fails, or, a request's, meets another key further out or has steps past the cut outside the met one's the build then asks for; a resolve's moves to the next key met since branch revivev, Plan.nextMeeting); or cached singletons reset under the keys held past Graph.maxCreationPicks more than maxCreationPicks times over (each pick after one holds it too, since branch reachable); a value none provides before a container step's failed claim that only a step past its first asker, under a cached container step, asks for; a creation plan over a container step claimed late whose hit would go on in the walk's order where a run cannot (containerInput's shapes of Plan.goesOnInWalk and Plan.goingOn; a creating run goes on since branch cincreate): the warm plan's run)"
            case .containerHeld: "at run time, in the graph's replay: some container steps cached with a step they asked for taken by one made, where no plan for that set of cached steps serves (Plan.mixedVariant: a walk that does not fit, a set not every container step of was looked at; past Plan.maxMixedVariants one recorded for the run since branch creatingmixed; a creating or request run up to a cut switches since branch heldcut), or one a cut run asks for cached where no plan with it a leaf serves (since branch cutswitch a cut run switches, since branch heldcut a creating or request one too, since branch heldrest a failing, wide or child's plan's, a resolve's or a request's, to Plan.leafVariant: left, a leafVariant whose walk declines) (a claim refused to a thread that must not wait or acts for a token is the run's error where the build asks, since branch cyclecut); or a run up to a cut switching to a variant more than Graph.maxCreationPicks times (another thread publishing a container step at each switch, RacedDeclinePlanTests.containerStepsPublishedUnderEveryVariantOfARunUpToACutAreStillBuilt: Graph.run lets that variant go, and every pick after, held or not, finds a set cached; running that variant as a pick, held past the bound, still switched at every held pick, cause not found)"
            case .other: "other: no reason of its own (no plan recorded for the configuration, a child whose component no plan keys: Plan.componentLevels nil, a stacked registration in no slot, a run that declined noting none; the maxPlans-th creation plan recorded by another thread between a resolve's check and its install runs a one-shot plan since branch raced, RacedDeclinePlanTests.theMaxPlansthCreationPlanRecordedByAnotherThreadMeanwhileRunsAPlan)"
            case .requestInGraph: "a resolver's request whose plan has a step below a key the graph has that a step it makes takes too (a value, a container-scoped leaf, a step first asked for under a key built from another lookup) where the build's walk with those keys as leaves is not the plan's order (Plan.walkedWithGraphKeys: another order, a value or leaf not the graph's, a plan with creation, container or failing steps, a run up to a cut; such steps made where the plan has them since branch reqgraph, ResolverRequestPlanTests.aValueBelowAKeyTheGraphHasThatAMadeStepTakesRunsThePlan), or a failing plan's open frame the graph has where the walk with those keys as leaves declines or has a cachedVariant (Plan.graphVariant; such a walk run since branch failopen, taking them from the graph: ResolverRequestPlanTests.aFailingPlansOpenFrameTheGraphHasRunsThePlanTakingIt, reached by a configuration changed in a callback before its request; built before), or, made while a request's plan runs with frames opened since, a key this graph constructs"
            case .requestSlots: "a resolver's request whose plan has a slot, its owner made, naming a step not shared only a key taken from the graph asked for, where the build's walk with those keys as leaves does not make it there (Plan.walkedWithGraphKeys: a LAZY slot's bound step, another order, a plan with creation, container or failing steps; a WEAK or ALL slot's step under a key the graph built from another lookup made where the plan has it since branch reqgraph, ResolverRequestPlanTests.aSlotNamingAStepUnderAKeyTheGraphBuiltFromAnotherLookupRunsThePlan; a slot whose owner is skipped too is never made, a plan since branch reqrest)"
            case .requestReadsRequest: "a resolver's request whose plan has a cachedVariant and finds some of its container steps cached and others not, with no plan for that set (mixedVariant: a walk that does not fit, container steps claimed late whose hits do not keep the build's order, Plan.lateClaimsKeepOrder, since branch reqrest; a configuration changed between the plan's pick and that walk walks for the one it sees, for the run only, since branch raced, RacedDeclinePlanTests.aRequestsMixedVariantWalkedAfterAConfigurationChangeRunsThePlan; the build makes only what the cached ones do not hold)"
            }
        }
    }
}

/// A diagnostic: how many resolves took each path, per thread, off unless `TETHER_PLAN_STATS=1`
/// was set when the thread first resolved (or a test called `countOnThisThread`). Off, a
/// resolve pays one test of `ThreadState.planCounts`; on, `Graph.resolve` counts every resolve
/// (nested ones too) and `Graph.run` each one it builds, by `Plan.Decline`; the requests of
/// resolvers (RESOLVER slots, completion callbacks) inside one are counted apart, by
/// `Graph.buildAsked`. The process prints the sums to stderr at exit, a line
/// `tether-plan-stats: NAME COUNT TEXT` per reason, `request.NAME` for requests (`benchmarks/plan_coverage.sh`).
package enum PlanStats {
    /// A thread's counts: `resolves`, then one per `Plan.Decline`; then resolvers' requests (`requests`,
    /// `found`: in the graph or a cache, no plan or build needed) and one per `Plan.Decline` of those built.
    struct Counts {
        let words: UnsafeMutablePointer<Int>
        static var count: Int { requestBase + 2 + Plan.Decline.allCases.count }
        static var requestBase: Int { Plan.Decline.allCases.count + 1 }

        @inline(never)
        func countResolve() { words[0] += 1 }
        @inline(never)
        func count(_ reason: Plan.Decline) {
            assert(reason.reachesBuild, "\(reason): a description's or a failing plan's, never a build's")
            words[1 + reason.rawValue] += 1
        }
        /// A resolver's request (`Graph.buildAsked`): `found` in the graph or a cache, else built for
        /// `reason` (nil: served by a plan).
        @inline(never)
        func countRequest(found: Bool, built reason: Plan.Decline?) {
            words[Counts.requestBase] += 1
            if found { words[Counts.requestBase + 1] += 1 }
            if let reason {
                assert(reason.reachesBuild, "\(reason): a description's or a failing plan's, never a build's")
                words[Counts.requestBase + 2 + reason.rawValue] += 1
            }
        }
    }

    /// Read once per thread, when its state is made.
    static let fromEnvironment: Bool = {
        guard let value = getenv("TETHER_PLAN_STATS"), strcmp(value, "1") == 0 else { return false }
        atexit { PlanStats.report() }
        return true
    }()

    /// Every thread's counts made so far (a thread's stay after it exits, for the report).
    private static let all = Lock<[UnsafeMutablePointer<Int>]>([])

    /// Counts for a new thread's state, nil when off.
    static func forNewThread() -> Counts? { fromEnvironment ? made() : nil }

    private static func made() -> Counts {
        let words = UnsafeMutablePointer<Int>.allocate(capacity: Counts.count)
        words.initialize(repeating: 0, count: Counts.count)
        all.withLock { $0.append(words) }
        return Counts(words: words)
    }

    /// Counts this thread's resolves from now on (tests; a no-op when counting already).
    package static func countOnThisThread() {
        ThreadState.currentReference.borrow { thread in
            if thread.planCounts == nil { thread.planCounts = made() }
            thread.planProgress.pointee.decline = nil
        }
    }

    /// This thread's counts so far, by name (`resolves` and the names of `Plan.Decline`'s cases
    /// counted at least once); empty when not counting.
    package static func thisThread() -> [String: Int] {
        ThreadState.currentReference.borrow { thread in
            guard let counts = thread.planCounts else { return [:] }
            return named(counts.words)
        }
    }

    /// This thread's resolver requests so far: `requests`, `found` (in the graph or a cache), `plan`
    /// (served by a plan) and the names of `Plan.Decline`'s cases they were built for; empty when not counting.
    package static func requestsOnThisThread() -> [String: Int] {
        ThreadState.currentReference.borrow { thread in
            guard let counts = thread.planCounts else { return [:] }
            let words = counts.words + Counts.requestBase
            var named = ["requests": words[0], "found": words[1]]
            var built = 0
            for reason in Plan.Decline.allCases where words[2 + reason.rawValue] > 0 {
                named["\(reason)"] = words[2 + reason.rawValue]
                built += words[2 + reason.rawValue]
            }
            named["plan"] = words[0] - words[1] - built
            return named
        }
    }

    private static func named(_ words: UnsafePointer<Int>) -> [String: Int] {
        var named = ["resolves": words[0]]
        for reason in Plan.Decline.allCases where words[1 + reason.rawValue] > 0 {
            named["\(reason)"] = words[1 + reason.rawValue]
        }
        return named
    }

    /// Why the resolve of `registration` from `container` that `graph` is about to build took no
    /// plan: what a run noted when it declined (`PlanProgress.decline`), else what the lookup found.
    @inline(never)
    static func countBuild(_ counts: Counts, _ registration: Registration, from container: Container,
                           progress: UnsafeMutablePointer<PlanProgress>) {
        if let noted = progress.pointee.decline {
            progress.pointee.decline = nil
            // A shared key not cached whose creation plan declined for a reason of its own counts that.
            counts.count(noted == .notCached ? registration.creationDecline ?? noted : noted)
        } else {
            counts.count(registration.planDecline(from: container))
        }
    }

    /// The sums over every thread, to stderr (at exit).
    private static func report() {
        let sums = all.withLock { all in
            var sums = [Int](repeating: 0, count: Counts.count)
            for words in all { for i in sums.indices { sums[i] += words[i] } }
            return sums
        }
        let built = sums[1..<Counts.requestBase].reduce(0, +)
        var lines = "tether-plan-stats: resolves \(sums[0]) every resolve\n"
        lines += "tether-plan-stats: plan \(sums[0] - built) served by a plan\n"
        for reason in Plan.Decline.allCases where sums[1 + reason.rawValue] > 0 {
            lines += "tether-plan-stats: \(reason) \(sums[1 + reason.rawValue]) \(reason.text)\n"
        }
        let requests = sums[Counts.requestBase...]
        let requestsBuilt = requests.dropFirst(2).reduce(0, +)
        let base = Counts.requestBase
        lines += "tether-plan-stats: request.requests \(sums[base]) every resolver request\n"
        lines += "tether-plan-stats: request.found \(sums[base + 1]) found in the graph or a cache\n"
        lines += "tether-plan-stats: request.plan \(sums[base] - sums[base + 1] - requestsBuilt) served by a plan\n"
        for reason in Plan.Decline.allCases where sums[base + 2 + reason.rawValue] > 0 {
            lines += "tether-plan-stats: request.\(reason) \(sums[base + 2 + reason.rawValue]) \(reason.text)\n"
        }
        fputs(lines, stderr)
    }
}
