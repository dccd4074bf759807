// Resolvers' requests (issue 28): a completion callback's request runs the asked key's plan,
// replayed into the graph of the instance completed, as the build leaves what it makes: a key the
// graph has is the graph's (found, or the build's when the plan would make it), what the request
// makes is the graph's (a later request finds it), a failed request's instances stay in the graph,
// a lap of callbacks' requests is refused with the build's path; a factory's RESOLVER request the
// same, its failures naming the frames further out. Each path counted
// (`PlanStats.requestsOnThisThread`); each test asserts the log, observations and errors (the build's, which
// ran beside it as an oracle until branch noplansoff).
import Foundation
import Testing
@testable import TetherCore

@Suite struct ResolverRequestPlanTests {
    private struct Outcome: Equatable {
        var log: [String]
        var seen: [String]
        var error: String?
    }

    /// Registers with `setUp`, then runs `body` (three resolves, say): what it logged and saw, and this thread's
    /// resolver requests by path over it.
    private func run(_ setUp: (Fixture) throws -> Void,
                     _ body: (Fixture) throws -> [String]) throws -> (Outcome, [String: Int]) {
        let fx = try Fixture()
        try setUp(fx)
        var seen: [String] = []
        var error: String?
        let requests = try countedRequests {
            do { seen = try body(fx) } catch let e as TetherError { error = "\(e.code): \(e.message)" }
        }
        #expect(fx.tracker.badDrops == 0)
        return (Outcome(log: fx.tracker.log, seen: seen, error: error), requests)
    }

    /// `run`: the outcome and the requests by path.
    private func expectSame(_ setUp: (Fixture) throws -> Void, _ body: (Fixture) throws -> [String],
                            sourceLocation: SourceLocation = #_sourceLocation) throws -> (Outcome, [String: Int]) {
        try run(setUp, body)
    }

    /// Three resolves of `key` (from `target`; the root: nil), each released before the next, `describe` reading each.
    private func resolveThrice(_ fx: Fixture, _ key: String, in target: Container? = nil, _ describe: (Obj) -> String) throws -> [String] {
        try (0..<3).map { _ in
            let instance = try fx.resolve(key, in: target)
            return withExtendedLifetime(instance) { describe(Obj.of(instance)) }
        }
    }

    /// Transients `P0` to `P64`, the padding that puts what follows them in a plan past its 64th step (`large`;
    /// else the one transient K).
    private static func pads(_ fx: Fixture, _ large: Bool = true) throws -> [Param] {
        let names = large ? (0...Plan.maxSteps).map { "P\($0)" } : ["K"]
        for name in names { try fx.register(name, scope: .transient) }
        return names.map(dep)
    }

    /// A's callback asks for B (B -> C transient, D graph-scoped), then D and B again: B is made by its
    /// plan into A's graph, the next two requests find B's D and B there.
    @Test func completionCallbackRequestRunsThePlan() throws {
        let (outcome, requests) = try expectSame({ fx in
            let a = try fx.register("A")
            try fx.register("B", [dep("C"), dep("D")])
            try fx.register("C", scope: .transient)
            try fx.register("D")
            fx.onComplete(a) { resolver, _, obj in
                for key in ["B", "D", "B"] { obj.got.append(try resolver.get(Key(key)).pointer) }
            }
        }) { fx in
            try resolveThrice(fx, "A") { a in
                let b = Obj.at(a.got[0])
                return "B(\(b.dep(0).label),\(b.dep(1).label)) its D found: \(a.got[1] == b.depPointer(1)), B found: \(a.got[2] == a.got[0])"
            }
        }
        #expect(outcome.seen == Array(repeating: "B(C,D) its D found: true, B found: true", count: 3))
        #expect(outcome.log.filter { $0.hasPrefix("make") } == Array(repeating: ["make A", "make C", "make D", "make B"], count: 3).flatMap { $0 })
        #expect(requests == ["requests": 9, "found": 6, "plan": 3])
    }

    /// A request whose plan makes a key the graph has (A's D): the graph's D taken, and what only D asked
    /// for (E) not made, as the build takes it and never descends below it.
    @Test func requestTakesAKeyTheGraphHas() throws {
        let (outcome, requests) = try expectSame({ fx in
            let a = try fx.register("A", [dep("D")])
            try fx.register("B", [dep("D"), dep("F")])
            try fx.register("D", [dep("E")])
            try fx.register("E", scope: .transient)
            try fx.register("F", scope: .transient)
            fx.onComplete(a) { resolver, _, obj in obj.got.append(try resolver.get(Key("B")).pointer) }
        }) { fx in
            try resolveThrice(fx, "A") { a in "B's D is A's: \(Obj.at(a.got[0]).depPointer(0) == a.depPointer(0)), E calls \(fx.tracker.calls("E"))" }
        }
        #expect(outcome.seen == ["B's D is A's: true, E calls 1", "B's D is A's: true, E calls 2", "B's D is A's: true, E calls 3"])
        #expect(requests == ["requests": 3, "plan": 3])
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
    /// A transient below a key the graph has is a step per asker: the one X asked for is not made (X is
    /// the graph's), E's is, where the build makes it.
    @Test func aTransientBelowAGraphKeyIsMadeForItsOtherAskerOnly() throws {
        let (outcome, requests) = try expectSame({ fx in
            let a = try fx.register("A", [dep("X")])
            try fx.register("B", [dep("X"), dep("M"), dep("E")])
            try fx.register("X", [dep("K")])
            try fx.register("E", [dep("K")])
            try fx.register("K", scope: .transient)
            try fx.register("M", scope: .transient)
            fx.onComplete(a) { resolver, _, obj in obj.got.append(try resolver.get(Key("B")).pointer) }
        }) { fx in
            try resolveThrice(fx, "A") { a in "B's X is A's: \(Obj.at(a.got[0]).depPointer(0) == a.depPointer(0)), K calls \(fx.tracker.calls("K"))" }
        }
        #expect(outcome.seen == ["B's X is A's: true, K calls 2", "B's X is A's: true, K calls 4", "B's X is A's: true, K calls 6"])
        #expect(requests == ["requests": 3, "plan": 3])
    }

    /// A factory's request whose plan has the key under construction (A): the plan runs up to where the build
    /// asks for A (nothing before it here; branch requestslots: no `requestSlots`, `requestInGraph`), the build's cycle and path.
    @Test func requestMeetingAKeyUnderConstructionRunsUpToIt() throws {
        let (outcome, requests) = try expectSame({ fx in
            try fx.register("A", [.resolver]) { obj in
                do { _ = try #require(fx.bridge.resolver(obj.words[0])).get(Key("B")) }
                catch { fx.tracker.note("B failed: \((error as? TetherError)?.message ?? "")") }
            }
            try fx.register("B", [dep("A")])
        }) { fx in
            try resolveThrice(fx, "A") { _ in "" }
        }
        #expect(outcome.log.filter { $0.hasPrefix("B failed") }.count == 3)
        #expect(outcome.log.first { $0.hasPrefix("B failed") }?.contains("\"A\" -> \"B\" -> \"A\"") == true)
        #expect(requests == ["requests": 3, "plan": 3], "\(requests)")
    }

    /// A transient T's factory asks its resolver for B -> C, E -> T, E (T under construction: a step of B's plan the
    /// graph constructs, not keyed): B's plan makes C (the build's walk asks for it first), then the build's cycle
    /// naming T, B, E, T; C stays in T's graph (a failed request's), so T's next request for C finds it.
    @Test func requestMeetingATransientUnderConstructionRunsUpToIt() throws {
        let (outcome, requests) = try expectSame({ fx in
            try fx.register("T", [.resolver], scope: .transient) { obj in
                let resolver = try #require(fx.bridge.resolver(obj.words[0]))
                do { _ = try resolver.get(Key("B")) } catch let e as TetherError { fx.tracker.note("B failed: \(e.code) \(e.message)") }
                obj.got.append(try resolver.get(Key("C")).pointer)
            }
            try fx.register("B", [dep("C"), dep("E")])
            try fx.register("C")
            try fx.register("E", [dep("T")])
        }) { fx in
            try resolveThrice(fx, "T") { _ in "C \(fx.tracker.calls("C")) B \(fx.tracker.calls("B")) T \(fx.tracker.calls("T"))" }
        }
        #expect(outcome.seen == ["C 1 B 0 T 1", "C 2 B 0 T 2", "C 3 B 0 T 3"])
        #expect(outcome.log.filter { $0.hasPrefix("B failed") }.map { String($0.prefix(while: { $0 != ";" })) } == Array(repeating:
            "B failed: \(ErrorCode.cycle) dependency cycle through constructors: \"T\" -> \"B\" -> \"E\" -> \"T\"", count: 3), "\(outcome.log)")
        #expect(requests == ["requests": 6, "found": 3, "plan": 3], "\(requests)")
    }

    /// The same over creation steps: T's request for singleton B -> C (a singleton), K, E -> T: B's creation plan claims
    /// the cells the build asks for before T (B's, C's; not E's) and runs up to T: C made whole, published with the graph
    /// and found by T's next get; K kept in the graph; neither B nor E made (`requestInGraph` before branch requestslots).
    /// `traced`: with a trace hook, the same (`TracedCreatingRequestCutIntoGraph`; `requestInGraph` before branch reqcut).
    /// `large`: P0...P64 in K's place, the plan past its 64th step (`requestInGraph` before branch reqlarge).
    @Test(arguments: [false, true], [false, true]) func aCreatingRequestMeetingAStepUnderConstructionRunsUpToIt(traced: Bool, large: Bool) throws {
        let pad = large ? "P\(Plan.maxSteps)" : "K"
        let (outcome, requests) = try expectSame({ fx in
            let tracker = fx.tracker
            if traced { fx.container.setTrace { e in tracker.note("trace \(e.kind) \(e.key.name)") } }
            try fx.register("T", [.resolver], scope: .transient) { obj in
                let resolver = try #require(fx.bridge.resolver(obj.words[0]))
                do { _ = try resolver.get(Key("B")) } catch let e as TetherError { fx.tracker.note("B failed: \(e.code)") }
                obj.got.append(try resolver.get(Key("C")).pointer)
            }
            try fx.register("B", [dep("C")] + (try Self.pads(fx, large)) + [dep("E")], scope: .singleton)
            try fx.register("C", scope: .singleton)
            try fx.register("E", [dep("T")], scope: .singleton)
        }) { fx in
            try resolveThrice(fx, "T") { _ in "C \(fx.tracker.calls("C")) \(pad) \(fx.tracker.calls(pad)) B \(fx.tracker.calls("B")) E \(fx.tracker.calls("E"))" }
        }
        #expect(outcome.seen == ["C 1 \(pad) 1 B 0 E 0", "C 1 \(pad) 2 B 0 E 0", "C 1 \(pad) 3 B 0 E 0"])
        #expect(outcome.log.filter { $0.hasPrefix("B failed") } == Array(repeating: "B failed: \(ErrorCode.cycle)", count: 3))
        #expect(requests == ["requests": 6, "found": 3, "plan": 3], "\(requests)")
    }

    /// A request whose plan fails at B's factory after making C: C stays in the graph (the build's
    /// rule), so the callback's next request finds it; dropped with the graph's other instances.
    @Test func failedRequestKeepsWhatItMadeInTheGraph() throws {
        let (outcome, requests) = try expectSame({ fx in
            let a = try fx.register("A")
            try fx.register("B", [dep("C")]) { _ in throw CallbackFailure(reason: "no B") }
            try fx.register("C")
            fx.onComplete(a) { resolver, _, obj in
                do { _ = try resolver.get(Key("B")) } catch { fx.tracker.note("B failed: \((error as? TetherError)?.message ?? "")") }
                obj.got.append(try resolver.get(Key("C")).pointer)
            }
        }) { fx in
            try resolveThrice(fx, "A") { a in "C calls \(fx.tracker.calls("C")), got \(Obj.at(a.got[0]).label)" }
        }
        #expect(outcome.seen == ["C calls 1, got C", "C calls 2, got C", "C calls 3, got C"])
        #expect(outcome.log.contains("B failed: factory for \"B\" returned NULL: no B"))
        #expect(requests == ["requests": 6, "found": 3, "plan": 3])
    }

    /// X's callback asks for Y, Y's for X, all transient: the lap repeats with nothing kept, refused
    /// where the build refuses it, with its path (each request's instance made by a plan).
    @Test func callbackLapIsRefusedOnThePlan() throws {
        let (outcome, requests) = try expectSame({ fx in
            let x = try fx.register("X", scope: .transient)
            let y = try fx.register("Y", scope: .transient)
            fx.onComplete(x) { resolver, _, obj in obj.got.append(try resolver.get(Key("Y")).pointer) }
            fx.onComplete(y) { resolver, _, obj in obj.got.append(try resolver.get(Key("X")).pointer) }
        }) { fx in
            _ = try fx.resolve("X")
            return []
        }
        #expect(outcome.error?.contains("\"X\"") == true)
        // (The third request, refused before anything is looked up, is not counted.)
        #expect(requests == ["requests": 2, "plan": 2])
    }

    /// A factory's RESOLVER request runs its plan too, into the graph whose frames are open further out:
    /// what it makes is the graph's (the factory's next request finds it).
    @Test func factoryResolverRequestRunsThePlan() throws {
        let (outcome, requests) = try expectSame({ fx in
            try fx.register("A", [.resolver]) { obj in
                let resolver = try #require(fx.bridge.resolver(obj.words[0]))
                for key in ["B", "C"] { obj.got.append(try resolver.get(Key(key)).pointer) }
            }
            try fx.register("B", [dep("C")])
            try fx.register("C")
        }) { fx in
            try resolveThrice(fx, "A") { a in "B(\(Obj.at(a.got[0]).dep(0).label)) its C found: \(Obj.at(a.got[0]).depPointer(0) == a.got[1])" }
        }
        #expect(outcome.seen == Array(repeating: "B(C) its C found: true", count: 3))
        #expect(requests == ["requests": 6, "found": 3, "plan": 3])
    }

    /// A factory's request of a key whose walk meets a cycle under a container-scoped key cached in the resolving
    /// container (`K1`, cached before its `all:K0` had an item): the pick (`Graph.runAsked`'s, `Plan.pickedForCaches`)
    /// runs the failing plan's variant, which takes `K1` cached, as the build's get does.
    @Test func aRequestUnderACachedContainerKeyRunsTheVariant() throws {
        let (outcome, requests) = try expectSame({ fx in
            try fx.register("K1", [.all(Key("K0"))], scope: .container)
            try fx.register("A", [.resolver]) { obj in
                let resolver = try #require(fx.bridge.resolver(obj.words[0]))
                obj.got.append(try resolver.get(Key("K0")).pointer)
            }
        }) { fx in
            _ = try fx.resolve("K1")
            try fx.register("K0", [dep("K1")])
            return try resolveThrice(fx, "A") { a in "A got \(Obj.at(a.got[0]).label) over \(Obj.at(a.got[0]).dep(0).label)" }
        }
        #expect(outcome.seen == Array(repeating: "A got K0 over K1", count: 3))
        #expect(requests == ["requests": 3, "plan": 3], "\(requests)")
    }

