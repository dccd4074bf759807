// A graph a plan builds without callbacks is one allocation (`InstanceBlock`): the
// root is an instance, the other nodes records in it. It must behave exactly like
// separate instances: every destructor once, dependents first and in the same
// order, shared dependencies held and let go, weak references and retain-cycle
// checks through it, and the same when its release is nested in another one.
import Testing
import TetherCore

@Suite struct InstanceBlockTests {
    /// A(B(D), C(D, S)), D graph-scoped (shared inside the graph), S a cached singleton.
    private func diamond(_ fx: Fixture) throws {
        try fx.register("A", [dep("B"), dep("C")], scope: .transient)
        try fx.register("B", [dep("D")])
        try fx.register("C", [dep("D"), dep("S")])
        try fx.register("D")
        try fx.register("S", scope: .singleton)
        _ = try fx.resolve("S")
    }

    /// The drop order of one resolve and release of "A".
    private func drops(_ setUp: (Fixture) throws -> Void) throws -> [String] {
        let fx = try Fixture()
        try setUp(fx)
        for _ in 0..<3 { _ = try fx.resolve("A") }
        #expect(fx.tracker.badDrops == 0)
        return fx.tracker.events("drop ")
    }

    @Test func destructionOrderIsTheGraphs() throws {
        let replayed = try drops(diamond)
        // Each of the three resolves: reverse creation order, D after both dependents.
        #expect(replayed == Array(repeating: ["drop A", "drop C", "drop B", "drop D"], count: 3).flatMap { $0 })
        #expect(!replayed.contains("drop S"), "the cached singleton stays")
    }

    @Test func sharedDependencyIsHeldUntilTheBlockGoes() throws {
        let fx = try Fixture()
        try diamond(fx)
        var a: Instance? = try fx.resolve("A")
        #expect(Obj.of(a!).dep(1).depPointer(1) == (try fx.resolve("S")).pointer)
        fx.container.reset(.singleton)
        #expect(fx.tracker.dropped("S") == 0, "the block still holds S")
        a = nil
        #expect(fx.tracker.dropped("S") == 1 && fx.tracker.dropped("D") == 1)
        #expect(fx.tracker.liveCount == 0 && fx.tracker.badDrops == 0)
    }

    @Test func blocksOnManyThreadsKeepSingletonsTheirCacheLetGo() throws {
        // Blocks hold the cached singleton by split references (`SplitEdge`): threads
        // make and drop them while the cache lets go of S again and again; each S is
        // destroyed once, after the last block holding it.
        let fx = try Fixture()
        try diamond(fx)
        nonisolated(unsafe) let shared = fx
        onThreads(3) { thread in
            for i in 0..<2_000 {
                if thread == 0 && i % 100 == 50 { shared.container.reset(.singleton) }
                var kept: [Instance] = []
                if let a = try? shared.resolve("A") {
                    let live = shared.tracker.isLive(Obj.of(a).dep(1).depPointer(1))
                    #expect(live, "the singleton a block holds is alive")
                    if i % 3 == 0 { kept.append(a) }
                }
                kept.removeAll()
            }
        }
        fx.container.reset(.singleton)
        #expect(fx.tracker.liveCount == 0 && fx.tracker.badDrops == 0)
        #expect(fx.tracker.dropped("S") > 1, "the cache let go of S and made another")
    }

    @Test func weakReferenceToTheRootSeesTheWholeGraphGo() throws {
        let fx = try Fixture()
        try diamond(fx)
        var a: Instance? = try fx.resolve("A")
        let weak = a!.weakRef
        #expect(weak.upgrade() === a)
        a = nil
        #expect(weak.upgrade() == nil)
        #expect(fx.tracker.events("drop ") == ["drop A", "drop C", "drop B", "drop D"])
    }

    @Test func releaseNestedInAnotherReleaseKeepsTheOrder() throws {
        // H's object holds a block (A...) and lets it go in H's destructor, while
        // the release of H is draining: the block's records still go dependents first.
        let fx = try Fixture()
        try diamond(fx)
        let held = Box<Instance?>(nil)
        try fx.container.register(Key("H"), params: [], factory: ClosureFactory { _ in
            UnsafeMutableRawPointer(bitPattern: 0x1000)
        }) { (registration: Registration) throws(TetherError) in
            try registration.setScope(.transient)
            registration.setContext(nil) { _, _ in
                fx.tracker.note("drop H")
                held.value = nil
            }
        }
        try fx.register("G", [dep("H")], scope: .transient)
        held.value = try fx.resolve("A")
        var g: Instance? = try fx.resolve("G")
        g = nil
        _ = g
        #expect(fx.tracker.events("drop ") == ["drop G", "drop H", "drop A", "drop C", "drop B", "drop D"])
        #expect(fx.tracker.badDrops == 0)
    }

    @Test func retainCycleThroughABlocksSharedDependencyIsRefused() throws {
        // S (singleton) -lazy-> R, and R's block holds S through M: the late edge
        // S -> R would close S -> R -> S, found through the block's records.
        let fx = try Fixture()
        try fx.register("S", [lazyDep("R")], scope: .singleton)
        try fx.register("R", [dep("M")], scope: .transient)
        try fx.register("M", [dep("S")], scope: .transient)
        let s = try fx.resolve("S")
        _ = try fx.resolve("R")  // records R's plan once S is cached
        let cell = try #require(fx.bridge.cell(Obj.of(s).words[0]))
        expectError(.retainCycle, "lazy dependency \"S\" -> \"R\" would close a retain cycle", "TETHER_WEAK_LAZY(\"R\")") { try cell.get() }
        #expect(fx.tracker.made("R") == 2 && fx.tracker.dropped("R") == 2, "the refused graph is released")
        #expect(fx.tracker.dropped("M") == 2)
    }

    @Test func longestPlannedChainIsOneBlockAndGoesInOrder() throws {
        let fx = try Fixture()
        let n = 60
        for i in 0..<n {
            try fx.register("N\(i)", i + 1 < n ? [dep("N\(i + 1)")] : [], scope: .transient)
        }
        var root: Instance? = try fx.resolve("N0")
        #expect(fx.container.registration(for: Key("N0"))!.hasCurrentPlan)
        root = try fx.resolve("N0")
        #expect(fx.tracker.made("N\(n - 1)") == 2 && fx.tracker.dropped("N\(n - 1)") == 1)
        root = nil
        _ = root
        #expect(Array(fx.tracker.events("drop ").suffix(n)) == (0..<n).map { "drop N\($0)" })
        #expect(fx.tracker.liveCount == 0 && fx.tracker.badDrops == 0)
    }
}
