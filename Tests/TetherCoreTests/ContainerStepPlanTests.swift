// Plans with container steps over made steps (issue 28 item 1, `containerInput`): a request
// child's CONTAINER-scoped Session over graph- and transient-scoped instances is a step of the
// root's plan, its inputs made before it in the build's order; a resolve finding the Session
// cached makes none of what only the Session asked for, as the build does. Each test asserts
// the factory calls, slots, drops and their order (the build's, which ran beside it as an oracle
// until branch noplansoff), and the plan's path by `PlanStats` (no decline counted).
import Foundation
import Testing
@testable import TetherCore

@Suite struct ContainerStepPlanTests {
    /// The object tree below `obj`, by labels.
    private static func describe(_ obj: Obj) -> String { obj.tree() }

    /// `requests` children, each resolving `root` `times` times (each instance dropped before the
    /// next, the Session kept by the child), then closed: the log, the trees, the counts.
    private func serve(root: String = "Handler", requests: Int = 3, times: Int = 3,
                       _ setUp: (Fixture) throws -> Void) throws -> (log: [String], trees: [String], counts: [String: Int], fx: Fixture) {
        let fx = try Fixture()
        try setUp(fx)
        var trees: [String] = []
        let counts = try counted {
            for _ in 0..<requests {
                let child = try fx.child()
                for _ in 0..<times {
                    let instance = try fx.resolve(root, in: child)
                    trees.append(withExtendedLifetime(instance) { Self.describe(Obj.of(instance)) })
                }
                _ = try child.close()
            }
        }
        // Every request's instances dropped with its child (the root's singletons live on).
        #expect(fx.tracker.badDrops == 0 && fx.tracker.liveCount == fx.tracker.made("Db"))
        return (fx.tracker.log, trees, counts, fx)
    }

