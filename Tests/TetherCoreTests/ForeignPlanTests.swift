// A singleton registered further up than the plan's container, not cached (`Plan.Recorder.Frame.foreign`),
// with completion callbacks, slots made per resolve or strict containers (issue 28, branch foreign): the
// build looks its dependencies up in its own container (`Graph.push`), so do its callbacks' and its
// slots' cells (`Plan.Step.lookup`, `Plan.SlotInput.lookup`), and its frame refuses captives if that
// container is strict. Each runs with plans and without: the same factory calls and drops in order, the
// same instances, containers and errors; with plans, the creation plan serves it (no decline counted).
// A stacked level's singleton (of a registering child between the resolving child and the owner) looks up in each
// run's level (`Step.lookupSlot`, branch stacked); in a strict container too, the component keying the strictness
// of each level whose singletons a creation plan checked (`Plan.ComponentSlot.keysStrict`, branch strictlevels).
import Foundation
import Testing
@testable import TetherCore

@Suite struct ForeignPlanTests {
    /// `planned` (Support.swift) of `scenario` over the root and a child `mid` (closed after it).
    private func withMid<T>(_ scenario: (Fixture, Container) throws -> T) throws
        -> (log: [String], seen: T, counts: [String: Int]) {
        try planned { fx in
            let mid = try fx.child()
            let result = try scenario(fx, mid)
            _ = try mid.close()
            return result
        }
    }

    /// The root's singleton S with a completion callback that gets G (registered in the root and in the
    /// child, differently): S's callback resolves from the root, as the build's (`Pending.lookup`).
    @Test func aCallbackOfASingletonFromFurtherUpResolvesThere() throws {
        let (_, seen, counts) = try withMid { fx, mid -> [String] in
            let s = try fx.register("S", [dep("D")], scope: .singleton)
            try fx.register("D", label: "D@root")
            try fx.register("G", label: "G@root")
            try fx.register("G", in: mid, label: "G@mid")
            try fx.register("D", in: mid, label: "D@mid")
            try fx.register("X", [dep("S"), dep("G")], in: mid)
            let got = Box("")
            fx.onComplete(s) { resolver, _, _ in got.value = Obj.of(try resolver.get(Key("G"))).label }
            let x = try fx.resolve("X", in: mid)
            let o = Obj.of(x)
            return ["\(o.dep(0).dep(0).label) \(o.dep(1).label) callback got \(got.value)",
                    "S shared \(try fx.resolve("S").pointer == o.depPointer(0))"]
        }
        #expect(seen == ["D@root G@mid callback got G@root", "S shared true"])
        #expect(counts == ["resolves": 1], "the creation plan (then a cache hit): \(counts)")
    }

    /// S with a LAZY slot, a WEAK_LAZY one (nothing holds what it answers) and a FACTORY slot on L (the root's and the child's differ),
    /// a WEAK slot on the root's W, an ALL slot over P (one in the root, one in the child): each cell, the
    /// weak target and the list are the root's, as the build's frame (looked up from its own container).
    @Test func theSlotsOfASingletonFromFurtherUpAreItsContainers() throws {
        let (_, seen, counts) = try withMid { fx, mid -> [String] in
            try fx.register("S", [lazyDep("L"), weakLazyDep("L"), .factory(Key("L")), weakDep("W"), .all(Key("P")), dep("W")],
                            scope: .singleton)
            try fx.register("L", label: "L@root")
            try fx.register("L", in: mid, label: "L@mid")
            try fx.register("W", label: "W@root")
            try fx.register("W", in: mid, label: "W@mid")
            try fx.register("P", label: "P@root")
            try fx.register("P", in: mid, label: "P@mid")
            try fx.register("X", [dep("S")], in: mid)
            let x = try fx.resolve("X", in: mid)
            let s = Obj.of(x).dep(0)
            let lazy = try #require(fx.bridge.cell(s.words[0]))
            let weakLazy = try #require(fx.bridge.cell(s.words[1]))
            let factory = fx.bridge.factoryCell(s.words[2])
            let list = SlotList.items(at: UnsafeRawPointer(bitPattern: UInt(s.words[4]))!)
            return ["lazy \(Obj.at(try lazy.get()).label)", "weak lazy \((try? weakLazy.get()).map { Obj.at($0).label } ?? "gone")",
                    "factory from root \(factory.container === fx.container)",
                    "weak \(fx.bridge.weak(s.words[3]).upgrade()?.pointer == s.depPointer(5)) \(s.dep(5).label)",
                    "all \(list.map { Obj.at($0).label })"]
        }
        #expect(seen == ["lazy L@root", "weak lazy gone", "factory from root true", "weak true W@root", "all [\"P@root\"]"])
        #expect(counts == ["resolves": 3], "the creation plan, and the two cells' resolves of L: \(counts)")
    }

