// A bridge that retires replaced plans (the ABI's: its reclaimer) lets a registration hold a few
// plans at once and record any number over its life: every configuration, cache state and
// per-request component gets a plan, with no `planLimit` past 16.
import Testing
import TetherCore

@Suite struct PlanRetirementTests {
    @Test func tenThousandConfigurationsEachGetAPlan() throws {
        let fx = try Fixture(retiring: true)
        try fx.register("A", [dep("B")], scope: .transient)
        try fx.register("B", scope: .transient)
        let a = fx.container.registration(for: Key("A"))!
        var wrongDeps = 0
        var mostHeld = 0
        let counts = try counted {
            for n in 0..<10_000 {
                try fx.register("X\(n)")  // a new configuration
                let instance = try fx.resolve("A")
                if withExtendedLifetime(instance, { Obj.of(instance).dep(0).label }) != "B" { wrongDeps += 1 }
                mostHeld = max(mostHeld, a.heldPlanCount)
                // No resolve is under way between two: what was retired may go.
                if n % 64 == 63 { fx.bridge.releaseRetired() }
            }
        }
        #expect(counts == ["resolves": 10_000], "every resolve served by a plan")
        #expect(wrongDeps == 0 && mostHeld == 1 && a.hasCurrentPlan)
        #expect(fx.bridge.retiredEver == 9_999, "each plan but the first replaced one")
        #expect(fx.tracker.made("A") == 10_000 && fx.tracker.made("B") == 10_000)
        #expect(fx.tracker.liveCount == 0 && fx.tracker.badDrops == 0)
    }

    @Test func aNewConfigurationRetiresTheCreationPlansOfTheLast() throws {
        // Past `maxPlans` configurations with the singleton reset each time: each one's first
        // resolve runs a creation plan (the bridge that keeps plans builds them past 16).
        let fx = try Fixture(retiring: true)
        try fx.register("A", [dep("S")], scope: .transient)
        try fx.register("S", scope: .singleton)
        let a = fx.container.registration(for: Key("A"))!
        var mostHeld = 0
        let counts = try counted {
            for n in 0..<40 {
                try fx.register("X\(n)")
                fx.container.reset(.singleton)
                _ = try fx.resolve("A")
                _ = try fx.resolve("A")  // S cached now: the warm plan
                mostHeld = max(mostHeld, a.heldPlanCount)
                #expect(a.creationPlanCount == 1)
            }
        }
        #expect(counts == ["resolves": 80])
        #expect(mostHeld <= 2, "the warm plan and the creation plan of the configuration now")
        #expect(fx.tracker.calls("S") == 40 && fx.tracker.made("A") == 80)
        fx.bridge.releaseRetired()
    }

    @Test func manyComponentsGetPlansTheLeastRecentlyServedRetired() throws {
        // A child per request, each registering a key of its own: a component per child. The keeping
        // bridge stops at 16 (`planLimit`); retiring, each gets a plan, and a registration holds 8.
        let fx = try Fixture(retiring: true)
        try fx.register("A", [dep("B")], scope: .transient)
        try fx.register("B", scope: .transient, label: "parent B")
        let a = fx.container.registration(for: Key("A"))!
        var labels: [String] = []
        var mostHeld = 0
        let counts = try counted {
            for round in 0..<60 {
                let child = try fx.child()
                try fx.register("Own\(round % 30)", scope: .transient, in: child)
                if round % 3 == 2 { try fx.register("B", scope: .transient, in: child, label: "child B\(round)") }
                for _ in 0..<2 {
                    let instance = try fx.resolve("A", in: child)
                    labels.append(withExtendedLifetime(instance) { Obj.of(instance).dep(0).label })
                }
                mostHeld = max(mostHeld, a.childPlanCount)
            }
        }
        #expect(counts == ["resolves": 120])
        #expect(labels == (0..<60).flatMap { round in Array(repeating: round % 3 == 2 ? "child B\(round)" : "parent B", count: 2) })
        #expect(mostHeld == 8 && a.heldPlanCount == 8)
        #expect(fx.bridge.retiredEver == 60 - 8, "each recorded one past 8 retired the least recently served")
        #expect(fx.tracker.made("A") == 120 && fx.tracker.made("parent B") == 80)
        #expect(fx.tracker.liveCount == 0 && fx.tracker.badDrops == 0)
        fx.bridge.releaseRetired()
    }

