// A trace hook changes nothing of how a resolve runs: the plans run (in their traced modes)
// and tell the hook what the build tells it, in the build's order, with the same instances,
// statuses and edges. Each shape is traced once, instances named by order of first appearance,
// and its log must be the one written beside it (the build's, which was traced beside it as an
// oracle until branch noplansoff); the plan path is asserted by `PlanStats` (no resolve went to
// `Graph.build`).
import Testing
@testable import TetherCore

@Suite struct TracePlanTests {
    private struct Failed: Error {}

    /// The hook's events as lines, each instance named `KEY#n` by the order it first appeared
    /// (an address used again after a destruction is a new instance).
    final class Log: @unchecked Sendable {  // (`CreationRaceTests` too)
        private let state = Lock<(lines: [String], seen: [UInt])>(([], []))
        var lines: [String] { state.withLock { $0.lines } }

        func hook(_ event: TraceEvent) {
            state.withLock { s in
                func name(_ p: UnsafeMutableRawPointer) -> Int {
                    let word = UInt(bitPattern: p)
                    if let n = s.seen.firstIndex(of: word) { return n + 1 }
                    s.seen.append(word)
                    return s.seen.count
                }
                var line = "\(event.kind) \(event.key.name)"
                if let p = event.instance { line += "#\(name(p))" }
                if let t = event.target { line += " -> \(event.targetKey!.name)#\(name(t))" }
                if let status = event.status { line += " \(status)" }
                s.lines.append(line)
                if event.kind == .destroy, let p = event.instance, let n = s.seen.firstIndex(of: UInt(bitPattern: p)) { s.seen[n] = 0 }
            }
        }

        func note(_ line: String) { state.withLock { $0.lines.append(line) } }
    }

    /// Registers with `setUp`, traces `resolving` (its resolves and releases, `tracing` the
    /// container the hook is set on: the fixture's by default), then closes the containers.
    /// Returns the log and the `PlanStats` counts of `resolving`'s resolves.
    private func traced(_ setUp: (Fixture) throws -> Void,
                        tracing: (Fixture) throws -> Container = { $0.container },
                        _ resolving: (Fixture, Container, Log) throws -> Void) throws -> (log: [String], counts: [String: Int]) {
        let fx = try Fixture()
        try setUp(fx)
        let traced = try tracing(fx)
        let log = Log()
        traced.setTrace { log.hook($0) }
        let counts = try counted { try resolving(fx, traced, log) }
        // Every resolve over, the thread constructs nothing: a run that declined (as a traced one may) left no
        // plan in its progress for a later build's nested resolve to take for its own (a crash, or a false cycle).
        #expect(ThreadState.currentReference.borrow { Reentry.constructing($0).isEmpty })
        if traced !== fx.container { _ = try traced.close() }
        _ = try fx.container.close()
        #expect(fx.tracker.badDrops == 0)
        return (log.lines, counts)
    }

    /// The trace is `expected` (the build's, which ran beside it as an oracle until branch noplansoff), and
    /// no resolve of `resolving` went to `Graph.build`.
    private func expectSameTrace(log expected: [String], _ setUp: @escaping (Fixture) throws -> Void,
                                 tracing: @escaping (Fixture) throws -> Container = { $0.container },
                                 sourceLocation: SourceLocation = #_sourceLocation,
                                 _ resolving: @escaping (Fixture, Container, Log) throws -> Void) throws {
        let planned = try traced(setUp, tracing: tracing, resolving)
        #expect(planned.log == expected, sourceLocation: sourceLocation)
        #expect(!planned.log.isEmpty, sourceLocation: sourceLocation)
        #expect(planned.counts.keys.sorted() == ["resolves"], "\(planned.counts)", sourceLocation: sourceLocation)
    }

    /// Resolves `key` from `container` and releases it at once, noting a failure's status.
    private static func once(_ container: Container, _ key: String, _ log: Log) {
        do {
            _ = try container.resolve(Key(key))
        } catch {
            log.note("failed \(error.code)")
        }
    }

    @Test func creationThenCachedHitsInsideAGraph() throws {
        try expectSameTrace(log: [
            "resolveStart A", "factoryCall S", "factoryReturn S#1", "factoryCall W", "factoryReturn W#2", "factoryCall B",
            "factoryReturn B#3", "edge B#3 -> S#1", "edge B#3 -> W#2", "factoryCall T", "factoryReturn T#4",
            "factoryCall T", "factoryReturn T#5", "factoryCall A", "factoryReturn A#6", "edge A#6 -> B#3",
            "edge A#6 -> S#1", "edge A#6 -> T#4", "edge A#6 -> T#5", "resolveEnd A#6", "resolveStart A", "cacheHit S#1",
            "cacheHit W#2", "factoryCall B", "factoryReturn B#7", "edge B#7 -> S#1", "edge B#7 -> W#2", "factoryCall T",
            "factoryReturn T#8", "factoryCall T", "factoryReturn T#9", "factoryCall A", "factoryReturn A#10",
            "edge A#10 -> B#7", "edge A#10 -> S#1", "edge A#10 -> T#8", "edge A#10 -> T#9", "resolveEnd A#10",
            "resolveStart A", "cacheHit S#1", "cacheHit W#2", "factoryCall B", "factoryReturn B#11", "edge B#11 -> S#1",
            "edge B#11 -> W#2", "factoryCall T", "factoryReturn T#12", "factoryCall T", "factoryReturn T#13",
            "factoryCall A", "factoryReturn A#14", "edge A#14 -> B#11", "edge A#14 -> S#1", "edge A#14 -> T#12",
            "edge A#14 -> T#13", "resolveEnd A#14", "destroy A#6", "destroy T#5", "destroy T#4", "destroy B#3",
            "destroy A#10", "destroy T#9", "destroy T#8", "destroy B#7", "destroy A#14", "destroy T#13", "destroy T#12",
            "destroy B#11", "destroy W#2", "resolveStart S", "cacheHit S#1", "resolveEnd S#1", "resolveStart A",
            "cacheHit S#1", "factoryCall W", "factoryReturn W#15", "factoryCall B", "factoryReturn B#16",
            "edge B#16 -> S#1", "edge B#16 -> W#15", "factoryCall T", "factoryReturn T#17", "factoryCall T",
            "factoryReturn T#18", "factoryCall A", "factoryReturn A#19", "edge A#19 -> B#16", "edge A#19 -> S#1",
            "edge A#19 -> T#17", "edge A#19 -> T#18", "resolveEnd A#19", "destroy A#19", "destroy T#18", "destroy T#17",
            "destroy B#16", "destroy W#15", "destroy S#1"
        ], { fx in
            try fx.register("A", [dep("B"), dep("S"), dep("T"), dep("T")])
            try fx.register("B", [dep("S"), dep("W")])
            try fx.register("S", scope: .singleton)
            try fx.register("W", scope: .weak)
            try fx.register("T", scope: .transient)
        }) { fx, c, log in
            var held: [Instance] = []
            for _ in 0..<3 { held.append(try c.resolve(Key("A"))) }  // a creation plan, then the warm one (W held)
            held.removeAll()
            Self.once(c, "S", log)  // the root's hit
            Self.once(c, "A", log)  // W died with the last A: made again
        }
    }

