// Scopes: graph (one per top-level resolve), transient, singleton, weak; reset,
// scope changes, re-registration, destruction order, weak slots.
import Testing
import TetherCore

@Suite struct ScopeTests {
    /// A -> B -> D, A -> C -> D.
    private func diamond(_ fx: Fixture, d scope: Scope) throws {
        try fx.register("A", [dep("B"), dep("C")])
        try fx.register("B", [dep("D")])
        try fx.register("C", [dep("D")])
        try fx.register("D", scope: scope)
    }

    @Test func graphScopeIsOnePerResolve() throws {
        let fx = try Fixture()
        try diamond(fx, d: .graph)
        var a1: Instance? = try fx.resolve("A")
        var a2: Instance? = try fx.resolve("A")
        let o1 = Obj.of(a1!), o2 = Obj.of(a2!)
        #expect(o1.dep(0).dep(0) === o1.dep(1).dep(0), "one D within a graph")
        #expect(o1.dep(0).dep(0) !== o2.dep(0).dep(0), "a new D for each resolve")
        #expect(a1 !== a2)
        #expect(fx.tracker.calls("D") == 2 && fx.tracker.calls("A") == 2)
        a1 = nil
        #expect(fx.tracker.dropped("D") == 1 && fx.tracker.dropped("A") == 1)
        a2 = nil
        #expect(fx.tracker.dropped("D") == 2 && fx.tracker.dropped("B") == 2 && fx.tracker.dropped("C") == 2)
        #expect(fx.tracker.liveCount == 0 && fx.tracker.badDrops == 0)
    }

    @Test func transientIsNewEachTimeEvenInOneGraph() throws {
        let fx = try Fixture()
        try fx.register("A", [dep("T"), dep("T")])
        try fx.register("T", scope: .transient)
        var a: Instance? = try fx.resolve("A")
        let o = Obj.of(a!)
        #expect(o.dep(0) !== o.dep(1))
        #expect(fx.tracker.calls("T") == 2)
        var t1: Instance? = try fx.resolve("T")
        var t2: Instance? = try fx.resolve("T")
        #expect(t1 !== t2 && t1!.pointer != t2!.pointer)
        #expect(fx.tracker.calls("T") == 4)
        a = nil; t1 = nil; t2 = nil
        #expect(fx.tracker.dropped("T") == 4 && fx.tracker.liveCount == 0)
    }

    @Test func transientDiamondLeafIsNotShared() throws {
        let fx = try Fixture()
        try diamond(fx, d: .transient)
        let a = try fx.resolve("A")
        let o = Obj.of(a)
        #expect(o.dep(0).dep(0) !== o.dep(1).dep(0))
        #expect(fx.tracker.calls("D") == 2 && fx.tracker.calls("B") == 1)
    }

    @Test func singletonIsCachedUntilReset() throws {
        let fx = try Fixture()
        try diamond(fx, d: .singleton)
        var a1: Instance? = try fx.resolve("A")
        var a2: Instance? = try fx.resolve("A")
        let d = Obj.of(a1!).dep(0).dep(0)
        #expect(Obj.of(a2!).dep(1).dep(0) === d)
        var direct: Instance? = try fx.resolve("D")
        #expect(direct!.pointer == d.pointer)
        #expect(fx.tracker.calls("D") == 1)
        a1 = nil; a2 = nil; direct = nil
        #expect(fx.tracker.dropped("D") == 0, "the cache holds it")
        #expect(fx.tracker.dropped("A") == 2)

        fx.container.reset(.graph)
        fx.container.reset(.transient)
        fx.container.reset(.weak)
        #expect(fx.tracker.dropped("D") == 0, "resetting other scopes keeps singletons")
        fx.container.reset(.singleton)
        #expect(fx.tracker.dropped("D") == 1)

        let again = try fx.resolve("D")
        #expect(fx.tracker.calls("D") == 2)
        #expect(Obj.of(again).label == "D")
    }

