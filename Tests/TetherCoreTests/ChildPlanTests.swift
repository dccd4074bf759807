// A request's child with registrations of its own (one per request) resolves through the plan of
// its per-request component (`Plan.record(_:configuration:child:)`, `Plan.fits`) whatever the
// child registers: graph-scoped registrations with completion callbacks, container-scoped ones
// (made once per child, published into it), and slots made per resolve (WEAK, LAZY, WEAK_LAZY,
// ALL, FACTORY) in the child's graph. Each test asserts the observations and the log (factories,
// completion callbacks, destructors, in order: the build's, which ran beside it as an oracle until
// branch noplansoff), and that no resolve reaches `Graph.build` (`Container.buildsOnThisThread`).
import Testing
@testable import TetherCore

@Suite struct ChildPlanTests {
    /// `rounds` requests: each a child, `register` its own registrations there, `root` resolved from it `resolves`
    /// times (each observed), the child closed. No build; the observations and log `expected` (the build's, which
    /// ran beside it as an oracle until branch noplansoff), and nothing live after (but `cached` instances).
    private func expectRequestsOnThePlan(root: String, rounds: Int = 4, resolves: Int = 2, cached: Int = 0, expected: [String],
                                         _ setUp: (Fixture) throws -> Void,
                                         register: (Fixture, Container, Int) throws -> Void,
                                         observe: (Fixture, Container, Instance, Int) throws -> [String],
                                         sourceLocation: SourceLocation = #_sourceLocation) throws {
        let fx = try Fixture()
        try setUp(fx)
        var seen: [String] = []
        let builds = Container.buildsOnThisThread
        for round in 0..<rounds {
            let child = try fx.child()
            try register(fx, child, round)
            for _ in 0..<resolves {
                let instance = try fx.resolve(root, in: child)
                seen += try observe(fx, child, instance, round)
            }
            fx.tracker.note("close \(round)")
            _ = try child.close()
        }
        #expect(Container.buildsOnThisThread == builds, "every resolve ran the component's plan", sourceLocation: sourceLocation)
        #expect(fx.container.registration(for: Key(root))!.childPlanCount == 1, sourceLocation: sourceLocation)
        #expect(fx.tracker.liveCount == cached && fx.tracker.badDrops == 0, sourceLocation: sourceLocation)
        expectLiteral(seen + fx.tracker.log, expected, sourceLocation: sourceLocation)
    }

    /// The child's own B has a completion callback that takes the graph's C (the parent's) and
    /// the parent's A one too: they run as in a build, each child's on its own B, in one order.
    @Test func completionCallbacksOfTheChildsOwnRegistrations() throws {
        let expected = ["B is this child's: true", "B's callback got A's C: true", "B is this child's: true",
                        "B's callback got A's C: true", "B is this child's: true", "B's callback got A's C: true",
                        "B is this child's: true", "B's callback got A's C: true", "B is this child's: true",
                        "B's callback got A's C: true", "B is this child's: true", "B's callback got A's C: true",
                        "B is this child's: true", "B's callback got A's C: true", "B is this child's: true",
                        "B's callback got A's C: true", "make C", "make B0", "make A", "complete B0", "complete A",
                        "A completes over B0", "drop A", "drop B0", "drop C", "make C", "make B0", "make A",
                        "complete B0", "complete A", "A completes over B0", "drop A", "drop B0", "drop C", "close 0",
                        "make C", "make B1", "make A", "complete B1", "complete A", "A completes over B1", "drop A",
                        "drop B1", "drop C", "make C", "make B1", "make A", "complete B1", "complete A",
                        "A completes over B1", "drop A", "drop B1", "drop C", "close 1", "make C", "make B2", "make A",
                        "complete B2", "complete A", "A completes over B2", "drop A", "drop B2", "drop C", "make C",
                        "make B2", "make A", "complete B2", "complete A", "A completes over B2", "drop A", "drop B2",
                        "drop C", "close 2", "make C", "make B3", "make A", "complete B3", "complete A",
                        "A completes over B3", "drop A", "drop B3", "drop C", "make C", "make B3", "make A",
                        "complete B3", "complete A", "A completes over B3", "drop A", "drop B3", "drop C", "close 3"]
        try expectRequestsOnThePlan(root: "A", expected: expected, { fx in
            let a = try fx.register("A", [dep("B"), dep("C")], scope: .transient)
            try fx.register("C")
            fx.onComplete(a) { _, _, obj in fx.tracker.note("A completes over \(obj.dep(0).label)") }
        }, register: { fx, child, round in
            let b = try fx.register("B", [dep("C")], in: child, label: "B\(round)")
            fx.onComplete(b, event: "complete B\(round)") { resolver, _, obj in obj.got.append(try resolver.get(Key("C")).pointer) }
        }) { fx, _, a, round in
            let b = Obj.of(a).dep(0)
            return ["B is this child's: \(b.label == "B\(round)")", "B's callback got A's C: \(b.got == [Obj.of(a).depPointer(1)])"]
        }
    }

