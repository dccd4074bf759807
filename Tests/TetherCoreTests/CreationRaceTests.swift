// A creation plan whose claims find a creation step published meanwhile by another thread (between
// the plan's pick and its claims, where `Graph.setBeforeClaimingCreations` runs that thread's resolve,
// deterministically): the run takes it cached and makes none of the steps only it needed, as the
// build takes it where its walk asks (its `claimInOrder` holds what it finds published). Where a step
// still made takes one of those it would make (another order: the build makes it where that step asks),
// the resolve picks the plan for the state found. Each test asserts the factory calls in order, the
// instances and the destructors at close (the build's with the same key resolved on another thread right
// before, which ran beside it as an oracle until branch noplansoff); the plan path asserted (no build, no
// decline counted; the creation plans recorded: one when the run took what it found, two when it picked
// again).
import Testing
@testable import TetherCore

@Suite(.serialized) struct CreationRaceTests {
    /// Runs `body` with `key` resolved on another thread when the first creation plan of `root` reaches its
    /// claims. Returns whether it was published, and how.
    private func publishing(_ key: String, before root: String, _ fx: Fixture,
                            _ body: () throws -> Void) throws -> Instance? {
        // (The other thread keeps no reference: its closure may outlive the join a little.)
        let published = Box(false)
        let resolveElsewhere: @Sendable () -> Void = {
            onThreads(1) { _ in published.value = (try? fx.resolve(key)) != nil }
        }
        let fired = Box(false)
        try withTestHook {
            Graph.setBeforeClaimingCreations { r in
                guard r.key == Key(root), fx.owns(r), !fired.value else { return }
                fired.value = true
                resolveElsewhere()
            }
            defer { Graph.setBeforeClaimingCreations(nil) }
            try body()
        }
        #expect(fired.value, "the hook ran between the pick and the claims")
        return published.value ? try fx.resolve(key) : nil
    }

    private struct Outcome {
        var log: [String] = []
        var counts: [String: Int] = [:]
        var builds = 0
        var creationPlans = 0
        var seen: [String] = []
        /// Runs that took a creation step found published at its claim (`Graph.claimedTakes`).
        var takes = 0
    }

    /// `setUp`, then `root` resolved (by `resolving`) while `key` is published on another thread; the container
    /// closed. Returns the log and what was seen.
    private func race(_ setUp: (Fixture) throws -> Void, publish key: String, root: String,
                      sourceLocation: SourceLocation = #_sourceLocation,
                      _ resolving: @escaping (Fixture, Instance?) throws -> [String]) throws -> Outcome {
        let fx = try Fixture()
        try setUp(fx)
        var outcome = Outcome()
        let before = Container.buildsOnThisThread
        let takesBefore = ThreadState.currentReference.borrow { $0.claimedTakes }
        outcome.counts = try counted {
            var published: Instance?
            published = try publishing(key, before: root, fx) {
                outcome.seen = try resolving(fx, published)
            }
            // What the other thread published is what the resolve took.
            if let published { outcome.seen += try resolving(fx, published) }
            published = nil
        }
        outcome.builds = Container.buildsOnThisThread - before
        outcome.takes = ThreadState.currentReference.borrow { $0.claimedTakes } - takesBefore
        outcome.creationPlans = fx.container.registration(for: Key(root))!.creationPlanCount
        _ = try fx.container.close()
        #expect(fx.tracker.badDrops == 0 && fx.tracker.liveCount == 0, sourceLocation: sourceLocation)
        outcome.log = fx.tracker.log
        return outcome
    }

    /// The object tree below `obj` by labels.
    private static func describe(_ obj: Obj) -> String { obj.tree() }

    /// A diamond: A -> {B -> D, C -> {X, D}}, singletons B, C, D. Another thread publishes B (and D
    /// with it): the run takes B cached, does not make D (a step under B) but gives C the D it found
    /// published, makes X, C and A. One creation plan: it took what it found, no pick again.
    @Test func aSingletonPublishedBeforeItsClaimIsTakenAndWhatOnlyItNeededIsNotMade() throws {
        let setUp: (Fixture) throws -> Void = { fx in
            try fx.register("A", [dep("B"), dep("C")], scope: .transient)
            try fx.register("B", [dep("D")], scope: .singleton)
            try fx.register("C", [dep("X"), dep("D")], scope: .singleton)
            try fx.register("D", scope: .singleton)
            try fx.register("X", scope: .transient)
        }
        var a: Instance?
        let outcome = try race(setUp, publish: "B", root: "A") { fx, published in
            guard let b = published else {
                a = try fx.resolve("A")
                return [Self.describe(Obj.of(a!))]
            }
            // The published B is A's, and its D is C's.
            let obj = Obj.of(a!)
            #expect(obj.depPointer(0) == b.pointer)
            #expect(obj.dep(1).depPointer(1) == Obj.of(b).depPointer(0))
            a = nil
            return ["same B, same D"]
        }
        #expect(outcome.seen == ["A(B(D),C(X,D))", "same B, same D"])
        #expect(outcome.log.filter { $0.hasPrefix("make ") } == ["make D", "make B", "make X", "make C", "make A"])
        #expect(outcome.counts == ["resolves": 1], "no decline: the creation plan served it")
        #expect(outcome.builds == 0 && outcome.creationPlans == 1 && outcome.takes == 1, "taken at its claim: no plan picked again")
        #expect(outcome.log.filter { $0.hasPrefix("drop ") }.sorted() == ["drop A", "drop B", "drop C", "drop D", "drop X"])
    }

