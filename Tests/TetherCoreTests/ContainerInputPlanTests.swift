// `containerInput`'s shapes (issue 28): a made step a container step asks for first that a step outside
// takes too. A build finding the container step cached makes that step where the step outside asks, an
// order no skip of the plan's steps gives; the plan's `cachedVariant` (walked with the container steps
// leaves of the resolving container's cache) runs then. Since branch containerinput also where the plan
// replays into the graph (completion callbacks, slots made per resolve: `Graph.switchesToVariant`),
// from a child's component (`record(_:configuration:child:)`), and for a creation plan finding the container
// steps cached (`needsContainersUncached`, its creating variant). Each asserts its literal factory calls,
// completions, instances and drops in order (the build's, which `bothPaths` ran beside it as an oracle until
// branch twooracles: written from the run that compared them), and no resolve built.
import Synchronization
import Testing
@testable import TetherCore

@Suite struct ContainerInputPlanTests {
    /// Two children, each resolving `root` twice after `pre` (each instance dropped before the next), then
    /// closed: the trees (`planned`). `own`: registrations of each child's own.
    private func serve(root: String = "Handler", pre: [String] = [], _ setUp: (Fixture) throws -> Void,
                       own: ((Fixture, Container) throws -> Void)? = nil) throws -> (log: [String], seen: [String], counts: [String: Int]) {
        try planned { fx -> [String] in
            try setUp(fx)
            var seen: [String] = []
            for _ in 0..<2 {
                let child = try fx.child()
                try own?(fx, child)
                for key in pre { _ = try fx.resolve(key, in: child) }
                for _ in 0..<2 {
                    let h = try fx.resolve(root, in: child)
                    withExtendedLifetime(h) { seen.append(Obj.of(h).tree()) }
                }
                _ = try child.close()
            }
            return seen
        }
    }

    /// Conn (graph-scoped) asked for first by the CONTAINER-scoped Session, taken by the Handler too.
    private static func sessionOverConn(_ fx: Fixture) throws {
        try fx.register("Conn")
        try fx.register("Session", [dep("Conn")], scope: .container)
        try fx.register("Clock")
    }

    /// The second resolve of each child finds the Session cached: Clock, then Conn where the Handler asks.
    private static let cachedOrder = ["make Clock", "make Conn", "make Handler"]