    /// The child's own container-scoped Session (over the root's singleton Db) is made once per
    /// child, on the first resolve, and published there: the second resolve takes it; it goes
    /// when its child closes, before the next request, Db last of all.
    @Test func aChildsOwnContainerScopedRegistrationIsMadeOncePerChild() throws {
        let expected = ["Session of this child: true", "one per child: true", "Session made 1",
                        "Session of this child: true", "one per child: true", "Session made 1",
                        "Session of this child: true", "one per child: true", "Session made 1",
                        "Session of this child: true", "one per child: true", "Session made 1",
                        "Session of this child: true", "one per child: true", "Session made 1",
                        "Session of this child: true", "one per child: true", "Session made 1",
                        "Session of this child: true", "one per child: true", "Session made 1",
                        "Session of this child: true", "one per child: true", "Session made 1", "make Db",
                        "make Session0", "make Handler", "drop Handler", "make Handler", "drop Handler", "close 0",
                        "drop Session0", "make Session1", "make Handler", "drop Handler", "make Handler",
                        "drop Handler", "close 1", "drop Session1", "make Session2", "make Handler", "drop Handler",
                        "make Handler", "drop Handler", "close 2", "drop Session2", "make Session3", "make Handler",
                        "drop Handler", "make Handler", "drop Handler", "close 3", "drop Session3"]
        try expectRequestsOnThePlan(root: "Handler", cached: 1, expected: expected, { fx in
            try fx.register("Db", scope: .singleton)
            try fx.register("Handler", [dep("Session"), dep("Db")], scope: .transient)
            _ = try fx.resolve("Db")
        }, register: { fx, child, round in
            try fx.register("Session", [dep("Db")], scope: .container, in: child, label: "Session\(round)")
        }) { fx, child, handler, round in
            let session = Obj.of(handler).depPointer(0)
            return ["Session of this child: \(Obj.at(session).label == "Session\(round)")",
                    "one per child: \(try fx.resolve("Session", in: child).pointer == session)",
                    "Session made \(fx.tracker.made("Session\(round)"))"]
        }
    }

