// A request's child registering a singleton or weak key of its own (issue 28, `notCached` and `sharedRoot`
// before branch childown: a creation step of the child's own was declined, its cell and cache being each
// child's): the component's creation plan makes it as a local creation step, each run claiming, making and
// publishing the resolving child's registration's (`Plan.registration(of:_:)`). Each test asserts the
// observations and log (factories, callbacks, destructors in order: the build's, which ran beside it as an
// oracle until branch noplansoff), and that no resolve reaches `Graph.build` and none declines.
import Testing
@testable import TetherCore

@Suite struct ChildOwnSharedPlanTests {
    /// `rounds` requests: each a child with its own registrations (`register`), `body` run on it, the child
    /// closed. No build, no decline counted (`counted`); nothing live after but `cached` instances, every
    /// destructor once. Returns the observations and the log (each test asserts them: the build's, which ran
    /// beside it as an oracle until branch noplansoff).
    private func servedRequests(rounds: Int = 3, cached: Int = 0, _ setUp: (Fixture) throws -> Void,
                                    register: (Fixture, Container, Int) throws -> Void,
                                    body: (Fixture, Container, Int) throws -> [String],
                                    sourceLocation: SourceLocation = #_sourceLocation) throws -> [String] {
        let fx = try Fixture()
        try setUp(fx)
        var seen: [String] = []
        let builds = Container.buildsOnThisThread
        let counts = try counted {
            for round in 0..<rounds {
                let child = try fx.child()
                try register(fx, child, round)
                seen += try body(fx, child, round)
                fx.tracker.note("close \(round)")
                _ = try child.close()
            }
        }
        #expect(Container.buildsOnThisThread == builds, "every resolve ran a plan", sourceLocation: sourceLocation)
        #expect(counts.keys.sorted() == ["resolves"], "no decline: \(counts)", sourceLocation: sourceLocation)
        #expect(fx.tracker.liveCount == cached && fx.tracker.badDrops == 0, sourceLocation: sourceLocation)
        return seen + fx.tracker.log
    }

