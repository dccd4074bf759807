// A trace hook changes nothing of how a resolve runs: the plans run (in their traced modes)
// and tell the hook what the build tells it, in the build's order, with the same instances,
// statuses and edges. Each shape is traced once with plans and once without (the build, the
// oracle), instances named by order of first appearance, and the logs must be equal; the
// plan path is asserted by `PlanStats` (no resolve went to `Graph.build`).
import Testing
@testable import TetherCore

@Suite struct TracePlanTests {
    private struct Failed: Error {}

    /// The hook's events as lines, each instance named `KEY#n` by the order it first appeared
    /// (an address used again after a destruction is a new instance).
    final class Log: @unchecked Sendable {  // (`CreationRaceTests` too)
        private let state = Lock<(lines: [String], seen: [UInt])>(([], []))
        var lines: [String] { state.withLock { $0.lines } }

        func hook(_ event: TraceEvent) {
            state.withLock { s in
                func name(_ p: UnsafeMutableRawPointer) -> Int {
                    let word = UInt(bitPattern: p)
                    if let n = s.seen.firstIndex(of: word) { return n + 1 }
                    s.seen.append(word)
                    return s.seen.count
                }
                var line = "\(event.kind) \(event.key.name)"
                if let p = event.instance { line += "#\(name(p))" }
                if let t = event.target { line += " -> \(event.targetKey!.name)#\(name(t))" }
                if let status = event.status { line += " \(status)" }
                s.lines.append(line)
                if event.kind == .destroy, let p = event.instance, let n = s.seen.firstIndex(of: UInt(bitPattern: p)) { s.seen[n] = 0 }
            }
        }

        func note(_ line: String) { state.withLock { $0.lines.append(line) } }
    }

    /// Registers with `setUp`, traces `resolving` (its resolves and releases, `tracing` the
    /// container the hook is set on: the fixture's by default), then closes the containers.
    /// Returns the log and the `PlanStats` counts of `resolving`'s resolves.
    private func traced(plans: Bool, _ setUp: (Fixture) throws -> Void,
                        tracing: (Fixture) throws -> Container = { $0.container },
                        _ resolving: (Fixture, Container, Log) throws -> Void) throws -> (log: [String], counts: [String: Int]) {
        let fx = try Fixture()
        fx.container.usesPlans = plans
        try setUp(fx)
        let traced = try tracing(fx)
        if !plans { traced.usesPlans = false }
        let log = Log()
        traced.setTrace { log.hook($0) }
        let counts = try counted { try resolving(fx, traced, log) }
        // Every resolve over, the thread constructs nothing: a run that declined (as a traced one may) left no
        // plan in its progress for a later build's nested resolve to take for its own (a crash, or a false cycle).
        #expect(ThreadState.currentReference.borrow { Reentry.constructing($0).isEmpty })
        if traced !== fx.container { _ = try traced.close() }
        _ = try fx.container.close()
        #expect(fx.tracker.badDrops == 0)
        return (log.lines, counts)
    }

    /// The trace with plans is the build's, and no resolve of `resolving` went to `Graph.build`.
    private func expectSameTrace(_ setUp: @escaping (Fixture) throws -> Void,
                                 tracing: @escaping (Fixture) throws -> Container = { $0.container },
                                 sourceLocation: SourceLocation = #_sourceLocation,
                                 _ resolving: @escaping (Fixture, Container, Log) throws -> Void) throws {
        let planned = try traced(plans: true, setUp, tracing: tracing, resolving)
        let built = try traced(plans: false, setUp, tracing: tracing, resolving)
        #expect(planned.log == built.log, sourceLocation: sourceLocation)
        #expect(!planned.log.isEmpty, sourceLocation: sourceLocation)
        #expect(planned.counts.keys.sorted() == ["resolves"], "\(planned.counts)", sourceLocation: sourceLocation)
        #expect(built.counts["plansOff"] != nil, sourceLocation: sourceLocation)
    }

    /// Resolves `key` from `container` and releases it at once, noting a failure's status.
    private static func once(_ container: Container, _ key: String, _ log: Log) {
        do {
            _ = try container.resolve(Key(key))
        } catch {
            log.note("failed \(error.code)")
        }
    }

    @Test func creationThenCachedHitsInsideAGraph() throws {
        try expectSameTrace({ fx in
            try fx.register("A", [dep("B"), dep("S"), dep("T"), dep("T")])
            try fx.register("B", [dep("S"), dep("W")])
            try fx.register("S", scope: .singleton)
            try fx.register("W", scope: .weak)
            try fx.register("T", scope: .transient)
        }) { fx, c, log in
            var held: [Instance] = []
            for _ in 0..<3 { held.append(try c.resolve(Key("A"))) }  // a creation plan, then the warm one (W held)
            held.removeAll()
            Self.once(c, "S", log)  // the root's hit
            Self.once(c, "A", log)  // W died with the last A: made again
        }
    }

