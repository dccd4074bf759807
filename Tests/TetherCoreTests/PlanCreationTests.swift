// Creation plans: a resolve whose warm plan finds a singleton or weak dependency not cached
// runs the plan compiled for that state of the caches (its shared dependencies made as steps,
// their cells claimed before any factory), not `Graph.build`. It must be indistinguishable from
// the build: the same factory calls in the same order, the same instances, one shared instance
// however many threads race, and after a failure nothing cached and every destructor run once
// (each test's literal results: the build's, which ran beside it as an oracle until branch noplansoff).
import Foundation
import Testing
import TetherCore

@Suite struct PlanCreationTests {
    /// The object tree below `obj` by labels (strong slots as subtrees).
    private static func describe(_ obj: Obj) -> String { obj.tree() }

    /// Runs `steps` (each resolves or changes the caches and returns what it saw): what the steps saw and the log
    /// must be `expected` (the build's, which ran beside it as an oracle until branch noplansoff). Returns the
    /// fixture and the builds the steps reached (`Container.buildsOnThisThread`).
    private func expectSameAsBuilt(expected: [String], _ setUp: (Fixture) throws -> Void, _ steps: (Fixture) throws -> [String],
                                   sourceLocation: SourceLocation = #_sourceLocation) throws -> (Fixture, builds: Int) {
        let fx = try Fixture()
        try setUp(fx)
        let before = Container.buildsOnThisThread
        let seen = try steps(fx)
        let builds = Container.buildsOnThisThread - before
        #expect(fx.tracker.badDrops == 0, sourceLocation: sourceLocation)
        expectLiteral(seen + fx.tracker.log, expected, sourceLocation: sourceLocation)
        return (fx, builds)
    }

    private func attempt(_ fx: Fixture, _ key: String) -> String {
        do {
            let instance = try fx.resolve(key)
            return withExtendedLifetime(instance) { Self.describe(Obj.of(instance)) }
        } catch let e as TetherError { return "\(e.code): \(e.message)" } catch { return "\(error)" }
    }

    @Test func firstResolveOverAnUncachedSingletonRunsACreationPlan() throws {
        let setUp: (Fixture) throws -> Void = { fx in
            try fx.register("A", [dep("S"), dep("B"), dep("T")], scope: .transient)
            try fx.register("S", [dep("G"), dep("U")], scope: .singleton)
            try fx.register("U", [dep("G")], scope: .singleton)
            try fx.register("G")
            try fx.register("B", [dep("G"), dep("S")])
            try fx.register("T", scope: .singleton)
            _ = try fx.resolve("T")  // cached: a leaf of the creation plan
        }
        let expected = ["A(S(G,U(G)),B(G,S(G,U(G))),T)", "A(S(G,U(G)),B(G,S(G,U(G))),T)", "make T", "make G", "make U",
                        "make S", "make B", "make A", "make G", "make B", "make A", "drop A", "drop B", "drop G",
                        "drop A", "drop B"]
        let (fx, builds) = try expectSameAsBuilt(expected: expected, setUp) { fx in
            let first = try fx.resolve("A")
            let second = try fx.resolve("A")
            #expect(Obj.of(first).depPointer(0) == Obj.of(second).depPointer(0), "one S")
            #expect(Obj.of(first).dep(0).depPointer(1) == Obj.of(first).dep(1).dep(1).depPointer(1), "one U")
            return [Self.describe(Obj.of(first)), Self.describe(Obj.of(second))]
        }
        #expect(builds == 0, "the first resolve ran the creation plan, the second the warm one")
        let a = fx.container.registration(for: Key("A"))!
        #expect(a.creationPlanCount == 1 && a.hasCurrentPlan)
        #expect(fx.tracker.calls("S") == 1 && fx.tracker.calls("U") == 1 && fx.tracker.calls("T") == 1)
        #expect(fx.tracker.events("make ") == ["make T", "make G", "make U", "make S", "make B", "make A", "make G", "make B", "make A"])
    }

