// Branch raced (issue 28): the decline reasons only another thread's change between a pick and its run reaches
// (`requestReadsRequest`, `other`, `containerHeld`), each forced with the hooks (no sleeps). The first two served by a
// plan recorded for the state the run sees, kept by none (`Plan.keptByNone`, `ThreadState.oneShotPlans`); the last pinned.
import Synchronization
import Testing
@testable import TetherCore

@Suite struct RacedDeclinePlanTests {
    /// A's completion callback asks for B (-> S1, S2, X, One; S1 and S2 container-scoped over X, which B takes too;
    /// One a singleton not cached), S1 cached: the request's pick records B's creation plan (a `cachedVariant`: every
    /// container step made), whose walk reaching One registers an unrelated key (the recorder's hook, another thread's
    /// change in a race), so the configuration changed between the plan's pick and the walk of its `mixedVariant` for S1
    /// cached (`Plan.recordMixed`). That variant is walked for the configuration it sees now, for this run only
    /// (`requestReadsRequest` before: the request built). B takes the cached S1, makes X where S2 asks, then S2 over it.
    @Test func aRequestsMixedVariantWalkedAfterAConfigurationChangeRunsThePlan() throws {
        let fx = try Fixture()
        let a = try fx.register("A")
        try fx.register("B", [dep("S1"), dep("S2"), dep("X"), dep("One")])
        try fx.register("S1", [dep("X")], scope: .container)
        try fx.register("S2", [dep("X")], scope: .container)
        try fx.register("X")
        try fx.register("One", scope: .singleton)
        fx.onComplete(a) { resolver, _, obj in obj.got.append(try resolver.get(Key("B")).pointer) }
        let s1 = try fx.resolve("S1")
        let changes = Box(0)
        var made: Instance?
        var counts: [String: Int] = [:]
        let requests = try withTestHook {
            Plan.Recorder.setBeforeReadingCache { r in
                guard fx.owns(r), r.key == Key("One"), changes.value == 0 else { return }
                changes.value += 1
                _ = try? fx.register("Other")
            }
            defer { Plan.Recorder.setBeforeReadingCache(nil) }
            return try countedRequests { counts = try counted { made = try fx.resolve("A") } }
        }
        #expect(changes.value == 1)
        #expect(requests == ["requests": 1, "plan": 1], "\(requests)")
        #expect(counts == ["resolves": 1], "\(counts)")
        let b = Obj.at(Obj.of(try #require(made)).got[0])
        #expect(b.depPointer(0) == s1.pointer, "S1: the cached one")
        #expect(b.dep(1).depPointer(0) == b.depPointer(2), "X: made where S2 asks, B's too")
        #expect(b.dep(3).label == "One" && fx.tracker.made("One") == 1)
        #expect(fx.tracker.log.filter { $0.hasPrefix("make") } == ["make X", "make S1", "make A", "make X", "make S2", "make One", "make B"],
                "\(fx.tracker.log)")
        #expect(ThreadState.currentReference.borrow { $0.oneShotPlans.count } == 0, "the variant: the run's only")
        made = nil
        withExtendedLifetime(s1) {}
        #expect(fx.tracker.badDrops == 0)
    }

    /// Root (transient) over W1..W6 (weak, held by the test), 15 creation plans recorded (one short of `maxPlans`, a
    /// bridge keeping replaced plans), then a new configuration: Root's resolve with W1 let go of records its creation
    /// plan, and its walk reaching W6 (the recorder's hook) lets go of W2, has another thread resolve Root (which records
    /// the 16th creation plan, for W1 and W2 missing), then lets go of W3. The first thread's plan cannot be kept
    /// (`installCreationPlan` nil after `mayRecordCreation`), and no plan kept covers the caches now (W1, W2, W3 dead):
    /// a one-shot plan for them serves it (before: the build, `other`: the warm plan recorded since, no reason of its own).
    @Test func theMaxPlansthCreationPlanRecordedByAnotherThreadMeanwhileRunsAPlan() throws {
        let fx = try Fixture()
        let weak = (1...6).map { "W\($0)" }
        try fx.register("Root", weak.map { dep($0) }, scope: .transient)
        for key in weak { try fx.register(key, scope: .weak) }
        let registration = try #require(fx.container.registration(for: Key("Root")))
        let held = Box<[String: Instance]>([:])
        for key in weak { held.value[key] = try fx.resolve(key) }
        _ = try fx.resolve("Root")  // every leaf cached: the warm plan
        var states = weak.map { [$0] }
        for i in 0..<weak.count { for j in (i + 1)..<weak.count { states.append([weak[i], weak[j]]) } }
        for state in states.prefix(Registration.maxPlans - 1) {
            for key in state { held.value[key] = nil }
            _ = try fx.resolve("Root")
            for key in state { held.value[key] = try fx.resolve(key) }
        }
        #expect(registration.creationPlanCount == Registration.maxPlans - 1)
        try fx.register("Other")
        held.value["W1"] = nil
        let fired = Box(false)
        var made: Instance?
        let counts = try withTestHook {
            Plan.Recorder.setBeforeReadingCache { r in
                guard fx.owns(r), r.key == Key("W6"), !fired.value else { return }
                fired.value = true
                held.value["W2"] = nil
                onThreads(1) { _ in _ = try? fx.resolve("Root") }
                held.value["W3"] = nil
            }
            defer { Plan.Recorder.setBeforeReadingCache(nil) }
            return try counted { made = try fx.resolve("Root") }
        }
        #expect(fired.value)
        #expect(counts == ["resolves": 1], "\(counts)")
        #expect(registration.creationPlanCount == Registration.maxPlans, "the other thread's the 16th")
        let root = Obj.of(try #require(made))
        for k in 4...6 { #expect(root.depPointer(k - 1) == held.value["W\(k)"]?.pointer, "W\(k): the held one") }
        #expect(Array(fx.tracker.log.suffix(4)) == ["make W1", "make W2", "make W3", "make Root"], "\(fx.tracker.log)")
        #expect(ThreadState.currentReference.borrow { $0.oneShotPlans.count } == 0)
        made = nil
        held.value.removeAll()
        #expect(fx.tracker.liveCount == 0 && fx.tracker.badDrops == 0)
    }
}
