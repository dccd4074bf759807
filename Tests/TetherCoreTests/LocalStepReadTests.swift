// A child's plan is recorded through the first child of its component and serves every later one (`Plan.fits`);
// a local step's recorded registration (`Plan.Step.recorded`) and a local open frame's (`Plan.Failing.open`) are
// that first child's, freed with it. A run reads the resolving child's (`Plan.registration(of:_:)`, `Failing.opened(by:_:)`)
// (issue 28, branch localreg). Each test records the plan through child 0, closes and frees it, and runs the plan
// from children 1 and 2: before branch localreg each of these runs read child 0's freed registration (under ASan a
// heap-use-after-free; in a debug build `Plan.Step.registration` of a local step traps since this branch).
import Testing
@testable import TetherCore

@Suite struct LocalStepReadTests {
    /// `rounds` children, each registering its own keys (`register`), `body` run on it, then closed and let go of
    /// before the next: the first child's plan serves the others. No build; the observations and the log.
    private func childRounds(rounds: Int = 3, _ setUp: (Fixture) throws -> Void,
                             register: (Fixture, Container, Int) throws -> Void,
                             body: (Fixture, Container, Int) throws -> [String],
                             sourceLocation: SourceLocation = #_sourceLocation) throws -> [String] {
        let fx = try Fixture()
        try setUp(fx)
        var seen: [String] = []
        let builds = Container.buildsOnThisThread
        let counts = try counted {
            for round in 0..<rounds {
                try {
                    let child = try fx.child()
                    try register(fx, child, round)
                    seen += try body(fx, child, round)
                    fx.tracker.note("close \(round)")
                    _ = try child.close()
                }()
            }
        }
        #expect(Container.buildsOnThisThread == builds, "every resolve ran a plan", sourceLocation: sourceLocation)
        #expect(counts.keys.sorted() == ["resolves"], "no decline: \(counts)", sourceLocation: sourceLocation)
        _ = try fx.container.close()
        #expect(fx.tracker.liveCount == 0 && fx.tracker.badDrops == 0, sourceLocation: sourceLocation)
        return seen + fx.tracker.log
    }

    private static func failure(_ body: () throws -> Instance) -> String {
        do {
            _ = try body()
            return "resolved"
        } catch let error as TetherError {
            return "\(error.code): \(error.message)"
        } catch {
            return "\(error)"
        }
    }

    /// Handler -> {A, Missing}, A the child's own (a local step) over the owner's singleton S, not cached: the child's
    /// failing creation plan. Each run's first claim (`Graph.claimPastFailure`, `firstClaim`) names S's askers
    /// (`Plan.askingPath(to:_:)`): A's key, read from the recording child's A before branch localreg.
    @Test func aFailingPlansFirstClaimNamesALocalAskerOfTheRunsChild() throws {
        let log = try childRounds({ fx in
            try fx.register("S", scope: .singleton)
            try fx.register("Handler", [dep("A"), dep("Missing")], scope: .transient)
        }, register: { fx, child, round in
            try fx.register("A", [dep("S")], scope: .transient, in: child, label: "A\(round)")
        }) { fx, child, round in
            ["\(round): " + Self.failure { try fx.resolve("Handler", in: child) }]
        }
        expectLiteral(log, ["0: notFound: no registration for \"Missing\" (needed by \"Handler\"); register it first (tether_register) or check the spelling",
                      "1: notFound: no registration for \"Missing\" (needed by \"Handler\"); register it first (tether_register) or check the spelling",
                      "2: notFound: no registration for \"Missing\" (needed by \"Handler\"); register it first (tether_register) or check the spelling",
                      "make S",
                      "make A0",
                      "drop A0",
                      "drop S",
                      "close 0",
                      "make S",
                      "make A1",
                      "drop A1",
                      "drop S",
                      "close 1",
                      "make S",
                      "make A2",
                      "drop A2",
                      "drop S",
                      "close 2"])
    }

    /// Handler -> L -> {X, Missing}, L the child's own, X's factory failing: the failing plan makes X before the walk
    /// met Missing, and X's failure is the resolve's, its path through L's open frame (`Plan.path(to:_:)`): the
    /// resolving child's L, the recording child's before branch localreg.
    @Test func aFactoryFailureUnderALocalOpenFrameNamesTheRunsChild() throws {
        let log = try childRounds({ fx in
            try fx.register("X") { _ in throw CallbackFailure(reason: "boom") }
            try fx.register("Handler", [dep("L")], scope: .transient)
        }, register: { fx, child, round in
            try fx.register("L", [dep("X"), dep("Missing")], scope: .transient, in: child, label: "L\(round)")
        }) { fx, child, round in
            ["\(round): " + Self.failure { try fx.resolve("Handler", in: child) }]
        }
        expectLiteral(log, ["0: factoryFailed: factory for \"X\" returned NULL: boom (while resolving \"Handler\" -> \"L\" -> \"X\")",
                      "1: factoryFailed: factory for \"X\" returned NULL: boom (while resolving \"Handler\" -> \"L\" -> \"X\")",
                      "2: factoryFailed: factory for \"X\" returned NULL: boom (while resolving \"Handler\" -> \"L\" -> \"X\")",
                      "close 0",
                      "close 1",
                      "close 2"])
    }

