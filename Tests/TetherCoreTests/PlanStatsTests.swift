// PlanStats: every resolve counted once, and each one that goes to Graph.build under the
// reason its plan declined (the recorder's, a run's, or why none was looked for).
import Testing
import TetherCore

@Suite struct PlanStatsTests {
    /// The calling thread's counts after `body` less those before (a test body runs on one thread).
    private func counted(_ body: () throws -> Void) rethrows -> [String: Int] {
        PlanStats.countOnThisThread()
        let before = PlanStats.thisThread()
        try body()
        var delta = PlanStats.thisThread()
        for (name, n) in before { delta[name, default: 0] -= n }
        return delta.filter { $0.value != 0 }
    }

    @Test func aPlainGraphIsServedByItsPlan() throws {
        let fx = try Fixture()
        try fx.register("A", [dep("B")], scope: .transient)
        try fx.register("B", scope: .transient)
        let counts = try counted {
            for _ in 0..<3 { _ = try fx.resolve("A") }
        }
        #expect(counts == ["resolves": 3])
    }

    @Test func eachRecorderReasonIsCountedPerResolve() throws {
        let fx = try Fixture()
        try fx.register("M", [dep("Nowhere")])
        try fx.register("C1", [dep("C2")])
        try fx.register("C2", [dep("C1")])
        try fx.register("A", [dep("X")])
        try fx.register("X", [.argument(.i64)])
        let counts = try counted {
            // Each resolve counts once, the second under the reason the declined plan kept.
            for _ in 0..<2 { #expect(throws: TetherError.self) { try fx.resolve("M") } }
            #expect(throws: TetherError.self) { try fx.resolve("C1") }
            #expect(throws: TetherError.self) { try fx.resolve("A") }
        }
        // (A's dependency taking runtime arguments is a plan that fails as the build does: no decline.)
        #expect(counts == ["resolves": 4, "missing": 2, "cycle": 1])
    }

    /// A plan recorded through a child with registrations of its own makes slots per resolve as the
    /// owner's plans do (a WEAK slot here), and a container step's WEAK slot is its reason.
    @Test func aChildsPlanMakesSlotsAContainerStepsSlotIsItsReason() throws {
        let fx = try Fixture()
        try fx.register("B")
        try fx.register("W", [weakDep("B")])
        try fx.register("R", [weakDep("V")], scope: .container)
        try fx.register("V", scope: .singleton)
        try fx.register("H", [dep("R")])
        let child = try fx.child()
        try fx.register("Own", in: child)
        let counts = try counted {
            for _ in 0..<2 { _ = try fx.resolve("W", in: child) }
            for _ in 0..<2 { _ = try fx.resolve("H", in: child) }
        }
        #expect(counts == ["resolves": 4, "weakSlot": 2])
    }

    @Test func aSingletonNotCachedYetIsCreatedByAPlan() throws {
        let fx = try Fixture()
        try fx.register("A", [dep("S")], scope: .transient)
        try fx.register("S", scope: .singleton)
        let counts = try counted {
            for _ in 0..<3 { _ = try fx.resolve("A") }
        }
        // The first resolve runs the plan compiled with S not cached (S a creation step); the next two
        // replay the warm plan: none goes to the graph's build.
        #expect(counts == ["resolves": 3])
    }

    @Test func plansOffIsItsOwnReason() throws {
        let fx = try Fixture()
        fx.container.usesPlans = false
        try fx.register("A", scope: .transient)
        let counts = try counted {
            for _ in 0..<2 { _ = try fx.resolve("A") }
        }
        #expect(counts == ["resolves": 2, "plansOff": 2])
    }
}
