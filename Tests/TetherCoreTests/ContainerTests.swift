// Parent/child containers: lookups fall through, children override, singletons
// live in (and take their dependencies from) the registering container, and a
// container with children cannot be closed.
import Testing
import TetherCore

@Suite struct ContainerTests {
    @Test func childFallsThroughToParent() throws {
        let fx = try Fixture()
        try fx.register("A", [dep("B")])
        try fx.register("B")
        let child = try fx.child()
        let a = try fx.resolve("A", in: child)
        #expect(Obj.of(a).label == "A" && Obj.of(a).dep(0).label == "B")
        #expect(child.parent === fx.container)
        #expect(child.registration(for: Key("A")) === fx.container.registration(for: Key("A")))
    }

    @Test func childOverridesADependencyOfAParentRegistration() throws {
        let fx = try Fixture()
        try fx.register("A", [dep("B")])
        try fx.register("B", label: "B@parent")
        let child = try fx.child()
        try fx.register("B", in: child, label: "B@child")
        // (Keep each Instance in a local while reading through it: its edges hold what it points at.)
        let fromChild = try fx.resolve("A", in: child)
        #expect(Obj.of(fromChild).dep(0).label == "B@child")
        let fromParent = try fx.resolve("A")
        #expect(Obj.of(fromParent).dep(0).label == "B@parent", "the parent is untouched")
        let b = try fx.resolve("B", in: child)
        #expect(Obj.of(b).label == "B@child")
    }

    @Test func grandchildSeesTheNearestOverride() throws {
        let fx = try Fixture()
        try fx.register("A", [dep("B"), dep("C")])
        try fx.register("B", label: "B@root")
        try fx.register("C", label: "C@root")
        let middle = try fx.child()
        try fx.register("B", in: middle, label: "B@middle")
        let leaf = try fx.child(of: middle)
        try fx.register("C", in: leaf, label: "C@leaf")
        let instance = try fx.resolve("A", in: leaf)
        let a = Obj.of(instance)
        #expect(a.dep(0).label == "B@middle" && a.dep(1).label == "C@leaf")
    }

    @Test func siblingsDoNotSeeEachOther() throws {
        let fx = try Fixture()
        let one = try fx.child(), two = try fx.child()
        try fx.register("X", in: one)
        _ = try fx.resolve("X", in: one)
        expectError(.notFound, "no registration for \"X\"") { try fx.resolve("X", in: two) }
        expectError(.notFound) { try fx.resolve("X") }
    }

    @Test func singletonTakesDependenciesFromItsContainerAndIsCachedThere() throws {
        let fx = try Fixture()
        try fx.register("S", [dep("B")], scope: .singleton)
        try fx.register("B", label: "B@parent")
        let child = try fx.child()
        try fx.register("B", in: child, label: "B@child")

        var fromChild: Instance? = try fx.resolve("S", in: child)
        #expect(Obj.of(fromChild!).dep(0).label == "B@parent", "a singleton does not depend on which child asked first")
        let fromParent = try fx.resolve("S")
        #expect(fromParent === fromChild)
        let sibling = try fx.child()
        #expect(try fx.resolve("S", in: sibling) === fromParent)
        #expect(fx.tracker.calls("S") == 1)

        fromChild = nil
        child.reset(.singleton)
        #expect(fx.tracker.dropped("S") == 0, "the child's reset does not touch the parent's cache")
        #expect(try fx.resolve("S", in: child) === fromParent)
        fx.container.reset(.singleton)
        #expect(try fx.resolve("S", in: child) !== fromParent)
        #expect(fx.tracker.calls("S") == 2)
    }

    @Test func graphScopedDependentInChildUsesParentSingleton() throws {
        let fx = try Fixture()
        try fx.register("S", scope: .singleton)
        let child = try fx.child()
        try fx.register("A", [dep("S")], in: child)
        let a1 = try fx.resolve("A", in: child), a2 = try fx.resolve("A", in: child)
        #expect(Obj.of(a1).dep(0) === Obj.of(a2).dep(0))
        #expect(try fx.resolve("S").pointer == Obj.of(a1).depPointer(0))
        #expect(fx.tracker.calls("S") == 1)
    }

    @Test func closeIsRefusedWhileChildrenExist() throws {
        let fx = try Fixture()
        try fx.register("A")
        let child = try fx.child()
        let grandchild = try fx.child(of: child)
        expectError(.invalidArgument, "child") { try fx.container.close() }
        #expect(!fx.container.isClosed)
        _ = try fx.resolve("A", in: grandchild)
        _ = try fx.resolve("A")
        expectError(.invalidArgument, "child") { try child.close() }
        try grandchild.close()
        try child.close()
        try fx.container.close()
        #expect(fx.container.isClosed && child.isClosed)
    }

