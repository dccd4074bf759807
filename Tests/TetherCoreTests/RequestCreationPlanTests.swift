// Creation steps in a plan that reads the request (issue 28, `notCached` before): a request child's
// first resolve over a CONTAINER-scoped step or a declared value and a singleton or weak key no cache
// holds yet runs the creation plan. The graph claims the creation and container cells before any factory
// in the build's order (`Graph.claimWithContainerSteps`), the run reads the request, and the graph
// publishes the singletons and the container steps (or lets go of all of them on a failure). Each test
// asserts the factory calls, drops and their order and the trees (the build's, which ran beside it as an
// oracle until branch noplansoff), and the plan's path by `PlanStats` (no decline counted).
import Foundation
import Synchronization
import Testing
@testable import TetherCore

@Suite struct RequestCreationPlanTests {
    private static func describe(_ obj: Obj) -> String { obj.tree() }

    /// `requests` children, each with its Request value, resolving `root` `times` times, then closed; then
    /// the root closed: the log (the root's singletons dropped last), the trees (or errors), the counts.
    private func serve(root: String = "Handler", requests: Int = 3, times: Int = 2,
                       _ setUp: (Fixture) throws -> Void) throws -> (log: [String], trees: [String], counts: [String: Int], fx: Fixture) {
        let fx = try Fixture()
        _ = try fx.container.declareValue(Key("Request"))
        try setUp(fx)
        var trees: [String] = []
        let counts = try counted {
            for n in 0..<requests {
                let child = try fx.child()
                let request = Ref(retaining: Obj(label: "Request\(n)", words: [])).opaque
                _ = try child.provideValue(Key("Request"), request, context: nil, destructor: { p, _ in Ref<Obj>(opaque: p).release() })
                for _ in 0..<times {
                    do {
                        let instance = try fx.resolve(root, in: child)
                        trees.append(withExtendedLifetime(instance) { Self.describe(Obj.of(instance)) })
                    } catch let error as TetherError {
                        trees.append("\(error.code): \(error.message)")
                    }
                }
                _ = try child.close()
                fx.tracker.note("closed request \(n)")
            }
        }
        #expect(fx.tracker.badDrops == 0)
        return (fx.tracker.log, trees, counts, fx)
    }