    @Test func aFactoryFailureRollsBackInTheBuildsOrder() throws {
        let failing = Box(false)
        try expectSameTrace(log: [
            "resolveStart A", "factoryCall D", "factoryReturn D#1", "factoryCall B", "factoryReturn B#2",
            "edge B#2 -> D#1", "factoryCall S", "factoryReturn S#3", "factoryCall D", "factoryReturn D#4", "factoryCall C",
            "factoryReturn C#5", "edge C#5 -> D#4", "factoryCall A", "factoryReturn A#6", "edge A#6 -> B#2",
            "edge A#6 -> S#3", "edge A#6 -> C#5", "resolveEnd A#6", "destroy A#6", "destroy C#5", "destroy D#4",
            "destroy B#2", "destroy D#1", "resolveStart A", "factoryCall D", "factoryReturn D#7", "factoryCall B",
            "factoryReturn B#8", "edge B#8 -> D#7", "cacheHit S#3", "factoryCall D", "factoryReturn D#9", "factoryCall C",
            "factoryReturn C factoryFailed", "destroy D#9", "destroy B#8", "destroy D#7", "resolveEnd A factoryFailed",
            "failed factoryFailed", "resolveStart A", "factoryCall D", "factoryReturn D#10", "factoryCall B",
            "factoryReturn B#11", "edge B#11 -> D#10", "cacheHit S#3", "factoryCall D", "factoryReturn D#12",
            "factoryCall C", "factoryReturn C factoryFailed", "destroy D#12", "destroy B#11", "destroy D#10",
            "resolveEnd A factoryFailed", "failed factoryFailed", "resolveStart A", "factoryCall D", "factoryReturn D#13",
            "factoryCall B", "factoryReturn B#14", "edge B#14 -> D#13", "cacheHit S#3", "factoryCall D",
            "factoryReturn D#15", "factoryCall C", "factoryReturn C#16", "edge C#16 -> D#15", "factoryCall A",
            "factoryReturn A#17", "edge A#17 -> B#14", "edge A#17 -> S#3", "edge A#17 -> C#16", "resolveEnd A#17",
            "destroy A#17", "destroy C#16", "destroy D#15", "destroy B#14", "destroy D#13", "destroy S#3"
        ], { fx in
            try fx.register("A", [dep("B"), dep("S"), dep("C")])
            try fx.register("B", [dep("D")])
            try fx.register("C", [dep("D")], scope: .transient) { _ in if failing.value { throw Failed() } }
            try fx.register("D", scope: .transient)
            try fx.register("S", scope: .singleton)
        }) { fx, c, log in
            failing.value = false
            Self.once(c, "A", log)
            failing.value = true
            Self.once(c, "A", log)  // the warm plan fails at C: B, D, S let go of, last first
            Self.once(c, "A", log)
            failing.value = false
            Self.once(c, "A", log)
        }
    }

    @Test func aCreationPlanThatFailsPublishesNothing() throws {
        let failing = Box(true)
        try expectSameTrace(log: [
            "resolveStart A", "factoryCall D", "factoryReturn D#1", "factoryCall S", "factoryReturn S#2",
            "edge S#2 -> D#1", "factoryCall B", "factoryReturn B factoryFailed", "destroy S#2", "destroy D#1",
            "resolveEnd A factoryFailed", "failed factoryFailed", "resolveStart A", "factoryCall D", "factoryReturn D#3",
            "factoryCall S", "factoryReturn S#4", "edge S#4 -> D#3", "factoryCall B", "factoryReturn B factoryFailed",
            "destroy S#4", "destroy D#3", "resolveEnd A factoryFailed", "failed factoryFailed", "resolveStart A",
            "factoryCall D", "factoryReturn D#5", "factoryCall S", "factoryReturn S#6", "edge S#6 -> D#5", "factoryCall B",
            "factoryReturn B#7", "factoryCall A", "factoryReturn A#8", "edge A#8 -> S#6", "edge A#8 -> B#7",
            "resolveEnd A#8", "destroy A#8", "destroy B#7", "resolveStart A", "cacheHit S#6", "factoryCall B",
            "factoryReturn B#9", "factoryCall A", "factoryReturn A#10", "edge A#10 -> S#6", "edge A#10 -> B#9",
            "resolveEnd A#10", "destroy A#10", "destroy B#9", "destroy S#6", "destroy D#5"
        ], { fx in
            try fx.register("A", [dep("S"), dep("B")])
            try fx.register("S", [dep("D")], scope: .singleton)
            try fx.register("B", scope: .transient) { _ in if failing.value { throw Failed() } }
            try fx.register("D")
        }) { fx, c, log in
            failing.value = true
            Self.once(c, "A", log)
            Self.once(c, "A", log)
            failing.value = false
            Self.once(c, "A", log)
            Self.once(c, "A", log)
        }
    }

    /// Completion callbacks: the plan replays into the graph, which runs them (and their edges) as a build's.
    @Test func completionsAndTheirEdges() throws {
        try expectSameTrace(log: [
            "resolveStart A", "factoryCall C", "factoryReturn C#1", "factoryCall B", "factoryReturn B#2",
            "edge B#2 -> C#1", "factoryCall S", "factoryReturn S#3", "factoryCall A", "factoryReturn A#4",
            "edge A#4 -> B#2", "edge A#4 -> S#3", "weakEdge B#2 -> A#4", "edge B#2 -> S#3", "complete B#2", "complete A#4",
            "resolveEnd A#4", "destroy A#4", "destroy B#2", "destroy C#1", "resolveStart A", "factoryCall C",
            "factoryReturn C#5", "factoryCall B", "factoryReturn B#6", "edge B#6 -> C#5", "cacheHit S#3", "factoryCall A",
            "factoryReturn A#7", "edge A#7 -> B#6", "edge A#7 -> S#3", "weakEdge B#6 -> A#7", "edge B#6 -> S#3",
            "complete B#6", "complete A#7", "resolveEnd A#7", "destroy A#7", "destroy B#6", "destroy C#5",
            "resolveStart A", "factoryCall C", "factoryReturn C#8", "factoryCall B", "factoryReturn B#9",
            "edge B#9 -> C#8", "cacheHit S#3", "factoryCall A", "factoryReturn A#10", "edge A#10 -> B#9",
            "edge A#10 -> S#3", "weakEdge B#9 -> A#10", "edge B#9 -> S#3", "complete B#9", "complete A#10",
            "resolveEnd A#10", "destroy A#10", "destroy B#9", "destroy C#8", "destroy S#3"
        ], { fx in
            try fx.register("A", [dep("B"), dep("S")])
            let b = try fx.register("B", [dep("C")])
            try fx.register("C", scope: .transient)
            try fx.register("S", scope: .singleton)
            fx.onComplete(b) { resolver, _, obj in
                obj.weaks.append(try resolver.getWeak(Key("A")))
                obj.got.append(try resolver.get(Key("S")).pointer)
            }
            let a = fx.container.registration(for: Key("A"))!
            fx.onComplete(a)
        }) { fx, c, log in
            for _ in 0..<3 { Self.once(c, "A", log) }
        }
    }