    @Test func aContainerStepOverGraphAndTransientStepsIsPlanned() throws {
        let setUp = { (fx: Fixture) throws in
            try fx.register("Log", scope: .transient)
            try fx.register("Conn", [dep("Log")])
            try fx.register("Session", [dep("Conn"), dep("Log")], scope: .container)
            try fx.register("Clock")
            try fx.register("Handler", [dep("Clock"), dep("Session"), dep("Log")])
        }
        let planned = try serve(setUp)
        // The first resolve of a request makes the Session's own steps; the next ones take it cached and make none of them.
        // A release drops the Handler, then its Log and Clock (the Session holds its own); the child's close drops the
        // Session, then what it holds, last made first.
        let first = ["make Clock", "make Log", "make Conn", "make Log", "make Session", "make Log", "make Handler", "drop Handler", "drop Log", "drop Clock"]
        let next = ["make Clock", "make Log", "make Handler", "drop Handler", "drop Log", "drop Clock"]
        #expect(planned.log == Array(repeating: first + next + next + ["drop Session", "drop Log", "drop Conn", "drop Log"], count: 3).flatMap { $0 })
        #expect(planned.trees == Array(repeating: "Handler(Clock,Session(Conn(Log),Log),Log)", count: 9))
        #expect(Array(planned.log.prefix(10)) == ["make Clock", "make Log", "make Conn", "make Log", "make Session", "make Log", "make Handler",
                                                  "drop Handler", "drop Log", "drop Clock"])
        #expect(planned.log[10 ..< 15] == ["make Clock", "make Log", "make Handler", "drop Handler", "drop Log"])
        #expect(planned.fx.tracker.made("Session") == 3 && planned.fx.tracker.made("Conn") == 3 && planned.fx.tracker.made("Log") == 3 * 2 + 9)
        // Only the first request's first resolve is built (it records the plan); every other one is the plan's.
        #expect(planned.counts == ["resolves": 9])
        #expect(planned.fx.container.registration(for: Key("Handler"))!.hasCurrentPlan)
    }

    /// A graph-scoped instance the Session asks for first that a step outside it takes too: a build
    /// that finds the Session cached makes it where that step asks, an order no skip gives (`containerInput`
    /// before): the plan makes every step, and a run finding the Session cached runs its `cachedVariant`,
    /// recorded with the Session a leaf of the child's cache.
    @Test func aGraphInstanceSharedOutsideTheContainerStepRunsTheCachedVariant() throws {
        let setUp = { (fx: Fixture) throws in
            try fx.register("Conn")
            try fx.register("Session", [dep("Conn")], scope: .container)
            try fx.register("Clock")
            try fx.register("Handler", [dep("Session"), dep("Clock"), dep("Conn")])
        }
        let planned = try serve(setUp)
        // The first resolve: one Conn, the Session's, which the Handler takes too; the next ones: a Conn of their own.
        let next = ["make Clock", "make Conn", "make Handler", "drop Handler", "drop Conn", "drop Clock"]
        let request = ["make Conn", "make Session", "make Clock", "make Handler", "drop Handler", "drop Clock"] + next + next + ["drop Session", "drop Conn"]
        #expect(planned.log == Array(repeating: request, count: 3).flatMap { $0 })
        #expect(planned.trees == Array(repeating: "Handler(Session(Conn),Clock,Conn)", count: 9))
        #expect(planned.log[6 ..< 9] == ["make Clock", "make Conn", "make Handler"], "the cached Session's Conn is not the Handler's")
        #expect(planned.counts == ["resolves": 9])
        let plan = try Plan.record(try #require(planned.fx.container.registration(for: Key("Handler"))), configuration: 0)
        #expect(plan.containerSteps.count == 1 && !plan.skipsUnderContainer && plan.blockWords == 0)
        let variant = try #require(plan.cachedVariant)
        #expect(variant.containerSteps.isEmpty && variant.readsRequest && variant.sharedSteps.contains { $0.inResolving })
    }

    /// A container step over a singleton not cached when the plan was first recorded (a creation step
    /// under a container step, `notCached` before): the first resolve runs the creation plan (the graph
    /// claims the Session's cell and Db's in the build's order), the warm plan serves the rest.
    @Test func aContainerStepOverASingletonNotCachedYetRunsTheCreationPlan() throws {
        let setUp = { (fx: Fixture) throws in
            try fx.register("Db", scope: .singleton)
            try fx.register("Session", [dep("Db")], scope: .container)
            try fx.register("Handler", [dep("Session")])
        }
        let planned = try serve(times: 2, setUp)
        let request = ["make Session", "make Handler", "drop Handler", "make Handler", "drop Handler", "drop Session"]
        #expect(planned.log == ["make Db"] + Array(repeating: request, count: 3).flatMap { $0 })
        #expect(planned.trees == Array(repeating: "Handler(Session(Db))", count: 6))
        #expect(planned.fx.tracker.made("Db") == 1 && planned.fx.tracker.made("Session") == 3 && planned.fx.tracker.made("Handler") == 6)
        // The first resolve creates Db (the creation plan's); the rest are the warm plan's: none built.
        #expect(planned.counts == ["resolves": 6])
        let handler = try #require(planned.fx.container.registration(for: Key("Handler")))
        #expect(handler.creationPlanCount == 1 && handler.hasCurrentPlan)
    }

    /// A container-scoped root not cached in the resolving child (`sharedRoot` before): its plan's root
    /// is a container step, claimed, made and published into the child; the child's next resolves and
    /// the graphs over it take that one.
    @Test func aContainerScopedRootIsPlanned() throws {
        let setUp = { (fx: Fixture) throws in
            try fx.register("Db", scope: .singleton)
            try fx.register("Conn", [dep("Db")])
            try fx.register("Session", [dep("Conn"), dep("Db")], scope: .container)
            try fx.register("Handler", [dep("Session")])
            _ = try fx.resolve("Db")
        }
        for root in ["Session", "Handler"] {
            let planned = try serve(root: root, setUp)
            // Db cached by the set-up; each child: its Session (and Conn) made by its first resolve, dropped at its close.
            let handlers = root == "Session" ? [] : Array(repeating: ["make Handler", "drop Handler"], count: 3).flatMap { $0 }
            #expect(planned.log == ["make Db"] + Array(repeating: ["make Conn", "make Session"] + handlers + ["drop Session", "drop Conn"], count: 3).flatMap { $0 })
            #expect(planned.trees == Array(repeating: root == "Session" ? "Session(Conn(Db),Db)" : "Handler(Session(Conn(Db),Db))", count: 9))
            #expect(planned.fx.tracker.made("Session") == 3 && planned.fx.tracker.made("Conn") == 3)
            // Only the first resolve of each child reaches a graph or a plan (the next ones are cache hits): the plan's.
            #expect(planned.counts == ["resolves": root == "Session" ? 3 : 9])
        }
        let fx = try Fixture()
        try setUp(fx)
        let child = try fx.child()
        let session = try fx.resolve("Session", in: child)
        let handler = try fx.resolve("Handler", in: child)
        #expect(Obj.of(handler).depPointer(0) == session.pointer, "the plan published the Session into the child")
        #expect(fx.container.registration(for: Key("Session"))!.hasCurrentPlan)
        _ = consume handler
        _ = consume session
        _ = try child.close()
        #expect(fx.tracker.dropped("Session") == 1 && fx.tracker.dropped("Conn") == 1)
    }

    /// Two threads resolving one child's container-scoped root: the one that finds the other's claim
    /// waits for it (`containerHeld` before, then the build waited) and takes its instance; one made.
    @Test func aRunFindingAnotherThreadsClaimWaitsAndTakesItsInstance() throws {
        let fx = try Fixture()
        let started = Box(0)
        let open = Box(false)
        try fx.register("Conn")
        try fx.register("Slow", [dep("Conn")], scope: .container, body: { _ in
            started.value += 1
            while !open.value { usleep(1_000) }
        })
        open.value = true
        let warm = try fx.child()
        _ = try fx.resolve("Slow", in: warm)  // records the plan
        open.value = false
        let child = try fx.child()
        let pointers = Box<[UInt]>([])
        let declines = Box<[String: Int]>([:])
        onThreads(3) { i in
            // Thread 0 claims and makes it (its factory waits for `open`); thread 1 asks meanwhile; thread 2 opens.
            if i > 0 { while started.value < 2 { usleep(1_000) } }
            if i == 2 {
                usleep(50_000)
                open.value = true
                return
            }
            PlanStats.countOnThisThread()
            let before = PlanStats.thisThread()
            guard let slow = try? fx.resolve("Slow", in: child) else { return }
            pointers.value.append(UInt(bitPattern: slow.pointer))
            for (name, n) in PlanStats.thisThread() where name != "resolves" && n != before[name, default: 0] { declines.value[name] = n }
        }
        #expect(pointers.value.count == 2 && Set(pointers.value).count == 1, "one instance for both")
        #expect(fx.tracker.made("Slow") == 2 && fx.tracker.made("Conn") == 2, "one in the warm-up child, one here")
        #expect(declines.value.isEmpty, "\(declines.value)")
        _ = try child.close()
        _ = try warm.close()
        #expect(fx.tracker.badDrops == 0 && fx.tracker.liveCount == 0)
    }

    /// A factory under the Session failing: the error names the path through the Session, nothing
    /// made is cached or kept, each destructor runs once; the next resolve makes the Session again.
    @Test func aFailureUnderTheContainerStepCachesNothing() throws {
        do {
            let fx = try Fixture()
            let failing = Box(false)
            try fx.register("Log", scope: .transient)
            try fx.register("Conn", [dep("Log")], body: { _ in if failing.value { throw CallbackFailure(reason: "conn down") } })
            try fx.register("Session", [dep("Conn")], scope: .container)
            try fx.register("Handler", [dep("Session")])
            let child = try fx.child()
            _ = try fx.resolve("Handler", in: child)  // records the plan
            _ = try child.close()
            let next = try fx.child()
            failing.value = true
            expectError(.factoryFailed, "conn down", "Handler", "Session", "Conn") { try fx.resolve("Handler", in: next) }
            #expect(fx.tracker.made("Session") == 1 && fx.tracker.dropped("Log") == 2, "the failed resolve's Log dropped once")
            failing.value = false
            let handler = try fx.resolve("Handler", in: next)
            #expect(Self.describe(Obj.of(handler)) == "Handler(Session(Conn(Log)))" && fx.tracker.made("Session") == 2)
            _ = consume handler
            _ = try next.close()
            #expect(fx.tracker.badDrops == 0 && fx.tracker.liveCount == 0)
        }
    }
}