    /// Traced from each child: Handler -> {P, Own, S}, Own the child's own singleton (cached: a local shared step), S
    /// the owner's singleton, not cached (a creation step), which P's factory resolves nested, under the plan's claim.
    /// The run finds S published at its check (`Plan.takePublished`) and tells the hits before it there (`tellHits`):
    /// Own's key the resolving child's, the recording child's before branch localreg.
    @Test func aTracedRunTakingANestedPublishedStepTellsALocalHitOfTheRunsChild() throws {
        let fx = try Fixture()
        try fx.register("S", scope: .singleton)
        try fx.register("P", scope: .transient) { _ in _ = try fx.resolve("S") }
        try fx.register("Handler", [dep("P"), dep("Own"), dep("S")], scope: .transient)
        let lines = Box<[String]>([])
        let builds = Container.buildsOnThisThread
        let counts = try counted {
            for round in 0..<3 {
                try {
                    let child = try fx.child()
                    try fx.register("Own", scope: .singleton, in: child, label: "Own\(round)")
                    let log = TracePlanTests.Log()
                    child.setTrace { log.hook($0) }
                    _ = try fx.resolve("Own", in: child)
                    fx.container.reset(.singleton)
                    log.note("round \(round)")
                    _ = try fx.resolve("Handler", in: child)
                    lines.value += log.lines
                    _ = try child.close()
                }()
            }
        }
        _ = try fx.container.close()
        #expect(Container.buildsOnThisThread == builds, "every resolve ran a plan")
        #expect(counts.keys.sorted() == ["resolves"], "no decline: \(counts)")
        #expect(fx.tracker.liveCount == 0 && fx.tracker.badDrops == 0)
        expectLiteral(lines.value, ["resolveStart Own",
                      "factoryCall Own",
                      "factoryReturn Own#1",
                      "resolveEnd Own#1",
                      "round 0",
                      "resolveStart Handler",
                      "factoryCall P",
                      "factoryReturn P#2",
                      "cacheHit Own#1",
                      "cacheHit S#3",
                      "factoryCall Handler",
                      "factoryReturn Handler#4",
                      "edge Handler#4 -> P#2",
                      "edge Handler#4 -> Own#1",
                      "edge Handler#4 -> S#3",
                      "resolveEnd Handler#4",
                      "destroy Handler#4",
                      "destroy P#2",
                      "resolveStart Own",
                      "factoryCall Own",
                      "factoryReturn Own#1",
                      "resolveEnd Own#1",
                      "round 1",
                      "resolveStart Handler",
                      "factoryCall P",
                      "factoryReturn P#2",
                      "cacheHit Own#1",
                      "cacheHit S#3",
                      "factoryCall Handler",
                      "factoryReturn Handler#4",
                      "edge Handler#4 -> P#2",
                      "edge Handler#4 -> Own#1",
                      "edge Handler#4 -> S#3",
                      "resolveEnd Handler#4",
                      "destroy Handler#4",
                      "destroy P#2",
                      "resolveStart Own",
                      "factoryCall Own",
                      "factoryReturn Own#1",
                      "resolveEnd Own#1",
                      "round 2",
                      "resolveStart Handler",
                      "factoryCall P",
                      "factoryReturn P#2",
                      "cacheHit Own#1",
                      "cacheHit S#3",
                      "factoryCall Handler",
                      "factoryReturn Handler#4",
                      "edge Handler#4 -> P#2",
                      "edge Handler#4 -> Own#1",
                      "edge Handler#4 -> S#3",
                      "resolveEnd Handler#4",
                      "destroy Handler#4",
                      "destroy P#2"])
    }

    /// Session (the owner's, CONTAINER-scoped) resolved from each child; its completion callback resolves Handler ->
    /// A -> Session from that child, A the child's own (a local step): the run's claim of the Session's cell, made
    /// further out and not published yet, is refused as unfinished (`SharedCache.claim`), its path Session's askers
    /// (`Plan.askingPath(to:_:)`): A's key, read from the recording child's A before branch localreg.
    @Test func anUnfinishedContainerStepsClaimNamesALocalAskerOfTheRunsChild() throws {
        let current = Box<Container?>(nil)
        let log = try childRounds({ fx in
            let session = try fx.register("Session", scope: .container)
            fx.onComplete(session) { _, _, _ in
                fx.tracker.note("nested Handler: " + Self.failure { try fx.resolve("Handler", in: current.value!) })
            }
            try fx.register("Handler", [dep("A")], scope: .transient)
        }, register: { fx, child, round in
            current.value = child
            try fx.register("A", [dep("Session")], scope: .transient, in: child, label: "A\(round)")
        }) { fx, child, round in
            let session = try fx.resolve("Session", in: child)
            return withExtendedLifetime(session) { ["\(round): Session"] }
        }
        current.value = nil
        expectLiteral(log, ["0: Session",
                      "1: Session",
                      "2: Session",
                      "make Session",
                      "complete Session",
                      "nested Handler: cycle: \"Session\" was resolved again (\"Handler\" -> \"A\" -> \"Session\") before the resolve that is making it on this thread finished: a nested resolve (from a factory, a completion callback or a provider) cannot hand out an instance whose resolve may still fail; reach it through the completion callback's resolver (tether_resolver_get) or as a dependency of what is being built",
                      "close 0",
                      "drop Session",
                      "make Session",
                      "complete Session",
                      "nested Handler: cycle: \"Session\" was resolved again (\"Handler\" -> \"A\" -> \"Session\") before the resolve that is making it on this thread finished: a nested resolve (from a factory, a completion callback or a provider) cannot hand out an instance whose resolve may still fail; reach it through the completion callback's resolver (tether_resolver_get) or as a dependency of what is being built",
                      "close 1",
                      "drop Session",
                      "make Session",
                      "complete Session",
                      "nested Handler: cycle: \"Session\" was resolved again (\"Handler\" -> \"A\" -> \"Session\") before the resolve that is making it on this thread finished: a nested resolve (from a factory, a completion callback or a provider) cannot hand out an instance whose resolve may still fail; reach it through the completion callback's resolver (tether_resolver_get) or as a dependency of what is being built",
                      "close 2",
                      "drop Session"])
    }
}