    /// Slots made per resolve inside the child's graph: the child's B takes its own C by a WEAK_LAZY
    /// back edge (bound to the graph's C, made after it, through the child's registration), a WEAK
    /// slot to the parent's D, an ALL slot of the parent's plugins and a FACTORY slot of the child's E.
    @Test func slotsMadePerResolveInAChildsGraph() throws {
        let expected = ["B B0, C C0", "weak-lazy C is the graph's C: true", "cell from the child: true",
                        "weak D is C's D: true", "items [\"Plugin\", \"Plugin#gzip\"]",
                        "factory of E from the child: E true", "B B0, C C0", "weak-lazy C is the graph's C: true",
                        "cell from the child: true", "weak D is C's D: true", "items [\"Plugin\", \"Plugin#gzip\"]",
                        "factory of E from the child: E true", "B B1, C C1", "weak-lazy C is the graph's C: true",
                        "cell from the child: true", "weak D is C's D: true", "items [\"Plugin\", \"Plugin#gzip\"]",
                        "factory of E from the child: E true", "B B1, C C1", "weak-lazy C is the graph's C: true",
                        "cell from the child: true", "weak D is C's D: true", "items [\"Plugin\", \"Plugin#gzip\"]",
                        "factory of E from the child: E true", "B B2, C C2", "weak-lazy C is the graph's C: true",
                        "cell from the child: true", "weak D is C's D: true", "items [\"Plugin\", \"Plugin#gzip\"]",
                        "factory of E from the child: E true", "B B2, C C2", "weak-lazy C is the graph's C: true",
                        "cell from the child: true", "weak D is C's D: true", "items [\"Plugin\", \"Plugin#gzip\"]",
                        "factory of E from the child: E true", "B B3, C C3", "weak-lazy C is the graph's C: true",
                        "cell from the child: true", "weak D is C's D: true", "items [\"Plugin\", \"Plugin#gzip\"]",
                        "factory of E from the child: E true", "B B3, C C3", "weak-lazy C is the graph's C: true",
                        "cell from the child: true", "weak D is C's D: true", "items [\"Plugin\", \"Plugin#gzip\"]",
                        "factory of E from the child: E true", "make D", "make Plugin", "make Plugin#gzip", "make B0",
                        "make C0", "make A", "drop A", "drop C0", "drop D", "drop B0", "drop Plugin#gzip",
                        "drop Plugin", "make D", "make Plugin", "make Plugin#gzip", "make B0", "make C0", "make A",
                        "drop A", "drop C0", "drop D", "drop B0", "drop Plugin#gzip", "drop Plugin", "close 0",
                        "make D", "make Plugin", "make Plugin#gzip", "make B1", "make C1", "make A", "drop A",
                        "drop C1", "drop D", "drop B1", "drop Plugin#gzip", "drop Plugin", "make D", "make Plugin",
                        "make Plugin#gzip", "make B1", "make C1", "make A", "drop A", "drop C1", "drop D", "drop B1",
                        "drop Plugin#gzip", "drop Plugin", "close 1", "make D", "make Plugin", "make Plugin#gzip",
                        "make B2", "make C2", "make A", "drop A", "drop C2", "drop D", "drop B2", "drop Plugin#gzip",
                        "drop Plugin", "make D", "make Plugin", "make Plugin#gzip", "make B2", "make C2", "make A",
                        "drop A", "drop C2", "drop D", "drop B2", "drop Plugin#gzip", "drop Plugin", "close 2",
                        "make D", "make Plugin", "make Plugin#gzip", "make B3", "make C3", "make A", "drop A",
                        "drop C3", "drop D", "drop B3", "drop Plugin#gzip", "drop Plugin", "make D", "make Plugin",
                        "make Plugin#gzip", "make B3", "make C3", "make A", "drop A", "drop C3", "drop D", "drop B3",
                        "drop Plugin#gzip", "drop Plugin", "close 3"]
        try expectRequestsOnThePlan(root: "A", expected: expected, { fx in
            try fx.register("A", [dep("C")], scope: .transient)
            try fx.register("D")
            try fx.register("Plugin")
            try fx.register("Plugin#gzip", scope: .transient)
        }, register: { fx, child, round in
            try fx.register("C", [dep("B"), dep("D")], in: child, label: "C\(round)")
            try fx.register("B", [weakLazyDep("C"), weakDep("D"), .all(Key("Plugin")), .factory(Key("E"))], in: child, label: "B\(round)")
            try fx.register("E", scope: .transient, in: child, label: "E\(round)")
        }) { fx, child, a, round in
            let c = Obj.of(a).dep(0)
            let b = c.dep(0)
            let cell = try #require(fx.bridge.cell(b.words[0]))
            let items = SlotList.items(at: UnsafeRawPointer(bitPattern: UInt(b.words[2]))!)
            let factory = fx.bridge.factoryCell(b.words[3])
            return ["B \(b.label), C \(c.label)", "weak-lazy C is the graph's C: \(try cell.get() == Obj.of(a).depPointer(0))",
                    "cell from the child: \(cell.container === child)",
                    "weak D is C's D: \(fx.bridge.weak(b.words[1]).upgrade()?.pointer == c.depPointer(1))",
                    "items \(items.map { Obj.at($0).label })", "factory of E from the child: \(factory.key.name) \(factory.container === child)"]
        }
    }