    @Test func aFailingCompletionRollsBack() throws {
        let failing = Box(false)
        try expectSameTrace(log: [
            "resolveStart A", "factoryCall S", "factoryReturn S#1", "factoryCall B", "factoryReturn B#2",
            "edge B#2 -> S#1", "factoryCall A", "factoryReturn A#3", "edge A#3 -> B#2", "complete B#2", "resolveEnd A#3",
            "destroy A#3", "destroy B#2", "resolveStart A", "cacheHit S#1", "factoryCall B", "factoryReturn B#4",
            "edge B#4 -> S#1", "factoryCall A", "factoryReturn A#5", "edge A#5 -> B#4", "complete B#4 factoryFailed",
            "destroy A#5", "destroy B#4", "resolveEnd A factoryFailed", "failed factoryFailed", "destroy S#1"
        ], { fx in
            try fx.register("A", [dep("B")])
            let b = try fx.register("B", [dep("S")])
            try fx.register("S", scope: .singleton)
            fx.onComplete(b) { _, _, _ in if failing.value { throw Failed() } }
        }) { fx, c, log in
            failing.value = false
            Self.once(c, "A", log)
            failing.value = true
            Self.once(c, "A", log)
        }
    }

    /// WEAK, LAZY, ALL and FACTORY slots: made per resolve in the graph, weak edges told after the strong ones.
    @Test func slotsMadePerResolve() throws {
        try expectSameTrace(log: [
            "resolveStart A", "factoryCall C", "factoryReturn C#1", "factoryCall Plugin", "factoryReturn Plugin#2",
            "factoryCall Plugin#gzip", "factoryReturn Plugin#gzip#3", "factoryCall B", "factoryReturn B#4",
            "edge B#4 -> C#1", "edge B#4 -> Plugin#2", "edge B#4 -> Plugin#gzip#3", "weakEdge B#4 -> C#1", "factoryCall A",
            "factoryReturn A#5", "edge A#5 -> B#4", "edge A#5 -> C#1", "resolveEnd A#5", "destroy A#5", "destroy B#4",
            "destroy Plugin#2", "destroy C#1", "resolveStart A", "factoryCall C", "factoryReturn C#6",
            "factoryCall Plugin", "factoryReturn Plugin#7", "cacheHit Plugin#gzip#3", "factoryCall B", "factoryReturn B#8",
            "edge B#8 -> C#6", "edge B#8 -> Plugin#7", "edge B#8 -> Plugin#gzip#3", "weakEdge B#8 -> C#6", "factoryCall A",
            "factoryReturn A#9", "edge A#9 -> B#8", "edge A#9 -> C#6", "resolveEnd A#9", "destroy A#9", "destroy B#8",
            "destroy Plugin#7", "destroy C#6", "resolveStart A", "factoryCall C", "factoryReturn C#10",
            "factoryCall Plugin", "factoryReturn Plugin#11", "cacheHit Plugin#gzip#3", "factoryCall B",
            "factoryReturn B#12", "edge B#12 -> C#10", "edge B#12 -> Plugin#11", "edge B#12 -> Plugin#gzip#3",
            "weakEdge B#12 -> C#10", "factoryCall A", "factoryReturn A#13", "edge A#13 -> B#12", "edge A#13 -> C#10",
            "resolveEnd A#13", "destroy A#13", "destroy B#12", "destroy Plugin#11", "destroy C#10",
            "destroy Plugin#gzip#3"
        ], { fx in
            try fx.register("A", [dep("B"), dep("C")])
            try fx.register("B", [dep("C"), weakDep("C"), lazyDep("D"), .all(Key("Plugin")), .factory(Key("D"))])
            try fx.register("C")
            try fx.register("D", scope: .transient)
            try fx.register("Plugin", scope: .transient)
            try fx.register("Plugin#gzip", scope: .singleton)
        }) { fx, c, log in
            for _ in 0..<3 { Self.once(c, "A", log) }
        }
    }

    /// Container steps: a request's child makes its container-scoped instances once, then hits them.
    /// What only they asked for (G, S, the container step Q) the build does not ask for once they are cached.
    @Test func containerStepsFromARequestsChild() throws {
        try expectSameTrace(log: [
            "resolveStart H", "cacheHit S#1", "factoryCall G", "factoryReturn G#2", "factoryCall Q", "factoryReturn Q#3",
            "factoryCall R", "factoryReturn R#4", "edge R#4 -> S#1", "edge R#4 -> G#2", "edge R#4 -> Q#3", "cacheHit U#5",
            "factoryCall T", "factoryReturn T#6", "edge T#6 -> U#5", "factoryCall H", "factoryReturn H#7",
            "edge H#7 -> R#4", "edge H#7 -> T#6", "resolveEnd H#7", "destroy H#7", "destroy T#6", "resolveStart H",
            "cacheHit R#4", "cacheHit U#5", "factoryCall T", "factoryReturn T#8", "edge T#8 -> U#5", "factoryCall H",
            "factoryReturn H#9", "edge H#9 -> R#4", "edge H#9 -> T#8", "resolveEnd H#9", "destroy H#9", "destroy T#8",
            "resolveStart H", "cacheHit R#4", "cacheHit U#5", "factoryCall T", "factoryReturn T#10", "edge T#10 -> U#5",
            "factoryCall H", "factoryReturn H#11", "edge H#11 -> R#4", "edge H#11 -> T#10", "resolveEnd H#11",
            "destroy H#11", "destroy T#10", "resolveStart R", "cacheHit R#4", "resolveEnd R#4", "destroy R#4",
            "destroy G#2", "destroy Q#3"
        ], { fx in
            try fx.register("H", [dep("R"), dep("T")], scope: .transient)
            try fx.register("R", [dep("S"), dep("G"), dep("Q")], scope: .container)
            try fx.register("Q", scope: .container)
            try fx.register("G")
            try fx.register("T", [dep("U")])
            try fx.register("U", scope: .singleton)
            try fx.register("S", scope: .singleton)
            // Cached first: a creation plan over container steps is not recorded (`notCached`).
            for key in ["S", "U"] { _ = try fx.container.resolve(Key(key)) }
        }, tracing: { try $0.child() }) { fx, child, log in
            for _ in 0..<3 { Self.once(child, "H", log) }
            Self.once(child, "R", log)
        }
    }

