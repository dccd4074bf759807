// A resolve whose warm plan found a weak key dead, and whose pick of the plan for the caches' state
// (`Registration.creationPlan`) finds them changed again between its checks (another thread publishes
// the key right after the warm plan's check, where `Registration.setAfterWarmCheck` runs that thread's
// resolve, deterministically): before, no plan fitted what it had read (`notCached`, or `sharedRoot` for
// a weak root), and the graph built it. Now the pick reads the caches again (`pickAfterChange`): the warm
// plan, or a creation plan whose claims take what was published (`Graph.claimCreations`). Each test asserts
// the factory calls in order, the instances and the destructors at close (the build's with the same key
// published right before, which ran beside it as an oracle until branch noplansoff); the plan path asserted
// (no build, no decline counted).
import Testing
@testable import TetherCore

@Suite(.serialized) struct PickRaceTests {
    /// Runs `body` with each key of `keys` resolved and held on another thread when `root`'s pick passes
    /// its warm check (the first time only). Returns what the other thread holds, for the caller to let go of.
    private func publishing(_ keys: [String], at root: String, _ fx: Fixture,
                            _ body: () throws -> Void) throws -> [Instance] {
        // (Handed back out of the box: the other thread's closure, which keeps the box, may outlive the join a little.)
        let held = Box<[Instance]>([])
        let resolveElsewhere: @Sendable () -> Void = {
            onThreads(1) { _ in held.value = keys.compactMap { try? fx.resolve($0) } }
        }
        defer { held.value = [] }
        let fired = Box(false)
        try withTestHook {
            Registration.setAfterWarmCheck { r in
                guard r.key == Key(root), fx.owns(r), !fired.value else { return }
                fired.value = true
                resolveElsewhere()
            }
            defer { Registration.setAfterWarmCheck(nil) }
            try body()
        }
        #expect(fired.value, "the hook ran between the warm check and the creation plan's")
        return held.value
    }

    /// Top(W1, W2, S) graph-scoped; W1(S), W2(S) weak; S singleton. The warm plan recorded (W1 and W2
    /// held), then both let go of.
    private func setUp(_ fx: Fixture) throws {
        try fx.register("S", scope: .singleton)
        try fx.register("W1", [dep("S")], scope: .weak)
        try fx.register("W2", [dep("S")], scope: .weak)
        try fx.register("Top", [dep("W1"), dep("W2"), dep("S")])
        var w1: Instance? = try fx.resolve("W1"), w2: Instance? = try fx.resolve("W2")
        _ = try fx.resolve("Top")
        _ = (w1, w2)
        w1 = nil
        w2 = nil
    }

    private struct Outcome {
        var log: [String] = []
        var counts: [String: Int] = [:]
        var builds = 0
        var takes = 0
        var same = true
    }

    /// `setUp`, `prepare` (with the hook off), then Top resolved while `keys` are published on another thread;
    /// the container closed. Returns the log from `prepare` on, and what the resolve did.
    private func race(publish keys: [String], sourceLocation: SourceLocation = #_sourceLocation,
                      prepare: (Fixture) throws -> Void = { _ in }) throws -> Outcome {
        let fx = try Fixture()
        try setUp(fx)
        try prepare(fx)
        let mark = fx.tracker.log.count
        var outcome = Outcome()
        let before = Container.buildsOnThisThread
        let takesBefore = ThreadState.currentReference.borrow { $0.claimedTakes }
        var top: Instance?
        var held: [Instance] = []
        outcome.counts = try counted {
            held = try publishing(keys, at: "Top", fx) { top = try fx.resolve("Top") }
        }
        outcome.builds = Container.buildsOnThisThread - before
        outcome.takes = ThreadState.currentReference.borrow { $0.claimedTakes } - takesBefore
        // What the other thread published is what Top took.
        for (i, key) in keys.enumerated() {
            let slot = key == "W1" ? 0 : 1
            outcome.same = outcome.same && Obj.of(top!).depPointer(slot) == held[i].pointer
        }
        top = nil
        held = []
        _ = try fx.container.close()
        #expect(fx.tracker.badDrops == 0 && fx.tracker.liveCount == 0, sourceLocation: sourceLocation)
        outcome.log = Array(fx.tracker.log.dropFirst(mark))
        return outcome
    }

    /// Both weak keys published after the warm check: no creation plan fits (the one for both dead
    /// finds them cached, none is recorded for a state creating nothing), the warm plan does now.
    @Test func keysPublishedAfterTheWarmCheckAreTakenByTheWarmPlan() throws {
        let outcome = try race(publish: ["W1", "W2"])
        #expect(outcome.same)
        #expect(outcome.log.filter { $0.hasPrefix("make ") } == ["make W1", "make W2", "make Top"])
        #expect(outcome.counts == ["resolves": 1], "no decline: a plan served it (notCached before)")
        #expect(outcome.builds == 0)
    }

    /// One of two weak keys published after the warm check, once every creation plan the registration may
    /// record was (`maxPlans`): the creation plan for both dead serves it, its claim taking the one published.
    @Test func aKeyPublishedAfterTheWarmCheckIsTakenByTheCreationPlansClaim() throws {
        // Each pick that finds both published creates nothing: counted among the creation plans recorded.
        let exhaust: (Fixture) throws -> Void = { fx in
            _ = try fx.resolve("Top")  // the creation plan for both dead
            for _ in 0..<Registration.maxPlans {
                _ = try self.publishing(["W1", "W2"], at: "Top", fx) { _ = try fx.resolve("Top") }
            }
            #expect(fx.container.registration(for: Key("Top"))!.creationPlanCount == 1)
        }
        let outcome = try race(publish: ["W1"], prepare: exhaust)
        #expect(outcome.same)
        #expect(outcome.log.filter { $0.hasPrefix("make ") } == ["make W1", "make W2", "make Top"])
        #expect(outcome.counts == ["resolves": 1], "no decline: the creation plan served it (notCached before)")
        #expect(outcome.builds == 0 && outcome.takes == 1, "W1 taken at its claim")
    }

