// A resolver's request that fails (a completion callback's get, a RESOLVER slot's) leaves what it made in the
// graph, which lets go of each in its place, last made first (the model's order, `conformance/model.py`), not
// with a dependent the request made that holds it (branch pydrop: `Graph.keepFailedRequest` reowns them, on
// every path), and in the order made when the request's plan ran a RESOLVER slot's factory (`Graph.enterRunning`
// entered only its keyed steps before the factory's get, so what the get made came before an earlier transient).
import Testing
@testable import TetherCore

@Suite struct FailedRequestDropOrderTests {
    /// Registers with `setUp`, then resolves A three times (each released before the next): the log, and the
    /// resolver requests.
    private func run(_ setUp: (Fixture) throws -> Void) throws -> (log: [String], requests: [String: Int]) {
        let run = try planned { fx -> [String: Int] in
            try setUp(fx)
            return try countedRequests { for _ in 0..<3 { _ = try fx.resolve("A") } }
        }
        return (run.log, run.seen)
    }

    /// A asks for X (from its completion callback, or `slot`: from its factory's RESOLVER slot) -> C (graph-scoped),
    /// Y (transient), T (transient, -> C), F (fails): C, Y and T stay in A's graph, dropped as it ends T, Y, C (the
    /// model's, last made first), not C with T, before Y (both paths before branch pydrop).
    @Test(arguments: [false, true]) func aFailedRequestsInstancesAreDroppedInTheirPlaceNotWithADependent(slot: Bool) throws {
        let (log, requests) = try run { fx in
            let ask: (Resolver) -> Void = { resolver in
                do { _ = try resolver.get(Key("X")) } catch { fx.tracker.note("X failed: \((error as? TetherError).map { "\($0.code)" } ?? "?")") }
            }
            if slot {
                try fx.register("A", [.resolver]) { obj in ask(try #require(fx.bridge.resolver(obj.words[0]))) }
            } else {
                let a = try fx.register("A")
                fx.onComplete(a) { resolver, _, _ in ask(resolver) }
            }
            try fx.register("X", [dep("C"), dep("Y"), dep("T"), dep("F")])
            try fx.register("C")
            try fx.register("Y", scope: .transient)
            try fx.register("T", [dep("C")], scope: .transient)
            try fx.register("F") { _ in throw CallbackFailure(reason: "no F") }
        }
        let request = ["make C", "make Y", "make T", "X failed: factoryFailed"]
        let once = slot ? request + ["make A", "drop T", "drop Y", "drop C", "drop A"]
            : ["make A", "complete A"] + request + ["drop T", "drop Y", "drop C", "drop A"]
        #expect(log == Array(repeating: once, count: 3).flatMap { $0 }, "\(log)")
        #expect(requests == ["requests": 3, "plan": 3], "\(requests)")
    }

    /// A's callback asks for X -> C (transient), T (transient, a RESOLVER slot getting Y, a transient it does not
    /// hold), F (fails): X's plan runs T's factory with C made before it, its get makes Y; dropped as A's graph ends
    /// T, Y, C, the order made (with plans C was entered after Y, dropped before it, before branch pydrop).
    @Test func aFailedRequestDropsWhatItsResolverStepGotAfterItsEarlierSteps() throws {
        let (log, requests) = try run { fx in
            let a = try fx.register("A")
            fx.onComplete(a) { resolver, _, _ in
                do { _ = try resolver.get(Key("X")) } catch { fx.tracker.note("X failed") }
            }
            try fx.register("X", [dep("C"), dep("T"), dep("F")])
            try fx.register("C", scope: .transient)
            try fx.register("T", [.resolver], scope: .transient) { obj in
                _ = try #require(fx.bridge.resolver(obj.words[0])).get(Key("Y"))
            }
            try fx.register("Y", scope: .transient)
            try fx.register("F") { _ in throw CallbackFailure(reason: "no F") }
        }
        let once = ["make A", "complete A", "make C", "make Y", "make T", "X failed", "drop T", "drop Y", "drop C", "drop A"]
        #expect(log == Array(repeating: once, count: 3).flatMap { $0 }, "\(log)")
        // X's plan each time, and T's get of Y (a request made meanwhile, `requestedMeanwhile`) Y's.
        #expect(requests == ["requests": 6, "plan": 6], "\(requests)")
    }
}
