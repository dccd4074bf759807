// Plans past `Plan.maxSteps` steps or `Plan.maxSlots` slots in one factory (`Plan.isLarge`):
// their runs' buffers are allocated for them, so they run as plans (no resolve goes to
// `Graph.build`), with the build's factory calls, slots, identities and destructor order.
import Testing
@testable import TetherCore

@Suite struct LargePlanTests {
    /// What the resolves of `resolving` did, with plans on or off, and the `PlanStats` counts.
    private func run(plans: Bool, _ setUp: (Fixture) throws -> Void,
                     _ resolving: (Fixture) throws -> [String]) throws -> (log: [String], seen: [String], counts: [String: Int]) {
        let fx = try Fixture()
        fx.container.usesPlans = plans
        try setUp(fx)
        var seen: [String] = []
        let counts = try counted { seen = try resolving(fx) }
        _ = try fx.container.close()
        #expect(fx.tracker.badDrops == 0 && fx.tracker.liveCount == 0)
        return (fx.tracker.log, seen, counts)
    }

    /// The plan's run is the build's, and every resolve of `resolving` ran a plan.
    private func expectPlannedAsBuilt(_ setUp: @escaping (Fixture) throws -> Void,
                                      sourceLocation: SourceLocation = #_sourceLocation,
                                      _ resolving: @escaping (Fixture) throws -> [String]) throws {
        let planned = try run(plans: true, setUp, resolving)
        let built = try run(plans: false, setUp, resolving)
        #expect(planned.log == built.log, sourceLocation: sourceLocation)
        #expect(planned.seen == built.seen, sourceLocation: sourceLocation)
        #expect(planned.counts.keys.sorted() == ["resolves"], "\(planned.counts)", sourceLocation: sourceLocation)
        #expect(built.counts["plansOff"] != nil, sourceLocation: sourceLocation)
    }

    /// The labels below `obj`, depth first, each strong slot's subtree (a transient's label repeats).
    private static func tree(_ obj: Obj, _ out: inout [String]) {
        out.append(obj.label)
        for word in obj.words where word > 0x1000 {
            tree(Obj.at(UnsafeMutableRawPointer(bitPattern: UInt(word))!), &out)
        }
    }

    private static func resolveTree(_ fx: Fixture, _ key: String) throws -> [String] {
        let root = try fx.resolve(key)
        var out: [String] = []
        withExtendedLifetime(root) { tree(Obj.of(root), &out) }
        return out
    }

    /// A chain of 100 graph-scoped steps, each over a shared transient and the singleton S: more
    /// steps than a run's stack buffers hold.
    @Test func aChainOfMoreThanMaxStepsSteps() throws {
        let length = Plan.maxSteps + 36
        try expectPlannedAsBuilt({ fx in
            for i in 0..<length {
                try fx.register("N\(i)", i + 1 < length ? [dep("N\(i + 1)"), dep("T"), dep("S")] : [dep("S")])
            }
            try fx.register("T", scope: .transient)
            try fx.register("S", scope: .singleton)
        }) { fx in
            var seen: [String] = []
            for _ in 0..<3 { seen += try Self.resolveTree(fx, "N0").prefix(8) }
            #expect(fx.tracker.made("N\(length - 1)") == 3 && fx.tracker.made("T") == 3 * (length - 1) && fx.tracker.made("S") == 1)
            return seen
        }
        // With plans: the second resolve replayed the recorded plan.
        let fx = try Fixture()
        for i in 0..<length { try fx.register("N\(i)", i + 1 < length ? [dep("N\(i + 1)")] : []) }
        _ = try fx.resolve("N0")
        _ = try fx.resolve("N0")
        #expect(fx.container.registration(for: Key("N0"))!.hasCurrentPlan)
    }

    /// A factory of 40 slots (more than a run's slot buffer holds): each slot gets its step's
    /// instance, the context, a transient made for it; the same instance where the build gives it.
    @Test func aFactoryOfMoreThanMaxSlotsSlots() throws {
        let context = UnsafeMutableRawPointer(bitPattern: 0x7)!
        let width = Plan.maxSlots + 8
        try expectPlannedAsBuilt({ fx in
            var params: [Param] = []
            for i in 0..<width {
                params.append(i % 5 == 0 ? .context : i % 3 == 0 ? dep("T") : dep("L\(i % 7)"))
            }
            try fx.register("W", params, context: context)
            try fx.register("A", [dep("W"), dep("L0")], scope: .transient)
            for i in 0..<7 { try fx.register("L\(i)", i == 0 ? [dep("T")] : []) }
            try fx.register("T", scope: .transient)
        }) { fx in
            var seen: [String] = []
            for _ in 0..<3 {
                let a = try fx.resolve("A")
                withExtendedLifetime(a) {
                    let w = Obj.of(a).dep(0)
                    #expect(w.words.count == width)
                    // Identities: one L per key in the graph, A's L0 is W's.
                    #expect(w.depPointer(1) == w.depPointer(8) && Obj.of(a).depPointer(1) == w.depPointer(7))
                    seen += w.words.enumerated().map { i, word in
                        word == UInt64(UInt(bitPattern: context)) ? "context" : "\(i):\(Obj.at(UnsafeMutableRawPointer(bitPattern: UInt(word))!).label)"
                    }
                }
            }
            return seen
        }
    }

