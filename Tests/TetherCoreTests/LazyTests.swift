// LAZY / WEAK_LAZY cells: resolve on first use from the dependent's container,
// then hold strongly (a checked edge) or weakly; expired and closed-container
// behaviour; cells die with their dependent.
import Testing
import TetherCore

@Suite struct LazyTests {
    private func cell(_ fx: Fixture, _ instance: Instance, slot: Int = 0) throws -> LazyCell {
        try #require(fx.bridge.cell(Obj.of(instance).words[slot]))
    }

    @Test func strongLazyResolvesOnFirstUseThenHolds() throws {
        let fx = try Fixture()
        try fx.register("A", [lazyDep("B")])
        try fx.register("B")
        var a: Instance? = try fx.resolve("A")
        #expect(fx.tracker.calls("B") == 0, "nothing resolved before the first call")
        var c: LazyCell? = try cell(fx, a!)
        #expect(c!.key == Key("B") && !c!.isWeak)
        let first = try c!.get()
        #expect(Obj.at(first).label == "B")
        #expect(try c!.get() == first)
        #expect(fx.tracker.calls("B") == 1)
        #expect(fx.tracker.dropped("B") == 0, "held by the lazy edge")
        c = nil
        #expect(fx.bridge.cell(0) != nil, "alive with its dependent")
        a = nil
        #expect(fx.tracker.events("drop ") == ["drop A", "drop B"])
        #expect(fx.bridge.cell(0) == nil, "the cell is freed with its dependent")
    }

    @Test func lazyDependencyIsASeparateGraph() throws {
        let fx = try Fixture()
        try fx.register("A", [dep("G"), lazyDep("B")])
        try fx.register("B", [dep("G")])
        try fx.register("G")
        let a = try fx.resolve("A")
        let b = Obj.at(try cell(fx, a, slot: 1).get())
        #expect(b.depPointer(0) != Obj.of(a).depPointer(0), "a new top-level resolve: its own graph-scoped G")
        #expect(fx.tracker.calls("G") == 2)
    }

    @Test func lazyResolvesFromTheDependentsContainer() throws {
        let fx = try Fixture()
        try fx.register("A", [lazyDep("B")])
        try fx.register("B", label: "B@parent")
        let child = try fx.child()
        try fx.register("B", in: child, label: "B@child")
        let fromChild = try fx.resolve("A", in: child)
        #expect(Obj.at(try cell(fx, fromChild).get()).label == "B@child")
        let fromParent = try fx.resolve("A")
        #expect(Obj.at(try cell(fx, fromParent).get()).label == "B@parent")
    }

    @Test func lazyBreaksAConstructorCycle() throws {
        let fx = try Fixture()
        try fx.register("A", [dep("B")], scope: .singleton)
        try fx.register("B", [weakLazyDep("A")])
        let a = try fx.resolve("A")
        let b = Obj.of(a).dep(0)
        let lazyA = try #require(fx.bridge.cell(b.words[0]))
        #expect(try lazyA.get() == a.pointer, "the singleton A, held weakly")
        #expect(fx.tracker.calls("A") == 1 && fx.tracker.calls("B") == 1)
    }

    @Test func weakLazyAnswersTheInstanceOfTheGraphItWasFilledIn() throws {
        // X(Y), Y(weak-lazy X), X graph-scoped: the X that holds this Y, not a second one.
        let fx = try Fixture()
        try fx.register("X", [dep("Y")])
        try fx.register("Y", [weakLazyDep("X")])
        let x = try fx.resolve("X")
        let c = try #require(fx.bridge.cell(Obj.of(x).dep(0).words[0]))
        #expect(try c.get() == x.pointer)
        #expect(fx.tracker.calls("X") == 1 && fx.tracker.calls("Y") == 1)
    }

    @Test func strongLazyBackEdgeIsRefusedAtBindAndNeverBuildsASecondInstance() throws {
        let fx = try Fixture()
        try fx.register("X", [dep("Y")])
        try fx.register("Y", [lazyDep("X")])
        let x = try fx.resolve("X")
        let c = try #require(fx.bridge.cell(Obj.of(x).dep(0).words[0]))
        let error = expectError(.retainCycle, "lazy dependency \"Y\" -> \"X\" would close a retain cycle \"Y\" -> \"X\" -> \"Y\"",
                                "TETHER_WEAK_LAZY(\"X\")") { try c.get() }
        #expect(error?.parts.fix == .weakLazy && error?.parts.target == Key("X"))
        #expect(fx.tracker.calls("X") == 1, "never a second X")
        let check = GraphCheck(fx.container)
        #expect(check.error?.code == .retainCycle)
        #expect(check.dot().contains("\"Y\" -> \"X\" [style=dotted, color=red, penwidth=2]"))
    }

    @Test func strongLazyClosingARetainCycleIsRefused() throws {
        // A (singleton) -lazy-> B -> A: the lazy edge A -> B would close A <- B.
        let fx = try Fixture()
        try fx.register("A", [lazyDep("B")], scope: .singleton)
        try fx.register("B", [dep("A")])
        let a = try fx.resolve("A")
        let c = try cell(fx, a)
        expectError(.retainCycle, "lazy dependency \"A\" -> \"B\" would close a retain cycle \"A\" -> \"B\" -> \"A\"",
                    "TETHER_WEAK_LAZY(\"B\")") { try c.get() }
        #expect(fx.tracker.made("B") == 1 && fx.tracker.dropped("B") == 1, "the refused instance is released")
        expectError(.retainCycle) { try c.get() }
        #expect(fx.tracker.calls("B") == 2, "nothing was kept: the next call tries again")
        #expect(fx.tracker.dropped("A") == 0)
    }

