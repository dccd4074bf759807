// Plans: a plain graph (graph/transient scopes, DEP and CONTEXT slots, shared
// dependencies already cached) is replayed from a recorded order instead of
// being built frame by frame; with completion callbacks, the replayed build is
// handed to the graph, which runs them. Replaying must be indistinguishable
// from building: the same factory calls and callbacks in the same order, the
// same instances in the same slots and edges, the same destruction, the same
// errors; and a plan must never outlive the configuration it was recorded under.
import Testing
@testable import TetherCore

@Suite struct PlanTests {
    /// What one resolve of `root` did, to compare the two paths.
    private struct Trace: Equatable {
        var log: [String]
        var slots: [String]
        var error: String?
    }

    /// Registers a graph with `setUp`, then resolves `root` `times` times (each
    /// instance released before the next); resolve `n` (from 0) passes `arguments(n)`.
    private func trace(times: Int = 3, root: String, arguments: (Int) -> [Argument] = { _ in [] },
                       _ setUp: (Fixture) throws -> Void) throws -> (Trace, Fixture) {
        let fx = try Fixture()
        try setUp(fx)
        var slots: [String] = []
        var error: String?
        for n in 0..<times {
            do {
                let instance = try fx.resolve(root, arguments(n))
                slots.append(Self.describe(Obj.of(instance)))
            } catch let e as TetherError {
                error = "\(e.code): \(e.message)"
            }
        }
        #expect(fx.tracker.badDrops == 0)
        return (Trace(log: fx.tracker.log, slots: slots, error: error), fx)
    }

    /// The object tree below `obj` by labels: strong slots as subtrees, then
    /// what callbacks took, strongly (`+label`) or weakly (`~label`, `~gone`).
    private static func describe(_ obj: Obj) -> String { obj.tree(withEdges: true) }

    /// The label of the first dependency of a new "A", read while the instance is held.
    private func firstDepLabel(_ fx: Fixture, in container: Container? = nil) throws -> String {
        let instance = try fx.resolve("A", in: container)
        return withExtendedLifetime(instance) { Obj.of(instance).dep(0).label }
    }