    /// The root itself published meanwhile: the run makes nothing and answers the one published.
    @Test func aRootPublishedBeforeItsClaimIsTheAnswer() throws {
        let setUp: (Fixture) throws -> Void = { fx in
            try fx.register("S", [dep("T"), dep("G")], scope: .singleton)
            try fx.register("T", scope: .weak)
            try fx.register("G")
        }
        var s: Instance?
        let outcome = try race(setUp, publish: "S", root: "S") { fx, published in
            guard let published else {
                s = try fx.resolve("S")
                return [Self.describe(Obj.of(s!))]
            }
            #expect(s!.pointer == published.pointer)
            s = nil
            return ["same S"]
        }
        #expect(outcome.seen == ["S(T,G)", "same S"])
        #expect(outcome.log.filter { $0.hasPrefix("make ") } == ["make T", "make G", "make S"])
        #expect(outcome.counts == ["resolves": 1] && outcome.builds == 0 && outcome.creationPlans == 1 && outcome.takes == 1)
    }

    /// A -> {B -> G, X, G}, G graph-scoped: with B published, the build makes G where A asks, after X;
    /// the plan made it under B, so the run cannot take B and skip it: the resolve picks the plan for the
    /// state found (B a leaf: the warm plan), which makes X, G, A. Still no build.
    @Test func aStepUnderThePublishedOneThatAnotherStillTakesPicksThePlanAgain() throws {
        let setUp: (Fixture) throws -> Void = { fx in
            try fx.register("A", [dep("B"), dep("X"), dep("G")], scope: .transient)
            try fx.register("B", [dep("G")], scope: .singleton)
            try fx.register("X", scope: .transient)
            try fx.register("G")
        }
        var a: Instance?
        let outcome = try race(setUp, publish: "B", root: "A") { fx, published in
            guard let b = published else {
                a = try fx.resolve("A")
                return [Self.describe(Obj.of(a!))]
            }
            #expect(Obj.of(a!).depPointer(0) == b.pointer)
            #expect(Obj.of(a!).depPointer(2) != Obj.of(b).depPointer(0), "A's G is its own graph's")
            a = nil
            return ["same B"]
        }
        #expect(outcome.log.filter { $0.hasPrefix("make ") } == ["make G", "make B", "make X", "make G", "make A"])
        #expect(outcome.counts == ["resolves": 1] && outcome.builds == 0 && outcome.takes == 0)
        #expect(outcome.creationPlans == 1, "picked again: A's warm plan (B, its one shared leaf, cached now)")
    }

    /// A factory failing after the run took what it found: what the run made is destroyed (last made
    /// first), nothing cached but what the other thread published; the next resolve makes C again.
    @Test func aFailureAfterTakingCachesNothingOfItsOwn() throws {
        let fail = Box(true)
        let setUp: (Fixture) throws -> Void = { fx in
            fail.value = true
            try fx.register("A", [dep("B"), dep("C"), dep("F")], scope: .transient)
            try fx.register("B", [dep("D")], scope: .singleton)
            try fx.register("C", [dep("D")], scope: .singleton)
            try fx.register("D", scope: .singleton)
            try fx.register("F") { _ in if fail.value { throw CallbackFailure(reason: "no F") } }
        }
        let outcome = try race(setUp, publish: "B", root: "A") { fx, published in
            guard published != nil else {
                let e = expectError(.factoryFailed, "factory for \"F\" returned NULL") { () throws -> Void in _ = try fx.resolve("A") }
                #expect(e?.message.contains("(while resolving \"A\" -> \"F\")") == true, "\(e?.message ?? "")")
                return [e.map { "\($0.code)" } ?? "no error"]
            }
            #expect(fx.tracker.calls("C") == 1 && fx.tracker.dropped("C") == 1, "made and destroyed: not cached")
            #expect(fx.tracker.dropped("B") == 0 && fx.tracker.dropped("D") == 0, "the published ones stay cached")
            fail.value = false
            let a = try fx.resolve("A")
            #expect(fx.tracker.calls("C") == 2 && fx.tracker.calls("B") == 1 && fx.tracker.calls("D") == 1)
            return [Self.describe(Obj.of(a))]
        }
        #expect(outcome.seen == ["factoryFailed", "A(B(D),C(D),F)"])
        #expect(outcome.counts.keys.sorted() == ["resolves"] && outcome.builds == 0 && outcome.takes == 1, "\(outcome.counts)")
    }