    @Test func aFactoryFailureRollsBackInTheBuildsOrder() throws {
        let failing = Box(false)
        try expectSameTrace({ fx in
            try fx.register("A", [dep("B"), dep("S"), dep("C")])
            try fx.register("B", [dep("D")])
            try fx.register("C", [dep("D")], scope: .transient) { _ in if failing.value { throw Failed() } }
            try fx.register("D", scope: .transient)
            try fx.register("S", scope: .singleton)
        }) { fx, c, log in
            failing.value = false
            Self.once(c, "A", log)
            failing.value = true
            Self.once(c, "A", log)  // the warm plan fails at C: B, D, S let go of, last first
            Self.once(c, "A", log)
            failing.value = false
            Self.once(c, "A", log)
        }
    }

    @Test func aCreationPlanThatFailsPublishesNothing() throws {
        let failing = Box(true)
        try expectSameTrace({ fx in
            try fx.register("A", [dep("S"), dep("B")])
            try fx.register("S", [dep("D")], scope: .singleton)
            try fx.register("B", scope: .transient) { _ in if failing.value { throw Failed() } }
            try fx.register("D")
        }) { fx, c, log in
            failing.value = true
            Self.once(c, "A", log)
            Self.once(c, "A", log)
            failing.value = false
            Self.once(c, "A", log)
            Self.once(c, "A", log)
        }
    }

    /// Completion callbacks: the plan replays into the graph, which runs them (and their edges) as a build's.
    @Test func completionsAndTheirEdges() throws {
        try expectSameTrace({ fx in
            try fx.register("A", [dep("B"), dep("S")])
            let b = try fx.register("B", [dep("C")])
            try fx.register("C", scope: .transient)
            try fx.register("S", scope: .singleton)
            fx.onComplete(b) { resolver, _, obj in
                obj.weaks.append(try resolver.getWeak(Key("A")))
                obj.got.append(try resolver.get(Key("S")).pointer)
            }
            let a = fx.container.registration(for: Key("A"))!
            fx.onComplete(a)
        }) { fx, c, log in
            for _ in 0..<3 { Self.once(c, "A", log) }
        }
    }

    @Test func aFailingCompletionRollsBack() throws {
        let failing = Box(false)
        try expectSameTrace({ fx in
            try fx.register("A", [dep("B")])
            let b = try fx.register("B", [dep("S")])
            try fx.register("S", scope: .singleton)
            fx.onComplete(b) { _, _, _ in if failing.value { throw Failed() } }
        }) { fx, c, log in
            failing.value = false
            Self.once(c, "A", log)
            failing.value = true
            Self.once(c, "A", log)
        }
    }

    /// WEAK, LAZY, ALL and FACTORY slots: made per resolve in the graph, weak edges told after the strong ones.
    @Test func slotsMadePerResolve() throws {
        try expectSameTrace({ fx in
            try fx.register("A", [dep("B"), dep("C")])
            try fx.register("B", [dep("C"), weakDep("C"), lazyDep("D"), .all(Key("Plugin")), .factory(Key("D"))])
            try fx.register("C")
            try fx.register("D", scope: .transient)
            try fx.register("Plugin", scope: .transient)
            try fx.register("Plugin#gzip", scope: .singleton)
        }) { fx, c, log in
            for _ in 0..<3 { Self.once(c, "A", log) }
        }
    }

    /// Container steps: a request's child makes its container-scoped instances once, then hits them.
    /// What only they asked for (G, S, the container step Q) the build does not ask for once they are cached.
    @Test func containerStepsFromARequestsChild() throws {
        try expectSameTrace({ fx in
            try fx.register("H", [dep("R"), dep("T")], scope: .transient)
            try fx.register("R", [dep("S"), dep("G"), dep("Q")], scope: .container)
            try fx.register("Q", scope: .container)
            try fx.register("G")
            try fx.register("T", [dep("U")])
            try fx.register("U", scope: .singleton)
            try fx.register("S", scope: .singleton)
            // Cached first: a creation plan over container steps is not recorded (`notCached`).
            for key in ["S", "U"] { _ = try fx.container.resolve(Key(key)) }
        }, tracing: { try $0.child() }) { fx, child, log in
            for _ in 0..<3 { Self.once(child, "H", log) }
            Self.once(child, "R", log)
        }
    }

