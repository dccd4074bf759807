// Resolvers' requests whose creation plan is past the 64th step (issue 28, branch reqlarge): a run up to a
// cut (a key the thread or the graph constructs, a refused claim) and a key taken from the graph, each as
// the build (`requestNested`, `requestInGraph`, `requestShared` before: the cut runs' masks were one word).
import Testing
@testable import TetherCore

extension ResolverRequestPlanTests {
    /// Transients `P0` to `P64`, the padding that puts what follows them in a plan past its 64th step.
    private static func pads(_ fx: Fixture) throws -> [Param] {
        for i in 0...Plan.maxSteps { try fx.register("P\(i)", scope: .transient) }
        return (0...Plan.maxSteps).map { dep("P\($0)") }
    }

    /// X's factory resolves Y, Y's callback asks for Z, a singleton -> P0...P64, X, S (a singleton): Z's creation plan
    /// meets X, which the thread constructs further out, past its 64th step: it claims Z's cell (not S's: the build never
    /// asks for it), runs up to X (the Ps made, kept in Y's graph), then the build's cycle (`requestNested` before).
    /// `traced`: with a trace hook, the same.
    @Test(arguments: [false, true]) func aCreatingRequestPastThe64thStepMeetingAnOuterKeyRunsUpToIt(traced: Bool) throws {
        let (outcome, requests) = try expectSame({ fx in
            try fx.register("X") { _ in _ = try fx.resolve("Y") }
            let y = try fx.register("Y")
            try fx.register("Z", try Self.pads(fx) + [dep("X"), dep("S")], scope: .singleton)
            try fx.register("S", scope: .singleton)
            fx.onComplete(y) { resolver, _, _ in
                do { _ = try resolver.get(Key("Z")) } catch let e as TetherError { fx.tracker.note("Z failed: \(e.code) \(e.message)") }
            }
            let tracker = fx.tracker
            if traced { fx.container.setTrace { e in tracker.note("trace \(e.kind) \(e.key.name)") } }
        }) { fx in
            try resolveThrice(fx, "X") { _ in "P64 \(fx.tracker.calls("P64")) Z \(fx.tracker.calls("Z")) S \(fx.tracker.calls("S"))" }
        }
        #expect(outcome.seen == ["P64 1 Z 0 S 0", "P64 2 Z 0 S 0", "P64 3 Z 0 S 0"])
        #expect(outcome.log.filter { $0.hasPrefix("Z failed") }.count == 3)
        #expect(outcome.log.first { $0.hasPrefix("Z failed") }?.contains("\(ErrorCode.cycle) dependency cycle through constructors: \"X\" -> \"Y\" -> \"Z\" -> \"X\"") == true,
                "\(outcome.log.first { $0.hasPrefix("Z failed") } ?? "")")
        #expect(requests == ["requests": 3, "plan": 3], "\(requests)")
    }

    /// T's request for B, a singleton -> C (a singleton), P0...P64, E -> T (T under construction in this graph): B's
    /// creation plan, past its 64th step, runs up to where the build asks for T (C made whole, published with the graph
    /// and found by T's next get; the Ps kept in the graph), then the build's cycle (`requestInGraph` before).
    /// `traced`: with a trace hook, the same.
    @Test(arguments: [false, true]) func aCreatingRequestPastThe64thStepMeetingAStepUnderConstructionRunsUpToIt(traced: Bool) throws {
        let (outcome, requests) = try expectSame({ fx in
            let tracker = fx.tracker
            if traced { fx.container.setTrace { e in tracker.note("trace \(e.kind) \(e.key.name)") } }
            try fx.register("T", [.resolver], scope: .transient) { obj in
                let resolver = try #require(fx.bridge.resolver(obj.words[0]))
                do { _ = try resolver.get(Key("B")) } catch let e as TetherError { fx.tracker.note("B failed: \(e.code)") }
                obj.got.append(try resolver.get(Key("C")).pointer)
            }
            try fx.register("B", [dep("C")] + (try Self.pads(fx)) + [dep("E")], scope: .singleton)
            try fx.register("C", scope: .singleton)
            try fx.register("E", [dep("T")], scope: .singleton)
        }) { fx in
            try resolveThrice(fx, "T") { _ in "C \(fx.tracker.calls("C")) P64 \(fx.tracker.calls("P64")) B \(fx.tracker.calls("B")) E \(fx.tracker.calls("E"))" }
        }
        #expect(outcome.seen == ["C 1 P64 1 B 0 E 0", "C 1 P64 2 B 0 E 0", "C 1 P64 3 B 0 E 0"])
        #expect(outcome.log.filter { $0.hasPrefix("B failed") } == Array(repeating: "B failed: \(ErrorCode.cycle)", count: 3))
        #expect(requests == ["requests": 6, "found": 3, "plan": 3], "\(requests)")
    }

    /// A request whose creation plan, past its 64th step, has a claim refused before any factory (B -> C, P0...P64, S2;
    /// S2 -> S, S made by the resolve further out, unfinished): the run up to where the build's walk asks for S2 (C and
    /// the Ps made), then the claim's error (`requestShared` before). `traced`: with a trace hook, the same.
    @Test(arguments: [false, true]) func aRefusedClaimPastThe64thStepIsReportedWhereTheBuildAsks(traced: Bool) throws {
        let (outcome, requests) = try expectSame({ fx in
            let a = try fx.register("A", [dep("S")])
            try fx.register("S", scope: .singleton)
            let n = try fx.register("N")
            try fx.register("B", [dep("C")] + (try Self.pads(fx)) + [dep("S2")])
            try fx.register("C", scope: .transient)
            try fx.register("S2", [dep("S")], scope: .singleton)
            fx.onComplete(a) { _, _, obj in obj.got.append(try fx.resolve("N").pointer) }
            fx.onComplete(n) { resolver, _, _ in
                do { _ = try resolver.get(Key("B")) } catch let e as TetherError { fx.tracker.note("B failed: \(e.code)") }
            }
            let tracker = fx.tracker
            if traced { fx.container.setTrace { e in tracker.note("trace \(e.kind) \(e.key.name)") } }
        }) { fx in
            _ = try fx.resolve("A")
            return ["C \(fx.tracker.calls("C")) P64 \(fx.tracker.calls("P64")) S2 \(fx.tracker.calls("S2"))"]
        }
        #expect(outcome.seen == ["C 1 P64 1 S2 0"])
        #expect(outcome.log.filter { $0.hasPrefix("B failed") } == ["B failed: \(ErrorCode.cycle)"], "\(outcome.log.filter { $0.hasPrefix("B failed") })")
        #expect(requests == ["requests": 1, "plan": 1], "\(requests)")
    }

    /// O (-> X, graph-scoped) asks for H -> P0...P64, X, S (a singleton not cached yet): H's creation plan takes the
    /// graph's X at its 66th step, the build's walk finding it in the graph (`requestInGraph` before: `takeFromGraph`
    /// took no key for a creation plan past 64 steps); the next requests' warm plans take S cached.
    @Test func aCreatingRequestPastThe64thStepTakesAKeyTheGraphHas() throws {
        let (outcome, requests) = try expectSame({ fx in
            try fx.register("O", [.resolver, dep("X")], scope: .transient) { obj in
                obj.got.append(try #require(fx.bridge.resolver(obj.words[0])).get(Key("H")).pointer)
            }
            try fx.register("X")
            try fx.register("H", (try Self.pads(fx)) + [dep("X"), dep("S")], scope: .transient)
            try fx.register("S", scope: .singleton)
        }) { fx in
            try resolveThrice(fx, "O") { o in
                let h = Obj.at(o.got[0])
                return "O's X is H's: \(o.depPointer(1) == h.depPointer(Plan.maxSteps + 1)), X \(fx.tracker.calls("X")) S \(fx.tracker.calls("S"))"
            }
        }
        #expect(outcome.seen == ["O's X is H's: true, X 1 S 1", "O's X is H's: true, X 2 S 1", "O's X is H's: true, X 3 S 1"])
        #expect(requests == ["requests": 3, "plan": 3], "\(requests)")
    }
}
