// Branch pickrest (issue 28): decline reasons folded or gone. `sharedRoot` was `notCached`'s shapes for a shared
// root: counted `notCached` now. `cycle` was thrown only where `Plan.meeting` found no cut for a plan `Plan.meets`
// said meets a key further out, which never happens (`meeting`'s assertion, run by every nested resolve of these
// tests); the recorder's cycle and captive refusals are `metFailure` (a failing plan reports the build's error). And a
// child past `maxPlans` component plans, counted `other`, runs a one-shot plan.
import Testing
@testable import TetherCore

@Suite struct FoldedDeclinePlanTests {
    /// The recorder's walk meeting a constructor cycle, or a strict container's singleton refusing a captive: the
    /// build's error kept for a failing plan, the walk's marker `metFailure` (`cycle` and `other` before).
    @Test func theRecordersCycleAndCaptiveAreMetFailures() throws {
        let fx = try Fixture()
        let a = try fx.register("A", [dep("B")])
        try fx.register("B", [dep("A")])
        let cycle = Plan.Recorder(lookup: fx.container, allowsArguments: true)
        cycle.recordsSlots = true
        #expect(cycle.visit(Borrowed(a)) == nil)
        #expect(cycle.decline == .metFailure && cycle.failure?.code == .cycle, "\(cycle.decline)")

        let strict = try Fixture()
        strict.container.refusesCaptives = true
        let holder = try strict.register("Holder", [dep("Long"), dep("Short")], scope: .singleton)
        try strict.register("Long", scope: .singleton)
        try strict.register("Short")
        let captive = Plan.Recorder(lookup: strict.container, allowsArguments: true)
        (captive.recordsSlots, captive.createsUncached) = (true, true)
        #expect(captive.visit(Borrowed(holder)) == nil)
        #expect(captive.decline == .metFailure && captive.failure?.code == .captiveDependency, "\(captive.decline)")
        // Both are failing plans' (never counted): the plan path's outcome is the build's.
        let counts = counted {
            #expect(throws: TetherError.self) { try fx.resolve("A") }
            #expect(throws: TetherError.self) { try strict.resolve("Holder") }
        }
        #expect(counts == ["resolves": 2], "\(counts)")
    }

    /// A shared root's warm plan from a child with registrations of its own: none (its resolve is its creation plan's,
    /// or its cache's), `notCached` (`sharedRoot` before).
    @Test(arguments: [Scope.weak, .singleton]) func aChildsWarmRecordOfASharedRootIsNotCached(scope: Scope) throws {
        let fx = try Fixture()
        let root = try fx.register("Root", [dep("L")], scope: scope)
        try fx.register("L")
        let child = try fx.child()
        try fx.register("Own", in: child)
        #expect(throws: Plan.Decline.notCached) { try Plan.record(root, configuration: fx.container.configuration, child: child) }
    }

    /// A weak or singleton root resolved from a child with registrations of its own, over a container-scoped key and
    /// a key not registered (then a singleton not cached before them, a creation step the walk makes before its
    /// error): its creating walk fails reading the request, and from a child no warm plan serves a shared root, so
    /// the build served it (`notCached`, branch pickrest). Now a failing creation plan (`Plan.Failing`, recorded by
    /// `Registration.componentCreationPlan`): the build's error and path, K made and dropped (the singleton too:
    /// nothing half-built cached), and again on a second resolve (nothing cached), as with no plans. (A singleton root
    /// is its own container's resolve, `Graph.resolve`: over a singleton too, its creating walk's failing plan, not
    /// the warm one that declined the singleton not cached, `notCached`.)
    @Test(arguments: [(Scope.weak, false), (.singleton, false), (.weak, true), (.singleton, true)])
    func aSharedRootFromAChildWhoseCreatingWalkFailsReadingTheRequestIsAFailingPlans(scope: Scope, overSingleton: Bool) throws {
        let seen = try served(resolves: 2) { fx -> [String] in
            try fx.register("Root", (overSingleton ? [dep("S")] : []) + [dep("K"), dep("Missing")], scope: scope)
            try fx.register("K", scope: .container)
            try fx.register("S", scope: .singleton)
            let child = try fx.child()
            try fx.register("Own", in: child)
            var seen: [String] = []
            for _ in 0..<2 {
                do { _ = try fx.resolve("Root", in: child); seen.append("made") } catch let e as TetherError {
                    seen.append("\(e.code): \(e.message)")
                }
            }
            seen.append("S \(fx.tracker.made("S")) \(fx.tracker.dropped("S")), K \(fx.tracker.made("K")) \(fx.tracker.dropped("K")), Root \(fx.tracker.calls("Root"))")
            _ = try child.close()
            return seen
        }.seen
        #expect(seen[0] == seen[1] && seen[0].hasPrefix("notFound:") && seen[0].contains("\"Missing\""), "\(seen)")
        #expect(seen[2] == (overSingleton ? "S 2 2, K 2 2, Root 0" : "S 0 0, K 2 2, Root 0"), "\(seen)")
    }

    /// Children of twenty components (each its own registration; every third one its own B too) resolving A (over B,
    /// none shared) in a container whose bridge keeps replaced plans: past `maxPlans` component plans `componentPlan`
    /// finds none, and each resolve runs a plan for itself (`Registration.oneShotPlan`, the warm one: the creating walk
    /// creates nothing), as from the owner past `maxPlans` configurations (the build before, counted `other`; the
    /// corpus's `plans_children_of_twenty_components` on swift-plans). The trees are the build's, the plans bounded.
    @Test func childrenPastMaxPlansComponentsRunAPlanEach() throws {
        var outcomes: [(trees: [String], counts: [String: Int])] = []
        do {
            let fx = try Fixture()
            try fx.register("A", [dep("B")])
            try fx.register("B")
            var trees: [String] = []
            let counts = try counted {
                for n in 0..<20 {
                    let child = try fx.child()
                    try fx.register("Own\(n)", in: child)
                    if n % 3 == 2 { try fx.register("B", in: child, label: "B\(n)") }
                    for _ in 0..<2 {
                        let a = try fx.resolve("A", in: child)
                        trees.append(withExtendedLifetime(a) { Obj.of(a).tree() })
                    }
                    _ = try child.close()
                }
            }
            let a = try #require(fx.container.registration(for: Key("A")))
            #expect(a.childPlanCount <= Registration.maxPlans, "\(a.childPlanCount)")
            #expect(fx.tracker.made("A") == 40 && fx.tracker.liveCount == 0 && fx.tracker.badDrops == 0)
            outcomes.append((trees, counts))
        }
        #expect(outcomes[0].trees[34...] == ["A(B17)", "A(B17)", "A(B)", "A(B)", "A(B)", "A(B)"], "\(outcomes[0].trees)")
        #expect(outcomes[0].counts == ["resolves": 40], "every resolve a plan's: \(outcomes[0].counts)")
    }
}
