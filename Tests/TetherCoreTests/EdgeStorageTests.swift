// How an instance stores its edges: none, one (in the instance's edge word), several
// (in the instance's own allocation), plus late edges in side storage. Each layout must
// keep its targets alive exactly as long as the instance, release each once, take part
// in retain-cycle checks, and release dependents before dependencies.
import Testing
import TetherCore

@Suite struct EdgeStorageTests {
    @Test(arguments: [0, 1, 2, 3, 8])
    func constructorEdgesKeepTargetsAliveUntilTheDependentGoes(edges: Int) throws {
        let fx = try Fixture()
        let leaves = (0..<edges).map { "Leaf\($0)" }
        for leaf in leaves { try fx.register(leaf, scope: .transient) }
        try fx.register("Root", leaves.map { dep($0) }, scope: .transient)
        var root: Instance? = try fx.resolve("Root")
        let obj = Obj.of(root!)
        for (i, leaf) in leaves.enumerated() {
            #expect(obj.dep(i).label == leaf)
            #expect(fx.tracker.made(leaf) == 1 && fx.tracker.dropped(leaf) == 0, "the graph ended: only Root's edge holds \(leaf)")
        }
        root = nil
        #expect(fx.tracker.events("drop ") == ["drop Root"] + leaves.reversed().map { "drop \($0)" }, "Root first, then its edges last first (reverse creation order)")
        #expect(fx.tracker.liveCount == 0 && fx.tracker.badDrops == 0)
    }

    @Test(arguments: [1, 3])
    func lateEdgesJoinConstructorEdges(edges: Int) throws {
        // Root(Leaf0...) whose completion adds a strong edge to Late: the edge word moves
        // to side storage; every target is still held, then released once.
        let fx = try Fixture()
        let leaves = (0..<edges).map { "Leaf\($0)" }
        for leaf in leaves { try fx.register(leaf) }
        try fx.register("Late")
        let root = try fx.register("Root", leaves.map { dep($0) })
        fx.onComplete(root) { r, _, obj in obj.got.append(try r.get(Key("Late")).pointer) }
        var instance: Instance? = try fx.resolve("Root")
        #expect(Obj.of(instance!).got.count == 1)
        #expect(fx.tracker.dropped("Late") == 0 && leaves.allSatisfy { fx.tracker.dropped($0) == 0 })
        instance = nil
        #expect(fx.tracker.events("drop ").first == "drop Root")
        #expect(Set(fx.tracker.events("drop ").dropFirst()) == Set(leaves.map { "drop \($0)" } + ["drop Late"]))
        #expect(fx.tracker.liveCount == 0 && fx.tracker.badDrops == 0)
    }

    @Test func retainCycleThroughEdgesInTheAllocationIsRefused() throws {
        // Root(A, B, C): C's completion asking for Root strongly would close
        // Root -> C -> Root through an edge stored in Root's allocation.
        let fx = try Fixture()
        try fx.register("A")
        try fx.register("B")
        let c = try fx.register("C")
        try fx.register("Root", [dep("A"), dep("B"), dep("C")])
        let refusal = Box<TetherError?>(nil)
        fx.onComplete(c) { r, _, obj in
            do { obj.got.append(try r.get(Key("Root")).pointer) } catch let e as TetherError {
                refusal.value = e
                obj.weaks.append(try r.getWeak(Key("Root")))
            }
        }
        var root: Instance? = try fx.resolve("Root")
        #expect(refusal.value?.code == .retainCycle)
        #expect(refusal.value?.message.contains("\"Root\" -> \"C\" -> \"Root\"") == true, "\(refusal.value?.message ?? "")")
        #expect(Obj.of(root!).dep(2).weaks[0].upgrade() === root)
        root = nil
        #expect(["Root", "A", "B", "C"].allSatisfy { fx.tracker.dropped($0) == 1 })
        #expect(fx.tracker.liveCount == 0 && fx.tracker.badDrops == 0)
    }
}