    /// A singleton first asked for under a container step and taken outside too: once the container
    /// step is cached the build finds it where the step outside asks, out of the plan's order; the traced
    /// run tells the hits in the build's walk then (`tellWalkedHits`; `containerInput` before).
    @Test func aSharedStepAskedUnderACachedContainerStepAndOutside() throws {
        try expectSameTrace(log: [
            "resolveStart H", "cacheHit S#1", "factoryCall R", "factoryReturn R#2", "edge R#2 -> S#1", "factoryCall T",
            "factoryReturn T#3", "factoryCall H", "factoryReturn H#4", "edge H#4 -> R#2", "edge H#4 -> T#3",
            "edge H#4 -> S#1", "resolveEnd H#4", "destroy H#4", "destroy T#3", "resolveStart H", "cacheHit R#2",
            "factoryCall T", "factoryReturn T#5", "cacheHit S#1", "factoryCall H", "factoryReturn H#6", "edge H#6 -> R#2",
            "edge H#6 -> T#5", "edge H#6 -> S#1", "resolveEnd H#6", "destroy H#6", "destroy T#5", "resolveStart H",
            "cacheHit R#2", "factoryCall T", "factoryReturn T#7", "cacheHit S#1", "factoryCall H", "factoryReturn H#8",
            "edge H#8 -> R#2", "edge H#8 -> T#7", "edge H#8 -> S#1", "resolveEnd H#8", "destroy H#8", "destroy T#7",
            "destroy R#2"
        ], { fx in
            try fx.register("H", [dep("R"), dep("T"), dep("S")], scope: .transient)
            try fx.register("R", [dep("S")], scope: .container)
            try fx.register("T", scope: .transient)
            try fx.register("S", scope: .singleton)
            _ = try fx.container.resolve(Key("S"))
        }, tracing: { try $0.child() }) { fx, child, log in
            for _ in 0..<3 { Self.once(child, "H", log) }
        }
    }

    /// A plan with a `cachedVariant` (Conn, graph-scoped, asked for first by the container-scoped Session and taken
    /// by the Handler too): once the Session is cached the traced run switches to the variant, which is traced too
    /// (`Plan.runVariant`; before, the all-cached switch ran the variant untraced: no hit, make or edge told).
    @Test func aTracedRunSwitchingToTheCachedVariantTellsTheBuildsEvents() throws {
        try expectSameTrace(log: [
            "resolveStart Handler", "factoryCall Conn", "factoryReturn Conn#1", "factoryCall Session",
            "factoryReturn Session#2", "edge Session#2 -> Conn#1", "factoryCall Clock", "factoryReturn Clock#3",
            "factoryCall Handler", "factoryReturn Handler#4", "edge Handler#4 -> Session#2", "edge Handler#4 -> Clock#3",
            "edge Handler#4 -> Conn#1", "resolveEnd Handler#4", "destroy Handler#4", "destroy Clock#3",
            "resolveStart Handler", "cacheHit Session#2", "factoryCall Clock", "factoryReturn Clock#5", "factoryCall Conn",
            "factoryReturn Conn#6", "factoryCall Handler", "factoryReturn Handler#7", "edge Handler#7 -> Session#2",
            "edge Handler#7 -> Clock#5", "edge Handler#7 -> Conn#6", "resolveEnd Handler#7", "destroy Handler#7",
            "destroy Conn#6", "destroy Clock#5", "resolveStart Handler", "cacheHit Session#2", "factoryCall Clock",
            "factoryReturn Clock#8", "factoryCall Conn", "factoryReturn Conn#9", "factoryCall Handler",
            "factoryReturn Handler#10", "edge Handler#10 -> Session#2", "edge Handler#10 -> Clock#8",
            "edge Handler#10 -> Conn#9", "resolveEnd Handler#10", "destroy Handler#10", "destroy Conn#9",
            "destroy Clock#8", "destroy Session#2", "destroy Conn#1"
        ], { fx in
            try fx.register("Conn")
            try fx.register("Session", [dep("Conn")], scope: .container)
            try fx.register("Clock")
            try fx.register("Handler", [dep("Session"), dep("Clock"), dep("Conn")])
        }, tracing: { try $0.child() }) { fx, child, log in
            for _ in 0..<3 { Self.once(child, "Handler", log) }
        }
    }

    /// The same over more hits: two container steps (the second under the first), a singleton each asks
    /// for that steps outside take too, one in a made step's own walk, and a singleton only they take.
    @Test func sharedStepsAskedUnderCachedContainerStepsAndOutsideInterleave() throws {
        try expectSameTrace(log: [
            "resolveStart H", "cacheHit Q#1", "cacheHit S#2", "cacheHit V#3", "factoryCall R2", "factoryReturn R2#4",
            "edge R2#4 -> V#3", "edge R2#4 -> S#2", "cacheHit U#5", "factoryCall R", "factoryReturn R#6",
            "edge R#6 -> S#2", "edge R#6 -> R2#4", "edge R#6 -> U#5", "factoryCall T", "factoryReturn T#7",
            "edge T#7 -> Q#1", "edge T#7 -> V#3", "factoryCall P", "factoryReturn P#8", "edge P#8 -> U#5", "factoryCall H",
            "factoryReturn H#9", "edge H#9 -> Q#1", "edge H#9 -> R#6", "edge H#9 -> T#7", "edge H#9 -> S#2",
            "edge H#9 -> P#8", "resolveEnd H#9", "destroy H#9", "destroy P#8", "destroy T#7", "resolveStart H",
            "cacheHit Q#1", "cacheHit R#6", "cacheHit V#3", "factoryCall T", "factoryReturn T#10", "edge T#10 -> Q#1",
            "edge T#10 -> V#3", "cacheHit S#2", "cacheHit U#5", "factoryCall P", "factoryReturn P#11", "edge P#11 -> U#5",
            "factoryCall H", "factoryReturn H#12", "edge H#12 -> Q#1", "edge H#12 -> R#6", "edge H#12 -> T#10",
            "edge H#12 -> S#2", "edge H#12 -> P#11", "resolveEnd H#12", "destroy H#12", "destroy P#11", "destroy T#10",
            "resolveStart H", "cacheHit Q#1", "cacheHit R#6", "cacheHit V#3", "factoryCall T", "factoryReturn T#13",
            "edge T#13 -> Q#1", "edge T#13 -> V#3", "cacheHit S#2", "cacheHit U#5", "factoryCall P", "factoryReturn P#14",
            "edge P#14 -> U#5", "factoryCall H", "factoryReturn H#15", "edge H#15 -> Q#1", "edge H#15 -> R#6",
            "edge H#15 -> T#13", "edge H#15 -> S#2", "edge H#15 -> P#14", "resolveEnd H#15", "destroy H#15",
            "destroy P#14", "destroy T#13", "resolveStart R2", "cacheHit R2#4", "resolveEnd R2#4", "resolveStart T",
            "cacheHit Q#1", "cacheHit V#3", "factoryCall T", "factoryReturn T#16", "edge T#16 -> Q#1", "edge T#16 -> V#3",
            "resolveEnd T#16", "destroy T#16", "destroy R#6", "destroy R2#4"
        ], { fx in
            try fx.register("H", [dep("Q"), dep("R"), dep("T"), dep("S"), dep("P")], scope: .transient)
            try fx.register("R", [dep("S"), dep("R2"), dep("U")], scope: .container)
            try fx.register("R2", [dep("V"), dep("S")], scope: .container)
            try fx.register("T", [dep("Q"), dep("V")], scope: .transient)
            try fx.register("P", [dep("U")], scope: .transient)
            for key in ["S", "Q", "U", "V"] { try fx.register(key, scope: .singleton); _ = try fx.container.resolve(Key(key)) }
        }, tracing: { try $0.child() }) { fx, child, log in
            for _ in 0..<3 { Self.once(child, "H", log) }
            Self.once(child, "R2", log)
            Self.once(child, "T", log)
        }
    }

