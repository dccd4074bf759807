// Each `Plan.Decline` a resolve can still count (`PlanStats`), reached by the smallest shape that reaches it:
// the table of docs/ARCHITECTURE.md ("The direction") names these tests. A shape planned since branch
// declinesweep asserts the plan's path and the build's behaviour (the factory calls, instances and destructors
// the build gives, which `bothPaths` compared with plans on and off until branch noplansoff). Threads are
// interleaved by hooks and gates, never by sleeps.
import Testing
@testable import TetherCore

@Suite(.serialized) struct DeclineReasonTests {
    // MARK: reasons still counted (the build serves them)

    /// More than four container-scoped steps (`containerSteps` before branch declinesweep, the build): a plan,
    /// each container step made once per child, in the build's order, published there and let go of at its close.
    @Test func fiveContainerStepsAreAPlan() throws {
        let run = try planned { fx -> [String] in
            try fx.register("H", (1...5).map { dep("C\($0)") } + [dep("S")], scope: .transient)
            for i in 1...5 { try fx.register("C\(i)", [dep("G")], scope: .container) }
            try fx.register("G")
            try fx.register("S", scope: .singleton)
            var seen: [String] = []
            for _ in 0..<2 {
                let child = try fx.child()
                for _ in 0..<2 { seen.append(Obj.of(try fx.resolve("H", in: child)).tree()) }
                _ = try child.close()
            }
            seen.append("C5 made \(fx.tracker.made("C5")) dropped \(fx.tracker.dropped("C5"))")
            return seen
        }
        #expect(run.counts == ["resolves": 4], "\(run.counts)")
        #expect(run.seen.last == "C5 made 2 dropped 2")
    }