    @Test func aDeadWeakInstanceIsMadeAgainByACreationPlan() throws {
        let setUp: (Fixture) throws -> Void = { fx in
            try fx.register("A", [dep("W"), dep("B")], scope: .transient)
            try fx.register("W", [dep("B")], scope: .weak)
            try fx.register("B", scope: .transient)
        }
        let expected = ["A(W(B),B)", "A(W(B),B)", "make B", "make W", "make B", "make A", "make B", "make A", "drop A",
                        "drop B", "drop A", "drop B", "drop W", "drop B", "make B", "make W", "make B", "make A",
                        "drop A", "drop B", "drop W", "drop B"]
        let (fx, builds) = try expectSameAsBuilt(expected: expected, setUp) { fx in
            var seen: [String] = []
            do {
                let held = try fx.resolve("A")
                let again = try fx.resolve("A")  // the weak instance alive: shared
                #expect(Obj.of(held).depPointer(0) == Obj.of(again).depPointer(0))
                seen.append(Self.describe(Obj.of(again)))
            }
            #expect(fx.tracker.dropped("W") == 1, "died with its holders")
            seen.append(attempt(fx, "A"))  // made again
            return seen
        }
        #expect(builds == 0)
        #expect(fx.tracker.calls("W") == 2 && fx.tracker.dropped("W") == 2 && fx.tracker.liveCount == 0)
        #expect(fx.container.registration(for: Key("A"))!.creationPlanCount == 1, "one state met twice: one plan")
    }

    @Test func aFactoryFailingMidCreationCachesNothingAndTheNextResolveRetries() throws {
        let fail = Box(true)
        let setUp: (Fixture) throws -> Void = { fx in
            fail.value = true
            try fx.register("A", [dep("D"), dep("S")], scope: .transient)
            try fx.register("S", [dep("D"), dep("E"), dep("F")], scope: .singleton)
            try fx.register("E", scope: .singleton)
            try fx.register("D")
            try fx.register("F") { _ in if fail.value { throw CallbackFailure(reason: "no F") } }
        }
        let expected = ["factoryFailed: factory for \"F\" returned NULL: no F (while resolving \"A\" -> \"S\" -> \"F\")",
                        "A(D,S(D,E,F))", "make D", "make E", "drop E", "drop D", "make D", "make E", "make F", "make S",
                        "make A", "drop A"]
        let (fx, builds) = try expectSameAsBuilt(expected: expected, setUp) { fx in
            var seen = [attempt(fx, "A")]
            fail.value = false
            seen.append(attempt(fx, "A"))
            return seen
        }
        #expect(builds == 0, "both resolves ran the creation plan")
        // The failed one: D, then E (a singleton made under the failed graph), destroyed last first, none cached.
        #expect(fx.tracker.log.prefix(4) == ["make D", "make E", "drop E", "drop D"])
        #expect(fx.tracker.calls("E") == 2 && fx.tracker.calls("S") == 1 && fx.tracker.dropped("E") == 1)
        #expect(fx.tracker.dropped("S") == 0 && fx.tracker.dropped("F") == 0 && fx.tracker.made("F") == 1)
        let e = expectError(.factoryFailed, "factory for \"F\" returned NULL") { () throws -> Void in
            fail.value = true
            fx.container.reset(.singleton)
            _ = try fx.resolve("A")
        }
        #expect(e?.message.contains("(while resolving \"A\" -> \"S\" -> \"F\")") == true, "\(e?.message ?? "")")
    }

    @Test func threadsRacingTheFirstResolveCreateTheSingletonOnce() throws {
        for round in 0..<5 {
            let fx = try Fixture()
            try fx.register("A", [dep("S"), dep("B")], scope: .transient)
            try fx.register("S", [dep("B"), dep("S2")], scope: .singleton) { _ in usleep(500) }
            try fx.register("S2", scope: .singleton) { _ in sched_yield() }
            try fx.register("B")
            let singletons = Box<Set<UInt>>([])
            let builds = Box(0)
            onThreads(4) { _ in
                let before = Container.buildsOnThisThread
                if let a = try? fx.resolve("A") { singletons.value.insert(UInt(bitPattern: Obj.of(a).depPointer(0))) }
                builds.value += Container.buildsOnThisThread - before
            }
            #expect(singletons.value.count == 1, "round \(round)")
            #expect(fx.tracker.calls("S") == 1 && fx.tracker.calls("S2") == 1 && fx.tracker.calls("A") == 4)
            #expect(builds.value == 0, "every thread ran a plan (the creation plan, or the warm one once published)")
            #expect(fx.tracker.badDrops == 0)
        }
    }