    /// A factory resolving from its container: the nested resolve is traced between the outer factory's call and return.
    @Test func aNestedResolveInAFactory() throws {
        try expectSameTrace(log: [
            "resolveStart A", "factoryCall B", "resolveStart C", "factoryCall S", "factoryReturn S#1", "factoryCall C",
            "factoryReturn C#2", "edge C#2 -> S#1", "resolveEnd C#2", "destroy C#2", "factoryReturn B#3", "factoryCall A",
            "factoryReturn A#4", "edge A#4 -> B#3", "resolveEnd A#4", "destroy A#4", "destroy B#3", "resolveStart A",
            "factoryCall B", "resolveStart C", "cacheHit S#1", "factoryCall C", "factoryReturn C#5", "edge C#5 -> S#1",
            "resolveEnd C#5", "destroy C#5", "factoryReturn B#6", "factoryCall A", "factoryReturn A#7", "edge A#7 -> B#6",
            "resolveEnd A#7", "destroy A#7", "destroy B#6", "resolveStart A", "factoryCall B", "resolveStart C",
            "cacheHit S#1", "factoryCall C", "factoryReturn C#8", "edge C#8 -> S#1", "resolveEnd C#8", "destroy C#8",
            "factoryReturn B#9", "factoryCall A", "factoryReturn A#10", "edge A#10 -> B#9", "resolveEnd A#10",
            "destroy A#10", "destroy B#9", "destroy S#1"
        ], { fx in
            let container = fx.container
            try fx.register("A", [dep("B")])
            try fx.register("B") { _ in _ = try container.resolve(Key("C")) }
            try fx.register("C", [dep("S")], scope: .transient)
            try fx.register("S", scope: .singleton)
        }) { fx, c, log in
            for _ in 0..<3 { Self.once(c, "A", log) }
        }
    }

    /// A dependency not registered: the failing plan makes what the build makes first, then reports it.
    @Test func aFailingPlanMakesWhatTheBuildMakes() throws {
        try expectSameTrace(log: [
            "resolveStart A", "factoryCall S", "factoryReturn S#1", "factoryCall B", "factoryReturn B#2",
            "edge B#2 -> S#1", "destroy B#2", "destroy S#1", "resolveEnd A notFound", "failed notFound", "resolveStart A",
            "factoryCall S", "factoryReturn S#3", "factoryCall B", "factoryReturn B#4", "edge B#4 -> S#3", "destroy B#4",
            "destroy S#3", "resolveEnd A notFound", "failed notFound"
        ], { fx in
            try fx.register("A", [dep("B"), dep("M")])
            try fx.register("B", [dep("S")])
            try fx.register("S", scope: .singleton)
        }) { fx, c, log in
            for _ in 0..<2 { Self.once(c, "A", log) }
        }
    }

    // MARK: resolvers' requests (branch requestplans: the traced request modes, no `requestTraced`)

    /// `expectSameTrace` of resolves whose resolvers' requests run their plans: the same trace, every request
    /// either found in the graph or a cache or served by a plan (`PlanStats.requestsOnThisThread`), `served` of them.
    private func expectSameTracedRequests(served: Int, log expected: [String], sourceLocation: SourceLocation = #_sourceLocation,
                                          _ setUp: @escaping (Fixture) throws -> Void,
                                          _ resolving: @escaping (Fixture, Container, Log) throws -> Void) throws {
        PlanStats.countOnThisThread()
        let before = PlanStats.requestsOnThisThread()
        try expectSameTrace(log: expected, setUp, sourceLocation: sourceLocation, resolving)
        var requests = PlanStats.requestsOnThisThread()
        for (name, n) in before { requests[name, default: 0] -= n }
        let built = requests.filter { !["requests", "found", "plan"].contains($0.key) && $0.value != 0 }
        #expect(built.isEmpty, "\(requests)", sourceLocation: sourceLocation)
        #expect(requests["plan"] == served, "\(requests)", sourceLocation: sourceLocation)
    }

    /// A callback's request for B (B -> D, S, T, C): D the graph's (no hit), S a singleton the graph has (no
    /// hit), T cached outside the graph (a hit where the walk asks), C made; then a request finding B.
    @Test func aCallbacksRequestTellsTheBuildsEvents() throws {
        try expectSameTracedRequests(served: 3, log: [
            "resolveStart T", "factoryCall T", "factoryReturn T#1", "resolveEnd T#1", "resolveStart A", "factoryCall D",
            "factoryReturn D#2", "factoryCall S", "factoryReturn S#3", "factoryCall A", "factoryReturn A#4",
            "edge A#4 -> D#2", "edge A#4 -> S#3", "cacheHit T#1", "factoryCall C", "factoryReturn C#5", "edge C#5 -> T#1",
            "factoryCall B", "factoryReturn B#6", "edge B#6 -> D#2", "edge B#6 -> S#3", "edge B#6 -> T#1",
            "edge B#6 -> C#5", "edge A#4 -> B#6", "edge A#4 -> B#6", "complete A#4", "resolveEnd A#4", "destroy A#4",
            "destroy B#6", "destroy C#5", "destroy D#2", "resolveStart A", "factoryCall D", "factoryReturn D#7",
            "cacheHit S#3", "factoryCall A", "factoryReturn A#8", "edge A#8 -> D#7", "edge A#8 -> S#3", "cacheHit T#1",
            "factoryCall C", "factoryReturn C#9", "edge C#9 -> T#1", "factoryCall B", "factoryReturn B#10",
            "edge B#10 -> D#7", "edge B#10 -> S#3", "edge B#10 -> T#1", "edge B#10 -> C#9", "edge A#8 -> B#10",
            "edge A#8 -> B#10", "complete A#8", "resolveEnd A#8", "destroy A#8", "destroy B#10", "destroy C#9",
            "destroy D#7", "resolveStart A", "factoryCall D", "factoryReturn D#11", "cacheHit S#3", "factoryCall A",
            "factoryReturn A#12", "edge A#12 -> D#11", "edge A#12 -> S#3", "cacheHit T#1", "factoryCall C",
            "factoryReturn C#13", "edge C#13 -> T#1", "factoryCall B", "factoryReturn B#14", "edge B#14 -> D#11",
            "edge B#14 -> S#3", "edge B#14 -> T#1", "edge B#14 -> C#13", "edge A#12 -> B#14", "edge A#12 -> B#14",
            "complete A#12", "resolveEnd A#12", "destroy A#12", "destroy B#14", "destroy C#13", "destroy D#11",
            "destroy S#3", "destroy T#1"
        ], { fx in
            let a = try fx.register("A", [dep("D"), dep("S")])
            try fx.register("B", [dep("D"), dep("S"), dep("T"), dep("C")])
            try fx.register("C", [dep("T")], scope: .transient)
            try fx.register("D")
            try fx.register("S", scope: .singleton)
            try fx.register("T", scope: .singleton)
            fx.onComplete(a) { resolver, _, obj in
                obj.got.append(try resolver.get(Key("B")).pointer)
                obj.got.append(try resolver.get(Key("B")).pointer)
            }
        }) { fx, c, log in
            _ = try c.resolve(Key("T"))
            for _ in 0..<3 { Self.once(c, "A", log) }
        }
    }

