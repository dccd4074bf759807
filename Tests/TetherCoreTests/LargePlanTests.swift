// Plans past `Plan.maxSteps` steps or `Plan.maxSlots` slots in one factory (`Plan.isLarge`):
// their runs' buffers are allocated for them, so they run as plans (no resolve goes to
// `Graph.build`), with the build's factory calls, slots, identities and destructor order.
import Testing
@testable import TetherCore

@Suite struct LargePlanTests {
    /// What the resolves of `resolving` did, and the `PlanStats` counts.
    private func run(_ setUp: (Fixture) throws -> Void,
                     _ resolving: (Fixture) throws -> [String]) throws -> (log: [String], seen: [String], counts: [String: Int]) {
        let fx = try Fixture()
        try setUp(fx)
        var seen: [String] = []
        let counts = try counted { seen = try resolving(fx) }
        _ = try fx.container.close()
        #expect(fx.tracker.badDrops == 0 && fx.tracker.liveCount == 0)
        return (fx.tracker.log, seen, counts)
    }

    /// The plan's run is `expected` and `expectedSeen` (the build's, which ran beside it as an oracle until branch
    /// noplansoff), and every resolve of `resolving` ran a plan.
    private func expectPlannedAsBuilt(log expected: [String]? = nil, seen expectedSeen: [String]? = nil,
                                      _ setUp: @escaping (Fixture) throws -> Void,
                                      sourceLocation: SourceLocation = #_sourceLocation,
                                      _ resolving: @escaping (Fixture) throws -> [String]) throws {
        let planned = try run(setUp, resolving)
        if let expected { #expect(planned.log == expected, sourceLocation: sourceLocation) }
        if let expectedSeen { #expect(planned.seen == expectedSeen, sourceLocation: sourceLocation) }
        #expect(planned.counts.keys.sorted() == ["resolves"], "\(planned.counts)", sourceLocation: sourceLocation)
    }

    /// The labels below `obj`, depth first, each strong slot's subtree (a transient's label repeats).
    private static func tree(_ obj: Obj, _ out: inout [String]) {
        out.append(obj.label)
        for word in obj.words where word > 0x1000 {
            tree(Obj.at(UnsafeMutableRawPointer(bitPattern: UInt(word))!), &out)
        }
    }

    private static func resolveTree(_ fx: Fixture, _ key: String) throws -> [String] {
        let root = try fx.resolve(key)
        var out: [String] = []
        withExtendedLifetime(root) { tree(Obj.of(root), &out) }
        return out
    }

    /// `planned` of H (its R, slot 0, container-scoped) resolved twice in each of two children ("a", "b"; `inChild`
    /// registers in each first): whether each H's R is the child's first and how many T were made, then, after the
    /// child's close, how many R were made and dropped.
    private func rPerChild(_ setUp: (Fixture) throws -> Void, inChild: (Fixture, Container) throws -> Void = { _, _ in })
        throws -> (log: [String], seen: [String], counts: [String: Int]) {
        try planned { fx -> [String] in
            try setUp(fx)
            var seen: [String] = []
            for name in ["a", "b"] {
                let child = try fx.child()
                try inChild(fx, child)
                var first: UnsafeMutableRawPointer?
                for _ in 0..<2 {
                    let h = try fx.resolve("H", in: child)
                    withExtendedLifetime(h) {
                        let r = Obj.of(h).depPointer(0)
                        seen.append("\(name): R the first: \(first.map { $0 == r } ?? true), T made \(fx.tracker.made("T"))")
                        first = first ?? r
                    }
                }
                _ = try child.close()
                seen.append("\(name): R made \(fx.tracker.made("R")) dropped \(fx.tracker.dropped("R"))")
            }
            return seen
        }
    }

    /// H resolved twice in each of two children, `after` read once each is closed (`served`: 4 resolves, none
    /// built); what `after` read.
    private func hTwiceInTwoChildren(_ setUp: (Fixture) throws -> Void, sourceLocation: SourceLocation = #_sourceLocation,
                                     after: (Fixture) -> String) throws -> [String] {
        try served(resolves: 4, sourceLocation: sourceLocation) { fx -> [String] in
            try setUp(fx)
            var seen: [String] = []
            for _ in 0..<2 {
                let child = try fx.child()
                for _ in 0..<2 { _ = try fx.resolve("H", in: child) }
                _ = try child.close()
                seen.append(after(fx))
            }
            return seen
        }.seen
    }

    /// A chain of 100 graph-scoped steps, each over a shared transient and the singleton S: more
    /// steps than a run's stack buffers hold.
    @Test func aChainOfMoreThanMaxStepsSteps() throws {
        let length = Plan.maxSteps + 36
        // Each resolve: depth first, S (once: then cached), the last N, then each N's T before it; a release drops
        // them last made first; the close drops S.
        let made = ["make N\(length - 1)"] + (0 ..< length - 1).reversed().flatMap { ["make T", "make N\($0)"] }
        let dropped = (0 ..< length - 1).flatMap { ["drop N\($0)", "drop T"] } + ["drop N\(length - 1)"]
        try expectPlannedAsBuilt(log: ["make S"] + Array(repeating: made + dropped, count: 3).flatMap { $0 } + ["drop S"], { fx in
            for i in 0..<length {
                try fx.register("N\(i)", i + 1 < length ? [dep("N\(i + 1)"), dep("T"), dep("S")] : [dep("S")])
            }
            try fx.register("T", scope: .transient)
            try fx.register("S", scope: .singleton)
        }) { fx in
            var seen: [String] = []
            for _ in 0..<3 { seen += try Self.resolveTree(fx, "N0").prefix(8) }
            #expect(fx.tracker.made("N\(length - 1)") == 3 && fx.tracker.made("T") == 3 * (length - 1) && fx.tracker.made("S") == 1)
            return seen
        }
        // With plans: the second resolve replayed the recorded plan.
        let fx = try Fixture()
        for i in 0..<length { try fx.register("N\(i)", i + 1 < length ? [dep("N\(i + 1)")] : []) }
        _ = try fx.resolve("N0")
        _ = try fx.resolve("N0")
        #expect(fx.container.registration(for: Key("N0"))!.hasCurrentPlan)
    }

    /// A factory of 40 slots (more than a run's slot buffer holds): each slot gets its step's
    /// instance, the context, a transient made for it; the same instance where the build gives it.
    @Test func aFactoryOfMoreThanMaxSlotsSlots() throws {
        let context = UnsafeMutableRawPointer(bitPattern: 0x7)!
        let width = Plan.maxSlots + 8
        // W's slots in order: a T for each T slot, each L the first time a slot asks for it (L0 after its T), then W,
        // then A (its L0 the graph's); a release drops all of them last made first.
        var made: [String] = [], ls = Set<Int>()
        for i in 0..<width where i % 5 != 0 {
            if i % 3 == 0 { made.append("make T") } else if ls.insert(i % 7).inserted { made += (i % 7 == 0 ? ["make T"] : []) + ["make L\(i % 7)"] }
        }
        made += ["make W", "make A"]
        let once = made + made.reversed().map { "drop" + $0.dropFirst(4) }
        let slots = (0..<width).map { i in i % 5 == 0 ? "context" : i % 3 == 0 ? "\(i):T" : "\(i):L\(i % 7)" }
        try expectPlannedAsBuilt(log: Array(repeating: once, count: 3).flatMap { $0 }, seen: Array(repeating: slots, count: 3).flatMap { $0 }, { fx in
            var params: [Param] = []
            for i in 0..<width {
                params.append(i % 5 == 0 ? .context : i % 3 == 0 ? dep("T") : dep("L\(i % 7)"))
            }
            try fx.register("W", params, context: context)
            try fx.register("A", [dep("W"), dep("L0")], scope: .transient)
            for i in 0..<7 { try fx.register("L\(i)", i == 0 ? [dep("T")] : []) }
            try fx.register("T", scope: .transient)
        }) { fx in
            var seen: [String] = []
            for _ in 0..<3 {
                let a = try fx.resolve("A")
                withExtendedLifetime(a) {
                    let w = Obj.of(a).dep(0)
                    #expect(w.words.count == width)
                    // Identities: one L per key in the graph, A's L0 is W's.
                    #expect(w.depPointer(1) == w.depPointer(8) && Obj.of(a).depPointer(1) == w.depPointer(7))
                    seen += w.words.enumerated().map { i, word in
                        word == UInt64(UInt(bitPattern: context)) ? "context" : "\(i):\(Obj.at(UnsafeMutableRawPointer(bitPattern: UInt(word))!).label)"
                    }
                }
            }
            return seen
        }
    }

    /// A large plan replayed into the graph (completion callbacks and a WEAK slot): the callbacks
    /// in creation order, the weak slot holding the graph's instance.
    @Test func aLargePlanWithCompletionsAndSlots() throws {
        let length = Plan.maxSteps + 10
        // Made last first; the callbacks (every ninth N) in creation order once all are made; dropped dependents first.
        let once = (0..<length).reversed().map { "make N\($0)" } + (0..<length).reversed().filter { $0 % 9 == 0 }.map { "complete N\($0)" }
            + (0..<length).map { "drop N\($0)" }
        try expectPlannedAsBuilt(log: once + once, seen: ["weak is the last: true", "weak is the last: true"], { fx in
            for i in 0..<length {
                let r = try fx.register("N\(i)", i + 1 < length ? [dep("N\(i + 1)"), weakDep("N\(length - 1)")] : [])
                if i % 9 == 0 { fx.onComplete(r) }
            }
        }) { fx in
            var seen: [String] = []
            for _ in 0..<2 {
                let root = try fx.resolve("N0")
                withExtendedLifetime(root) {
                    let weak = fx.bridge.weak(Obj.of(root).words[1]).upgrade()
                    var last = Obj.of(root)
                    while let word = last.words.first, word > 0x1000 { last = last.dep(0) }
                    seen.append("weak is the last: \(weak?.pointer == last.pointer)")
                }
            }
            return seen
        }
    }

    /// A factory failing past the 64th step: what the run made is let go of, last made first, as the build's abort.
    @Test func aFailureInALargePlanRollsBackAsTheBuild() throws {
        let length = Plan.maxSteps + 20
        let failing = Box(false)
        // Depth first: every X made before the N chain returns; the failing resolve stops at N3, then lets go of
        // what it made, last made first (N4 ... N83, then the Xs).
        let makeXs = (0 ..< length - 1).map { "make X\($0)" }, dropXs = (0 ..< length - 1).reversed().map { "drop X\($0)" }
        let succeeded = makeXs + (0 ..< length).reversed().map { "make N\($0)" } + (0 ..< length).map { "drop N\($0)" } + dropXs
        let failed = makeXs + (4 ..< length).reversed().map { "make N\($0)" } + (4 ..< length).map { "drop N\($0)" } + dropXs
        try expectPlannedAsBuilt(log: succeeded + failed,
                                 seen: ["factoryFailed: factory for \"N3\" returned NULL: boom (while resolving \"N0\" -> \"N1\" -> \"N2\" -> \"N3\")"], { fx in
            for i in 0..<length {
                try fx.register("N\(i)", i + 1 < length ? [dep("X\(i)"), dep("N\(i + 1)")] : []) { _ in
                    if failing.value && i == 3 { throw TetherError(.factoryFailed, "boom") }
                }
                try fx.register("X\(i)", scope: .transient)
            }
        }) { fx in
            var seen: [String] = []
            failing.value = false
            _ = try fx.resolve("N0")
            failing.value = true
            do { _ = try fx.resolve("N0") } catch let e as TetherError { seen.append("\(e.code): \(e.message)") }
            failing.value = false
            return seen
        }
    }

    /// A large plan whose first step's RESOLVER slot gets X, a graph-scoped key the plan makes past its 64th step:
    /// the build finds X in the graph where H asks for it (X's factory once per resolve, H's X the one A got). The
    /// plan's run made X again (its factory twice, the graph's X leaked) while `Graph.replaySkips`, the steps a
    /// resolver's gets built (`Plan.takeBuilt`), was one word; then such a plan declined `tooLarge`. Since branch
    /// largemasks the set is a plan's of any size (`StepBits`): the plan serves it, with the build's behaviour.
    @Test func aResolversGetOfAStepPastThe64thIsTheGraphs() throws {
        let length = Plan.maxSteps + 6
        let run = try planned { fx -> [String] in
            let bridge = fx.bridge
            try fx.register("A", [.resolver]) { obj in
                guard let r = bridge.resolver(obj.words[0]) else { throw TetherError(.factoryFailed, "no resolver") }
                obj.got.append(try r.get(Key("X")).pointer)
            }
            for i in 0..<length { try fx.register("P\(i)", scope: .transient) }
            try fx.register("X")
            try fx.register("H", [dep("A")] + (0..<length).map { dep("P\($0)") } + [dep("X")], scope: .transient)
            var seen: [String] = []
            for _ in 0..<2 {
                let h = try fx.resolve("H")
                withExtendedLifetime(h) {
                    let o = Obj.of(h)
                    seen.append("X made \(fx.tracker.made("X")), A's X is H's: \(o.dep(0).got.first == o.depPointer(length + 1))")
                }
            }
            return seen
        }
        #expect(run.counts == ["resolves": 2], "\(run.counts)")
        #expect(run.seen == ["X made 1, A's X is H's: true", "X made 2, A's X is H's: true"], "\(run.seen)")
    }

    /// A resolver's request (O's get) for H, whose plan of more than 64 steps makes X past its 64th step, and whose
    /// first step A's RESOLVER slot gets X meanwhile: the build finds X in the graph where H asks for it (X's factory
    /// once per resolve, H's X the one A got). `Plan.takeBuiltAsked` took none past 64 steps (the run made X again,
    /// its factory twice); since branch largemasks it takes it (`Graph.requestSkips`: `StepBits`). The requests are plans.
    @Test func aRequestsGetOfAStepPastThe64thIsTheGraphs() throws {
        let length = Plan.maxSteps + 6
        var requests: [String: Int] = [:]
        let run = try planned { fx -> [String] in
            let bridge = fx.bridge
            try fx.register("O", [.resolver], scope: .transient) { obj in
                guard let r = bridge.resolver(obj.words[0]) else { throw TetherError(.factoryFailed, "no resolver") }
                obj.got.append(try r.get(Key("H")).pointer)
            }
            try fx.register("A", [.resolver], scope: .transient) { obj in
                guard let r = bridge.resolver(obj.words[0]) else { throw TetherError(.factoryFailed, "no resolver") }
                obj.got.append(try r.get(Key("X")).pointer)
            }
            for i in 0..<length { try fx.register("P\(i)", scope: .transient) }
            try fx.register("X")
            try fx.register("H", [dep("A")] + (0..<length).map { dep("P\($0)") } + [dep("X")], scope: .transient)
            var seen: [String] = []
            let delta = try countedRequests {
                for _ in 0..<2 {
                    let o = try fx.resolve("O")
                    withExtendedLifetime(o) {
                        let h = Obj.at(Obj.of(o).got[0])
                        seen.append("X made \(fx.tracker.made("X")) dropped \(fx.tracker.dropped("X")), A's X is H's: \(h.dep(0).got.first == h.depPointer(length + 1))")
                    }
                }
            }
            requests = delta
            return seen
        }
        #expect(run.seen == ["X made 1 dropped 0, A's X is H's: true", "X made 2 dropped 1, A's X is H's: true"], "\(run.seen)")
        #expect(run.counts == ["resolves": 2], "\(run.counts)")
        // (O's get of H, and A's of X meanwhile: each a plan's.)
        #expect(requests == ["requests": 4, "plan": 4], "\(requests)")
    }

    /// A resolver's request for H, whose plan of more than 64 steps makes X past its 64th step, from O, which holds
    /// X: the build takes the graph's X where H asks for it. `Plan.takeFromGraph` took none past 64 steps (the
    /// request built: `requestInGraph`); since branch largemasks the request's plan serves it (`Graph.requestSkips`).
    @Test func aRequestTakesTheGraphsStepPastThe64th() throws {
        let length = Plan.maxSteps + 6
        var requests: [String: Int] = [:]
        let run = try planned { fx -> [String] in
            let bridge = fx.bridge
            try fx.register("O", [.resolver, dep("X")], scope: .transient) { obj in
                guard let r = bridge.resolver(obj.words[0]) else { throw TetherError(.factoryFailed, "no resolver") }
                obj.got.append(try r.get(Key("H")).pointer)
            }
            for i in 0..<length { try fx.register("P\(i)", scope: .transient) }
            try fx.register("X")
            try fx.register("H", (0..<length).map { dep("P\($0)") } + [dep("X")], scope: .transient)
            var seen: [String] = []
            let delta = try countedRequests {
                for _ in 0..<2 {
                    let o = try fx.resolve("O")
                    withExtendedLifetime(o) {
                        let (oo, h) = (Obj.of(o), Obj.at(Obj.of(o).got[0]))
                        seen.append("X made \(fx.tracker.made("X")), O's X is H's: \(oo.depPointer(1) == h.depPointer(length)), P0 made \(fx.tracker.made("P0"))")
                    }
                }
            }
            requests = delta
            return seen
        }
        #expect(run.seen == ["X made 1, O's X is H's: true, P0 made 1", "X made 2, O's X is H's: true, P0 made 2"], "\(run.seen)")
        #expect(run.counts == ["resolves": 2], "\(run.counts)")
        #expect(requests == ["requests": 2, "plan": 2], "\(requests)")
    }

    /// A container-scoped step past the 64th step (R over 65 transients: step 65), and past the 128th (over 130):
    /// `tooLarge` before branch largemasks (a run noted container steps by step in one word per kind); a plan now,
    /// its masks `StepBits` (`Plan.wideMasks`). The build's behaviour: R made once per child, taken
    /// from its cache by the second resolve (the transients under it not made), let go of at the child's close.
    @Test(arguments: [65, 130]) func aContainerStepPastThe64thStepIsAPlan(transients: Int) throws {
        let run = try rPerChild { fx in
            try fx.register("H", [dep("R"), dep("T")], scope: .transient)
            try fx.register("R", Array(repeating: dep("T"), count: transients), scope: .container)
            try fx.register("T", scope: .transient)
        }
        #expect(run.counts == ["resolves": 4], "\(run.counts)")
        let t = transients + 1
        #expect(run.seen == ["a: R the first: true, T made \(t)", "a: R the first: true, T made \(t + 1)", "a: R made 1 dropped 1",
                             "b: R the first: true, T made \(2 * t + 1)", "b: R the first: true, T made \(2 * t + 2)", "b: R made 2 dropped 2"],
                "\(run.seen)")
    }