    @Test func aSingletonOrWeakRootNotCachedIsCreatedByAPlan() throws {
        let setUp: (Fixture) throws -> Void = { fx in
            try fx.register("S", [dep("G"), dep("T"), dep("G")], scope: .singleton)
            try fx.register("W", [dep("S"), dep("T")], scope: .weak)
            try fx.register("G")
            try fx.register("T", scope: .transient)
        }
        let expected = ["W(S(G,T,G),T)", "W(S(G,T,G),T)", "make G", "make T", "make S", "make T", "make W", "drop W",
                        "drop T", "make T", "make W", "drop W", "drop T"]
        let (fx, builds) = try expectSameAsBuilt(expected: expected, setUp) { fx in
            var seen: [String] = []
            do {
                let w = try fx.resolve("W")
                let s = try fx.resolve("S")
                #expect(Obj.of(w).depPointer(0) == s.pointer && Obj.of(s).depPointer(0) == Obj.of(s).depPointer(2), "one S, one G")
                seen.append(Self.describe(Obj.of(w)))
                #expect(try fx.resolve("W").pointer == w.pointer)
            }
            seen.append(attempt(fx, "W"))  // dead: made again over the cached S
            return seen
        }
        #expect(builds == 0)
        #expect(fx.tracker.calls("S") == 1 && fx.tracker.calls("W") == 2 && fx.tracker.calls("G") == 1 && fx.tracker.calls("T") == 3)
        #expect(fx.container.registration(for: Key("W"))!.creationPlanCount == 2, "W over S, then W alone")
    }

    /// A's factory resolves S, which the plan claimed ahead: the nested resolve makes S under the
    /// plan's claim (as under a build's, `SharedCache.Claim.createUnderOuter`), and the plan takes
    /// that S, its own dependency D not made again (`Plan.takePublished`).
    @Test func aSharedInstanceANestedResolveMadeUnderThePlansClaimIsTaken() throws {
        let nested = Box<UnsafeMutableRawPointer?>(nil)
        let setUp: (Fixture) throws -> Void = { fx in
            nested.value = nil
            try fx.register("Root", [dep("A"), dep("S")], scope: .transient)
            try fx.register("A", scope: .singleton) { _ in nested.value = try fx.resolve("S").pointer }
            try fx.register("S", [dep("D")], scope: .singleton)
            try fx.register("D")
        }
        let expected = ["Root(A,S(D))", "make D", "make S", "make A", "make Root", "drop Root"]
        let (fx, builds) = try expectSameAsBuilt(expected: expected, setUp) { fx in
            let root = try fx.resolve("Root")
            #expect(Obj.of(root).depPointer(1) == nested.value)
            return [Self.describe(Obj.of(root))]
        }
        #expect(builds == 0, "the nested resolve's creation plan makes S under the outer claim (a build before branch revive); the outer ran the plan")
        #expect(fx.tracker.calls("S") == 1 && fx.tracker.calls("D") == 1 && fx.tracker.calls("A") == 1)
    }

