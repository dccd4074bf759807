// A strong edge made after construction that would close a cycle of strong
// edges is refused (RETAIN_CYCLE, naming the cycle); diamonds and shared
// leaves are not cycles.
import Testing
import TetherCore

@Suite struct RetainCycleTests {
    /// Parent -> Child (constructor); Child's callback asks for Parent strongly,
    /// records what it got, and optionally falls back to a weak edge.
    private func parentChild(fallBackToWeak: Bool) throws -> (Fixture, Box<TetherError?>) {
        let fx = try Fixture()
        try fx.register("Parent", [dep("Child")])
        let child = try fx.register("Child")
        let refusal = Box<TetherError?>(nil)
        fx.onComplete(child) { r, _, obj in
            do {
                obj.got.append(try r.get(Key("Parent")).pointer)
            } catch let e as TetherError {
                refusal.value = e
                guard fallBackToWeak else { throw e }
                obj.weaks.append(try r.getWeak(Key("Parent")))
            }
        }
        return (fx, refusal)
    }

    private func checkRefusal(_ refusal: TetherError?) {
        #expect(refusal?.code == .retainCycle)
        let message = refusal?.message ?? ""
        #expect(message.contains("strong edge \"Child\" -> \"Parent\""), "\(message)")
        #expect(message.contains("would close a retain cycle \"Parent\" -> \"Child\" -> \"Parent\""), "\(message)")
        #expect(message.contains("tether_resolver_get_weak"), "\(message)")
    }

    @Test func refusedEdgeFailsTheResolveAndLeaksNothing() throws {
        let (fx, refusal) = try parentChild(fallBackToWeak: false)
        expectError(.retainCycle, "completion callback #1 of \"Child\" failed", "strong edge \"Child\" -> \"Parent\"") {
            try fx.resolve("Parent")
        }
        checkRefusal(refusal.value)
        #expect(fx.tracker.calls("Parent") == 1 && fx.tracker.calls("Child") == 1)
        #expect(fx.tracker.dropped("Parent") == 1 && fx.tracker.dropped("Child") == 1)
        #expect(fx.tracker.badDrops == 0)
    }

    @Test func callbackFallsBackToAWeakEdge() throws {
        let (fx, refusal) = try parentChild(fallBackToWeak: true)
        var parent: Instance? = try fx.resolve("Parent")
        checkRefusal(refusal.value)
        let child = Obj.of(parent!).dep(0)
        #expect(child.got.isEmpty)
        #expect(child.weaks[0].upgrade() === parent)
        parent = nil
        #expect(fx.tracker.dropped("Parent") == 1 && fx.tracker.dropped("Child") == 1)
    }

    @Test func refusedWhenResolvingTheChild() throws {
        // Child's callback makes Parent (which takes this Child through its
        // constructor); then Child -> Parent would close the cycle.
        let (fx, refusal) = try parentChild(fallBackToWeak: true)
        var child: Instance? = try fx.resolve("Child")
        checkRefusal(refusal.value)
        #expect(fx.tracker.calls("Parent") == 1 && fx.tracker.calls("Child") == 1)
        #expect(fx.tracker.dropped("Parent") == 1, "only a weak edge pointed at Parent")
        #expect(Obj.of(child!).weaks[0].upgrade() == nil)
        child = nil
        #expect(fx.tracker.dropped("Child") == 1)
    }

    @Test func longerCycleIsNamedInFull() throws {
        let fx = try Fixture()
        try fx.register("A", [dep("B")])
        try fx.register("B", [dep("C")])
        let c = try fx.register("C")
        let refusal = Box<TetherError?>(nil)
        fx.onComplete(c) { r, _, _ in
            do { _ = try r.get(Key("A")) } catch let e as TetherError { refusal.value = e }
        }
        _ = try fx.resolve("A")
        #expect(refusal.value?.code == .retainCycle)
        #expect(refusal.value?.message.contains("strong edge \"C\" -> \"A\" would close a retain cycle \"A\" -> \"B\" -> \"C\" -> \"A\"") == true,
                "\(refusal.value?.message ?? "nil")")
    }

    @Test func selfEdgeIsARetainCycle() throws {
        let fx = try Fixture()
        let a = try fx.register("A")
        let refusal = Box<TetherError?>(nil)
        fx.onComplete(a) { r, _, _ in
            do { _ = try r.get(Key("A")) } catch let e as TetherError { refusal.value = e }
        }
        _ = try fx.resolve("A")
        #expect(refusal.value?.code == .retainCycle)
        #expect(refusal.value?.message.contains("strong edge \"A\" -> \"A\"") == true, "\(refusal.value?.message ?? "nil")")
    }

    @Test func diamondIsNotARetainCycle() throws {
        let fx = try Fixture()
        let a = try fx.register("A", [dep("B"), dep("C")])
        let b = try fx.register("B", [dep("D")])
        try fx.register("C", [dep("D")])
        try fx.register("D")
        fx.onComplete(a) { r, _, obj in obj.got.append(try r.get(Key("D")).pointer) }   // A -> D besides A -> B -> D
        fx.onComplete(b) { r, _, obj in obj.got.append(try r.get(Key("C")).pointer) }   // B -> C: a cross edge
        var root: Instance? = try fx.resolve("A")
        let o = Obj.of(root!)
        #expect(o.dep(0).depPointer(0) == o.dep(1).depPointer(0), "one D")
        #expect(o.got == [o.dep(0).depPointer(0)])
        #expect(o.dep(0).got == [o.depPointer(1)])
        for key in ["A", "B", "C", "D"] { #expect(fx.tracker.calls(key) == 1) }
        root = nil
        for key in ["A", "B", "C", "D"] { #expect(fx.tracker.dropped(key) == 1) }
        #expect(fx.tracker.badDrops == 0)
    }

    @Test func sharedLeafTakenByManyCallbacks() throws {
        let fx = try Fixture()
        let a = try fx.register("A", [dep("B"), dep("C")])
        let b = try fx.register("B")
        let c = try fx.register("C")
        try fx.register("L", scope: .singleton)
        for r in [a, b, c] { fx.onComplete(r) { r, _, obj in obj.got.append(try r.get(Key("L")).pointer) } }
        var root: Instance? = try fx.resolve("A")
        let o = Obj.of(root!)
        #expect(o.got == o.dep(0).got && o.got == o.dep(1).got)
        #expect(fx.tracker.calls("L") == 1)
        root = nil
        #expect(fx.tracker.dropped("L") == 0, "the singleton cache still holds it")
        #expect(fx.tracker.dropped("A") == 1)
    }

    @Test func strongEdgeToASingletonThatHoldsUsIsACycle() throws {
        // S (singleton) -> A is a constructor edge; a later strong A -> S closes it.
        let fx = try Fixture()
        try fx.register("S", [dep("A")], scope: .singleton)
        let a = try fx.register("A", scope: .singleton)
        let refusal = Box<TetherError?>(nil)
        fx.onComplete(a) { r, _, _ in
            do { _ = try r.get(Key("S")) } catch let e as TetherError { refusal.value = e }
        }
        _ = try fx.resolve("S")
        #expect(refusal.value?.code == .retainCycle)
        #expect(refusal.value?.message.contains("\"S\" -> \"A\" -> \"S\"") == true, "\(refusal.value?.message ?? "nil")")
    }
}
