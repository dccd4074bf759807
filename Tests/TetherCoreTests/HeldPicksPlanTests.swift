// Branch heldpicks (issue 28): the residual `containerHeld` and `creationPicks` shapes, each served by a plan.
// `containerHeld`: some container steps cached, others not, with a step a cached one asked for taken by one
// made, in a plan that replays into the graph (completion callbacks, slots made per resolve): the graph replays
// the plan recorded for that set of cached steps (`Plan.mixedVariant`, `Graph.switchesToVariant`), as a run
// without a graph does (`Plan.runRequest`). `creationPicks`: the caches another thread changes between each
// creation plan's pick and its claims, for a thread that must not wait (its claims kept too: `Graph.keepClaims`,
// `checkBeforeNotWaiting` skipping the cells the graph holds) and in a resolver's request (`claimAsked` keeping
// the request's claims, `runAsked` picking again under them). Races forced with the hooks, no sleeps.
import Synchronization
import Testing
@testable import TetherCore

@Suite struct HeldPicksPlanTests {
    /// `someContainerStepsCachedWithAStepTheyAskedForTakenByAMadeOneRunAPlan`'s three shapes with a completion
    /// callback on the Handler or a LAZY slot (the plan replays into the graph; `containerHeld` before: built),
    /// and (shape 3) a CONTAINER-scoped root with a completion callback over Conn, which Session (cached) asked for
    /// first (corpus `a_container_scoped_root_with_a_completion_callback_over_a_graph_key_its_container_step_asks_for_first`).
    /// The graph replays the plan for that set of cached steps: the same factory calls, completions and drops as the
    /// build, in its order, one variant recorded, every resolve a plan's.
    @Test func someContainerStepsCachedInAGraphsReplayRunTheMixedVariant() throws {
        for shape in 0..<4 {
            for graphing in ["complete", "lazy"] where shape < 3 || graphing == "complete" {
                let run = try planned { fx -> [String] in
                    let root: String
                    if shape == 3 {
                        root = "Root"
                        try fx.register("Req")
                        try fx.register("Y", scope: .transient)
                        try fx.register("Session", [dep("Req")], scope: .container)
                        try fx.register("Root", [dep("Session"), dep("Req")], scope: .container)
                        fx.onComplete(try #require(fx.container.registration(for: Key("Root"))))
                    } else {
                        root = "Handler"
                        let handler = try fx.registerMixedCacheShape(shape, more: graphing == "lazy" ? [.lazy(Key("Y"))] : [])
                        if graphing == "complete" { fx.onComplete(handler) }
                    }
                    var seen = try fx.twoRootsOverOneCached(shape, root: root) { a, b, session in
                        guard shape == 3 else {
                            let late = shape == 0 ? 2 : 1
                            return ["late \(a.depPointer(late) == b.depPointer(late) && a.depPointer(0) == b.depPointer(0))"]
                        }
                        return ["root \(a.pointer == b.pointer)", "req \(a.depPointer(1) != Obj.of(session).depPointer(0))"]
                    }
                    seen.append(try fx.mixedVariantsLine(root))
                    return seen
                }
                let name = "shape \(shape) \(graphing)"
                // (Shape 3: the second resolve of the Root finds it cached, no plan's: not counted.)
                #expect(run.counts == ["resolves": shape == 3 ? 4 : 6], "\(name): every resolve the plan's: \(run.counts)")
                #expect(run.seen.last == "variants 1", "\(name): \(run.seen)")
                #expect(run.seen.dropLast().filter { !$0.contains("(") }.allSatisfy { $0.hasSuffix("true") }, "\(name): \(run.seen)")
                let log = run.log
                let from = try #require(log.firstIndex(of: "cached")), to = try #require(log.firstIndex(of: "closed"))
                let made = log[from..<to].filter { $0.hasPrefix("make ") || $0.hasPrefix("complete ") }
                let completes = graphing == "complete"
                let expected: [String] = [
                    ["make Y", "make Req", "make Late", "make Handler"] + (completes ? ["complete Handler"] : []) + ["make Y", "make Handler"] + (completes ? ["complete Handler"] : []),
                    ["make Late", "make Y", "make Req", "make Handler"] + (completes ? ["complete Handler"] : []) + ["make Y", "make Req", "make Handler"] + (completes ? ["complete Handler"] : []),
                    ["make Req", "make Session", "make Y", "make Handler"] + (completes ? ["complete Handler"] : []) + ["make Y", "make Req", "make Handler"] + (completes ? ["complete Handler"] : []),
                    ["make Req", "make Root", "complete Root"],
                ][shape]
                #expect(made == expected, "\(name): \(made)")
            }
        }
    }

    /// Weak B (over graph-scoped D) published by another thread before every creation plan's claims and let go of
    /// before every pick; C, still made, takes D under B, so no run can take B (`cachesChangingUnderEveryPickRunAPlan`'s
    /// shape), resolved by a no-wait resolve nested in Outer's factory (it checks before its claims, holding no cell
    /// ahead; `creationPicks` before: its claims let go of, every pick the same, then the build). Its claims kept
    /// (`keepClaims`, `checkBeforeNotWaiting` skipping the cells it holds), the plan picked next serves it.
    @Test func cachesChangingUnderEveryPickOfANestedNoWaitResolveRunAPlan() throws {
        let fx = try Fixture()
        try fx.register("Repicked", [dep("B"), dep("C"), dep("E")], scope: .transient)
        try fx.register("B", [dep("D")], scope: .weak)
        try fx.register("C", [dep("D")], scope: .transient)
        try fx.register("D")
        try fx.register("E", scope: .weak)
        let status = Box(""), repicked = Box<Instance?>(nil)
        try fx.register("Outer", scope: .transient) { _ in
            status.value = WaitMode.run(noWait: true) { () -> String in
                do { repicked.value = try fx.resolve("Repicked"); return "ok" } catch let e as TetherError { return "\(e.code): \(e.message)" } catch { return "?" }
            }.result
        }
        do {  // the warm plans, every leaf cached; then B and E let go of
            var held = [try fx.resolve("B"), try fx.resolve("E")]
            _ = try fx.resolve("Repicked")
            _ = try fx.resolve("Outer")
            repicked.value = nil
            held.removeAll()
        }
        let holder = Box<Instance?>(nil)
        let published = Box(0)
        let root = try #require(fx.container.registration(for: Key("Repicked")))
        let counts = try withTestHook {
            Registration.setAfterWarmCheck { r in if r === root { holder.value = nil } }
            Graph.setBeforeClaimingCreations { r in
                guard r === root else { return }
                onThreads(1) { _ in holder.value = try? fx.resolve("B") }
                published.value += 1
            }
            defer { Registration.setAfterWarmCheck(nil); Graph.setBeforeClaimingCreations(nil) }
            return try counted { _ = try fx.resolve("Outer") }
        }
        #expect(status.value == "ok", "\(status.value)")
        #expect(counts == ["resolves": 2], "served by the plan picked under the kept claims: \(counts)")
        #expect(published.value == 2, "one hook per creation plan run")
        #expect(fx.tracker.made("B") == 2 && fx.tracker.made("E") == 2 && fx.tracker.made("C") == 3 && fx.tracker.made("D") == 5,
                "B: the warm-up's and the publication's; E: the warm-up's and the run's; C: the two warm-ups' and the run's; D: one per graph making B or C")
        let made = try #require(repicked.value), b = try #require(holder.value)
        #expect(Obj.of(made).depPointer(0) == b.pointer, "the run took the B published at its claims")
        #expect(Obj.of(made).dep(2).label == "E" && fx.tracker.isLive(Obj.of(made).depPointer(2)))
        #expect(Array(fx.tracker.log.suffix(6)) == ["make D", "make C", "make E", "make Repicked", "make Outer", "drop Outer"], "\(fx.tracker.log)")
        repicked.value = nil
        holder.value = nil
        #expect(fx.tracker.badDrops == 0)
    }

