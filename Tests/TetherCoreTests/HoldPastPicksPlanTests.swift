// Branch picks (the third; issue 28): caches another thread changes under every creation plan picked, its claims
// let go of each time (a run finding a leaf gone, a run up to a cut finding a key published; kept ones in a
// resolver's request: `KeptCutPlanTests`): past the bound the resolve claims every cell its build would claim and
// holds the weak keys cached (`Graph.claimInOrder(evenOne:)`), then picks once more, which no
// other thread can change under it (before: the build, `notCached`, `sharedRoot`, `creationPicks`). And a failing
// plan's variant walked after the configuration changed (`failureUnderContainer` before: not recorded, the resolve
// picking again, then the build): recorded for the configuration its walk sees. Races forced with the hooks, no sleeps.
import Testing
@testable import TetherCore

@Suite struct HoldPastPicksPlanTests {
    /// Root (transient, or weak and not cached) over S (weak, never cached: a creation step of every plan) and W1..W6
    /// (weak, held by the test): before the claims of the kth creation plan picked, Wk let go of (it dies), so that
    /// plan's run finds its leaf gone and declines, its claims let go of (past `Graph.maxCreationPicks`, the build:
    /// `notCached`, `sharedRoot` for the weak root, before). Past the bound (the fifth pick) the resolve claims Root,
    /// S, W1..W5 and holds W6 (`claimInOrder`): the sixth plan's hook lets go of W6, which the graph holds, and its
    /// run serves the resolve.
    /// `resetsSingleton`: Root over G too (a singleton, cached), reset before the sixth pick's claims: the hold pins no
    /// cached singleton, so that run finds G gone and declines, its claims kept; the seventh pick claims G too and its
    /// plan makes G (before branch reachable: the build, `notCached`, the residual left after branch pickrest).
    @Test(arguments: [(Scope.transient, false), (.weak, false), (.transient, true)])
    func leavesLetGoOfUnderEveryPickRunAPlan(rootScope: Scope, resetsSingleton: Bool) throws {
        let fx = try Fixture()
        let n = 6
        try fx.register("Root", [dep("S")] + (1...n).map { dep("W\($0)") } + (resetsSingleton ? [dep("G")] : []), scope: rootScope)
        try fx.register("S", scope: .weak)
        try fx.register("G", scope: .singleton)
        for k in 1...n { try fx.register("W\(k)", scope: .weak) }
        let holders = Box<[Int: Instance]>([:])
        do {  // the warm plan, every leaf cached; then S (and a weak Root) let go of
            let s = try fx.resolve("S")
            for k in 1...n { holders.value[k] = try fx.resolve("W\(k)") }
            _ = try fx.resolve("Root")
            withExtendedLifetime(s) {}
        }
        let calls = Box(0)
        let root = try #require(fx.container.registration(for: Key("Root")))
        let container = fx.container
        var made: Instance?
        let counts = try withTestHook {
            Graph.setBeforeClaimingCreations { r in
                guard r === root else { return }
                calls.value += 1
                holders.value[calls.value] = nil
                if resetsSingleton && calls.value == n { container.reset(.singleton) }
            }
            defer { Graph.setBeforeClaimingCreations(nil) }
            return try counted { made = try fx.resolve("Root") }
        }
        #expect(counts == ["resolves": 1], "served by the plan picked under the held claims (G reset: the pick after): \(counts)")
        #expect(calls.value == (resetsSingleton ? n + 1 : n), "a creation plan's claims per pick: \(calls.value)")
        let obj = Obj.of(try #require(made))
        for k in 1...n { #expect(obj.dep(k).label == "W\(k)" && fx.tracker.isLive(obj.depPointer(k))) }
        if resetsSingleton { #expect(obj.dep(n + 1).label == "G" && fx.tracker.made("G") == 2, "G reset, made again by the plan") }
        #expect(fx.tracker.made("S") == 2 && fx.tracker.made("Root") == 2)
        for k in 1..<n { #expect(fx.tracker.made("W\(k)") == 2, "W\(k): the warm-up's and the run's") }
        #expect(fx.tracker.made("W\(n)") == 1, "W\(n): held past the bound, taken cached")
        made = nil
        container.reset(.singleton)
        #expect(fx.tracker.liveCount == 0 && fx.tracker.badDrops == 0)
    }

    /// X (transient) whose factory resolves H, nested: H over S1..S6 (singletons, not cached), then X, which this thread
    /// constructs further out: H's plan runs up to where the build asks for X (`Graph.replayMeeting`), its creation
    /// steps claimed first. Before the claims of the kth pick, Sk published by another thread: a cut run's claims let
    /// go of what they find published (past `Graph.maxCreationPicks`, the build: `creationPicks` before). Past the bound
    /// the resolve claims S6 (`claimInOrder`) and picks once more: the other thread's no-wait resolve of S6 is refused,
    /// and the run up to the cut makes S6 (let go of with the graph) and reports the cycle, as the build does.
    @Test func keysPublishedUnderEveryPickOfARunUpToACutRunAPlan() throws {
        let fx = try Fixture()
        let n = 6
        let nested = Box(""), current = Box(false)
        try fx.register("H", (1...n).map { dep("S\($0)") } + [dep("X")], scope: .transient)
        for k in 1...n { try fx.register("S\(k)", scope: .singleton) }
        try fx.register("X", scope: .transient) { _ in
            guard current.value else { return }
            do { _ = try fx.resolve("H"); nested.value = "made" } catch let e as TetherError { nested.value = "\(e.code): \(e.message)" }
        }
        let refused = Box("")
        let calls = Box(0)
        let h = try #require(fx.container.registration(for: Key("H")))
        let counts = try withTestHook {
            Graph.setBeforeClaimingCreations { r in
                guard r === h else { return }
                calls.value += 1
                let k = calls.value
                if k < n {
                    onThreads(1) { _ in _ = try? fx.resolve("S\(k)") }
                } else if k == n {
                    refused.value = resolvedNoWaitElsewhere(fx, "S\(n)")
                }
            }
            defer { Graph.setBeforeClaimingCreations(nil) }
            current.value = true
            defer { current.value = false }
            return try counted { _ = try fx.resolve("X") }
        }
        #expect(counts == ["resolves": 2], "served by the plan picked under the held claims: \(counts)")
        #expect(calls.value == n, "a creation plan's claims per pick: \(calls.value)")
        #expect(refused.value == "\(ErrorCode.wouldBlock)", "S\(n) claimed before the last pick: \(refused.value)")
        #expect(nested.value.hasPrefix("\(ErrorCode.cycle)") && nested.value.contains("\"X\" -> \"H\" -> \"X\""), "\(nested.value)")
        for k in 1..<n { #expect(fx.tracker.made("S\(k)") == 1, "S\(k): the other thread's") }
        #expect(fx.tracker.made("S\(n)") == 1 && fx.tracker.dropped("S\(n)") == 1, "S\(n): made up to the cut, let go of")
        #expect(fx.tracker.made("H") == 0 && fx.tracker.made("X") == 1)
        #expect(fx.tracker.badDrops == 0)
    }

    /// K0 over S (a singleton, not cached) and K1 (container-scoped over `all:K3`, cached in the child before K3 was
    /// registered over K9, which is not): from the child the build takes K1 cached and never meets the missing K9,
    /// so the failing plan's pick runs its variant for K1 cached (`Plan.failingVariant`). Each creating walk reaching S
    /// registers an unrelated key (the recorder's hook), so the configuration changes between the failing plan's
    /// pick and its variant's walk: the variant is recorded for the configuration that walk sees and serves the
    /// resolve (before: not recorded, `failureUnderContainer`; the resolve picked again, the same race, then the build).
    @Test func aFailingPlansVariantWalkedAfterAConfigurationChangeIsThePlans() throws {
        let fx = try Fixture()
        try fx.register("K1", [.all(Key("K3"))], scope: .container)
        let child = try fx.child()
        var k1: Instance? = try fx.resolve("K1", in: child)
        try fx.register("K3", [dep("K9")])
        try fx.register("S", scope: .singleton)
        try fx.register("K0", [dep("S"), dep("K1")])
        let changes = Box(0)
        var made: Instance?
        let counts = try withTestHook {
            Plan.Recorder.setBeforeReadingCache { r in
                guard fx.owns(r), r.key == Key("S"), changes.value < 3 else { return }
                changes.value += 1
                _ = try? fx.register("Other\(changes.value)")
            }
            defer { Plan.Recorder.setBeforeReadingCache(nil) }
            return try counted { made = try fx.resolve("K0", in: child) }
        }
        #expect(changes.value >= 2, "\(changes.value)")
        #expect(counts == ["resolves": 1], "\(counts)")
        let obj = Obj.of(try #require(made))
        #expect(obj.dep(0).label == "S" && obj.depPointer(1) == k1?.pointer, "K1: the child's cached one")
        #expect(fx.tracker.made("S") == 1 && fx.tracker.made("K1") == 1 && fx.tracker.made("K0") == 1)
        (made, k1) = (nil, nil)
        _ = try child.close()
        _ = try fx.container.close()
        #expect(fx.tracker.liveCount == 0 && fx.tracker.badDrops == 0)
    }
}