    /// A factory's request whose plan fails: the build's message (the frames further out on its path),
    /// what it made before the failure kept in the graph (the factory's next request finds C).
    @Test func factoryRequestFailureNamesTheFramesFurtherOut() throws {
        let (outcome, requests) = try expectSame({ fx in
            try fx.register("A", [.resolver]) { obj in
                let resolver = try #require(fx.bridge.resolver(obj.words[0]))
                do { _ = try resolver.get(Key("B")) } catch { fx.tracker.note("B failed: \((error as? TetherError)?.message ?? "")") }
                obj.got.append(try resolver.get(Key("C")).pointer)
            }
            try fx.register("B", [dep("C")]) { _ in throw CallbackFailure(reason: "no B") }
            try fx.register("C")
        }) { fx in
            try resolveThrice(fx, "A") { a in "C calls \(fx.tracker.calls("C")), got \(Obj.at(a.got[0]).label)" }
        }
        #expect(outcome.seen == ["C calls 1, got C", "C calls 2, got C", "C calls 3, got C"])
        #expect(outcome.log.contains("B failed: factory for \"B\" returned NULL: no B (while resolving \"A\" -> \"B\")"))
        #expect(requests == ["requests": 6, "found": 3, "plan": 3])
    }

    /// A request whose plan fails (the cycle B -> C -> B) after making D: the plan runs (no `requestFailing`),
    /// its error the build's, D kept in the graph (the callback's next request finds it), as the build leaves it.
    @Test func failingRequestPlanReportsTheCycleAndKeepsWhatItMade() throws {
        let (outcome, requests) = try expectSame({ fx in
            let a = try fx.register("A")
            try fx.register("B", [dep("D"), dep("C")])
            try fx.register("C", [dep("B")])
            try fx.register("D")
            fx.onComplete(a) { resolver, _, obj in
                do { _ = try resolver.get(Key("B")) } catch { fx.tracker.note("B failed: \((error as? TetherError)?.message ?? "")") }
                obj.got.append(try resolver.get(Key("D")).pointer)
            }
        }) { fx in
            try resolveThrice(fx, "A") { a in "D calls \(fx.tracker.calls("D")), got \(Obj.at(a.got[0]).label)" }
        }
        #expect(outcome.seen == ["D calls 1, got D", "D calls 2, got D", "D calls 3, got D"])
        #expect(outcome.log.contains { $0.hasPrefix("B failed: dependency cycle through constructors: \"B\" -> \"C\" -> \"B\"") })
        #expect(requests == ["requests": 6, "found": 3, "plan": 3])
    }

    /// A factory's request whose plan fails on a key not registered (B -> C, M): the build's message, its path
    /// from the frames open further out (A), C kept in the graph (the factory's next request finds it).
    @Test func failingFactoryRequestPlanNamesTheFramesFurtherOut() throws {
        let (outcome, requests) = try expectSame({ fx in
            try fx.register("A", [.resolver]) { obj in
                let resolver = try #require(fx.bridge.resolver(obj.words[0]))
                do { _ = try resolver.get(Key("B")) } catch { fx.tracker.note("B failed: \((error as? TetherError)?.message ?? "") path \((error as? TetherError)?.parts.path.map(\.name).joined(separator: ",") ?? "")") }
                obj.got.append(try resolver.get(Key("C")).pointer)
            }
            try fx.register("B", [dep("C"), dep("M")])
            try fx.register("C")
        }) { fx in
            try resolveThrice(fx, "A") { a in "C calls \(fx.tracker.calls("C")), got \(Obj.at(a.got[0]).label)" }
        }
        #expect(outcome.seen == ["C calls 1, got C", "C calls 2, got C", "C calls 3, got C"])
        #expect(outcome.log.contains { $0.hasPrefix("B failed: no registration for \"M\" (needed by \"A\" -> \"B\")") && $0.hasSuffix("path A,B") })
        #expect(requests == ["requests": 6, "found": 3, "plan": 3])
    }

    /// A completion callback's request inside a nested resolve (X's factory resolves Y, Y's callback asks for
    /// Z -> W): the thread constructs X further out, which Z's plan does not meet, so the plan runs (no
    /// `requestNested`); one that meets it runs up to there (`callbackInsideANestedResolveMeetingItRunsThePlanUpToThere`).
    @Test func requestInsideANestedResolveRunsThePlan() throws {
        let (outcome, requests) = try expectSame({ fx in
            try fx.register("X") { _ in _ = try fx.resolve("Y") }
            let y = try fx.register("Y")
            try fx.register("Z", [dep("W")])
            try fx.register("W", scope: .transient)
            fx.onComplete(y) { resolver, _, obj in obj.got.append(try resolver.get(Key("Z")).pointer) }
        }) { fx in
            try resolveThrice(fx, "X") { _ in "" }
        }
        #expect(outcome.log.filter { $0.hasPrefix("make") } == Array(repeating: ["make Y", "make W", "make Z", "make X"], count: 3).flatMap { $0 })
        #expect(requests == ["requests": 3, "plan": 3])
    }

    /// The same, Z -> W, X: the build refuses X (under construction further out) where its walk asks for it,
    /// after making what comes before (W, kept in the graph): the plan runs up to there (`replayAskedCut`, no
    /// `requestNested`), the build's cycle. `large`: Z a singleton over P0...P64 after W, its creation plan past its 64th
    /// step (`requestNested` before branch reqlarge).
    @Test(arguments: [false, true]) func callbackInsideANestedResolveMeetingItRunsThePlanUpToThere(large: Bool) throws {
        let (outcome, requests) = try expectSame({ fx in
            try fx.register("X") { _ in _ = try fx.resolve("Y") }
            let y = try fx.register("Y")
            try fx.register("Z", [dep("W")] + (try large ? Self.pads(fx) : []) + [dep("X")], scope: large ? .singleton : .graph)
            try fx.register("W", scope: .transient)
            fx.onComplete(y) { resolver, _, _ in
                do { _ = try resolver.get(Key("Z")) } catch {
                    let e = error as? TetherError
                    fx.tracker.note("Z failed: \(e.map { "\($0.code) \($0.message.contains("\"X\" -> \"Y\" -> \"Z\" -> \"X\""))" } ?? "?")")
                }
            }
        }) { fx in
            try resolveThrice(fx, "X") { _ in "" }
        }
        #expect(outcome.log.filter { $0.hasPrefix("Z failed") } == Array(repeating: "Z failed: \(ErrorCode.cycle) true", count: 3))
        #expect(outcome.log.filter { $0.hasPrefix("make") && !$0.hasPrefix("make P") } == Array(repeating: ["make Y", "make W", "make X"], count: 3).flatMap { $0 })
        #expect(outcome.log.filter { $0 == "make P\(Plan.maxSteps)" }.count == (large ? 3 : 0))
        #expect(requests == ["requests": 3, "plan": 3])
    }

    /// A callback's request whose plan makes slots per resolve (B: WEAK C, WEAK_LAZY A, LAZY D): the plan runs
    /// (no `requestSlots`); the weak-lazy cell bound to the graph's A (made before the request, as the build binds
    /// it), the lazy one to D, which the callback's next request makes: one A, one D per graph.
    @Test func requestPlanMakesSlotsPerResolve() throws {
        let (outcome, requests) = try expectSame({ fx in
            let a = try fx.register("A")
            try fx.register("B", [dep("C"), weakDep("C"), weakLazyDep("A"), lazyDep("D")])
            try fx.register("C")
            try fx.register("D")
            fx.onComplete(a) { resolver, _, obj in
                for key in ["B", "D"] { obj.got.append(try resolver.get(Key(key)).pointer) }
            }
        }) { fx in
            try resolveThrice(fx, "A") { a in
                let b = Obj.at(a.got[0])
                let lazyA = try? fx.bridge.cell(b.words[2])?.get()
                let lazyD = try? fx.bridge.cell(b.words[3])?.get()
                return "A is the graph's: \(lazyA == a.pointer), D is the graph's: \(lazyD == a.got[1])"
            }
        }
        #expect(outcome.seen == Array(repeating: "A is the graph's: true, D is the graph's: true", count: 3))
        #expect(outcome.log.filter { $0.hasPrefix("make") } == Array(repeating: ["make A", "make C", "make B", "make D"], count: 3).flatMap { $0 })
        #expect(requests == ["requests": 6, "plan": 6])
    }

    // MARK: a request whose plan has a RESOLVER slot (branch requestslots: no `requestSlots` for it)

    /// A callback's request for singleton S (T transient, R with a RESOLVER slot whose factory gets G and
    /// singleton U): S's creation plan runs, R's factory with the request's frames open, its gets requests made
    /// meanwhile (G made into A's graph, which the callback's next get finds; U's creation plan); S made once.
    @Test func requestForASingletonWhosePlanHasAResolverSlotRunsThePlan() throws {
        let (outcome, requests) = try expectSame({ fx in
            let a = try fx.register("A")
            try fx.register("S", [dep("T"), dep("R")], scope: .singleton)
            try fx.register("T", scope: .transient)
            try fx.register("R", [.resolver]) { obj in
                let resolver = try #require(fx.bridge.resolver(obj.words[0]))
                for key in ["G", "U"] { obj.got.append(try resolver.get(Key(key)).pointer) }
            }
            try fx.register("G", [dep("T")])
            try fx.register("U", scope: .singleton)
            fx.onComplete(a) { resolver, _, obj in
                for key in ["S", "G"] { obj.got.append(try resolver.get(Key(key)).pointer) }
            }
        }) { fx in
            try resolveThrice(fx, "A") { a in
                let r = Obj.at(a.got[0]).dep(1)
                return "R's G is A's: \(r.got[0] == a.got[1]), S \(fx.tracker.calls("S")) U \(fx.tracker.calls("U")) G \(fx.tracker.calls("G"))"
            }
        }
        #expect(outcome.seen == ["R's G is A's: true, S 1 U 1 G 1", "R's G is A's: false, S 1 U 1 G 2", "R's G is A's: false, S 1 U 1 G 3"])
        #expect(outcome.log.filter { $0.hasPrefix("make") }.prefix(6) == ["make A", "make T", "make T", "make G", "make U", "make R"])
        // The first resolve: S's plan, R's G and U by theirs; A's G found. Then S found, G made by its plan.
        #expect(requests == ["requests": 8, "found": 3, "plan": 5], "\(requests)")
    }