    /// A child with more own registrations than `RegistrationTable.smallKeys` (4): `childTable` before branch
    /// stacked; a plan now, its component the table's slots in the order first registered (`componentSlots`,
    /// the levels' entries mirrored there). Ten keys (the slots' block grown twice), a local container step made
    /// once per child, a local singleton per child; a child of the same keys in another order is another
    /// component, its own factories run.
    @Test func aChildOfFiveOwnRegistrationsIsAPlan() throws {
        let run = try planned { fx -> [String] in
            try fx.register("H", [dep("O1"), dep("O3"), dep("O5"), dep("O10"), dep("S")], scope: .transient)
            try fx.register("S", scope: .singleton)
            var seen: [String] = []
            for (name, order) in [("a", Array(1...10)), ("b", Array(1...10)), ("c", Array((1...10).reversed()))] {
                let child = try fx.child()
                for i in order {
                    try fx.register("O\(i)", i == 10 ? [dep("O1")] : [], scope: i == 3 ? .container : i == 5 ? .singleton : .graph,
                                    in: child, label: "O\(i)@\(name)")
                }
                for _ in 0..<2 {
                    let h = try fx.resolve("H", in: child)
                    withExtendedLifetime(h) { seen.append(Obj.of(h).tree()) }
                }
                _ = try child.close()
                seen.append("\(name): O3 made \(fx.tracker.made("O3@\(name)")) dropped \(fx.tracker.dropped("O3@\(name)")), O5 made \(fx.tracker.made("O5@\(name)"))")
            }
            return seen
        }
        #expect(run.counts == ["resolves": 6], "\(run.counts)")
        #expect(run.seen == ["a", "b", "c"].flatMap { c in
            Array(repeating: "H(O1@\(c),O3@\(c),O5@\(c),O10@\(c)(O1@\(c)),S)", count: 2) + ["\(c): O3 made 1 dropped 1, O5 made 1"]
        }, "\(run.seen)")
    }

    /// A child of 70 or 130 own registrations, a component past `Plan.maxSteps` slots: `childTable` before branch
    /// childtable; a plan now, the run's `locals` grown to the component (`PlanProgress.reserveLocals`, `fits`). H
    /// takes five (the first, a container-scoped one, a singleton, the last over the first and the one before it);
    /// All takes every one (a plan past 64 steps too: `isLarge`). Two children of one component, two resolves each.
    @Test(arguments: [70, 130]) func aChildOfMoreThan64OwnRegistrationsIsAPlan(count: Int) throws {
        let last = count - 1
        let run = try planned { fx -> [String] in
            try fx.register("H", [dep("O0"), dep("O3"), dep("O5"), dep("O\(last)"), dep("S")], scope: .transient)
            try fx.register("All", (0..<count).map { dep("O\($0)") }, scope: .transient)
            try fx.register("S", scope: .singleton)
            var seen: [String] = []
            for name in ["a", "b"] {
                let child = try fx.child()
                for i in 0..<count {
                    try fx.register("O\(i)", i == last ? [dep("O0"), dep("O\(last - 1)")] : [],
                                    scope: i == 3 ? .container : i == 5 ? .singleton : .graph, in: child, label: "O\(i)@\(name)")
                }
                for _ in 0..<2 {
                    let h = try fx.resolve("H", in: child)
                    withExtendedLifetime(h) {
                        let o = Obj.of(h)
                        seen.append(o.tree() + (o.depPointer(0) == o.dep(3).depPointer(0) ? " one O0" : " two O0"))
                    }
                    let all = try fx.resolve("All", in: child)
                    withExtendedLifetime(all) {
                        let o = Obj.of(all)
                        seen.append("All \(o.words.count) \(o.dep(0).label) \(o.dep(3).label) \(o.dep(last).tree())"
                                    + (o.depPointer(0) == o.dep(last).depPointer(0) ? " one O0" : " two O0"))
                    }
                }
                _ = try child.close()
                seen.append("\(name): O3 made \(fx.tracker.made("O3@\(name)")) dropped \(fx.tracker.dropped("O3@\(name)")), "
                            + "O5 made \(fx.tracker.made("O5@\(name)")), O\(last) made \(fx.tracker.made("O\(last)@\(name)"))")
            }
            return seen
        }
        #expect(run.counts == ["resolves": 8], "\(run.counts)")
        #expect(run.seen == ["a", "b"].flatMap { c in
            Array(repeating: ["H(O0@\(c),O3@\(c),O5@\(c),O\(last)@\(c)(O0@\(c),O\(last - 1)@\(c)),S) one O0",
                              "All \(count) O0@\(c) O3@\(c) O\(last)@\(c)(O0@\(c),O\(last - 1)@\(c)) one O0"], count: 2).flatMap { $0 }
                + ["\(c): O3 made 1 dropped 1, O5 made 1, O\(last) made 4"]
        }, "\(run.seen)")
    }

    /// A resolve from a child of 70 own registrations nested in a completion callback of a resolve from a small
    /// child: the nested one grows its progress' `locals` (`PlanProgress.reserveLocals`; the thread's when nothing is
    /// under construction, as in a completion callback) while the outer resolve's graph is under way; the outer
    /// one's bindings stay where it took them (the outgrown buffer is kept), its next resolve binds again. Each
    /// resolve a plan, as the build.
    @Test func aLargeChildsResolveNestedInACallbackGrowsLocalsUnderAnOuterRun() throws {
        let run = try planned { fx -> [String] in
            let big = try fx.child()
            for i in 0..<70 { try fx.register("O\(i)", i == 69 ? [dep("O0")] : [], in: big, label: "O\(i)@big") }
            try fx.register("Big", [dep("O0"), dep("O69")], scope: .transient)
            let h = try fx.register("H", [dep("C"), dep("D")], scope: .transient)
            fx.onComplete(h) { _, _, _ in
                let b = try fx.resolve("Big", in: big)
                withExtendedLifetime(b) { fx.tracker.note("nested " + Obj.of(b).tree()) }
            }
            let small = try fx.child()
            try fx.register("C", [dep("D")], in: small, label: "C@small")
            try fx.register("D", in: small, label: "D@small")
            var seen: [String] = []
            for _ in 0..<3 {
                let instance = try fx.resolve("H", in: small)
                withExtendedLifetime(instance) {
                    let o = Obj.of(instance)
                    seen.append(o.tree() + (o.depPointer(1) == o.dep(0).depPointer(0) ? " one D" : " two D"))
                }
            }
            _ = try small.close()
            _ = try big.close()
            return seen + fx.tracker.events("nested")
        }
        #expect(run.counts == ["resolves": 6], "\(run.counts)")
        #expect(run.seen == Array(repeating: "H(C@small(D@small),D@small) one D", count: 3)
                    + Array(repeating: "nested Big(O0@big,O69@big(O0@big))", count: 3), "\(run.seen)")
    }

    /// A child's slot cleared: a key it decorated registered again there (the undecorated registration leaves the
    /// table, its slot stays: `Container.takeDecorations`). `childTable` before branch childtable; a plan now, the
    /// slot cleared in the component's shape (`ComponentSlot.cleared`), its key looked up further out, as never
    /// registered there: the root decorated G too, so the child's "G (before decorator 1)" is the root's once
    /// cleared (Inner takes it). Two children of that component; then the second decorates G again between
    /// resolves (the slot filled again: another component, whose plan runs the new decorator).
    @Test func aChildsClearedSlotIsAPlan() throws {
        let run = try planned { fx -> [String] in
            try fx.register("G", label: "G@root")
            try fx.decorate("G", label: "D@root")
            try fx.register("H", [dep("G"), dep("X")], scope: .transient)
            try fx.register("Inner", [dep("G (before decorator 1)")], scope: .transient)
            var seen: [String] = []
            func resolve(_ key: String, _ child: Container) throws {
                let h = try fx.resolve(key, in: child)
                withExtendedLifetime(h) { seen.append(Obj.of(h).tree()) }
            }
            for name in ["a", "b"] {
                let child = try fx.child()
                try fx.register("G", [dep("X")], in: child, label: "G@\(name)")
                try fx.decorate("G", in: child, label: "D@\(name)")
                try fx.register("X", in: child, label: "X@\(name)")
                try fx.register("G", [dep("X")], in: child, label: "G2@\(name)")
                for _ in 0..<2 {
                    try resolve("H", child)
                    try resolve("Inner", child)
                }
                if name == "b" {
                    try fx.decorate("G", in: child, label: "D2@\(name)")
                    try resolve("H", child)
                    try resolve("Inner", child)
                }
                _ = try child.close()
            }
            return seen
        }
        #expect(run.counts == ["resolves": 10], "\(run.counts)")
        #expect(run.seen == ["a", "b"].flatMap { c in Array(repeating: ["H(G2@\(c)(X@\(c)),X@\(c))", "Inner(G@root)"], count: 2).flatMap { $0 } }
                    + ["H(D2@b(G2@b(X@b)),X@b)", "Inner(G2@b(X@b))"], "\(run.seen)")
    }

    /// Decorators in a child: over a key the child registers, added between two resolves of the same child (each
    /// a new component, its plan running the child's decorator); over a parent's key, refused (a decorator wraps a
    /// registration of its own container) until the child registers that key, then decorated there too.
    @Test func decoratorsAddedInAChildBetweenResolvesRunInItsPlans() throws {
        let run = try planned { fx -> [String] in
            try fx.register("P", label: "P@root")
            try fx.register("H", [dep("P"), dep("C")], scope: .transient)
            var seen: [String] = []
            let child = try fx.child()
            func resolveH() throws {
                let h = try fx.resolve("H", in: child)
                withExtendedLifetime(h) { seen.append(Obj.of(h).tree()) }
            }
            try fx.register("C", scope: .container, in: child, label: "C@child")
            try resolveH()
            try fx.decorate("C", in: child, label: "DC")
            try resolveH()
            try resolveH()
            let refused = expectError(.notFound, "a decorator wraps a registration of its own container") {
                try fx.decorate("P", in: child, label: "DP")
            }
            seen.append(refused == nil ? "not refused" : "refused")
            try fx.register("P", [dep("C")], in: child, label: "P@child")
            try fx.decorate("P", [dep("C")], in: child, label: "DP")
            try resolveH()
            try resolveH()
            _ = try child.close()
            seen.append("C made \(fx.tracker.made("C@child")) dropped \(fx.tracker.dropped("C@child")), DC made \(fx.tracker.made("DC"))")
            return seen
        }
        #expect(run.counts == ["resolves": 5], "\(run.counts)")
        #expect(run.seen == ["H(P@root,C@child)", "H(P@root,DC(C@child))", "H(P@root,DC(C@child))", "refused",
                                "H(DP(P@child(DC(C@child)),DC(C@child)),DC(C@child))", "H(DP(P@child(DC(C@child)),DC(C@child)),DC(C@child))",
                                "C made 2 dropped 2, DC made 1"], "\(run.seen)")
    }

    /// A child's table moving to the levels between resolves (a fifth key), then a key registered again there
    /// (its slot kept, the mirrored entry replaced): each resolve runs a plan, the child's registrations now.
    @Test func aChildsTableGrowingBetweenResolvesRunsItsRegistrations() throws {
        let run = try planned { fx -> [String] in
            try fx.register("H", [dep("O1"), dep("O4")], scope: .transient)
            let child = try fx.child()
            for i in 1...4 { try fx.register("O\(i)", in: child) }
            var seen: [String] = []
            func resolveH() throws { let h = try fx.resolve("H", in: child); withExtendedLifetime(h) { seen.append(Obj.of(h).tree()) } }
            try resolveH()
            try fx.register("O5", in: child)
            try fx.register("O4", [dep("O5")], in: child, label: "O4b")
            try resolveH()
            try fx.register("O1", [dep("O2")], in: child, label: "O1b")
            try resolveH()
            _ = try child.close()
            return seen
        }
        #expect(run.counts == ["resolves": 3], "\(run.counts)")
        #expect(run.seen == ["H(O1,O4)", "H(O1,O4b(O5))", "H(O1b(O2),O4b(O5))"], "\(run.seen)")
    }

    /// A stacked level's (a registering child between the resolving child and the owner) container-scoped
    /// registration, or one with completion callbacks: `childLocal` before branch stacked. A plan now: the
    /// level's slot taken from each run's chain (`fits`), a container-scoped one made once per resolving child
    /// (its dependencies that child's), a callback resolving from the resolving child, as the build's frame.
    /// Two mids, two leaves under each, of one component.
    @Test(arguments: [false, true]) func aStackedLevelsContainerOrCallbackRegistrationIsAPlan(callback: Bool) throws {
        let run = try planned { fx -> [String] in
            try fx.register("H", [dep("M"), dep("M")], scope: .transient)
            var seen: [String] = []
            for m in ["m1", "m2"] {
                let mid = try fx.child()
                let reg = try fx.register("M", [dep("Own")], scope: callback ? .graph : .container, in: mid, label: "M@\(m)")
                if callback { fx.onComplete(reg, event: "complete M@\(m)") { resolver, _, obj in obj.got.append(try resolver.get(Key("Own")).pointer) } }
                for l in ["l1", "l2"] {
                    let leaf = try fx.child(of: mid)
                    try fx.register("Own", in: leaf, label: "Own@\(m)\(l)")
                    for _ in 0..<2 {
                        let instance = try fx.resolve("H", in: leaf)
                        withExtendedLifetime(instance) {
                            let h = Obj.of(instance)
                            seen.append(h.tree(withEdges: true) + (h.depPointer(0) == h.depPointer(1) ? " one M" : " two M"))
                        }
                    }
                    _ = try leaf.close()
                }
                _ = try mid.close()
            }
            seen.append("M made \(fx.tracker.made("M@m1")) \(fx.tracker.made("M@m2")), completions \(fx.tracker.events("complete").count)")
            return seen
        }
        #expect(run.counts == ["resolves": 8], "\(run.counts)")
        let edge = callback ? ",+Own@m2l1" : ""
        #expect(run.seen[4] == "H(M@m2(Own@m2l1\(edge)),M@m2(Own@m2l1\(edge))) one M", "\(run.seen)")
        #expect(run.seen.last == (callback ? "M made 4 4, completions 8" : "M made 2 2, completions 0"), "\(run.seen)")
    }

    /// A level's registration replaced between the component's read and the walk (`childLocal` before branch
    /// strictlevels: the walk looked the key up in the table again and found one in no slot), forced by the
    /// recorder's hook: reaching the root's S, not cached, re-registers D (same shape) in the resolving child or
    /// in a stacked mid. The walk takes the component's registrations; the plan fits the child as it is then
    /// (`fits` reads its slots again), so its run makes the new D, as the build does after the change.
    @Test(arguments: [false, true]) func aLevelsRegistrationReplacedWhileThePlanRecordsIsAPlan(stacked: Bool) throws {
        let fx = try Fixture()
        try fx.register("S", scope: .singleton)
        try fx.register("H", [dep("S"), dep("D"), dep("Req")])
        let mid = try fx.child()
        let request = try fx.child(of: mid)
        try fx.register("Own", in: mid)
        try fx.register("Req", in: request)
        let target = stacked ? mid : request
        try fx.register("D", in: target, label: "D@1")
        let replaced = Box(false)
        let counts = try withTestHook {
            Plan.Recorder.setBeforeReadingCache { r in
                guard fx.owns(r), r.key == Key("S"), !replaced.value else { return }
                replaced.value = true
                _ = try? fx.register("D", in: target, label: "D@2")
            }
            defer { Plan.Recorder.setBeforeReadingCache(nil) }
            return try counted {
                let h = try fx.resolve("H", in: request)
                #expect(Obj.of(h).tree() == "H(S,D@2,Req)")
            }
        }
        #expect(replaced.value)
        #expect(counts == ["resolves": 1], "\(counts)")
        #expect(fx.tracker.made("D@1") == 0 && fx.tracker.made("D@2") == 1 && fx.tracker.made("S") == 1)
        _ = try request.close()
        _ = try mid.close()
        _ = try fx.container.close()
        #expect(fx.tracker.dropped("D@2") == 1 && fx.tracker.dropped("S") == 1 && fx.tracker.badDrops == 0)
    }

    /// An ALL slot's item registered in a level after the component's read (`childLocal` before branch failunder2: the
    /// walk listed the tables and met an item in no slot), forced by the recorder's hook: reaching the root's S, not
    /// cached, registers `P#2` in the resolving child or in a stacked mid. The walk lists the component's levels over the
    /// owner's list (`Recorder.allRegistrations`: `P#0`, `P#1`); that plan does not fit the child any more, so the resolve
    /// records once more through the child as it is (`componentCreationPlan`), whose run lists all three, as the build
    /// reading the tables after the change.
    @Test(arguments: [false, true]) func anAllItemRegisteredInALevelWhileThePlanRecordsIsAPlan(stacked: Bool) throws {
        let fx = try Fixture()
        try fx.register("S", scope: .singleton)
        try fx.register("H", [dep("S"), .all(Key("P")), dep("Req")])
        try fx.register("P#0")
        let mid = try fx.child()
        let request = try fx.child(of: mid)
        try fx.register("Own", in: mid)
        try fx.register("Req", in: request)
        let target = stacked ? mid : request
        try fx.register("P#1", in: target)
        let added = Box(false)
        let counts = try withTestHook {
            Plan.Recorder.setBeforeReadingCache { r in
                guard fx.owns(r), r.key == Key("S"), !added.value else { return }
                added.value = true
                _ = try? fx.register("P#2", in: target)
            }
            defer { Plan.Recorder.setBeforeReadingCache(nil) }
            return try counted {
                // (Its ALL slot's word is a list, not an object: `tree` does not read it.)
                let h = try fx.resolve("H", in: request)
                withExtendedLifetime(h) { #expect(Obj.of(h).dep(0).label == "S" && Obj.of(h).dep(2).label == "Req") }
            }
        }
        #expect(added.value)
        #expect(counts == ["resolves": 1], "\(counts)")
        #expect(fx.tracker.made("P#0") == 1 && fx.tracker.made("P#1") == 1 && fx.tracker.made("P#2") == 1 && fx.tracker.made("S") == 1)
        #expect(fx.tracker.log.filter { $0.hasPrefix("make P") } == ["make P#0", "make P#1", "make P#2"], "\(fx.tracker.log)")
        _ = try request.close()
        _ = try mid.close()
        _ = try fx.container.close()
        #expect(fx.tracker.liveCount == 0 && fx.tracker.badDrops == 0)
    }

    /// A bridge that keeps replaced plans (the core on its own; the ABI's retires them): past `maxPlans` (16)
    /// configurations a registration keeps no more (`planLimit` before, the build): each resolve records a plan
    /// its run alone holds (`Registration.oneShotPlan`), let go of when the resolve ends; over a stream of
    /// configurations the registration holds at most `maxPlans`, the thread none between resolves.
    @Test func aRegistrationPastMaxPlansConfigurationsRunsOneShotPlans() throws {
        let fx = try Fixture()
        try fx.register("A", [dep("S"), dep("B")], scope: .transient)
        try fx.register("S", scope: .singleton)
        try fx.register("B", scope: .transient)
        let a = try #require(fx.container.registration(for: Key("A")))
        var mostHeld = 0, oneShotsLeft = 0, wrong = 0
        var singletons: Set<UInt> = []
        let counts = try counted {
            for i in 0..<200 {
                try fx.register("Z\(i)")  // a new configuration
                let instance = try fx.resolve("A")
                withExtendedLifetime(instance) {
                    if Obj.of(instance).dep(1).label != "B" { wrong += 1 }
                    singletons.insert(UInt(bitPattern: Obj.of(instance).depPointer(0)))
                }
                mostHeld = max(mostHeld, a.heldPlanCount)
                oneShotsLeft += ThreadState.currentReference.borrow { $0.oneShotPlans.count }
            }
        }
        #expect(counts == ["resolves": 200], "every resolve served by a plan: \(counts)")
        #expect(wrong == 0 && singletons.count == 1)
        // The first 16 configurations' warm plans and the first one's creation plan (S not cached yet).
        #expect(mostHeld == Registration.maxPlans + 1 && oneShotsLeft == 0, "held \(mostHeld), one-shots left \(oneShotsLeft)")
        #expect(fx.tracker.made("A") == 200 && fx.tracker.made("B") == 200 && fx.tracker.calls("S") == 1)
        #expect(fx.tracker.liveCount == 1 && fx.tracker.badDrops == 0, "S only")
    }

    /// A cycle of singletons in a strict container: the creation walk meets it with a singleton frame open, whose
    /// captive check (`refuseCaptive`, before `reach`) is the build's, before its cycle check (`cycle` before branch
    /// cyclecut, the build): a failing plan, the build's error, the captive refused first where the build refuses it.
    @Test(arguments: [0, 1, 2]) func aStrictContainersSingletonCycleIsAPlan(captive: Int) throws {
        // captive 0: none; 1: T's transient slot before its cycle slot (refused first); 2: after it (the cycle first).
        let run = try planned { fx -> [String] in
            fx.container.refusesCaptives = true
            try fx.register("S", [dep("T")], scope: .singleton)
            try fx.register("T", captive == 0 ? [dep("S")] : captive == 1 ? [dep("X"), dep("S")] : [dep("S"), dep("X")],
                            scope: .singleton)
            try fx.register("X", scope: .transient)
            var seen: [String] = []
            for _ in 0..<2 {
                do { _ = try fx.resolve("S"); seen.append("ok") } catch let e as TetherError { seen.append("\(e.code): \(e.message)") }
            }
            #expect(fx.container.registration(for: Key("S"))!.hasCurrentPlan)
            return seen
        }
        #expect(run.counts == ["resolves": 2], "\(run.counts)")
        let first = try #require(run.seen.first)
        if captive == 1 {
            #expect(first.hasPrefix("captiveDependency: ") && first.contains("\"T\"") && first.contains("\"X\""), "\(first)")
        } else {
            #expect(first.hasPrefix("cycle: dependency cycle through constructors: \"S\" -> \"T\" -> \"S\""), "\(first)")
        }
        #expect(run.seen[1] == first)
        #expect(run.log.isEmpty, "no factory, no destructor: \(run.log)")
    }

    /// A nested resolve whose plan fails (a key not registered) meeting what the thread constructs further out
    /// (`cycle` before branch cyclecut: the build): the run goes up to where the build asks for it (`Plan.meeting`,
    /// a cut) and reports the re-entry, the path through the frames the build has open there. Met: the failing
    /// plan's root frame (`Open`), an open frame after a step (`Mid`, under `Z`, after `Y`), or a step (`R`, under `Z2`).
    @Test(arguments: ["Open", "Z", "Z2"]) func aNestedFailingPlanMeetingAnOuterKeyRunsUpToIt(nested: String) throws {
        let run = try planned { fx -> [String] in
            let messages = Box<[String]>([])
            try fx.register("Open", [dep("Mid")], scope: .transient)
            try fx.register("Mid", [dep("R"), dep("Nowhere")], scope: .transient)
            try fx.register("R", scope: .transient) { _ in
                do { _ = try fx.resolve(nested); messages.value.append("ok") } catch let e as TetherError {
                    messages.value.append("\(e.code): \(e.message)")
                }
            }
            try fx.register("Y", scope: .transient)
            try fx.register("Z", [dep("Y"), dep("Mid")], scope: .transient)
            try fx.register("Z2", [dep("Y"), dep("R"), dep("Nowhere")], scope: .transient)
            for _ in 0..<2 {
                expectError(.notFound, "\"Nowhere\"", "\"Open\" -> \"Mid\"") { try fx.resolve("Open") }
            }
            #expect(fx.tracker.calls("R") == 2 && fx.tracker.dropped("R") == 2 && fx.tracker.calls("Open") == 0)
            #expect(fx.tracker.made("Y") == (nested == "Open" ? 0 : 2) && fx.tracker.dropped("Y") == fx.tracker.made("Y"))
            return messages.value
        }
        #expect(run.counts == ["resolves": 4], "\(run.counts)")
        let met = nested == "Open" ? "\"Open\"" : nested == "Z" ? "\"Mid\"" : "\"R\""
        let path = nested == "Open" ? "\"Open\" -> \"Mid\" -> \"R\" -> \"Open\""
            : nested == "Z" ? "\"Mid\" -> \"R\" -> \"Z\" -> \"Mid\"" : "\"R\" -> \"Z2\" -> \"R\""
        #expect(run.seen.count == 2 && run.seen[0] == run.seen[1], "\(run.seen)")
        #expect(run.seen[0].hasPrefix("cycle: ") && run.seen[0].contains(path) && run.seen[0].contains(met), "\(run.seen)")
    }

    /// The same with a failing plan of no step: K's plan from the parent (where P's dependency D is not registered)
    /// fails with P's frame open, met first (`Failing.openAt` 0), so its cut run makes nothing: the re-entry of P,
    /// as the build reports it before the missing key, P's factory resolving K from the parent while the child made P.
    @Test func aNestedFailingPlanOfNoStepMeetingAnOuterKeyRunsUpToIt() throws {
        let run = try planned { fx -> [String] in
            let messages = Box<[String]>([])
            try fx.register("P", [dep("D")], scope: .transient) { _ in
                do { _ = try fx.resolve("K"); messages.value.append("ok") } catch let e as TetherError {
                    messages.value.append("\(e.code): \(e.message)")
                }
            }
            try fx.register("K", [dep("P")], scope: .transient)
            let child = try fx.child()
            try fx.register("D", scope: .transient, in: child)
            for _ in 0..<2 { _ = try fx.resolve("P", in: child) }
            expectError(.notFound, "\"D\"", "\"K\" -> \"P\"") { try fx.resolve("K") }  // K's own failing plan
            #expect(fx.tracker.made("P") == 2 && fx.tracker.made("D") == 2 && fx.tracker.calls("K") == 0)
            _ = try child.close()
            return messages.value
        }
        #expect(run.counts == ["resolves": 5], "\(run.counts)")
        #expect(run.seen.count == 2 && run.seen[0] == run.seen[1]
                && run.seen[0].hasPrefix("cycle: ") && run.seen[0].contains("\"P\" -> \"K\" -> \"P\""), "\(run.seen)")
    }

    /// Caches in a state no creation plan kept covers once `maxPlans` (16) were recorded for the configuration (weak
    /// keys held and let go of; `notCached`, a weak root `sharedRoot`, before: the build). Keeping replaced plans,
    /// the registration keeps 16 and the run takes a one-shot plan for the state (`Registration.oneShotPlan`);
    /// retiring them, it records one for the state and holds at most `heldPlans` (the oldest retired).
    @Test(arguments: [Scope.transient, .weak], [false, true])
    func aCacheStatePastMaxPlansCreationPlansRunsAPlan(root: Scope, retiring: Bool) throws {
        let fx = try Fixture(retiring: retiring)
        let weak = (1...6).map { "W\($0)" }
        try fx.register("ManyStates", weak.map { dep($0) }, scope: root)
        for key in weak { try fx.register(key, scope: .weak) }
        let registration = try #require(fx.container.registration(for: Key("ManyStates")))
        var held: [String: Instance] = [:]
        for key in weak { held[key] = try fx.resolve(key) }
        _ = try fx.resolve("ManyStates")  // every leaf cached: the warm plan
        // Let go of `missing`'s keys (each dies: nothing else holds it), resolve A, hold them again.
        var mostHeld = 0
        func resolve(missing: [String]) throws {
            for key in missing { held[key] = nil }
            _ = try fx.resolve("ManyStates")
            for key in missing { held[key] = try fx.resolve(key) }
            mostHeld = max(mostHeld, registration.creationPlanCount)
        }
        // 16 states, each missing one or two keys: a creation plan each (`maxPlans`).
        var states = weak.map { [$0] }
        for i in 0..<weak.count { for j in (i + 1)..<weak.count { states.append([weak[i], weak[j]]) } }
        for state in states.prefix(16) { try resolve(missing: state) }
        #expect(registration.creationPlanCount == (retiring ? Registration.heldPlans : 16))
        // Three missing: no plan kept covers it (each missing at most two); then the states past the 16th.
        let counts = try counted {
            try resolve(missing: ["W1", "W2", "W3"])
            for state in states.dropFirst(16) { try resolve(missing: state) }
        }
        let resolves = 4 + (states.count - 16) * 3
        #expect(counts == ["resolves": resolves], "every resolve served by a plan: \(counts)")
        #expect(mostHeld == (retiring ? Registration.heldPlans : 16), "held at most \(mostHeld)")
        #expect(registration.heldPlanCount <= (retiring ? Registration.heldPlans + 1 : 17), "warm and creation plans kept: \(registration.heldPlanCount)")
        #expect(ThreadState.currentReference.borrow { $0.oneShotPlans.count } == 0)
        // W1: held first; in 6 of the 16 states and the three-missing one (none of the later five), made by
        // A's resolve (dying with it), then held again.
        #expect(fx.tracker.made("W1") == 1 + 2 * (6 + 1))
        held.removeAll()
        fx.bridge.releaseRetired()
        #expect(fx.tracker.badDrops == 0)
    }

    /// Caches another thread keeps changing between each creation plan's pick and its claims (hooks, no
    /// sleeps): B, weak, published before every claim and let go of before every pick; C, still made, takes
    /// D, graph-scoped, under B, so no run can take B (the build makes D where C asks). The claims that found
    /// B are kept (`Graph.keepClaims`: `creationPicks`, past `Graph.maxCreationPicks`, before): B held, E's
    /// cell held, the plan picked next is the one for that state, which its claims find unchanged: it serves
    /// the resolve, taking the B published last, making E, D and C once each.
    @Test func cachesChangingUnderEveryPickRunAPlan() throws {
        let fx = try Fixture()
        try fx.register("Repicked", [dep("B"), dep("C"), dep("E")], scope: .transient)
        try fx.register("B", [dep("D")], scope: .weak)
        try fx.register("C", [dep("D")], scope: .transient)
        try fx.register("D")
        try fx.register("E", scope: .weak)
        do {  // the warm plan, every leaf cached; then B and E let go of
            var held = [try fx.resolve("B"), try fx.resolve("E")]
            _ = try fx.resolve("Repicked")
            held.removeAll()
        }
        let holder = Box<Instance?>(nil)
        let published = Box(0)
        // (The hooks are process-wide: set while no other test's is (`withTestHook`), for this fixture's root only.)
        let root = try #require(fx.container.registration(for: Key("Repicked")))
        var repicked: Instance?
        let counts = try withTestHook {
            Registration.setAfterWarmCheck { r in if r === root { holder.value = nil } }
            Graph.setBeforeClaimingCreations { r in
                guard r === root else { return }
                onThreads(1) { _ in holder.value = try? fx.resolve("B") }
                published.value += 1
            }
            defer { Registration.setAfterWarmCheck(nil); Graph.setBeforeClaimingCreations(nil) }
            return try counted { repicked = try fx.resolve("Repicked") }
        }
        #expect(counts == ["resolves": 1], "served by the plan picked under the kept claims: \(counts)")
        // The first creation plan's claims, then the one picked under them (its hook's resolve finds B held: none made).
        #expect(published.value == 2, "one hook per creation plan run")
        #expect(fx.tracker.made("B") == 2 && fx.tracker.made("E") == 2 && fx.tracker.made("C") == 2 && fx.tracker.made("D") == 4,
                "B: the warm-up's and the publication's; E, C: the warm-up's and the run's; D: one per graph making B or C")
        let made = try #require(repicked), b = try #require(holder.value)
        #expect(Obj.of(made).depPointer(0) == b.pointer, "the run took the B published at its claims")
        #expect(Obj.of(made).dep(2).label == "E" && fx.tracker.isLive(Obj.of(made).depPointer(2)))
        #expect(Array(fx.tracker.log.suffix(4)) == ["make D", "make C", "make E", "make Repicked"], "\(fx.tracker.log)")
        repicked = nil
        holder.value = nil
        #expect(fx.tracker.badDrops == 0)
    }

    /// Some container steps cached in the child, others not, with a step a cached one asked for taken by one
    /// made (`containerHeld` before: `Plan.skipUnderCached` cannot skip to the build's order). Shape 0: Late,
    /// a container step, takes Req, which Session (cached) asked for first; shape 1: the root takes it
    /// (`containerInput`, a plan with a `cachedVariant`); shape 2: the same, Late cached and Session not (the
    /// variant, recorded with every step made, has that `cachedVariant` too). The plan recorded for that set of
    /// cached steps (`Plan.mixedVariant`) serves it: Req made where the build makes it, one Late per child.
    @Test func someContainerStepsCachedWithAStepTheyAskedForTakenByAMadeOneRunAPlan() throws {
        for shape in 0..<3 {
            let run = try planned { fx -> [String] in
                try fx.registerMixedCacheShape(shape)
                var seen = try fx.twoRootsOverOneCached(shape) { a, b, _ in
                    let late = shape == 0 ? 2 : 1
                    return ["late \(a.depPointer(late) == b.depPointer(late) && a.depPointer(0) == b.depPointer(0))"]
                }
                // The mixed set's plan recorded once (the second child's mix finds it).
                seen.append(try fx.mixedVariantsLine("Handler"))
                return seen
            }
            #expect(run.counts == ["resolves": 6], "shape \(shape): every resolve the plan's: \(run.counts)")
            #expect(run.seen.last == "variants 1")
            let log = run.log
            let from = try #require(log.firstIndex(of: "cached")), to = try #require(log.firstIndex(of: "closed"))
            let made = log[from..<to].filter { $0.hasPrefix("make ") }
            #expect(made == [["make Y", "make Req", "make Late", "make Handler", "make Y", "make Handler"],
                             ["make Late", "make Y", "make Req", "make Handler", "make Y", "make Req", "make Handler"],
                             ["make Req", "make Session", "make Y", "make Handler", "make Y", "make Req", "make Handler"]][shape],
                    "shape \(shape): \(made)")
            #expect(run.seen.filter { $0.hasPrefix("session") || $0.hasPrefix("late") || $0.hasPrefix("req") }.allSatisfy { $0.hasSuffix("true") },
                    "\(run.seen)")
        }
    }

    /// A creation plan over a container step whose cell another thread holds (its factory under way, held at
    /// a gate), resolved by a thread that must not wait (`WaitMode`): the plan's check before its claims
    /// (`checkBeforeNotWaiting`, the build's) refuses it, the plan's error, no decline. (A cell taken between
    /// that check and the claim: `aContainerStepTakenAfterANoWaitCheckIsRefusedWhereTheBuildAsks`.)
    @Test func aHeldContainerStepRefusedToANoWaitResolveIsThePlansError() throws {
        let fx = try Fixture()
        let entered = Gate(), done = Gate()
        try fx.register("H", [dep("S"), dep("R")], scope: .transient)
        try fx.register("S", scope: .singleton)
        try fx.register("R", scope: .container) { _ in
            entered.arrive(andWaitFor: 2)
            done.arrive(andWaitFor: 2)
        }
        let child = try fx.child()
        let seen = Box<[String: Int]>([:]), status = Box("")
        onThreads(2) { i in
            if i == 0 {
                _ = try? fx.resolve("R", in: child)
                return
            }
            entered.arrive(andWaitFor: 2)
            seen.value = counted {
                let (message, _) = WaitMode.run(noWait: true) { () -> String in
                    do { _ = try fx.resolve("H", in: child); return "ok" } catch let e as TetherError { return "\(e.code)" } catch { return "?" }
                }
                status.value = message
            }
            done.arrive(andWaitFor: 2)
        }
        #expect(seen.value == ["resolves": 1], "\(seen.value)")
        #expect(status.value == "wouldBlock", "\(status.value)")
        #expect(fx.tracker.made("R") == 1 && fx.tracker.calls("H") == 0)
        _ = try child.close()
    }

    /// A creation plan over a container step (R) another thread claims between a nested no-wait resolve's check
    /// (`checkBeforeNotWaiting`: it checks, holding no cell ahead) and its claim, forced by the hook
    /// `Graph.setAfterCheckBeforeNotWaiting` (`containerHeld` before branch cyclecut: the build, whose own check
    /// then refused before any factory): the run goes up to that claim (T made, then let go of; S, asked for
    /// after R, never claimed nor made) and reports the claim's refusal there, as the build without plans does.
    @Test func aContainerStepTakenAfterANoWaitCheckIsRefusedWhereTheBuildAsks() throws {
        let seen = try refusedAfterANoWaitCheck(["T", "R", "S"])
        #expect(seen == ["wouldBlock: creating \"R\" must wait for another thread that is creating it; this resolve was asked not to wait (TETHER_RESOLVE_NO_WAIT): retry without it"],
                "\(seen)")
    }

    /// `aContainerStepTakenAfterANoWaitCheckIsRefusedWhereTheBuildAsks` with a declared value none provides, V, asked
    /// for before R (`first`: H over T, V, R, S; the build fails there, after T, and never asks for R) or after it (H over
    /// T, R, V, S: R's refusal where the build asks for it). `notCached` before: a value none provides past a container
    /// step's failed claim declined (`firstAbsent`), and the build's check then refused before any factory, another error
    /// than the build's. Now the run decides where the build's walk meets either: the value's error if asked for before
    /// that claim's step, else the claim's.
    @Test(arguments: [true, false]) func aMissingValueAndAContainerStepTakenAfterANoWaitCheckFailWhereTheBuildAsks(first: Bool) throws {
        let seen = try refusedAfterANoWaitCheck(first ? ["T", "V", "R", "S"] : ["T", "R", "V", "S"], value: "V")
        let error = first ? "notFound: no value for \"V\"" : "wouldBlock: creating \"R\" must wait for another thread"
        #expect(seen.count == 1 && seen[0].hasPrefix(error), "\(seen)")
    }

    /// H over `deps` (T transient, S a singleton, R container-scoped; `value` declared, provided by none), resolved from a
    /// child by Outer's factory as a no-wait resolve, R claimed by another thread between that resolve's check and its
    /// claim (the hook): with and without plans, the same calls and drops (T made and let go of, S and H never called),
    /// every resolve a plan's. Returns the no-wait resolve's error.
    private func refusedAfterANoWaitCheck(_ deps: [String], value: String? = nil) throws -> [String] {
        let counts = Box<[[String: Int]]>([])  // the no-wait thread's
        let run = try withTestHook { try planned { fx -> [String] in
            let go = Gate(), entered = Gate(), done = Gate()
            if let value { _ = try fx.container.declareValue(Key(value)) }
            let h = try fx.register("H", deps.map { dep($0) }, scope: .transient)
            try fx.register("T", scope: .transient)
            try fx.register("S", scope: .singleton)
            try fx.register("R", scope: .container) { _ in
                entered.arrive(andWaitFor: 2)
                done.arrive(andWaitFor: 2)
            }
            let child = try fx.child()
            let status = Box(""), fired = Box(false)
            try fx.register("Outer", scope: .transient) { _ in
                status.value = WaitMode.run(noWait: true) { () -> String in
                    do { _ = try fx.resolve("H", in: child); return "ok" } catch let e as TetherError { return "\(e.code): \(e.message)" } catch { return "?" }
                }.result
            }
            // Once, on the no-wait thread after its check: the other thread claims R and is held in R's factory.
            Graph.setAfterCheckBeforeNotWaiting { r in
                guard r === h, !fired.value else { return }
                fired.value = true
                go.arrive(andWaitFor: 2)
                entered.arrive(andWaitFor: 2)
            }
            defer { Graph.setAfterCheckBeforeNotWaiting(nil) }
            onThreads(2) { i in
                if i == 1 {
                    go.arrive(andWaitFor: 2)
                    _ = try? fx.resolve("R", in: child)
                    return
                }
                counts.value.append(counted { _ = try? fx.resolve("Outer") })
                if !fired.value { go.arrive(andWaitFor: 2); entered.arrive(andWaitFor: 2) }  // (no hook: no deadlock)
                done.arrive(andWaitFor: 2)
            }
            #expect(fired.value)
            #expect(fx.tracker.made("T") == 1 && fx.tracker.dropped("T") == 1 && fx.tracker.calls("S") == 0 && fx.tracker.calls("H") == 0)
            #expect(fx.tracker.made("R") == 1)
            _ = try child.close()
            return [status.value]
        } }
        #expect(counts.value == [["resolves": 2]], "Outer's and H's plans: \(counts.value)")
        return run.seen
    }

    /// A failing graph (a key not registered) with a RESOLVER slot over a container step: counted `missing`
    /// (the walk's marker of the failure where `finishSlots` declined the slot) until branch resolverslot
    /// planned RESOLVER slots over container steps; now the failing plan serves it, with the build's error.
    /// Since branch resolverslot2 `finishSlots` declines nothing (`missing`, `arguments` and `resolverSlot` are gone).
    @Test func aFailingGraphWithAResolverSlotOverAContainerStepIsAPlan() throws {
        let fx = try Fixture()
        try fx.register("H", [.resolver, dep("R"), dep("Nowhere")], scope: .transient)
        try fx.register("R", scope: .container)
        let child = try fx.child()
        let counts = try counted {
            for _ in 0..<2 { _ = expectError(.notFound, "\"Nowhere\"") { try fx.resolve("H", in: child) } }
        }
        #expect(counts == ["resolves": 2], "\(counts)")
    }

    /// A failing graph (a key not registered, or one taking runtime arguments) with a RESOLVER slot before a
    /// container step that is not one of its owner's askers: counted `missing` or `arguments` before branch
    /// resolverslot2 (`finishSlots` declined the slot, `resolverSlot`, and the walk's marker named the failure);
    /// now the failing plan, its container step claimed late (A's get builds it). The build's calls, drops and error.
    @Test(arguments: ["Nowhere", "X"]) func aFailingGraphWithALateContainerClaimIsAPlan(failing: String) throws {
        let run = try planned { fx -> [String] in
            try fx.register("C", scope: .container)
            try fx.register("X", [.argument(.i64)])
            try fx.register("A", [.resolver]) { obj in obj.got.append(try #require(fx.bridge.resolver(obj.words[0])).get(Key("C")).pointer) }
            try fx.register("Root", [dep("A"), dep("C"), dep(failing)])
            let child = try fx.child()
            var seen: [String] = []
            for _ in 0..<2 {
                do { _ = try fx.resolve("Root", in: child) } catch let e as TetherError { seen.append("\(e.code) \(e.message)") }
            }
            _ = try child.close()
            return seen
        }
        #expect(run.counts == ["resolves": 2], "\(run.counts)")
        #expect(run.log == ["make C", "make A", "drop A", "drop C", "make C", "make A", "drop A", "drop C"], "\(run.log)")
        #expect(run.seen.count == 2 && run.seen.allSatisfy { $0.contains("\"\(failing)\"") && $0.contains("\"Root\"") }, "\(run.seen)")
    }

    /// A nested resolve whose plan reads the request and claims creation cells before the cut (`cycle` before branch
    /// `requests`, the build: `Plan.meeting`'s `claims && readsRequest`): X's factory resolves Y (container-scoped,
    /// -> S, L, X; S a singleton not cached, L transient) from the child X is made in. Y's creation plan meets X, a
    /// container step the thread constructs further out: the run claims S's cell and Y's (`claimWithContainerSteps` up
    /// to the cut), makes S and L, and reports the re-entry where the build asks for X; what it made let go of, S not
    /// cached. `over` true: T (container-scoped) asked for after X (past the cut) is neither made nor claimed. Then
    /// Y resolved in the child: X cached, S made then.
    @Test(arguments: [false, true]) func aNestedPlanReadingTheRequestAndClaimingCreationsMeetingAnOuterKeyRunsUpToIt(over: Bool) throws {
        let run = try planned { fx -> [String] in
            let messages = Box<[String]>([])
            let children = Box<[Container]>([])
            try fx.register("S", scope: .singleton)
            try fx.register("L", scope: .transient)
            try fx.register("T", scope: .container)
            try fx.register("Y", [dep("S"), dep("L"), dep("X")] + (over ? [dep("T")] : []), scope: .container)
            try fx.register("X", scope: .container) { _ in
                do { _ = try fx.resolve("Y", in: children.value.last!); messages.value.append("ok") } catch let e as TetherError {
                    messages.value.append("\(e.code): \(e.message)")
                }
            }
            for n in 0..<2 {
                let child = try fx.child()
                children.value.append(child)
                _ = try fx.resolve("X", in: child)
                // (The first child: S made and let go of, not cached; the second finds S cached: a plain cut.)
                if n == 0 { #expect(fx.tracker.made("S") == 1 && fx.tracker.dropped("S") == 1 && fx.tracker.made("T") == 0) }
                let y = try fx.resolve("Y", in: child)
                messages.value.append(Obj.of(y).tree())
                _ = try child.close()
            }
            return messages.value
        }
        #expect(run.counts["cycle"] == nil && run.counts["resolves"] != nil, "\(run.counts)")
        #expect(run.seen.count == 4 && run.seen[0] == run.seen[2], "\(run.seen)")
        #expect(run.seen[0].hasPrefix("cycle: ") && run.seen[0].contains("\"X\" -> \"Y\" -> \"X\""), "\(run.seen)")
        let made = run.log.filter { $0.hasPrefix("make") }
        #expect(Array(made.prefix(3)) == ["make S", "make L", "make X"], "\(run.log)")
    }

    // MARK: shapes planned since branch declinesweep

    /// A failing graph over a singleton not cached, from a child with registrations of its own: a failing
    /// creation plan of the child's component (the build before, counted `sharedRoot`: the warm failing plan's
    /// last step is no root). The same calls, error and destructors as the build.
    @Test(arguments: ["Nowhere", "X", "C1"]) func aChildsFailingGraphOverASingletonNotCachedIsAPlan(failing: String) throws {
        let run = try planned { fx -> [String] in
            try fx.register("A", [dep("S"), dep(failing)], scope: .transient)
            try fx.register("S", scope: .singleton)
            try fx.register("X", [.argument(.i64)])
            try fx.register("C1", [dep("C2")])
            try fx.register("C2", [dep("C1")])
            let child = try fx.child()
            try fx.register("Own", in: child)
            var seen: [String] = []
            for _ in 0..<2 {
                do { _ = try fx.resolve("A", in: child) } catch let e as TetherError { seen.append("\(e.code) \(e.message)") }
            }
            seen.append("S made \(fx.tracker.made("S"))")
            _ = try child.close()
            return seen
        }
        #expect(run.counts == ["resolves": 2], "\(run.counts)")
        #expect(run.seen.count == 3, "\(run.seen)")
    }

    /// A failing graph whose weak leaf died after its warm (failing) plan was recorded: the failing creation
    /// plan for that state (`Plan.recordCreating`; the build before, counted `sharedRoot`).
    @Test func aFailingGraphWhoseWeakLeafDiedIsAPlan() throws {
        let run = try planned { fx -> [String] in
            try fx.register("A", [dep("W"), dep("Nowhere")], scope: .transient)
            try fx.register("W", scope: .weak)
            var seen: [String] = []
            var w: Instance? = try fx.resolve("W")
            for round in 0..<3 {
                if round == 1 { w = nil }
                do { _ = try fx.resolve("A") } catch let e as TetherError { seen.append("\(e.code) \(e.message)") }
            }
            seen.append("W made \(fx.tracker.made("W")) dropped \(fx.tracker.dropped("W"))")
            _ = w
            return seen
        }
        #expect(run.counts == ["resolves": 4], "\(run.counts)")
    }
}

extension Fixture {
    /// Decorates `key` in `target` (default: the root) with a counted factory making an `Obj` labelled `label`
    /// over the instance (its slot 0) and `params`' dependencies, dropped as `register`'s are.
    @discardableResult
    func decorate(_ key: String, _ params: [Param] = [], in target: Container? = nil, label: String) throws -> Registration {
        let tracker = tracker
        let factory = ClosureFactory { words in
            tracker.called(label)
            let p = Ref(retaining: Obj(label: label, words: words)).opaque
            tracker.made(label, p)
            return p
        }
        return try (target ?? container).decorate(Key(key), params: [dep(key)] + params, factory: factory) { (r: Registration) throws(TetherError) in
            r.setContext(nil) { p, _ in
                tracker.dropped(label, p)
                Ref<Obj>(opaque: p).release()
            }
        }.decorator
    }
}

extension Fixture {
    /// The mixed-cache shapes of `DeclineReasonTests.someContainerStepsCachedWithAStepTheyAskedForTakenByAMadeOneRunAPlan`:
    /// Req, Y (transient), `between`'s registrations, Session (container-scoped) over Req; shape 0: Late (container-scoped)
    /// over Req and a transient Handler over Session, Y, Late; shapes 1, 2: Late over nothing and Handler over Session, Late,
    /// Y, Req; Handler's slots then `more`. Returns Handler's registration.
    @discardableResult
    func registerMixedCacheShape(_ shape: Int, more: [Param] = [], between: (Fixture) throws -> Void = { _ in }) throws -> Registration {
        try register("Req")
        try register("Y", scope: .transient)
        try between(self)
        try register("Session", [dep("Req")], scope: .container)
        if shape == 0 {
            try register("Late", [dep("Req")], scope: .container)
            return try register("Handler", [dep("Session"), dep("Y"), dep("Late")] + more, scope: .transient)
        }
        try register("Late", scope: .container)
        return try register("Handler", [dep("Session"), dep("Late"), dep("Y"), dep("Req")] + more, scope: .transient)
    }

    /// In each of two children: shape 2's Late (else Session) resolved first ("cached" noted), then `root` twice (a, b):
    /// their trees, whether both took the cached one, `more`'s lines (given a, b and the cached one), and for shape 0
    /// whether a's Late's Req (slot 2's slot 0) is its own graph's, not the cached Session's; the child closed ("closed" noted).
    func twoRootsOverOneCached(_ shape: Int, root: String = "Handler", _ more: (Obj, Obj, Instance) -> [String]) throws -> [String] {
        var seen: [String] = []
        for _ in 0..<2 {
            let child = try self.child()
            let session = try resolve(shape == 2 ? "Late" : "Session", in: child)
            tracker.note("cached")
            var first: Instance? = try resolve(root, in: child)
            var second: Instance? = try resolve(root, in: child)
            let (a, b) = (Obj.of(first!), Obj.of(second!))
            seen.append(a.tree())
            seen.append(b.tree())
            let cachedSlot = shape == 2 ? 1 : 0
            seen.append("session \(a.depPointer(cachedSlot) == session.pointer && b.depPointer(cachedSlot) == session.pointer)")
            seen += more(a, b, session)
            // Shape 0: Late's Req is its own graph's, not the cached Session's.
            if shape == 0 { seen.append("req \(a.dep(2).depPointer(0) != Obj.of(session).depPointer(0))") }
            (first, second) = (nil, nil)
            _ = try child.close()
            tracker.note("closed")
        }
        return seen
    }

    /// "variants N": how many `mixedVariants` the plan of `key` (from the root) keeps.
    func mixedVariantsLine(_ key: String) throws -> String {
        let registration = try #require(container.registration(for: Key(key)))
        let plan = Borrowed<Plan>(word: registration.planAddress.load(ordering: .acquiring))
        return "variants \(plan?.borrow { $0.mixedVariantCount } ?? -1)"
    }
}