    /// A singleton first asked for under a container step and taken outside too: once the container
    /// step is cached the build finds it where the step outside asks, out of the plan's order; the traced
    /// run tells the hits in the build's walk then (`tellWalkedHits`; `containerInput` before).
    @Test func aSharedStepAskedUnderACachedContainerStepAndOutside() throws {
        try expectSameTrace({ fx in
            try fx.register("H", [dep("R"), dep("T"), dep("S")], scope: .transient)
            try fx.register("R", [dep("S")], scope: .container)
            try fx.register("T", scope: .transient)
            try fx.register("S", scope: .singleton)
            _ = try fx.container.resolve(Key("S"))
        }, tracing: { try $0.child() }) { fx, child, log in
            for _ in 0..<3 { Self.once(child, "H", log) }
        }
    }

    /// A plan with a `cachedVariant` (Conn, graph-scoped, asked for first by the container-scoped Session and taken
    /// by the Handler too): once the Session is cached the traced run switches to the variant, which is traced too
    /// (`Plan.runVariant`; before, the all-cached switch ran the variant untraced: no hit, make or edge told).
    @Test func aTracedRunSwitchingToTheCachedVariantTellsTheBuildsEvents() throws {
        try expectSameTrace({ fx in
            try fx.register("Conn")
            try fx.register("Session", [dep("Conn")], scope: .container)
            try fx.register("Clock")
            try fx.register("Handler", [dep("Session"), dep("Clock"), dep("Conn")])
        }, tracing: { try $0.child() }) { fx, child, log in
            for _ in 0..<3 { Self.once(child, "Handler", log) }
        }
    }

    /// The same over more hits: two container steps (the second under the first), a singleton each asks
    /// for that steps outside take too, one in a made step's own walk, and a singleton only they take.
    @Test func sharedStepsAskedUnderCachedContainerStepsAndOutsideInterleave() throws {
        try expectSameTrace({ fx in
            try fx.register("H", [dep("Q"), dep("R"), dep("T"), dep("S"), dep("P")], scope: .transient)
            try fx.register("R", [dep("S"), dep("R2"), dep("U")], scope: .container)
            try fx.register("R2", [dep("V"), dep("S")], scope: .container)
            try fx.register("T", [dep("Q"), dep("V")], scope: .transient)
            try fx.register("P", [dep("U")], scope: .transient)
            for key in ["S", "Q", "U", "V"] { try fx.register(key, scope: .singleton); _ = try fx.container.resolve(Key(key)) }
        }, tracing: { try $0.child() }) { fx, child, log in
            for _ in 0..<3 { Self.once(child, "H", log) }
            Self.once(child, "R2", log)
            Self.once(child, "T", log)
        }
    }

    /// A factory resolving from its container: the nested resolve is traced between the outer factory's call and return.
    @Test func aNestedResolveInAFactory() throws {
        try expectSameTrace({ fx in
            let container = fx.container
            try fx.register("A", [dep("B")])
            try fx.register("B") { _ in _ = try container.resolve(Key("C")) }
            try fx.register("C", [dep("S")], scope: .transient)
            try fx.register("S", scope: .singleton)
        }) { fx, c, log in
            for _ in 0..<3 { Self.once(c, "A", log) }
        }
    }

    /// A dependency not registered: the failing plan makes what the build makes first, then reports it.
    @Test func aFailingPlanMakesWhatTheBuildMakes() throws {
        try expectSameTrace({ fx in
            try fx.register("A", [dep("B"), dep("M")])
            try fx.register("B", [dep("S")])
            try fx.register("S", scope: .singleton)
        }) { fx, c, log in
            for _ in 0..<2 { Self.once(c, "A", log) }
        }
    }

    // MARK: resolvers' requests (branch requestplans: the traced request modes, no `requestTraced`)

    /// `expectSameTrace` of resolves whose resolvers' requests run their plans: the same trace, every request
    /// either found in the graph or a cache or served by a plan (`PlanStats.requestsOnThisThread`), `served` of them.
    private func expectSameTracedRequests(served: Int, sourceLocation: SourceLocation = #_sourceLocation,
                                          _ setUp: @escaping (Fixture) throws -> Void,
                                          _ resolving: @escaping (Fixture, Container, Log) throws -> Void) throws {
        PlanStats.countOnThisThread()
        let before = PlanStats.requestsOnThisThread()
        try expectSameTrace(setUp, sourceLocation: sourceLocation, resolving)
        var requests = PlanStats.requestsOnThisThread()
        for (name, n) in before { requests[name, default: 0] -= n }
        // (Plans off, half of them: `plansOff`.)
        let built = requests.filter { !["requests", "found", "plan", "plansOff"].contains($0.key) && $0.value != 0 }
        #expect(built.isEmpty, "\(requests)", sourceLocation: sourceLocation)
        #expect(requests["plan"] == served, "\(requests)", sourceLocation: sourceLocation)
    }