    /// A callback's request creating singletons (U -> V, neither cached): the creation plan's events, then hits.
    @Test func aCallbacksRequestCreatingSingletons() throws {
        try expectSameTracedRequests(served: 1, log: [
            "resolveStart A", "factoryCall A", "factoryReturn A#1", "factoryCall V", "factoryReturn V#2", "factoryCall C",
            "factoryReturn C#3", "factoryCall U", "factoryReturn U#4", "edge U#4 -> V#2", "edge U#4 -> C#3",
            "edge A#1 -> U#4", "complete A#1", "resolveEnd A#1", "destroy A#1", "resolveStart A", "factoryCall A",
            "factoryReturn A#5", "cacheHit U#4", "edge A#5 -> U#4", "complete A#5", "resolveEnd A#5", "destroy A#5",
            "resolveStart A", "factoryCall A", "factoryReturn A#6", "cacheHit U#4", "edge A#6 -> U#4", "complete A#6",
            "resolveEnd A#6", "destroy A#6", "destroy U#4", "destroy C#3", "destroy V#2"
        ], { fx in
            let a = try fx.register("A")
            try fx.register("U", [dep("V"), dep("C")], scope: .singleton)
            try fx.register("V", scope: .singleton)
            try fx.register("C", scope: .transient)
            fx.onComplete(a) { resolver, _, obj in obj.got.append(try resolver.get(Key("U")).pointer) }
        }) { fx, c, log in
            for _ in 0..<3 { Self.once(c, "A", log) }
        }
    }

    /// A RESOLVER slot's request (F's factory asks for B -> C, S) and a request whose factory fails (E after
    /// making C): the factory's return with its status, what was made kept in the graph till it ends.
    @Test func aFactorysRequestAndAFailingOne() throws {
        try expectSameTracedRequests(served: 6, log: [
            "resolveStart F", "factoryCall S", "factoryReturn S#1", "factoryCall F", "factoryCall C", "factoryReturn C#2",
            "factoryCall B", "factoryReturn B#3", "edge B#3 -> C#2", "edge B#3 -> S#1", "factoryCall G",
            "factoryReturn G#4", "factoryCall E", "factoryReturn E factoryFailed", "factoryReturn F#5", "edge F#5 -> S#1",
            "edge F#5 -> B#3", "destroy G#4", "resolveEnd F#5", "destroy F#5", "destroy B#3", "destroy C#2",
            "resolveStart F", "cacheHit S#1", "factoryCall F", "factoryCall C", "factoryReturn C#6", "factoryCall B",
            "factoryReturn B#7", "edge B#7 -> C#6", "edge B#7 -> S#1", "factoryCall G", "factoryReturn G#8",
            "factoryCall E", "factoryReturn E factoryFailed", "factoryReturn F#9", "edge F#9 -> S#1", "edge F#9 -> B#7",
            "destroy G#8", "resolveEnd F#9", "destroy F#9", "destroy B#7", "destroy C#6", "resolveStart F", "cacheHit S#1",
            "factoryCall F", "factoryCall C", "factoryReturn C#10", "factoryCall B", "factoryReturn B#11",
            "edge B#11 -> C#10", "edge B#11 -> S#1", "factoryCall G", "factoryReturn G#12", "factoryCall E",
            "factoryReturn E factoryFailed", "factoryReturn F#13", "edge F#13 -> S#1", "edge F#13 -> B#11", "destroy G#12",
            "resolveEnd F#13", "destroy F#13", "destroy B#11", "destroy C#10", "destroy S#1"
        ], { fx in
            try fx.register("F", [.resolver, dep("S")]) { obj in
                let resolver = try #require(fx.bridge.resolver(obj.words[0]))
                _ = try resolver.get(Key("B"))
                do { _ = try resolver.get(Key("E")) } catch { fx.tracker.note("E failed") }
            }
            try fx.register("B", [dep("C"), dep("S")])
            try fx.register("E", [dep("G")]) { _ in throw CallbackFailure(reason: "no E") }
            try fx.register("G", scope: .transient)
            try fx.register("C", scope: .transient)
            try fx.register("S", scope: .singleton)
        }) { fx, c, log in
            for _ in 0..<3 { Self.once(c, "F", log) }
        }
    }

    /// A callback's request inside a nested resolve meeting the key constructed further out (X's factory resolves
    /// Y; Y's callback asks for Z -> S1, W, X, S2): the run up to where the build asks for X, traced
    /// (`TracedRequestCutIntoGraph`): S1's hit and W's events, none of S2 (the build never asked for it).
    @Test func aCallbacksRequestRunUpToACut() throws {
        try expectSameTracedRequests(served: 3, log: [
            "resolveStart S1", "factoryCall S1", "factoryReturn S1#1", "resolveEnd S1#1", "resolveStart S2",
            "factoryCall S2", "factoryReturn S2#2", "resolveEnd S2#2", "resolveStart X", "factoryCall X", "resolveStart Y",
            "factoryCall Y", "factoryReturn Y#3", "cacheHit S1#1", "factoryCall W", "factoryReturn W#4", "complete Y#3",
            "destroy W#4", "resolveEnd Y#3", "destroy Y#3", "factoryReturn X#5", "resolveEnd X#5", "destroy X#5",
            "resolveStart X", "factoryCall X", "resolveStart Y", "factoryCall Y", "factoryReturn Y#6", "cacheHit S1#1",
            "factoryCall W", "factoryReturn W#7", "complete Y#6", "destroy W#7", "resolveEnd Y#6", "destroy Y#6",
            "factoryReturn X#8", "resolveEnd X#8", "destroy X#8", "resolveStart X", "factoryCall X", "resolveStart Y",
            "factoryCall Y", "factoryReturn Y#9", "cacheHit S1#1", "factoryCall W", "factoryReturn W#10", "complete Y#9",
            "destroy W#10", "resolveEnd Y#9", "destroy Y#9", "factoryReturn X#11", "resolveEnd X#11", "destroy X#11",
            "destroy S2#2", "destroy S1#1"
        ], { fx in
            try fx.register("X") { _ in _ = try fx.resolve("Y") }
            let y = try fx.register("Y")
            try fx.register("Z", [dep("S1"), dep("W"), dep("X"), dep("S2")])
            try fx.register("W", scope: .transient)
            try fx.register("S1", scope: .singleton)
            try fx.register("S2", scope: .singleton)
            fx.onComplete(y) { resolver, _, _ in
                do { _ = try resolver.get(Key("Z")) } catch { fx.tracker.note("Z failed") }
            }
        }) { fx, c, log in
            _ = try c.resolve(Key("S1"))
            _ = try c.resolve(Key("S2"))
            for _ in 0..<3 { Self.once(c, "X", log) }
            #expect(fx.tracker.events("Z failed").count == 3)
        }
    }