    /// R -> {S1, S2 -> G, W -> G}, G graph-scoped, W weak; S1's factory resolves S2 and W, which the plan claimed
    /// ahead (each nested resolve makes its own G). The build finds S2 and W published where its walk reaches
    /// them and makes no G; the plan checks S2 there too, before G (an early check, `Plan.PublishedVariant`),
    /// and goes on as the build's walk with S2 a leaf: W found published where it asks for G. Two G, not three.
    @Test func aDependencyALaterStepTakesIsNotMadeUnderOneANestedResolvePublished() throws {
        let held = Box<[Instance]>([])
        let setUp: (Fixture) throws -> Void = { fx in
            held.value = []
            try fx.register("R", [dep("S1"), dep("S2"), dep("W")], scope: .transient)
            try fx.register("S1", scope: .singleton) { _ in held.value += [try fx.resolve("S2"), try fx.resolve("W")] }
            try fx.register("S2", [dep("G")], scope: .singleton)
            try fx.register("W", [dep("G")], scope: .weak)
            try fx.register("G")
        }
        var counts: [String: Int] = [:]
        let expected = ["R(S1,S2(G),W(G))", "make G", "make S2", "make G", "make W", "make S1", "make R", "drop R",
                        "drop W", "drop G"]
        let (fx, builds) = try expectSameAsBuilt(expected: expected, setUp) { fx in
            var seen: [String] = []
            counts = try counted {
                let r = try fx.resolve("R")
                #expect(Obj.of(r).depPointer(1) == held.value[0].pointer && Obj.of(r).depPointer(2) == held.value[1].pointer)
                seen.append(Self.describe(Obj.of(r)))
            }
            held.value = []
            return seen
        }
        #expect(builds == 0 && counts["resolves", default: 0] >= 1 && counts.keys.allSatisfy { $0 == "resolves" }, "\(counts)")
        #expect(fx.tracker.calls("G") == 2 && fx.tracker.calls("S2") == 1 && fx.tracker.calls("W") == 1)
        #expect(fx.tracker.log.filter { $0.hasPrefix("make ") } == ["make G", "make S2", "make G", "make W", "make S1", "make R"])
    }

    /// As above, S1 resolving S2 only and W -> {H, G}: the build makes G where W asks for it, after H; the
    /// plan, S2 found published early, makes H, G, W in that order (not its steps' order: G was under S2).
    /// W failing: what the run made let go of last made first (`Plan.letGoMade`), G before H.
    @Test func aDependencyALaterStepTakesIsMadeWhereThatStepAsksOnceANestedResolvePublishedTheOneAbove() throws {
        let held = Box<[Instance]>([])
        let fail = Box(false)
        let setUp: (Fixture) throws -> Void = { fx in
            held.value = []
            fail.value = false
            try fx.register("R", [dep("S1"), dep("S2"), dep("W")], scope: .transient)
            try fx.register("S1", scope: .singleton) { _ in held.value += [try fx.resolve("S2")] }
            try fx.register("S2", [dep("G")], scope: .singleton)
            try fx.register("W", [dep("H"), dep("G")], scope: .weak) { _ in if fail.value { throw CallbackFailure(reason: "no W") } }
            try fx.register("G")
            try fx.register("H")
        }
        let expected = ["factoryFailed: factory for \"W\" returned NULL: no W (while resolving \"R\" -> \"W\")",
                        "R(S1,S2(G),W(H,G))", "make G", "make S2", "make S1", "make H", "make G", "drop G", "drop H",
                        "drop S1", "--", "make S1", "make H", "make G", "make W", "make R", "drop R", "drop W",
                        "drop G", "drop H"]
        let (fx, builds) = try expectSameAsBuilt(expected: expected, setUp) { fx in
            fail.value = true
            let failed = attempt(fx, "R")
            fail.value = false
            fx.tracker.note("--")
            let r = try fx.resolve("R")
            #expect(Obj.of(r).depPointer(1) == held.value[0].pointer)
            held.value = []
            return [failed, Self.describe(Obj.of(r))]
        }
        #expect(builds == 0)
        let log = fx.tracker.log.filter { $0.hasPrefix("make ") || $0.hasPrefix("drop ") || $0 == "--" }
        #expect(Array(log.prefix(8)) == ["make G", "make S2", "make S1", "make H", "make G", "drop G", "drop H", "drop S1"], "\(log)")
    }