    /// S with a RESOLVER slot whose factory gets G: the root's G (the resolver's lookup is S's frame's).
    @Test func aResolverSlotOfASingletonFromFurtherUpGetsThere() throws {
        let (log, seen, counts) = try withMid { fx, mid -> [String] in
            let bridge = fx.bridge
            try fx.register("S", [.resolver, dep("D")], scope: .singleton) { obj in
                _ = try bridge.resolver(obj.words[0])!.get(Key("G"))
            }
            try fx.register("D", label: "D@root")
            try fx.register("G", label: "G@root")
            try fx.register("G", in: mid, label: "G@mid")
            try fx.register("X", [dep("G"), dep("S")], in: mid)
            let x = try fx.resolve("X", in: mid)
            return [Obj.of(x).dep(0).label, Obj.of(x).dep(1).dep(1).label]
        }
        #expect(seen == ["G@mid", "D@root"], "\(seen)")
        #expect(log.prefix(4) == ["make G@mid", "make D@root", "make G@root", "make S"], "\(log)")
        #expect(counts == ["resolves": 1], "the creation plan: \(counts)")
    }

    /// Strict containers: the root strict, S over a graph-scoped G is refused with the build's text (a
    /// failing creation plan); the child strict and the root not, S takes G (the build checks S's own container).
    @Test func aStrictContainerRefusesAsTheBuildsFrameOfASingletonFromFurtherUp() throws {
        for strictRoot in [true, false] {
            let (_, seen, counts) = try withMid { fx, mid -> [String] in
                fx.container.refusesCaptives = strictRoot
                mid.refusesCaptives = !strictRoot
                try fx.register("S", [dep("G")], scope: .singleton)
                try fx.register("G")
                try fx.register("X", [dep("S")], in: mid)
                var outcome: [String] = []
                for _ in 0..<2 {
                    do { outcome.append(Obj.of(try fx.resolve("X", in: mid)).dep(0).dep(0).label) } catch let e as TetherError {
                        outcome.append("\(e.code): \(e.message)")
                    }
                }
                return outcome
            }
            if strictRoot {
                #expect(seen.allSatisfy { $0.contains("captive dependency \"S\" -> \"G\" (while resolving \"X\" -> \"S\")") && $0.contains("strict") }, "\(seen)")
                #expect(counts == ["resolves": 2], "failing creation plans: \(counts)")
            } else {
                #expect(seen == ["G", "G"])
                #expect(counts == ["resolves": 2], "the creation plan, then the warm plan: \(counts)")
            }
        }
    }

    /// A container-scoped C under S: the build claims, makes and publishes S's C in the root (S's frame's
    /// lookup), and X, asking for C after S, takes that one from the graph; the next resolve (S cached)
    /// makes the child's own C. The plan's container step under S is the root's (`Step.lookup`).
    @Test func aContainerStepUnderASingletonFromFurtherUpIsThatContainers() throws {
        let (_, seen, counts) = try withMid { fx, mid -> [String] in
            try fx.register("S", [dep("C")], scope: .singleton)
            try fx.register("C", [dep("D")], scope: .container)
            try fx.register("D", label: "D@root")
            try fx.register("D", in: mid, label: "D@mid")
            try fx.register("X", [dep("S"), dep("C")], in: mid)
            let x = try fx.resolve("X", in: mid)
            let again = try fx.resolve("X", in: mid)
            let rootC = try fx.resolve("C"), midC = try fx.resolve("C", in: mid)
            let (o, o2) = (Obj.of(x), Obj.of(again))
            return ["S's C the root's \(o.dep(0).depPointer(0) == rootC.pointer) over \(o.dep(0).dep(0).dep(0).label)",
                    "X's C the same \(o.depPointer(1) == rootC.pointer)",
                    "then the child's \(o2.depPointer(1) == midC.pointer && midC.pointer != rootC.pointer) over \(o2.dep(1).dep(0).label)"]
        }
        #expect(seen == ["S's C the root's true over D@root", "X's C the same true", "then the child's true over D@mid"])
        #expect(counts == ["resolves": 2], "the creation plan, then the warm plan (the rest cache hits): \(counts)")
    }