    /// The same shape in a resolver's request: T's RESOLVER slot's get of weak Repicked, B published by another
    /// thread before every request's claims (`claimAsked`) and let go of before every pick (`creationPicks`
    /// before: the request built). The request's claims kept (`keepClaims(request:)`), its plan picked again under
    /// them (`runAsked`) serves it: B the one published last, E, D, C made once.
    @Test func cachesChangingUnderEveryPickOfARequestRunAPlan() throws {
        let fx = try Fixture()
        try fx.register("Repicked", [dep("B"), dep("C"), dep("E")], scope: .weak)
        try fx.register("B", [dep("D")], scope: .weak)
        try fx.register("C", [dep("D")], scope: .transient)
        try fx.register("D")
        try fx.register("E", scope: .weak)
        let bridge = fx.bridge
        try fx.register("T", [.resolver], scope: .transient) { obj in
            guard let r = bridge.resolver(obj.words[0]) else { throw TetherError(.factoryFailed, "no resolver") }
            obj.got.append(try r.get(Key("Repicked")).pointer)
        }
        do {  // the warm plans, every leaf cached; then B, E and Repicked let go of
            var held = [try fx.resolve("B"), try fx.resolve("E")]
            _ = try fx.resolve("T")
            held.removeAll()
        }
        let holder = Box<Instance?>(nil)
        let published = Box(0)
        let root = try #require(fx.container.registration(for: Key("Repicked")))
        var t: Instance?
        var requests: [String: Int] = [:]
        let counts = try withTestHook {
            Registration.setAfterWarmCheck { r in if r === root { holder.value = nil } }
            Graph.setBeforeClaimingCreations { r in
                guard r === root else { return }
                onThreads(1) { _ in holder.value = try? fx.resolve("B") }
                published.value += 1
            }
            defer { Registration.setAfterWarmCheck(nil); Graph.setBeforeClaimingCreations(nil) }
            return try counted { requests = try countedRequests { t = try fx.resolve("T") } }
        }
        #expect(counts == ["resolves": 1], "\(counts)")
        #expect(requests == ["requests": 1, "plan": 1], "served by the plan picked under the kept claims: \(requests)")
        #expect(published.value == 2, "one hook per request's claims")
        #expect(fx.tracker.made("B") == 2 && fx.tracker.made("E") == 2 && fx.tracker.made("C") == 2 && fx.tracker.made("D") == 4,
                "B: the warm-up's and the publication's; E, C: the warm-up's and the request's; D: one per graph making B or C")
        let made = Obj.at(Obj.of(try #require(t)).got[0]), b = try #require(holder.value)
        #expect(made.depPointer(0) == b.pointer, "the request's run took the B published at its claims")
        #expect(made.dep(2).label == "E" && fx.tracker.isLive(made.depPointer(2)))
        #expect(Array(fx.tracker.log.suffix(5)) == ["make D", "make C", "make E", "make Repicked", "make T"], "\(fx.tracker.log)")
        t = nil
        holder.value = nil
        #expect(fx.tracker.badDrops == 0)
    }
}