    /// As above with a RESOLVER slot first in each factory with dependencies (the Python binding's shape): the run
    /// goes on in that order too, each such factory's graph holding what the run made before it in that order
    /// (`openFrames` by positions: W's resolver finds the H and G it was given, G made after H). Failing, the same
    /// drops; then two nested resolves published (S2 and S3, each over a graph-scoped dependency later steps take):
    /// the variant of a variant, made G, W, K, V, out of step order.
    @Test func aVariantOverResolverSlotsEntersWhatItMadeInItsOrder() throws {
        let held = Box<[Instance]>([])
        let fail = Box(false)
        let seenByResolver = Box<[Bool]>([])
        let setUp: (Fixture) throws -> Void = { fx in
            held.value = []
            fail.value = false
            seenByResolver.value = []
            let bridge = fx.bridge
            try fx.register("R", [.resolver, dep("S1"), dep("S2"), dep("W")], scope: .transient) { obj in
                let r = try #require(bridge.resolver(obj.words[0]))
                seenByResolver.value.append(try r.get(Key("W")).pointer == obj.depPointer(3))
            }
            try fx.register("S1", scope: .singleton) { _ in held.value += [try fx.resolve("S2")] }
            try fx.register("S2", [.resolver, dep("G")], scope: .singleton)
            try fx.register("W", [.resolver, dep("H"), dep("G")], scope: .weak) { obj in
                let r = try #require(bridge.resolver(obj.words[0]))
                seenByResolver.value.append(try r.get(Key("H")).pointer == obj.depPointer(1)
                                            && r.get(Key("G")).pointer == obj.depPointer(2))
                if fail.value { throw CallbackFailure(reason: "no W") }
            }
            try fx.register("G")
            try fx.register("H")
        }
        var counts: [String: Int] = [:]
        let expected = ["factoryFailed: factory for \"W\" returned NULL: no W (while resolving \"R\" -> \"W\")",
                        "R(S1,S2(G),W(H,G))", "make G", "make S2", "make S1", "make H", "make G", "drop G", "drop H",
                        "drop S1", "--", "make S1", "make H", "make G", "make W", "make R", "drop R", "drop W",
                        "drop G", "drop H"]
        let (fx, builds) = try expectSameAsBuilt(expected: expected, setUp) { fx in
            fail.value = true
            let failed = attempt(fx, "R")
            fail.value = false
            fx.tracker.note("--")
            var seen = [failed]
            counts = try counted {
                let r = try fx.resolve("R")
                #expect(Obj.of(r).depPointer(2) == held.value[0].pointer)
                seen.append(Self.describe(Obj.of(r)))
            }
            held.value = []
            return seen
        }
        #expect(builds == 0 && counts == ["resolves": 1], "\(counts)")
        #expect(seenByResolver.value == [true, true, true], "\(seenByResolver.value)")
        let log = fx.tracker.log.filter { $0.hasPrefix("make ") || $0.hasPrefix("drop ") || $0 == "--" }
        #expect(Array(log.prefix(8)) == ["make G", "make S2", "make S1", "make H", "make G", "drop G", "drop H", "drop S1"], "\(log)")
        #expect(Array(log.drop(while: { $0 != "--" }).filter { $0.hasPrefix("make ") }) == ["make S1", "make H", "make G", "make W", "make R"], "\(log)")

        let expected1 = ["make G", "make S2", "make K", "make S3", "make S1", "make G", "make W", "make K", "make V",
                         "make R", "drop R", "drop V", "drop K", "drop W", "drop G"]
        let twice = try expectSameAsBuilt(expected: expected1, { fx in
            held.value = []
            let bridge = fx.bridge
            try fx.register("R", [.resolver, dep("S1"), dep("S2"), dep("S3"), dep("W"), dep("V")], scope: .transient) { obj in
                let r = try #require(bridge.resolver(obj.words[0]))
                seenByResolver.value.append(try r.get(Key("V")).pointer == obj.depPointer(5))
            }
            try fx.register("S1", scope: .singleton) { _ in held.value += [try fx.resolve("S2"), try fx.resolve("S3")] }
            try fx.register("S2", [.resolver, dep("G")], scope: .singleton)
            try fx.register("W", [.resolver, dep("G")], scope: .weak)
            try fx.register("S3", [.resolver, dep("K")], scope: .singleton)
            try fx.register("V", [.resolver, dep("K")], scope: .weak)
            try fx.register("G")
            try fx.register("K")
        }) { fx in
            seenByResolver.value = []
            counts = try counted { _ = try fx.resolve("R") }
            held.value = []
            return []
        }
        // (R's plan and S1's two nested resolves' creation plans.)
        #expect(twice.builds == 0 && counts == ["resolves": 3] && seenByResolver.value == [true], "\(counts) \(seenByResolver.value)")
        #expect(twice.0.tracker.log.filter { $0.hasPrefix("make ") }.suffix(6) == ["make S1", "make G", "make W", "make K", "make V", "make R"],
                "\(twice.0.tracker.log)")

