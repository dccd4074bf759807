// Branch keptcut (issue 28): a residual `creationPicks` shape served by a plan. Keys another thread publishes
// before every creation plan's claims (each found where the run cannot take it: the claims kept, `Graph.keepClaims`)
// past `Graph.maxKeptPicks`: the resolve holds every key its build would claim (`claimInOrder`) and picks once
// more, which serves it (before: the build). Races forced with the hooks, no sleeps.
import Synchronization
import Testing
@testable import TetherCore

@Suite struct KeptCutPlanTests {
    /// Root over B1..B18 (weak, each over a graph-scoped D) and C1..C18 (each over its D), every B cached but B1:
    /// before the claims of the kth pick, Bk published by another thread (a run cannot take it: Ck takes Dk under it)
    /// and B(k+1), a leaf of that pick's plan, let go of, so every pick's claims are kept, past `Graph.maxKeptPicks`
    /// (the 17th). Past the bound the resolve claims B18 (`claimInOrder`) and picks once more: its claims find B18
    /// theirs (the other thread's no-wait resolve of it refused), its run makes B18 and takes the 17 published
    /// (before: the build). `request`: Root asked for by T's RESOLVER slot's get, a resolver's request, whose claims
    /// (`claimAsked`) are kept (`keepClaims(request:)`) and, past the bound, hold every key its build would claim too
    /// (`runAsked`; since the third branch picks: the request built before, `creationPicks`).
    @Test(arguments: [false, true]) func keysPublishedPastMaxKeptPicksRunAPlan(request: Bool) throws {
        let fx = try Fixture()
        let n = 18
        try fx.register("Root", (1...n).flatMap { [dep("B\($0)"), dep("C\($0)")] }, scope: .transient)
        for k in 1...n {
            try fx.register("B\(k)", [dep("D\(k)")], scope: .weak)
            try fx.register("C\(k)", [dep("D\(k)")], scope: .transient)
            try fx.register("D\(k)")
        }
        let bridge = fx.bridge
        try fx.register("T", [.resolver], scope: .transient) { obj in
            guard let r = bridge.resolver(obj.words[0]) else { throw TetherError(.factoryFailed, "no resolver") }
            obj.got.append(try r.get(Key("Root")).pointer)
        }
        let holders = Box<[Int: Instance]>([:])
        do {  // the warm plan, every leaf cached; then B1 let go of
            for k in 1...n { holders.value[k] = try fx.resolve("B\(k)") }
            _ = try fx.resolve(request ? "T" : "Root")
            holders.value[1] = nil
        }
        let refused = Box("")
        let calls = Box(0)
        let root = try #require(fx.container.registration(for: Key("Root")))
        var made: Instance?
        var requests: [String: Int] = [:]
        let counts = try withTestHook {
            Graph.setBeforeClaimingCreations { r in
                guard r === root else { return }
                calls.value += 1
                let k = calls.value
                if k < n {
                    onThreads(1) { _ in holders.value[k] = try? fx.resolve("B\(k)") }
                    holders.value[k + 1] = nil
                } else if k == n {
                    refused.value = resolvedNoWaitElsewhere(fx, "B\(n)")
                }
            }
            defer { Graph.setBeforeClaimingCreations(nil) }
            return try counted { requests = try countedRequests { made = try fx.resolve(request ? "T" : "Root") } }
        }
        #expect(counts == ["resolves": 1], "served by the plan picked past the bound: \(counts)")
        #expect(requests == (request ? ["requests": 1, "plan": 1] : [:]), "\(requests)")
        #expect(calls.value == n, "a creation plan's claims per pick: \(calls.value)")
        #expect(refused.value == "\(ErrorCode.wouldBlock)", "B\(n) claimed before the last pick: \(refused.value)")
        let obj = request ? Obj.at(Obj.of(try #require(made)).got[0]) : Obj.of(try #require(made))
        for k in 1..<n {
            #expect(obj.depPointer(2 * (k - 1)) == holders.value[k]?.pointer, "B\(k): the one published at the claims")
            #expect(fx.tracker.made("B\(k)") == 2 && fx.tracker.made("C\(k)") == 2 && fx.tracker.made("D\(k)") == 4, "\(k)")
        }
        #expect(fx.tracker.made("B\(n)") == 2 && fx.tracker.made("C\(n)") == 2 && fx.tracker.made("D\(n)") == 3)
        #expect(obj.dep(2 * (n - 1)).label == "B\(n)" && fx.tracker.isLive(obj.depPointer(2 * (n - 1))))
        #expect(ThreadState.currentReference.borrow { $0.oneShotPlans.count } == 0)
        made = nil
        holders.value = [:]
        #expect(fx.tracker.badDrops == 0)
    }
}