    /// A lazy cell waiting for one of the child's own registrations that the graph does not make:
    /// the completion callback that makes it (and keeps it, a strong edge) binds the cell, the
    /// child's registration each request: the cell answers that K, never a second one.
    @Test func aLazyCellAwaitsTheChildsOwnRegistration() throws {
        let expected = ["bound to the callback's K: true", "K0 made 1", "bound to the callback's K: true",
                        "K0 made 2", "bound to the callback's K: true", "K1 made 1",
                        "bound to the callback's K: true", "K1 made 2", "bound to the callback's K: true",
                        "K2 made 1", "bound to the callback's K: true", "K2 made 2",
                        "bound to the callback's K: true", "K3 made 1", "bound to the callback's K: true",
                        "K3 made 2", "make A", "complete A", "make K0", "drop A", "drop K0", "make A", "complete A",
                        "make K0", "drop A", "drop K0", "close 0", "make A", "complete A", "make K1", "drop A",
                        "drop K1", "make A", "complete A", "make K1", "drop A", "drop K1", "close 1", "make A",
                        "complete A", "make K2", "drop A", "drop K2", "make A", "complete A", "make K2", "drop A",
                        "drop K2", "close 2", "make A", "complete A", "make K3", "drop A", "drop K3", "make A",
                        "complete A", "make K3", "drop A", "drop K3", "close 3"]
        try expectRequestsOnThePlan(root: "A", expected: expected, { fx in
            let a = try fx.register("A", [lazyDep("K")], scope: .transient)
            fx.onComplete(a) { resolver, _, obj in obj.got.append(try resolver.get(Key("K")).pointer) }
        }, register: { fx, child, round in
            try fx.register("K", in: child, label: "K\(round)")
        }) { fx, _, a, round in
            let cell = try #require(fx.bridge.cell(Obj.of(a).words[0]))
            let k = Obj.of(a).got[0]
            return ["bound to the callback's K: \(try cell.get() == k)", "K\(round) made \(fx.tracker.made("K\(round)"))"]
        }
    }

    /// A factory of the child's own registration failing under a plan that replays into the graph:
    /// the same error, what was made let go of (dependents first), the next child's resolve whole.
    @Test func aFailingChildFactoryInAGraphReplay() throws {
        let failing = Box(false)
        do {
            let fx = try Fixture()
            let a = try fx.register("A", [dep("B"), dep("C")], scope: .transient)
            try fx.register("C")
            fx.onComplete(a)
            for round in 0..<3 {
                failing.value = round == 1
                let child = try fx.child()
                try fx.register("B", [weakDep("C")], in: child, label: "B\(round)", body: { _ in
                    if failing.value { throw CallbackFailure(reason: "B down") }
                })
                if round == 1 {
                    expectError(.factoryFailed, "B down", "\"A\" -> \"B\"") { try fx.resolve("A", in: child) }
                } else {
                    _ = try fx.resolve("A", in: child)
                }
                _ = try child.close()
            }
            #expect(fx.tracker.events("complete ") == ["complete A", "complete A"])
            #expect(fx.tracker.liveCount == 0 && fx.tracker.badDrops == 0)
        }
    }
}