// A dependency on a key taking runtime arguments (`arguments` before): the build fails where it
// meets it, after making what came before; the plan does the same (`Plan.failure`): the same
// factory calls and drops, the same status and message, and no decline counted.
@Suite struct ArgumentDependencyPlanTests {
    @Test func aPlanFailsWhereTheBuildMeetsADependencyTakingArguments() throws {
        var logs: [[String]] = []
        do {
            let fx = try Fixture()
            try fx.register("Y")
            try fx.register("X", scope: .transient)
            try fx.register("A", [.argument(.i64)])
            try fx.register("B", [dep("X"), dep("A")])
            try fx.register("R", [dep("Y"), dep("B")])
            try fx.register("W", [weakDep("A")])
            PlanStats.countOnThisThread()
            let before = PlanStats.thisThread()
            for _ in 0..<3 {
                expectError(.argumentMismatch, "\"A\" takes runtime arguments and cannot be a dependency (needed by \"R\" -> \"B\")") {
                    try fx.resolve("R")
                }
                expectError(.argumentMismatch, "\"A\" takes runtime arguments and cannot be a dependency (needed by \"W\")") {
                    try fx.resolve("W")
                }
            }
            let after = PlanStats.thisThread()
            #expect(after["resolves", default: 0] - before["resolves", default: 0] == 6)
            #expect(after.filter { $0.key != "resolves" } == before.filter { $0.key != "resolves" }, "the plan's path: no decline")
            #expect(fx.container.registration(for: Key("R"))!.hasCurrentPlan)
            #expect(fx.tracker.made("Y") == 3 && fx.tracker.made("X") == 3 && fx.tracker.calls("A") == 0 && fx.tracker.calls("B") == 0)
            #expect(fx.tracker.badDrops == 0 && fx.tracker.liveCount == 0)
            logs.append(fx.tracker.log)
        }
        // Each R: Y and X made, then let go of, last made first, where the build meets A; W fails before any factory.
        #expect(logs[0] == Array(repeating: ["make Y", "make X", "drop X", "drop Y"], count: 3).flatMap { $0 })
    }