    /// A factory failing after a container step past the 64th step: the build publishes nothing (the next resolve
    /// makes R again) and lets go of what it made, last made first; the plan alike (`tooLarge` before branch largemasks).
    @Test func aFailureAfterAContainerStepPastThe64thStepIsAPlan() throws {
        let failing = Box(true)
        let run = try planned { fx -> [String] in
            try fx.register("H", [dep("R"), dep("F")], scope: .transient)
            try fx.register("R", Array(repeating: dep("T"), count: 65), scope: .container)
            try fx.register("T", scope: .transient)
            try fx.register("F") { _ in if failing.value { throw TetherError(.factoryFailed, "F refused") } }
            let child = try fx.child()
            var seen: [String] = []
            failing.value = true
            do { _ = try fx.resolve("H", in: child) } catch let e as TetherError { seen.append("\(e.code): \(e.message)") }
            seen.append("R made \(fx.tracker.made("R")) dropped \(fx.tracker.dropped("R")), T dropped \(fx.tracker.dropped("T"))")
            failing.value = false
            for _ in 0..<2 { _ = try fx.resolve("H", in: child) }
            seen.append("R made \(fx.tracker.made("R")) dropped \(fx.tracker.dropped("R"))")
            _ = try child.close()
            return seen
        }
        #expect(run.counts == ["resolves": 3], "\(run.counts)")
        #expect(run.seen.count == 3 && run.seen[0].contains("F refused") && run.seen[1] == "R made 1 dropped 1, T dropped 65"
                && run.seen[2] == "R made 2 dropped 1", "\(run.seen)")
        // R dropped before the transients it holds: dependents first.
        let drops = run.log.filter { $0.hasPrefix("drop") }
        #expect(drops.prefix(2) == ["drop R", "drop T"], "\(drops.prefix(3))")
    }

    /// A resolver's request (a RESOLVER slot's get) for H, whose plan has a container step past the 64th step: the
    /// request's plan replays into the graph with `StepBits` (`replayWideRequest`; `tooLarge` before branch largemasks),
    /// as plans off: R published in the child once, the second request's R the first's.
    @Test func aRequestOverAContainerStepPastThe64thStepIsAPlan() throws {
        var requests: [String: Int] = [:]
        let run = try planned { fx -> [String] in
            let bridge = fx.bridge
            try fx.register("A", [.resolver], scope: .transient) { obj in
                guard let r = bridge.resolver(obj.words[0]) else { throw TetherError(.factoryFailed, "no resolver") }
                obj.got.append(try r.get(Key("H")).pointer)
            }
            try fx.register("H", [dep("R"), dep("T")], scope: .transient)
            try fx.register("R", Array(repeating: dep("T"), count: 65), scope: .container)
            try fx.register("T", scope: .transient)
            let child = try fx.child()
            var rs: [UnsafeMutableRawPointer] = []
            let delta = try countedRequests {
                for _ in 0..<2 {
                    let a = try fx.resolve("A", in: child)
                    withExtendedLifetime(a) { rs.append(Obj.at(Obj.of(a).got[0]).depPointer(0)) }
                }
            }
            let seen = ["same R: \(rs[0] == rs[1]), R made \(fx.tracker.made("R")), T made \(fx.tracker.made("T"))"]
            requests = delta
            _ = try child.close()
            return seen + ["R dropped \(fx.tracker.dropped("R"))"]
        }
        #expect(run.seen == ["same R: true, R made 1, T made 67", "R dropped 1"], "\(run.seen)")
        // A's resolves are plans (a RESOLVER slot, no container step); so are the requests for H.
        #expect(run.counts == ["resolves": 2], "\(run.counts)")
        #expect(requests == ["requests": 2, "plan": 2], "\(requests)")
    }

    /// Two container steps past the 64th step, R1 cached in the child (a resolve of R1 first) and R2 not: the run
    /// takes R1, skips the transients R1 asked for (`skipUnderCached`, its word 4 `StepBits`: no `mixedVariant`
    /// keyed by a word for such a plan) and makes R2 once, as the build: T made per slot of the steps still made.
    @Test func containerStepsPastThe64thStepSomeCachedArePlans() throws {
        let run = try planned { fx -> [String] in
            try fx.register("H", [dep("R1"), dep("R2"), dep("T")], scope: .transient)
            try fx.register("R1", Array(repeating: dep("T"), count: 66), scope: .container)
            try fx.register("R2", Array(repeating: dep("T"), count: 3), scope: .container)
            try fx.register("T", scope: .transient)
            let child = try fx.child()
            var seen: [String] = []
            let r1 = try fx.resolve("R1", in: child)
            seen.append("T made \(fx.tracker.made("T")), R1 made \(fx.tracker.made("R1"))")
            for _ in 0..<2 {
                let h = try fx.resolve("H", in: child)
                withExtendedLifetime(h) {
                    let o = Obj.of(h)
                    seen.append("R1 the child's: \(o.depPointer(0) == r1.pointer), T made \(fx.tracker.made("T")), R2 made \(fx.tracker.made("R2"))")
                }
            }
            _ = try child.close()
            seen.append("R1 dropped \(fx.tracker.dropped("R1")), R2 dropped \(fx.tracker.dropped("R2"))")
            return seen
        }
        #expect(run.counts == ["resolves": 3], "\(run.counts)")
        #expect(run.seen == ["T made 66, R1 made 1", "R1 the child's: true, T made 70, R2 made 1",
                                "R1 the child's: true, T made 71, R2 made 1", "R1 dropped 0, R2 dropped 1"], "\(run.seen)")
    }

    /// A child's own container-scoped R (a local step, `ChildWideRequestSteps`) past the 64th step of H's plan, over
    /// the root's transients: made once per child, as the build, each child's plan the component's.
    @Test func aChildsOwnContainerStepPastThe64thStepIsAPlan() throws {
        let run = try rPerChild({ fx in
            try fx.register("H", [dep("R"), dep("T")], scope: .transient)
            try fx.register("T", scope: .transient)
        }, inChild: { fx, child in try fx.register("R", Array(repeating: dep("T"), count: 65), scope: .container, in: child) })
        #expect(run.counts == ["resolves": 4], "\(run.counts)")
        #expect(run.seen == ["a: R the first: true, T made 66", "a: R the first: true, T made 67", "a: R made 1 dropped 1",
                             "b: R the first: true, T made 133", "b: R the first: true, T made 134", "b: R made 2 dropped 2"],
                "\(run.seen)")
    }

    /// A creation step (S, a singleton not cached yet) in a plan with a container step past the 64th step, which
    /// replays into a graph: the graph's masks of such a run are `StepBits` (`Graph.claimedSkip`, `lateContainerClaims`,
    /// `unclaimedUnder`), so its creation plan serves the first resolve (`tooLarge` before branch graphmasks: the
    /// graph's masks were one word, the first resolve built, counted `notCached`), the warm plan the rest.
    @Test func aCreationStepInAPlanWithAContainerStepPastThe64thStepIsAPlan() throws {
        let seen = try hTwiceInTwoChildren({ fx in
            try fx.register("H", [dep("R"), dep("S")], scope: .transient)
            try fx.register("R", Array(repeating: dep("T"), count: 65), scope: .container)
            try fx.register("T", scope: .transient)
            try fx.register("S", scope: .singleton)
        }) { fx in "R made \(fx.tracker.made("R")) dropped \(fx.tracker.dropped("R")), S made \(fx.tracker.made("S")), T made \(fx.tracker.made("T"))" }
        #expect(seen == ["R made 1 dropped 1, S made 1, T made 65", "R made 2 dropped 2, S made 1, T made 130"], "\(seen)")
    }

    /// A weak key (W) first made under a container step past the 64th step (R, at step 65, asks for it): its creation
    /// plan serves the first resolve of each child (W let go of with the child's R), as the build makes W under R.
    @Test func aWeakKeyUnderAContainerStepPastThe64thStepIsAPlan() throws {
        let seen = try hTwiceInTwoChildren({ fx in
            try fx.register("H", [dep("R")], scope: .transient)
            try fx.register("R", Array(repeating: dep("T"), count: 64) + [dep("W")], scope: .container)
            try fx.register("T", scope: .transient)
            try fx.register("W", scope: .weak)
        }) { fx in "R made \(fx.tracker.made("R")) dropped \(fx.tracker.dropped("R")), W made \(fx.tracker.made("W")) dropped \(fx.tracker.dropped("W"))" }
        #expect(seen == ["R made 1 dropped 1, W made 1 dropped 1", "R made 2 dropped 2, W made 2 dropped 2"], "\(seen)")
    }

    /// A completion callback (R's, a container step past the 64th step): the plan replays into the graph (its queue),
    /// the callback once per R made, after the resolve's factories, as the build's (`tooLarge` before branch graphmasks).
    @Test func aCompletionCallbackOfAContainerStepPastThe64thStepIsAPlan() throws {
        let seen = try hTwiceInTwoChildren({ fx in
            try fx.register("H", [dep("R"), dep("U")], scope: .transient)
            let r = try fx.register("R", Array(repeating: dep("T"), count: 65), scope: .container)
            fx.onComplete(r)
            try fx.register("T", scope: .transient)
            try fx.register("U", scope: .transient)
        }) { fx in "R made \(fx.tracker.made("R")) completed \(fx.tracker.log.filter { $0 == "complete R" }.count), U made \(fx.tracker.made("U"))" }
        #expect(seen == ["R made 1 completed 1, U made 2", "R made 2 completed 2, U made 4"], "\(seen)")
    }

    /// A RESOLVER slot (A's, step 0) before a container step past the 64th step (R, step 66), which is not one of A's
    /// askers: claimed late (`Step.claimsLate`, `Graph.lateContainerClaims` past the 64th step). A's get of R builds R in
    /// the graph the first time in a child (the plan takes it, `takeBuilt`), and finds it cached the second: H's R is
    /// A's, made once per child, as the build's (`tooLarge` before branch graphmasks).
    @Test func aResolverSlotBeforeAContainerStepPastThe64thStepIsAPlan() throws {
        let run = try planned { fx -> [String] in
            let bridge = fx.bridge
            try fx.register("A", [.resolver], scope: .transient) { obj in
                guard let r = bridge.resolver(obj.words[0]) else { throw TetherError(.factoryFailed, "no resolver") }
                obj.got.append(try r.get(Key("R")).pointer)
            }
            try fx.register("H", [dep("A"), dep("R")], scope: .transient)
            try fx.register("R", Array(repeating: dep("T"), count: 65), scope: .container)
            try fx.register("T", scope: .transient)
            var seen: [String] = []
            for _ in 0..<2 {
                let child = try fx.child()
                for _ in 0..<2 {
                    let h = try fx.resolve("H", in: child)
                    withExtendedLifetime(h) {
                        let o = Obj.of(h)
                        seen.append("R made \(fx.tracker.made("R")), A's R is H's: \(o.dep(0).got.first == o.depPointer(1))")
                    }
                }
                _ = try child.close()
            }
            return seen
        }
        #expect(run.counts == ["resolves": 4], "\(run.counts)")
        #expect(run.seen == ["R made 1, A's R is H's: true", "R made 1, A's R is H's: true",
                                "R made 2, A's R is H's: true", "R made 2, A's R is H's: true"], "\(run.seen)")
    }

    /// A creation step (S, over Q) of a plan with a container step past the 64th step, published by another thread
    /// between the pick and its claim (`Graph.setBeforeClaimingCreations`): the run takes it cached and makes neither
    /// it nor Q (`Graph.claimedSkip`, `claimedHeld`: `StepBits`, `Plan.stepsUnder(published:)` of any size), as the
    /// build takes it where its walk asks; the creation plan serves it (`tooLarge` before branch graphmasks).
    @Test func aCreationStepPublishedAtItsClaimPastThe64thStepIsTaken() throws {
        let fx = try Fixture()
        try fx.register("H", [dep("R"), dep("S")], scope: .transient)
        try fx.register("R", Array(repeating: dep("T"), count: 65), scope: .container)
        try fx.register("T", scope: .transient)
        try fx.register("S", [dep("Q")], scope: .singleton)
        try fx.register("Q", scope: .transient)
        let root = try #require(fx.container.registration(for: Key("H")))
        let other = Box<Instance?>(nil)
        let published = Box(0)
        let child = try fx.child()
        var h: Instance?
        let counts = try withTestHook {
            Graph.setBeforeClaimingCreations { r in
                guard r === root, published.value == 0 else { return }
                published.value += 1
                onThreads(1) { _ in other.value = try? fx.resolve("S") }
            }
            defer { Graph.setBeforeClaimingCreations(nil) }
            return try counted { h = try fx.resolve("H", in: child) }
        }
        #expect(counts == ["resolves": 1], "\(counts)")
        #expect(published.value == 1)
        #expect(fx.tracker.made("S") == 1 && fx.tracker.made("Q") == 1 && fx.tracker.made("R") == 1 && fx.tracker.made("T") == 65,
                "S and Q the other thread's only: \(fx.tracker.log.suffix(4))")
        do {
            let s = try #require(other.value)
            #expect(Obj.of(try #require(h)).depPointer(1) == s.pointer, "the run took the S published at its claim")
        }
        h = nil
        other.value = nil
        _ = try child.close()
        _ = try fx.container.close()
        #expect(fx.tracker.badDrops == 0 && fx.tracker.liveCount == 0)
    }

    /// An object plan (Swift objects, no instances) of more than maxSteps objects, one factory of 40 slots.
    @Test func aLargeObjectPlan() throws {
        let length = Plan.maxSteps + 30
        let container = try Container(bridge: TestBridge())
        for i in 0..<length {
            let params: [Param] = i == 0 ? (1..<(Plan.maxSlots + 9)).map { .dependency(Key("O\($0)")) }
                : i + 1 < length ? [.dependency(Key("O\(i + 1)"))] : []
            try container.register(Key("O\(i)"), params: params, factory: MakeChainNode())
        }
        var seen: [Int] = []
        let counts = try counted {
            for _ in 0..<2 {
                let root = try container.resolve(Key("O0"), as: ChainNode.self)
                var node = root.next.first
                var chain = 1
                while let n = node { chain += 1; node = n.next.first }
                seen.append(root.next.count)
                seen.append(chain)
            }
        }
        #expect(seen == [Plan.maxSlots + 8, length, Plan.maxSlots + 8, length])
        #expect(counts.keys.sorted() == ["resolves"], "\(counts)")
    }
}

private final class ChainNode {
    let next: [ChainNode]
    init(_ next: [ChainNode]) { self.next = next }
}

private final class MakeChainNode: ObjectFactory, @unchecked Sendable {
    override func make(_ arguments: ObjectArguments) throws(CallbackFailure) -> AnyObject {
        ChainNode((0..<arguments.count).map { arguments.object($0, as: ChainNode.self) })
    }
}
