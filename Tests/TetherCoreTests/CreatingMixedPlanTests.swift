// Branch creatingmixed (issue 28): `containerHeld`'s mixed-cache shape (some container steps cached, others not,
// with a step a cached one asked for taken by one made) in the runs that did not switch to the plan recorded for
// that set of cached steps (`Plan.mixedVariant`): a creating run (a creating variant, its claims redone), a
// resolver's request (`Graph.runAsked`), and past `Plan.maxMixedVariants` sets per plan (a variant recorded for
// the run and not kept, as `Registration.oneShotPlan` past `maxPlans`). Each ran against the build (`bothPaths`) until
// branch noplansoff; each asserts its literal results.
import Testing
@testable import TetherCore

@Suite struct CreatingMixedPlanTests {
    /// `DeclineReasonTests.someContainerStepsCachedWithAStepTheyAskedForTakenByAMadeOneRunAPlan`'s three shapes with a
    /// singleton (`One`) the Handler takes too, not cached at the first child's first Handler: that resolve is a
    /// creating run finding the mix (`containerHeld` before: built). Graphing: a completion callback on the Handler
    /// (the creating plan replays into the graph in any case; the warm one too then). The creating run switches to
    /// the creating variant for that set (its claims redone); the second resolve the warm plan's variant.
    @Test func someContainerStepsCachedInACreatingRunRunTheCreatingVariant() throws {
        for shape in 0..<3 {
            for completes in [false, true] {
                let run = try planned { fx -> [String] in
                    let handler = try fx.registerMixedCacheShape(shape, more: [dep("One")]) { _ = try $0.register("One", scope: .singleton) }
                    if completes { fx.onComplete(handler) }
                    return try fx.twoRootsOverOneCached(shape) { a, b, _ in
                        let late = shape == 0 ? 2 : 1
                        let one = shape == 0 ? 3 : 4
                        return ["late \(a.depPointer(late) == b.depPointer(late))", "one \(a.depPointer(one) == b.depPointer(one))"]
                    }
                }
                let name = "shape \(shape) completes \(completes)"
                #expect(run.counts == ["resolves": 6], "\(name): every resolve the plan's: \(run.counts)")
                #expect(run.seen.filter { !$0.contains("(") }.allSatisfy { $0.hasSuffix("true") }, "\(name): \(run.seen)")
                let log = run.log
                let from = try #require(log.firstIndex(of: "cached")), to = try #require(log.firstIndex(of: "closed"))
                let made = log[from..<to].filter { $0.hasPrefix("make ") }
                #expect(made == [["make Y", "make Req", "make Late", "make One", "make Handler", "make Y", "make Handler"],
                                 ["make Late", "make Y", "make Req", "make One", "make Handler", "make Y", "make Req", "make Handler"],
                                 ["make Req", "make Session", "make Y", "make One", "make Handler", "make Y", "make Req", "make Handler"]][shape],
                        "\(name): \(made)")
            }
        }
    }

    /// Past `Plan.maxMixedVariants` sets of cached steps: Handler over five container steps S0...S4 and Late, each
    /// over Req (S0 asks for it first: cached, Late, made, takes it, so no skip gives the build's order), resolved
    /// from children each caching another subset of S0...S4 with S0 first (16 sets, each a `mixedVariant`'s). The first
    /// 8 sets' variants kept; past them, each run's variant recorded for it and let go of once the resolve ends
    /// (`containerHeld` before: built). Graphing: a completion callback on the Handler (a replay into the graph).
    @Test func pastMaxMixedVariantsEachRunRecordsOneForItself() throws {
        for completes in [false, true] {
            let run = try planned { fx -> [String] in
                try fx.register("Req")
                var params: [Param] = []
                for s in 0..<5 {
                    try fx.register("S\(s)", [dep("Req")], scope: .container)
                    params.append(dep("S\(s)"))
                }
                try fx.register("Late", [dep("Req")], scope: .container)
                let handler = try fx.register("Handler", params + [dep("Late")], scope: .transient)
                if completes { fx.onComplete(handler) }
                var seen: [String] = []
                for set in stride(from: 1, to: 32, by: 2) {
                    let child = try fx.child()
                    var cached: [Instance] = []
                    for s in 0..<5 where set & 1 << s != 0 { cached.append(try fx.resolve("S\(s)", in: child)) }
                    let first = try fx.resolve("Handler", in: child)
                    let second = try fx.resolve("Handler", in: child)
                    let (a, b) = (Obj.of(first), Obj.of(second))
                    seen.append(a.tree())
                    let taken = (0..<5).filter { set & 1 << $0 != 0 }.allSatisfy { s in
                        a.depPointer(s) == cached.first { Obj.of($0).label == "S\(s)" }!.pointer
                    }
                    seen.append("set \(set): cached taken \(taken), late once \(a.depPointer(5) == b.depPointer(5))")
                    withExtendedLifetime((first, second, cached)) {}
                    _ = try child.close()
                }
                let plan = try #require(Borrowed<Plan>(word: handler.planAddress.load(ordering: .acquiring)))
                seen.append("variants \(plan.borrow { $0.mixedVariantCount })")
                seen.append("one-shots \(ThreadState.currentReference.borrow { $0.oneShotPlans.count })")
                return seen
            }
            #expect(run.counts == ["resolves": 2 * 16 + 16 + 4 * 8], "completes \(completes): \(run.counts)")
            #expect(run.seen.suffix(2) == ["variants \(Plan.maxMixedVariants)", "one-shots 0"], "\(run.seen.suffix(2))")
            #expect(run.seen.filter { $0.hasPrefix("set") }.allSatisfy { $0.hasSuffix("taken true, late once true") }, "\(run.seen)")
        }
    }
}