    /// A root taking runtime arguments resolved from a child with registrations of its own: the
    /// child's plan passes them to the root (`arguments` before), each resolve its own.
    @Test func aChildsPlanPassesTheRootsArguments() throws {
        var trees: [[String]] = []
        do {
            let fx = try Fixture()
            try fx.register("G", [dep("Own"), .argument(.i64)])
            let counts = try (0..<3).map { n -> [String: Int] in
                let child = try fx.child()
                try fx.register("Own", in: child)
                PlanStats.countOnThisThread()
                let before = PlanStats.thisThread()
                let g = try fx.resolve("G", in: child, [Argument(type: .i64, bits: UInt64(40 + n))])
                let after = PlanStats.thisThread()
                trees.append(["\(Obj.of(g).dep(0).label) \(Obj.of(g).words[1])"])
                _ = consume g
                _ = try child.close()
                var delta = after
                for (name, n) in before { delta[name, default: 0] -= n }
                return delta.filter { $0.value != 0 }
            }
            #expect(counts.dropFirst().allSatisfy { $0 == ["resolves": 1] }, "\(counts)")
            #expect(fx.tracker.made("Own") == 3 && fx.tracker.badDrops == 0 && fx.tracker.liveCount == 0)
        }
        #expect(trees[0 ..< 3].map(\.[0]) == ["Own 40", "Own 41", "Own 42"])
    }