    /// The trace of `root` (`trace`) is `expected` (the build's, which ran beside it as an oracle until branch
    /// noplansoff; random graphs pass none and check a digest of the traces, `fnv1a`), and the root's plan is
    /// current as `expectPlan` says. Returns the trace.
    @discardableResult
    private func expectSamePaths(root: String, expectPlan: Bool, expected: Trace? = nil, arguments: (Int) -> [Argument] = { _ in [] },
                                 _ setUp: @escaping (Fixture) throws -> Void,
                                 sourceLocation: SourceLocation = #_sourceLocation) throws -> Trace {
        let (replayed, fx) = try trace(root: root, arguments: arguments, setUp)
        if let expected { #expect(replayed == expected, sourceLocation: sourceLocation) }
        #expect(fx.container.registration(for: Key(root))!.hasCurrentPlan == expectPlan, sourceLocation: sourceLocation)
        return replayed
    }

    /// FNV-1a (64 bits) over `trace`'s lines (log, slots, error; each line's UTF-8 and a 0): a digest of random graphs'
    /// traces that a test can pin (the builds' traces, which ran beside them as an oracle until branch noplansoff).
    private static func fnv1a(_ traces: [Trace]) -> UInt64 {
        var hash: UInt64 = 0xcbf29ce484222325
        for trace in traces {
            for line in trace.log + ["|"] + trace.slots + ["|", trace.error ?? "-"] {
                for byte in line.utf8 + [0] { hash = (hash ^ UInt64(byte)) &* 0x100000001b3 }
            }
        }
        return hash
    }

    @Test func chainIsReplayedExactlyAsBuilt() throws {
        // Each resolve: C, B, A made in that order, dropped dependents first.
        let once = ["make C", "make B", "make A", "drop A", "drop B", "drop C"]
        let expected = Trace(log: Array(repeating: once, count: 3).flatMap { $0 }, slots: Array(repeating: "A(B(C))", count: 3), error: nil)
        try expectSamePaths(root: "A", expectPlan: true, expected: expected) { fx in
            try fx.register("A", [dep("B")], scope: .transient)
            try fx.register("B", [dep("C")], scope: .transient)
            try fx.register("C", scope: .transient)
        }
    }

    /// Seeded random plain graphs (graph-scoped nodes over later ones, transient leaves, CONTEXT
    /// slots anywhere): the replay calls the factories in the build's order with the same slots,
    /// the recorder's walk and `Graph.build`'s being the one `CreationOrder.walk` (the traces' digest
    /// is the build's, which ran beside each as an oracle until branch noplansoff).
    @Test func randomPlainGraphsAreReplayedInTheBuildsOrder() throws {
        var seed: UInt64 = 0x2545F4914F6CDD1D
        func next(_ n: Int) -> Int {
            seed = seed &* 6364136223846793005 &+ 1442695040888963407
            return Int((seed >> 33) % UInt64(n))
        }
        let context = UnsafeMutableRawPointer(bitPattern: 0x7)!
        var traces: [Trace] = []
        for _ in 0..<24 {
            let count = 2 + next(9)
            var shapes: [(params: [Param], scope: Scope)] = []
            for i in 0..<count {
                // Edges to later nodes only (no cycle), repeats allowed.
                var params: [Param] = i + 1 < count ? (0..<next(4)).map { _ in dep("N\(i + 1 + next(count - i - 1))") } : []
                if next(3) == 0 { params.insert(.context, at: next(params.count + 1)) }
                shapes.append((params, params.contains { $0 != .context } || next(2) == 0 ? .graph : .transient))
            }
            traces.append(try expectSamePaths(root: "N0", expectPlan: true) { fx in
                for (i, shape) in shapes.enumerated() {
                    try fx.register("N\(i)", shape.params, scope: shape.scope, context: context)
                }
            })
        }
        #expect(Self.fnv1a(traces) == 0xc3714157de0d1804, "\(String(Self.fnv1a(traces), radix: 16)) \(traces.map(\.log.count))")
    }

    @Test func diamondWithGraphScopeSharesOneInstance() throws {
        // One D for B, C and A; C's two T slots two instances; dropped last made first.
        let once = ["make D", "make B", "make T", "make T", "make C", "make A", "drop A", "drop C", "drop T", "drop T", "drop B", "drop D"]
        let expected = Trace(log: Array(repeating: once, count: 3).flatMap { $0 }, slots: Array(repeating: "A(B(D),C(D,T,T),D)", count: 3), error: nil)
        try expectSamePaths(root: "A", expectPlan: true, expected: expected) { fx in
            try fx.register("A", [dep("B"), dep("C"), dep("D")])
            try fx.register("B", [dep("D")])
            try fx.register("C", [dep("D"), dep("T"), dep("T")])
            try fx.register("D")
            try fx.register("T", scope: .transient)
        }
    }

    @Test func contextSlotsAndCachedSingletonLeaves() throws {
        let context = UnsafeMutableRawPointer(bitPattern: 0x7)!
        // S made once and cached; the weak W, held only by B, dies with each graph and is made again.
        let once = ["make W", "make B", "make A", "drop A", "drop B", "drop W"]
        let expected = Trace(log: ["make S"] + Array(repeating: once, count: 3).flatMap { $0 }, slots: Array(repeating: "A(S,B(S,W))", count: 3), error: nil)
        try expectSamePaths(root: "A", expectPlan: true, expected: expected) { fx in
            try fx.register("A", [.context, dep("S"), dep("B")], context: context)
            try fx.register("B", [dep("S"), dep("W")])
            try fx.register("S", scope: .singleton)
            try fx.register("W", scope: .weak)
        }
    }

    @Test func graphsPlansCannotReplayAreBuilt() throws {
        // A constructor cycle, through a DEP and through a WEAK slot (a constructor edge too): known
        // when the plan is recorded, the plan's outcome is the build's error (no factory runs first).
        let cycle = Trace(log: [], slots: [], error: "cycle: dependency cycle through constructors: \"A\" -> \"B\" -> \"A\"; break its last edge "
                          + "\"B\" -> \"A\": take \"A\" in a completion callback of \"B\" (tether_on_complete), or declare the slot TETHER_WEAK_LAZY(\"A\")")
        try expectSamePaths(root: "A", expectPlan: true, expected: cycle) { fx in
            try fx.register("A", [dep("B")])
            try fx.register("B", [dep("A")])
        }
        try expectSamePaths(root: "A", expectPlan: true, expected: cycle) { fx in
            try fx.register("A", [dep("B")])
            try fx.register("B", [weakDep("A")])
        }
        // A lazy slot whose key is container-scoped: planned since branch `declinerest` (its cell waits, as
        // the build's, for the container step the graph may never enter: `Plan.makeSlots`).
        let lazy = Trace(log: Array(repeating: ["make A", "drop A"], count: 3).flatMap { $0 }, slots: ["A", "A", "A"], error: nil)
        try expectSamePaths(root: "A", expectPlan: true, expected: lazy) { fx in
            try fx.register("A", [lazyDep("R")])
            try fx.register("R", scope: .container)
        }
    }

    // MARK: RESOLVER slots and lazy slots of per-request keys (issue 28 item 1)

    /// The resolves of `body` counted by reason on this thread (`PlanStats`): what declined, by name.
    private func declines(_ body: () throws -> Void) rethrows -> [String: Int] {
        PlanStats.countOnThisThread()
        let before = PlanStats.thisThread()
        try body()
        var declined: [String: Int] = [:]
        for (name, n) in PlanStats.thisThread() where name != "resolves" && n != before[name, default: 0] { declined[name] = n - before[name, default: 0] }
        return declined
    }

    /// A RESOLVER slot on the plan: the factory's resolver builds into the graph the plan replays into, as the
    /// build's: a graph-scoped key made before is the graph's (never a second), one made by a get is held by
    /// the owner's edge and goes after it, a weak get's goes with the resolve; asking for the owner or the root
    /// (under construction) is the build's cycle with its path, a missing key names the frames; the resolver
    /// is closed once the factory returns (kept past it: WRONG_CONTEXT).
    @Test func resolverSlotsRunInPlans() throws {
        var runs: [[String]] = []
        do {
            let fx = try Fixture()
            let kept = Box<Resolver?>(nil)
            try fx.register("Root", [dep("G"), dep("A"), dep("T")], body: Self.probe(fx))
            try fx.register("A", [.resolver, dep("G")]) { obj in
                let r = try #require(fx.bridge.resolver(obj.words[0]))
                kept.value = r
                fx.tracker.note("G is the graph's: \(try r.get(Key("G")).pointer == obj.depPointer(1))")
                obj.got.append(try r.get(Key("X")).pointer)
                obj.weaks.append(try r.getWeak(Key("B")))
                for key in ["A", "Root", "Missing"] {
                    do { _ = try r.get(Key(key)) } catch let e as TetherError { fx.tracker.note("\(key): \(e.code) \(e.message)") }
                }
            }
            try fx.register("G")
            try fx.register("T", scope: .transient)
            try fx.register("X", [dep("G")])
            try fx.register("B")
            var seen: [String] = []
            let declined = try declines {
                for _ in 0..<3 {
                    let root = try fx.resolve("Root")
                    let a = Obj.of(root).dep(1)
                    seen.append("X's G is Root's: \(Obj.at(a.got[0]).depPointer(0) == Obj.of(root).depPointer(0)), B gone: \(a.weaks[0].upgrade() == nil)")
                }
            }
            #expect(declined.isEmpty, "\(declined)")
            #expect(fx.tracker.events("plan? ") == Array(repeating: "plan? yes", count: 3))
            #expect(fx.container.registration(for: Key("Root"))!.hasCurrentPlan)
            expectError(.wrongContext, "only valid during the callback") { try kept.value!.get(Key("G")) }
            kept.value = nil
            #expect(fx.tracker.liveCount == 0 && fx.tracker.badDrops == 0 && fx.bridge.openResolvers == 0)
            #expect(fx.tracker.made("G") == 3 && fx.tracker.made("X") == 3 && fx.tracker.made("B") == 3)
            runs.append(seen + fx.tracker.log.filter { !$0.hasPrefix("plan? ") })
        }
        #expect(runs[0].contains { $0.hasPrefix("A: cycle dependency cycle through constructors: \"A\" -> \"A\";") })
        #expect(runs[0].contains { $0.hasPrefix("Root: cycle dependency cycle through constructors: \"Root\" -> \"A\" -> \"Root\";") })
        #expect(runs[0].contains { $0.hasPrefix("Missing: ") && $0.contains("\"Root\" -> \"A\"") })
    }

    /// A plan's step failing after a resolver built instances: everything goes as the build's abort lets
    /// go of it, last made first, what the resolver built right before its owner; a failing factory that
    /// has the resolver names the build's path. A graph-scoped key the plan makes after the resolver's
    /// owner that a get built first is taken from the graph, and the transient only it asked for not made
    /// (`Plan.takeBuilt`), as the build finds it there.
    @Test func resolverSlotFailuresAndWhatItsGetsBuiltAreTheBuilds() throws {
        for shape in 0..<4 {
            var runs: [[String]] = []
            do {
                let fx = try Fixture()
                try fx.register("Root", [dep("P"), dep("A")] + (shape >= 2 ? [dep("G")] : []) + (shape != 2 ? [dep("F")] : []))
                try fx.register("P")
                try fx.register("A", [.resolver, dep("P")]) { obj in
                    let r = try #require(fx.bridge.resolver(obj.words[0]))
                    obj.got.append(try r.get(Key("X")).pointer)
                    obj.got.append(try r.get(Key("T")).pointer)
                    if shape >= 2 { obj.got.append(try r.get(Key("G")).pointer) }
                    if shape == 1 { throw CallbackFailure(reason: "no A") }
                }
                try fx.register("X", [dep("P")])
                try fx.register("T", scope: .transient)
                try fx.register("F", scope: .transient) { _ in throw CallbackFailure(reason: "no F") }
                try fx.register("G", [dep("X"), dep("T")])
                var errors: [String] = []
                let declined = try declines {
                    for _ in 0..<3 {
                        do { _ = try fx.resolve("Root") } catch let e as TetherError { errors.append(e.message) }
                    }
                }
                #expect(declined.isEmpty, "shape \(shape): \(declined)")
                #expect(fx.tracker.liveCount == 0 && fx.tracker.badDrops == 0)
                runs.append(errors + fx.tracker.log)
            }
            if shape == 0 || shape == 3 { #expect(runs[0].first == "factory for \"F\" returned NULL: no F (while resolving \"Root\" -> \"F\")") }
            if shape == 1 { #expect(runs[0].first == "factory for \"A\" returned NULL: no A (while resolving \"Root\" -> \"A\")") }
            if shape == 2 { #expect(runs[0].count(where: { $0 == "make X" }) == 3 && runs[0].count(where: { $0 == "make T" }) == 6 && runs[0].count(where: { $0 == "make G" }) == 3, "Root takes the G A's resolver made, over its X") }
        }
    }

    /// After a run whose resolver built instances the graph lets go of them last made first too
    /// (`Graph.letGoReplayed`): a completion callback failing after the run (what the resolver's weak get
    /// built goes after its owner), and at the end of a resolve what only the graph held (a WEAK slot's
    /// target the plan makes after the resolver's owner goes before what the resolver's weak get built).
    @Test func whatAResolverBuiltIsLetGoOfLastMadeFirstAfterTheRun() throws {
        for failing in [false, true] {
            var runs: [[String]] = []
            do {
                let fx = try Fixture()
                try fx.register("Root", [dep("A"), weakDep("L")])
                try fx.register("A", [.resolver]) { obj in
                    obj.weaks.append(try #require(fx.bridge.resolver(obj.words[0])).getWeak(Key("W")))
                }
                let w = try fx.register("W")
                try fx.register("L")
                if failing { fx.onComplete(w) { _, _, _ in throw CallbackFailure(reason: "no W") } }
                let declined = try declines {
                    for _ in 0..<3 {
                        do { _ = try fx.resolve("Root") } catch let e as TetherError { fx.tracker.note("failed \(e.code)") }
                    }
                }
                #expect(declined.isEmpty, "\(declined)")
                #expect(fx.tracker.liveCount == 0 && fx.tracker.badDrops == 0)
                runs.append(fx.tracker.log)
            }
            let once = failing ? ["make W", "make A", "make L", "make Root", "complete W", "drop Root", "drop L", "drop A", "drop W", "failed factoryFailed"]
                : ["make W", "make A", "make L", "make Root", "drop L", "drop W", "drop Root", "drop A"]
            #expect(runs[0] == Array([once, once, once].joined()), "failing \(failing): \(runs[0])")
        }
    }

    /// LAZY and WEAK_LAZY slots of a CONTAINER-scoped key and of a declared value key, resolved from a
    /// request's child: on the plan (no decline), each cell answers the child's instance (made on its first
    /// call and cached there) or the child's value, as the build's cells do.
    @Test func lazySlotsOfContainerScopedAndValueKeysRunInPlans() throws {
        var runs: [[String]] = []
        do {
            let fx = try Fixture()
            _ = try fx.container.declareValue(Key("Request"))
            try fx.register("Session", scope: .container)
            try fx.register("H", [lazyDep("Session"), weakLazyDep("Session"), weakLazyDep("Request"), lazyDep("Request")])
            var seen: [String] = []
            let declined = try declines {
                for n in 0..<2 {
                    let child = try fx.child()
                    let request = Ref(retaining: Obj(label: "Request\(n)", words: [])).opaque
                    _ = try child.provideValue(Key("Request"), request, context: nil, destructor: { p, _ in Ref<Obj>(opaque: p).release() })
                    for _ in 0..<2 {
                        let h = try fx.resolve("H", in: child)
                        let cells = try (0..<4).map { try #require(fx.bridge.cell(Obj.of(h).words[$0])) }
                        let session = try cells[0].get()
                        seen.append("child \(n): lazy and weak-lazy Session the child's: \(session == (try cells[1].get())), \(session == (try fx.resolve("Session", in: child).pointer))")
                        seen.append("child \(n): the value \(Obj.at(try cells[2].get()).label), \(Obj.at(try cells[3].get()).label)")
                    }
                    _ = try child.close()
                }
            }
            #expect(declined.isEmpty, "\(declined)")
            #expect(fx.container.registration(for: Key("H"))!.hasCurrentPlan)
            #expect(fx.tracker.made("Session") == 2 && fx.tracker.liveCount == 0 && fx.tracker.badDrops == 0)
            runs.append(seen + fx.tracker.log)
        }
        #expect(runs[0].contains("child 1: the value Request1, Request1"))
    }

    // MARK: slots made per resolve (WEAK, LAZY, WEAK_LAZY, ALL, FACTORY): the plan replays into the graph

    /// A root's factory body that notes whether it runs in a plan's step loop (`Plan.execute` notes
    /// its plan in the thread's progress) or in a build: "plan? yes" or "plan? no".
    private static func probe(_ fx: Fixture) -> (Obj) -> Void {
        { _ in fx.tracker.note("plan? \(ThreadState.currentReference.borrow { $0.planProgress.pointee.plan != nil } ? "yes" : "no")") }
    }

    /// `observe` after each of three resolves of `root` (set up by `setUp`, the root's body
    /// `probe`): the observations and the factory and destructor log `expected` (the build's, which
    /// ran beside it as an oracle until branch noplansoff; then only `cached` instances live:
    /// singletons); the root's plan is current and its factory ran in the plan's step loop, every time.
    private func expectSameObservations(root: String, cached: Int = 0, expected: [String], _ setUp: (Fixture) throws -> Void,
                                        observe: (Fixture, Instance) throws -> [String],
                                        sourceLocation: SourceLocation = #_sourceLocation) throws {
        let fx = try Fixture()
        try setUp(fx)
        var seen: [String] = []
        for _ in 0..<3 {
            let instance = try fx.resolve(root)
            seen += try observe(fx, instance)
            #expect(fx.container.registration(for: Key(root))!.hasCurrentPlan, sourceLocation: sourceLocation)
        }
        #expect(fx.tracker.liveCount == cached && fx.tracker.badDrops == 0, sourceLocation: sourceLocation)
        #expect(fx.tracker.events("plan? ") == Array(repeating: "plan? yes", count: 3), sourceLocation: sourceLocation)
        expectLiteral(seen + fx.tracker.log.filter { !$0.hasPrefix("plan? ") }, expected, sourceLocation: sourceLocation)
    }

    /// A weak slot holds the graph's instance weakly (no edge): two slots of one graph-scoped key
    /// get its one instance; a transient made only for a weak slot goes when the resolve returns.
    @Test func weakSlotsRunOnThePlan() throws {
        let expected = ["C held weakly by A is A's C: true", "by B too: true", "T gone: true",
                        "C made 1, T made 1 dropped 1", "C held weakly by A is A's C: true", "by B too: true",
                        "T gone: true", "C made 2, T made 2 dropped 2", "C held weakly by A is A's C: true",
                        "by B too: true", "T gone: true", "C made 3, T made 3 dropped 3", "make C", "make T", "make B",
                        "make A", "drop T", "drop A", "drop C", "drop B", "make C", "make T", "make B", "make A",
                        "drop T", "drop A", "drop C", "drop B", "make C", "make T", "make B", "make A", "drop T",
                        "drop A", "drop C", "drop B"]
        try expectSameObservations(root: "A", expected: expected, { fx in
            try fx.register("A", [dep("B"), weakDep("C"), dep("C")], body: Self.probe(fx))
            try fx.register("B", [weakDep("C"), weakDep("T")])
            try fx.register("C")
            try fx.register("T", scope: .transient)
        }) { fx, a in
            let (objA, objB) = (Obj.of(a), Obj.of(a).dep(0))
            let c = fx.bridge.weak(objA.words[1]).upgrade()
            return ["C held weakly by A is A's C: \(c?.pointer == objA.depPointer(2))",
                    "by B too: \(fx.bridge.weak(objB.words[0]).upgrade()?.pointer == objA.depPointer(2))",
                    "T gone: \(fx.bridge.weak(objB.words[1]).upgrade() == nil)",
                    "C made \(fx.tracker.made("C")), T made \(fx.tracker.made("T")) dropped \(fx.tracker.dropped("T"))"]
        }
    }

    /// The README's cycle: a Parent built from its Child, the Child pointing back with a weak-lazy
    /// slot. On the plan the cell is bound to the graph's Parent as it is made: one Parent per
    /// resolve, never a second; a strong lazy back edge is refused at the bind as the build refuses it.
    @Test func weakLazyBackReferenceBuildsOnceOnThePlan() throws {
        let expected = ["back edge is this Parent: true", "Parent calls 1, Child calls 1",
                        "back edge is this Parent: true", "Parent calls 2, Child calls 2",
                        "back edge is this Parent: true", "Parent calls 3, Child calls 3", "make Child", "make Parent",
                        "drop Parent", "drop Child", "make Child", "make Parent", "drop Parent", "drop Child",
                        "make Child", "make Parent", "drop Parent", "drop Child"]
        try expectSameObservations(root: "Parent", expected: expected, { fx in
            try fx.register("Parent", [dep("Child")], body: Self.probe(fx))
            try fx.register("Child", [weakLazyDep("Parent")])
        }) { fx, parent in
            let cell = try #require(fx.bridge.cell(Obj.of(parent).dep(0).words[0]))
            return ["back edge is this Parent: \(try cell.get() == parent.pointer)",
                    "Parent calls \(fx.tracker.calls("Parent")), Child calls \(fx.tracker.calls("Child"))"]
        }
        let fx = try Fixture()
        try fx.register("X", [dep("Y")])
        try fx.register("Y", [lazyDep("X")])
        let x = try fx.resolve("X")
        #expect(fx.container.registration(for: Key("X"))!.hasCurrentPlan)
        let cell = try #require(fx.bridge.cell(Obj.of(x).dep(0).words[0]))
        expectError(.retainCycle, "lazy dependency \"Y\" -> \"X\" would close a retain cycle \"Y\" -> \"X\" -> \"Y\"") { try cell.get() }
        #expect(fx.tracker.calls("X") == 1, "never a second X")
    }

    /// Each lazy cell is bound as `Graph.rememberGraph` and `bindAwaiting` bind it: to the instance
    /// in the graph when the slot is filled (B, the second slot), to one made after the slot but
    /// before its owner (B, the first), to its owner itself once made (weak-lazy A), to none for
    /// a transient not under construction (each call of T's cell resolves one) or a singleton the
    /// graph does not reach (resolved from its cache).
    @Test func lazySlotsAreBoundAsTheBuildBindsThem() throws {
        let expected = ["B before: true, B after: true", "B calls 1, T calls 1, T made now: true", "A itself: true",
                        "S cached: true, S calls 1", "B before: true, B after: true",
                        "B calls 2, T calls 2, T made now: true", "A itself: true", "S cached: true, S calls 1",
                        "B before: true, B after: true", "B calls 3, T calls 3, T made now: true", "A itself: true",
                        "S cached: true, S calls 1", "make B", "make A", "make T", "make S", "drop A", "drop T",
                        "drop B", "make B", "make A", "make T", "drop A", "drop T", "drop B", "make B", "make A",
                        "make T", "drop A", "drop T", "drop B"]
        try expectSameObservations(root: "A", cached: 1, expected: expected, { fx in
            try fx.register("A", [lazyDep("B"), dep("B"), lazyDep("B"), lazyDep("T"), weakLazyDep("A"), lazyDep("S")], body: Self.probe(fx))
            try fx.register("B")
            try fx.register("T", scope: .transient)
            try fx.register("S", scope: .singleton)
        }) { fx, a in
            let obj = Obj.of(a)
            let cells = try [0, 2, 3, 4, 5].map { try #require(fx.bridge.cell(obj.words[$0])) }
            let t = try cells[2].get()
            return ["B before: \(try cells[0].get() == obj.depPointer(1)), B after: \(try cells[1].get() == obj.depPointer(1))",
                    "B calls \(fx.tracker.calls("B")), T calls \(fx.tracker.calls("T")), T made now: \(fx.tracker.isLive(t))",
                    "A itself: \(try cells[3].get() == a.pointer)",
                    "S cached: \(try cells[4].get() == fx.resolve("S").pointer), S calls \(fx.tracker.calls("S"))"]
        }
    }

    /// A lazy cell filled before a later step of its graph takes its key's singleton from the cache is
    /// bound to that instance (`Graph.existing` binds it as it takes it; a plan's shared step, as the
    /// owner is made): the root's own slot (filled before V -> U -> S takes S), and B's (B made before
    /// that); a cell on a singleton the graph never takes (R) is not bound. The graph's answer is read
    /// through `LazyCell.watch`, told at once when it is known.
    @Test func lazyCellsFilledBeforeTheGraphTakesACachedInstanceAreBoundToIt() throws {
        final class Told: @unchecked Sendable { var pointer: UnsafeMutableRawPointer? }
        func bound(_ cell: LazyCell) -> UnsafeMutableRawPointer? {
            let told = Told()
            cell.watch { if case .instance(let ref) = $0 { told.pointer = ref.upgrade()?.pointer } }
            return told.pointer
        }
        let expected = ["A's cell bound to the graph's S: true, B's: true, R's unbound: true", "S calls 1",
                        "A's cell bound to the graph's S: true, B's: true, R's unbound: true", "S calls 1",
                        "A's cell bound to the graph's S: true, B's: true, R's unbound: true", "S calls 1",
                        "make S", "make R", "make B", "make U", "make V", "make A", "drop A", "drop V", "drop U",
                        "drop B", "make B", "make U", "make V", "make A", "drop A", "drop V", "drop U", "drop B",
                        "make B", "make U", "make V", "make A", "drop A", "drop V", "drop U", "drop B"]
        try expectSameObservations(root: "A", cached: 2, expected: expected, { fx in
            try fx.register("S", scope: .singleton)
            try fx.register("R", scope: .singleton)
            try fx.register("U", [dep("S")])
            try fx.register("V", [dep("U")])
            try fx.register("B", [lazyDep("S")])
            try fx.register("A", [lazyDep("S"), dep("B"), dep("V"), lazyDep("R")], body: Self.probe(fx))
            _ = try fx.resolve("S")
            _ = try fx.resolve("R")
        }) { fx, a in
            let obj = Obj.of(a)
            let s = obj.dep(2).dep(0).depPointer(0)
            let cells = try [obj.words[0], obj.dep(1).words[0], obj.words[3]].map { try #require(fx.bridge.cell($0)) }
            #expect(bound(cells[0]) == s && bound(cells[1]) == s && bound(cells[2]) == nil)
            return ["A's cell bound to the graph's S: \(bound(cells[0]) == s), B's: \(bound(cells[1]) == s), R's unbound: \(bound(cells[2]) == nil)",
                    "S calls \(fx.tracker.calls("S"))"]
        }
    }

    /// A lazy cell whose key's instance the build does not make waits in the graph: a completion
    /// callback that builds it there binds the cell to it, on the plan as in the build.
    @Test func lazyCellWaitsForAnInstanceACompletionCallbackMakes() throws {
        let expected = ["bound to the callback's K: false", "K calls 1", "bound to the callback's K: false",
                        "K calls 2", "bound to the callback's K: false", "K calls 3", "make A", "complete A", "make K",
                        "drop K", "drop A", "make A", "complete A", "make K", "drop K", "drop A", "make A",
                        "complete A", "make K", "drop K", "drop A"]
        try expectSameObservations(root: "A", expected: expected, { fx in
            let a = try fx.register("A", [lazyDep("K")], body: Self.probe(fx))
            try fx.register("K")
            fx.onComplete(a) { resolver, _, obj in obj.got.append(try resolver.getWeakTarget(Key("K")).pointer) }
        }) { fx, a in
            let cell = try #require(fx.bridge.cell(Obj.of(a).words[0]))
            let k = Obj.of(a).got[0]
            return ["bound to the callback's K: \(fx.tracker.isLive(k) ? try cell.get() == k : false)", "K calls \(fx.tracker.calls("K"))"]
        }
    }

    /// An ALL slot's items are steps, strong edges in the slot's place (before the next slot's),
    /// the list made per resolve; a FACTORY slot's handle is made per resolve for the resolving container.
    @Test func allAndFactorySlotsRunOnThePlan() throws {
        let expected = ["items [\"Plugin\", \"Plugin#gzip\"], the first is the DEP's: true", "items live: true",
                        "factory for Z from the container: true",
                        "items [\"Plugin\", \"Plugin#gzip\"], the first is the DEP's: true", "items live: true",
                        "factory for Z from the container: true",
                        "items [\"Plugin\", \"Plugin#gzip\"], the first is the DEP's: true", "items live: true",
                        "factory for Z from the container: true", "make Plugin", "make Z", "make Plugin#gzip",
                        "make Host", "drop Host", "drop Plugin#gzip", "drop Z", "drop Plugin", "make Plugin", "make Z",
                        "make Plugin#gzip", "make Host", "drop Host", "drop Plugin#gzip", "drop Z", "drop Plugin",
                        "make Plugin", "make Z", "make Plugin#gzip", "make Host", "drop Host", "drop Plugin#gzip",
                        "drop Z", "drop Plugin"]
        try expectSameObservations(root: "Host", expected: expected, { fx in
            try fx.register("Plugin")
            try fx.register("Plugin#gzip", [dep("Z")], scope: .transient)
            try fx.register("Z", scope: .transient)
            try fx.register("Host", [.all(Key("Plugin")), dep("Plugin"), .factory(Key("Z")), .context], body: Self.probe(fx))
        }) { fx, host in
            let obj = Obj.of(host)
            let items = SlotList.items(at: UnsafeRawPointer(bitPattern: UInt(obj.words[0]))!)
            let factory = fx.bridge.factoryCell(obj.words[2])
            // Its edges: the log's destructor order (an instance lets go of its edges last first).
            return ["items \(items.map { Obj.at($0).label }), the first is the DEP's: \(items[0] == obj.depPointer(1))",
                    "items live: \(items.allSatisfy(fx.tracker.isLive))", "factory for \(factory.key.name) from the container: \(factory.container === fx.container)"]
        }
    }

    /// From an empty child (the parent's plan serves it), cells and handles are the child's, as the build makes them.
    @Test func slotsMadeFromAChildAreTheChilds() throws {
        let fx = try Fixture()
        try fx.register("A", [lazyDep("B"), .factory(Key("B"))])
        try fx.register("B")
        let child = try fx.child()
        let a = try fx.resolve("A", in: child)
        #expect(fx.container.registration(for: Key("A"))!.hasCurrentPlan)
        let cell = try #require(fx.bridge.cell(Obj.of(a).words[0]))
        #expect(cell.container === child && fx.bridge.factoryCell(Obj.of(a).words[1]).container === child)
    }

    /// Seeded random graphs with every slot kind but ALL (whose list word `describe` cannot read):
    /// weak slots to later nodes (constructor edges), lazy, weak-lazy and factory slots to any node,
    /// failing factories: the replay is the build, step by step and destructor by destructor (the traces' digest
    /// is the build's, which ran beside each as an oracle until branch noplansoff).
    @Test func randomGraphsWithSlotsMadePerResolveAreReplayedAsBuilt() throws {
        var seed: UInt64 = 0x9E3779B97F4A7C15
        func next(_ n: Int) -> Int {
            seed = seed &* 6364136223846793005 &+ 1442695040888963407
            return Int((seed >> 33) % UInt64(n))
        }
        var traces: [Trace] = []
        for round in 0..<24 {
            let count = 2 + next(7)
            var shapes: [(params: [Param], scope: Scope, fails: Bool)] = []
            for i in 0..<count {
                var params: [Param] = []
                for _ in 0..<next(5) {
                    let later = i + 1 < count ? "N\(i + 1 + next(count - i - 1))" : nil
                    let any = "N\(next(count))"
                    switch next(5) {
                    case 0: if let later { params.append(dep(later)) }
                    case 1: if let later { params.append(weakDep(later)) }
                    case 2: params.append(weakLazyDep(any))
                    case 3: params.append(lazyDep(later ?? any))
                    default: params.append(.factory(Key(any)))
                    }
                }
                shapes.append((params, next(3) == 0 ? .transient : .graph, round % 4 == 3 && i == count - 1 && count > 2))
            }
            let setUp = { (fx: Fixture) in
                for (i, shape) in shapes.enumerated() {
                    if shape.fails {
                        try fx.register("N\(i)", shape.params, scope: shape.scope) { _ in throw CallbackFailure(reason: "no N\(i)") }
                    } else {
                        try fx.register("N\(i)", shape.params, scope: shape.scope)
                    }
                }
            }
            traces.append(try expectSamePaths(root: "N0", expectPlan: true, setUp))
        }
        #expect(Self.fnv1a(traces) == 0x700fbe98005eed2c, "\(String(Self.fnv1a(traces), radix: 16)) \(traces.map(\.log.count))")
    }

    /// A root's runtime arguments are inputs of its plan: each replay passes the
    /// resolve's own values, as a build does (one node; several, made as a block;
    /// with a completion callback, replayed into the graph).
    @Test func runtimeArgumentsOfTheRootAreReplayedAsBuilt() throws {
        // Small values: `describe` reads words above 0x1000 as objects.
        let arguments = { (n: Int) in [Argument(type: .i64, bits: UInt64(40 + n)), Argument(type: .ptr, bits: UInt64(0x100 + n))] }
        let noteArguments = { (fx: Fixture) in { (obj: Obj) in fx.tracker.note("G got \(obj.words[0]), \(obj.words[2])") } }
        let expected = Trace(log: ["G got 40, 256", "make G", "drop G", "G got 41, 257", "make G", "drop G",
                                   "G got 42, 258", "make G", "drop G"],
                             slots: ["G", "G", "G"],
                             error: nil)
        try expectSamePaths(root: "G", expectPlan: true, expected: expected, arguments: arguments) { fx in
            try fx.register("G", [.argument(.i64), .context, .argument(.ptr)], context: UnsafeMutableRawPointer(bitPattern: 0x7),
                            body: noteArguments(fx))
        }
        let expected1 = Trace(log: ["make S", "make C", "make B", "G got 40, 256", "make G", "drop G", "drop B",
                                    "drop C", "make C", "make B", "G got 41, 257", "make G", "drop G", "drop B",
                                    "drop C", "make C", "make B", "G got 42, 258", "make G", "drop G", "drop B",
                                    "drop C"],
                              slots: ["G(S,B(C,S))", "G(S,B(C,S))", "G(S,B(C,S))"],
                              error: nil)
        try expectSamePaths(root: "G", expectPlan: true, expected: expected1, arguments: arguments) { fx in
            try fx.register("G", [.argument(.i64), dep("S"), .argument(.ptr), dep("B")], body: noteArguments(fx))
            try fx.register("S", scope: .singleton)
            try fx.register("B", [dep("C"), dep("S")], scope: .transient)
            try fx.register("C")
            _ = try fx.resolve("S")
        }
        let expected2 = Trace(log: ["make B", "G got 40, 256", "make G", "complete G", "completed G with 40", "drop G",
                                    "drop B", "make B", "G got 41, 257", "make G", "complete G", "completed G with 41",
                                    "drop G", "drop B", "make B", "G got 42, 258", "make G", "complete G",
                                    "completed G with 42", "drop G", "drop B"],
                              slots: ["G(B)", "G(B)", "G(B)"],
                              error: nil)
        try expectSamePaths(root: "G", expectPlan: true, expected: expected2, arguments: arguments) { fx in
            let g = try fx.register("G", [.argument(.i64), dep("B"), .argument(.ptr)], body: noteArguments(fx))
            try fx.register("B")
            fx.onComplete(g) { _, _, obj in fx.tracker.note("completed G with \(obj.words[0])") }
        }
        let (trace, fx) = try trace(root: "G", arguments: arguments) { fx in
            try fx.register("G", [.argument(.i64), dep("B"), .argument(.ptr)], body: noteArguments(fx))
            try fx.register("B")
        }
        #expect(trace.log.filter { $0.hasPrefix("G got") } == ["G got 40, 256", "G got 41, 257", "G got 42, 258"])
        #expect(fx.tracker.made("B") == 3 && fx.tracker.dropped("B") == 3 && fx.tracker.liveCount == 0)
    }

    /// With runtime arguments a failing replay destroys what it made and reports
    /// what a build reports; arguments that do not match are refused before
    /// any factory runs, and a dependency taking arguments still makes the plan decline.
    @Test func runtimeArgumentFailuresAreTheBuildsOnes() throws {
        let one = { (n: Int) in [Argument(type: .i64, bits: UInt64(n))] }
        let noF = Trace(log: Array(repeating: ["make B", "drop B"], count: 3).flatMap { $0 }, slots: [],
                        error: "factoryFailed: factory for \"F\" returned NULL: no F (while resolving \"G\" -> \"F\")")
        try expectSamePaths(root: "G", expectPlan: true, expected: noF, arguments: one) { fx in
            try fx.register("G", [dep("B"), .argument(.i64), dep("F")])
            try fx.register("B")
            try fx.register("F", [dep("B")]) { _ in throw CallbackFailure(reason: "no F") }
        }
        let (failed, fx) = try trace(root: "G", arguments: one) { fx in
            try fx.register("G", [dep("B"), .argument(.i64), dep("F")])
            try fx.register("B")
            try fx.register("F", [dep("B")]) { _ in throw CallbackFailure(reason: "no F") }
        }
        #expect(failed.error?.contains("factory for \"F\" returned NULL: no F (while resolving \"G\" -> \"F\")") == true, "\(failed.error ?? "")")
        #expect(fx.tracker.made("B") == 3 && fx.tracker.dropped("B") == 3 && fx.tracker.liveCount == 0)
        let wrong = { (n: Int) in n == 1 ? [Argument(type: .f64, bits: 0)] : n == 2 ? [] : [Argument(type: .i64, bits: 9)] }
        // Only the first resolve's argument fits: the others fail before any factory (the last with none given).
        let wrongOnes = Trace(log: ["make B", "make G", "drop G", "drop B"], slots: ["G(B)"], error: "argumentMismatch: \"G\" takes 1 runtime argument, got 0")
        try expectSamePaths(root: "G", expectPlan: true, expected: wrongOnes, arguments: wrong) { fx in
            try fx.register("G", [dep("B"), .argument(.i64)])
            try fx.register("B")
        }
        let (mismatch, _) = try trace(root: "G", arguments: wrong) { fx in
            try fx.register("G", [dep("B"), .argument(.i64)])
            try fx.register("B")
        }
        #expect(mismatch.log == ["make B", "make G", "drop G", "drop B"] && mismatch.slots == ["G(B)"])
        #expect(mismatch.error?.hasPrefix("argumentMismatch") == true, "\(mismatch.error ?? "")")
        // A dependency taking runtime arguments: the plan fails where the build does (`Plan.failure`).
        let takesArguments = Trace(log: [], slots: [], error: "argumentMismatch: \"H\" takes runtime arguments and cannot be a dependency "
            + "(needed by \"G\"); declare the slot TETHER_FACTORY(\"H\") to build it with arguments from the factory, or resolve it at the top "
            + "level with tether_resolve_args")
        try expectSamePaths(root: "G", expectPlan: true, expected: takesArguments, arguments: one) { fx in
            try fx.register("G", [.argument(.i64), dep("H")])
            try fx.register("H", [.argument(.i64)])
        }
    }

    @Test func failureMidPlanDestroysWhatItMadeAndReportsTheSamePath() throws {
        // C fails after D and B: both let go of, last made first; nothing served.
        let expected = Trace(log: Array(repeating: ["make D", "make B", "drop B", "drop D"], count: 3).flatMap { $0 }, slots: [],
                             error: "factoryFailed: factory for \"C\" returned NULL: no C (while resolving \"A\" -> \"C\")")
        try expectSamePaths(root: "A", expectPlan: true, expected: expected) { fx in
            try fx.register("A", [dep("B"), dep("C")])
            try fx.register("B", [dep("D")])
            try fx.register("C", [dep("D")]) { _ in throw CallbackFailure(reason: "no C") }
            try fx.register("D")
        }
        let (trace, fx) = try trace(root: "A") { fx in
            try fx.register("A", [dep("B"), dep("C")])
            try fx.register("B", [dep("D")])
            try fx.register("C", [dep("D")]) { _ in throw CallbackFailure(reason: "no C") }
            try fx.register("D")
        }
        #expect(trace.error?.contains("factory for \"C\" returned NULL: no C (while resolving \"A\" -> \"C\")") == true)
        #expect(fx.tracker.made("D") == 3 && fx.tracker.dropped("D") == 3 && fx.tracker.dropped("B") == 3)
        #expect(fx.tracker.liveCount == 0)
    }

    /// Every mode of the one step loop (`Plan.execute`) fails through one path: a factory
    /// failing mid-plan over a cached singleton lets go of what the run made, dependents first,
    /// as the build does: from a block (the singleton held by split references, the records
    /// made instances first) and from a replay into the graph (a step with completion callbacks).
    @Test(arguments: [false, true]) func failureMidPlanOverASingletonIsTheBuildsInEveryMode(completes: Bool) throws {
        let setUp: (Fixture) throws -> Void = { fx in
            try fx.register("A", [dep("B"), dep("C")])
            let b = try fx.register("B", [dep("D"), dep("S")])
            try fx.register("C", [dep("D"), dep("S")]) { _ in throw CallbackFailure(reason: "no C") }
            try fx.register("D", [dep("S")])
            try fx.register("S", scope: .singleton)
            if completes { fx.onComplete(b) { _, _, _ in } }
            _ = try fx.resolve("S")  // cached, so the plan runs (else it declines)
        }
        let expected = Trace(log: ["make S", "make D", "make B", "drop B", "drop D", "make D", "make B", "drop B",
                                   "drop D", "make D", "make B", "drop B", "drop D"],
                             slots: [],
                             error: "factoryFailed: factory for \"C\" returned NULL: no C (while resolving \"A\" -> \"C\")")
        try expectSamePaths(root: "A", expectPlan: true, expected: expected, setUp)
        let (trace, fx) = try trace(root: "A", setUp)
        #expect(trace.error?.contains("factory for \"C\" returned NULL: no C (while resolving \"A\" -> \"C\")") == true)
        #expect(trace.log.filter { $0.hasPrefix("drop") } == Array(repeating: ["drop B", "drop D"], count: 3).flatMap { $0 })
        #expect(fx.tracker.made("S") == 1 && fx.tracker.dropped("S") == 0, "the singleton stays cached")
        #expect(fx.tracker.made("D") == 3 && fx.tracker.dropped("D") == 3 && fx.tracker.liveCount == 1)
    }

    /// A shared step's path is through its first asker, as `Graph`'s frames are,
    /// not through a sibling that names it later and finishes first.
    @Test func failurePathGoesThroughTheFirstAsker() throws {
        let setUp: (Fixture) throws -> Void = { fx in
            try fx.register("P", [dep("X"), dep("Q")])
            try fx.register("Q", [dep("X")])
            try fx.register("X", [dep("F")])
            try fx.register("F") { _ in throw CallbackFailure(reason: "no F") }
        }
        let expected = Trace(log: [], slots: [], error: "factoryFailed: factory for \"F\" returned NULL: no F (while resolving \"P\" -> \"X\" -> \"F\")")
        try expectSamePaths(root: "P", expectPlan: true, expected: expected, setUp)
        let (trace, _) = try trace(root: "P", setUp)
        #expect(trace.error?.contains("(while resolving \"P\" -> \"X\" -> \"F\")") == true, "\(trace.error ?? "")")
    }

    @Test func uncachedSingletonMakesThePlanDeclineUntilItIsCached() throws {
        let fx = try Fixture()
        try fx.register("A", [dep("S"), dep("B")], scope: .transient)
        try fx.register("B", scope: .transient)
        try fx.register("S", scope: .singleton)
        let a = try fx.container.registration(for: Key("A"))!
        var first: Instance? = try fx.resolve("A")
        #expect(fx.tracker.made("S") == 1 && fx.tracker.calls("B") == 1, "declined before any factory: B made once")
        #expect(a.hasCurrentPlan)
        for _ in 0..<3 { _ = try fx.resolve("A") }
        #expect(fx.tracker.made("S") == 1 && fx.tracker.made("A") == 4)
        fx.container.reset(.singleton)
        first = nil
        let again = try fx.resolve("A")
        #expect(fx.tracker.made("S") == 2, "after a reset the graph makes it again, once")
        #expect(Obj.of(again).dep(0).label == "S")
        _ = first
    }

    @Test func everyConfigurationChangeRetiresThePlan() throws {
        let fx = try Fixture()
        try fx.register("A", [dep("B")], scope: .transient)
        try fx.register("B", scope: .transient, label: "B1")
        let a = try fx.container.registration(for: Key("A"))!
        #expect(try firstDepLabel(fx) == "B1")
        #expect(a.hasCurrentPlan)

        try fx.register("B", scope: .transient, label: "B2")  // replaced
        #expect(!a.hasCurrentPlan)
        #expect(try firstDepLabel(fx) == "B2")

        let b = try fx.container.registration(for: Key("B"))!
        try b.setScope(.singleton)  // B becomes a cached leaf
        let x = try fx.resolve("A"), y = try fx.resolve("A")
        #expect(Obj.of(x).depPointer(0) == Obj.of(y).depPointer(0) && fx.tracker.made("B2") == 2)

        try b.setScope(.transient)
        fx.onComplete(b)  // a new plan runs it (a cached singleton's callbacks ran when it was made)
        #expect(!a.hasCurrentPlan)
        _ = try fx.resolve("A")
        #expect(a.hasCurrentPlan)
        #expect(fx.tracker.events("complete ") == ["complete B"])
    }

    @Test func aNewDestructorAndContextRetireThePlan() throws {
        // Plans hold the specs they were recorded with: a node made after
        // setContext must get the new destructor and context, in a block or not.
        let fx = try Fixture()
        try fx.register("A", [dep("B")], scope: .transient)
        let b = try fx.register("B", [.context], scope: .transient)
        let a = try fx.container.registration(for: Key("A"))!
        _ = try fx.resolve("A")
        #expect(a.hasCurrentPlan && fx.tracker.dropped("B") == 1)
        let dropped = Box<[UInt64]>([])
        b.setContext(UnsafeMutableRawPointer(bitPattern: 0x77)) { p, context in
            dropped.value.append(UInt64(UInt(bitPattern: context)))
            Ref<Obj>(opaque: p).release()
        }
        #expect(!a.hasCurrentPlan)
        let instance = try fx.resolve("A")
        #expect(Obj.of(instance).dep(0).words == [0x77], "the factory got the new context")
        _ = consume instance
        #expect(dropped.value == [0x77], "the new destructor ran, with the new context")
        #expect(fx.tracker.dropped("B") == 1, "not the old one")
    }

    @Test func parentChangesRetireAChildsPlansAndChildrenOverride() throws {
        let fx = try Fixture()
        let child = try fx.child()
        try fx.register("A", [dep("B")], scope: .transient, in: child)
        try fx.register("B", scope: .transient, label: "parent B")
        let a = try child.registration(for: Key("A"))!
        #expect(try firstDepLabel(fx, in: child) == "parent B")
        #expect(a.hasCurrentPlan)
        try fx.register("B", scope: .transient, label: "new parent B")
        #expect(!a.hasCurrentPlan, "a parent's registration changes what the child builds")
        #expect(try firstDepLabel(fx, in: child) == "new parent B")
        try fx.register("B", scope: .transient, in: child, label: "child B")
        #expect(try firstDepLabel(fx, in: child) == "child B")
    }

    @Test func resolvingAnInheritedKeyFromAChildUsesTheChildsRegistrations() throws {
        // The plan belongs to resolves from the registration's own container (and from
        // empty children): from a child with registrations, its override must win.
        let fx = try Fixture()
        let child = try fx.child()
        try fx.register("A", [dep("B")], scope: .transient)
        try fx.register("B", scope: .transient, label: "parent B")
        try fx.register("B", scope: .transient, in: child, label: "child B")
        #expect(try firstDepLabel(fx) == "parent B")
        #expect(try firstDepLabel(fx, in: child) == "child B")
        #expect(try firstDepLabel(fx) == "parent B")
    }

    @Test func emptyChildrenResolveWithTheirAncestorsPlan() throws {
        // A child with nothing registered (one per request, say), and its empty children,
        // build what the parent builds: the parent's plan serves them. The first
        // registration in the chain below the parent ends that, at once.
        let fx = try Fixture()
        try fx.register("A", [dep("B")], scope: .transient)
        try fx.register("B", scope: .transient, label: "parent B")
        let a = try fx.container.registration(for: Key("A"))!
        let child = try fx.child()
        let grandchild = try fx.child(of: child)
        #expect(!a.hasCurrentPlan)
        #expect(try firstDepLabel(fx, in: grandchild) == "parent B")
        #expect(a.hasCurrentPlan, "recorded by a resolve from the grandchild, for the parent")
        #expect(try firstDepLabel(fx, in: child) == "parent B" && a.hasCurrentPlan)
        #expect(fx.tracker.made("A") == 2 && fx.tracker.made("parent B") == 2)
        try fx.register("C", scope: .transient, in: child)  // any key: the child is no longer empty
        #expect(a.hasCurrentPlan, "the parent's configuration is unchanged")
        try fx.register("B", scope: .transient, in: child, label: "child B")
        #expect(try firstDepLabel(fx, in: grandchild) == "child B")
        #expect(try firstDepLabel(fx, in: child) == "child B")
        #expect(try firstDepLabel(fx) == "parent B")
        #expect(fx.tracker.liveCount == 0 && fx.tracker.badDrops == 0)
    }

    @Test func childrenWithRegistrationsOfOneShapeShareOnePlan() throws {
        // A child per request registering B: the parent's A(B, C) is planned once
        // through the first child's registration and replayed for every later
        // child, with that child's factory; a child whose B has other params, or
        // that also overrides C, gets a plan of its own, never the first one.
        let fx = try Fixture()
        try fx.register("A", [dep("B"), dep("C")], scope: .transient)
        try fx.register("C", scope: .transient, label: "parent C")
        let a = try fx.container.registration(for: Key("A"))!
        func secondDepLabel(_ child: Container) throws -> String {
            let instance = try fx.resolve("A", in: child)
            return withExtendedLifetime(instance) { Obj.of(instance).dep(1).label }
        }
        for round in 0..<5 {
            let child = try fx.child()
            try fx.register("B", scope: .transient, in: child, label: "child B\(round)")
            #expect(try firstDepLabel(fx, in: child) == "child B\(round)")
            #expect(try firstDepLabel(fx, in: child) == "child B\(round)")
        }
        #expect(a.childPlanCount == 1)
        let withDep = try fx.child()
        try fx.register("B", [dep("C")], scope: .transient, in: withDep, label: "B with a dep")
        #expect(try firstDepLabel(fx, in: withDep) == "B with a dep")
        let overriding = try fx.child()
        try fx.register("B", scope: .transient, in: overriding, label: "B beside a C")
        try fx.register("C", scope: .transient, in: overriding, label: "child C")
        #expect(try secondDepLabel(overriding) == "child C")
        #expect(a.childPlanCount == 3)
        let again = try fx.child()
        try fx.register("B", scope: .transient, in: again, label: "B again")
        #expect(try firstDepLabel(fx, in: again) == "B again" && a.childPlanCount == 3, "the first plan serves it")
        #expect(fx.tracker.made("child B0") == 2 && fx.tracker.made("parent C") == 13)
        #expect(fx.tracker.liveCount == 0 && fx.tracker.badDrops == 0)
    }

    @Test func childrenWhoseRegistrationsTheGraphDoesNotReachShareOnePlan() throws {
        // A child per request registering a key A's graph never asks for: one plan of that
        // component serves every such child (no ordinary build after the first), with the
        // parent's registrations; a child that also registers B gets its own B, never the parent's.
        let fx = try Fixture()
        try fx.register("A", [dep("B")], scope: .transient)
        try fx.register("B", scope: .transient, label: "parent B")
        let a = try fx.container.registration(for: Key("A"))!
        for round in 0..<20 {
            let child = try fx.child()
            try fx.register("Unrelated", scope: .transient, in: child, label: "unrelated \(round)")
            if round % 4 == 3 { try fx.register("B", scope: .transient, in: child, label: "child B\(round)") }
            #expect(try firstDepLabel(fx, in: child) == (round % 4 == 3 ? "child B\(round)" : "parent B"))
        }
        #expect(a.childPlanCount == 2, "one plan per component")
        #expect(fx.tracker.made("parent B") == 15 && fx.tracker.made("A") == 20)
        #expect(fx.tracker.made("unrelated 0") == 0)
        #expect(fx.tracker.liveCount == 0 && fx.tracker.badDrops == 0)
    }

    @Test func aKeyWhoseGraphKeepsChangingStopsRecordingPlans() throws {
        // Replaced plans are kept for readers that may still replay them, so their
        // number is bounded: after 16, that key resolves the ordinary way, correctly.
        let fx = try Fixture()
        try fx.register("A", [dep("B")], scope: .transient)
        let a = try fx.container.registration(for: Key("A"))!
        for round in 0..<20 {
            try fx.register("B", scope: .transient, label: "B\(round)")
            #expect(try firstDepLabel(fx) == "B\(round)")
            #expect(a.hasCurrentPlan == (round < 16), "round \(round)")
        }
        #expect(fx.tracker.liveCount == 0 && fx.tracker.badDrops == 0)
    }

    @Test func replaysRacingReRegistrationsAndResetsBuildWholeGraphs() throws {
        // Threads resolve A(B(S), C) while others re-register C, reset the singleton
        // S and toggle plans: plans are retired and recorded under the readers' feet;
        // every graph must be whole and every instance destroyed once.
        let fx = try Fixture()
        try fx.register("A", [dep("B"), dep("C")], scope: .transient)
        try fx.register("B", [dep("S")], scope: .transient)
        try fx.register("S", scope: .singleton)
        try fx.register("C", scope: .transient, label: "C0")
        let errors = Box<[String]>([])
        onThreads(4) { i in
            for n in 0..<300 {
                switch i {
                case 0:
                    do { try fx.register("C", scope: .transient, label: "C\(n % 2)") } catch { errors.value.append("\(error)") }
                case 1:
                    if n % 3 == 0 { fx.container.reset(.singleton) }
                default:
                    do {
                        let a = try fx.resolve("A")
                        let o = Obj.of(a)
                        if o.dep(0).label != "B" || o.dep(0).dep(0).label != "S" || !o.dep(1).label.hasPrefix("C") {
                            errors.value.append("wrong graph")
                        }
                        withExtendedLifetime(a) {}
                    } catch {
                        errors.value.append("\(error)")
                    }
                }
            }
        }
        #expect(errors.value.isEmpty, "\(errors.value.prefix(3))")
        try fx.container.close()
        #expect(fx.tracker.made("A") == 600 && fx.tracker.dropped("A") == 600)
        #expect(fx.tracker.liveCount == 0 && fx.tracker.badDrops == 0)
    }

    @Test func factoriesMayResolveWhileAPlanReplays() throws {
        let fx = try Fixture()
        let container = fx.container
        try fx.register("A", [dep("B")], scope: .transient)
        try fx.register("B", scope: .transient) { obj in
            obj.got.append(try container.resolve(Key("C")).pointer)
        }
        try fx.register("C", scope: .singleton)
        for _ in 0..<3 { _ = try fx.resolve("A") }
        #expect(fx.tracker.made("C") == 1 && fx.tracker.made("B") == 3 && fx.tracker.dropped("B") == 3)
    }

    // MARK: completion callbacks

    @Test func cycleClosedByACompletionIsReplayedAsBuilt() throws {
        let once = ["make Child", "make Parent", "complete Child", "drop Parent", "drop Child"]
        let expected = Trace(log: Array(repeating: once, count: 3).flatMap { $0 }, slots: Array(repeating: "Parent(Child(~Parent))", count: 3), error: nil)
        try expectSamePaths(root: "Parent", expectPlan: true, expected: expected) { fx in
            try fx.register("Parent", [dep("Child")])
            let child = try fx.register("Child")
            fx.onComplete(child) { r, _, obj in obj.weaks.append(try r.getWeak(Key("Parent"))) }
        }
        let fx = try Fixture()
        try fx.register("Parent", [dep("Child")])
        let child = try fx.register("Child")
        fx.onComplete(child) { r, _, obj in obj.weaks.append(try r.getWeak(Key("Parent"))) }
        for _ in 0..<3 {
            let parent = try fx.resolve("Parent")
            #expect(Obj.of(parent).dep(0).weaks.last?.upgrade() === parent, "the back-edge is this resolve's parent")
        }
        #expect(fx.container.registration(for: Key("Parent"))!.hasCurrentPlan)
        #expect(fx.tracker.calls("Parent") == 3 && fx.tracker.calls("Child") == 3)
        #expect(fx.tracker.liveCount == 0 && fx.tracker.badDrops == 0)
    }

    @Test func callbacksResolvingThroughTheirResolverSeeTheReplayedGraph() throws {
        // Strong and weak gets of replayed instances (graph-scoped, transient, a
        // cached singleton), of new ones whose callbacks are appended, and a
        // completion whose callback itself resolves again.
        let expected = Trace(log: ["make S", "make C", "make B", "make T", "make A", "complete C", "complete B",
                                   "make E", "complete T", "make U", "complete A", "complete E", "drop A", "drop T",
                                   "drop U", "drop B", "drop E", "drop C", "make C", "make B", "make T", "make A",
                                   "complete C", "complete B", "make E", "complete T", "make U", "complete A",
                                   "complete E", "drop A", "drop T", "drop U", "drop B", "drop E", "drop C", "make C",
                                   "make B", "make T", "make A", "complete C", "complete B", "make E", "complete T",
                                   "make U", "complete A", "complete E", "drop A", "drop T", "drop U", "drop B",
                                   "drop E", "drop C"],
                             slots: ["A(B(C(~B),+E,+S,~A),C(~B),S,T(+U,~C),~E)",
                                     "A(B(C(~B),+E,+S,~A),C(~B),S,T(+U,~C),~E)",
                                     "A(B(C(~B),+E,+S,~A),C(~B),S,T(+U,~C),~E)"],
                             error: nil)
        try expectSamePaths(root: "A", expectPlan: true, expected: expected) { fx in
            let a = try fx.register("A", [dep("B"), dep("C"), dep("S"), dep("T")])
            let b = try fx.register("B", [dep("C")])
            let c = try fx.register("C")
            try fx.register("S", scope: .singleton)
            let t = try fx.register("T", scope: .transient)
            try fx.register("U", scope: .transient)
            let e = try fx.register("E", [dep("C")])
            fx.onComplete(a) { r, _, obj in obj.weaks.append(try r.getWeak(Key("E"))) }
            fx.onComplete(b) { r, _, obj in
                obj.got.append(try r.get(Key("E")).pointer)
                obj.got.append(try r.get(Key("S")).pointer)
                obj.weaks.append(try r.getWeak(Key("A")))
            }
            fx.onComplete(c) { r, _, obj in obj.weaks.append(try r.getWeak(Key("B"))) }
            fx.onComplete(t) { r, _, obj in
                obj.got.append(try r.get(Key("U")).pointer)
                obj.weaks.append(try r.getWeak(Key("C")))
            }
            fx.onComplete(e) { r, _, obj in obj.weaks.append(try r.getWeak(Key("A"))) }
            _ = try fx.resolve("S")  // cached, so the plan replays
        }
    }

    @Test func callbacksMayResolveFromTheContainerDuringAReplay() throws {
        let expected = Trace(log: ["make B", "make A", "complete B", "make C", "make X", "complete C", "complete X",
                                   "drop X", "drop C", "drop A", "drop B", "make B", "make A", "complete B", "make C",
                                   "make X", "complete C", "complete X", "drop X", "drop C", "drop A", "drop B",
                                   "make B", "make A", "complete B", "make C", "make X", "complete C", "complete X",
                                   "drop X", "drop C", "drop A", "drop B"],
                             slots: ["A(B)", "A(B)", "A(B)"],
                             error: nil)
        try expectSamePaths(root: "A", expectPlan: true, expected: expected) { fx in
            let container = fx.container
            try fx.register("A", [dep("B")])
            let b = try fx.register("B")
            let c = try fx.register("C")
            let x = try fx.register("X", [dep("C")])  // replayed in a graph of its own
            fx.onComplete(b) { _, _, _ in _ = try container.resolve(Key("X")) }  // made, completed, dropped
            fx.onComplete(c)
            fx.onComplete(x) { r, _, obj in obj.weaks.append(try r.getWeak(Key("C"))) }
        }
    }

    @Test func failingCompletionDestroysEverythingOnceAndCachesNothing() throws {
        let setUp: (Fixture) throws -> Void = { fx in
            try fx.register("A", [dep("B"), dep("C")])
            let b = try fx.register("B")
            let c = try fx.register("C", [dep("B")])
            try fx.register("S", scope: .singleton)
            fx.onComplete(b) { r, _, obj in obj.got.append(try r.get(Key("S")).pointer) }  // made by this graph
            fx.onComplete(c) { _, _, _ in throw CallbackFailure(reason: "no C") }
        }
        // B's callback makes S; C's fails: all let go of, dependents first (S after B, whose callback took it).
        let once = ["make B", "make C", "make A", "complete B", "make S", "complete C", "drop A", "drop C", "drop B", "drop S"]
        let expected = Trace(log: Array(repeating: once, count: 3).flatMap { $0 }, slots: [], error: "factoryFailed: completion callback #1 of \"C\" failed: no C")
        try expectSamePaths(root: "A", expectPlan: true, expected: expected, setUp)
        let (trace, fx) = try trace(root: "A", setUp)
        #expect(trace.error?.contains("completion callback #1 of \"C\" failed: no C") == true)
        #expect(trace.slots.isEmpty)
        for key in ["A", "B", "C", "S"] {
            #expect(fx.tracker.made(key) == 3 && fx.tracker.dropped(key) == 3, "\(key)")
        }
        #expect(fx.tracker.liveCount == 0)
    }

    @Test func completionsOfSharedDependenciesRunOnceWhenTheyAreMade() throws {
        // A cached singleton is a leaf of the plan, its callback long done; a
        // graph-scoped diamond dependency is completed once per resolve. S's weak D is the first graph's, gone after it.
        let next = ["make D", "make B", "make C", "make A", "complete D", "drop A", "drop C", "drop B", "drop D"]
        let expected = Trace(log: ["make S", "make D", "make B", "make C", "make A", "complete S", "complete D", "drop A", "drop C", "drop B", "drop D"]
                             + next + next,
                             slots: ["A(S(~D),B(D(+S),S(~D)),C(D(+S)))"] + Array(repeating: "A(S(~gone),B(D(+S),S(~gone)),C(D(+S)))", count: 2), error: nil)
        try expectSamePaths(root: "A", expectPlan: true, expected: expected) { fx in
            try fx.register("A", [dep("S"), dep("B"), dep("C")])
            try fx.register("B", [dep("D"), dep("S")])
            try fx.register("C", [dep("D")])
            let d = try fx.register("D")
            let s = try fx.register("S", scope: .singleton)
            fx.onComplete(d) { r, _, obj in obj.got.append(try r.get(Key("S")).pointer) }
            fx.onComplete(s) { r, _, obj in obj.weaks.append(try r.getWeak(Key("D"))) }  // its own graph's D
        }
        let fx = try Fixture()
        try fx.register("A", [dep("S")], scope: .transient)
        let s = try fx.register("S", scope: .singleton)
        fx.onComplete(s)
        for _ in 0..<3 { _ = try fx.resolve("A") }
        #expect(fx.tracker.events("complete ") == ["complete S"] && fx.tracker.made("S") == 1)
        #expect(fx.container.registration(for: Key("A"))!.hasCurrentPlan)
    }

    @Test func completionChangesRetireThePlan() throws {
        let fx = try Fixture()
        try fx.register("A", [dep("B")], scope: .transient)
        let b = try fx.register("B", scope: .transient)
        let a = try fx.container.registration(for: Key("A"))!
        _ = try fx.resolve("A")
        fx.onComplete(b, event: "B#1")
        #expect(!a.hasCurrentPlan, "a new callback changes what the plan must do")
        _ = try fx.resolve("A")
        fx.onComplete(b, event: "B#2")
        _ = try fx.resolve("A")
        #expect(a.hasCurrentPlan)
        #expect(fx.tracker.events("B#") == ["B#1", "B#1", "B#2"])

        try b.setScope(.singleton)  // now a cached leaf: completed when made, not per resolve
        #expect(!a.hasCurrentPlan)
        for _ in 0..<2 { _ = try fx.resolve("A") }
        #expect(fx.tracker.events("B#") == ["B#1", "B#1", "B#2", "B#1", "B#2"])

        try fx.register("B", scope: .transient, label: "plain B")  // replaced, without callbacks
        #expect(!a.hasCurrentPlan)
        #expect(try firstDepLabel(fx) == "plain B")
        #expect(a.hasCurrentPlan && fx.tracker.events("B#").count == 5)
    }

    @Test func callbackOfAChildsOverrideRunsWhenResolvedFromTheChild() throws {
        let fx = try Fixture()
        let child = try fx.child()
        try fx.register("A", [dep("B")])
        let parentB = try fx.register("B", label: "parent B")
        let childB = try fx.register("B", in: child, label: "child B")
        fx.onComplete(parentB, event: "complete parent B") { r, _, obj in obj.weaks.append(try r.getWeak(Key("A"))) }
        fx.onComplete(childB, event: "complete child B") { r, _, obj in obj.weaks.append(try r.getWeak(Key("A"))) }
        for container in [fx.container, child, fx.container] {
            let a = try fx.resolve("A", in: container)
            #expect(Obj.of(a).dep(0).weaks.last?.upgrade() === a)
        }
        #expect(fx.tracker.events("complete ") == ["complete parent B", "complete child B", "complete parent B"])
    }
}