    /// A declared value V under S: the root's value (S's frame's lookup); X takes the child's (a value
    /// provided in the child is a registration of its own there). The plan's value step under S reads the root.
    @Test func aValueUnderASingletonFromFurtherUpIsThatContainers() throws {
        let (_, seen, counts) = try withMid { fx, mid -> [String] in
            _ = try fx.container.declareValue(Key("V"))
            var values: [Obj] = []
            for (label, target) in [("V@root", fx.container), ("V@mid", mid)] {
                let v = Obj(label: label, words: [])
                values.append(v)
                _ = try target.provideValue(Key("V"), Ref(retaining: v).opaque, context: nil,
                                            destructor: { p, _ in Ref<Obj>(opaque: p).release() })
            }
            try fx.register("S", [dep("V")], scope: .singleton)
            try fx.register("X", [dep("S"), dep("V")], in: mid)
            let x = try fx.resolve("X", in: mid)
            let again = try fx.resolve("X", in: mid)
            return [Obj.of(x).dep(0).dep(0).label, Obj.of(x).dep(1).label, Obj.of(again).dep(1).label]
        }
        #expect(seen == ["V@root", "V@mid", "V@mid"])
        #expect(counts == ["resolves": 2], "the creation plan, then the warm plan: \(counts)")
    }