    /// Three requests of three resolves of Handler(Clock, Session(W)), a WEAK W asked for only under the
    /// CONTAINER-scoped Session (`containerInput` before: the creating walk declined a weak creation step
    /// there, the warm plan a weak shared one), each request a child of the root or of a child (`nested`).
    /// W dies with each request's Session unless `keep` holds one made before (then every request takes it).
    private func serveWeak(keep: Bool, nested: Bool) throws -> (log: [String], trees: [String], counts: [String: Int], fx: Fixture) {
        let fx = try Fixture()
        try fx.register("W", scope: .weak)
        try fx.register("Session", [dep("W")], scope: .container)
        try fx.register("Clock")
        try fx.register("Handler", [dep("Clock"), dep("Session")])
        let parent = nested ? try fx.child() : fx.container
        var kept: Instance? = keep ? try fx.resolve("W") : nil
        var trees: [String] = []
        let counts = try counted {
            for _ in 0..<3 {
                let child = try fx.child(of: parent)
                for _ in 0..<3 {
                    let instance = try fx.resolve("Handler", in: child)
                    trees.append(withExtendedLifetime(instance) { Obj.of(instance).tree() })
                }
                _ = try child.close()
            }
        }
        #expect(kept == nil || fx.tracker.dropped("W") == 0)
        kept = nil
        if nested { _ = try parent.close() }
        #expect(fx.tracker.badDrops == 0 && fx.tracker.liveCount == 0)
        return (fx.tracker.log, trees, counts, fx)
    }

    /// A weak key under a container step (`aWeakKeyUnderAContainerStepBuilds` before): dead between requests,
    /// each request's first resolve runs the creation plan (W's cell claimed with the Session's, in the
    /// build's order), the rest the warm plan, the Session cached; alive, the warm plan takes it from its
    /// cache. The same makes, drops and trees as the build; no resolve built.
    @Test(arguments: [(false, false), (true, false), (false, true), (true, true)])
    func aWeakKeyUnderAContainerStepIsPlanned(keep: Bool, nested: Bool) throws {
        let planned = try serveWeak(keep: keep, nested: nested)
        // Each request: its first Handler makes the Session (and W, unless kept alive), the next two take it cached;
        // the child's close drops the Session, then W if only it held W (else W goes when `kept` lets go of it, last).
        let next = ["make Clock", "make Handler", "drop Handler", "drop Clock"]
        let request = ["make Clock"] + (keep ? [] : ["make W"]) + ["make Session", "make Handler", "drop Handler", "drop Clock"] + next + next
            + ["drop Session"] + (keep ? [] : ["drop W"])
        #expect(planned.log == (keep ? ["make W"] : []) + Array(repeating: request, count: 3).flatMap { $0 } + (keep ? ["drop W"] : []))
        #expect(planned.trees == Array(repeating: "Handler(Clock,Session(W))", count: 9))
        #expect(planned.fx.tracker.made("W") == (keep ? 1 : 3) && planned.fx.tracker.made("Session") == 3
                && planned.fx.tracker.made("Handler") == 9 && planned.fx.tracker.dropped("W") == planned.fx.tracker.made("W"))
        if !keep {
            // W made by the Session's first resolve, dropped with the Session when the request's child closes.
            #expect(Array(planned.log.prefix(4)) == ["make Clock", "make W", "make Session", "make Handler"])
            #expect(planned.log.firstIndex(of: "drop W")! > planned.log.firstIndex(of: "drop Session")!)
        }
        #expect(planned.counts == ["resolves": 9], "\(planned.counts)")
        let handler = try #require(planned.fx.container.registration(for: Key("Handler")))
        #expect(handler.hasCurrentPlan && handler.creationPlanCount == (keep ? 0 : 1))
    }
}
