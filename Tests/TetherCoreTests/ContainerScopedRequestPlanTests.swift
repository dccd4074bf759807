// A resolver's request for a CONTAINER-scoped key over a singleton or weak key not cached, from a
// child with registrations of its own (issue 28): the component's warm plan declines `notCached` (its
// shared leaf missing), and the request runs the plan for the caches' state, as a request for a key
// not shared does (`Graph.buildShared`), where it was built before branch fuzzreq. Found by the
// fuzz target's differential mode (`TETHER_PLAN_STATS=1 make fuzz-diff`: the exploration's requests built
// for `notCached`), minimised to this shape: single-threaded, it built the same every time.
import Foundation
import Testing
@testable import TetherCore

@Suite struct ContainerScopedRequestPlanTests {
    /// A (graph-scoped) whose completion callback gets S (CONTAINER-scoped, over W: `scope`), resolved
    /// twice from a child with a registration of its own (X, so the child has a component), then the
    /// child closed: the log, A's S each time, and the requests by path.
    private func callbackAsks(w scope: Scope) throws -> (log: [String], sameS: Bool, requests: [String: Int]) {
        let fx = try Fixture()
        try fx.register("W", scope: scope)
        try fx.register("S", [dep("W")], scope: .container)
        let a = try fx.register("A")
        fx.onComplete(a) { resolver, _, obj in obj.got.append(try resolver.get(Key("S")).pointer) }
        let child = try fx.child()
        try fx.register("X", in: child)
        var got: [UnsafeMutableRawPointer] = []
        let requests = try countedRequests {
            for _ in 0..<2 {
                let instance = try fx.resolve("A", in: child)
                got.append(withExtendedLifetime(instance) { Obj.of(instance).got[0] })
                fx.tracker.note("resolved A(+\(Obj.at(got.last!).tree()))")
            }
        }
        _ = try child.close()
        fx.tracker.note("closed")
        #expect(fx.tracker.badDrops == 0)
        return (fx.tracker.log, got[0] == got[1], requests)
    }

    /// W weak: the first request makes W and S into A's graph by S's creation plan from the child (S published into
    /// the child, W held by S), the second finds S cached; the child's close drops S, then W.
    @Test func aCallbacksRequestForAContainerScopedKeyOverAnUncachedWeakKeyIsPlanned() throws {
        let (log, sameS, requests) = try callbackAsks(w: .weak)
        #expect(log == ["make A", "complete A", "make W", "make S", "resolved A(+S(W))", "drop A",
                        "make A", "complete A", "resolved A(+S(W))", "drop A", "drop S", "drop W", "closed"])
        #expect(sameS)
        // (Before branch fuzzreq: ["requests": 2, "found": 1, "notCached": 1].)
        #expect(requests == ["requests": 2, "found": 1, "plan": 1], "\(requests)")
    }

    /// W a singleton: the same, W published into the root (it outlives the child).
    @Test func aCallbacksRequestForAContainerScopedKeyOverAnUncachedSingletonIsPlanned() throws {
        let (log, sameS, requests) = try callbackAsks(w: .singleton)
        #expect(log == ["make A", "complete A", "make W", "make S", "resolved A(+S(W))", "drop A",
                        "make A", "complete A", "resolved A(+S(W))", "drop A", "drop S", "closed"])
        #expect(sameS)
        #expect(requests == ["requests": 2, "found": 1, "plan": 1], "\(requests)")
    }
}
