// A request child's CONTAINER-scoped instance over the root's cached singleton
// (Session(Db)) holds it by a split edge (`SplitEdge`, as graph blocks do): a
// request writes none of the singleton's own counts, on any thread. The singleton
// still lives as long as anything points at it: a Session a caller keeps past its
// child and past the root keeps Db; Db's destructor runs once, after its
// dependents'; a graph failing after the Session was made lets go of both kinds of edge.
import Testing
import TetherCore

@Suite struct ContainerEdgeTests {
    /// Db a root singleton, Session(Db) per container, Handler(Session, Db) per resolve.
    private func requestGraph(_ fx: Fixture, failing: Box<Bool>? = nil) throws {
        try fx.register("Db", scope: .singleton)
        try fx.register("Session", [dep("Db")], scope: .container)
        try fx.register("Handler", [dep("Session"), dep("Db")])
        try fx.register("Audit", body: { _ in if failing?.value == true { throw CallbackFailure(reason: "audit down") } })
        try fx.register("Audited", [dep("Session"), dep("Audit")])
    }

    /// One request: a child, `key` resolved from it (the handle dropped), the child closed.
    private func request(_ fx: Fixture, _ key: String = "Handler") throws {
        let child = try fx.child()
        _ = try fx.resolve(key, in: child)
        _ = try child.close()
    }

    @Test func aRequestWritesNoCountOfTheRootsSingleton() throws {
        let fx = try Fixture()
        try requestGraph(fx)
        let db = try fx.resolve("Db")
        try request(fx)  // the first records the plan (a graph built step by step)
        let before = _getRetainCount(db)
        let dbPointer = db.pointer
        for _ in 0..<3 {
            let child = try fx.child()
            var handler: Instance? = try fx.resolve("Handler", in: child)
            let session = Obj.of(handler!).dep(0)
            #expect(session.depPointer(0) == db.pointer && Obj.of(handler!).depPointer(1) == db.pointer)
            #expect(_getRetainCount(db) == before, "the Session's and the Handler's edges to Db are split: Db's own count unchanged")
            handler = nil
            _ = try child.close()
        }
        #expect(fx.tracker.dropped("Session") == 4 && fx.tracker.dropped("Handler") == 4)
        #expect(fx.tracker.dropped("Db") == 0 && fx.tracker.badDrops == 0)
        _ = consume db
        _ = try fx.container.close()
        #expect(fx.tracker.events("drop ").last == "drop Db" && !fx.tracker.isLive(dbPointer) && fx.tracker.dropped("Db") == 1)
    }

    @Test func aSessionKeptPastItsChildAndTheRootKeepsTheSingleton() throws {
        let fx = try Fixture()
        try requestGraph(fx)
        try request(fx)
        let child = try fx.child()
        var handler: Instance? = try fx.resolve("Handler", in: child)
        var session: Instance? = try fx.resolve("Session", in: child)
        #expect(Obj.of(handler!).depPointer(0) == session!.pointer, "one Session per child")
        _ = try child.close()
        #expect(fx.tracker.dropped("Session") == 1, "the first request's only: the kept one outlives its child")
        _ = try fx.container.close()
        #expect(fx.tracker.dropped("Db") == 0, "the root let go of Db; the kept Session and Handler still point at it")
        handler = nil
        #expect(fx.tracker.dropped("Db") == 0, "the Session still points at it")
        let live = fx.tracker.isLive(Obj.of(session!).depPointer(0))
        #expect(live, "the Session's Db is alive")
        session = nil
        #expect(Array(fx.tracker.events("drop ").suffix(3)) == ["drop Handler", "drop Session", "drop Db"], "dependents first")
        #expect(fx.tracker.dropped("Db") == 1 && fx.tracker.liveCount == 0 && fx.tracker.badDrops == 0)
    }

    @Test func aResetWhileARequestHoldsTheSingletonKeepsItForThatRequest() throws {
        let fx = try Fixture()
        try requestGraph(fx)
        try request(fx)
        let child = try fx.child()
        var handler: Instance? = try fx.resolve("Handler", in: child)
        let firstDb = Obj.of(handler!).dep(0).depPointer(0)
        fx.container.reset(.singleton)
        #expect(fx.tracker.dropped("Db") == 0, "the child's Session holds it")
        try request(fx)  // a new Db for the next request
        #expect(fx.tracker.made("Db") == 2 && fx.tracker.dropped("Db") == 0)
        _ = try child.close()
        #expect(fx.tracker.isLive(firstDb), "the caller's Handler keeps its Session, which keeps its Db")
        handler = nil
        #expect(fx.tracker.dropped("Db") == 1 && !fx.tracker.isLive(firstDb), "gone with the last instance over it")
        #expect(Array(fx.tracker.events("drop ").suffix(3)) == ["drop Handler", "drop Session", "drop Db"])
        _ = try fx.container.close()
        #expect(fx.tracker.dropped("Db") == 2 && fx.tracker.liveCount == 0 && fx.tracker.badDrops == 0)
    }