    /// The child's own singleton Req (over the root's graph-scoped Db), a dependency of the root's Handler: made
    /// once per child on its first resolve, the second resolve takes it cached; each child's its own; it goes
    /// when its child closes, after the handlers that held it. Its completion callback runs once per child.
    @Test func aChildsOwnSingletonDependencyIsMadeOncePerChildOnThePlan() throws {
        let log = try servedRequests({ fx in
            try fx.register("Db")
            try fx.register("Handler", [dep("Req"), dep("Db")], scope: .transient)
        }, register: { fx, child, round in
            let req = try fx.register("Req", [dep("Db")], scope: .singleton, in: child, label: "Req\(round)")
            fx.onComplete(req, event: "complete Req\(round)")
        }) { fx, child, round in
            let first = try fx.resolve("Handler", in: child), second = try fx.resolve("Handler", in: child)
            return withExtendedLifetime((first, second)) {
                let (a, b) = (Obj.of(first), Obj.of(second))
                return ["\(round): Req \(a.dep(0).label), one per child \(a.depPointer(0) == b.depPointer(0)), made \(fx.tracker.made("Req\(round)"))"]
            }
        }
        #expect(log.prefix(3) == ["0: Req Req0, one per child true, made 1", "1: Req Req1, one per child true, made 1",
                                  "2: Req Req2, one per child true, made 1"])
        #expect(log.filter { $0.hasPrefix("complete") } == ["complete Req0", "complete Req1", "complete Req2"])
        #expect(log.filter { $0.hasPrefix("make Req") || $0.hasPrefix("drop Req") || $0.hasPrefix("close") }
                == ["make Req0", "close 0", "drop Req0", "make Req1", "close 1", "drop Req1", "make Req2", "close 2", "drop Req2"])
    }

    /// Two of the child's own singletons, one over the other, and the root's uncached singleton S beside them:
    /// one creation plan makes all three (their cells claimed by the resolving child's registrations); the
    /// child's go at its close, the later made first; S stays the root's.
    @Test func twoOwnSingletonsAndTheOwnersUncachedOneInOnePlan() throws {
        let log = try servedRequests(cached: 1, { fx in
            try fx.register("S", scope: .singleton)
            try fx.register("Handler", [dep("Repo"), dep("S")], scope: .transient)
        }, register: { fx, child, round in
            try fx.register("Conn", scope: .singleton, in: child, label: "Conn\(round)")
            try fx.register("Repo", [dep("Conn"), dep("S")], scope: .singleton, in: child, label: "Repo\(round)")
        }) { fx, child, round in
            let h = try fx.resolve("Handler", in: child)
            let repo = try fx.resolve("Repo", in: child)
            return withExtendedLifetime((h, repo)) {
                ["\(round): \(Obj.of(h).dep(0).label)(\(Obj.of(h).dep(0).dep(0).label)) same \(Obj.of(h).depPointer(0) == repo.pointer)"]
            }
        }
        #expect(log.prefix(3) == ["0: Repo0(Conn0) same true", "1: Repo1(Conn1) same true", "2: Repo2(Conn2) same true"])
        #expect(Array(log.dropFirst(3)) == ["make Conn0", "make S", "make Repo0", "make Handler", "drop Handler", "close 0",
                                            "drop Repo0", "drop Conn0", "make Conn1", "make Repo1", "make Handler", "drop Handler",
                                            "close 1", "drop Repo1", "drop Conn1", "make Conn2", "make Repo2", "make Handler",
                                            "drop Handler", "close 2", "drop Repo2", "drop Conn2"])
    }

    /// The child's own weak Session: made on the first resolve, handed out again while a handler holds it
    /// (the second resolve takes it from its cache), made again once nothing holds it; each child's its own.
    @Test func aChildsOwnWeakDependencyIsACreationStep() throws {
        let log = try servedRequests({ fx in
            try fx.register("Handler", [dep("Session")], scope: .transient)
        }, register: { fx, child, round in
            try fx.register("Session", scope: .weak, in: child, label: "Session\(round)")
        }) { fx, child, round in
            let first = try fx.resolve("Handler", in: child)
            let second = try fx.resolve("Handler", in: child)
            let held = Obj.of(first).depPointer(0) == Obj.of(second).depPointer(0)
            _ = consume first
            _ = consume second
            let third = try fx.resolve("Handler", in: child)
            return withExtendedLifetime(third) { ["\(round): held \(held), made \(fx.tracker.made("Session\(round)"))"] }
        }
        #expect(log.prefix(3) == ["0: held true, made 2", "1: held true, made 2", "2: held true, made 2"])
    }

    /// A creation plan over the child's own singleton cached (a shared leaf of the child's, `matchesCaches`
    /// reading the resolving child's registration) and the root's S not cached (reset each round).
    @Test func theOwnersUncachedSingletonBesideTheChildsCachedOne() throws {
        let log = try servedRequests(cached: 1, { fx in
            try fx.register("S", scope: .singleton)
            try fx.register("Handler", [dep("Req"), dep("S")], scope: .transient)
        }, register: { fx, child, round in
            try fx.register("Req", scope: .singleton, in: child, label: "Req\(round)")
        }) { fx, child, round in
            let req = try fx.resolve("Req", in: child)
            fx.container.reset(.singleton)
            let h = try fx.resolve("Handler", in: child)
            return withExtendedLifetime((req, h)) { ["\(round): \(Obj.of(h).dep(0).label) same \(Obj.of(h).depPointer(0) == req.pointer)"] }
        }
        #expect(log.prefix(3) == ["0: Req0 same true", "1: Req1 same true", "2: Req2 same true"])
        #expect(log.filter { $0 == "make S" }.count == 3 && log.filter { $0 == "drop S" }.count == 2)
    }

    /// The child's own singleton and weak registrations as the root: each child's made once and cached, on
    /// a plan (the registration's own: a root's resolve is its container's), in every child.
    @Test func aChildsOwnSingletonAndWeakRootsRunPlans() throws {
        let log = try servedRequests({ fx in
            try fx.register("Db")
        }, register: { fx, child, round in
            try fx.register("Req", [dep("Db")], scope: .singleton, in: child, label: "Req\(round)")
            try fx.register("W", [dep("Req")], scope: .weak, in: child, label: "W\(round)")
        }) { fx, child, round in
            let w = try fx.resolve("W", in: child), again = try fx.resolve("W", in: child)
            let req = try fx.resolve("Req", in: child)
            return withExtendedLifetime((w, again, req)) {
                ["\(round): one W \(w.pointer == again.pointer), its Req the child's \(Obj.of(w).depPointer(0) == req.pointer)"]
            }
        }
        #expect(log.prefix(3) == ["0: one W true, its Req the child's true", "1: one W true, its Req the child's true",
                                  "2: one W true, its Req the child's true"])
    }

    /// A stacked component (a request's sub-request): the middle child's own singleton Conn (over Db, looked up
    /// in the middle child, as the build's: its Db, not the sub-request's) and weak Session (over Db, the
    /// resolving sub-request's), neither cached, under a sub-request with a registration of its own: local
    /// creation steps of the stacked component's creation plan, published into the middle child's registrations.
    @Test func aStackedLevelsOwnSingletonAndWeakRegistrations() throws {
        let log = try servedRequests({ fx in
            try fx.register("Handler", [dep("Conn"), dep("Session"), dep("Tag")], scope: .transient)
        }, register: { fx, child, round in
            try fx.register("Db", in: child, label: "Db@child\(round)")
            try fx.register("Conn", [dep("Db")], scope: .singleton, in: child, label: "Conn\(round)")
            try fx.register("Session", [dep("Db")], scope: .weak, in: child, label: "Session\(round)")
        }) { fx, child, round in
            var seen: [String] = []
            for n in 0..<2 {
                let sub = try fx.child(of: child)
                try fx.register("Tag", in: sub, label: "Tag\(round).\(n)")
                try fx.register("Db", in: sub, label: "Db@sub\(round).\(n)")
                let h = try fx.resolve("Handler", in: sub), again = try fx.resolve("Handler", in: sub)
                withExtendedLifetime((h, again)) {
                    let (o, p) = (Obj.of(h), Obj.of(again))
                    seen.append("\(round).\(n): \(o.dep(0).label)(\(o.dep(0).dep(0).label)) \(o.dep(1).label)(\(o.dep(1).dep(0).label)) "
                                + "one Conn \(o.depPointer(0) == p.depPointer(0)), one Session \(o.depPointer(1) == p.depPointer(1))")
                }
                _ = try sub.close()
            }
            return seen
        }
        #expect(log.prefix(2) == ["0.0: Conn0(Db@child0) Session0(Db@sub0.0) one Conn true, one Session true",
                                  "0.1: Conn0(Db@child0) Session0(Db@sub0.1) one Conn true, one Session true"])
        #expect(log.filter { $0.hasPrefix("make Conn") || $0.hasPrefix("drop Conn") || $0.hasPrefix("close") }
                == ["make Conn0", "close 0", "drop Conn0", "make Conn1", "close 1", "drop Conn1", "make Conn2", "close 2", "drop Conn2"])
    }

    /// A failure after the child's own singleton was made: the plan lets go of it and caches nothing, as the
    /// build's abort does; the next resolve in the same child makes it again, once.
    @Test func aFailureAfterTheChildsOwnSingletonLetsGoOfIt() throws {
        let fail = Box(true)
        let log = try servedRequests({ fx in
            try fx.register("F") { _ in if fail.value { throw CallbackFailure(reason: "no F") } }
            try fx.register("Handler", [dep("Req"), dep("F")], scope: .transient)
        }, register: { fx, child, round in
            try fx.register("Req", scope: .singleton, in: child, label: "Req\(round)")
        }) { fx, child, round in
            fail.value = true
            var error = ""
            do { _ = try fx.resolve("Handler", in: child) } catch let e as TetherError { error = e.message }
            fail.value = false
            let h = try fx.resolve("Handler", in: child), again = try fx.resolve("Handler", in: child)
            return withExtendedLifetime((h, again)) {
                ["\(round): \(error.contains("no F")) one Req \(Obj.of(h).depPointer(0) == Obj.of(again).depPointer(0))"]
            }
        }
        #expect(log.prefix(3) == ["0: true one Req true", "1: true one Req true", "2: true one Req true"])
        #expect(Array(log.dropFirst(3).prefix(4)) == ["make Req0", "drop Req0", "make Req0", "make F"])
    }
}