        // W's resolver gets V, which the run makes after it: taken from what the get built, K not made again (`takeBuilt`).
        let expected2 = ["R(S1,S2(G),S3(K),W(G),V(K))", "make G", "make S2", "make K", "make S3", "make S1", "make G",
                         "make K", "make V", "make W", "make R", "drop R", "drop W", "drop V", "drop K", "drop G"]
        let built = try expectSameAsBuilt(expected: expected2, { fx in
            held.value = []
            let bridge = fx.bridge
            try fx.register("R", [.resolver, dep("S1"), dep("S2"), dep("S3"), dep("W"), dep("V")], scope: .transient)
            try fx.register("S1", scope: .singleton) { _ in held.value += [try fx.resolve("S2"), try fx.resolve("S3")] }
            try fx.register("S2", [.resolver, dep("G")], scope: .singleton)
            try fx.register("W", [.resolver, dep("G")], scope: .weak) { obj in
                _ = try #require(bridge.resolver(obj.words[0])).get(Key("V"))
            }
            try fx.register("S3", [.resolver, dep("K")], scope: .singleton)
            try fx.register("V", [.resolver, dep("K")], scope: .weak)
            try fx.register("G")
            try fx.register("K")
        }) { fx in
            let r = try fx.resolve("R")
            held.value = []
            return [Self.describe(Obj.of(r))]
        }
        #expect(built.builds == 0)
        #expect(built.0.tracker.log.filter { $0.hasPrefix("make ") }.suffix(6) == ["make S1", "make G", "make K", "make V", "make W", "make R"],
                "\(built.0.tracker.log)")
    }

    /// Past `maxPlans` creation plans kept (a bridge that keeps replaced plans), a state runs a one-shot plan
    /// (`Registration.oneShotPlan`; the build before branch maxplans), kept by no registration.
    @Test func statesBeyondTheBoundRunAOneShotPlan() throws {
        let fx = try Fixture()
        try fx.register("A", [dep("S")], scope: .transient)
        try fx.register("S", scope: .singleton)
        let a = fx.container.registration(for: Key("A"))!
        _ = try fx.resolve("A")
        #expect(a.creationPlanCount == 1)
        // Each registration of a new key changes the configuration: a new creation plan per reset.
        for n in 0..<20 {
            try fx.register("X\(n)")
            fx.container.reset(.singleton)
            _ = try fx.resolve("A")
        }
        #expect(a.creationPlanCount == 16)
        let before = Container.buildsOnThisThread
        try fx.register("Y")
        fx.container.reset(.singleton)
        let held = a.heldPlanCount
        _ = try fx.resolve("A")
        #expect(Container.buildsOnThisThread - before == 0, "past the bound a one-shot plan serves it")
        // Kept: the configuration's warm plan (no creation plan recorded past the bound: `record` without
        // `creating`), whose run declines (S not cached); the one-shot plan is not.
        #expect(a.creationPlanCount == 16 && a.heldPlanCount == held + 1, "\(a.heldPlanCount) held, \(held) before")
        #expect(fx.tracker.calls("S") == 22)
    }
}
