// A shared instance a resolve nested on this thread made and has not published yet is an unfinished
// creation of the thread: a resolve nested further in that asks for it is refused (`.cycle`,
// `TetherError.unfinished`), never answered with a second instance. Also when the nested resolve
// made it under a cell an outer resolve's plan claimed ahead (`SharedCache.Claim.createUnderOuter`):
// the plan claims its creation steps' cells before any factory, the build at its first claim, so only
// under a plan does the nested resolve find the cell already claimed by its thread (issue #28, the
// corpus's `a_nested_resolve_under_a_callback_target_of_an_outer_plan_step_refuses_…`).
import Testing
import TetherCore

@Suite struct NestedUnfinishedTests {
    /// What a resolve of `key` gave: the object tree, or the error's code and message.
    private static func attempt(_ fx: Fixture, _ key: String) -> String {
        do {
            let instance = try fx.resolve(key)
            return withExtendedLifetime(instance) { Obj.of(instance).tree() }
        } catch let e as TetherError { return "\(e.code): \(e.message)" } catch { return "\(error)" }
    }

    /// Runs `scenario` with plans and without: the same factory calls, drops and answers. Returns the
    /// plan side's answers and the builds it reached.
    private static func expectSameAsBuilt(_ setUp: (Fixture, Box<[String]>) throws -> Void, _ key: String,
                                          sourceLocation: SourceLocation = #_sourceLocation) throws -> (seen: [String], log: [String], builds: Int) {
        var outcomes: [(log: [String], seen: [String])] = []
        var builds = 0
        for plans in [false, true] {
            let fx = try Fixture()
            fx.container.usesPlans = plans
            let seen = Box<[String]>([])
            try setUp(fx, seen)
            let before = Container.buildsOnThisThread
            // Twice: the first resolve records the plan (or builds), the second runs it warm.
            for _ in 0..<2 { seen.value.append(attempt(fx, key)) }
            if plans { builds = Container.buildsOnThisThread - before }
            _ = try fx.container.close()
            #expect(fx.tracker.badDrops == 0 && fx.tracker.liveCount == 0, sourceLocation: sourceLocation)
            outcomes.append((fx.tracker.log, seen.value))
        }
        #expect(outcomes[0].log == outcomes[1].log, sourceLocation: sourceLocation)
        #expect(outcomes[0].seen == outcomes[1].seen, sourceLocation: sourceLocation)
        return (outcomes[1].seen, outcomes[1].log, builds)
    }

    /// R(F, S): F's factory resolves C, whose completion callback asks weak:S; S(W) resolves W in its
    /// factory, W weak-scoped. The callback's request makes W1 (under R's plan's claim of W) and S1;
    /// S's factory asking W then is refused (W1 unfinished), not answered with a W2. R's own S then
    /// makes W2 (W1 dropped with the request's S1) and is refused W the same way.
    @Test func aNestedResolveUnderACallbackTargetOfAnOuterPlanStepIsRefusedItsUnfinishedWeakInstance() throws {
        let (seen, log, builds) = try Self.expectSameAsBuilt({ fx, seen in
            try fx.register("R", [dep("F"), dep("S")], scope: .transient)
            try fx.register("F") { obj in obj.got.append(try fx.resolve("C").pointer) }
            let c = try fx.register("C")
            fx.onComplete(c) { resolver, _, obj in obj.weaks.append(try resolver.getWeak(Key("S"))) }
            try fx.register("W", scope: .weak)
            try fx.register("S", [dep("W")]) { _ in let got = Self.attempt(fx, "W"); seen.value.append("S asks W: " + got) }
        }, "R")
        #expect(seen.count == 6)
        #expect(seen.filter { $0.hasPrefix("S asks W: cycle") }.count == 4, "every S refused W: \(seen)")
        #expect(log.filter { $0 == "make W" }.count == 4, "one W per S (two resolves of R): \(log)")
        #expect(builds == 0, "R ran its plan")
    }

    /// The same without the callback: R(A, S), A's factory resolving S. A singleton W (never dropped):
    /// the nested S's W1 is the one R's S takes, and S's factory is refused W both times.
    @Test func aNestedResolveUnderAnOuterPlansClaimIsRefusedItsUnfinishedSingleton() throws {
        let (seen, log, _) = try Self.expectSameAsBuilt({ fx, seen in
            try fx.register("R", [dep("A"), dep("S")], scope: .transient)
            try fx.register("A") { obj in obj.got.append(try fx.resolve("S").pointer) }
            try fx.register("W", scope: .singleton)
            try fx.register("S", [dep("W")]) { _ in let got = Self.attempt(fx, "W"); seen.value.append("S asks W: " + got) }
        }, "R")
        #expect(seen.first?.hasPrefix("S asks W: cycle") == true && seen.first?.contains("\"W\"") == true, "\(seen)")
        #expect(log.filter { $0 == "make W" }.count == 1, "one W: \(log)")
    }

    /// The build leaves such a cell too: R(Y, F, S) with Y singleton, whose creation claims Y's and W's cells
    /// in order (`Graph.claimInOrder`) before F's factory resolves C; the callback's request makes W1 under
    /// R's claim, and S's factory asking W is refused on both paths (it made a W2 on both before).
    @Test func aNestedResolveUnderAnOuterBuildsClaimsInOrderIsRefusedItsUnfinishedWeakInstance() throws {
        let (seen, log, _) = try Self.expectSameAsBuilt({ fx, seen in
            try fx.register("R", [dep("Y"), dep("F"), dep("S")], scope: .transient)
            try fx.register("Y", scope: .singleton)
            try fx.register("F") { obj in obj.got.append(try fx.resolve("C").pointer) }
            let c = try fx.register("C")
            fx.onComplete(c) { resolver, _, obj in obj.weaks.append(try resolver.getWeak(Key("S"))) }
            try fx.register("W", scope: .weak)
            try fx.register("S", [dep("W")]) { _ in let got = Self.attempt(fx, "W"); seen.value.append("S asks W: " + got) }
        }, "R")
        #expect(seen.filter { $0.hasPrefix("S asks W: cycle") }.count == 4, "every S refused W: \(seen)")
        #expect(log.filter { $0 == "make W" }.count == 4, "one W per S: \(log)")
    }

    /// Three levels: R(A, S); A's factory resolves B, B(M) whose factory resolves S; S(W) asks W.
    /// The innermost ask is refused under the two nested resolves; W made once.
    @Test func threeLevelsOfNestedResolvesUnderAnOuterPlanRefuseTheUnfinishedInstance() throws {
        let (seen, log, _) = try Self.expectSameAsBuilt({ fx, seen in
            try fx.register("R", [dep("A"), dep("S")], scope: .transient)
            try fx.register("A") { obj in obj.got.append(try fx.resolve("B").pointer) }
            try fx.register("B", [dep("M")]) { obj in obj.got.append(try fx.resolve("S").pointer) }
            try fx.register("M", scope: .singleton)
            try fx.register("W", scope: .singleton)
            try fx.register("S", [dep("W")]) { _ in let got = Self.attempt(fx, "W"); seen.value.append("S asks W: " + got) }
        }, "R")
        #expect(seen.first?.hasPrefix("S asks W: cycle") == true, "\(seen)")
        #expect(log.filter { $0 == "make W" }.count == 1, "one W: \(log)")
    }
}
