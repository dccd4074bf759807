// Plans: a plain graph (graph/transient scopes, DEP and CONTEXT slots, no
// completion callbacks, shared dependencies already cached) is replayed from a
// recorded order instead of being built frame by frame. Replaying must be
// indistinguishable from building: the same factory calls in the same order,
// the same instances in the same slots, the same destruction, the same errors;
// and a plan must never outlive the configuration it was recorded under.
import Testing
import TetherCore

@Suite struct PlanTests {
    /// What one resolve of `root` did, to compare the two paths.
    private struct Trace: Equatable {
        var log: [String]
        var slots: [String]
        var error: String?
    }

    /// Registers a graph with `setUp`, then resolves `root` `times` times (each
    /// instance released before the next) with plans on or off.
    private func trace(plans: Bool, times: Int = 3, root: String, _ setUp: (Fixture) throws -> Void) throws -> (Trace, Fixture) {
        let fx = try Fixture()
        fx.container.usesPlans = plans
        try setUp(fx)
        var slots: [String] = []
        var error: String?
        for _ in 0..<times {
            do {
                let instance = try fx.resolve(root)
                slots.append(Self.describe(Obj.of(instance)))
            } catch let e as TetherError {
                error = "\(e.code): \(e.message)"
            }
        }
        #expect(fx.tracker.badDrops == 0)
        return (Trace(log: fx.tracker.log, slots: slots, error: error), fx)
    }

    /// The object tree below `obj` by labels (strong slots only).
    private static func describe(_ obj: Obj) -> String {
        let deps = obj.words.compactMap { word -> String? in
            guard word > 0x1000, let p = UnsafeMutableRawPointer(bitPattern: UInt(word)) else { return nil }
            return describe(Obj.at(p))
        }
        return deps.isEmpty ? obj.label : "\(obj.label)(\(deps.joined(separator: ",")))"
    }

    /// The label of the first dependency of a new "A", read while the instance is held.
    private func firstDepLabel(_ fx: Fixture, in container: Container? = nil) throws -> String {
        let instance = try fx.resolve("A", in: container)
        return withExtendedLifetime(instance) { Obj.of(instance).dep(0).label }
    }

    private func expectSamePaths(root: String, expectPlan: Bool, _ setUp: @escaping (Fixture) throws -> Void,
                                 sourceLocation: SourceLocation = #_sourceLocation) throws {
        let (replayed, fx) = try trace(plans: true, root: root, setUp)
        let (built, _) = try trace(plans: false, root: root, setUp)
        #expect(replayed == built, sourceLocation: sourceLocation)
        #expect(fx.container.registration(for: Key(root))!.hasCurrentPlan == expectPlan, sourceLocation: sourceLocation)
    }

    @Test func chainIsReplayedExactlyAsBuilt() throws {
        try expectSamePaths(root: "A", expectPlan: true) { fx in
            try fx.register("A", [dep("B")], scope: .transient)
            try fx.register("B", [dep("C")], scope: .transient)
            try fx.register("C", scope: .transient)
        }
    }

    @Test func diamondWithGraphScopeSharesOneInstance() throws {
        try expectSamePaths(root: "A", expectPlan: true) { fx in
            try fx.register("A", [dep("B"), dep("C"), dep("D")])
            try fx.register("B", [dep("D")])
            try fx.register("C", [dep("D"), dep("T"), dep("T")])
            try fx.register("D")
            try fx.register("T", scope: .transient)
        }
    }

    @Test func contextSlotsAndCachedSingletonLeaves() throws {
        let context = UnsafeMutableRawPointer(bitPattern: 0x7)!
        try expectSamePaths(root: "A", expectPlan: true) { fx in
            try fx.register("A", [.context, dep("S"), dep("B")], context: context)
            try fx.register("B", [dep("S"), dep("W")])
            try fx.register("S", scope: .singleton)
            try fx.register("W", scope: .weak)
        }
    }