    @Test func aGraphFailingAfterItsSessionWasMadeLetsGoOfBoth() throws {
        let fx = try Fixture()
        let failing = Box(false)
        try requestGraph(fx, failing: failing)
        try request(fx, "Audited")  // records the plan
        failing.value = true
        for _ in 0..<3 {
            let child = try fx.child()
            expectError(.factoryFailed, "audit down") { try fx.resolve("Audited", in: child) }
            #expect(fx.tracker.dropped("Session") == fx.tracker.made("Session"), "the failed graph's Session is not cached")
            _ = try child.close()
        }
        #expect(fx.tracker.made("Session") == 4 && fx.tracker.dropped("Db") == 0)
        failing.value = false
        try request(fx, "Audited")
        _ = try fx.container.close()
        #expect(fx.tracker.dropped("Db") == 1 && fx.tracker.liveCount == 0 && fx.tracker.badDrops == 0)
    }

    @Test func requestsOnManyThreadsAroundResets() throws {
        // Sessions over Db by split edges on several threads while the root's cache lets go
        // of Db again and again: every Db destroyed once, after the last Session over it.
        let fx = try Fixture()
        try requestGraph(fx)
        try request(fx)
        nonisolated(unsafe) let shared = fx
        onThreads(3) { thread in
            for i in 0..<500 {
                if thread == 0 && i % 50 == 25 { shared.container.reset(.singleton) }
                guard let child = try? shared.child() else { continue }
                if let handler = try? shared.resolve("Handler", in: child) {
                    let session = Obj.of(handler).dep(0)
                    let live = shared.tracker.isLive(session.depPointer(0))
                    #expect(live, "the Session's Db is alive")
                }
                _ = try? child.close()
            }
        }
        _ = try fx.container.close()
        #expect(fx.tracker.dropped("Db") == fx.tracker.made("Db") && fx.tracker.made("Db") > 1)
        #expect(fx.tracker.liveCount == 0 && fx.tracker.badDrops == 0)
    }

    @Test func aKeptSessionLetsGoOfItsEdgesLastFirstEachWithWhatOnlyItHeld() throws {
        // Session(A(A1), B(B1)), each container-scoped, kept past its child's close: the Session
        // is then the last holder of the four. Letting go of it destroys B and what only B held
        // before A (last edge first, depth first), released one edge at a time, not queued.
        let fx = try Fixture()
        try fx.register("A1", scope: .container)
        try fx.register("B1", scope: .container)
        try fx.register("A", [dep("A1")], scope: .container)
        try fx.register("B", [dep("B1")], scope: .container)
        try fx.register("Session", [dep("A"), dep("B")], scope: .container)
        for round in 0..<2 {  // the first builds the graph step by step and records the plan; the second runs it
            let child = try fx.child()
            var session: Instance? = try fx.resolve("Session", in: child)
            _ = try child.close()
            #expect(fx.tracker.events("drop ").count == 5 * round, "the kept Session holds all four")
            session = nil
            #expect(Array(fx.tracker.events("drop ").suffix(5)) == ["drop Session", "drop B", "drop B1", "drop A", "drop A1"])
        }
        #expect(fx.tracker.liveCount == 0 && fx.tracker.badDrops == 0)
    }

    @Test(arguments: [3, 6, 20])
    func aChildCachesEachContainerScopedInstanceOnceAndLetsGoOfThemLastFirst(count: Int) throws {
        // A few entries inline, more in the overflow, past 16 indexed; past 8 the close sorts an array.
        let fx = try Fixture()
        let keys = (0..<count).map { "C\($0)" }
        for key in keys { try fx.register(key, scope: .container) }
        let child = try fx.child()
        let first = try keys.map { try fx.resolve($0, in: child).pointer }
        let again = try keys.reversed().map { try fx.resolve($0, in: child).pointer }
        #expect(first == again.reversed(), "one instance of each per child")
        #expect(keys.allSatisfy { fx.tracker.made($0) == 1 } && fx.tracker.events("drop ").isEmpty)
        _ = try child.close()
        #expect(fx.tracker.events("drop ") == keys.reversed().map { "drop \($0)" }, "last made first")
        #expect(fx.tracker.liveCount == 0 && fx.tracker.badDrops == 0)
    }
}