    @Test func weakLazyExpiresWhenNothingElseHoldsTheResult() throws {
        let fx = try Fixture()
        try fx.register("A", [weakLazyDep("B")])
        try fx.register("B")
        let a = try fx.resolve("A")
        let c = try cell(fx, a)
        #expect(c.isWeak)
        expectError(.expired, "the instance is gone") { try c.get() }
        #expect(fx.tracker.made("B") == 1 && fx.tracker.dropped("B") == 1)
        expectError(.expired, "the instance is gone") { try c.get() }
        #expect(fx.tracker.calls("B") == 1, "once gone it stays gone")
    }

    @Test func weakLazyFollowsTheTargetsLifetime() throws {
        let fx = try Fixture()
        try fx.register("A", [weakLazyDep("W")])
        try fx.register("W", scope: .weak)
        var w: Instance? = try fx.resolve("W")
        let a = try fx.resolve("A")
        let c = try cell(fx, a)
        #expect(try c.get() == w!.pointer)
        #expect(try c.get() == w!.pointer)
        w = nil
        #expect(fx.tracker.dropped("W") == 1, "the weak-lazy edge does not keep it")
        expectError(.expired) { try c.get() }
        #expect(fx.tracker.calls("W") == 1)
    }

    @Test func weakLazyToASingletonUntilReset() throws {
        let fx = try Fixture()
        try fx.register("A", [weakLazyDep("S")])
        try fx.register("S", scope: .singleton)
        let a = try fx.resolve("A")
        let c = try cell(fx, a)
        let s = try c.get()
        #expect(Obj.at(s).label == "S")
        fx.container.reset(.singleton)
        #expect(fx.tracker.dropped("S") == 1)
        expectError(.expired, "the instance is gone") { try c.get() }
    }

    @Test func lazyAfterTheContainerWasClosed() throws {
        let fx = try Fixture()
        try fx.register("A", [lazyDep("B"), weakLazyDep("B"), lazyDep("C")])
        try fx.register("B")
        try fx.register("C")
        let a = try fx.resolve("A")
        let used = try cell(fx, a, slot: 2)
        _ = try used.get()
        try fx.container.close()
        expectError(.invalidHandle, "freed") { try cell(fx, a, slot: 0).get() }
        expectError(.invalidHandle, "freed") { try cell(fx, a, slot: 1).get() }
        expectError(.invalidHandle, "freed") { try used.get() }
        #expect(fx.tracker.calls("B") == 0)
        #expect(fx.tracker.dropped("C") == 0, "still held by A")
    }

    @Test func lazyCalledInsideItsOwnersFactory() throws {
        // The owner does not exist yet: a nested top-level resolve on the same thread,
        // while this graph may hold the creation lock (singleton S being made).
        let fx = try Fixture()
        try fx.register("S", [lazyDep("T")], scope: .singleton) { obj in
            let c = try #require(fx.bridge.cell(obj.words[0]))
            obj.got.append(try c.get())
        }
        try fx.register("T", scope: .singleton)
        let s = try fx.resolve("S")
        let t = try fx.resolve("T")
        #expect(Obj.of(s).got == [t.pointer])
        #expect(fx.tracker.calls("T") == 1 && fx.tracker.calls("S") == 1)
    }

    @Test func factoryResolvingItselfThroughALazyCellStopsWithAnError() throws {
        // A nested resolve of A while A is under construction on this thread: a
        // constructor cycle at once, not a recursion down to the nesting limit.
        let fx = try Fixture()
        try fx.register("A", [lazyDep("A")]) { obj in
            _ = try #require(fx.bridge.cell(obj.words[0])).get()
        }
        let error = expectError(.factoryFailed, "factory for \"A\" returned NULL") { try fx.resolve("A") }
        #expect(error?.message.contains("dependency cycle through constructors: \"A\" -> \"A\"") == true)
        #expect(fx.tracker.calls("A") == 1)
        #expect(fx.tracker.made("A") == 0 && fx.tracker.liveCount == 0)
        // The thread is usable afterwards.
        try fx.register("B")
        _ = try fx.resolve("B")
    }

    @Test func providerCellWithoutOwner() throws {
        // What tether_make_provider is: a cell with no dependent.
        let fx = try Fixture()
        try fx.register("G")
        try fx.register("S", scope: .singleton)
        let g = LazyCell(container: fx.container, key: Key("G"), isWeak: false)
        let p = try g.get()
        #expect(try g.get() == p)
        #expect(fx.tracker.calls("G") == 1 && fx.tracker.dropped("G") == 0)
        let s = LazyCell(container: fx.container, key: Key("S"), isWeak: true)
        #expect(try s.get() == fx.resolve("S").pointer)
        let missing = LazyCell(container: fx.container, key: Key("Missing"), isWeak: false)
        expectError(.notFound, "no registration for \"Missing\"") { try missing.get() }
        _ = consume g
        #expect(fx.tracker.dropped("G") == 1, "the cell was the only holder")
    }
}