    @Test func graphsPlansCannotReplayAreBuilt() throws {
        // A completion callback, a weak slot, a lazy slot, a constructor cycle.
        try expectSamePaths(root: "A", expectPlan: false) { fx in
            let b = try fx.register("B")
            try fx.register("A", [dep("B")])
            fx.onComplete(b)
        }
        try expectSamePaths(root: "A", expectPlan: false) { fx in
            try fx.register("A", [weakDep("B")])
            try fx.register("B")
        }
        try expectSamePaths(root: "A", expectPlan: false) { fx in
            try fx.register("A", [lazyDep("B")])
            try fx.register("B")
        }
        try expectSamePaths(root: "A", expectPlan: false) { fx in
            try fx.register("A", [dep("B")])
            try fx.register("B", [dep("A")])
        }
    }

    @Test func failureMidPlanDestroysWhatItMadeAndReportsTheSamePath() throws {
        try expectSamePaths(root: "A", expectPlan: true) { fx in
            try fx.register("A", [dep("B"), dep("C")])
            try fx.register("B", [dep("D")])
            try fx.register("C", [dep("D")]) { _ in throw CallbackFailure(reason: "no C") }
            try fx.register("D")
        }
        let (trace, fx) = try trace(plans: true, root: "A") { fx in
            try fx.register("A", [dep("B"), dep("C")])
            try fx.register("B", [dep("D")])
            try fx.register("C", [dep("D")]) { _ in throw CallbackFailure(reason: "no C") }
            try fx.register("D")
        }
        #expect(trace.error?.contains("factory for \"C\" returned NULL: no C (while resolving \"A\" -> \"C\")") == true)
        #expect(fx.tracker.made("D") == 3 && fx.tracker.dropped("D") == 3 && fx.tracker.dropped("B") == 3)
        #expect(fx.tracker.liveCount == 0)
    }

    @Test func uncachedSingletonMakesThePlanDeclineUntilItIsCached() throws {
        let fx = try Fixture()
        try fx.register("A", [dep("S"), dep("B")], scope: .transient)
        try fx.register("B", scope: .transient)
        try fx.register("S", scope: .singleton)
        let a = try fx.container.registration(for: Key("A"))!
        var first: Instance? = try fx.resolve("A")
        #expect(fx.tracker.made("S") == 1 && fx.tracker.calls("B") == 1, "declined before any factory: B made once")
        #expect(a.hasCurrentPlan)
        for _ in 0..<3 { _ = try fx.resolve("A") }
        #expect(fx.tracker.made("S") == 1 && fx.tracker.made("A") == 4)
        fx.container.reset(.singleton)
        first = nil
        let again = try fx.resolve("A")
        #expect(fx.tracker.made("S") == 2, "after a reset the graph makes it again, once")
        #expect(Obj.of(again).dep(0).label == "S")
        _ = first
    }

    @Test func everyConfigurationChangeRetiresThePlan() throws {
        let fx = try Fixture()
        try fx.register("A", [dep("B")], scope: .transient)
        try fx.register("B", scope: .transient, label: "B1")
        let a = try fx.container.registration(for: Key("A"))!
        #expect(try firstDepLabel(fx) == "B1")
        #expect(a.hasCurrentPlan)

        try fx.register("B", scope: .transient, label: "B2")  // replaced
        #expect(!a.hasCurrentPlan)
        #expect(try firstDepLabel(fx) == "B2")

        let b = try fx.container.registration(for: Key("B"))!
        b.setScope(.singleton)  // B becomes a cached leaf
        let x = try fx.resolve("A"), y = try fx.resolve("A")
        #expect(Obj.of(x).depPointer(0) == Obj.of(y).depPointer(0) && fx.tracker.made("B2") == 2)

        b.setScope(.transient)
        fx.onComplete(b)  // no longer plain (a cached singleton's callbacks ran when it was made)
        _ = try fx.resolve("A")
        #expect(!a.hasCurrentPlan)
        #expect(fx.tracker.events("complete ") == ["complete B"])
    }