    @Test func aDeclinedChildGraphIsKeyedByItsComponent() throws {
        // A child's own registration over a key registered nowhere: its graph fails (`missing`), a
        // failing plan (`Plan.Failing`) keyed by its component. Retiring, every child of that component
        // runs it, with no recording again, however many children.
        let fx = try Fixture(retiring: true)
        try fx.register("A", [dep("B")], scope: .transient)
        let a = fx.container.registration(for: Key("A"))!
        var failures = 0
        let counts = try counted {
            for _ in 0..<30 {
                let child = try fx.child()
                try fx.register("B", [dep("Nowhere")], in: child, label: "child B")
                for _ in 0..<2 {
                    do { _ = try fx.resolve("A", in: child) } catch let error as TetherError where error.code == .notFound { failures += 1 }
                }
            }
        }
        #expect(counts == ["resolves": 60], "no decline: the plan's path")
        #expect(failures == 60)
        #expect(a.childPlanCount == 1, "one failing plan, found by its component")
        #expect(fx.tracker.made("child B") == 0 && fx.tracker.made("A") == 0)
    }

    @Test func aChildUnderAChildStacksBothComponents() throws {
        // A request's child under a request's child: one plan per stacked component (the registrations of
        // every container between the resolving one and the owner, each container's its own level), each
        // resolve taking every level's registrations from its own chain. The same keys split otherwise
        // between the levels, or in another order, is another component.
        let fx = try Fixture(retiring: true)
        try fx.register("A", [dep("B"), dep("C")], scope: .transient)
        try fx.register("B", scope: .transient, label: "root B")
        try fx.register("C", scope: .transient, label: "root C")
        let a = fx.container.registration(for: Key("A"))!
        func labels(_ from: Container) throws -> String {
            let instance = try fx.resolve("A", in: from)
            return withExtendedLifetime(instance) { "\(Obj.of(instance).dep(0).label) \(Obj.of(instance).dep(1).label)" }
        }
        var seen: [String] = []
        let counts = try counted {
            for round in 0..<10 {
                // B in the child, C in its child.
                let child = try fx.child()
                try fx.register("B", scope: .transient, in: child, label: "B\(round)")
                let grandchild = try fx.child(of: child)
                try fx.register("C", scope: .transient, in: grandchild, label: "C\(round)")
                seen.append(try labels(grandchild))
                seen.append(try labels(child))
                // B and C both in the child, the grandchild's own key unrelated.
                let both = try fx.child()
                try fx.register("B", scope: .transient, in: both, label: "both B\(round)")
                try fx.register("C", scope: .transient, in: both, label: "both C\(round)")
                let under = try fx.child(of: both)
                try fx.register("D", scope: .transient, in: under)
                seen.append(try labels(under))
                // C in the child, B in its child (the levels' keys swapped).
                let swapped = try fx.child()
                try fx.register("C", scope: .transient, in: swapped, label: "swapped C\(round)")
                let below = try fx.child(of: swapped)
                try fx.register("B", scope: .transient, in: below, label: "swapped B\(round)")
                seen.append(try labels(below))
                // An empty child between: it falls through.
                let empty = try fx.child(of: child)
                let deepest = try fx.child(of: empty)
                try fx.register("C", scope: .transient, in: deepest, label: "deep C\(round)")
                seen.append(try labels(deepest))
            }
        }
        #expect(counts == ["resolves": 50], "every resolve served by a plan: no childDepth")
        #expect(seen == (0..<10).flatMap { r in
            ["B\(r) C\(r)", "B\(r) root C", "both B\(r) both C\(r)", "swapped B\(r) swapped C\(r)", "B\(r) deep C\(r)"]
        })
        // [B | C] (twice: the empty child between changes nothing), [B], [B, C | D], [C | B].
        #expect(a.childPlanCount == 4)
        #expect(fx.tracker.made("A") == 50 && fx.tracker.liveCount == 0 && fx.tracker.badDrops == 0)
    }
}