    /// RP's shape: Handler(Session(Request, Db)), Session CONTAINER-scoped, Db a root singleton not made
    /// yet. The first request's first resolve runs the creation plan (the Session's cell claimed alone, as
    /// the build's first claim, then Db's), later ones the warm plan; Db made once, a Session per child.
    @Test func theFirstRequestOverAnUncachedSingletonRunsTheCreationPlan() throws {
        let setUp = { (fx: Fixture) throws in
            try fx.register("Db", scope: .singleton)
            try fx.register("Session", [dep("Request"), dep("Db")], scope: .container)
            try fx.register("Handler", [dep("Session")])
        }
        let planned = try serve(setUp)
        // Db made by the first request only; each child's Session made by its first resolve, dropped at its close.
        #expect(planned.log == ["make Db"] + (0..<3).flatMap { n in
            ["make Session", "make Handler", "drop Handler", "make Handler", "drop Handler", "drop Session", "closed request \(n)"]
        })
        #expect(planned.trees == (0..<3).flatMap { n in Array(repeating: "Handler(Session(Request\(n),Db))", count: 2) })
        #expect(Array(planned.log.prefix(6)) == ["make Db", "make Session", "make Handler", "drop Handler", "make Handler", "drop Handler"])
        #expect(planned.fx.tracker.made("Db") == 1 && planned.fx.tracker.made("Session") == 3 && planned.fx.tracker.made("Handler") == 6)
        #expect(planned.fx.tracker.dropped("Session") == 3 && planned.fx.tracker.dropped("Db") == 0, "each child dropped its Session; Db is the root's")
        #expect(planned.counts == ["resolves": 6], "no resolve built")
        let handler = try #require(planned.fx.container.registration(for: Key("Handler")))
        #expect(handler.creationPlanCount == 1 && handler.hasCurrentPlan)
        _ = try planned.fx.container.close()
        #expect(planned.fx.tracker.dropped("Db") == 1 && planned.fx.tracker.liveCount == 0)
    }

    /// Singletons asked for before the container step and under it (the build's first claim a singleton's:
    /// every cell the root's edges reach claimed in one sorted pass, the Session's among them), a weak key
    /// and a value: the same factory order as the build, each shared key made once.
    @Test func singletonsBeforeAndUnderTheContainerStepAndAWeakKey() throws {
        let setUp = { (fx: Fixture) throws in
            try fx.register("Db", scope: .singleton)
            try fx.register("Clock", scope: .singleton)
            try fx.register("Pool", [dep("Db")], scope: .weak)
            try fx.register("Conn", [dep("Pool"), dep("Request")])
            try fx.register("Session", [dep("Request"), dep("Conn"), dep("Db")], scope: .container)
            try fx.register("Handler", [dep("Clock"), dep("Session"), dep("Request")])
        }
        let planned = try serve(setUp)
        // The singletons made once; the weak Pool, held only by the Conn under the Session, dies with each child.
        #expect(planned.log == ["make Clock", "make Db"] + (0..<3).flatMap { n in
            ["make Pool", "make Conn", "make Session", "make Handler", "drop Handler", "make Handler", "drop Handler",
             "drop Session", "drop Conn", "drop Pool", "closed request \(n)"]
        })
        #expect(planned.trees == (0..<3).flatMap { n in
            Array(repeating: "Handler(Clock,Session(Request\(n),Conn(Pool(Db),Request\(n)),Db),Request\(n))", count: 2)
        })
        #expect(planned.trees[0] == "Handler(Clock,Session(Request0,Conn(Pool(Db),Request0),Db),Request0)")
        #expect(planned.fx.tracker.made("Db") == 1 && planned.fx.tracker.made("Clock") == 1 && planned.fx.tracker.made("Session") == 3)
        #expect(planned.counts == ["resolves": 6], "no resolve built")
    }

    /// A singleton the container step asks for first and a step outside takes too (Handler(Session(Db), Db)):
    /// a creation step is not one a run finding the Session cached skips (it declines then), so the outside
    /// step may take it (`containerInput` before).
    @Test func aSingletonUnderTheContainerStepTakenOutsideToo() throws {
        let setUp = { (fx: Fixture) throws in
            try fx.register("Log")
            try fx.register("Db", [dep("Log")], scope: .singleton)
            try fx.register("Session", [dep("Db"), dep("Request")], scope: .container)
            try fx.register("Handler", [dep("Session"), dep("Db")])
        }
        let planned = try serve(setUp)
        #expect(planned.log == ["make Log", "make Db"] + (0..<3).flatMap { n in
            ["make Session", "make Handler", "drop Handler", "make Handler", "drop Handler", "drop Session", "closed request \(n)"]
        })
        #expect(planned.trees == (0..<3).flatMap { n in Array(repeating: "Handler(Session(Db(Log),Request\(n)),Db(Log))", count: 2) })
        #expect(planned.trees[0] == "Handler(Session(Db(Log),Request0),Db(Log))")
        #expect(planned.fx.tracker.made("Db") == 1 && planned.fx.tracker.made("Log") == 1 && planned.fx.tracker.made("Session") == 3)
        #expect(planned.counts == ["resolves": 6], "no resolve built")
    }

    /// A graph-scoped Conn the Session asks for first that the Handler takes too (`containerInput`: the warm
    /// plan has a `cachedVariant`), over singletons not cached: the creation plan makes every step and
    /// needs the Session uncached (`needsContainersUncached`), the first resolve of each child; the later
    /// ones, the Session cached, run the warm plan's `cachedVariant`.
    @Test func aGraphInstanceSharedOutsideTheContainerStepOverUncachedSingletons() throws {
        let setUp = { (fx: Fixture) throws in
            try fx.register("Db", scope: .singleton)
            try fx.register("Cache", [dep("Db")], scope: .singleton)
            try fx.register("Conn", [dep("Cache")])
            try fx.register("Session", [dep("Conn"), dep("Cache"), dep("Request")], scope: .container)
            try fx.register("Handler", [dep("Db"), dep("Session"), dep("Conn")])
        }
        let planned = try serve(setUp)
        // The first resolve of a child: one Conn, the Session's, taken by the Handler too (only the Handler dropped);
        // the second, the Session cached: a Conn of its own graph, dropped with it.
        #expect(planned.log == ["make Db", "make Cache"] + (0..<3).flatMap { n in
            ["make Conn", "make Session", "make Handler", "drop Handler", "make Conn", "make Handler", "drop Handler", "drop Conn",
             "drop Session", "drop Conn", "closed request \(n)"]
        })
        #expect(planned.trees == (0..<3).flatMap { n in
            Array(repeating: "Handler(Db,Session(Conn(Cache(Db)),Cache(Db),Request\(n)),Conn(Cache(Db)))", count: 2)
        })
        #expect(Array(planned.log.prefix(5)) == ["make Db", "make Cache", "make Conn", "make Session", "make Handler"])
        #expect(planned.fx.tracker.made("Db") == 1 && planned.fx.tracker.made("Cache") == 1 && planned.fx.tracker.made("Conn") == 6)
        #expect(planned.counts == ["resolves": 6], "no resolve built")
        let handler = try #require(planned.fx.container.registration(for: Key("Handler")))
        #expect(handler.creationPlanCount == 1)
    }

    /// A singleton's factory failing under a container step: the build's status and message, nothing cached
    /// (no Session in the child, no Db), every instance made dropped once; the next resolve makes both.
    @Test func aFailingSingletonUnderAContainerStepCachesNothingAndTheNextResolveRetries() throws {
        let fails = Box(1)
        let setUp = { (fx: Fixture) throws in
            try fx.register("Log")
            try fx.register("Db", [dep("Log")], scope: .singleton) { _ in
                if fails.withLock({ n in defer { n -= 1 }; return n > 0 }) { throw TetherError(.factoryFailed, "no database") }
            }
            try fx.register("Session", [dep("Request"), dep("Db")], scope: .container)
            try fx.register("Handler", [dep("Session")])
        }
        let planned = try serve(requests: 2, setUp)
        // Db's factory fails after Log's: Log let go of; the retry makes both, then the Session and the Handler.
        #expect(planned.log == ["make Log", "drop Log", "make Log", "make Db", "make Session", "make Handler", "drop Handler", "drop Session",
                                "closed request 0", "make Session", "make Handler", "drop Handler", "make Handler", "drop Handler",
                                "drop Session", "closed request 1"])
        #expect(planned.trees[0] == "factoryFailed: factory for \"Db\" returned NULL: no database (while resolving \"Handler\" -> \"Session\" -> \"Db\")")
        #expect(planned.trees[0].hasPrefix("factoryFailed: ") && planned.trees[0].contains("Db"), "\(planned.trees[0])")
        #expect(Array(planned.trees[1...]) == ["Handler(Session(Request0,Db(Log)))", "Handler(Session(Request1,Db(Log)))", "Handler(Session(Request1,Db(Log)))"])
        #expect(planned.fx.tracker.calls("Db") == 2 && planned.fx.tracker.made("Db") == 1 && planned.fx.tracker.made("Session") == 2)
        #expect(planned.fx.tracker.made("Log") == 2 && planned.fx.tracker.dropped("Log") == 1, "the failed resolve's Log dropped once")
        #expect(planned.counts == ["resolves": 4], "no resolve built, the failed one included")
    }

    /// Two threads making the first request at once, each in its own child: one Db, a Session per child,
    /// every resolve a plan's (the one that waited for Db's cell takes the published one).
    @Test func twoThreadsMakeTheFirstRequestAtOnce() throws {
        for _ in 0..<20 {
            let fx = try Fixture()
            _ = try fx.container.declareValue(Key("Request"))
            try fx.register("Db", scope: .singleton) { _ in usleep(2000) }
            try fx.register("Session", [dep("Request"), dep("Db")], scope: .container)
            try fx.register("Handler", [dep("Session")])
            let dbs = Box<[UInt]>([])
            let builds = Box(0)
            let barrier = Gate()
            onThreads(2) { n in
                let before = Container.buildsOnThisThread
                let child = try! fx.child()
                let request = Ref(retaining: Obj(label: "Request\(n)", words: [])).opaque
                _ = try! child.provideValue(Key("Request"), request, context: nil, destructor: { p, _ in Ref<Obj>(opaque: p).release() })
                barrier.arrive(andWaitFor: 2)
                let handler = try! fx.resolve("Handler", in: child)
                let session = Obj.of(handler).dep(0)
                dbs.withLock { $0.append(UInt(bitPattern: session.depPointer(1))) }
                _ = consume handler
                _ = try! child.close()
                builds.withLock { $0 += Container.buildsOnThisThread - before }
            }
            #expect(fx.tracker.made("Db") == 1 && fx.tracker.made("Session") == 2 && fx.tracker.dropped("Session") == 2)
            #expect(dbs.withLock { Set($0).count == 1 && $0.count == 2 })
            #expect(builds.withLock { $0 } == 0, "both resolves ran plans")
            #expect(fx.tracker.badDrops == 0)
        }
    }
}
