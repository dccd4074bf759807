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

    /// X (transient) whose factory resolves H, nested: H over One (a singleton, not cached), then C1, K1, ..., Cn, Kn
    /// (C container-scoped over G, graph-scoped, which H asks for last; K transient: with a C cached the build makes G
    /// where the next C asks, after the Ks before it, an order no skip gives), then X, which this thread constructs further
    /// out: H's creation plan runs up to where the build asks for X (`Graph.replayMeeting`). C1 cached first: the claims
    /// switch to the `mixedVariant` for it, whose creating walk reaching One publishes the next C on another thread, so
    /// every variant's claims find one more cached and switch again. Past `Graph.maxCreationPicks` such picks `Graph.run`
    /// lets the variant go (`containerHeld`), and every pick after, held or not, finds a set cached: the build, which
    /// reports the cycle. A pin of what is left (branch raced): running the variant past the bound under the hold
    /// (`claimInOrder`) was tried and is not enough: every held pick still switched (counted `other` then).
    @Test func containerStepsPublishedUnderEveryVariantOfARunUpToACutAreStillBuilt() throws {
        let fx = try Fixture()
        let n = 12
        let nested = Box(""), current = Box(false)
        try fx.register("H", [dep("One")] + (1...n).flatMap { [dep("C\($0)"), dep("K\($0)")] } + [dep("G"), dep("X")], scope: .transient)
        try fx.register("One", scope: .singleton)
        try fx.register("G")
        for k in 1...n { try fx.register("K\(k)", scope: .transient) }
        for k in 1...n { try fx.register("C\(k)", [dep("G")], scope: .container) }
        try fx.register("X", scope: .transient) { _ in
            guard current.value else { return }
            do { _ = try fx.resolve("H"); nested.value = "made" } catch let e as TetherError { nested.value = "\(e.code): \(e.message)" }
        }
        // H's creation plan recorded (a run up to X, reporting the cycle: nothing cached after it).
        current.value = true
        _ = try fx.resolve("X")
        #expect(nested.value.hasPrefix("\(ErrorCode.cycle)"), "\(nested.value)")
        let c1 = try fx.resolve("C1")
        fx.tracker.note("armed")
        let published = Box(1), refused = Box<[String]>([])
        let counts = try withTestHook {
            Plan.Recorder.setBeforeReadingCache { r in
                guard fx.owns(r), r.key == Key("One"), published.value < n - 1 else { return }
                published.value += 1
                let outcome = resolvedNoWaitElsewhere(fx, "C\(published.value)")
                if outcome != "made" { refused.value.append("C\(published.value) \(outcome)") }
            }
            defer { Plan.Recorder.setBeforeReadingCache(nil) }
            defer { current.value = false }
            return try counted { _ = try fx.resolve("X") }
        }
        #expect(counts == ["resolves": 2, "containerHeld": 1], "\(counts)")
        #expect(nested.value.hasPrefix("\(ErrorCode.cycle)") && nested.value.contains("\"X\" -> \"H\" -> \"X\""), "\(nested.value)")
        #expect(published.value == n - 1 && refused.value.isEmpty, "\(published.value) \(refused.value)")
        let log = fx.tracker.log
        let armed = try #require(log.firstIndex(of: "armed"))
        let others = (2..<n).flatMap { ["make G", "make C\($0)"] }
        let made = ["make One"] + (1..<n).map { "make K\($0)" } + ["make G", "make C\(n)", "make K\(n)"]
        let dropped = ["drop K\(n)", "drop C\(n)", "drop G"] + (1..<n).reversed().map { "drop K\($0)" } + ["drop One"]
        #expect(Array(log[(armed + 1)...]) == others + made + dropped + ["make X", "drop X"], "\(log[armed...])")
        withExtendedLifetime(c1) {}
        #expect(fx.tracker.badDrops == 0)
    }
}
