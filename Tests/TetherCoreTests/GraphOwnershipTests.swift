// A graph hands its reference to an instance's first new owner (a dependent's edge,
// or the caller for the root) instead of retaining and releasing: instances shared
// inside the graph, the root reused as a dependency, and failed graphs must still
// keep every instance exactly as long as something holds it, then destroy it once,
// dependents before dependencies.
import Testing
import TetherCore

@Suite struct GraphOwnershipTests {
    /// A(B(D), C(D)): graph-scoped D has two dependents; `fail` fails A's factory.
    private func diamond(_ fx: Fixture, fail: Box<Bool>) throws {
        try fx.register("A", [dep("B"), dep("C")]) { _ in if fail.value { throw CallbackFailure(reason: "no A") } }
        try fx.register("B", [dep("D")])
        try fx.register("C", [dep("D")])
        try fx.register("D")
    }

    @Test func sharedDependencyLivesUntilItsLastDependentGoes() throws {
        let fx = try Fixture()
        try diamond(fx, fail: Box(false))
        var a: Instance? = try fx.resolve("A")
        let obj = Obj.of(a!)
        #expect(obj.dep(0).depPointer(0) == obj.dep(1).depPointer(0), "one D for the graph")
        #expect(fx.tracker.made("D") == 1 && fx.tracker.dropped("D") == 0)
        #expect(fx.tracker.events("drop ").isEmpty, "the caller's handle holds the whole graph")
        a = nil
        #expect(fx.tracker.events("drop ") == ["drop A", "drop C", "drop B", "drop D"], "reverse creation order")
        #expect(fx.tracker.liveCount == 0 && fx.tracker.badDrops == 0)
    }

    @Test func failedGraphDestroysSharedDependencyOnceAfterItsDependents() throws {
        let fx = try Fixture()
        try diamond(fx, fail: Box(true))
        expectError(.factoryFailed, "factory for \"A\" returned NULL: no A") { try fx.resolve("A") }
        #expect(fx.tracker.made("B") == 1 && fx.tracker.made("C") == 1 && fx.tracker.made("D") == 1)
        let drops = fx.tracker.events("drop ")
        #expect(drops.sorted() == ["drop B", "drop C", "drop D"], "A was never made")
        #expect(drops.last == "drop D", "D goes after both dependents")
        #expect(fx.tracker.liveCount == 0 && fx.tracker.badDrops == 0)
    }

    @Test func rootTakenAsADependencyByACallbackStillReachesTheCaller() throws {
        // X's completion builds Y(X) and holds it weakly: Y's edge takes the graph's
        // reference to X first, so the caller's must be a new one; Y dies with the graph.
        let fx = try Fixture()
        let x = try fx.register("X")
        try fx.register("Y", [dep("X")])
        fx.onComplete(x) { r, _, obj in obj.weaks.append(try r.getWeak(Key("Y"))) }
        var instance: Instance? = try fx.resolve("X")
        let obj = Obj.of(instance!)
        #expect(fx.tracker.made("Y") == 1 && fx.tracker.dropped("Y") == 1, "nothing held Y strongly")
        #expect(obj.weaks.first?.upgrade() == nil)
        #expect(fx.tracker.dropped("X") == 0, "the caller holds X")
        instance = nil
        #expect(fx.tracker.events("drop ") == ["drop Y", "drop X"])
        #expect(fx.tracker.liveCount == 0 && fx.tracker.badDrops == 0)
    }

    @Test func cachedSingletonUsedTwiceKeepsItsCacheReference() throws {
        // S is cached before; the graph's reference to it is a retained one, handed to
        // the first dependent, and a new one to the second: the cache keeps its own.
        let fx = try Fixture()
        try fx.register("S", scope: .singleton)
        try fx.register("P", [dep("S"), dep("Q")], scope: .transient)
        try fx.register("Q", [dep("S")], scope: .transient)
        let s = try fx.resolve("S")
        for _ in 0..<3 {
            var p: Instance? = try fx.resolve("P")
            #expect(Obj.of(p!).depPointer(0) == s.pointer && Obj.of(p!).dep(1).depPointer(0) == s.pointer)
            p = nil
        }
        #expect(fx.tracker.made("S") == 1 && fx.tracker.dropped("S") == 0)
        #expect(fx.tracker.made("P") == 3 && fx.tracker.dropped("P") == 3 && fx.tracker.dropped("Q") == 3)
        fx.container.reset(.singleton)
        #expect(fx.tracker.dropped("S") == 0, "the test's own reference still holds it")
        _ = consume s
        #expect(fx.tracker.dropped("S") == 1 && fx.tracker.badDrops == 0)
    }
}