    /// A resolve that must not wait (`WaitMode`) claims ahead as the build does; what it finds published
    /// there is taken as well, no refusal.
    @Test func aNoWaitResolveTakesWhatWasPublishedToo() throws {
        let setUp: (Fixture) throws -> Void = { fx in
            try fx.register("A", [dep("B"), dep("C")], scope: .transient)
            try fx.register("B", [dep("D")], scope: .singleton)
            try fx.register("C", [dep("D")], scope: .singleton)
            try fx.register("D", scope: .singleton)
        }
        let outcome = try race(setUp, publish: "B", root: "A") { fx, published in
            guard published != nil else {
                let (a, blocked) = WaitMode.run(noWait: true) { try? fx.resolve("A") }
                #expect(!blocked)
                return [a.map { Self.describe(Obj.of($0)) } ?? "refused"]
            }
            return []
        }
        #expect(outcome.seen == ["A(B(D),C(D))"])
        #expect(outcome.counts == ["resolves": 1] && outcome.builds == 0 && outcome.creationPlans == 1 && outcome.takes == 1)
    }

    /// Traced (`Container.setTrace`), the run tells the hook what the build would, in its order: a creation
    /// step taken at its claim is a cache hit where the build asks for it, nothing under it told. `C` takes
    /// `D`, under `B`, too (`sharesD`): the build's hit for D comes where C asks, so the run cannot take B
    /// and the resolve picks the plan again (the same events).
    @Test(arguments: [false, true])
    func tracedTheEventsAreTheBuilds(sharesD: Bool) throws {
        let setUp: (Fixture) throws -> Void = { fx in
            try fx.register("A", [dep("B"), dep("C")], scope: .transient)
            try fx.register("B", [dep("D")], scope: .singleton)
            try fx.register("C", sharesD ? [dep("X"), dep("D")] : [dep("X")], scope: .singleton)
            try fx.register("D", scope: .singleton)
            try fx.register("X", scope: .transient)
        }
        var logs: [[String]] = []
        do {
            let fx = try Fixture()
            try setUp(fx)
            let log = TracePlanTests.Log()
            fx.container.setTrace { log.hook($0) }
            let takes = ThreadState.currentReference.borrow { $0.claimedTakes }
            let counts = try counted {
                _ = try publishing("B", before: "A", fx) { _ = try fx.resolve("A") }
            }
            #expect(counts == ["resolves": 1], "\(counts)")
            #expect(ThreadState.currentReference.borrow { $0.claimedTakes } - takes == (sharesD ? 0 : 1))
            _ = try fx.container.close()
            #expect(fx.tracker.badDrops == 0 && fx.tracker.liveCount == 0)
            logs.append(log.lines)
        }
        // The other thread's resolve of B (its events where it ran: in A's resolve, or before it) set apart.
        let apart = logs.map { log -> [String] in
            let start = log.firstIndex(of: "resolveStart B")!, end = log.firstIndex(of: "resolveEnd B#2")!
            return Array(log[start...end]) + log[..<start] + log[(end + 1)...]
        }
        #expect(apart[0][7...].starts(with: ["resolveStart A", "cacheHit B#2", "factoryCall X"]), "\(apart[0])")
        let shared = ["resolveStart B", "factoryCall D", "factoryReturn D#1", "factoryCall B", "factoryReturn B#2",
                      "edge B#2 -> D#1", "resolveEnd B#2", "resolveStart A", "cacheHit B#2", "factoryCall X",
                      "factoryReturn X#3", "cacheHit D#1", "factoryCall C", "factoryReturn C#4", "edge C#4 -> X#3",
                      "edge C#4 -> D#1", "factoryCall A", "factoryReturn A#5", "edge A#5 -> B#2", "edge A#5 -> C#4",
                      "resolveEnd A#5", "destroy A#5", "resolveStart B", "cacheHit B#2", "resolveEnd B#2",
                      "destroy C#4", "destroy X#3", "destroy B#2", "destroy D#1"]
        let apartD = ["resolveStart B", "factoryCall D", "factoryReturn D#1", "factoryCall B", "factoryReturn B#2",
                      "edge B#2 -> D#1", "resolveEnd B#2", "resolveStart A", "cacheHit B#2", "factoryCall X",
                      "factoryReturn X#3", "factoryCall C", "factoryReturn C#4", "edge C#4 -> X#3", "factoryCall A",
                      "factoryReturn A#5", "edge A#5 -> B#2", "edge A#5 -> C#4", "resolveEnd A#5", "destroy A#5",
                      "resolveStart B", "cacheHit B#2", "resolveEnd B#2", "destroy C#4", "destroy X#3", "destroy B#2",
                      "destroy D#1"]
        expectLiteral(apart[0], sharesD ? shared : apartD)
    }
}