    /// A callback's request for singleton S with a LAZY slot (L, graph-scoped, which S's plan makes after it) and a
    /// RESOLVER slot whose factory gets L and W (weak): S's creation plan runs with its slots made as a creating replay
    /// makes them (branch requestslots: no `requestSlots` for slots over creation steps): the cell bound to the L the
    /// get built into A's graph, which S's plan then takes; one S.
    @Test func requestForASingletonWithLazyAndResolverSlotsRunsThePlan() throws {
        let (outcome, requests) = try expectSame({ fx in
            let a = try fx.register("A")
            try fx.register("S", [lazyDep("L"), .resolver, dep("L")], scope: .singleton) { obj in
                let resolver = try #require(fx.bridge.resolver(obj.words[1]))
                for key in ["L", "W"] { obj.got.append(try resolver.get(Key(key)).pointer) }
            }
            try fx.register("L")
            try fx.register("W", scope: .weak)
            fx.onComplete(a) { resolver, _, obj in
                for key in ["S", "L"] { obj.got.append(try resolver.get(Key(key)).pointer) }
            }
        }) { fx in
            try resolveThrice(fx, "A") { a in
                let s = Obj.at(a.got[0])
                let lazy = try? fx.bridge.cell(s.words[0])?.get()
                return "lazy L is S's: \(lazy == s.depPointer(2)), its get's: \(s.got[0] == s.depPointer(2)), S \(fx.tracker.calls("S")) L \(fx.tracker.calls("L"))"
            }
        }
        #expect(outcome.seen == ["lazy L is S's: true, its get's: true, S 1 L 1", "lazy L is S's: true, its get's: true, S 1 L 2",
                                 "lazy L is S's: true, its get's: true, S 1 L 3"])
        // S's plan and W's (the first resolve), then A's L (made per graph); S's gets of L and the callback's found.
        #expect(requests == ["requests": 8, "found": 4, "plan": 4], "\(requests)")
    }

    /// A factory's request for singleton S whose plan's R gets S (under construction: the build's cycle, its
    /// path through the request's frames) and then a missing key (its message names those frames).
    @Test func aRequestsResolverMeetsTheRequestUnderConstruction() throws {
        let (outcome, requests) = try expectSame({ fx in
            try fx.register("A", [.resolver]) { obj in
                _ = try #require(fx.bridge.resolver(obj.words[0])).get(Key("S"))
            }
            try fx.register("S", [dep("R")], scope: .singleton)
            try fx.register("R", [.resolver]) { obj in
                let resolver = try #require(fx.bridge.resolver(obj.words[0]))
                for key in ["S", "Missing"] {
                    do { _ = try resolver.get(Key(key)) } catch { fx.tracker.note("\(key) failed: \((error as? TetherError)?.message ?? "")") }
                }
            }
        }) { fx in
            try resolveThrice(fx, "A") { _ in "S \(fx.tracker.calls("S")) R \(fx.tracker.calls("R"))" }
        }
        #expect(outcome.seen == ["S 1 R 1", "S 1 R 1", "S 1 R 1"])
        #expect(outcome.log.first { $0.hasPrefix("S failed") }?.contains("constructors: \"S\" -> \"R\" -> \"S\";") == true, "\(outcome.log)")
        #expect(outcome.log.first { $0.hasPrefix("Missing failed") }?.contains("(needed by \"A\" -> \"S\" -> \"R\")") == true, "\(outcome.log)")
        // S's plan, then R's request for S: its plan runs up to S (nothing before it), the build's cycle; then S found.
        #expect(requests["requestSlots"] == nil && requests["plan"] == 2 && requests["found"] == 2, "\(requests)")
    }

    // The reasons no C test counted (benchmarks/README, branch `requestrest`), each reached here: still built,
    // the same outcome as with plans off.

    /// With a trace hook set: the plan runs in a traced request mode (`TracePlanTests` compares the events).
    @Test func aTracedRequestRunsThePlan() throws {
        let (outcome, requests) = try expectSame({ fx in
            let a = try fx.register("A")
            try fx.register("B", [dep("C")])
            try fx.register("C", scope: .transient)
            fx.onComplete(a) { resolver, _, obj in obj.got.append(try resolver.get(Key("B")).pointer) }
            let tracker = fx.tracker
            fx.container.setTrace { e in tracker.note("trace \(e.kind) \(e.key.name)") }
        }) { fx in
            try resolveThrice(fx, "A") { a in Obj.at(a.got[0]).dep(0).label }
        }
        #expect(outcome.seen == ["C", "C", "C"] && outcome.log.contains("trace factoryCall B"))
        #expect(requests == ["requests": 3, "plan": 3])
    }

    /// A plan with a container-scoped step (B -> C, C container-scoped), asked from three children: the request
    /// runs its plan (it reads the request, `Plan.RequestRun`): the first request in a child makes C, published into
    /// the child with the graph; the next takes C cached there (keyed, its callbacks not run again), as the build.
    @Test func aRequestOverAContainerStepRunsThePlan() throws {
        let (outcome, requests) = try expectSame({ fx in
            let a = try fx.register("A")
            try fx.register("B", [dep("C")])
            let c = try fx.register("C", scope: .container)
            fx.onComplete(a) { resolver, _, obj in obj.got.append(try resolver.get(Key("B")).pointer) }
            fx.onComplete(c)
        }) { fx in
            try (0..<3).flatMap { _ in
                let child = try fx.child()
                defer { _ = try? child.close() }
                return try (0..<2).map { _ in
                    let a = try fx.resolve("A", in: child)
                    let c = Obj.at(Obj.of(a).got[0]).depPointer(0)
                    return withExtendedLifetime(a) { "C the child's: \((try? fx.resolve("C", in: child).pointer) == c)" }
                }
            }
        }
        #expect(outcome.seen == Array(repeating: "C the child's: true", count: 6))
        #expect(outcome.log.filter { $0.hasPrefix("make") || $0.hasPrefix("complete") }
                == Array(repeating: ["make A", "complete A", "make C", "make B", "complete C", "make A", "complete A", "make B"], count: 3).flatMap { $0 })
        #expect(requests == ["requests": 6, "plan": 6])
    }

    /// A callback's request for a container-scoped key itself (its plan's root a container step), from a child:
    /// made by the plan and published into the child with the graph, found cached by the next resolve's request.
    @Test func aRequestForAContainerScopedKeyRunsThePlan() throws {
        let (outcome, requests) = try expectSame({ fx in
            let a = try fx.register("A")
            try fx.register("S", [dep("D")], scope: .container)
            try fx.register("D", scope: .transient)
            fx.onComplete(a) { resolver, _, obj in obj.got.append(try resolver.get(Key("S")).pointer) }
        }) { fx in
            let child = try fx.child()
            defer { _ = try? child.close() }
            let got = try (0..<3).map { _ in
                let a = try fx.resolve("A", in: child)
                return Obj.of(a).got[0]
            }
            return ["one S: \(Set(got).count == 1), the child's: \(try fx.resolve("S", in: child).pointer == got[0])"]
        }
        #expect(outcome.seen == ["one S: true, the child's: true"])
        #expect(outcome.log.filter { $0.hasPrefix("make") } == ["make A", "make D", "make S", "make A", "make A"])
        #expect(requests == ["requests": 3, "found": 2, "plan": 1])
    }

    /// A request whose plan takes a declared value (B -> V, B -> E): the child's value, where the build takes it;
    /// a child providing none fails the request (`notFound`, at V's factory) after E was made, which stays in the graph (the
    /// callback's next request finds it), as the build leaves it; the error names the value's key.
    @Test func aRequestReadingAValueRunsThePlanAndFailsWhereTheBuildDoes() throws {
        let (outcome, requests) = try expectSame({ fx in
            _ = try fx.container.declareValue(Key("V"))
            let a = try fx.register("A")
            try fx.register("B", [dep("E"), dep("V")])
            try fx.register("E")
            fx.onComplete(a) { resolver, _, obj in
                do { obj.got.append(try resolver.get(Key("B")).pointer) } catch let e as TetherError {
                    fx.tracker.note("B failed: \(e.code) \(e.message.contains("\"V\""))")
                }
                obj.got.append(try resolver.get(Key("E")).pointer)
            }
        }) { fx in
            var seen: [String] = []
            for provides in [true, false] {
                let child = try fx.child()
                if provides {
                    let value = Ref(retaining: Obj(label: "V1", words: [])).opaque
                    _ = try child.provideValue(Key("V"), value, context: nil, destructor: { p, _ in Ref<Obj>(opaque: p).release() })
                }
                let a = try fx.resolve("A", in: child)
                let got = Obj.of(a).got
                seen.append(provides ? "B(\(Obj.at(got[0]).dep(0).label),\(Obj.at(got[0]).dep(1).label)), E B's: \(Obj.at(got[0]).depPointer(0) == got[1])"
                                     : "E kept: \(got.count == 1 && Obj.at(got[0]).label == "E")")
                _ = a
                _ = try child.close()
            }
            return seen
        }
        #expect(outcome.seen == ["B(E,V1), E B's: true", "E kept: true"])
        #expect(outcome.log.filter { $0.hasPrefix("make") || $0.hasPrefix("B failed") }
                == ["make A", "make E", "make B", "make A", "make E", "B failed: notFound true"])
        #expect(requests == ["requests": 4, "found": 2, "plan": 2])
    }

    /// A RESOLVER slot's get of a container-scoped key (D) that R, further out, asks for after the slot's owner
    /// (R -> H, D; H's factory gets D), then of a container key only the request asks for (X -> Y, both
    /// container-scoped): each request runs its plan, claiming its container steps' cells in the child amid the
    /// graph's (R's own, kept: `Graph.dropContainerClaims`, a cell the graph holds taken from there), and R takes
    /// the D the request made where it reaches it (one D, published into the child once), as the build.
    @Test func aResolverSlotsRequestsClaimContainerCellsAmidTheGraphs() throws {
        let (outcome, requests) = try expectSame({ fx in
            try fx.register("R", [dep("H"), dep("D")], scope: .container)
            try fx.register("D", scope: .container)
            try fx.register("X", [dep("Y")], scope: .container)
            try fx.register("Y", scope: .container)
            try fx.register("H", [.resolver]) { obj in
                let r = try #require(fx.bridge.resolver(obj.words[0]))
                obj.got.append(try r.get(Key("D")).pointer)
                obj.got.append(try r.get(Key("X")).pointer)
            }
        }) { fx in
            try (0..<3).map { _ in
                let child = try fx.child()
                defer { _ = try? child.close() }
                let root = try fx.resolve("R", in: child)
                let h = Obj.of(root).dep(0)
                let d = Obj.of(root).depPointer(1)
                return withExtendedLifetime(root) {
                    "D one: \(h.got[0] == d && (try? fx.resolve("D", in: child).pointer) == d), X the child's: \((try? fx.resolve("X", in: child).pointer) == h.got[1])"
                }
            }
        }
        #expect(outcome.seen == Array(repeating: "D one: true, X the child's: true", count: 3))
        #expect(outcome.log.filter { $0.hasPrefix("make") }
                == Array(repeating: ["make D", "make Y", "make X", "make H", "make R"], count: 3).flatMap { $0 })
        #expect(requests == ["requests": 6, "plan": 6])
    }

    /// A request for a singleton not cached whose creation plan has a container step (S -> C, C container-scoped;
    /// `requestReadsRequest` before branch `requests`): its plan runs, `claimAsked` claiming both cells where the
    /// build's walk asks for each (`Plan.requestClaimOrder`); the next two requests find S cached.
    @Test func aRequestsCreationPlanOverAContainerStepRunsThePlan() throws {
        let (outcome, requests) = try expectSame({ fx in
            let a = try fx.register("A")
            try fx.register("S", [dep("C")], scope: .singleton)
            try fx.register("C", scope: .container)
            fx.onComplete(a) { resolver, _, obj in obj.got.append(try resolver.get(Key("S")).pointer) }
        }) { fx in
            try resolveThrice(fx, "A") { a in
                "\(Obj.at(a.got[0]).dep(0).label) cached: \(Obj.at(a.got[0]).depPointer(0) == (try? fx.resolve("C").pointer))"
            }
        }
        #expect(outcome.seen == Array(repeating: "C cached: true", count: 3))
        #expect(outcome.log.filter { $0.hasPrefix("make") } == ["make A", "make C", "make S", "make A", "make A"])
        #expect(requests == ["requests": 3, "found": 2, "plan": 1])
    }

    /// The same from request children: K (container-scoped, the child's) -> S (a singleton, the root's) -> C
    /// (container-scoped: the resolving child's, as the build's) and T (a singleton). The first child's request
    /// creates S, T and that child's C, and K; the second's finds S and makes only its K. Each made once, the first
    /// child's C kept by S past its child's close, dropped with the root after S.
    @Test func aRequestFromAChildCreatingASingletonOverContainerStepsRunsThePlan() throws {
        let (outcome, requests) = try expectSame({ fx in
            let a = try fx.register("A")
            try fx.register("K", [dep("S")], scope: .container)
            try fx.register("S", [dep("C"), dep("T")], scope: .singleton)
            try fx.register("C", scope: .container)
            try fx.register("T", scope: .singleton)
            fx.onComplete(a) { resolver, _, obj in obj.got.append(try resolver.get(Key("K")).pointer) }
        }) { fx in
            var seen: [String] = []
            var s: UnsafeMutableRawPointer?
            for n in 0..<2 {
                let child = try fx.child()
                let a = try fx.resolve("A", in: child)
                let k = Obj.at(Obj.of(a).got[0])
                seen.append(withExtendedLifetime(a) {
                    let sameS = s == nil || s == k.depPointer(0)
                    s = k.depPointer(0)
                    let c = n == 0 ? "C the child's: \((try? fx.resolve("C", in: child).pointer) == k.dep(0).depPointer(0))" : "C kept"
                    return "K the child's: \((try? fx.resolve("K", in: child).pointer) == k.pointer), one S: \(sameS), \(c)"
                })
                _ = try child.close()
            }
            _ = try fx.container.close()
            return seen
        }
        // S, a root singleton, takes the root's C (its own container's, as its build frame), not the child's.
        #expect(outcome.seen == ["K the child's: true, one S: true, C the child's: false", "K the child's: true, one S: true, C kept"])
        #expect(outcome.log.filter { $0.hasPrefix("make") || $0.hasPrefix("drop") }
                == ["make A", "make C", "make T", "make S", "make K", "make C", "drop C", "drop A", "drop K",
                    "make A", "make K", "drop A", "drop K", "drop S", "drop T", "drop C"], "\(outcome.log)")
        #expect(requests == ["requests": 2, "plan": 2])
    }

    /// The container step found cached at the request's claims (C resolved first): S's creation plan for that
    /// state runs, C taken cached, S made over it once.
    @Test func aRequestsCreationPlanFindingItsContainerStepCachedRunsThePlan() throws {
        let (outcome, requests) = try expectSame({ fx in
            let a = try fx.register("A")
            try fx.register("S", [dep("C"), dep("D")], scope: .singleton)
            try fx.register("C", [dep("D")], scope: .container)
            try fx.register("D", scope: .transient)
            fx.onComplete(a) { resolver, _, obj in obj.got.append(try resolver.get(Key("S")).pointer) }
        }) { fx in
            let c = try fx.resolve("C")
            return try withExtendedLifetime(c) {
                try resolveThrice(fx, "A") { a in "C the cached one: \(Obj.at(a.got[0]).depPointer(0) == c.pointer)" }
            }
        }
        #expect(outcome.seen == Array(repeating: "C the cached one: true", count: 3))
        #expect(outcome.log.filter { $0.hasPrefix("make") } == ["make D", "make C", "make A", "make D", "make S", "make A", "make A"])
        #expect(requests == ["requests": 3, "found": 2, "plan": 1])
    }

    /// A request's plan with a RESOLVER slot and container steps: the request for Root (-> H, C, S; H's RESOLVER
    /// slot; C container-scoped, asked for after H; S a singleton over C), H's factory's get of C (or none) a request
    /// made meanwhile: C made once, where the build makes it, and the one Root and S take. The plan serves each (branch
    /// reqleak: `requestReadsRequest` before it, `aResolverSlotsGetInARequestWithAContainerStepLeaksNothing`).
    @Test(arguments: [true, false]) func aRequestsPlanWithAResolverSlotAndContainerStepsRunsThePlan(gets: Bool) throws {
        let (outcome, requests) = try expectSame({ fx in
            let a = try fx.register("A")
            try fx.register("C", scope: .container)
            try fx.register("S", [dep("C")], scope: .singleton)
            try fx.register("H", [.resolver]) { obj in
                guard gets else { return }
                obj.got.append(try #require(fx.bridge.resolver(obj.words[0])).get(Key("C")).pointer)
            }
            try fx.register("Root", [dep("H"), dep("C"), dep("S")])
            fx.onComplete(a) { resolver, _, obj in obj.got.append(try resolver.get(Key("Root")).pointer) }
        }) { fx in
            try resolveThrice(fx, "A") { a in
                let root = Obj.at(a.got[0])
                let c = root.depPointer(1)
                return "one C: \(root.dep(0).got.allSatisfy { $0 == c } && root.dep(2).depPointer(0) == c && (try? fx.resolve("C").pointer) == c)"
            }
        }
        #expect(outcome.seen == Array(repeating: "one C: true", count: 3))
        // (H's get builds C before H is made; without it, C is made where Root asks, after H.)
        let first = gets ? ["make A", "make C", "make H", "make S", "make Root"] : ["make A", "make H", "make C", "make S", "make Root"]
        #expect(Array(outcome.log.filter { $0.hasPrefix("make") }.prefix(5)) == first, "\(outcome.log)")
        #expect(outcome.log.filter { $0 == "make C" }.count == 1 && outcome.log.filter { $0 == "make S" }.count == 1)
        // (Each request not found, H's gets too, served by a plan.)
        #expect(requests["requests"] == (requests["found"] ?? 0) + (requests["plan"] ?? 0), "\(requests)")
    }

    /// A request whose plan has a RESOLVER slot and a container step (Root -> H, C, G; H's RESOLVER slot getting C, D (a
    /// container key the plan does not make) or G; or Root over a singleton S -> C too), from a request child: C made
    /// once, published into the child once and dropped as the child closes (S keeps it: with the root). The second
    /// request finds C cached at its claims (`Graph.enterRunning` enters it before H's factory); the get then finding it
    /// in the graph, `Plan.takeBuiltAsked` took the graph's over the claim's reference and kept that one (never dropped;
    /// found by branch requests, built as `requestReadsRequest` until branch reqleak). The plan serves both requests now
    /// (`kind` N: H without a RESOLVER slot). Each path's counts, factories and destructors checked.
    @Test(arguments: ["C", "D", "G", "CS", "N"]) func aResolverSlotsGetInARequestWithAContainerStepLeaksNothing(kind: String) throws {
        do {
            let fx = try Fixture()
            let a = try fx.register("A")
            try fx.register("C", scope: .container)
            try fx.register("D", scope: .container)
            try fx.register("G")
            try fx.register("S", [dep("C")], scope: .singleton)
            let got = kind == "CS" ? "C" : kind
            try fx.register("H", kind == "N" ? [] : [.resolver]) { obj in
                guard kind != "N" else { return }
                obj.got.append(try #require(fx.bridge.resolver(obj.words[0])).get(Key(got)).pointer)
            }
            try fx.register("Root", [dep("H"), dep("C"), dep("G")] + (kind == "CS" ? [dep("S")] : []))
            fx.onComplete(a) { resolver, _, obj in obj.got.append(try resolver.get(Key("Root")).pointer) }
            let child = try fx.child()
            PlanStats.countOnThisThread()
            let before = PlanStats.requestsOnThisThread()
            for _ in 0..<2 { _ = try fx.resolve("A", in: child) }
            let after = PlanStats.requestsOnThisThread()
            // (Each request not found, H's gets too, served by a plan.)
            let count = { (name: String) in (after[name] ?? 0) - (before[name] ?? 0) }
            #expect(count("requests") == count("found") + count("plan") && count("plan") >= 2, "\(after)")
            _ = try child.close()
            #expect(fx.tracker.made("C") == 1 && fx.tracker.dropped("C") == (kind == "CS" ? 0 : 1), "\(fx.tracker.log)")
            _ = try fx.container.close()
            #expect(fx.tracker.badDrops == 0 && fx.tracker.liveCount == 0, "\(fx.tracker.log)")
        }
    }

    /// A plan with a `cachedVariant` (B -> S, X; S -> X, S container-scoped: X, an input of the container step, taken by
    /// B too; `requestReadsRequest` before branch `requests`): the request's run picks by S's cache (`Plan.variant(forCached:mixed:)`),
    /// the plan while S is not cached (X made under S, B takes it), then the variant (S cached, X made where B asks).
    @Test func aRequestsPlanWithACachedVariantRunsIt() throws {
        let (outcome, requests) = try expectSame({ fx in
            let a = try fx.register("A")
            try fx.register("B", [dep("S"), dep("X")])
            try fx.register("S", [dep("X")], scope: .container)
            try fx.register("X")
            fx.onComplete(a) { resolver, _, obj in obj.got.append(try resolver.get(Key("B")).pointer) }
        }) { fx in
            try resolveThrice(fx, "A") { a in
                let b = Obj.at(a.got[0])
                return "B's X S's: \(b.dep(0).depPointer(0) == b.depPointer(1))"
            }
        }
        #expect(outcome.seen == ["B's X S's: true", "B's X S's: false", "B's X S's: false"])
        #expect(outcome.log.filter { $0.hasPrefix("make") } == ["make A", "make X", "make S", "make B", "make A", "make X", "make B", "make A", "make X", "make B"])
        #expect(requests == ["requests": 3, "plan": 3])
    }

    /// A's callback asks for B (-> `before`, S1, S2, X; S1 and S2 container-scoped over X, which B takes too; `setUp`
    /// registers what `before` names), S1 resolved first and kept; then A thrice, each B read: its S1 the cached one,
    /// whether its X is S2's, then what `more` reads of it.
    private func requestsWithS1Cached(before: [Param] = [], _ setUp: (Fixture) throws -> Void = { _ in },
                                      more: (Obj) -> String = { _ in "" }) throws -> (Outcome, [String: Int]) {
        let n = before.count
        return try expectSame({ fx in
            let a = try fx.register("A")
            try fx.register("B", before + [dep("S1"), dep("S2"), dep("X")])
            try setUp(fx)
            try fx.register("S1", [dep("X")], scope: .container)
            try fx.register("S2", [dep("X")], scope: .container)
            try fx.register("X")
            fx.onComplete(a) { resolver, _, obj in obj.got.append(try resolver.get(Key("B")).pointer) }
        }) { fx in
            let s1 = try fx.resolve("S1")
            return try withExtendedLifetime(s1) {
                try resolveThrice(fx, "A") { a in
                    let b = Obj.at(a.got[0])
                    return "S1 cached: \(b.depPointer(n) == s1.pointer), B's X S2's: \(b.dep(n + 1).depPointer(0) == b.depPointer(n + 2))" + more(b)
                }
            }
        }
    }

    /// A plan with a `cachedVariant` whose container steps are some cached, others not (S1 cached, S2 not; both over X,
    /// which B takes too; `requestReadsRequest` before branch reqleak): the request's run picks the plan for that set
    /// (`Plan.variant(forCached:)`: a `mixedVariant`, as `runRequest`), then the `cachedVariant` once S2 is cached too.
    @Test func aRequestsPlanWithACachedVariantAndSomeContainerStepsCachedRunsThePlan() throws {
        let (outcome, requests) = try requestsWithS1Cached()
        #expect(outcome.seen == ["S1 cached: true, B's X S2's: true", "S1 cached: true, B's X S2's: false", "S1 cached: true, B's X S2's: false"])
        #expect(outcome.log.filter { $0.hasPrefix("make") } == ["make X", "make S1", "make A", "make X", "make S2", "make B", "make A", "make X", "make B", "make A", "make X", "make B"])
        #expect(requests == ["requests": 3, "plan": 3])
    }

    /// The same with B's completion callback, whose plan needs the graph (`requestReadsRequest` before branch
    /// creatingmixed: the first request built): the request runs that set's `mixedVariant` (one that needs the graph
    /// too, as the graph's own run replays it), then the `cachedVariant`; the same outcome.
    @Test func aRequestsPlanNeedingTheGraphWithSomeContainerStepsCachedRunsThePlan() throws {
        let (outcome, requests) = try expectSame({ fx in
            let a = try fx.register("A")
            let b = try fx.register("B", [dep("S1"), dep("S2"), dep("X")])
            try fx.register("S1", [dep("X")], scope: .container)
            try fx.register("S2", [dep("X")], scope: .container)
            try fx.register("X")
            fx.onComplete(a) { resolver, _, obj in obj.got.append(try resolver.get(Key("B")).pointer) }
            fx.onComplete(b)
        }) { fx in
            let s1 = try fx.resolve("S1")
            return try withExtendedLifetime(s1) {
                try resolveThrice(fx, "A") { a in
                    let b = Obj.at(a.got[0])
                    return "S1 cached: \(b.depPointer(0) == s1.pointer), B's X S2's: \(b.dep(1).depPointer(0) == b.depPointer(2))"
                }
            }
        }
        #expect(outcome.seen == ["S1 cached: true, B's X S2's: true", "S1 cached: true, B's X S2's: false", "S1 cached: true, B's X S2's: false"])
        #expect(outcome.log.filter { $0.hasPrefix("make") || $0.hasPrefix("complete") }
                == ["make X", "make S1", "make A", "complete A", "make X", "make S2", "make B", "complete B",
                    "make A", "complete A", "make X", "make B", "complete B", "make A", "complete A", "make X", "make B", "complete B"],
                "\(outcome.log)")
        #expect(requests == ["requests": 3, "plan": 3])
    }

    /// The same with H (a RESOLVER slot) asked for first (B -> H, S1, S2, X): S1 and S2 claimed late (`Step.claimsLate`),
    /// and so is S2 in the `mixedVariant` for S1 cached (`requestReadsRequest` before branch reqrest: `recordMixed`'s walk
    /// did not fit; now `Plan.lateClaimsKeepOrder`); H's get of `got` (none, S2, X: a request made meanwhile building
    /// S2, X before the plan's steps ask) the one B's steps take. X made once per request, S2 once; the build's order.
    @Test(arguments: ["", "S2", "X"]) func aRequestsMixedVariantWithAContainerStepClaimedLateRunsThePlan(got: String) throws {
        let (outcome, requests) = try requestsWithS1Cached(before: [dep("H")], { fx in
            try fx.register("H", [.resolver]) { obj in
                guard !got.isEmpty else { return }
                obj.got.append(try #require(fx.bridge.resolver(obj.words[0])).get(Key(got)).pointer)
            }
        }) { b in
            ", H's: \(got == "S2" ? b.depPointer(2) == b.dep(0).got[0] : got == "X" ? b.depPointer(3) == b.dep(0).got[0] : true)"
        }
        #expect(outcome.seen == ["S1 cached: true, B's X S2's: true, H's: true", "S1 cached: true, B's X S2's: false, H's: true",
                                 "S1 cached: true, B's X S2's: false, H's: true"], "\(got)")
        // (H's get makes what it asks for before H; the cached S2 found by it after the first request.)
        let first = ["": ["make H", "make X", "make S2"], "S2": ["make X", "make S2", "make H"], "X": ["make X", "make H", "make S2"]][got]!
        let next = got == "X" ? ["make A", "make X", "make H", "make B"] : ["make A", "make H", "make X", "make B"]
        #expect(outcome.log.filter { $0.hasPrefix("make") } == ["make X", "make S1", "make A"] + first + ["make B"] + next + next,
                "\(got): \(outcome.log)")
        #expect(requests["requestReadsRequest"] == nil && requests["requests"] == (requests["found"] ?? 0) + (requests["plan"] ?? 0), "\(got): \(requests)")
    }

    /// `containerHeld`'s mixed-cache shape in a request (`DeclineReasonTests.someContainerStepsCachedWithAStepTheyAskedForTakenByAMadeOneRunAPlan`'s
    /// shape 0, no `cachedVariant`): A's callback in a child asks for Handler (Session cached there, Late not; Late takes
    /// Req, which Session asked for first). The request's claims decline the plan's run (`containerHeld` before branch
    /// creatingmixed: built) and switch to that set's `mixedVariant` (`Graph.switchesToVariant`, `runAsked`); with One,
    /// a singleton not cached, the first request is a creating one (`claimAsked`), switching to a creating variant.
    /// Graphing: Handler's completion callback (a plan that needs the graph).
    @Test func aRequestFindingSomeContainerStepsCachedRunsTheMixedVariant() throws {
        for (one, completes) in [(false, false), (false, true), (true, false), (true, true)] {
            let (outcome, requests) = try expectSame({ fx in
                let a = try fx.register("A", scope: .transient)
                let handler = try fx.registerMixedCacheShape(0, more: one ? [dep("One")] : []) { fx in
                    if one { try fx.register("One", scope: .singleton) }
                }
                if completes { fx.onComplete(handler) }
                fx.onComplete(a) { resolver, _, obj in obj.got.append(try resolver.get(Key("Handler")).pointer) }
            }) { fx in
                let child = try fx.child()
                let session = try fx.resolve("Session", in: child)
                return try withExtendedLifetime(session) {
                    try resolveThrice(fx, "A", in: child) { a in
                        let handler = Obj.at(a.got[0])
                        return "\(handler.tree()) session \(handler.depPointer(0) == session.pointer) req \(handler.dep(2).depPointer(0) != Obj.of(session).depPointer(0))"
                    }
                }
            }
            #expect(outcome.seen.allSatisfy { $0.hasSuffix("session true req true") }, "one \(one) completes \(completes): \(outcome.seen)")
            #expect(requests == ["requests": 3, "plan": 3], "one \(one) completes \(completes): \(requests)")
        }
    }

    /// From a child with a registration of its own that the plan binds (B -> C, C the child's): the plan runs,
    /// its local step the child's registration (branch requestplans: no `requestLocals`).
    @Test func aRequestBindingAChildsOwnRegistrationRunsThePlan() throws {
        let (outcome, requests) = try expectSame({ fx in
            let a = try fx.register("A")
            try fx.register("B", [dep("C")], scope: .transient)
            try fx.register("C", scope: .transient)
            fx.onComplete(a) { resolver, _, obj in obj.got.append(try resolver.get(Key("B")).pointer) }
        }) { fx in
            let child = try fx.child()
            try fx.register("C", scope: .transient, in: child, label: "child C")
            return try resolveThrice(fx, "A", in: child) { a in Obj.at(a.got[0]).dep(0).label }
        }
        #expect(outcome.seen == ["child C", "child C", "child C"])
        #expect(requests == ["requests": 3, "plan": 3])
    }

    /// The same, C graph-scoped and A's too (A -> C): the request takes the graph's C (the child's), B's plan
    /// makes no other; and a request for the child's own singleton S (S -> D) not cached: its creation plan
    /// runs (S's cell the child's registration's), made once, then found cached.
    @Test func aRequestTakingAChildsOwnKeyFromTheGraphAndCreatingItsSingleton() throws {
        let (outcome, requests) = try expectSame({ fx in
            let a = try fx.register("A", [dep("C")])
            try fx.register("B", [dep("C")], scope: .transient)
            try fx.register("C")
            try fx.register("D", scope: .transient)
            try fx.register("S", scope: .singleton)
            fx.onComplete(a) { resolver, _, obj in
                obj.got.append(try resolver.get(Key("B")).pointer)
                obj.got.append(try resolver.get(Key("S")).pointer)
            }
        }) { fx in
            let child = try fx.child()
            try fx.register("C", in: child, label: "child C")
            try fx.register("S", [dep("D")], scope: .singleton, in: child, label: "child S")
            return try resolveThrice(fx, "A", in: child) { a in
                "B's C is A's: \(Obj.at(a.got[0]).depPointer(0) == a.depPointer(0)) \(a.dep(0).label), \(Obj.at(a.got[1]).label)"
            }
        }
        #expect(outcome.seen == Array(repeating: "B's C is A's: true child C, child S", count: 3))
        #expect(outcome.log.filter { $0.hasPrefix("make") } == ["make child C", "make A", "make B", "make D", "make child S"]
                + Array(repeating: ["make child C", "make A", "make B"], count: 2).flatMap { $0 })
        #expect(requests == ["requests": 6, "plan": 4, "found": 2], "\(requests)")
    }

    // MARK: a request made while a request's plan runs (branch requestplans: no `requestNested`)

    /// A's callback asks for X (X -> G, Y; Y -> W, H); W's factory asks the callback's resolver (open) for
    /// `asked`: a request made while X's plan runs. Logs what W's request got or its error.
    private func meanwhile(_ fx: Fixture, asked: String) throws {
        let a = try fx.register("A")
        let open = Box<Resolver?>(nil)
        fx.onComplete(a) { resolver, _, obj in
            open.value = resolver
            defer { open.value = nil }
            obj.got.append(try resolver.get(Key("X")).pointer)
        }
        try fx.register("X", [dep("G"), dep("Y")])
        try fx.register("G")
        try fx.register("Y", [dep("W"), dep("H")])
        try fx.register("W") { obj in
            do { obj.got.append(try #require(open.value).get(Key(asked)).pointer) } catch let e as TetherError {
                fx.tracker.note("\(asked) failed: \(e.code) \(e.message) path \(e.parts.path.map(\.name).joined(separator: ","))")
            }
        }
        try fx.register("H", [dep("K")])
        try fx.register("K", scope: .transient)
    }

    /// W's request for H, which X's plan makes after W: H's plan runs on a progress of its own (the running
    /// request's kept aside), X's plan then takes H from the graph: one H per graph, the build's order.
    @Test func aRequestMadeWhileARequestsPlanRunsRunsItsPlan() throws {
        let (outcome, requests) = try expectSame({ fx in try meanwhile(fx, asked: "H") }) { fx in
            try resolveThrice(fx, "A") { a in
                let x = Obj.at(a.got[0])
                let w = x.dep(1).dep(0)
                return "Y's H is W's: \(x.dep(1).depPointer(1) == w.got[0]), H \(fx.tracker.calls("H")) K \(fx.tracker.calls("K"))"
            }
        }
        #expect(outcome.seen == ["Y's H is W's: true, H 1 K 1", "Y's H is W's: true, H 2 K 2", "Y's H is W's: true, H 3 K 3"])
        #expect(outcome.log.filter { $0.hasPrefix("make") } == Array(repeating: ["make A", "make G", "make K", "make H", "make W", "make Y", "make X"], count: 3).flatMap { $0 })
        #expect(requests == ["requests": 6, "plan": 6])
    }

    /// W's request for Q -> K, M (M not registered): the plan fails as the build, its path through X's steps
    /// open then (`meanwhileOpen`), K kept in the graph.
    @Test func aFailingRequestMadeWhileARequestsPlanRunsNamesItsOpenSteps() throws {
        let (outcome, requests) = try expectSame({ fx in
            try meanwhile(fx, asked: "Q")
            try fx.register("Q", [dep("K"), dep("M")])
        }) { fx in
            try resolveThrice(fx, "A") { _ in "K \(fx.tracker.calls("K"))" }
        }
        #expect(outcome.seen == ["K 2", "K 4", "K 6"])
        #expect(outcome.log.filter { $0.hasPrefix("Q failed") } == Array(repeating:
            "Q failed: \(ErrorCode.notFound) no registration for \"M\" (needed by \"X\" -> \"Y\" -> \"W\" -> \"Q\"); register it first (tether_register) or check the spelling path X,Y,W,Q", count: 3))
        #expect(requests == ["requests": 6, "plan": 6])
    }

    /// A request whose creation plan fails (U, a singleton not cached, -> V, a singleton not cached, C, M; M not
    /// registered): the plan runs (branch requestplans: no `requestFailing`), the build's error; V made before
    /// the failure is whole and cached with the graph (the build's), U is not; the next request takes V cached.
    @Test func aFailingCreationPlanRequestRunsThePlan() throws {
        let (outcome, requests) = try expectSame({ fx in
            let a = try fx.register("A")
            try fx.register("U", [dep("V"), dep("C"), dep("M")], scope: .singleton)
            try fx.register("V", scope: .singleton)
            try fx.register("C", scope: .transient)
            fx.onComplete(a) { resolver, _, _ in
                do { _ = try resolver.get(Key("U")) } catch let e as TetherError { fx.tracker.note("U failed: \(e.code) \(e.message)") }
            }
        }) { fx in
            try resolveThrice(fx, "A") { _ in "C \(fx.tracker.calls("C")) V \(fx.tracker.calls("V")) U \(fx.tracker.calls("U"))" }
        }
        #expect(outcome.seen == ["C 1 V 1 U 0", "C 2 V 1 U 0", "C 3 V 1 U 0"])
        #expect(outcome.log.filter { $0.hasPrefix("U failed") }.count == 3)
        #expect(outcome.log.first { $0.hasPrefix("U failed") }?.contains("no registration for \"M\" (needed by \"U\")") == true)
        #expect(requests == ["requests": 3, "plan": 3], "\(requests)")
    }

    /// W's request (made while X's plan runs) for Z -> K, X, X under construction (the running request's): Z's plan
    /// runs up to where the build asks for X (K made), then the build's cycle, its path through X's open steps
    /// (`meetAsked` inside `meanwhileOpen`; `requestInGraph` before branch reqcut).
    @Test func aRequestMadeMeanwhileMeetingTheRunningRequestsStepRunsUpToIt() throws {
        let (outcome, requests) = try expectSame({ fx in
            try meanwhile(fx, asked: "Z")
            try fx.register("Z", [dep("K"), dep("X")])
        }) { fx in
            try resolveThrice(fx, "A") { _ in "K \(fx.tracker.calls("K"))" }
        }
        #expect(outcome.log.filter { $0.hasPrefix("Z failed") }.count == 3)
        #expect(outcome.log.first { $0.hasPrefix("Z failed") }?.contains("\"X\" -> \"Y\" -> \"W\" -> \"Z\" -> \"X\"") == true,
                "\(outcome.log.first { $0.hasPrefix("Z failed") } ?? "")")
        #expect(requests == ["requests": 6, "plan": 6], "\(requests)")
    }

    /// A request whose plan has transient steps below a key the graph has (B -> D, C; D -> E; C -> X, E; D the
    /// graph's): each E its own step, the one under D not made (the build never asks), C's made: the plan runs.
    @Test func aRequestBelowAKeyTheGraphHasRunsThePlan() throws {
        let (outcome, requests) = try expectSame({ fx in
            let a = try fx.register("A", [dep("D")])
            try fx.register("B", [dep("D"), dep("C")])
            try fx.register("C", [dep("X"), dep("E")])
            try fx.register("D", [dep("E")])
            try fx.register("E", scope: .transient)
            try fx.register("X", scope: .transient)
            fx.onComplete(a) { resolver, _, obj in obj.got.append(try resolver.get(Key("B")).pointer) }
        }) { fx in
            try resolveThrice(fx, "A") { _ in "" }
        }
        #expect(outcome.log.filter { $0.hasPrefix("make") } == Array(repeating: ["make E", "make D", "make A", "make X", "make E", "make C", "make B"], count: 3).flatMap { $0 })
        #expect(requests == ["requests": 3, "plan": 3], "\(requests)")
    }

    /// The same with S a cached singleton (or weak key) D asked for first and C takes too (B -> D, C; D -> S; C -> S): the
    /// step under D a step the plan makes takes, which the build finds in the graph's table: the run takes it from its cache
    /// all the same (`takeShared`), the same instance, not entered (`requestInGraph` before branch reqlarge: built).
    /// `traced`: with a trace hook, the same events (no hit for S, as the build's table lookup).
    @Test(arguments: [(Scope.singleton, false), (.singleton, true), (.weak, false)])
    func aRequestWhoseStepTakesASharedKeyFirstAskedUnderAKeyTheGraphHasRunsThePlan(scope: Scope, traced: Bool) throws {
        let (outcome, requests) = try expectSame({ fx in
            let a = try fx.register("A", [dep("D")])
            try fx.register("B", [dep("D"), dep("C")])
            try fx.register("C", [dep("S")])
            try fx.register("D", [dep("S")])
            try fx.register("S", scope: scope)
            fx.onComplete(a) { resolver, _, obj in obj.got.append(try resolver.get(Key("B")).pointer) }
            let tracker = fx.tracker
            if traced { fx.container.setTrace { e in tracker.note("trace \(e.kind) \(e.key.name)") } }
        }) { fx in
            let s = try fx.resolve("S")
            return try withExtendedLifetime(s) {
                try resolveThrice(fx, "A") { a in "C's S is D's: \(Obj.at(a.got[0]).dep(1).depPointer(0) == a.dep(0).depPointer(0)), the cached one: \(a.dep(0).depPointer(0) == s.pointer)" }
            }
        }
        #expect(outcome.seen == Array(repeating: "C's S is D's: true, the cached one: true", count: 3))
        #expect(requests == ["requests": 3, "plan": 3], "\(requests)")
    }

    // MARK: singleton and weak keys not cached (branch requestshared)

    /// A RESOLVER slot's request for a weak key W and a completion callback's for a singleton S, neither cached:
    /// each runs W's or S's creation plan into the graph (T, the singleton both take, made by the first and
    /// taken from the graph by the second, as the build's walk finds it there), published with the graph in the
    /// build's order. The next resolves find S (cached) and make W again (its only holder, A, was let go of).
    @Test func requestsForUncachedSharedKeysRunTheirCreationPlans() throws {
        let (outcome, requests) = try expectSame({ fx in
            let a = try fx.register("A", [.resolver]) { obj in
                obj.got.append(try #require(fx.bridge.resolver(obj.words[0])).get(Key("W")).pointer)
            }
            try fx.register("W", [dep("T")], scope: .weak)
            try fx.register("S", [dep("T"), dep("C")], scope: .singleton)
            try fx.register("T", scope: .singleton)
            try fx.register("C", scope: .transient)
            fx.onComplete(a) { resolver, _, obj in obj.got.append(try resolver.get(Key("S")).pointer) }
        }) { fx in
            var firstS: UnsafeMutableRawPointer?
            return try resolveThrice(fx, "A") { a in
                let (w, s) = (Obj.at(a.got[0]), Obj.at(a.got[1]))
                if firstS == nil { firstS = a.got[1] }
                return "W(\(w.dep(0).label)) S(\(s.dep(0).label),\(s.dep(1).label)) one T: \(w.depPointer(0) == s.depPointer(0)), same S: \(a.got[1] == firstS)"
            }
        }
        #expect(outcome.seen == Array(repeating: "W(T) S(T,C) one T: true, same S: true", count: 3))
        #expect(outcome.log.filter { $0.hasPrefix("make") }
                == ["make T", "make W", "make A", "make C", "make S", "make W", "make A", "make W", "make A"])
        #expect(requests == ["requests": 6, "found": 2, "plan": 4])
    }

    /// Requests for shared keys found (`buildShared`'s found path, `existing`): A's RESOLVER slot asks for S (a
    /// singleton) and W (a weak key), both cached and held by the test; A's callback asks for them again and for U,
    /// the singleton A takes, made by the first resolve's graph (its table's until published). Each is the cached (or
    /// the graph's) instance, no factory runs for it; traced, a request taking it from its cache is one `cacheHit`, one
    /// the graph's table has none (`existing`'s). Since branch isolate the found path is `existing`'s, not `build`'s.
    @Test func aFoundSharedKeyIsTakenWithoutAFactory() throws {
        let (outcome, requests) = try expectSame({ fx in
            let a = try fx.register("A", [.resolver, dep("U")], scope: .transient) { obj in
                let resolver = try #require(fx.bridge.resolver(obj.words[0]))
                for key in ["S", "W"] { obj.got.append(try resolver.get(Key(key)).pointer) }
            }
            try fx.register("S", scope: .singleton)
            try fx.register("W", scope: .weak)
            try fx.register("U", scope: .singleton)
            fx.onComplete(a) { resolver, _, obj in
                for key in ["S", "W", "U"] { obj.got.append(try resolver.get(Key(key)).pointer) }
            }
            let tracker = fx.tracker
            fx.container.setTrace { e in tracker.note("trace \(e.kind) \(e.key.name)") }
        }) { fx in
            let (s, w) = (try fx.resolve("S"), try fx.resolve("W"))
            return try withExtendedLifetime((s, w)) {
                try resolveThrice(fx, "A") { a in
                    "S \(a.got[0] == s.pointer && a.got[2] == s.pointer), W \(a.got[1] == w.pointer && a.got[3] == w.pointer), U \(a.got[4] == a.depPointer(1))"
                }
            }
        }
        #expect(outcome.seen == Array(repeating: "S true, W true, U true", count: 3))
        #expect(outcome.log.filter { $0.hasPrefix("make") } == ["make S", "make W", "make U", "make A", "make A", "make A"])
        // The factory's requests take S and W from their caches (the first resolve's plan makes U, the next ones' take
        // it cached: their own hits); the callback's find all three in the graph's table: no hit.
        #expect(outcome.log.filter { $0.hasPrefix("trace cacheHit") }.map { $0.dropFirst(15) }
                == ["S", "W", "U", "S", "W", "U", "S", "W"], "\(outcome.log)")
        #expect(requests == ["requests": 15, "found": 15], "\(requests)")
    }

    /// A callback's request for a graph-scoped B over a singleton S no cache holds: B's creation plan (the
    /// first resolve's), S made and published with the graph; the next resolves' B take S cached.
    @Test func requestWhosePlanCreatesASingletonRunsIt() throws {
        let (outcome, requests) = try expectSame({ fx in
            let a = try fx.register("A")
            try fx.register("B", [dep("S")])
            try fx.register("S", scope: .singleton)
            fx.onComplete(a) { resolver, _, obj in obj.got.append(try resolver.get(Key("B")).pointer) }
        }) { fx in
            try resolveThrice(fx, "A") { a in "B(\(Obj.at(a.got[0]).dep(0).label)), S calls \(fx.tracker.calls("S"))" }
        }
        #expect(outcome.seen == Array(repeating: "B(S), S calls 1", count: 3))
        #expect(requests == ["requests": 3, "plan": 3])
    }

    /// A callback's request for S (over singletons T and U) whose plan fails at U's factory: T, made whole,
    /// is the graph's and published with it (the build's rule), neither U nor S is cached: the next resolve's
    /// request (U's factory working again) takes T cached and makes U and S, once.
    @Test func aFailedSharedRequestCachesNothingHalfBuilt() throws {
        let (outcome, requests) = try expectSame({ fx in
            let failing = Box(true)
            let a = try fx.register("A")
            try fx.register("S", [dep("T"), dep("U")], scope: .singleton)
            try fx.register("T", scope: .singleton)
            try fx.register("U", scope: .singleton) { _ in if failing.value { throw CallbackFailure(reason: "no U") } }
            fx.onComplete(a) { resolver, _, obj in
                do { obj.got.append(try resolver.get(Key("S")).pointer) } catch {
                    fx.tracker.note("S failed: \((error as? TetherError)?.message ?? "")")
                    failing.value = false
                }
            }
        }) { fx in
            try resolveThrice(fx, "A") { a in "got \(a.got.count), T \(fx.tracker.calls("T")) U \(fx.tracker.calls("U")) S \(fx.tracker.calls("S"))" }
        }
        #expect(outcome.seen == ["got 0, T 1 U 1 S 0", "got 1, T 1 U 2 S 1", "got 1, T 1 U 2 S 1"])
        #expect(outcome.log.contains("S failed: factory for \"U\" returned NULL: no U (while resolving \"S\" -> \"U\")"))
        #expect(requests == ["requests": 3, "found": 1, "plan": 2])
    }

    /// A request whose creation plan's claim fails before any factory (S, made by the resolve further out on
    /// this thread and not published yet: unfinished): the plan runs up to where the build's walk asks for S
    /// (C made, kept in the graph), then the claim's error (branch requestslots: no `requestShared`). `traced`: with a
    /// trace hook, the same (`requestShared` before branch reqcut). `large`: P0...P64 after C, the plan past its 64th step
    /// (`requestShared` before branch reqlarge).
    @Test(arguments: [false, true], [false, true]) func aRefusedClaimIsReportedWhereTheBuildAsks(traced: Bool, large: Bool) throws {
        let (outcome, requests) = try expectSame({ fx in
            let tracker = fx.tracker
            if traced { fx.container.setTrace { e in tracker.note("trace \(e.kind) \(e.key.name)") } }
            let a = try fx.register("A", [dep("S")])
            try fx.register("S", scope: .singleton)
            let n = try fx.register("N")
            try fx.register("B", [dep("C")] + (try large ? Self.pads(fx) : []) + [dep("S2")])
            try fx.register("C", scope: .transient)
            try fx.register("S2", [dep("S")], scope: .singleton)
            fx.onComplete(a) { _, _, obj in
                let nested = try fx.resolve("N")
                obj.got.append(nested.pointer)
            }
            fx.onComplete(n) { resolver, _, _ in
                do { _ = try resolver.get(Key("B")) } catch { fx.tracker.note("B failed: \((error as? TetherError)?.message ?? "")") }
            }
        }) { fx in
            _ = try fx.resolve("A")
            return ["C calls \(fx.tracker.calls("C")), S2 calls \(fx.tracker.calls("S2")), P64 calls \(fx.tracker.calls("P64"))"]
        }
        #expect(outcome.seen == ["C calls 1, S2 calls 0, P64 calls \(large ? 1 : 0)"])
        #expect(outcome.log.contains { $0.hasPrefix("B failed") })
        #expect(requests == ["requests": 1, "plan": 1], "\(requests)")
    }

    /// Two threads whose graphs each made a singleton (SA, SB: cells held till the graph ends) and whose
    /// completion callbacks then, once both got there, ask for the other's: the one whose claim would close
    /// the wait cycle fails TETHER_E_CYCLE naming both keys (its creation plan's claim refused, the build's
    /// claim reports it, `requestShared`), never a hang; the other then takes the first's singleton cached.
    @Test func requestsClaimingEachOthersCellsFailAsACycle() throws {
        var outcomes: [[String]] = []
        do {
            let fx = try Fixture()
            let x = try fx.register("X", [dep("SA")])
            let y = try fx.register("Y", [dep("SB")])
            try fx.register("SA", scope: .singleton)
            try fx.register("SB", scope: .singleton)
            let met = (DispatchSemaphore(value: 0), DispatchSemaphore(value: 0))
            let seen = Box<[String]>([])
            for (owner, mine, other, asked) in [(x, met.0, met.1, "SB"), (y, met.1, met.0, "SA")] {
                fx.onComplete(owner) { resolver, _, _ in
                    mine.signal()
                    #expect(other.wait(timeout: .now() + 10) == .success)
                    do { _ = try resolver.get(Key(asked)); seen.value.append("\(asked) ok") } catch let e as TetherError {
                        let both = e.message.contains("cross-thread") && e.message.contains("\"SA\"") && e.message.contains("\"SB\"")
                        seen.value.append("\(asked) \(e.code), both named: \(both)")
                    }
                }
            }
            let failures = Box(0)
            let requests = Box<[String: Int]>([:])
            onThreads(2) { i in
                PlanStats.countOnThisThread()
                let before = PlanStats.requestsOnThisThread()
                do { _ = try fx.resolve(i == 0 ? "X" : "Y") } catch { failures.value += 1 }
                for (name, n) in PlanStats.requestsOnThisThread() where n != before[name, default: 0] {
                    requests.value[name, default: 0] += n - before[name, default: 0]
                }
            }
            #expect(failures.value == 0)
            // The cycle's request runs up to its claim (nothing before it) and reports it; the other's run took SA cached.
            #expect(requests.value == ["requests": 2, "plan": 2], "\(requests.value)")
            #expect(fx.tracker.calls("SA") == 1 && fx.tracker.calls("SB") == 1)
            outcomes.append(seen.value.map { $0.hasSuffix("ok") ? "ok" : String($0.dropFirst(3)) }.sorted())
        }
        #expect(outcomes[0] == ["cycle, both named: true", "ok"])
    }

    // MARK: a key not shared over a singleton not cached, a creation step under a cached container step (branch reqother: no `notCached`)

    /// A child's request (its own registration makes its graph not plain) for B over a singleton S no cache holds:
    /// B's component plan declines (`notCached`, as a top-level resolve's warm pick), then B's creation plan for the
    /// caches' state runs, as the resolve picks next: S made once, published with the graph; the next requests' B
    /// take it cached (corpus `lazy_slot_in_singleton_subgraph_looks_up_from_its_container`'s shape).
    @Test func aChildsRequestOverAnUncachedSingletonRunsItsCreationPlan() throws {
        let (outcome, requests) = try expectSame({ fx in
            let a = try fx.register("A")
            try fx.register("B", [dep("S")])
            try fx.register("S", scope: .singleton)
            fx.onComplete(a) { resolver, _, obj in obj.got.append(try resolver.get(Key("B")).pointer) }
        }) { fx in
            var seen: [String] = []
            var firstS: UnsafeMutableRawPointer?
            for _ in 0..<2 {
                let child = try fx.child()
                try fx.register("Own", in: child)
                for _ in 0..<2 {
                    let a = try fx.resolve("A", in: child)
                    seen.append(withExtendedLifetime(a) {
                        let s = Obj.at(Obj.of(a).got[0]).depPointer(0)
                        if firstS == nil { firstS = s }
                        return "B(S) one S: \(s == firstS), S cached: \((try? fx.resolve("S").pointer) == s)"
                    })
                }
                _ = try child.close()
            }
            return seen
        }
        #expect(outcome.seen == Array(repeating: "B(S) one S: true, S cached: true", count: 4))
        #expect(outcome.log.filter { $0.hasPrefix("make") } == ["make A", "make S", "make B", "make A", "make B", "make A", "make B", "make A", "make B"],
                "\(outcome.log)")
        #expect(requests == ["requests": 4, "plan": 4], "\(requests)")
    }

    /// B's warm plan (S cached when it was recorded), S reset since: the warm plan's leaf missing (`notCached`), B's
    /// creation plan for that state runs, a new S made and published; the next request's warm plan takes it.
    @Test func aRequestWhoseWarmPlansSingletonWasResetRunsTheCreationPlan() throws {
        let (outcome, requests) = try expectSame({ fx in
            let a = try fx.register("A")
            try fx.register("B", [dep("S"), dep("C")])
            try fx.register("S", scope: .singleton)
            try fx.register("C", scope: .transient)
            fx.onComplete(a) { resolver, _, obj in obj.got.append(try resolver.get(Key("B")).pointer) }
        }) { fx in
            var seen: [String] = []
            for n in 0..<4 {
                if n == 2 { fx.container.reset(.singleton) }
                let a = try fx.resolve("A")
                seen.append(withExtendedLifetime(a) {
                    let b = Obj.at(Obj.of(a).got[0])
                    return "B(\(b.dep(0).label),\(b.dep(1).label)) S cached: \((try? fx.resolve("S").pointer) == b.depPointer(0))"
                })
            }
            seen.append("S made \(fx.tracker.made("S"))")
            return seen
        }
        #expect(outcome.seen == Array(repeating: "B(S,C) S cached: true", count: 4) + ["S made 2"])
        #expect(requests == ["requests": 4, "plan": 4], "\(requests)")
    }

    /// A request for a singleton S over a container step Session (the root's, cached: a Handler holds it) over a
    /// singleton Db reset since: the build takes the Session cached and never asks for Db. S's creation plan neither
    /// claims nor makes Db (`claimAsked` as `claimWithContainerSteps`: `leavesUnasked`), S made over the old Db's Session.
    @Test func aRequestsCreationStepUnderACachedContainerStepIsNotAsked() throws {
        let (seen, requests) = try requestOverASessionWhoseDbWasReset(pool: false)
        #expect(seen == Array(repeating: "S(Session(Db)) the cached Session: true, old Db: true", count: 3) + ["Db made 1, S made 1"])
        #expect(requests == ["requests": 3, "found": 2, "plan": 1], "\(requests)")
    }

    /// `aRequestsCreationStepUnderACachedContainerStepIsNotAsked` with Pool (over Db) taken by S too: the build takes the
    /// Session cached and makes a new Db where Pool asks for it (`notCached` before: `claimAsked` met Db under the cached
    /// Session that Pool still takes, the build's). The claims switch to the plan for the set cached (the creating
    /// `mixedVariant` with the Session a leaf, `Graph.switchesToVariant`), which makes Db where Pool asks, as the build.
    @Test func aRequestsCreationStepUnderACachedContainerStepThatAStepStillMadeTakesIsMadeWhereItAsks() throws {
        let (seen, requests) = try requestOverASessionWhoseDbWasReset(pool: true)
        #expect(seen == Array(repeating: "S(Session(Db),Pool) the cached Session: true, old Db: true, Pool's new: true", count: 3)
                + ["Db made 2, S made 1"], "\(seen)")
        #expect(requests == ["requests": 3, "found": 2, "plan": 1], "\(requests)")
    }

    /// A's callback asks for S (a singleton over Session, and Pool over Db when `pool`), Session container-scoped over
    /// Db, a singleton reset while the root's Session is held: what each of three A saw, and the requests' counts.
    private func requestOverASessionWhoseDbWasReset(pool: Bool) throws -> (seen: [String], requests: [String: Int]) {
        let (outcome, requests) = try expectSame({ fx in
            let a = try fx.register("A")
            try fx.register("Db", scope: .singleton)
            try fx.register("Session", [dep("Db")], scope: .container)
            if pool { try fx.register("Pool", [dep("Db")]) }
            try fx.register("S", pool ? [dep("Session"), dep("Pool")] : [dep("Session")], scope: .singleton)
            fx.onComplete(a) { resolver, _, obj in obj.got.append(try resolver.get(Key("S")).pointer) }
        }) { fx in
            let session = try fx.resolve("Session")
            let db = Obj.of(session).depPointer(0)
            fx.container.reset(.singleton)
            return try withExtendedLifetime(session) {
                try resolveThrice(fx, "A") { a in
                    let s = Obj.at(a.got[0])
                    let seen = "the cached Session: \(s.depPointer(0) == session.pointer), old Db: \(s.dep(0).depPointer(0) == db)"
                    return pool ? "S(Session(Db),Pool) \(seen), Pool's new: \(s.dep(1).depPointer(0) != db)" : "S(Session(Db)) \(seen)"
                } + ["Db made \(fx.tracker.made("Db")), S made \(fx.tracker.made("S"))"]
            }
        }
        return (outcome.seen, requests)
    }

    // MARK: a slot naming a shared step only a key the graph has asked for (branch reqother: no `requestSlots`)

    /// A's callback asks for B (-> D, a LAZY or WEAK_LAZY slot of W; D -> W, a singleton): the graph has D (A's), so
    /// the plan's W, first asked for under D, is a step only a taken key asked for, which B's slot names. A shared step
    /// is taken from its cache all the same (`takeShared`): the cell bound to that W, as the build binds it (the
    /// graph's W, the singleton), the plan runs (`requestSlots` before: the build).
    @Test(arguments: ["lazy", "weakLazy"]) func aSlotNamingASharedStepOnlyAKeyTheGraphHasAskedForRunsThePlan(kind: String) throws {
        let (outcome, requests) = try expectSame({ fx in
            let a = try fx.register("A", [dep("D")])
            try fx.register("D", [dep("W")])
            try fx.register("W", scope: .singleton)
            try fx.register("B", [dep("D"), kind == "lazy" ? lazyDep("W") : weakLazyDep("W")])
            fx.onComplete(a) { resolver, _, obj in obj.got.append(try resolver.get(Key("B")).pointer) }
        }) { fx in
            try resolveThrice(fx, "A") { a in
                let b = Obj.at(a.got[0])
                let w = try? fx.bridge.cell(b.words[1])?.get()
                return "B's D is A's: \(b.depPointer(0) == a.depPointer(0)), its W D's: \(w == a.dep(0).depPointer(0))"
            }
        }
        #expect(outcome.seen == Array(repeating: "B's D is A's: true, its W D's: true", count: 3))
        #expect(outcome.log.filter { $0.hasPrefix("make") } == ["make W", "make D", "make A", "make B", "make D", "make A", "make B", "make D", "make A", "make B"],
                "\(outcome.log)")
        #expect(requests == ["requests": 3, "plan": 3], "\(requests)")
    }

    /// A's callback asks for B (-> D, F; D graph-scoped, A's too): the slot naming a step only D asked for is D's own
    /// (`kind`: a WEAK slot of E, a transient D takes too; an ALL slot of P, transient items), or `under` D that of G (D ->
    /// G, transient). The run takes D from the graph and skips what only it asked for, the slot's owner among them: that
    /// slot is never made, as the build never makes D's factory's (`Plan.slotsMeetSkips`; `requestSlots` before branch
    /// reqrest: built). B's D A's; no E, P, G made by the requests.
    @Test(arguments: [("weak", false), ("all", false), ("weak", true), ("all", true)])
    func aSlotWhoseOwnerTheRequestSkipsRunsThePlan(kind: String, under: Bool) throws {
        let (outcome, requests) = try expectSame({ fx in
            let a = try fx.register("A", [dep("D")])
            let slot = kind == "weak" ? [dep("E"), weakDep("E")] : [.all(Key("P"))]
            try fx.register("D", under ? [dep("G")] : slot)
            if under { try fx.register("G", slot, scope: .transient) }
            try fx.register("E", scope: .transient)
            try fx.register("P#0", scope: .transient)
            try fx.register("P#1", scope: .transient)
            try fx.register("F", scope: .transient)
            try fx.register("B", [dep("D"), dep("F")])
            fx.onComplete(a) { resolver, _, obj in obj.got.append(try resolver.get(Key("B")).pointer) }
        }) { fx in
            try resolveThrice(fx, "A") { a in
                let b = Obj.at(a.got[0])
                return "B's D is A's: \(b.depPointer(0) == a.depPointer(0)), D \(fx.tracker.made("D")) E \(fx.tracker.made("E")) P \(fx.tracker.made("P#0")) G \(fx.tracker.made("G"))"
            }
        }
        // (A transient E: one for D's DEP, one for its WEAK slot.)
        let (e, p, g) = (kind == "weak" ? 2 : 0, kind == "all" ? 1 : 0, under ? 1 : 0)
        #expect(outcome.seen == (1...3).map { "B's D is A's: true, D \($0) E \($0 * e) P \($0 * p) G \($0 * g)" }, "\(kind) \(under)")
        #expect(outcome.log.filter { $0.hasPrefix("make F") || $0.hasPrefix("make B") }.count == 6, "\(outcome.log)")
        #expect(requests == ["requests": 3, "plan": 3], "\(kind) \(under): \(requests)")
    }

    /// A (in a child) -> S (a root singleton) -> D -> E; E registered in the root and the child: the graph's D, built
    /// in S's frame, took the root's E. A's callback asks for B (-> D, `second` naming E): the plan, walked from the
    /// child, has the child's E first asked for under D, which the run takes from the graph; the build asks for the
    /// child's E where B does, not in the graph, and makes it (`failing`: its factory fails, the request's error noted).
    /// Traced. Returns what `expectSame` does, the resolve's A seen.
    private func requestOverAKeyBuiltFromAnotherLookup(_ second: Param, failing: Bool = false) throws -> (Outcome, [String: Int]) {
        try expectSame({ fx in
            let a = try fx.register("A", [dep("S")])
            try fx.register("S", [dep("D")], scope: .singleton)
            try fx.register("D", [dep("E")])
            try fx.register("E", label: "root E")
            try fx.register("B", [dep("D"), second])
            fx.onComplete(a) { resolver, _, obj in
                do { obj.got.append(try resolver.get(Key("B")).pointer) } catch let e as TetherError {
                    fx.tracker.note("B failed: \(e.code) \(e.message)")
                }
            }
        }) { fx in
            let child = try fx.child()
            let tracker = fx.tracker
            child.setTrace { e in tracker.note("trace \(e.kind) \(e.key.name)") }
            try fx.register("E", in: child, label: "child E") { _ in if failing { throw CallbackFailure(reason: "no child E") } }
            let a = try fx.resolve("A", in: child)
            return withExtendedLifetime(a) {
                guard let got = Obj.of(a).got.first else { return ["no B"] }
                let b = Obj.at(got)
                return ["B's D S's: \(b.depPointer(0) == Obj.of(a).dep(0).depPointer(0)), D's \(b.dep(0).dep(0).label)"]
            }
        }
    }

    /// A slot naming a step under a key the graph built from another lookup (`requestOverAKeyBuiltFromAnotherLookup`,
    /// B -> D, a WEAK slot of E): the build's slot makes the child's E. The run makes it too, where the plan has it,
    /// asked for by B (`Plan.walkedWithGraphKeys`, the build's walk with D a leaf; `requestSlots` before branch
    /// reqgraph: built). Traced: the same events.
    @Test func aSlotNamingAStepUnderAKeyTheGraphBuiltFromAnotherLookupRunsThePlan() throws {
        let (outcome, requests) = try requestOverAKeyBuiltFromAnotherLookup(weakDep("E"))
        #expect(outcome.seen == ["B's D S's: true, D's root E"])
        #expect(outcome.log.filter { $0.hasPrefix("make") } == ["make root E", "make D", "make S", "make A", "make child E", "make B"], "\(outcome.log)")
        #expect(outcome.log.contains("trace factoryCall E"), "\(outcome.log)")
        #expect(requests == ["requests": 1, "plan": 1], "\(requests)")
    }

    /// A step below a key the graph built from another lookup that a step the plan makes takes too: the shape above, B
    /// -> D, E (a DEP). The run makes the child's E where the plan has it, asked for by B: the build's walk with D a leaf
    /// (`Plan.walkedWithGraphKeys`, its parents: `requestInGraph` before branch reqgraph, built). `failing`: the child's
    /// E's factory fails, the request's error naming B -> E, as the build's frames (the plan's parent of E, D, not).
    @Test(arguments: [false, true]) func aStepBelowAKeyTheGraphBuiltFromAnotherLookupThatAMadeStepTakesRunsThePlan(failing: Bool) throws {
        let (outcome, requests) = try requestOverAKeyBuiltFromAnotherLookup(dep("E"), failing: failing)
        if failing {
            #expect(outcome.seen == ["no B"])
            #expect(outcome.log.contains { $0.hasPrefix("B failed:") && $0.contains("\"B\" -> \"E\"") }, "\(outcome.log)")
        } else {
            #expect(outcome.seen == ["B's D S's: true, D's root E"])
            #expect(outcome.log.filter { $0.hasPrefix("make") } == ["make root E", "make D", "make S", "make A", "make child E", "make B"], "\(outcome.log)")
        }
        #expect(outcome.log.contains("trace factoryCall E"), "\(outcome.log)")
        #expect(requests == ["requests": 1, "plan": 1], "\(requests)")
    }

    /// A value below a key the graph has that a step the plan makes takes too. A -> D -> V (a value the child
    /// provides); A's callback asks for B (-> D, V): the graph's D taken, V first asked for under it, which B takes
    /// too: the run takes V where the build's walk with D a leaf does (`Plan.walkedWithGraphKeys`: the graph's V, the
    /// one the child provides; `requestInGraph` before branch reqgraph: built). Traced: the same events.
    @Test func aValueBelowAKeyTheGraphHasThatAMadeStepTakesRunsThePlan() throws {
        let (outcome, requests) = try expectSame({ fx in
            _ = try fx.container.declareValue(Key("V"))
            let a = try fx.register("A", [dep("D")])
            try fx.register("D", [dep("V")])
            try fx.register("B", [dep("D"), dep("V")])
            fx.onComplete(a) { resolver, _, obj in obj.got.append(try resolver.get(Key("B")).pointer) }
        }) { fx in
            let child = try fx.child()
            let tracker = fx.tracker
            child.setTrace { e in tracker.note("trace \(e.kind) \(e.key.name)") }
            let value = Ref(retaining: Obj(label: "V1", words: [])).opaque
            _ = try child.provideValue(Key("V"), value, context: nil, destructor: { p, _ in Ref<Obj>(opaque: p).release() })
            return try resolveThrice(fx, "A", in: child) { a in
                let b = Obj.at(a.got[0])
                return "B's D A's: \(b.depPointer(0) == a.depPointer(0)), its V D's: \(b.depPointer(1) == a.dep(0).depPointer(0))"
            }
        }
        #expect(outcome.seen == Array(repeating: "B's D A's: true, its V D's: true", count: 3))
        #expect(outcome.log.contains("trace cacheHit V"), "\(outcome.log)")
        #expect(requests == ["requests": 3, "plan": 3], "\(requests)")
    }

    // MARK: a failing or traced plan meeting a key under construction, or whose claim is refused (branch reqcut)

    /// X's factory resolves Y, Y's callback asks for Z -> W, X, M (M not registered): Z's plan fails, and meets X, which
    /// the thread constructs further out: the run goes up to where the build asks for X (W made, kept in Y's graph), then
    /// the build's cycle (a failing plan's `replayAskedCut`; `requestNested` before branch reqcut). `traced`: with a
    /// trace hook set, the same.
    @Test(arguments: [false, true]) func aFailingRequestMeetingAnOuterKeyRunsUpToIt(traced: Bool) throws {
        let (outcome, requests) = try expectSame({ fx in
            try fx.register("X") { _ in _ = try fx.resolve("Y") }
            let y = try fx.register("Y")
            try fx.register("Z", [dep("W"), dep("X"), dep("M")])
            try fx.register("W", scope: .transient)
            fx.onComplete(y) { resolver, _, _ in
                do { _ = try resolver.get(Key("Z")) } catch let e as TetherError { fx.tracker.note("Z failed: \(e.code) \(e.message)") }
            }
            let tracker = fx.tracker
            if traced { fx.container.setTrace { e in tracker.note("trace \(e.kind) \(e.key.name)") } }
        }) { fx in
            try resolveThrice(fx, "X") { _ in "W \(fx.tracker.calls("W")) Z \(fx.tracker.calls("Z"))" }
        }
        #expect(outcome.seen == ["W 1 Z 0", "W 2 Z 0", "W 3 Z 0"])
        #expect(outcome.log.filter { $0.hasPrefix("Z failed") }.count == 3)
        #expect(outcome.log.first { $0.hasPrefix("Z failed") }?.contains("\(ErrorCode.cycle) dependency cycle through constructors: \"X\" -> \"Y\" -> \"Z\" -> \"X\"") == true,
                "\(outcome.log)")
        #expect(requests == ["requests": 3, "plan": 3], "\(requests)")
    }

    /// The same met as a failing plan's open frame: P (-> D, registered in a child only) resolved in the child, its
    /// factory resolving Y from the root, Y's callback asking for K -> W, P (`before`; else K -> P): from the root K's
    /// plan fails with P's frame open (D missing), P constructed further out: the run up to where the build asks for P
    /// (W made), then the build's cycle (`requestNested` before branch reqcut).
    @Test(arguments: [false, true]) func aFailingRequestMeetingAnOuterKeyAsAnOpenFrameRunsUpToIt(before: Bool) throws {
        let children = Box<Container?>(nil)
        let (outcome, requests) = try expectSame({ fx in
            try fx.register("P", [dep("D")], scope: .transient) { _ in _ = try fx.resolve("Y") }
            let y = try fx.register("Y")
            try fx.register("K", (before ? [dep("W")] : []) + [dep("P")])
            try fx.register("W", scope: .transient)
            fx.onComplete(y) { resolver, _, _ in
                do { _ = try resolver.get(Key("K")) } catch let e as TetherError { fx.tracker.note("K failed: \(e.code) \(e.message)") }
            }
            let child = try fx.child()
            try fx.register("D", scope: .transient, in: child)
            children.value = child
        }) { fx in
            try resolveThrice(fx, "P", in: children.value!) { _ in "W \(fx.tracker.calls("W")) K \(fx.tracker.calls("K"))" }
        }
        #expect(outcome.seen == (before ? ["W 1 K 0", "W 2 K 0", "W 3 K 0"] : ["W 0 K 0", "W 0 K 0", "W 0 K 0"]))
        #expect(outcome.log.filter { $0.hasPrefix("K failed") }.count == 3)
        #expect(outcome.log.first { $0.hasPrefix("K failed") }?.contains("\(ErrorCode.cycle) dependency cycle through constructors: \"P\" -> \"Y\" -> \"K\" -> \"P\"") == true,
                "\(outcome.log)")
        #expect(requests == ["requests": 3, "plan": 3], "\(requests)")
    }

    /// A factory's request whose plan fails (B -> W, A, M; M not registered) and has the key under construction (A):
    /// the run up to where the build asks for A (W made), then the build's cycle (`requestInGraph` before branch reqcut).
    @Test func aFailingFactoryRequestMeetingTheKeyUnderConstructionRunsUpToIt() throws {
        let (outcome, requests) = try expectSame({ fx in
            try fx.register("A", [.resolver]) { obj in
                do { _ = try #require(fx.bridge.resolver(obj.words[0])).get(Key("B")) }
                catch let e as TetherError { fx.tracker.note("B failed: \(e.code) \(e.message)") }
            }
            try fx.register("B", [dep("W"), dep("A"), dep("M")])
            try fx.register("W", scope: .transient)
        }) { fx in
            try resolveThrice(fx, "A") { _ in "W \(fx.tracker.calls("W"))" }
        }
        #expect(outcome.seen == ["W 1", "W 2", "W 3"])
        #expect(outcome.log.first { $0.hasPrefix("B failed") }?.contains("\(ErrorCode.cycle) dependency cycle through constructors: \"A\" -> \"B\" -> \"A\"") == true,
                "\(outcome.log)")
        #expect(requests == ["requests": 3, "plan": 3], "\(requests)")
    }

    /// The same met as the failing plan's open frame: A (-> RESOLVER, D; D registered in a child only) resolved in the
    /// child asks for K, a singleton (resolved from the root, its own container) -> W, A: K's plan fails with A's frame
    /// open (D missing), which this graph constructs: the run up to where the build asks for A (W made), then the
    /// build's cycle (`requestInGraph` before branch reqcut).
    @Test func aFailingFactoryRequestMeetingTheKeyUnderConstructionAsAnOpenFrameRunsUpToIt() throws {
        let children = Box<Container?>(nil)
        let (outcome, requests) = try expectSame({ fx in
            try fx.register("A", [.resolver, dep("D")]) { obj in
                do { _ = try #require(fx.bridge.resolver(obj.words[0])).get(Key("K")) }
                catch let e as TetherError { fx.tracker.note("K failed: \(e.code) \(e.message)") }
            }
            try fx.register("K", [dep("W"), dep("A")], scope: .singleton)
            try fx.register("W", scope: .transient)
            let child = try fx.child()
            try fx.register("D", scope: .transient, in: child)
            children.value = child
        }) { fx in
            try resolveThrice(fx, "A", in: children.value!) { _ in "W \(fx.tracker.calls("W")) K \(fx.tracker.calls("K"))" }
        }
        #expect(outcome.seen == ["W 1 K 0", "W 2 K 0", "W 3 K 0"])
        #expect(outcome.log.filter { $0.hasPrefix("K failed: \(ErrorCode.cycle)") }.count == 3, "\(outcome.log)")
        #expect(requests == ["requests": 3, "plan": 3], "\(requests)")
    }

    /// A request whose failing creation plan's claim is refused before any factory (B -> C, S2, M; S2 -> S, S made by
    /// the resolve further out, unfinished; M not registered): the run up to where the build's walk asks for S2 (C
    /// made), then the claim's error (`requestShared` before branch reqcut). `traced`: with a trace hook, the same.
    @Test(arguments: [false, true]) func aFailingPlansRefusedClaimIsReportedWhereTheBuildAsks(traced: Bool) throws {
        let (outcome, requests) = try expectSame({ fx in
            let a = try fx.register("A", [dep("S")])
            try fx.register("S", scope: .singleton)
            let n = try fx.register("N")
            try fx.register("B", [dep("C"), dep("S2"), dep("M")])
            try fx.register("C", scope: .transient)
            try fx.register("S2", [dep("S")], scope: .singleton)
            fx.onComplete(a) { _, _, obj in
                let nested = try fx.resolve("N")
                obj.got.append(nested.pointer)
            }
            fx.onComplete(n) { resolver, _, _ in
                do { _ = try resolver.get(Key("B")) } catch let e as TetherError { fx.tracker.note("B failed: \(e.code) \(e.message)") }
            }
            let tracker = fx.tracker
            if traced { fx.container.setTrace { e in tracker.note("trace \(e.kind) \(e.key.name)") } }
        }) { fx in
            _ = try fx.resolve("A")
            return ["C calls \(fx.tracker.calls("C")), S2 calls \(fx.tracker.calls("S2"))"]
        }
        #expect(outcome.seen == ["C calls 1, S2 calls 0"])
        #expect(outcome.log.contains { $0.hasPrefix("B failed") } && !outcome.log.contains { $0.contains("\"M\"") }, "\(outcome.log)")
        #expect(requests == ["requests": 1, "plan": 1], "\(requests)")
    }
    // MARK: a request up to a cut finding container steps cached (branch heldcut)

    /// X's factory resolves Y in a child (the Session cached there), Y's callback asks for Handler, whose plan meets X
    /// (constructed further out): the request's run up to where the build asks for X (`replayAskedCut`). Shapes 0, 1:
    /// Handler -> Session, Clock, Late, X, the Session and Late over Conn, which the Session asked for first: some
    /// container steps cached, the `mixedVariant` for that set, run up to X (Clock, Conn, Late made, kept in Y's graph),
    /// then the build's cycle. Shapes 2, 3: Session -> X, Handler -> Session, Clock: the asker of X cached, the plan
    /// with the Session a leaf, which does not meet X, run whole (Clock, Handler). Shapes 1, 3: a weak One the Handler
    /// takes first, dead at every request: a creating request (`claimAsked`). `containerHeld` before: built. `traced`:
    /// with a trace hook, the same (the traced cut modes).
    @Test(arguments: 0..<4, [false, true]) func aRequestUpToACutFindingContainerStepsCachedRunsTheirVariant(shape: Int, traced: Bool) throws {
        let (asker, one) = (shape >= 2, shape & 1 == 1)
        let current = Box<Container?>(nil), nesting = Box(false)
        let (outcome, requests) = try expectSame({ fx in
            let tracker = fx.tracker
            if traced { fx.container.setTrace { e in tracker.note("trace \(e.kind) \(e.key.name)") } }
            try fx.register("Conn")
            try fx.register("Clock")
            if one { try fx.register("One", scope: .weak) }
            try fx.register("X", scope: .transient) { _ in if nesting.value { _ = try fx.resolve("Y", in: current.value!) } }
            let y = try fx.register("Y", scope: .transient)
            try fx.register("Session", [dep(asker ? "X" : "Conn")], scope: .container)
            try fx.register("Late", [dep("Conn")], scope: .container)
            let tail = asker ? [dep("Session"), dep("Clock")] : [dep("Session"), dep("Clock"), dep("Late"), dep("X")]
            try fx.register("Handler", (one ? [dep("One")] : []) + tail, scope: .transient)
            fx.onComplete(y) { resolver, _, _ in
                do {
                    let h = try resolver.get(Key("Handler"))
                    fx.tracker.note("Handler \(Obj.of(h).tree())")
                } catch let e as TetherError { fx.tracker.note("Handler failed: \(e.code) \(e.message.contains("\"X\" -> \"Y\" -> \"Handler\""))") }
            }
        }) { fx in try Self.sessionThenXThrice(fx, current, nesting) }
        let noted = outcome.log.filter { $0.hasPrefix("Handler") }
        #expect(noted.count == 3 && noted.allSatisfy { asker ? $0.hasPrefix("Handler Handler(") : $0 == "Handler failed: \(ErrorCode.cycle) true" },
                "\(outcome.log)")
        // (The first X: Y, the request's, X.)
        let first = ["make Y"] + (one ? ["make One"] : []) + (asker ? ["make Clock", "make Handler"] : ["make Clock", "make Conn", "make Late"]) + ["make X"]
        let made = Array(outcome.log.drop { $0 != "make Session" }.dropFirst().filter { $0.hasPrefix("make") }.prefix(first.count))
        #expect(made == first, "\(outcome.log)")
        #expect(requests == ["requests": 3, "plan": 3], "\(requests)")
    }

    /// The run both late-request-up-to-X tests share: a child (`prepare`d), its Session resolved with no nesting,
    /// then X three times while it is held, nesting (X's factory resolves Y, whose callback asks for the Handler).
    static func sessionThenXThrice(_ fx: Fixture, _ current: Box<Container?>, _ nesting: Box<Bool>,
                                   prepare: (Container) throws -> Void = { _ in }) throws -> [String] {
        let child = try fx.child()
        try prepare(child)
        current.value = child
        nesting.value = false
        let session = try fx.resolve("Session", in: child)
        nesting.value = true
        try withExtendedLifetime(session) { for _ in 0..<3 { _ = try fx.resolve("X", in: child) } }
        _ = try child.close()
        return []
    }

    /// Branch heldrest: the same request up to X whose asker (the Session) is cached, in a plan whose set of cached
    /// container steps `variant(forCached:cut:)` cannot pick by: the plan with them leaves (`Plan.leafVariant`, kept by no
    /// plan), run whole (`containerHeld` before: built). "failing": the Handler asks for Nowhere last (the request's error
    /// where the build reports it, after Clock); "wide": `pads` first (the Session past the 64th step); "child": a Tag the
    /// child registers (a child's plan).
    @Test(arguments: ["failing", "wide", "child"]) func aRequestUpToACutWhoseAskerIsCachedInAFailingWideOrChildsPlanRunsThePlanWithItALeaf(kind: String) throws {
        let current = Box<Container?>(nil), nesting = Box(false), padCount = Box(0)
        let (outcome, requests) = try expectSame({ fx in
            let pads = kind == "wide" ? try Self.pads(fx) : []
            padCount.value = pads.count
            try fx.register("Clock")
            try fx.register("X", scope: .transient) { _ in if nesting.value { _ = try fx.resolve("Y", in: current.value!) } }
            let y = try fx.register("Y", scope: .transient)
            try fx.register("Session", [dep("X")], scope: .container)
            let tail = kind == "failing" ? [dep("Nowhere")] : kind == "child" ? [dep("Tag")] : []
            try fx.register("Handler", pads + [dep("Session"), dep("Clock")] + tail, scope: .transient)
            fx.onComplete(y) { resolver, _, _ in
                do {
                    let h = try resolver.get(Key("Handler"))
                    fx.tracker.note("Handler \(Obj.of(h).dep(pads.count).label)")
                } catch let e as TetherError { fx.tracker.note("Handler failed: \(e.code) \(e.message.contains("\"Nowhere\""))") }
            }
        }) { fx in
            try Self.sessionThenXThrice(fx, current, nesting) { child in
                if kind == "child" { try fx.register("Tag", scope: .transient, in: child) }
            }
        }
        let noted = outcome.log.filter { $0.hasPrefix("Handler") }
        #expect(noted == Array(repeating: kind == "failing" ? "Handler failed: \(ErrorCode.notFound) true" : "Handler Session", count: 3),
                "\(outcome.log)")
        // (The first X: Y, the request's, X.)
        let first = ["make Y"] + (0..<padCount.value).map { "make P\($0)" } + ["make Clock"] + (kind == "child" ? ["make Tag"] : [])
            + (kind == "failing" ? [] : ["make Handler"]) + ["make X"]
        let made = Array(outcome.log.drop { $0 != "make Session" }.dropFirst().filter { $0.hasPrefix("make") }.prefix(first.count))
        #expect(made == first, "\(outcome.log)")
        #expect(requests == ["requests": 3, "plan": 3], "\(requests)")
    }

    // MARK: a failing plan's open frames the graph has (issue 28, branch failopen; pinned in branch unpinned)

    /// A failing plan's open frame the graph has (`Plan.graphVariant`): R -> A -> M, graph-scoped; R's completion
    /// callback registers M anew over Gone (not registered: a configuration with no plan yet), then asks for B -> A.
    /// B's plan for that configuration fails at Gone under A, but A is open at that failure and the graph has it: the
    /// build takes the graph's A, never asks for M or Gone, and B is made. The plan of that walk, A a leaf taken from
    /// the graph, runs (`requestInGraph` before branch failopen: built).
    @Test func aFailingPlansOpenFrameTheGraphHasRunsThePlanTakingIt() throws {
        let (outcome, requests) = try run({ fx in
            let r = try fx.register("R", [dep("A")], scope: .transient)
            try fx.register("A", [dep("M")])
            try fx.register("M")
            try fx.register("B", [dep("A")], scope: .transient)
            fx.onComplete(r) { resolver, _, obj in
                try fx.register("M", [dep("Gone")], label: "M2")
                obj.got.append(try resolver.get(Key("B")).pointer)
            }
        }) { fx in
            let r = try fx.resolve("R")
            return withExtendedLifetime(r) {
                let o = Obj.of(r)
                return ["B's A is R's: \(Obj.at(o.got[0]).depPointer(0) == o.depPointer(0))"]
            }
        }
        #expect(outcome.error == nil, "\(outcome)")
        #expect(outcome.seen == ["B's A is R's: true"], "\(outcome)")
        #expect(outcome.log.filter { $0.hasPrefix("make") || $0.hasPrefix("complete") } == ["make M", "make A", "make R", "complete R", "make B"],
                "\(outcome.log)")
        #expect(requests == ["requests": 1, "plan": 1], "\(requests)")
    }

    /// `aFailingPlansOpenFrameTheGraphHasRunsThePlanTakingIt` with a trace hook (`traced`: the build's events, A's a
    /// hit from the graph) and from a child registering B itself (`child`: B's plan the child's, its open frame B a
    /// local step's registration, A the owner's).
    @Test(arguments: [false, true], [false, true])
    func aFailingPlansOpenFrameTheGraphHasRunsThePlanTakingItTracedOrFromAChild(traced: Bool, child: Bool) throws {
        var target: Container?
        let (outcome, requests) = try run({ fx in
            let tracker = fx.tracker
            if child { target = try fx.child() }
            if traced { (target ?? fx.container).setTrace { e in tracker.note("trace \(e.kind) \(e.key.name)") } }
            let r = try fx.register("R", [dep("A")], scope: .transient)
            try fx.register("A", [dep("M")])
            try fx.register("M")
            try fx.register("B", [dep("A")], scope: .transient, in: target)
            fx.onComplete(r) { resolver, _, obj in
                try fx.register("M", [dep("Gone")], label: "M2")
                obj.got.append(try resolver.get(Key("B")).pointer)
            }
        }) { fx in
            let r = try fx.resolve("R", in: target)
            return withExtendedLifetime(r) {
                let o = Obj.of(r)
                return ["B's A is R's: \(Obj.at(o.got[0]).depPointer(0) == o.depPointer(0))"]
            }
        }
        #expect(outcome.error == nil, "\(outcome)")
        #expect(outcome.seen == ["B's A is R's: true"], "\(outcome)")
        let log = ["make M", "make A", "make R", "complete R", "make B", "drop R", "drop B", "drop A", "drop M"]
        // (The build's events: none for A taken from the graph, its table's.)
        let events = ["trace resolveStart R", "trace factoryCall M", "make M", "trace factoryReturn M", "trace factoryCall A", "make A",
                      "trace factoryReturn A", "trace edge A", "trace factoryCall R", "make R", "trace factoryReturn R", "trace edge R",
                      "complete R", "trace factoryCall B", "make B", "trace factoryReturn B", "trace edge B", "trace edge R",
                      "trace complete R", "trace resolveEnd R", "trace destroy R", "drop R", "trace destroy B", "drop B",
                      "trace destroy A", "drop A", "trace destroy M", "drop M"]
        #expect(outcome.log == (traced ? events : log), "\(outcome.log)")
        #expect(requests == ["requests": 1, "plan": 1], "\(requests)")
    }

    /// `aFailingPlansOpenFrameTheGraphHasRunsThePlanTakingIt` two levels down: R -> A -> C -> M, graph-scoped; the
    /// callback registers M anew over Gone, then asks for B -> X -> A (X transient). B's plan fails at Gone under X, A
    /// and C, the graph having A and C: the build takes A (never asking for C), makes X, then B; so does the plan with
    /// A and C leaves taken from the graph.
    @Test func aFailingPlansOpenFramesTheGraphHasTwoLevelsDownRunThePlanTakingThem() throws {
        let (outcome, requests) = try run({ fx in
            let r = try fx.register("R", [dep("A")], scope: .transient)
            try fx.register("A", [dep("C")])
            try fx.register("C", [dep("M")])
            try fx.register("M")
            try fx.register("B", [dep("X")], scope: .transient)
            try fx.register("X", [dep("A")], scope: .transient)
            fx.onComplete(r) { resolver, _, obj in
                try fx.register("M", [dep("Gone")], label: "M2")
                obj.got.append(try resolver.get(Key("B")).pointer)
            }
        }) { fx in
            let r = try fx.resolve("R")
            return withExtendedLifetime(r) {
                let o = Obj.of(r)
                return ["B's X's A is R's: \(Obj.at(o.got[0]).dep(0).depPointer(0) == o.depPointer(0))"]
            }
        }
        #expect(outcome.error == nil, "\(outcome)")
        #expect(outcome.seen == ["B's X's A is R's: true"], "\(outcome)")
        #expect(outcome.log.filter { $0.hasPrefix("make") || $0.hasPrefix("complete") }
                == ["make M", "make C", "make A", "make R", "complete R", "make X", "make B"], "\(outcome.log)")
        #expect(requests == ["requests": 1, "plan": 1], "\(requests)")
    }

    /// `aFailingPlansOpenFrameTheGraphHasRunsThePlanTakingIt` whose walk with A a leaf fails further on: B -> A, N
    /// (N transient -> Gone2, not registered). The build takes A, then fails at Gone2 under N; the plan with A a leaf
    /// taken from the graph fails there too, with the build's message, nothing made.
    @Test func aFailingPlansOpenFrameTheGraphHasWithAFailureFurtherOnRunsThePlanUpToIt() throws {
        let (outcome, requests) = try run({ fx in
            let r = try fx.register("R", [dep("A")], scope: .transient)
            try fx.register("A", [dep("M")])
            try fx.register("M")
            try fx.register("B", [dep("A"), dep("N")], scope: .transient)
            try fx.register("N", [dep("Gone2")], scope: .transient)
            fx.onComplete(r) { resolver, _, _ in
                try fx.register("M", [dep("Gone")], label: "M2")
                do { _ = try resolver.get(Key("B")) } catch let e as TetherError { fx.tracker.note("B failed: \(e.code) \(e.message)") }
            }
        }) { fx in
            let r = try fx.resolve("R")
            return withExtendedLifetime(r) { [] }
        }
        #expect(outcome.error == nil, "\(outcome)")
        #expect(outcome.log == ["make M", "make A", "make R", "complete R",
                                "B failed: notFound no registration for \"Gone2\" (needed by \"B\" -> \"N\"); register it first (tether_register) or check the spelling",
                                "drop R", "drop A", "drop M"], "\(outcome.log)")
        #expect(requests == ["requests": 1, "plan": 1], "\(requests)")
    }

    /// `aFailingPlansOpenFrameTheGraphHasRunsThePlanTakingIt` for a singleton's request: B singleton -> A. B's creation
    /// plan fails at Gone under A, which the graph has: the build takes A and makes B (published with the graph); so
    /// does the creating plan with A a leaf taken from the graph.
    @Test func aFailingCreationPlansOpenFrameTheGraphHasRunsThePlanTakingIt() throws {
        let (outcome, requests) = try run({ fx in
            let r = try fx.register("R", [dep("A")], scope: .transient)
            try fx.register("A", [dep("M")])
            try fx.register("M")
            try fx.register("B", [dep("A")], scope: .singleton)
            fx.onComplete(r) { resolver, _, obj in
                try fx.register("M", [dep("Gone")], label: "M2")
                obj.got.append(try resolver.get(Key("B")).pointer)
            }
        }) { fx in
            let r = try fx.resolve("R")
            let b = try fx.resolve("B")
            return withExtendedLifetime((r, b)) {
                let o = Obj.of(r)
                return ["B's A is R's: \(Obj.at(o.got[0]).depPointer(0) == o.depPointer(0)), B cached: \(o.got[0] == Obj.of(b).pointer)"]
            }
        }
        #expect(outcome.error == nil, "\(outcome)")
        #expect(outcome.seen == ["B's A is R's: true, B cached: true"], "\(outcome)")
        #expect(outcome.log.filter { $0.hasPrefix("make") || $0.hasPrefix("complete") } == ["make M", "make A", "make R", "complete R", "make B"],
                "\(outcome.log)")
        #expect(requests == ["requests": 1, "plan": 1], "\(requests)")
    }

    /// `aFailingPlansOpenFrameTheGraphHasRunsThePlanTakingIt` for a factory's request: R -> A, RESOLVER; R's factory
    /// registers M anew over Gone, then asks for B -> A with R's frame open. B's plan fails at Gone under A, which the
    /// graph has (R's slot): the build takes it and makes B, then R is made; so does the plan with A a leaf.
    @Test func aFactorysRequestWhoseFailingPlansOpenFrameTheGraphHasRunsThePlanTakingIt() throws {
        let (outcome, requests) = try run({ fx in
            try fx.register("R", [dep("A"), .resolver], scope: .transient) { obj in
                let resolver = try #require(fx.bridge.resolver(obj.words[1]))
                try fx.register("M", [dep("Gone")], label: "M2")
                obj.got.append(try resolver.get(Key("B")).pointer)
            }
            try fx.register("A", [dep("M")])
            try fx.register("M")
            try fx.register("B", [dep("A")], scope: .transient)
        }) { fx in
            let r = try fx.resolve("R")
            return withExtendedLifetime(r) {
                let o = Obj.of(r)
                return ["B's A is R's: \(Obj.at(o.got[0]).depPointer(0) == o.depPointer(0))"]
            }
        }
        #expect(outcome.error == nil, "\(outcome)")
        #expect(outcome.seen == ["B's A is R's: true"], "\(outcome)")
        #expect(outcome.log.filter { $0.hasPrefix("make") } == ["make M", "make A", "make B", "make R"], "\(outcome.log)")
        #expect(requests == ["requests": 1, "plan": 1], "\(requests)")
    }
}