    /// With a completion callback (the Handler's, the Session's, Conn's) the plan replays into the graph; a
    /// run finding the Session cached replays the `cachedVariant` (`containerInput` before: built).
    @Test func aCompletionCallbackOverASharedInputOfACachedContainerStepRunsTheCachedVariant() throws {
        for completing in ["Handler", "Session", "Conn"] {
            let run = try serve { fx in
                try fx.register("Conn")
                try fx.register("Session", [dep("Conn")], scope: .container)
                try fx.register("Clock")
                try fx.register("Handler", [dep("Session"), dep("Clock"), dep("Conn")])
                fx.onComplete(try #require(fx.container.registration(for: Key(completing))))
            }
            #expect(run.counts == ["resolves": 4], "\(completing): \(run.counts)")
            let expectedLog: [String: [String]] = [
                "Conn": ["make Conn", "make Session", "make Clock", "make Handler", "complete Conn", "drop Handler",
                        "drop Clock", "make Clock", "make Conn", "make Handler", "complete Conn", "drop Handler",
                        "drop Conn", "drop Clock", "drop Session", "drop Conn", "make Conn", "make Session", "make Clock",
                        "make Handler", "complete Conn", "drop Handler", "drop Clock", "make Clock", "make Conn",
                        "make Handler", "complete Conn", "drop Handler", "drop Conn", "drop Clock", "drop Session",
                        "drop Conn"],
                "Handler": ["make Conn", "make Session", "make Clock", "make Handler", "complete Handler", "drop Handler",
                        "drop Clock", "make Clock", "make Conn", "make Handler", "complete Handler", "drop Handler",
                        "drop Conn", "drop Clock", "drop Session", "drop Conn", "make Conn", "make Session", "make Clock",
                        "make Handler", "complete Handler", "drop Handler", "drop Clock", "make Clock", "make Conn",
                        "make Handler", "complete Handler", "drop Handler", "drop Conn", "drop Clock", "drop Session",
                        "drop Conn"],
                "Session": ["make Conn", "make Session", "make Clock", "make Handler", "complete Session", "drop Handler",
                        "drop Clock", "make Clock", "make Conn", "make Handler", "drop Handler", "drop Conn", "drop Clock",
                        "drop Session", "drop Conn", "make Conn", "make Session", "make Clock", "make Handler",
                        "complete Session", "drop Handler", "drop Clock", "make Clock", "make Conn", "make Handler",
                        "drop Handler", "drop Conn", "drop Clock", "drop Session", "drop Conn"],
            ]
            expectLiteral(run.log, try #require(expectedLog["\(completing)"]))
            #expect(run.seen == Array(repeating: "Handler(Session(Conn),Clock,Conn)", count: 4))
            // The first resolve makes the Session; the second takes it cached: its Conn is not the Handler's.
            let second = try #require(run.log.firstIndex(of: "drop Handler")) + 1
            let made = run.log[second...].filter { $0.hasPrefix("make") }.prefix(3)
            #expect(Array(made) == Self.cachedOrder, "\(completing): \(run.log)")
            #expect(run.log.filter { $0 == "complete \(completing)" }.count == (completing == "Session" ? 2 : 4))
        }
    }

    /// A LAZY slot (made per resolve): the plan replays into the graph, its variant too.
    @Test func aLazySlotOverASharedInputOfACachedContainerStepRunsTheCachedVariant() throws {
        let run = try serve { fx in
            try Self.sessionOverConn(fx)
            try fx.register("Handler", [dep("Session"), dep("Clock"), dep("Conn"), lazyDep("Clock")])
        }
        #expect(run.counts == ["resolves": 4], "\(run.counts)")
        expectLiteral(run.log, ["make Conn", "make Session", "make Clock", "make Handler", "drop Handler", "drop Clock", "make Clock",
                "make Conn", "make Handler", "drop Handler", "drop Conn", "drop Clock", "drop Session", "drop Conn",
                "make Conn", "make Session", "make Clock", "make Handler", "drop Handler", "drop Clock", "make Clock",
                "make Conn", "make Handler", "drop Handler", "drop Conn", "drop Clock", "drop Session", "drop Conn"])
        expectLiteral(run.seen, ["Handler(Session(Conn),Clock,Conn)", "Handler(Session(Conn),Clock,Conn)", "Handler(Session(Conn),Clock,Conn)",
                "Handler(Session(Conn),Clock,Conn)"])
        let second = try #require(run.log.firstIndex(of: "drop Handler")) + 1
        #expect(Array(run.log[second...].filter { $0.hasPrefix("make") }.prefix(3)) == Self.cachedOrder, "\(run.log)")
    }

    /// A child with registrations of its own (a graph-scoped Req; the CONTAINER-scoped Session itself): the
    /// child's plan has a `cachedVariant` over the same component (`containerInput` before: built).
    @Test func aChildsPlanOverASharedInputOfACachedContainerStepRunsTheCachedVariant() throws {
        let ownReq = try serve({ fx in
            try Self.sessionOverConn(fx)
            try fx.register("Handler", [dep("Session"), dep("Clock"), dep("Conn"), dep("Req")])
        }, own: { fx, child in try fx.register("Req", in: child) })
        let ownSession = try serve({ fx in
            try fx.register("Conn")
            try fx.register("Clock")
            try fx.register("Handler", [dep("Session"), dep("Clock"), dep("Conn")])
        }, own: { fx, child in try fx.register("Session", [dep("Conn")], scope: .container, in: child) })
        for (name, run, order) in [("ownReq", ownReq, ["make Clock", "make Conn", "make Req", "make Handler"]), ("ownSession", ownSession, Self.cachedOrder)] {
            #expect(run.counts == ["resolves": 4], "\(run.counts)")
            let expectedLog: [String: [String]] = [
                "ownReq": ["make Conn", "make Session", "make Clock", "make Req", "make Handler", "drop Handler", "drop Req",
                        "drop Clock", "make Clock", "make Conn", "make Req", "make Handler", "drop Handler", "drop Req",
                        "drop Conn", "drop Clock", "drop Session", "drop Conn", "make Conn", "make Session", "make Clock",
                        "make Req", "make Handler", "drop Handler", "drop Req", "drop Clock", "make Clock", "make Conn",
                        "make Req", "make Handler", "drop Handler", "drop Req", "drop Conn", "drop Clock", "drop Session",
                        "drop Conn"],
                "ownSession": ["make Conn", "make Session", "make Clock", "make Handler", "drop Handler", "drop Clock", "make Clock",
                        "make Conn", "make Handler", "drop Handler", "drop Conn", "drop Clock", "drop Session", "drop Conn",
                        "make Conn", "make Session", "make Clock", "make Handler", "drop Handler", "drop Clock",
                        "make Clock", "make Conn", "make Handler", "drop Handler", "drop Conn", "drop Clock",
                        "drop Session", "drop Conn"],
            ]
            expectLiteral(run.log, try #require(expectedLog[name]))
            let expectedSeen: [String: [String]] = [
                "ownReq": ["Handler(Session(Conn),Clock,Conn,Req)", "Handler(Session(Conn),Clock,Conn,Req)",
                        "Handler(Session(Conn),Clock,Conn,Req)", "Handler(Session(Conn),Clock,Conn,Req)"],
                "ownSession": ["Handler(Session(Conn),Clock,Conn)", "Handler(Session(Conn),Clock,Conn)",
                        "Handler(Session(Conn),Clock,Conn)", "Handler(Session(Conn),Clock,Conn)"],
            ]
            expectLiteral(run.seen, try #require(expectedSeen[name]))
            let second = try #require(run.log.firstIndex(of: "drop Handler")) + 1
            #expect(Array(run.log[second...].filter { $0.hasPrefix("make") }.prefix(order.count)) == order, "\(run.log)")
        }
        #expect(ownSession.log.filter { $0 == "make Session" }.count == 2 && ownSession.log.filter { $0 == "drop Session" }.count == 2)
    }

    /// A creation plan over such a graph (`needsContainersUncached`: every step made) finding the Session cached
    /// (resolved first in each child): the graph replays its creating `cachedVariant`, the Session a leaf
    /// (`containerInput` before: built). A singleton Db made once; a weak one at each resolve (dead with the Handler before).
    @Test func aCreationPlanFindingTheContainerStepCachedRunsItsCreatingVariant() throws {
        for scope in [Scope.singleton, .weak] {
            let run = try serve(pre: ["Session"]) { fx in
                try Self.sessionOverConn(fx)
                try fx.register("Db", scope: scope)
                try fx.register("Handler", [dep("Session"), dep("Clock"), dep("Conn"), dep("Db")])
            }
            #expect(run.counts == ["resolves": 6], "\(scope): \(run.counts)")
            let expectedLog: [String: [String]] = [
                "singleton": ["make Conn", "make Session", "make Clock", "make Conn", "make Db", "make Handler", "drop Handler",
                        "drop Conn", "drop Clock", "make Clock", "make Conn", "make Handler", "drop Handler", "drop Conn",
                        "drop Clock", "drop Session", "drop Conn", "make Conn", "make Session", "make Clock", "make Conn",
                        "make Handler", "drop Handler", "drop Conn", "drop Clock", "make Clock", "make Conn",
                        "make Handler", "drop Handler", "drop Conn", "drop Clock", "drop Session", "drop Conn", "drop Db"],
                "weak": ["make Conn", "make Session", "make Clock", "make Conn", "make Db", "make Handler", "drop Handler",
                        "drop Db", "drop Conn", "drop Clock", "make Clock", "make Conn", "make Db", "make Handler",
                        "drop Handler", "drop Db", "drop Conn", "drop Clock", "drop Session", "drop Conn", "make Conn",
                        "make Session", "make Clock", "make Conn", "make Db", "make Handler", "drop Handler", "drop Db",
                        "drop Conn", "drop Clock", "make Clock", "make Conn", "make Db", "make Handler", "drop Handler",
                        "drop Db", "drop Conn", "drop Clock", "drop Session", "drop Conn"],
            ]
            expectLiteral(run.log, try #require(expectedLog["\(scope)"]))
            let expectedSeen: [String: [String]] = [
                "singleton": ["Handler(Session(Conn),Clock,Conn,Db)", "Handler(Session(Conn),Clock,Conn,Db)",
                        "Handler(Session(Conn),Clock,Conn,Db)", "Handler(Session(Conn),Clock,Conn,Db)"],
                "weak": ["Handler(Session(Conn),Clock,Conn,Db)", "Handler(Session(Conn),Clock,Conn,Db)",
                        "Handler(Session(Conn),Clock,Conn,Db)", "Handler(Session(Conn),Clock,Conn,Db)"],
            ]
            expectLiteral(run.seen, try #require(expectedSeen["\(scope)"]))
            #expect(Array(run.log.prefix(6)) == ["make Conn", "make Session", "make Clock", "make Conn", "make Db", "make Handler"],
                    "\(scope): \(run.log)")
            #expect(run.log.filter { $0 == "make Db" }.count == (scope == .singleton ? 1 : 4))
        }
    }

    /// A traced creating run (a weak U not cached) finding the container step R cached, with a singleton S asked for
    /// under R and outside (`containerInput` before: its hits were told in step order only): it tells them in the
    /// build's walk (`Plan.execute`'s `walked`, as a warm run's; a creation step found published there a leaf from
    /// then on, `Plan.tellPublishedInWalk`), the plan serves it, the same trace and behaviour as the build's.
    @Test func aTracedCreatingRunFindingTheContainerStepCachedIsThePlans() throws {
        let run = try planned { fx -> [String] in
            try fx.register("Handler", [dep("R"), dep("T"), dep("S"), dep("U")], scope: .transient)
            try fx.register("R", [dep("S")], scope: .container)
            try fx.register("T", scope: .transient)
            try fx.register("S", scope: .singleton)
            try fx.register("U", scope: .weak)
            _ = try fx.resolve("S")
            var seen: [String] = []
            let child = try fx.child()
            let events = Box<[String]>([])
            child.setTrace { event in events.withLock { $0.append("\(event.kind) \(event.key.name)") } }
            _ = try fx.resolve("R", in: child)
            for _ in 0..<2 {
                let h = try fx.resolve("Handler", in: child)
                withExtendedLifetime(h) { seen.append(Obj.of(h).tree()) }
            }
            _ = try child.close()
            return seen + events.withLock { $0 }
        }
        #expect(run.counts == ["resolves": 4], "\(run.counts)")
        expectLiteral(run.log, ["make S", "make R", "make T", "make U", "make Handler", "drop Handler", "drop U", "drop T", "make T", "make U",
                "make Handler", "drop Handler", "drop U", "drop T", "drop R", "drop S"])
        expectLiteral(run.seen, ["Handler(R(S),T,S,U)", "Handler(R(S),T,S,U)", "resolveStart R", "cacheHit S", "factoryCall R",
                "factoryReturn R", "edge R", "resolveEnd R", "resolveStart Handler", "cacheHit R", "factoryCall T",
                "factoryReturn T", "cacheHit S", "factoryCall U", "factoryReturn U", "factoryCall Handler",
                "factoryReturn Handler", "edge Handler", "edge Handler", "edge Handler", "edge Handler",
                "resolveEnd Handler", "destroy Handler", "destroy U", "destroy T", "resolveStart Handler", "cacheHit R",
                "factoryCall T", "factoryReturn T", "cacheHit S", "factoryCall U", "factoryReturn U", "factoryCall Handler",
                "factoryReturn Handler", "edge Handler", "edge Handler", "edge Handler", "edge Handler",
                "resolveEnd Handler", "destroy Handler", "destroy U", "destroy T", "destroy R"])
        // R taken cached, S where Handler asks (after T's factory), not where R's step is: the build's walk.
        let calls = run.seen.filter { $0.hasPrefix("cacheHit") || $0.hasPrefix("factoryCall") }
        #expect(calls == ["cacheHit S", "factoryCall R"] + Array(repeating: ["cacheHit R", "factoryCall T", "cacheHit S", "factoryCall U", "factoryCall Handler"], count: 2).flatMap { $0 },
                "\(run.seen)")
    }
}

@Suite struct ChildCreatingContainerInputTests {
    /// Two children, each with its own Req, resolving Handler twice (`first`: run in each child before), the root's
    /// singletons reset between them: the Handlers' trees.
    private func handlersInTwoChildren(_ fx: Fixture, first: (Container) throws -> Void = { _ in }) throws -> [String] {
        var seen: [String] = []
        for round in 0..<2 {
            let child = try fx.child()
            try fx.register("Req", in: child)
            try first(child)
            for _ in 0..<2 {
                let h = try fx.resolve("Handler", in: child)
                withExtendedLifetime(h) { seen.append(Obj.of(h).tree()) }
            }
            _ = try child.close()
            if round == 0 { fx.container.reset(.singleton) }
        }
        return seen
    }

    /// A child with a registration of its own (Req) resolving Handler over the owner's singleton S, which takes
    /// the CONTAINER-scoped R and the graph-scoped G that R asks for first: S's creation plan from the child.
    /// `pre`: R resolved first from the root (its container step cached there) or not.
    @Test(arguments: [false, true]) func aChildsCreationPlanOverASingletonsContainerStepWithAGraphKeyItTakesToo(pre: Bool) throws {
        let run = try planned { fx -> [String] in
            try fx.register("G")
            try fx.register("R", [dep("G")], scope: .container)
            try fx.register("S", [dep("R"), dep("G")], scope: .singleton)
            try fx.register("Handler", [dep("S"), dep("Req")], scope: .transient)
            if pre { _ = try fx.resolve("R") }
            return try handlersInTwoChildren(fx)
        }
        #expect(run.counts == ["resolves": pre ? 5 : 4], "\(pre): \(run.counts)")
        let expectedLog: [String: [String]] = [
            "false": ["make G", "make R", "make S", "make Req", "make Handler", "drop Handler", "drop Req", "make Req",
                    "make Handler", "drop Handler", "drop Req", "drop S", "make G", "make S", "make Req", "make Handler",
                    "drop Handler", "drop Req", "make Req", "make Handler", "drop Handler", "drop Req", "drop S", "drop G",
                    "drop R", "drop G"],
            "true": ["make G", "make R", "make G", "make S", "make Req", "make Handler", "drop Handler", "drop Req", "make Req",
                    "make Handler", "drop Handler", "drop Req", "drop S", "drop G", "make G", "make S", "make Req",
                    "make Handler", "drop Handler", "drop Req", "make Req", "make Handler", "drop Handler", "drop Req",
                    "drop S", "drop G", "drop R", "drop G"],
        ]
        expectLiteral(run.log, try #require(expectedLog["\(pre)"]))
        #expect(run.seen == Array(repeating: "Handler(S(R(G),G),Req)", count: 4))
        // R made once (the root's): S takes its R's G when R is made in S's graph, else (R cached) G made where S asks.
        let made = run.log.filter { $0.hasPrefix("make") }
        let round = ["make S", "make Req", "make Handler", "make Req", "make Handler"]
        #expect(made == ["make G", "make R"] + (pre ? ["make G"] : []) + round + ["make G"] + round, "\(made)")
    }
}

extension ChildCreatingContainerInputTests {
    /// The child's Handler over the CONTAINER-scoped Session (the child's) over Conn, which the Handler takes too,
    /// and the owner's singleton (or weak) Db not cached: the component's creation plan. `pre`: the Session resolved
    /// first in each child.
    @Test(arguments: [(Scope.singleton, false), (.singleton, true), (.weak, false), (.weak, true)])
    func aChildsCreationPlanOverAContainerStepWithAGraphKeyTakenOutside(scope: Scope, pre: Bool) throws {
        let run = try planned { fx -> [String] in
            try fx.register("Conn")
            try fx.register("Session", [dep("Conn")], scope: .container)
            try fx.register("Db", scope: scope)
            try fx.register("Handler", [dep("Session"), dep("Conn"), dep("Db"), dep("Req")])
            return try handlersInTwoChildren(fx) { child in if pre { _ = try fx.resolve("Session", in: child) } }
        }
        #expect(run.counts == ["resolves": pre ? 6 : 4], "\(scope) \(pre): \(run.counts)")
        let expectedLog: [String: [String]] = [
            "singleton false": ["make Conn", "make Session", "make Db", "make Req", "make Handler", "drop Handler", "drop Req",
                    "make Conn", "make Req", "make Handler", "drop Handler", "drop Req", "drop Conn", "drop Session",
                    "drop Conn", "drop Db", "make Conn", "make Session", "make Db", "make Req", "make Handler",
                    "drop Handler", "drop Req", "make Conn", "make Req", "make Handler", "drop Handler", "drop Req",
                    "drop Conn", "drop Session", "drop Conn", "drop Db"],
            "singleton true": ["make Conn", "make Session", "make Conn", "make Db", "make Req", "make Handler", "drop Handler",
                    "drop Req", "drop Conn", "make Conn", "make Req", "make Handler", "drop Handler", "drop Req",
                    "drop Conn", "drop Session", "drop Conn", "drop Db", "make Conn", "make Session", "make Conn",
                    "make Db", "make Req", "make Handler", "drop Handler", "drop Req", "drop Conn", "make Conn", "make Req",
                    "make Handler", "drop Handler", "drop Req", "drop Conn", "drop Session", "drop Conn", "drop Db"],
            "weak false": ["make Conn", "make Session", "make Db", "make Req", "make Handler", "drop Handler", "drop Req", "drop Db",
                    "make Conn", "make Db", "make Req", "make Handler", "drop Handler", "drop Req", "drop Db", "drop Conn",
                    "drop Session", "drop Conn", "make Conn", "make Session", "make Db", "make Req", "make Handler",
                    "drop Handler", "drop Req", "drop Db", "make Conn", "make Db", "make Req", "make Handler",
                    "drop Handler", "drop Req", "drop Db", "drop Conn", "drop Session", "drop Conn"],
            "weak true": ["make Conn", "make Session", "make Conn", "make Db", "make Req", "make Handler", "drop Handler",
                    "drop Req", "drop Db", "drop Conn", "make Conn", "make Db", "make Req", "make Handler", "drop Handler",
                    "drop Req", "drop Db", "drop Conn", "drop Session", "drop Conn", "make Conn", "make Session",
                    "make Conn", "make Db", "make Req", "make Handler", "drop Handler", "drop Req", "drop Db", "drop Conn",
                    "make Conn", "make Db", "make Req", "make Handler", "drop Handler", "drop Req", "drop Db", "drop Conn",
                    "drop Session", "drop Conn"],
        ]
        expectLiteral(run.log, try #require(expectedLog["\(scope) \(pre)"]))
        #expect(run.seen == Array(repeating: "Handler(Session(Conn),Conn,Db,Req)", count: 4))
        // Pre: the Session cached, Conn made where the Handler asks; else the Handler takes the Session's.
        let first = pre ? ["make Conn", "make Session", "make Conn", "make Db"] : ["make Conn", "make Session", "make Db"]
        #expect(Array(run.log.prefix(first.count)) == first, "\(run.log)")
        #expect(run.log.filter { $0 == "make Db" }.count == (scope == .singleton ? 2 : 4) && run.log.filter { $0 == "make Conn" }.count == (pre ? 6 : 4))
    }
}

extension ChildCreatingContainerInputTests {
    /// A (with a RESOLVER slot, which gets the Session or not) before the CONTAINER-scoped Session over Conn (over Y and the
    /// root's singleton Db) and Z, the Handler over A, the Session and `handler` (Conn, taken outside too, X, a weak W): the
    /// Session is claimed late (`Step.claimsLate`). Each child resolves the Handler twice, traced: the trees (the Session
    /// A got the Handler's or not) and the events (`planned`).
    /// `w`: W's dependencies; `nested`: X's factory resolves W (held until the Handler is dropped), published meanwhile.
    /// `cache`: a second CONTAINER-scoped step claimed late, Cache (over Q), the Handler's before the Session.
    private func lateClaimed(gets: Bool, handler: [String], w: [String] = [], nested: Bool = false, cache: Bool = false,
                             before: [String] = []) throws
        -> (log: [String], seen: [String], counts: [String: Int]) {
        try planned { fx -> [String] in
            let held = Box<[Instance]>([])
            try fx.register("Db", scope: .singleton)
            try fx.register("Y")
            try fx.register("Conn", [dep("Y"), dep("Db")])
            try fx.register("Z")
            try fx.register("Session", [dep("Conn"), dep("Z")], scope: .container)
            try fx.register("A", [.resolver]) { obj in
                guard gets else { return }
                obj.got.append(try #require(fx.bridge.resolver(obj.words[0])).get(Key("Session")).pointer)
            }
            try fx.register("X") { _ in
                guard nested else { return }
                let w = try fx.resolve("W")
                held.withLock { $0.append(w) }
            }
            try fx.register("W", w.map { dep($0) }, scope: .weak)
            try fx.register("Q")
            try fx.register("Cache", [dep("Q")], scope: .container)
            if (before + handler).contains("Cache2") {
                try fx.register("Q2")
                try fx.register("Cache2", [dep("Q2")], scope: .container)
            }
            try fx.register("Handler", [dep("A")] + (cache ? [dep("Cache")] : []) + before.map { dep($0) } + [dep("Session")]
                            + handler.map { dep($0) })
            _ = try fx.resolve("Db")
            var seen: [String] = []
            for _ in 0..<2 {
                let child = try fx.child()
                let events = Box<[String]>([])
                child.setTrace { event in events.withLock { $0.append("\(event.kind) \(event.key.name)") } }
                for _ in 0..<2 {
                    let h = try fx.resolve("Handler", in: child)
                    withExtendedLifetime(h) { seen.append(Obj.of(h).tree() + " \(Obj.of(h).dep(0).got.allSatisfy { $0 == Obj.of(h).depPointer(1) })") }
                    held.withLock { $0.removeAll() }
                }
                _ = try child.close()
                seen += events.withLock { $0 }
            }
            return seen
        }
    }

    /// The run finding the Session cached where it claims it (or A's get taking it cached) goes on in the plan: Conn (and Y)
    /// made, Z not, the Session's hit and Db's told in the build's walk (`containerInput` before: built). `creating`: the
    /// Handler takes a weak W too, each resolve a creation plan's (`recordCreatingUnmarked`).
    @Test(arguments: [false, true], [false, true]) func aLateClaimedContainerStepWithAGraphKeyTakenOutside(gets: Bool, creating: Bool) throws {
        let run = try lateClaimed(gets: gets, handler: ["Conn", "X"] + (creating ? ["W"] : []))
        #expect(run.counts == ["resolves": 5], "\(run.counts)")
        let expectedLog: [String: [String]] = [
            "false false": ["make Db", "make A", "make Y", "make Conn", "make Z", "make Session", "make X", "make Handler",
                    "drop Handler", "drop X", "drop A", "make A", "make Y", "make Conn", "make X", "make Handler",
                    "drop Handler", "drop X", "drop Conn", "drop Y", "drop A", "drop Session", "drop Z", "drop Conn",
                    "drop Y", "make A", "make Y", "make Conn", "make Z", "make Session", "make X", "make Handler",
                    "drop Handler", "drop X", "drop A", "make A", "make Y", "make Conn", "make X", "make Handler",
                    "drop Handler", "drop X", "drop Conn", "drop Y", "drop A", "drop Session", "drop Z", "drop Conn",
                    "drop Y", "drop Db"],
            "false true": ["make Db", "make A", "make Y", "make Conn", "make Z", "make Session", "make X", "make W", "make Handler",
                    "drop Handler", "drop W", "drop X", "drop A", "make A", "make Y", "make Conn", "make X", "make W",
                    "make Handler", "drop Handler", "drop W", "drop X", "drop Conn", "drop Y", "drop A", "drop Session",
                    "drop Z", "drop Conn", "drop Y", "make A", "make Y", "make Conn", "make Z", "make Session", "make X",
                    "make W", "make Handler", "drop Handler", "drop W", "drop X", "drop A", "make A", "make Y", "make Conn",
                    "make X", "make W", "make Handler", "drop Handler", "drop W", "drop X", "drop Conn", "drop Y", "drop A",
                    "drop Session", "drop Z", "drop Conn", "drop Y", "drop Db"],
            "true false": ["make Db", "make Y", "make Conn", "make Z", "make Session", "make A", "make X", "make Handler",
                    "drop Handler", "drop X", "drop A", "make A", "make Y", "make Conn", "make X", "make Handler",
                    "drop Handler", "drop X", "drop Conn", "drop Y", "drop A", "drop Session", "drop Z", "drop Conn",
                    "drop Y", "make Y", "make Conn", "make Z", "make Session", "make A", "make X", "make Handler",
                    "drop Handler", "drop X", "drop A", "make A", "make Y", "make Conn", "make X", "make Handler",
                    "drop Handler", "drop X", "drop Conn", "drop Y", "drop A", "drop Session", "drop Z", "drop Conn",
                    "drop Y", "drop Db"],
            "true true": ["make Db", "make Y", "make Conn", "make Z", "make Session", "make A", "make X", "make W", "make Handler",
                    "drop Handler", "drop W", "drop X", "drop A", "make A", "make Y", "make Conn", "make X", "make W",
                    "make Handler", "drop Handler", "drop W", "drop X", "drop Conn", "drop Y", "drop A", "drop Session",
                    "drop Z", "drop Conn", "drop Y", "make Y", "make Conn", "make Z", "make Session", "make A", "make X",
                    "make W", "make Handler", "drop Handler", "drop W", "drop X", "drop A", "make A", "make Y", "make Conn",
                    "make X", "make W", "make Handler", "drop Handler", "drop W", "drop X", "drop Conn", "drop Y", "drop A",
                    "drop Session", "drop Z", "drop Conn", "drop Y", "drop Db"],
        ]
        expectLiteral(run.log, try #require(expectedLog["\(gets) \(creating)"]))
        let expectedSeen: [String: [String]] = [
            "false false": ["Handler(A,Session(Conn(Y,Db),Z),Conn(Y,Db),X) true", "Handler(A,Session(Conn(Y,Db),Z),Conn(Y,Db),X) true",
                    "resolveStart Handler", "factoryCall A", "factoryReturn A", "factoryCall Y", "factoryReturn Y",
                    "cacheHit Db", "factoryCall Conn", "factoryReturn Conn", "edge Conn", "edge Conn", "factoryCall Z",
                    "factoryReturn Z", "factoryCall Session", "factoryReturn Session", "edge Session", "edge Session",
                    "factoryCall X", "factoryReturn X", "factoryCall Handler", "factoryReturn Handler", "edge Handler",
                    "edge Handler", "edge Handler", "edge Handler", "resolveEnd Handler", "destroy Handler", "destroy X",
                    "destroy A", "resolveStart Handler", "factoryCall A", "factoryReturn A", "cacheHit Session",
                    "factoryCall Y", "factoryReturn Y", "cacheHit Db", "factoryCall Conn", "factoryReturn Conn",
                    "edge Conn", "edge Conn", "factoryCall X", "factoryReturn X", "factoryCall Handler",
                    "factoryReturn Handler", "edge Handler", "edge Handler", "edge Handler", "edge Handler",
                    "resolveEnd Handler", "destroy Handler", "destroy X", "destroy Conn", "destroy Y", "destroy A",
                    "destroy Session", "destroy Z", "destroy Conn", "destroy Y",
                    "Handler(A,Session(Conn(Y,Db),Z),Conn(Y,Db),X) true",
                    "Handler(A,Session(Conn(Y,Db),Z),Conn(Y,Db),X) true", "resolveStart Handler", "factoryCall A",
                    "factoryReturn A", "factoryCall Y", "factoryReturn Y", "cacheHit Db", "factoryCall Conn",
                    "factoryReturn Conn", "edge Conn", "edge Conn", "factoryCall Z", "factoryReturn Z",
                    "factoryCall Session", "factoryReturn Session", "edge Session", "edge Session", "factoryCall X",
                    "factoryReturn X", "factoryCall Handler", "factoryReturn Handler", "edge Handler", "edge Handler",
                    "edge Handler", "edge Handler", "resolveEnd Handler", "destroy Handler", "destroy X", "destroy A",
                    "resolveStart Handler", "factoryCall A", "factoryReturn A", "cacheHit Session", "factoryCall Y",
                    "factoryReturn Y", "cacheHit Db", "factoryCall Conn", "factoryReturn Conn", "edge Conn", "edge Conn",
                    "factoryCall X", "factoryReturn X", "factoryCall Handler", "factoryReturn Handler", "edge Handler",
                    "edge Handler", "edge Handler", "edge Handler", "resolveEnd Handler", "destroy Handler", "destroy X",
                    "destroy Conn", "destroy Y", "destroy A", "destroy Session", "destroy Z", "destroy Conn", "destroy Y"],
            "false true": ["Handler(A,Session(Conn(Y,Db),Z),Conn(Y,Db),X,W) true",
                    "Handler(A,Session(Conn(Y,Db),Z),Conn(Y,Db),X,W) true", "resolveStart Handler", "factoryCall A",
                    "factoryReturn A", "factoryCall Y", "factoryReturn Y", "cacheHit Db", "factoryCall Conn",
                    "factoryReturn Conn", "edge Conn", "edge Conn", "factoryCall Z", "factoryReturn Z",
                    "factoryCall Session", "factoryReturn Session", "edge Session", "edge Session", "factoryCall X",
                    "factoryReturn X", "factoryCall W", "factoryReturn W", "factoryCall Handler", "factoryReturn Handler",
                    "edge Handler", "edge Handler", "edge Handler", "edge Handler", "edge Handler", "resolveEnd Handler",
                    "destroy Handler", "destroy W", "destroy X", "destroy A", "resolveStart Handler", "factoryCall A",
                    "factoryReturn A", "cacheHit Session", "factoryCall Y", "factoryReturn Y", "cacheHit Db",
                    "factoryCall Conn", "factoryReturn Conn", "edge Conn", "edge Conn", "factoryCall X", "factoryReturn X",
                    "factoryCall W", "factoryReturn W", "factoryCall Handler", "factoryReturn Handler", "edge Handler",
                    "edge Handler", "edge Handler", "edge Handler", "edge Handler", "resolveEnd Handler", "destroy Handler",
                    "destroy W", "destroy X", "destroy Conn", "destroy Y", "destroy A", "destroy Session", "destroy Z",
                    "destroy Conn", "destroy Y", "Handler(A,Session(Conn(Y,Db),Z),Conn(Y,Db),X,W) true",
                    "Handler(A,Session(Conn(Y,Db),Z),Conn(Y,Db),X,W) true", "resolveStart Handler", "factoryCall A",
                    "factoryReturn A", "factoryCall Y", "factoryReturn Y", "cacheHit Db", "factoryCall Conn",
                    "factoryReturn Conn", "edge Conn", "edge Conn", "factoryCall Z", "factoryReturn Z",
                    "factoryCall Session", "factoryReturn Session", "edge Session", "edge Session", "factoryCall X",
                    "factoryReturn X", "factoryCall W", "factoryReturn W", "factoryCall Handler", "factoryReturn Handler",
                    "edge Handler", "edge Handler", "edge Handler", "edge Handler", "edge Handler", "resolveEnd Handler",
                    "destroy Handler", "destroy W", "destroy X", "destroy A", "resolveStart Handler", "factoryCall A",
                    "factoryReturn A", "cacheHit Session", "factoryCall Y", "factoryReturn Y", "cacheHit Db",
                    "factoryCall Conn", "factoryReturn Conn", "edge Conn", "edge Conn", "factoryCall X", "factoryReturn X",
                    "factoryCall W", "factoryReturn W", "factoryCall Handler", "factoryReturn Handler", "edge Handler",
                    "edge Handler", "edge Handler", "edge Handler", "edge Handler", "resolveEnd Handler", "destroy Handler",
                    "destroy W", "destroy X", "destroy Conn", "destroy Y", "destroy A", "destroy Session", "destroy Z",
                    "destroy Conn", "destroy Y"],
            "true false": ["Handler(A,Session(Conn(Y,Db),Z),Conn(Y,Db),X) true", "Handler(A,Session(Conn(Y,Db),Z),Conn(Y,Db),X) true",
                    "resolveStart Handler", "factoryCall A", "factoryCall Y", "factoryReturn Y", "cacheHit Db",
                    "factoryCall Conn", "factoryReturn Conn", "edge Conn", "edge Conn", "factoryCall Z", "factoryReturn Z",
                    "factoryCall Session", "factoryReturn Session", "edge Session", "edge Session", "factoryReturn A",
                    "edge A", "factoryCall X", "factoryReturn X", "factoryCall Handler", "factoryReturn Handler",
                    "edge Handler", "edge Handler", "edge Handler", "edge Handler", "resolveEnd Handler", "destroy Handler",
                    "destroy X", "destroy A", "resolveStart Handler", "factoryCall A", "cacheHit Session",
                    "factoryReturn A", "edge A", "factoryCall Y", "factoryReturn Y", "cacheHit Db", "factoryCall Conn",
                    "factoryReturn Conn", "edge Conn", "edge Conn", "factoryCall X", "factoryReturn X",
                    "factoryCall Handler", "factoryReturn Handler", "edge Handler", "edge Handler", "edge Handler",
                    "edge Handler", "resolveEnd Handler", "destroy Handler", "destroy X", "destroy Conn", "destroy Y",
                    "destroy A", "destroy Session", "destroy Z", "destroy Conn", "destroy Y",
                    "Handler(A,Session(Conn(Y,Db),Z),Conn(Y,Db),X) true",
                    "Handler(A,Session(Conn(Y,Db),Z),Conn(Y,Db),X) true", "resolveStart Handler", "factoryCall A",
                    "factoryCall Y", "factoryReturn Y", "cacheHit Db", "factoryCall Conn", "factoryReturn Conn",
                    "edge Conn", "edge Conn", "factoryCall Z", "factoryReturn Z", "factoryCall Session",
                    "factoryReturn Session", "edge Session", "edge Session", "factoryReturn A", "edge A", "factoryCall X",
                    "factoryReturn X", "factoryCall Handler", "factoryReturn Handler", "edge Handler", "edge Handler",
                    "edge Handler", "edge Handler", "resolveEnd Handler", "destroy Handler", "destroy X", "destroy A",
                    "resolveStart Handler", "factoryCall A", "cacheHit Session", "factoryReturn A", "edge A",
                    "factoryCall Y", "factoryReturn Y", "cacheHit Db", "factoryCall Conn", "factoryReturn Conn",
                    "edge Conn", "edge Conn", "factoryCall X", "factoryReturn X", "factoryCall Handler",
                    "factoryReturn Handler", "edge Handler", "edge Handler", "edge Handler", "edge Handler",
                    "resolveEnd Handler", "destroy Handler", "destroy X", "destroy Conn", "destroy Y", "destroy A",
                    "destroy Session", "destroy Z", "destroy Conn", "destroy Y"],
            "true true": ["Handler(A,Session(Conn(Y,Db),Z),Conn(Y,Db),X,W) true",
                    "Handler(A,Session(Conn(Y,Db),Z),Conn(Y,Db),X,W) true", "resolveStart Handler", "factoryCall A",
                    "factoryCall Y", "factoryReturn Y", "cacheHit Db", "factoryCall Conn", "factoryReturn Conn",
                    "edge Conn", "edge Conn", "factoryCall Z", "factoryReturn Z", "factoryCall Session",
                    "factoryReturn Session", "edge Session", "edge Session", "factoryReturn A", "edge A", "factoryCall X",
                    "factoryReturn X", "factoryCall W", "factoryReturn W", "factoryCall Handler", "factoryReturn Handler",
                    "edge Handler", "edge Handler", "edge Handler", "edge Handler", "edge Handler", "resolveEnd Handler",
                    "destroy Handler", "destroy W", "destroy X", "destroy A", "resolveStart Handler", "factoryCall A",
                    "cacheHit Session", "factoryReturn A", "edge A", "factoryCall Y", "factoryReturn Y", "cacheHit Db",
                    "factoryCall Conn", "factoryReturn Conn", "edge Conn", "edge Conn", "factoryCall X", "factoryReturn X",
                    "factoryCall W", "factoryReturn W", "factoryCall Handler", "factoryReturn Handler", "edge Handler",
                    "edge Handler", "edge Handler", "edge Handler", "edge Handler", "resolveEnd Handler", "destroy Handler",
                    "destroy W", "destroy X", "destroy Conn", "destroy Y", "destroy A", "destroy Session", "destroy Z",
                    "destroy Conn", "destroy Y", "Handler(A,Session(Conn(Y,Db),Z),Conn(Y,Db),X,W) true",
                    "Handler(A,Session(Conn(Y,Db),Z),Conn(Y,Db),X,W) true", "resolveStart Handler", "factoryCall A",
                    "factoryCall Y", "factoryReturn Y", "cacheHit Db", "factoryCall Conn", "factoryReturn Conn",
                    "edge Conn", "edge Conn", "factoryCall Z", "factoryReturn Z", "factoryCall Session",
                    "factoryReturn Session", "edge Session", "edge Session", "factoryReturn A", "edge A", "factoryCall X",
                    "factoryReturn X", "factoryCall W", "factoryReturn W", "factoryCall Handler", "factoryReturn Handler",
                    "edge Handler", "edge Handler", "edge Handler", "edge Handler", "edge Handler", "resolveEnd Handler",
                    "destroy Handler", "destroy W", "destroy X", "destroy A", "resolveStart Handler", "factoryCall A",
                    "cacheHit Session", "factoryReturn A", "edge A", "factoryCall Y", "factoryReturn Y", "cacheHit Db",
                    "factoryCall Conn", "factoryReturn Conn", "edge Conn", "edge Conn", "factoryCall X", "factoryReturn X",
                    "factoryCall W", "factoryReturn W", "factoryCall Handler", "factoryReturn Handler", "edge Handler",
                    "edge Handler", "edge Handler", "edge Handler", "edge Handler", "resolveEnd Handler", "destroy Handler",
                    "destroy W", "destroy X", "destroy Conn", "destroy Y", "destroy A", "destroy Session", "destroy Z",
                    "destroy Conn", "destroy Y"],
        ]
        expectLiteral(run.seen, try #require(expectedSeen["\(gets) \(creating)"]))
        guard !gets && !creating else { return }
        let round = ["make A", "make Y", "make Conn", "make Z", "make Session", "make X", "make Handler",
                     "make A", "make Y", "make Conn", "make X", "make Handler"]
        #expect(run.log.filter { $0.hasPrefix("make") } == ["make Db"] + round + round, "\(run.log)")
    }

    /// X asked for before Conn: the build finding the Session cached (at its claim, or A's get taking it) makes X first, an
    /// order no skip of the plan's gives: the run goes on in the build's walk's order from the claim (`Plan.goOnInWalk`;
    /// `containerInput` before: built), X made before Y and Conn, the Db's hit told after X's factory. `creating`: the weak W
    /// made each resolve by a creation plan, whose run goes on so too, W checked where that walk reaches it (`Plan.goingOn`;
    /// `notCached` before branch cincreate: built).
    @Test(arguments: [false, true], [false, true])
    func aLateClaimedContainerStepWithAGraphKeyTakenOutsideAfterAnotherStep(gets: Bool, creating: Bool) throws {
        let run = try lateClaimed(gets: gets, handler: ["X", "Conn"] + (creating ? ["W"] : []))
        #expect(run.counts == ["resolves": 5], "\(run.counts)")
        let w = creating ? ["W"] : []
        // (A's get builds the Session first in a child, `gets`: inside A's factory.)
        let session = ["Y", "Conn", "Z", "Session"]
        let first = (gets ? session + ["A"] : ["A"] + session) + ["X"] + w + ["Handler"]
        let again = ["A", "X", "Y", "Conn"] + w + ["Handler"]
        let drops = ["Handler"] + w + ["X", "A"], dropsAgain = ["Handler"] + w + ["Conn", "Y", "X", "A", "Session", "Z", "Conn", "Y"]
        let child = first.map { "make \($0)" } + drops.map { "drop \($0)" } + again.map { "make \($0)" } + dropsAgain.map { "drop \($0)" }
        #expect(run.log == ["make Db"] + child + child + ["drop Db"], "\(run.log)")
        // Traced: the Db's hit (under Conn) after X's factory, as the build's walk asks for it; W's factory where that walk reaches it.
        func call(_ key: String) -> [String] { ["factoryCall \(key)", "factoryReturn \(key)"] }
        let conn = call("Y") + ["cacheHit Db"] + call("Conn") + ["edge Conn", "edge Conn"]
        let made = conn + call("Z") + call("Session") + ["edge Session", "edge Session"]
        let a = gets ? ["factoryCall A"] + made + ["factoryReturn A", "edge A"] : call("A") + made
        let aAgain = gets ? ["factoryCall A", "cacheHit Session", "factoryReturn A", "edge A"] : call("A") + ["cacheHit Session"]
        let handler = w.flatMap(call) + call("Handler") + Array(repeating: "edge Handler", count: 4 + w.count) + ["resolveEnd Handler"]
        let events = ["resolveStart Handler"] + a + call("X") + handler + drops.map { "destroy \($0)" }
            + ["resolveStart Handler"] + aAgain + call("X") + conn + handler + dropsAgain.map { "destroy \($0)" }
        let tree = "Handler(A,Session(Conn(Y,Db),Z),X,Conn(Y,Db)\(creating ? ",W" : "")) true"
        #expect(run.seen == [tree, tree] + events + [tree, tree] + events, "\(run.seen)")
    }
}

extension ChildCreatingContainerInputTests {
    /// The weak W (over `w`) elsewhere among the Handler's: the run finding the Session cached goes on in the build's walk's
    /// order (`Plan.goingOn`), W checked where that walk reaches it: right at the claim (first asked for there, checked once
    /// the run goes on), between X and Conn, or over Conn (its own dependency in that walk, not the plan's). Made where the
    /// build makes it (`again`: the second resolve's in each child); `notCached` before branch cincreate: built.
    @Test(arguments: [false, true], [
        (handler: ["W", "X", "Conn"], w: [], again: ["A", "W", "X", "Y", "Conn", "Handler"]),
        (handler: ["X", "W", "Conn"], w: [], again: ["A", "X", "W", "Y", "Conn", "Handler"]),
        (handler: ["X", "W", "Conn"], w: ["Conn"], again: ["A", "X", "Y", "Conn", "W", "Handler"]),
        (handler: ["X", "W"], w: ["Conn"], again: ["A", "X", "Y", "Conn", "W", "Handler"]),
    ] as [(handler: [String], w: [String], again: [String])])
    func aCreationStepAfterALateClaimedContainerStepGoesOnInTheWalk(gets: Bool, shape: (handler: [String], w: [String], again: [String])) throws {
        let run = try lateClaimed(gets: gets, handler: shape.handler, w: shape.w)
        #expect(run.counts == ["resolves": 5], "\(run.counts)")
        let session = ["Y", "Conn", "Z", "Session"]
        let first = (gets ? session + ["A"] : ["A"] + session) + shape.handler.filter { $0 != "Conn" } + ["Handler"]
        // Dropped last made first: the Session's (and what it holds) with the child.
        let drops = first.filter { !session.contains($0) }.reversed() + shape.again.reversed() + session.reversed()
        let child = first.map { "make \($0)" } + drops.prefix(first.count - 4).map { "drop \($0)" }
            + shape.again.map { "make \($0)" } + drops.dropFirst(first.count - 4).map { "drop \($0)" }
        #expect(run.log == ["make Db"] + child + child + ["drop Db"], "\(run.log)")
        // Traced: the factories called in that order (A's before its get's, `gets`); the Session's hit (or the get's) once per child.
        let called = ["A"] + first.filter { $0 != "A" }
        let calls = run.seen.filter { $0.hasPrefix("factoryCall") }
        #expect(calls == (called + shape.again + called + shape.again).map { "factoryCall \($0)" }, "\(run.seen)")
        let events = run.seen.filter { $0.hasPrefix("factory") || $0.hasPrefix("cacheHit") }
        #expect(events.filter { $0 == "cacheHit Session" }.count == 2, "\(events)")
    }
}

extension ChildCreatingContainerInputTests {
    /// X's factory resolves the weak W (published meanwhile, under the run's claim): the run gone on in the build's walk's
    /// order from the Session's hit checks W where that walk reaches it, right after X (`Plan.goingOn`: the walk's check, not
    /// the plan's place for it past the Session's steps), and takes it there as the build does, making none.
    @Test(arguments: [false, true]) func aCreationStepPublishedMeanwhileIsTakenWhereTheWalkReachesIt(gets: Bool) throws {
        let run = try lateClaimed(gets: gets, handler: ["X", "W", "Conn"], nested: true)
        #expect(run.counts == ["resolves": 9], "\(run.counts)")  // (each X's resolve of W a plan's too)
        let session = ["make Y", "make Conn", "make Z", "make Session"]
        let child = (gets ? session + ["make A"] : ["make A"] + session)
            + ["make W", "make X", "make Handler", "drop Handler", "drop W", "drop X", "drop A"]
            + ["make A", "make W", "make X", "make Y", "make Conn", "make Handler"]
            + ["drop Handler", "drop Conn", "drop Y", "drop W", "drop X", "drop A", "drop Session", "drop Z", "drop Conn", "drop Y"]
        #expect(run.log == ["make Db"] + child + child + ["drop Db"], "\(run.log)")
        // Traced: W's hit right after X's factory, the Db's (under Conn) after that, in each resolve.
        let events = run.seen.filter { $0.hasPrefix("factory") || $0.hasPrefix("cacheHit") }
        let hits = events.indices.filter { events[$0] == "cacheHit W" }
        guard hits.count == 4 else { Issue.record("\(events)"); return }
        #expect(hits.allSatisfy { events[$0 - 1] == "factoryReturn X" }, "\(events)")
        let again = Array(events[hits[1]...].prefix(4))
        #expect(again == ["cacheHit W", "factoryCall Y", "factoryReturn Y", "cacheHit Db"], "\(events)")
    }
}

extension ChildCreatingContainerInputTests {
    /// A second CONTAINER-scoped step claimed late, Cache (over Q), before the Session: both found cached (the Session by
    /// A's get, `gets`, before Cache's claim), the build makes X before Y and Conn. The run goes on in the build's walk's
    /// order at the claim whose walk, every late step taken so far a leaf, is not the plan's: the Session's (Cache's, `gets`),
    /// as `goOnInWalk` did; `containerInput` before branch late2 (warm and creating), `lateHitsKeepOrder`'s orders of the
    /// claims taking the get's Session first with Cache's claim left (`Plan.goesOnEveryWay`: the runs' own order).
    @Test(arguments: [false, true], [false, true]) func aSecondLateClaimedContainerStepGoesOnInTheWalk(gets: Bool, creating: Bool) throws {
        let run = try lateClaimed(gets: gets, handler: ["X", "Conn"] + (creating ? ["W"] : []), cache: true)
        #expect(run.counts == ["resolves": 5], "\(run.counts)")
        let w: [String] = creating ? ["W"] : []
        let session: [String] = ["Y", "Conn", "Z", "Session"], cached: [String] = ["Q", "Cache"]
        let made: [String] = gets ? session + ["A"] + cached : ["A"] + cached + session
        let first: [String] = made + ["X"] + w + ["Handler"]
        let again: [String] = ["A", "X", "Y", "Conn"] + w + ["Handler"]
        // Closed: the child's cache last published first.
        let held: [String] = gets ? ["Cache", "Q", "Session", "Z", "Conn", "Y"] : ["Session", "Z", "Conn", "Y", "Cache", "Q"]
        let drops: [String] = ["Handler"] + w + ["X", "A"]
        let dropsAgain: [String] = Array(again.reversed()) + held
        let child: [String] = first.map { "make \($0)" } + drops.map { "drop \($0)" } + again.map { "make \($0)" } + dropsAgain.map { "drop \($0)" }
        #expect(run.log == ["make Db"] + child + child + ["drop Db"], "\(run.log)")
        // Traced: Cache's hit, then the Session's (its get's, inside A, `gets`); the Db's (under Conn) after X's factory.
        func call(_ key: String) -> [String] { ["factoryCall \(key)", "factoryReturn \(key)"] }
        let conn: [String] = call("Y") + ["cacheHit Db"] + call("Conn") + ["edge Conn", "edge Conn"]
        let built: [String] = conn + call("Z") + call("Session") + ["edge Session", "edge Session"]
        let cache: [String] = call("Q") + call("Cache") + ["edge Cache"]
        let a: [String] = gets ? ["factoryCall A"] + built + ["factoryReturn A", "edge A"] + cache : call("A") + cache + built
        let aAgain: [String] = gets ? ["factoryCall A", "cacheHit Session", "factoryReturn A", "edge A", "cacheHit Cache"]
            : call("A") + ["cacheHit Cache", "cacheHit Session"]
        let handler: [String] = w.flatMap(call) + call("Handler") + Array(repeating: "edge Handler", count: 5 + w.count) + ["resolveEnd Handler"]
        let events: [String] = ["resolveStart Handler"] + a + call("X") + handler + drops.map { "destroy \($0)" }
            + ["resolveStart Handler"] + aAgain + call("X") + conn + handler + dropsAgain.map { "destroy \($0)" }
        let tree = "Handler(A,Cache(Q),Session(Conn(Y,Db),Z),X,Conn(Y,Db)\(creating ? ",W" : "")) \(!gets)"
        #expect(run.seen == [tree, tree] + events + [tree, tree] + events, "\(run.seen)")
    }
}

extension ChildCreatingContainerInputTests {
    /// Beside Cache and the Session (both claimed late, found cached), a weak W made each resolve between them: W is made
    /// before the Session's claim, where the plan has it, and the run goes on in the build's walk's order from there
    /// (`Plan.goesOnEveryWay`; `containerInput` before branch late2: built).
    @Test(arguments: [false, true]) func aCreationStepBetweenTwoLateClaimedContainerStepsGoesOnInTheWalk(gets: Bool) throws {
        let run = try lateClaimed(gets: gets, handler: ["X", "Conn"], cache: true, before: ["W"])
        #expect(run.counts == ["resolves": 5], "\(run.counts)")
        let expectedLog: [Bool: [String]] = [
            false:
                ["make Db", "make A", "make Q", "make Cache", "make W", "make Y", "make Conn", "make Z",
                 "make Session", "make X", "make Handler", "drop Handler", "drop X", "drop W", "drop A", "make A",
                 "make W", "make X", "make Y", "make Conn", "make Handler", "drop Handler", "drop Conn", "drop Y",
                 "drop X", "drop W", "drop A", "drop Session", "drop Z", "drop Conn", "drop Y", "drop Cache",
                 "drop Q", "make A", "make Q", "make Cache", "make W", "make Y", "make Conn", "make Z",
                 "make Session", "make X", "make Handler", "drop Handler", "drop X", "drop W", "drop A", "make A",
                 "make W", "make X", "make Y", "make Conn", "make Handler", "drop Handler", "drop Conn", "drop Y",
                 "drop X", "drop W", "drop A", "drop Session", "drop Z", "drop Conn", "drop Y", "drop Cache",
                 "drop Q", "drop Db"],
            true:
                ["make Db", "make Y", "make Conn", "make Z", "make Session", "make A", "make Q", "make Cache",
                 "make W", "make X", "make Handler", "drop Handler", "drop X", "drop W", "drop A", "make A", "make W",
                 "make X", "make Y", "make Conn", "make Handler", "drop Handler", "drop Conn", "drop Y", "drop X",
                 "drop W", "drop A", "drop Cache", "drop Q", "drop Session", "drop Z", "drop Conn", "drop Y",
                 "make Y", "make Conn", "make Z", "make Session", "make A", "make Q", "make Cache", "make W",
                 "make X", "make Handler", "drop Handler", "drop X", "drop W", "drop A", "make A", "make W", "make X",
                 "make Y", "make Conn", "make Handler", "drop Handler", "drop Conn", "drop Y", "drop X", "drop W",
                 "drop A", "drop Cache", "drop Q", "drop Session", "drop Z", "drop Conn", "drop Y", "drop Db"],
        ]
        expectLiteral(run.log, try #require(expectedLog[gets]))
        let expectedSeen: [Bool: [String]] = [
            false:
                ["Handler(A,Cache(Q),W,Session(Conn(Y,Db),Z),X,Conn(Y,Db)) true",
                 "Handler(A,Cache(Q),W,Session(Conn(Y,Db),Z),X,Conn(Y,Db)) true", "resolveStart Handler",
                 "factoryCall A", "factoryReturn A", "factoryCall Q", "factoryReturn Q", "factoryCall Cache",
                 "factoryReturn Cache", "edge Cache", "factoryCall W", "factoryReturn W", "factoryCall Y",
                 "factoryReturn Y", "cacheHit Db", "factoryCall Conn", "factoryReturn Conn", "edge Conn", "edge Conn",
                 "factoryCall Z", "factoryReturn Z", "factoryCall Session", "factoryReturn Session", "edge Session",
                 "edge Session", "factoryCall X", "factoryReturn X", "factoryCall Handler", "factoryReturn Handler",
                 "edge Handler", "edge Handler", "edge Handler", "edge Handler", "edge Handler", "edge Handler",
                 "resolveEnd Handler", "destroy Handler", "destroy X", "destroy W", "destroy A",
                 "resolveStart Handler", "factoryCall A", "factoryReturn A", "cacheHit Cache", "factoryCall W",
                 "factoryReturn W", "cacheHit Session", "factoryCall X", "factoryReturn X", "factoryCall Y",
                 "factoryReturn Y", "cacheHit Db", "factoryCall Conn", "factoryReturn Conn", "edge Conn", "edge Conn",
                 "factoryCall Handler", "factoryReturn Handler", "edge Handler", "edge Handler", "edge Handler",
                 "edge Handler", "edge Handler", "edge Handler", "resolveEnd Handler", "destroy Handler",
                 "destroy Conn", "destroy Y", "destroy X", "destroy W", "destroy A", "destroy Session", "destroy Z",
                 "destroy Conn", "destroy Y", "destroy Cache", "destroy Q",
                 "Handler(A,Cache(Q),W,Session(Conn(Y,Db),Z),X,Conn(Y,Db)) true",
                 "Handler(A,Cache(Q),W,Session(Conn(Y,Db),Z),X,Conn(Y,Db)) true", "resolveStart Handler",
                 "factoryCall A", "factoryReturn A", "factoryCall Q", "factoryReturn Q", "factoryCall Cache",
                 "factoryReturn Cache", "edge Cache", "factoryCall W", "factoryReturn W", "factoryCall Y",
                 "factoryReturn Y", "cacheHit Db", "factoryCall Conn", "factoryReturn Conn", "edge Conn", "edge Conn",
                 "factoryCall Z", "factoryReturn Z", "factoryCall Session", "factoryReturn Session", "edge Session",
                 "edge Session", "factoryCall X", "factoryReturn X", "factoryCall Handler", "factoryReturn Handler",
                 "edge Handler", "edge Handler", "edge Handler", "edge Handler", "edge Handler", "edge Handler",
                 "resolveEnd Handler", "destroy Handler", "destroy X", "destroy W", "destroy A",
                 "resolveStart Handler", "factoryCall A", "factoryReturn A", "cacheHit Cache", "factoryCall W",
                 "factoryReturn W", "cacheHit Session", "factoryCall X", "factoryReturn X", "factoryCall Y",
                 "factoryReturn Y", "cacheHit Db", "factoryCall Conn", "factoryReturn Conn", "edge Conn", "edge Conn",
                 "factoryCall Handler", "factoryReturn Handler", "edge Handler", "edge Handler", "edge Handler",
                 "edge Handler", "edge Handler", "edge Handler", "resolveEnd Handler", "destroy Handler",
                 "destroy Conn", "destroy Y", "destroy X", "destroy W", "destroy A", "destroy Session", "destroy Z",
                 "destroy Conn", "destroy Y", "destroy Cache", "destroy Q"],
            true:
                ["Handler(A,Cache(Q),W,Session(Conn(Y,Db),Z),X,Conn(Y,Db)) false",
                 "Handler(A,Cache(Q),W,Session(Conn(Y,Db),Z),X,Conn(Y,Db)) false", "resolveStart Handler",
                 "factoryCall A", "factoryCall Y", "factoryReturn Y", "cacheHit Db", "factoryCall Conn",
                 "factoryReturn Conn", "edge Conn", "edge Conn", "factoryCall Z", "factoryReturn Z",
                 "factoryCall Session", "factoryReturn Session", "edge Session", "edge Session", "factoryReturn A",
                 "edge A", "factoryCall Q", "factoryReturn Q", "factoryCall Cache", "factoryReturn Cache",
                 "edge Cache", "factoryCall W", "factoryReturn W", "factoryCall X", "factoryReturn X",
                 "factoryCall Handler", "factoryReturn Handler", "edge Handler", "edge Handler", "edge Handler",
                 "edge Handler", "edge Handler", "edge Handler", "resolveEnd Handler", "destroy Handler", "destroy X",
                 "destroy W", "destroy A", "resolveStart Handler", "factoryCall A", "cacheHit Session",
                 "factoryReturn A", "edge A", "cacheHit Cache", "factoryCall W", "factoryReturn W", "factoryCall X",
                 "factoryReturn X", "factoryCall Y", "factoryReturn Y", "cacheHit Db", "factoryCall Conn",
                 "factoryReturn Conn", "edge Conn", "edge Conn", "factoryCall Handler", "factoryReturn Handler",
                 "edge Handler", "edge Handler", "edge Handler", "edge Handler", "edge Handler", "edge Handler",
                 "resolveEnd Handler", "destroy Handler", "destroy Conn", "destroy Y", "destroy X", "destroy W",
                 "destroy A", "destroy Cache", "destroy Q", "destroy Session", "destroy Z", "destroy Conn",
                 "destroy Y", "Handler(A,Cache(Q),W,Session(Conn(Y,Db),Z),X,Conn(Y,Db)) false",
                 "Handler(A,Cache(Q),W,Session(Conn(Y,Db),Z),X,Conn(Y,Db)) false", "resolveStart Handler",
                 "factoryCall A", "factoryCall Y", "factoryReturn Y", "cacheHit Db", "factoryCall Conn",
                 "factoryReturn Conn", "edge Conn", "edge Conn", "factoryCall Z", "factoryReturn Z",
                 "factoryCall Session", "factoryReturn Session", "edge Session", "edge Session", "factoryReturn A",
                 "edge A", "factoryCall Q", "factoryReturn Q", "factoryCall Cache", "factoryReturn Cache",
                 "edge Cache", "factoryCall W", "factoryReturn W", "factoryCall X", "factoryReturn X",
                 "factoryCall Handler", "factoryReturn Handler", "edge Handler", "edge Handler", "edge Handler",
                 "edge Handler", "edge Handler", "edge Handler", "resolveEnd Handler", "destroy Handler", "destroy X",
                 "destroy W", "destroy A", "resolveStart Handler", "factoryCall A", "cacheHit Session",
                 "factoryReturn A", "edge A", "cacheHit Cache", "factoryCall W", "factoryReturn W", "factoryCall X",
                 "factoryReturn X", "factoryCall Y", "factoryReturn Y", "cacheHit Db", "factoryCall Conn",
                 "factoryReturn Conn", "edge Conn", "edge Conn", "factoryCall Handler", "factoryReturn Handler",
                 "edge Handler", "edge Handler", "edge Handler", "edge Handler", "edge Handler", "edge Handler",
                 "resolveEnd Handler", "destroy Handler", "destroy Conn", "destroy Y", "destroy X", "destroy W",
                 "destroy A", "destroy Cache", "destroy Q", "destroy Session", "destroy Z", "destroy Conn",
                 "destroy Y"],
        ]
        expectLiteral(run.seen, try #require(expectedSeen[gets]))
    }

    /// Still built (`containerInput`): a third container step claimed late, Cache2 (over Q2), whose claim comes past where
    /// the run goes on in the build's walk's order (after the Handler's Conn: `Plan.goesOnEveryWay` declines a late step
    /// made or found cached past that point, its claim's place in that walk's order not its step's); or before the
    /// Session's (`before`), where a run whose get took the Session goes on at Cache's hit with Cache2's claim left. The
    /// shapes left for a walk going on from one late claim to the next (each later one found cached going on from there).
    @Test(arguments: [false, true], [false, true]) func aThirdLateClaimedContainerStepIsStillBuilt(gets: Bool, before: Bool) throws {
        let run = before ? try lateClaimed(gets: gets, handler: ["X", "Conn"], cache: true, before: ["Cache2"])
            : try lateClaimed(gets: gets, handler: ["X", "Conn", "Cache2"], cache: true)
        #expect(run.counts == ["resolves": 5, "containerInput": 4], "\(run.counts)")
        let expectedLog: [String: [String]] = [
            "false false":
                ["make Db", "make A", "make Q", "make Cache", "make Y", "make Conn", "make Z", "make Session",
                 "make X", "make Q2", "make Cache2", "make Handler", "drop Handler", "drop X", "drop A", "make A",
                 "make X", "make Y", "make Conn", "make Handler", "drop Handler", "drop Conn", "drop Y", "drop X",
                 "drop A", "drop Cache2", "drop Q2", "drop Session", "drop Z", "drop Conn", "drop Y", "drop Cache",
                 "drop Q", "make A", "make Q", "make Cache", "make Y", "make Conn", "make Z", "make Session",
                 "make X", "make Q2", "make Cache2", "make Handler", "drop Handler", "drop X", "drop A", "make A",
                 "make X", "make Y", "make Conn", "make Handler", "drop Handler", "drop Conn", "drop Y", "drop X",
                 "drop A", "drop Cache2", "drop Q2", "drop Session", "drop Z", "drop Conn", "drop Y", "drop Cache",
                 "drop Q", "drop Db"],
            "true false":
                ["make Db", "make Y", "make Conn", "make Z", "make Session", "make A", "make Q", "make Cache",
                 "make X", "make Q2", "make Cache2", "make Handler", "drop Handler", "drop X", "drop A", "make A",
                 "make X", "make Y", "make Conn", "make Handler", "drop Handler", "drop Conn", "drop Y", "drop X",
                 "drop A", "drop Cache2", "drop Q2", "drop Cache", "drop Q", "drop Session", "drop Z", "drop Conn",
                 "drop Y", "make Y", "make Conn", "make Z", "make Session", "make A", "make Q", "make Cache",
                 "make X", "make Q2", "make Cache2", "make Handler", "drop Handler", "drop X", "drop A", "make A",
                 "make X", "make Y", "make Conn", "make Handler", "drop Handler", "drop Conn", "drop Y", "drop X",
                 "drop A", "drop Cache2", "drop Q2", "drop Cache", "drop Q", "drop Session", "drop Z", "drop Conn",
                 "drop Y", "drop Db"],
            "false true":
                ["make Db", "make A", "make Q", "make Cache", "make Q2", "make Cache2", "make Y", "make Conn",
                 "make Z", "make Session", "make X", "make Handler", "drop Handler", "drop X", "drop A", "make A",
                 "make X", "make Y", "make Conn", "make Handler", "drop Handler", "drop Conn", "drop Y", "drop X",
                 "drop A", "drop Session", "drop Z", "drop Conn", "drop Y", "drop Cache2", "drop Q2", "drop Cache",
                 "drop Q", "make A", "make Q", "make Cache", "make Q2", "make Cache2", "make Y", "make Conn",
                 "make Z", "make Session", "make X", "make Handler", "drop Handler", "drop X", "drop A", "make A",
                 "make X", "make Y", "make Conn", "make Handler", "drop Handler", "drop Conn", "drop Y", "drop X",
                 "drop A", "drop Session", "drop Z", "drop Conn", "drop Y", "drop Cache2", "drop Q2", "drop Cache",
                 "drop Q", "drop Db"],
            "true true":
                ["make Db", "make Y", "make Conn", "make Z", "make Session", "make A", "make Q", "make Cache",
                 "make Q2", "make Cache2", "make X", "make Handler", "drop Handler", "drop X", "drop A", "make A",
                 "make X", "make Y", "make Conn", "make Handler", "drop Handler", "drop Conn", "drop Y", "drop X",
                 "drop A", "drop Cache2", "drop Q2", "drop Cache", "drop Q", "drop Session", "drop Z", "drop Conn",
                 "drop Y", "make Y", "make Conn", "make Z", "make Session", "make A", "make Q", "make Cache",
                 "make Q2", "make Cache2", "make X", "make Handler", "drop Handler", "drop X", "drop A", "make A",
                 "make X", "make Y", "make Conn", "make Handler", "drop Handler", "drop Conn", "drop Y", "drop X",
                 "drop A", "drop Cache2", "drop Q2", "drop Cache", "drop Q", "drop Session", "drop Z", "drop Conn",
                 "drop Y", "drop Db"],
        ]
        expectLiteral(run.log, try #require(expectedLog["\(gets) \(before)"]))
    }
}

extension ChildCreatingContainerInputTests {
    /// A's get takes the Session cached, nothing outside taking Conn: the Db's hit (under Conn, only the Session asked for it)
    /// not told, as the build never asks for it (told in step order before branch cincreate, the get's path not skipping it).
    @Test(arguments: [false, true]) func aLateClaimedContainerStepAGetTookTellsNoHitUnderIt(creating: Bool) throws {
        let run = try lateClaimed(gets: true, handler: ["X"] + (creating ? ["W"] : []))
        #expect(run.counts == ["resolves": 5], "\(run.counts)")
        let events = run.seen.filter { $0.hasPrefix("factory") || $0.hasPrefix("cacheHit") }
        let w = creating ? ["factoryCall W", "factoryReturn W"] : []
        let again = ["factoryCall A", "cacheHit Session", "factoryReturn A", "factoryCall X", "factoryReturn X"] + w
            + ["factoryCall Handler", "factoryReturn Handler"]
        #expect(events.filter { $0 == "cacheHit Db" }.count == 2 && Array(events.suffix(again.count)) == again, "\(events)")
    }
}