    /// A singleton of a stacked level (a registering child between the resolving child and the owner, each run's
    /// its own) over a completion callback, a container-scoped key and a value (`foreignCreation` before branch
    /// stacked): each step under it looks up in the run's level (`Step.lookupSlot`), not the recorded one. Two
    /// mids of one component, alive together, two requests under each: each mid's S made once, its callback's
    /// get, its container step (claimed in that mid) and its value that mid's.
    @Test func aStackedLevelsSingletonOverACallbackIsAPlan() throws {
        let run = try planned { fx -> [String] in
            _ = try fx.container.declareValue(Key("V"))
            let g = try fx.register("G")
            let got = Box<[String]>([])
            fx.onComplete(g) { resolver, _, _ in got.value.append(Obj.of(try resolver.get(Key("K"))).label) }
            try fx.register("Handler", [dep("S"), dep("Req")])
            try fx.register("C", [dep("K")], scope: .container)
            try fx.register("K", label: "K@root")
            var seen: [String] = []
            var mids: [Container] = []
            for m in ["m1", "m2"] {
                let mid = try fx.child()
                mids.append(mid)
                _ = try mid.provideValue(Key("V"), Ref(retaining: Obj(label: "V@\(m)", words: [])).opaque, context: nil,
                                         destructor: { p, _ in Ref<Obj>(opaque: p).release() })
                try fx.register("S", [dep("G"), dep("C"), dep("V")], scope: .singleton, in: mid, label: "S@\(m)")
                try fx.register("K", in: mid, label: "K@\(m)")
                for r in ["r1", "r2"] {
                    let request = try fx.child(of: mid)
                    try fx.register("Req", in: request, label: "Req@\(m)\(r)")
                    let h = try fx.resolve("Handler", in: request)
                    withExtendedLifetime(h) { seen.append(Obj.of(h).tree()) }
                    _ = try request.close()
                }
            }
            for mid in mids { _ = try mid.close() }
            seen.append("S made \(fx.tracker.made("S@m1")) \(fx.tracker.made("S@m2")), callbacks got \(got.value)")
            return seen
        }
        #expect(run.seen == ["Handler(S@m1(G,C(K@m1),V@m1),Req@m1r1)", "Handler(S@m1(G,C(K@m1),V@m1),Req@m1r2)",
                                "Handler(S@m2(G,C(K@m2),V@m2),Req@m2r1)", "Handler(S@m2(G,C(K@m2),V@m2),Req@m2r2)",
                                "S made 1 1, callbacks got [\"K@m1\", \"K@m2\"]"], "\(run.seen)")
        #expect(run.counts == ["resolves": 4], "the creation plan per mid, then the warm plan: \(run.counts)")
    }

    /// A stacked level's singleton in a strict container (`foreignCreation` before branch strictlevels): the
    /// component keys the strictness of a level whose singletons the walk checked (`ComponentSlot.keysStrict`).
    /// S of the strict mid over the root's singleton T captures nothing: the creation plan serves it.
    @Test func aStackedLevelsSingletonInAStrictContainerIsAPlan() throws {
        let (_, seen, counts) = try withMid { fx, mid -> [String] in
            mid.refusesCaptives = true
            try fx.register("T", scope: .singleton)
            try fx.register("Handler", [dep("S"), dep("Req")])
            try fx.register("S", [dep("T")], scope: .singleton, in: mid)
            let request = try fx.child(of: mid)
            try fx.register("Req", in: request)
            let h = try fx.resolve("Handler", in: request)
            let seen = [Obj.of(h).tree()]
            _ = consume h
            _ = try request.close()
            return seen
        }
        #expect(seen == ["Handler(S(T),Req)"], "\(seen)")
        #expect(counts == ["resolves": 1], "\(counts)")
    }

    /// Mids of one component, strict or not in turn (`strictFirst`: the first one strict), two requests under
    /// each, the first request strict and the second not (and the other way round): S of each mid, a singleton
    /// over the root's graph-scoped G, is refused where its mid is strict (the request's strictness does not
    /// count: the build checks S's own container), with the build's status and text each time (a failing
    /// creation plan), and made once where its mid is not (then cached). A plan recorded through one
    /// strictness never serves the other (`fits`): every resolve a plan's.
    @Test(arguments: [true, false], [true, false]) func aStackedLevelsStrictnessKeysItsPlans(strictFirst: Bool, strictRequestFirst: Bool) throws {
        let run = try planned { fx -> [String] in
            try fx.register("G")
            try fx.register("Handler", [dep("S"), dep("Req")])
            var seen: [String] = []
            for (m, strict) in [("m1", strictFirst), ("m2", !strictFirst), ("m3", strictFirst)] {
                let mid = try fx.child()
                mid.refusesCaptives = strict
                try fx.register("S", [dep("G")], scope: .singleton, in: mid, label: "S@\(m)")
                for (r, strictRequest) in [("r1", strictRequestFirst), ("r2", !strictRequestFirst)] {
                    let request = try fx.child(of: mid)
                    request.refusesCaptives = strictRequest
                    try fx.register("Req", in: request, label: "Req@\(m)\(r)")
                    do {
                        let h = try fx.resolve("Handler", in: request)
                        withExtendedLifetime(h) { seen.append(Obj.of(h).tree()) }
                    } catch let e as TetherError {
                        seen.append("\(e.code): \(e.message)")
                    }
                    _ = try request.close()
                }
                _ = try mid.close()
            }
            seen.append("S made \(fx.tracker.made("S@m1")) \(fx.tracker.made("S@m2")) \(fx.tracker.made("S@m3")), G made \(fx.tracker.made("G"))")
            return seen
        }
        let refused = "captiveDependency: captive dependency \"S\" -> \"G\" (while resolving \"Handler\" -> \"S\"): the singleton \"S\" would keep the graph-scoped \"G\""
        for (i, line) in run.seen.dropLast().enumerated() {
            let m = i / 2 + 1
            if (m == 2) != strictFirst {
                #expect(line.hasPrefix(refused) && line.hasSuffix("(refused: the container is strict, tether_container_set_strict)"), "\(line)")
            } else {
                #expect(line == "Handler(S@m\(m)(G),Req@m\(m)r\(i % 2 + 1))", "\(line)")
            }
        }
        #expect(run.seen.last == (strictFirst ? "S made 0 1 0, G made 1" : "S made 1 0 1, G made 2"), "\(run.seen)")
        #expect(run.counts == ["resolves": 6], "a plan each (failing creation plans where strict): \(run.counts)")
    }

    /// A level turning strict or lax between resolves (`Container.refusesCaptives` changes that container's
    /// configuration, not the owner's, which keys the plans): the resolving child's own singleton S over the
    /// root's graph-scoped G, in requests of one component. A lax request makes S; a strict one refuses it (the
    /// plan the lax one recorded, keyed lax, fits no strict child); a request turned lax after its refusal makes
    /// S then, and one turned strict after a lax one made S finds S cached (no check, as the build's).
    /// `stacked`: S a mid's instead, the mid turning strict or lax, each resolve from a new request under it.
    @Test(arguments: [false, true]) func aLevelTurningStrictBetweenResolvesGetsAPlanOfItsStrictness(stacked: Bool) throws {
        let run = try planned { fx -> [String] in
            try fx.register("G")
            try fx.register("Handler", [dep("S")])
            var seen: [String] = []
            func resolve(_ request: Container) {
                do {
                    let h = try fx.resolve("Handler", in: request)
                    withExtendedLifetime(h) { seen.append(Obj.of(h).tree()) }
                } catch let e as TetherError {
                    seen.append("\(e.code)")
                } catch {
                    seen.append("\(error)")
                }
            }
            for (r, strictness) in [("r1", [false, true]), ("r2", [true, false]), ("r3", [true, true]), ("r4", [false, false])] {
                let level = try fx.child()
                try fx.register("S", [dep("G")], scope: .singleton, in: level, label: "S@\(r)")
                for strict in strictness {
                    level.refusesCaptives = strict
                    if stacked {
                        let request = try fx.child(of: level)
                        try fx.register("Req", in: request)
                        resolve(request)
                        _ = try request.close()
                    } else {
                        resolve(level)
                    }
                }
                _ = try level.close()
            }
            seen.append("S made \((1...4).map { fx.tracker.made("S@r\($0)") })")
            return seen
        }
        #expect(run.seen == ["Handler(S@r1(G))", "Handler(S@r1(G))", "captiveDependency", "Handler(S@r2(G))",
                                "captiveDependency", "captiveDependency", "Handler(S@r4(G))", "Handler(S@r4(G))",
                                "S made [1, 1, 0, 1]"], "\(run.seen)")
        #expect(run.counts == ["resolves": 8], "\(run.counts)")
    }
}