    @Test func resetKeepsAHeldSingletonAliveUntilReleased() throws {
        let fx = try Fixture()
        try fx.register("S", scope: .singleton)
        var held: Instance? = try fx.resolve("S")
        fx.container.reset(.singleton)
        #expect(fx.tracker.dropped("S") == 0)
        let fresh = try fx.resolve("S")
        #expect(fresh !== held && fresh.pointer != held!.pointer)
        held = nil
        #expect(fx.tracker.dropped("S") == 1)
        #expect(fx.tracker.calls("S") == 2)
    }

    @Test func weakScopeIsSharedWhileHeld() throws {
        let fx = try Fixture()
        try fx.register("W", scope: .weak)
        var w1: Instance? = try fx.resolve("W")
        var w2: Instance? = try fx.resolve("W")
        #expect(w1 === w2)
        #expect(fx.tracker.calls("W") == 1)
        w1 = nil
        #expect(fx.tracker.dropped("W") == 0)
        w2 = nil
        #expect(fx.tracker.dropped("W") == 1)
        let w3 = try fx.resolve("W")
        #expect(fx.tracker.calls("W") == 2)
        _ = w3
    }

    @Test func weakScopeHeldByAnEdge() throws {
        let fx = try Fixture()
        try fx.register("A", [dep("W"), dep("W")])
        try fx.register("W", scope: .weak)
        var a: Instance? = try fx.resolve("A")
        #expect(Obj.of(a!).dep(0) === Obj.of(a!).dep(1))
        var w: Instance? = try fx.resolve("W")
        #expect(w!.pointer == Obj.of(a!).depPointer(0), "the edge from A keeps it shared")
        w = nil
        #expect(fx.tracker.dropped("W") == 0)
        a = nil
        #expect(fx.tracker.dropped("W") == 1)
        _ = try fx.resolve("W")
        #expect(fx.tracker.calls("W") == 2)
    }

    @Test func weakScopeCacheIsReset() throws {
        let fx = try Fixture()
        try fx.register("W", scope: .weak)
        let w1 = try fx.resolve("W")
        fx.container.reset(.weak)
        let w2 = try fx.resolve("W")
        #expect(w1 !== w2)
        #expect(fx.tracker.calls("W") == 2 && fx.tracker.dropped("W") == 0)
    }

    @Test func changingTheScopeDropsTheCache() throws {
        let fx = try Fixture()
        let r = try fx.register("S", scope: .singleton)
        _ = try fx.resolve("S")
        #expect(fx.tracker.dropped("S") == 0)
        try r.setScope(.singleton)
        #expect(fx.tracker.dropped("S") == 0, "same scope: nothing changes")
        try r.setScope(.transient)
        #expect(fx.tracker.dropped("S") == 1)
        #expect(r.spec.scope == .transient)
        let t1 = try fx.resolve("S"), t2 = try fx.resolve("S")
        #expect(t1 !== t2)
        #expect(fx.tracker.calls("S") == 3)
    }

    @Test func reRegisteringReplacesAndRetires() throws {
        let fx = try Fixture()
        let old = try fx.register("S", scope: .singleton, label: "S1")
        _ = try fx.resolve("S")
        let new = try fx.register("S", scope: .singleton, label: "S2")
        #expect(!old.isLive && new.isLive)
        #expect(fx.tracker.dropped("S1") == 1, "the retired registration's cache is released")
        let s = try fx.resolve("S")
        #expect(Obj.of(s).label == "S2")
        #expect(fx.container.registration(for: Key("S")) === new)
        // The returned replaced registration is the old one.
        let third = try fx.container.register(Key("S"), params: [], factory: ClosureFactory { _ in nil })
        #expect(third.replaced === new)
    }