    /// A large plan replayed into the graph (completion callbacks and a WEAK slot): the callbacks
    /// in creation order, the weak slot holding the graph's instance.
    @Test func aLargePlanWithCompletionsAndSlots() throws {
        let length = Plan.maxSteps + 10
        try expectPlannedAsBuilt({ fx in
            for i in 0..<length {
                let r = try fx.register("N\(i)", i + 1 < length ? [dep("N\(i + 1)"), weakDep("N\(length - 1)")] : [])
                if i % 9 == 0 { fx.onComplete(r) }
            }
        }) { fx in
            var seen: [String] = []
            for _ in 0..<2 {
                let root = try fx.resolve("N0")
                withExtendedLifetime(root) {
                    let weak = fx.bridge.weak(Obj.of(root).words[1]).upgrade()
                    var last = Obj.of(root)
                    while let word = last.words.first, word > 0x1000 { last = last.dep(0) }
                    seen.append("weak is the last: \(weak?.pointer == last.pointer)")
                }
            }
            return seen
        }
    }

    /// A factory failing past the 64th step: what the run made is let go of, last made first, as the build's abort.
    @Test func aFailureInALargePlanRollsBackAsTheBuild() throws {
        let length = Plan.maxSteps + 20
        let failing = Box(false)
        try expectPlannedAsBuilt({ fx in
            for i in 0..<length {
                try fx.register("N\(i)", i + 1 < length ? [dep("X\(i)"), dep("N\(i + 1)")] : []) { _ in
                    if failing.value && i == 3 { throw TetherError(.factoryFailed, "boom") }
                }
                try fx.register("X\(i)", scope: .transient)
            }
        }) { fx in
            var seen: [String] = []
            failing.value = false
            _ = try fx.resolve("N0")
            failing.value = true
            do { _ = try fx.resolve("N0") } catch let e as TetherError { seen.append("\(e.code): \(e.message)") }
            failing.value = false
            return seen
        }
    }

    /// A large plan whose first step's RESOLVER slot gets X, a graph-scoped key the plan makes past its 64th step:
    /// the build finds X in the graph where H asks for it (X's factory once per resolve, H's X the one A got). The
    /// plan's run made X again (its factory twice, the graph's X leaked): `Graph.replaySkips`, the steps a
    /// resolver's gets built (`Plan.takeBuilt`), is one word. Such a plan (a RESOLVER slot past 64 steps) declines
    /// `tooLarge` now (`Recorder.finishSlots`): the build's behaviour with plans on.
    @Test func aResolversGetOfAStepPastThe64thIsTheGraphs() throws {
        let length = Plan.maxSteps + 6
        let run = try bothPaths { fx -> [String] in
            let bridge = fx.bridge
            try fx.register("A", [.resolver]) { obj in
                guard let r = bridge.resolver(obj.words[0]) else { throw TetherError(.factoryFailed, "no resolver") }
                obj.got.append(try r.get(Key("X")).pointer)
            }
            for i in 0..<length { try fx.register("P\(i)", scope: .transient) }
            try fx.register("X")
            try fx.register("H", [dep("A")] + (0..<length).map { dep("P\($0)") } + [dep("X")], scope: .transient)
            var seen: [String] = []
            for _ in 0..<2 {
                let h = try fx.resolve("H")
                withExtendedLifetime(h) {
                    let o = Obj.of(h)
                    seen.append("X made \(fx.tracker.made("X")), A's X is H's: \(o.dep(0).got.first == o.depPointer(length + 1))")
                }
            }
            return seen
        }
        #expect(run.counts == ["resolves": 2, "tooLarge": 2], "\(run.counts)")
        #expect(run.logs[0] == run.logs[1] && run.seen[0] == run.seen[1], "\(run.seen)")
        #expect(run.seen[0] == ["X made 1, A's X is H's: true", "X made 2, A's X is H's: true"], "\(run.seen[0])")
    }

    /// An object plan (Swift objects, no instances) of more than maxSteps objects, one factory of 40 slots.
    @Test func aLargeObjectPlan() throws {
        let length = Plan.maxSteps + 30
        let container = try Container(bridge: TestBridge())
        for i in 0..<length {
            let params: [Param] = i == 0 ? (1..<(Plan.maxSlots + 9)).map { .dependency(Key("O\($0)")) }
                : i + 1 < length ? [.dependency(Key("O\(i + 1)"))] : []
            try container.register(Key("O\(i)"), params: params, factory: MakeChainNode())
        }
        var seen: [Int] = []
        let counts = try counted {
            for _ in 0..<2 {
                let root = try container.resolve(Key("O0"), as: ChainNode.self)
                var node = root.next.first
                var chain = 1
                while let n = node { chain += 1; node = n.next.first }
                seen.append(root.next.count)
                seen.append(chain)
            }
        }
        #expect(seen == [Plan.maxSlots + 8, length, Plan.maxSlots + 8, length])
        #expect(counts.keys.sorted() == ["resolves"], "\(counts)")
    }
}

private final class ChainNode {
    let next: [ChainNode]
    init(_ next: [ChainNode]) { self.next = next }
}

private final class MakeChainNode: ObjectFactory, @unchecked Sendable {
    override func make(_ arguments: ObjectArguments) throws(CallbackFailure) -> AnyObject {
        ChainNode((0..<arguments.count).map { arguments.object($0, as: ChainNode.self) })
    }
}