    /// A failing plan under a container-scoped key (`Plan.Failing.containers`): `K1` cached, its variant's traced run
    /// tells `K1`'s hit between the build's factories (`Plan.pickedForCaches`); `K2` not cached, the failing plan's
    /// run tells `T`'s events and its destruction, then the cycle, as the build.
    @Test func aCycleUnderAContainerKeyCachedOrNotTracesTheBuilds() throws {
        try expectSameTrace(log: [
            "resolveStart K1", "factoryCall K1", "factoryReturn K1#1", "resolveEnd K1#1", "resolveStart K0",
            "factoryCall T", "factoryReturn T#2", "cacheHit K1#1", "factoryCall T", "factoryReturn T#3", "factoryCall K0",
            "factoryReturn K0#4", "edge K0#4 -> T#2", "edge K0#4 -> K1#1", "edge K0#4 -> T#3", "resolveEnd K0#4",
            "destroy K0#4", "destroy T#3", "destroy T#2", "resolveStart K0", "factoryCall T", "factoryReturn T#5",
            "cacheHit K1#1", "factoryCall T", "factoryReturn T#6", "factoryCall K0", "factoryReturn K0#7",
            "edge K0#7 -> T#5", "edge K0#7 -> K1#1", "edge K0#7 -> T#6", "resolveEnd K0#7", "destroy K0#7", "destroy T#6",
            "destroy T#5", "resolveStart K3", "factoryCall T", "factoryReturn T#8", "destroy T#8", "resolveEnd K3 cycle",
            "failed cycle", "destroy K1#1"
        ], { fx in
            try fx.register("K1", [.all(Key("K0"))], scope: .container)
            try fx.register("K2", [dep("K3")], scope: .container)
            try fx.register("K3", [dep("T"), dep("K2")])
            try fx.register("T", scope: .transient)
        }) { fx, c, log in
            Self.once(c, "K1", log)
            try fx.register("K0", [dep("T"), dep("K1"), dep("T")])
            for _ in 0..<2 { Self.once(c, "K0", log) }
            Self.once(c, "K3", log)
        }
    }

    /// A failing plan's first claim (K3's, `claimInOrder` past its error) refused after A's factory (K0, past the error, made
    /// further out and not finished): the run up to there (`Graph.replayPastFailure`) tells A's events as the build does.
    @Test func aFailingPlansFirstClaimAfterAFactoryTracesTheBuilds() throws {
        try expectSameTrace(log: [
            "resolveStart K0", "factoryCall K0", "factoryReturn K0#1", "factoryCall K2", "resolveStart R", "factoryCall A",
            "factoryReturn A#2", "destroy A#2", "resolveEnd R cycle", "factoryReturn K2#3", "edge K0#1 -> K2#3",
            "complete K0#1", "resolveEnd K0#1", "destroy K0#1", "destroy K2#3"
        ], { fx in
            try fx.register("A")
            try fx.register("R", [dep("A"), dep("K3")])
            try fx.register("K2") { _ in _ = try? fx.resolve("R") }
            try fx.register("K3", [dep("Missing"), dep("K0")], scope: .singleton)
            let k0 = try fx.register("K0", scope: .container)
            fx.onComplete(k0) { resolver, _, obj in obj.got.append(try resolver.get(Key("K2")).pointer) }
        }) { fx, c, log in
            Self.once(c, "K0", log)
        }
    }
}