    @Test func parentChangesRetireAChildsPlansAndChildrenOverride() throws {
        let fx = try Fixture()
        let child = try fx.child()
        try fx.register("A", [dep("B")], scope: .transient, in: child)
        try fx.register("B", scope: .transient, label: "parent B")
        let a = try child.registration(for: Key("A"))!
        #expect(try firstDepLabel(fx, in: child) == "parent B")
        #expect(a.hasCurrentPlan)
        try fx.register("B", scope: .transient, label: "new parent B")
        #expect(!a.hasCurrentPlan, "a parent's registration changes what the child builds")
        #expect(try firstDepLabel(fx, in: child) == "new parent B")
        try fx.register("B", scope: .transient, in: child, label: "child B")
        #expect(try firstDepLabel(fx, in: child) == "child B")
    }

    @Test func resolvingAnInheritedKeyFromAChildUsesTheChildsRegistrations() throws {
        // The plan belongs to resolves from the registration's own container: from a
        // child, the child's override of a dependency must win.
        let fx = try Fixture()
        let child = try fx.child()
        try fx.register("A", [dep("B")], scope: .transient)
        try fx.register("B", scope: .transient, label: "parent B")
        try fx.register("B", scope: .transient, in: child, label: "child B")
        #expect(try firstDepLabel(fx) == "parent B")
        #expect(try firstDepLabel(fx, in: child) == "child B")
        #expect(try firstDepLabel(fx) == "parent B")
    }

    @Test func aKeyWhoseGraphKeepsChangingStopsRecordingPlans() throws {
        // Replaced plans are kept for readers that may still replay them, so their
        // number is bounded: after 16, that key resolves the ordinary way, correctly.
        let fx = try Fixture()
        try fx.register("A", [dep("B")], scope: .transient)
        let a = try fx.container.registration(for: Key("A"))!
        for round in 0..<20 {
            try fx.register("B", scope: .transient, label: "B\(round)")
            #expect(try firstDepLabel(fx) == "B\(round)")
            #expect(a.hasCurrentPlan == (round < 16), "round \(round)")
        }
        #expect(fx.tracker.liveCount == 0 && fx.tracker.badDrops == 0)
    }

    @Test func replaysRacingReRegistrationsAndResetsBuildWholeGraphs() throws {
        // Threads resolve A(B(S), C) while others re-register C, reset the singleton
        // S and toggle plans: plans are retired and recorded under the readers' feet;
        // every graph must be whole and every instance destroyed once.
        let fx = try Fixture()
        try fx.register("A", [dep("B"), dep("C")], scope: .transient)
        try fx.register("B", [dep("S")], scope: .transient)
        try fx.register("S", scope: .singleton)
        try fx.register("C", scope: .transient, label: "C0")
        let errors = Box<[String]>([])
        onThreads(4) { i in
            for n in 0..<300 {
                switch i {
                case 0:
                    do { try fx.register("C", scope: .transient, label: "C\(n % 2)") } catch { errors.value.append("\(error)") }
                case 1:
                    if n % 3 == 0 { fx.container.reset(.singleton) }
                default:
                    do {
                        let a = try fx.resolve("A")
                        let o = Obj.of(a)
                        if o.dep(0).label != "B" || o.dep(0).dep(0).label != "S" || !o.dep(1).label.hasPrefix("C") {
                            errors.value.append("wrong graph")
                        }
                        withExtendedLifetime(a) {}
                    } catch {
                        errors.value.append("\(error)")
                    }
                }
            }
        }
        #expect(errors.value.isEmpty, "\(errors.value.prefix(3))")
        try fx.container.close()
        #expect(fx.tracker.made("A") == 600 && fx.tracker.dropped("A") == 600)
        #expect(fx.tracker.liveCount == 0 && fx.tracker.badDrops == 0)
    }

    @Test func factoriesMayResolveWhileAPlanReplays() throws {
        let fx = try Fixture()
        let container = fx.container
        try fx.register("A", [dep("B")], scope: .transient)
        try fx.register("B", scope: .transient) { obj in
            obj.got.append(try container.resolve(Key("C")).pointer)
        }
        try fx.register("C", scope: .singleton)
        for _ in 0..<3 { _ = try fx.resolve("A") }
        #expect(fx.tracker.made("C") == 1 && fx.tracker.made("B") == 3 && fx.tracker.dropped("B") == 3)
    }
}