    @Test func closedContainerRefusesEverything() throws {
        let fx = try Fixture()
        try fx.register("A")
        try fx.container.close()
        expectError(.invalidHandle, "already freed") { try fx.container.close() }
        expectError(.invalidHandle, "freed") { try fx.resolve("A") }
        expectError(.invalidHandle, "freed") { try fx.register("B") }
        expectError(.invalidHandle, "parent container was freed") { try fx.child() }
        let kept = try #require(fx.container.registration(for: Key("A")), "kept for resolves under way until dismantled")
        #expect(!kept.isLive)
        fx.container.dismantle()
        #expect(fx.container.registration(for: Key("A")) == nil)
    }

    @Test func closingDuringAResolveLetsItFinish() throws {
        // B's factory frees the container while A's frame (above it) still needs
        // A's registration, spec and container: they stay until dismantle().
        let fx = try Fixture()
        try fx.register("A", [dep("B"), dep("S")], scope: .transient)
        try fx.register("S", scope: .singleton)
        try fx.register("B") { _ in try fx.container.close() }
        let a = try fx.resolve("A")
        #expect(Obj.of(a).dep(0).label == "B" && Obj.of(a).dep(1).label == "S")
        expectError(.invalidHandle, "freed") { try fx.resolve("A") }
        fx.container.dismantle()
        _ = consume a
        #expect(fx.tracker.liveCount == 0)
        #expect(fx.tracker.made("S") == 1 && fx.tracker.dropped("S") == 1)
    }

    @Test func closeReleasesCachesButHeldInstancesOutliveTheContainer() throws {
        let fx = try Fixture()
        try fx.register("S", scope: .singleton)
        try fx.register("T", scope: .singleton)
        _ = try fx.resolve("S")
        var t: Instance? = try fx.resolve("T")
        try fx.container.close()
        #expect(fx.tracker.dropped("S") == 1)
        #expect(fx.tracker.dropped("T") == 0)
        #expect(Obj.of(t!).label == "T")
        t = nil
        #expect(fx.tracker.dropped("T") == 1 && fx.tracker.badDrops == 0)
    }

    @Test func configureRunsBeforeTheRegistrationIsVisible() throws {
        let fx = try Fixture()
        let old = try fx.register("K", label: "K1")
        let seenDuringConfigure = Box<Registration?>(nil)
        let new = try fx.container.register(Key("K"), params: [], factory: ClosureFactory { _ in nil }) { (r: Registration) throws(TetherError) in
            seenDuringConfigure.value = fx.container.registration(for: Key("K"))
            try r.setScope(.singleton)
        }
        #expect(seenDuringConfigure.value === old, "the old registration is served until the new one is ready")
        #expect(new.registration.spec.scope == .singleton)
        #expect(new.replaced === old)
        #expect(fx.container.registration(for: Key("K")) === new.registration)
    }

    @Test func visibleRegistrationsPreferTheChild() throws {
        let fx = try Fixture()
        try fx.register("B", label: "B@parent")
        try fx.register("A")
        let child = try fx.child()
        let override = try fx.register("B", in: child, label: "B@child")
        try fx.register("C", in: child)
        let visible = child.visibleRegistrations()
        #expect(visible.map(\.key.name) == ["A", "B", "C"])
        #expect(visible[1] === override)
        #expect(fx.container.visibleRegistrations().map(\.key.name) == ["A", "B"])
    }

    /// `init(childOf:)` (the ABI's request child) holds its parent by the open-children count only:
    /// the parent refuses to close while it is open, and once closed the child outlives its parent
    /// without reading it (what a closed child is asked answers from the child alone).
    @Test func aChildHeldByTheOpenCountOutlivesItsParentOnceClosed() throws {
        let fx = try Fixture()
        var parent: Container? = try Container(bridge: fx.bridge)
        try fx.register("S", scope: .singleton, in: parent!)
        let child = try Container(childOf: Borrowed(parent!))
        try fx.register("C", [dep("S")], scope: .container, in: child)
        _ = try fx.resolve("C", in: child)
        _ = child.hitToken  // the child's hit word in the parent's list, taken out at the child's close
        expectError(.invalidArgument, "child") { try parent!.close() }
        try child.closeRetiring()
        #expect(fx.tracker.dropped("C") == 1 && fx.tracker.dropped("S") == 0)
        try parent!.close()
        parent!.dismantle()
        parent = nil
        #expect(fx.tracker.dropped("S") == 1)
        expectError(.invalidHandle, "freed") { _ = try child.resolve(Key("C")) }
        expectError(.invalidHandle, "freed") { try child.close() }
        child.dismantle()
        #expect(fx.tracker.badDrops == 0)
    }
}