    /// A callback's request for B (B -> D, S, T, C): D the graph's (no hit), S a singleton the graph has (no
    /// hit), T cached outside the graph (a hit where the walk asks), C made; then a request finding B.
    @Test func aCallbacksRequestTellsTheBuildsEvents() throws {
        try expectSameTracedRequests(served: 3, { fx in
            let a = try fx.register("A", [dep("D"), dep("S")])
            try fx.register("B", [dep("D"), dep("S"), dep("T"), dep("C")])
            try fx.register("C", [dep("T")], scope: .transient)
            try fx.register("D")
            try fx.register("S", scope: .singleton)
            try fx.register("T", scope: .singleton)
            fx.onComplete(a) { resolver, _, obj in
                obj.got.append(try resolver.get(Key("B")).pointer)
                obj.got.append(try resolver.get(Key("B")).pointer)
            }
        }) { fx, c, log in
            _ = try c.resolve(Key("T"))
            for _ in 0..<3 { Self.once(c, "A", log) }
        }
    }

    /// A callback's request creating singletons (U -> V, neither cached): the creation plan's events, then hits.
    @Test func aCallbacksRequestCreatingSingletons() throws {
        try expectSameTracedRequests(served: 1, { fx in
            let a = try fx.register("A")
            try fx.register("U", [dep("V"), dep("C")], scope: .singleton)
            try fx.register("V", scope: .singleton)
            try fx.register("C", scope: .transient)
            fx.onComplete(a) { resolver, _, obj in obj.got.append(try resolver.get(Key("U")).pointer) }
        }) { fx, c, log in
            for _ in 0..<3 { Self.once(c, "A", log) }
        }
    }

    /// A RESOLVER slot's request (F's factory asks for B -> C, S) and a request whose factory fails (E after
    /// making C): the factory's return with its status, what was made kept in the graph till it ends.
    @Test func aFactorysRequestAndAFailingOne() throws {
        try expectSameTracedRequests(served: 6, { fx in
            try fx.register("F", [.resolver, dep("S")]) { obj in
                let resolver = try #require(fx.bridge.resolver(obj.words[0]))
                _ = try resolver.get(Key("B"))
                do { _ = try resolver.get(Key("E")) } catch { fx.tracker.note("E failed") }
            }
            try fx.register("B", [dep("C"), dep("S")])
            try fx.register("E", [dep("G")]) { _ in throw CallbackFailure(reason: "no E") }
            try fx.register("G", scope: .transient)
            try fx.register("C", scope: .transient)
            try fx.register("S", scope: .singleton)
        }) { fx, c, log in
            for _ in 0..<3 { Self.once(c, "F", log) }
        }
    }

    /// A callback's request inside a nested resolve meeting the key constructed further out (X's factory resolves
    /// Y; Y's callback asks for Z -> S1, W, X, S2): the run up to where the build asks for X, traced
    /// (`TracedRequestCutIntoGraph`): S1's hit and W's events, none of S2 (the build never asked for it).
    @Test func aCallbacksRequestRunUpToACut() throws {
        try expectSameTracedRequests(served: 3, { fx in
            try fx.register("X") { _ in _ = try fx.resolve("Y") }
            let y = try fx.register("Y")
            try fx.register("Z", [dep("S1"), dep("W"), dep("X"), dep("S2")])
            try fx.register("W", scope: .transient)
            try fx.register("S1", scope: .singleton)
            try fx.register("S2", scope: .singleton)
            fx.onComplete(y) { resolver, _, _ in
                do { _ = try resolver.get(Key("Z")) } catch { fx.tracker.note("Z failed") }
            }
        }) { fx, c, log in
            _ = try c.resolve(Key("S1"))
            _ = try c.resolve(Key("S2"))
            for _ in 0..<3 { Self.once(c, "X", log) }
            #expect(fx.tracker.events("Z failed").count == 3)
        }
    }