extension TracePlanTests {
    /// A traced nested resolve meeting a key further out (X's factory resolves the Handler, which asks for X): its plan's
    /// run up to the cut tells the hook what the build does before it meets X (`TracedCutIntoGraph`,
    /// `TracedCreatingCutIntoGraph`; before branch cutswitch the cut run told nothing: no factory call, return or
    /// destruction of Clock). Shape 0: plain; 1: the cached Session asks for X, so the plan with it a leaf meets X where
    /// the Handler asks (`Plan.variant(forCached:cut:)`); 2: the `cachedVariant` up to the cut; 3: a creating run (S, a
    /// singleton not cached, made and let go of). Creating runs finding container steps cached (a weak W, dead at every
    /// resolve; branch heldcut, `containerHeld` before): 4, some (the creating `mixedVariant` up to the cut); 5, the asker.
    @Test(arguments: 0..<6) func aTracedNestedResolveRunUpToACutTellsTheBuildsEvents(shape: Int) throws {
        let logs: [[String]] = [
            [
                "resolveStart Handler", "factoryCall Clock", "factoryReturn Clock#1", "factoryCall X", "factoryReturn X#2",
                "factoryCall Handler", "factoryReturn Handler#3", "edge Handler#3 -> Clock#1", "edge Handler#3 -> X#2",
                "resolveEnd Handler#3", "destroy Handler#3", "destroy X#2", "destroy Clock#1", "resolveStart X",
                "factoryCall X", "resolveStart Handler", "factoryCall Clock", "factoryReturn Clock#4", "destroy Clock#4",
                "resolveEnd Handler cycle", "factoryReturn X#5", "resolveEnd X#5", "destroy X#5", "resolveStart X",
                "factoryCall X", "resolveStart Handler", "factoryCall Clock", "factoryReturn Clock#6", "destroy Clock#6",
                "resolveEnd Handler cycle", "factoryReturn X#7", "resolveEnd X#7", "destroy X#7"
            ],
            [
                "resolveStart Session", "factoryCall X", "factoryReturn X#1", "factoryCall Session",
                "factoryReturn Session#2", "edge Session#2 -> X#1", "resolveEnd Session#2", "resolveStart Handler",
                "cacheHit Session#2", "factoryCall Clock", "factoryReturn Clock#3", "factoryCall X", "factoryReturn X#4",
                "factoryCall Handler", "factoryReturn Handler#5", "edge Handler#5 -> Session#2",
                "edge Handler#5 -> Clock#3", "edge Handler#5 -> X#4", "resolveEnd Handler#5", "destroy Handler#5",
                "destroy X#4", "destroy Clock#3", "resolveStart X", "factoryCall X", "resolveStart Handler",
                "cacheHit Session#2", "factoryCall Clock", "factoryReturn Clock#6", "destroy Clock#6",
                "resolveEnd Handler cycle", "factoryReturn X#7", "resolveEnd X#7", "destroy X#7", "resolveStart X",
                "factoryCall X", "resolveStart Handler", "cacheHit Session#2", "factoryCall Clock",
                "factoryReturn Clock#8", "destroy Clock#8", "resolveEnd Handler cycle", "factoryReturn X#9",
                "resolveEnd X#9", "destroy X#9", "destroy Session#2", "destroy X#1"
            ],
            [
                "resolveStart Session", "factoryCall Conn", "factoryReturn Conn#1", "factoryCall Session",
                "factoryReturn Session#2", "edge Session#2 -> Conn#1", "resolveEnd Session#2", "resolveStart Handler",
                "cacheHit Session#2", "factoryCall Clock", "factoryReturn Clock#3", "factoryCall Conn",
                "factoryReturn Conn#4", "factoryCall X", "factoryReturn X#5", "factoryCall Handler",
                "factoryReturn Handler#6", "edge Handler#6 -> Session#2", "edge Handler#6 -> Clock#3",
                "edge Handler#6 -> Conn#4", "edge Handler#6 -> X#5", "resolveEnd Handler#6", "destroy Handler#6",
                "destroy X#5", "destroy Conn#4", "destroy Clock#3", "resolveStart X", "factoryCall X",
                "resolveStart Handler", "cacheHit Session#2", "factoryCall Clock", "factoryReturn Clock#7",
                "factoryCall Conn", "factoryReturn Conn#8", "destroy Conn#8", "destroy Clock#7",
                "resolveEnd Handler cycle", "factoryReturn X#9", "resolveEnd X#9", "destroy X#9", "resolveStart X",
                "factoryCall X", "resolveStart Handler", "cacheHit Session#2", "factoryCall Clock",
                "factoryReturn Clock#10", "factoryCall Conn", "factoryReturn Conn#11", "destroy Conn#11",
                "destroy Clock#10", "resolveEnd Handler cycle", "factoryReturn X#12", "resolveEnd X#12", "destroy X#12",
                "destroy Session#2", "destroy Conn#1"
            ],
            [
                "resolveStart Session", "factoryCall Conn", "factoryReturn Conn#1", "factoryCall Session",
                "factoryReturn Session#2", "edge Session#2 -> Conn#1", "resolveEnd Session#2", "resolveStart X",
                "factoryCall X", "resolveStart Handler", "factoryCall S", "factoryReturn S#3", "factoryCall Clock",
                "factoryReturn Clock#4", "destroy Clock#4", "destroy S#3", "resolveEnd Handler cycle", "factoryReturn X#5",
                "resolveEnd X#5", "destroy X#5", "resolveStart X", "factoryCall X", "resolveStart Handler",
                "factoryCall S", "factoryReturn S#6", "factoryCall Clock", "factoryReturn Clock#7", "destroy Clock#7",
                "destroy S#6", "resolveEnd Handler cycle", "factoryReturn X#8", "resolveEnd X#8", "destroy X#8",
                "destroy Session#2", "destroy Conn#1"
            ],
            [
                "resolveStart Session", "factoryCall Conn", "factoryReturn Conn#1", "factoryCall Session",
                "factoryReturn Session#2", "edge Session#2 -> Conn#1", "resolveEnd Session#2", "resolveStart Handler",
                "cacheHit Session#2", "factoryCall Clock", "factoryReturn Clock#3", "factoryCall W", "factoryReturn W#4",
                "factoryCall Conn", "factoryReturn Conn#5", "factoryCall Late", "factoryReturn Late#6",
                "edge Late#6 -> Conn#5", "factoryCall X", "factoryReturn X#7", "factoryCall Handler",
                "factoryReturn Handler#8", "edge Handler#8 -> Session#2", "edge Handler#8 -> Clock#3",
                "edge Handler#8 -> W#4", "edge Handler#8 -> Late#6", "edge Handler#8 -> X#7", "resolveEnd Handler#8",
                "destroy Handler#8", "destroy X#7", "destroy W#4", "destroy Clock#3", "resolveStart X", "factoryCall X",
                "resolveStart Handler", "cacheHit Session#2", "factoryCall Clock", "factoryReturn Clock#9",
                "factoryCall W", "factoryReturn W#10", "cacheHit Late#6", "destroy W#10", "destroy Clock#9",
                "resolveEnd Handler cycle", "factoryReturn X#11", "resolveEnd X#11", "destroy X#11", "resolveStart X",
                "factoryCall X", "resolveStart Handler", "cacheHit Session#2", "factoryCall Clock",
                "factoryReturn Clock#12", "factoryCall W", "factoryReturn W#13", "cacheHit Late#6", "destroy W#13",
                "destroy Clock#12", "resolveEnd Handler cycle", "factoryReturn X#14", "resolveEnd X#14", "destroy X#14",
                "destroy Late#6", "destroy Conn#5", "destroy Session#2", "destroy Conn#1"
            ],
            [
                "resolveStart Session", "factoryCall X", "factoryReturn X#1", "factoryCall Session",
                "factoryReturn Session#2", "edge Session#2 -> X#1", "resolveEnd Session#2", "resolveStart Handler",
                "factoryCall W", "factoryReturn W#3", "cacheHit Session#2", "factoryCall Clock", "factoryReturn Clock#4",
                "factoryCall Handler", "factoryReturn Handler#5", "edge Handler#5 -> W#3", "edge Handler#5 -> Session#2",
                "edge Handler#5 -> Clock#4", "resolveEnd Handler#5", "destroy Handler#5", "destroy Clock#4", "destroy W#3",
                "resolveStart X", "factoryCall X", "resolveStart Handler", "factoryCall W", "factoryReturn W#6",
                "cacheHit Session#2", "factoryCall Clock", "factoryReturn Clock#7", "factoryCall Handler",
                "factoryReturn Handler#8", "edge Handler#8 -> W#6", "edge Handler#8 -> Session#2",
                "edge Handler#8 -> Clock#7", "resolveEnd Handler#8", "destroy Handler#8", "destroy Clock#7", "destroy W#6",
                "factoryReturn X#9", "resolveEnd X#9", "destroy X#9", "resolveStart X", "factoryCall X",
                "resolveStart Handler", "factoryCall W", "factoryReturn W#10", "cacheHit Session#2", "factoryCall Clock",
                "factoryReturn Clock#11", "factoryCall Handler", "factoryReturn Handler#12", "edge Handler#12 -> W#10",
                "edge Handler#12 -> Session#2", "edge Handler#12 -> Clock#11", "resolveEnd Handler#12",
                "destroy Handler#12", "destroy Clock#11", "destroy W#10", "factoryReturn X#13", "resolveEnd X#13",
                "destroy X#13", "destroy Session#2", "destroy X#1"
            ]
        ]
        let nesting = Box(false), current = Box<Container?>(nil)
        try expectSameTrace(log: logs[shape], { fx in
            try fx.register("Clock")
            try fx.register("Conn")
            try fx.register("X", scope: .transient) { _ in
                guard nesting.value else { return }
                _ = try? fx.resolve("Handler", in: current.value!)
            }
            switch shape {
            case 0: try fx.register("Handler", [dep("Clock"), dep("X")], scope: .transient)
            case 1:
                try fx.register("Session", [dep("X")], scope: .container)
                try fx.register("Handler", [dep("Session"), dep("Clock"), dep("X")], scope: .transient)
            case 2:
                try fx.register("Session", [dep("Conn")], scope: .container)
                try fx.register("Handler", [dep("Session"), dep("Clock"), dep("Conn"), dep("X")], scope: .transient)
            case 3:
                try fx.register("S", scope: .singleton)
                try fx.register("Session", [dep("Conn")], scope: .container)
                try fx.register("Handler", [dep("S"), dep("Clock"), dep("X")], scope: .transient)
            case 4:
                try fx.register("W", scope: .weak)
                try fx.register("Session", [dep("Conn")], scope: .container)
                try fx.register("Late", [dep("Conn")], scope: .container)
                try fx.register("Handler", [dep("Session"), dep("Clock"), dep("W"), dep("Late"), dep("X")], scope: .transient)
            default:
                try fx.register("W", scope: .weak)
                try fx.register("Session", [dep("X")], scope: .container)
                try fx.register("Handler", [dep("W"), dep("Session"), dep("Clock")], scope: .transient)
            }
        }, tracing: { fx in let c = try fx.child(); current.value = c; return c }) { fx, child, log in
            nesting.value = false
            if shape != 0 { Self.once(child, "Session", log) }
            if shape != 3 { Self.once(child, "Handler", log) }
            nesting.value = true
            for _ in 0..<2 { Self.once(child, "X", log) }
            nesting.value = false
        }
    }
}