    /// A weak root published after the warm check (the warm plan its root a shared step): the creation
    /// plan's claim finds it published, and it is the answer (`sharedRoot` before).
    @Test func aWeakRootPublishedAfterTheWarmCheckIsTheAnswer() throws {
        var outcomes: [(log: [String], counts: [String: Int], builds: Int)] = []
        do {
            let fx = try Fixture()
            try fx.register("S", scope: .singleton)
            try fx.register("W", [dep("S")], scope: .weak)
            // The creation plan recorded (W let go of); then, W held, the warm plan (its root a shared
            // step), as a resolve that missed W and found it published at its pick records it.
            do { _ = try fx.resolve("W") }
            do {
                let w = try fx.resolve("W")
                let registration = fx.container.registration(for: Key("W"))!
                _ = ThreadState.currentReference.borrow { registration.plan(from: fx.container, $0.planProgress) }
                _ = w
            }
            let mark = fx.tracker.log.count
            let before = Container.buildsOnThisThread
            var w: Instance?
            var held: [Instance] = []
            let counts = try counted { held = try publishing(["W"], at: "W", fx) { w = try fx.resolve("W") } }
            #expect(w!.pointer == held[0].pointer)
            let builds = Container.buildsOnThisThread - before
            w = nil
            held = []
            _ = try fx.container.close()
            #expect(fx.tracker.badDrops == 0 && fx.tracker.liveCount == 0)
            outcomes.append((Array(fx.tracker.log.dropFirst(mark)), counts, builds))
        }
        #expect(outcomes[0].log.filter { $0.hasPrefix("make ") } == ["make W"])
        #expect(outcomes[0].counts == ["resolves": 1], "no decline (sharedRoot before)")
        #expect(outcomes[0].builds == 0)
    }
}

/// A creation plan with container steps (`Graph.claimWithContainerSteps`) whose claims find a creation step
/// another thread published meanwhile (`Graph.setBeforeClaimingCreations` runs that thread's resolve between
/// the pick and the claims): the run takes it cached and does not make what only it asked for, as the build
/// takes it where its walk asks (before, the resolve picked a creation plan again, `creationPicks` past
/// four). The build with the key resolved right before ran beside it as an oracle until branch noplansoff.
@Suite(.serialized) struct ContainerClaimRaceTests {
    /// Handler(Clock(Tz), Session(Request, Db)): Clock, Tz, Db singletons, Session CONTAINER-scoped. Clock
    /// (with Tz) published before the claims: taken, Tz not made by the run; Db, the Session and the Handler are.
    @Test func aSingletonPublishedBeforeTheClaimsOfAPlanWithContainerStepsIsTaken() throws {
        var outcomes: [(log: [String], tree: String, counts: [String: Int], builds: Int, takes: Int, plans: Int)] = []
        do {
            let fx = try Fixture()
            _ = try fx.container.declareValue(Key("Request"))
            try fx.register("Tz", scope: .singleton)
            try fx.register("Clock", [dep("Tz")], scope: .singleton)
            try fx.register("Db", scope: .singleton)
            try fx.register("Session", [dep("Request"), dep("Db")], scope: .container)
            try fx.register("Handler", [dep("Clock"), dep("Session")])
            let child = try fx.child()
            let request = Ref(retaining: Obj(label: "Request", words: [])).opaque
            _ = try child.provideValue(Key("Request"), request, context: nil, destructor: { p, _ in Ref<Obj>(opaque: p).release() })
            let resolveClock: @Sendable () -> Void = { onThreads(1) { _ in _ = try? fx.resolve("Clock") } }
            let fired = Box(false)
            let before = Container.buildsOnThisThread
            let takesBefore = ThreadState.currentReference.borrow { $0.claimedTakes }
            var tree = ""
            let counts = try withTestHook {
                Graph.setBeforeClaimingCreations { r in
                    guard r.key == Key("Handler"), fx.owns(r), !fired.value else { return }
                    fired.value = true
                    resolveClock()
                }
                defer { Graph.setBeforeClaimingCreations(nil) }
                return try counted {
                    let handler = try fx.resolve("Handler", in: child)
                    tree = Obj.of(handler).tree()
                    let clock = try fx.resolve("Clock")
                    #expect(Obj.of(handler).depPointer(0) == clock.pointer, "the Clock published is the Handler's")
                }
            }
            #expect(fired.value)
            let builds = Container.buildsOnThisThread - before
            let takes = ThreadState.currentReference.borrow { $0.claimedTakes } - takesBefore
            let creationPlans = fx.container.registration(for: Key("Handler"))!.creationPlanCount
            _ = try child.close()
            _ = try fx.container.close()
            #expect(fx.tracker.badDrops == 0 && fx.tracker.liveCount == 0)
            outcomes.append((fx.tracker.log, tree, counts, builds, takes, creationPlans))
        }
        let planned = outcomes[0]
        #expect(planned.tree == "Handler(Clock(Tz),Session(Request,Db))")
        #expect(planned.log.filter { $0.hasPrefix("make ") } == ["make Tz", "make Clock", "make Db", "make Session", "make Handler"])
        #expect(planned.counts == ["resolves": 1], "no decline: the creation plan served it (the second Clock a cache hit)")
        #expect(planned.builds == 0 && planned.plans == 1 && planned.takes == 1, "Clock taken at its claim: no plan picked again")
    }
}