    /// A failing plan under a container-scoped key (`Plan.Failing.containers`): `K1` cached, its variant's traced run
    /// tells `K1`'s hit between the build's factories (`Plan.pickedForCaches`); `K2` not cached, the failing plan's
    /// run tells `T`'s events and its destruction, then the cycle, as the build.
    @Test func aCycleUnderAContainerKeyCachedOrNotTracesTheBuilds() throws {
        try expectSameTrace({ fx in
            try fx.register("K1", [.all(Key("K0"))], scope: .container)
            try fx.register("K2", [dep("K3")], scope: .container)
            try fx.register("K3", [dep("T"), dep("K2")])
            try fx.register("T", scope: .transient)
        }) { fx, c, log in
            Self.once(c, "K1", log)
            try fx.register("K0", [dep("T"), dep("K1"), dep("T")])
            for _ in 0..<2 { Self.once(c, "K0", log) }
            Self.once(c, "K3", log)
        }
    }

    /// A failing plan's first claim (K3's, `claimInOrder` past its error) refused after A's factory (K0, past the error, made
    /// further out and not finished): the run up to there (`Graph.replayPastFailure`) tells A's events as the build does.
    @Test func aFailingPlansFirstClaimAfterAFactoryTracesTheBuilds() throws {
        try expectSameTrace({ fx in
            try fx.register("A")
            try fx.register("R", [dep("A"), dep("K3")])
            try fx.register("K2") { _ in _ = try? fx.resolve("R") }
            try fx.register("K3", [dep("Missing"), dep("K0")], scope: .singleton)
            let k0 = try fx.register("K0", scope: .container)
            fx.onComplete(k0) { resolver, _, obj in obj.got.append(try resolver.get(Key("K2")).pointer) }
        }) { fx, c, log in
            Self.once(c, "K0", log)
        }
    }
}

extension TracePlanTests {
    /// A traced nested resolve meeting a key further out (X's factory resolves the Handler, which asks for X): its plan's
    /// run up to the cut tells the hook what the build does before it meets X (`TracedCutIntoGraph`,
    /// `TracedCreatingCutIntoGraph`; before branch cutswitch the cut run told nothing: no factory call, return or
    /// destruction of Clock). Shape 0: plain; 1: the cached Session asks for X, so the plan with it a leaf meets X where
    /// the Handler asks (`Plan.variant(forCached:cut:)`); 2: the `cachedVariant` up to the cut; 3: a creating run (S, a
    /// singleton not cached, made and let go of). Creating runs finding container steps cached (a weak W, dead at every
    /// resolve; branch heldcut, `containerHeld` before): 4, some (the creating `mixedVariant` up to the cut); 5, the asker.
    @Test(arguments: 0..<6) func aTracedNestedResolveRunUpToACutTellsTheBuildsEvents(shape: Int) throws {
        let nesting = Box(false), current = Box<Container?>(nil)
        try expectSameTrace({ fx in
            try fx.register("Clock")
            try fx.register("Conn")
            try fx.register("X", scope: .transient) { _ in
                guard nesting.value else { return }
                _ = try? fx.resolve("Handler", in: current.value!)
            }
            switch shape {
            case 0: try fx.register("Handler", [dep("Clock"), dep("X")], scope: .transient)
            case 1:
                try fx.register("Session", [dep("X")], scope: .container)
                try fx.register("Handler", [dep("Session"), dep("Clock"), dep("X")], scope: .transient)
            case 2:
                try fx.register("Session", [dep("Conn")], scope: .container)
                try fx.register("Handler", [dep("Session"), dep("Clock"), dep("Conn"), dep("X")], scope: .transient)
            case 3:
                try fx.register("S", scope: .singleton)
                try fx.register("Session", [dep("Conn")], scope: .container)
                try fx.register("Handler", [dep("S"), dep("Clock"), dep("X")], scope: .transient)
            case 4:
                try fx.register("W", scope: .weak)
                try fx.register("Session", [dep("Conn")], scope: .container)
                try fx.register("Late", [dep("Conn")], scope: .container)
                try fx.register("Handler", [dep("Session"), dep("Clock"), dep("W"), dep("Late"), dep("X")], scope: .transient)
            default:
                try fx.register("W", scope: .weak)
                try fx.register("Session", [dep("X")], scope: .container)
                try fx.register("Handler", [dep("W"), dep("Session"), dep("Clock")], scope: .transient)
            }
        }, tracing: { fx in let c = try fx.child(); current.value = c; return c }) { fx, child, log in
            nesting.value = false
            if shape != 0 { Self.once(child, "Session", log) }
            if shape != 3 { Self.once(child, "Handler", log) }
            nesting.value = true
            for _ in 0..<2 { Self.once(child, "X", log) }
            nesting.value = false
        }
    }
}