    /// README "Destruction order": re-registering a key lets go of what its registration cached, the
    /// container-scoped instances its descendants cache too (deepest first), not when they close.
    @Test func reRegisteringLetsGoOfWhatDescendantsCache() throws {
        let fx = try Fixture()
        try fx.register("S", scope: .container, label: "S1")
        let c1 = try fx.child(), c2 = try fx.child(of: c1)
        for c in [fx.container, c1, c2] { _ = try fx.resolve("S", in: c) }
        #expect(fx.tracker.made("S1") == 3 && fx.tracker.dropped("S1") == 0)
        try fx.register("S", scope: .container, label: "S2")
        #expect(fx.tracker.dropped("S1") == 3, "the root's and both descendants' instances go at once")
        #expect(Obj.of(try fx.resolve("S", in: c2)).label == "S2")
        _ = try c2.close()
        _ = try c1.close()
        #expect(fx.tracker.dropped("S1") == 3 && fx.tracker.dropped("S2") == 1)
        #expect(fx.tracker.badDrops == 0)
    }

    /// A resolve from a child under way with the replaced registration (re-registered from its own
    /// factory) does not cache what it made there: it is let go of with its last handle, not at the close.
    @Test func aResolveUnderWayInAChildCachesNothingOfAReplacedRegistration() throws {
        let fx = try Fixture()
        let reRegister = Box(false)
        try fx.register("S", scope: .container, label: "S1") { _ in
            guard reRegister.value else { return }
            reRegister.value = false
            try fx.register("S", scope: .container, label: "S2")
        }
        let c1 = try fx.child()
        reRegister.value = true
        var s: Instance? = try fx.resolve("S", in: c1)
        #expect(Obj.of(s!).label == "S1" && fx.tracker.dropped("S1") == 0)
        s = nil
        #expect(fx.tracker.dropped("S1") == 1, "not cached in the child: its handle was the last reference")
        #expect(Obj.of(try fx.resolve("S", in: c1)).label == "S2")
        _ = try c1.close()
        #expect(fx.tracker.dropped("S1") == 1 && fx.tracker.dropped("S2") == 1 && fx.tracker.badDrops == 0)
    }

    @Test func dependentsAreDestroyedBeforeDependencies() throws {
        let fx = try Fixture()
        try fx.register("A", [dep("B")])
        try fx.register("B", [dep("C")])
        try fx.register("C")
        var a: Instance? = try fx.resolve("A")
        #expect(a != nil)
        #expect(fx.tracker.events("make ") == ["make C", "make B", "make A"])
        a = nil
        #expect(fx.tracker.events("drop ") == ["drop A", "drop B", "drop C"])
    }

    @Test func weakSlotTargetLivesThroughTheResolveOnly() throws {
        let fx = try Fixture()
        let ra = try fx.register("A", [weakDep("B")])
        try fx.register("B")
        let upgradedDuringResolve = Box(false)
        fx.onComplete(ra) { _, _, obj in
            upgradedDuringResolve.value = fx.bridge.weak(obj.words[0]).upgrade() != nil
        }
        let a = try fx.resolve("A")
        #expect(upgradedDuringResolve.value, "every instance of the graph is alive during the resolve")
        let weak = fx.bridge.weak(Obj.of(a).words[0])
        #expect(weak.key == Key("B"))
        #expect(weak.upgrade() == nil, "only a weak edge pointed at B")
        #expect(fx.tracker.dropped("B") == 1 && fx.tracker.dropped("A") == 0)
    }

    @Test func weakSlotToAHeldInstanceUpgrades() throws {
        let fx = try Fixture()
        try fx.register("A", [weakDep("S")])
        try fx.register("S", scope: .singleton)
        let a = try fx.resolve("A")
        let s = try fx.resolve("S")
        #expect(fx.bridge.weak(Obj.of(a).words[0]).upgrade() === s)
        fx.container.reset(.singleton)
        // Still held by `s`.
        #expect(fx.bridge.weak(Obj.of(a).words[0]).upgrade() === s)
        withExtendedLifetime(s) {}
    }
}
