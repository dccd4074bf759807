// Branch cutswitch (issue 28): a run up to a cut (a nested resolve's plan meeting a key this thread constructs
// further out: `Graph.replayMeeting`, `Plan.replayCut`) finding container steps cached switches to the plan for
// them, as a run that is not cut does (`Plan.variant(forCached:)`, the one picker): the `cachedVariant` when every
// container step is cached, the `mixedVariant` for the set when some are, and where the asker of the step it meets
// is cached (the build never meets it there) the plan with them leaves, run up to where it meets that key, if it
// does. Before: `containerHeld` (some cached, or the asker), and a plan with a `cachedVariant` finding every one
// cached ran itself, making a step the Session asked for first where the Session asks, not where the build does.
// Each shape asserts its nested resolves' factory calls in order (the build's, which ran beside it as an oracle
// until branch noplansoff) and their outcomes; no resolve built.
import Testing
@testable import TetherCore

@Suite struct CutSwitchPlanTests {
    /// Twice: a child resolves `Handler` twice (the plans recorded), then a new child resolves `pre` and `X` twice,
    /// X's factory resolving `Handler` in that child (nested: it meets X, constructed further out), noting the tree
    /// or the error, and whether the nested Handler's input `sessionSlot` is the `pre` Session (`session true`).
    /// `perChild`: registers in each child first (the Handler's plan a child's then). A warm resolve's error is noted.
    private func serve(pre: [String], sessionSlot: Int = 0, perChild: @escaping (Fixture, Container) throws -> Void = { _, _ in },
                       _ setUp: (Fixture, _ xBody: @escaping (Obj) throws -> Void) throws -> Void) throws
        -> (log: [String], seen: [String], counts: [String: Int]) {
        try planned { fx -> [String] in
            let nesting = Box(false), messages = Box<[String]>([]), current = Box<Container?>(nil), session = Box<UnsafeMutableRawPointer?>(nil)
            try setUp(fx) { _ in
                guard nesting.value else { return }
                do {
                    let h = try fx.resolve("Handler", in: current.value!)
                    withExtendedLifetime(h) {
                        messages.value.append("nested " + Obj.of(h).tree())
                        messages.value.append("session \(Obj.of(h).depPointer(sessionSlot) == session.value)")
                    }
                } catch let e as TetherError { messages.value.append("\(e.code): \(e.message)") }
            }
            for _ in 0..<2 {
                let warm = try fx.child()
                try perChild(fx, warm)
                current.value = warm
                for _ in 0..<2 {
                    do {
                        let h = try fx.resolve("Handler", in: warm)
                        withExtendedLifetime(h) { messages.value.append(Obj.of(h).tree()) }
                    } catch let e as TetherError { messages.value.append("warm \(e.code): \(e.message)") }
                }
                _ = try warm.close()
                let child = try fx.child()
                try perChild(fx, child)
                current.value = child
                for key in pre {
                    let instance = try fx.resolve(key, in: child)
                    if key == "Session" { session.value = instance.pointer }
                }
                fx.tracker.note("nesting")
                nesting.value = true
                for _ in 0..<2 { _ = try fx.resolve("X", in: child) }
                nesting.value = false
                _ = try child.close()
                fx.tracker.note("closed")
            }
            return messages.value
        }
    }

    /// The factory calls from the first "nesting" to the next "closed" (the two resolves of X).
    private func nestedMakes(_ log: [String]) throws -> [String] {
        let from = try #require(log.firstIndex(of: "nesting")), to = try #require(log.firstIndex(of: "closed"))
        return log[from..<to].filter { $0.hasPrefix("make ") }
    }

    /// Every resolve a plan's; `makes`: the factory calls of the first child's two resolves of X;
    /// `nested`: the nested Handler made (else the cycle reported); `failure`: the nested resolves' error (its code and
    /// a fragment of its message) instead.
    private func expectServed(_ run: (log: [String], seen: [String], counts: [String: Int]), makes: [String], nested: Bool,
                              failure: (code: String, fragment: String)? = nil, sourceLocation: SourceLocation = #_sourceLocation) throws {
        // (Per child pair: two Handlers, `pre`, two Xs, two nested Handlers; none built.)
        #expect(run.counts.keys.sorted() == ["resolves"], "\(run.counts)", sourceLocation: sourceLocation)
        let made = try nestedMakes(run.log)
        #expect(made == makes, "\(made)", sourceLocation: sourceLocation)
        let outcomes = run.seen.filter { s in s.hasPrefix("nested") || s.hasPrefix("cycle") || failure.map { s.hasPrefix($0.code + ": ") } == true }
        #expect(outcomes.count == 4, "\(run.seen)", sourceLocation: sourceLocation)
        if let failure {
            #expect(outcomes.allSatisfy { $0.hasPrefix(failure.code + ": ") && $0.contains(failure.fragment) }, "\(outcomes)",
                    sourceLocation: sourceLocation)
        } else if nested {
            #expect(outcomes.allSatisfy { $0.hasPrefix("nested Handler(") }, "\(outcomes)", sourceLocation: sourceLocation)
            #expect(run.seen.filter { $0.hasPrefix("session") } == Array(repeating: "session true", count: 4), sourceLocation: sourceLocation)
        } else {
            #expect(outcomes.allSatisfy { $0.contains("\"X\" -> \"Handler\" -> \"X\"") }, "\(outcomes)", sourceLocation: sourceLocation)
        }
    }

    /// Conn (graph-scoped) asked for first by the cached Session and taken by the Handler too: the Handler's plan has a
    /// `cachedVariant`. The cut run finds every container step cached and runs that variant up to X: Clock, then Conn
    /// where the Handler asks (before: the plan itself, Conn first, an order the build never has; no decline counted).
    /// `late`: a CONTAINER-scoped Late asked for after X, never looked at: the `mixedVariant` of the Session
    /// (`containerHeld` before).
    @Test(arguments: [false, true]) func aCutRunFindingTheContainerStepsCachedRunsTheCachedVariantUpToTheCut(late: Bool) throws {
        let run = try serve(pre: ["Session"]) { fx, x in
            try fx.register("Conn")
            try fx.register("Clock")
            try fx.register("Late", scope: .container)
            try fx.register("X", scope: .transient, body: x)
            try fx.register("Session", [dep("Conn")], scope: .container)
            try fx.register("Handler", [dep("Session"), dep("Clock"), dep("Conn"), dep("X")] + (late ? [dep("Late")] : []), scope: .transient)
        }
        try expectServed(run, makes: Array(repeating: ["make Clock", "make Conn", "make X"], count: 2).flatMap { $0 }, nested: false)
    }

    /// Some container steps the cut run asks for cached (the Session), others not (Late, over Conn the Session asked for
    /// first): the `mixedVariant` for that set, run up to X: Clock, Conn, Late, then let go of (`containerHeld` before).
    /// `creating`: a weak One the Handler takes before X, dead at every resolve: the nested Handler's plan is its creation
    /// plan, its run up to X a creating one (`CreatingCutIntoGraph`), switching to the creating `mixedVariant` for that
    /// set, its claims redone, One made and let go of too (`containerHeld` before branch heldcut: built).
    @Test(arguments: [false, true]) func aCutRunFindingSomeContainerStepsCachedRunsTheMixedVariantUpToTheCut(creating: Bool) throws {
        let run = try serve(pre: ["Session"]) { fx, x in
            try fx.register("Conn")
            try fx.register("Clock")
            if creating { try fx.register("One", scope: .weak) }
            try fx.register("X", scope: .transient, body: x)
            try fx.register("Session", [dep("Conn")], scope: .container)
            try fx.register("Late", [dep("Conn")], scope: .container)
            try fx.register("Handler", [dep("Session"), dep("Clock")] + (creating ? [dep("One")] : []) + [dep("Late"), dep("X")], scope: .transient)
        }
        let made = ["make Clock"] + (creating ? ["make One"] : []) + ["make Conn", "make Late", "make X"]
        try expectServed(run, makes: made + made, nested: false)
    }

    /// The Session, which asks for X, cached: the build takes it and never meets X (`containerHeld` before). The plan
    /// with the cached container steps leaves (`variant(forCached:cut:)`; every one cached and no `cachedVariant`: the
    /// `mixedVariant` of them all) does not meet X: replayed whole, the nested Handler made over the cached Session.
    /// Shape 1: X asked for by the Handler too, after Clock: the variant meets it there (a cut run of the variant).
    /// Shape 2: Conn asked for under the Session and by the Handler (a `cachedVariant`). Shapes 3, 4: a CONTAINER-scoped
    /// Late after Clock, not cached (the `mixedVariant` of the Session, Late made and cached) or cached (`pre`).
    @Test(arguments: 0..<5) func aCutRunWhoseAskerIsCachedRunsThePlanWithItALeaf(shape: Int) throws {
        let run = try serve(pre: shape == 4 ? ["Session", "Late"] : ["Session"]) { fx, x in
            try fx.register("Conn")
            try fx.register("Clock")
            try fx.register("Late", scope: .container)
            try fx.register("X", scope: .transient, body: x)
            try fx.register("Session", [dep("X")] + (shape == 2 ? [dep("Conn")] : []), scope: .container)
            let tail: [[Param]] = [[], [dep("X")], [dep("Conn")], [dep("Late")], [dep("Late")]]
            try fx.register("Handler", [dep("Session"), dep("Clock")] + tail[shape], scope: .transient)
        }
        let first: [[String]] = [["make Clock", "make Handler"], ["make Clock"], ["make Clock", "make Conn", "make Handler"],
                                 ["make Clock", "make Late", "make Handler"], ["make Clock", "make Handler"]]
        // (Shape 3: Late cached by the first nested Handler, taken by the second.)
        let second = shape == 3 ? ["make Clock", "make Handler"] : first[shape]
        try expectServed(run, makes: first[shape] + ["make X"] + second + ["make X"], nested: shape != 1)
    }

    /// The Session, which asks for X, cached in a creating run up to X (a weak `One` the Handler takes first, dead at
    /// every resolve): the creation plan with the cached container steps leaves (its creating `mixedVariant` of them
    /// all), which does not meet X, replayed whole, its claims redone (`containerHeld` before: built).
    @Test func aCreatingCutRunWhoseAskerIsCachedRunsTheCreatingPlanWithItALeaf() throws {
        let run = try serve(pre: ["Session"], sessionSlot: 1) { fx, x in
            try fx.register("Clock")
            try fx.register("One", scope: .weak)
            try fx.register("X", scope: .transient, body: x)
            try fx.register("Session", [dep("X")], scope: .container)
            try fx.register("Handler", [dep("One"), dep("Session"), dep("Clock")], scope: .transient)
        }
        let made = ["make One", "make Clock", "make Handler", "make X"]
        try expectServed(run, makes: made + made, nested: true)
    }

    /// Branch heldrest: the asker (the Session, which asks for X) found cached in a cut run of a plan whose set of cached
    /// container steps `variant(forCached:cut:)` cannot pick by: the plan with them leaves (`Plan.leafVariant`, kept by no
    /// plan), which does not meet X, replayed whole (`containerHeld` before: built).
    /// - "failing": the Handler asks for Nowhere, registered nowhere, last: a failing plan; the build takes the Session
    ///   cached, makes Clock and reports Nowhere, as the variant (a failing plan too) does.
    /// - "wide": 64 transients first, the Session the 66th step (its bit past the 64th: `wideMasks`).
    /// - "child", "childLate": a Tag each child registers (the Handler's plan a child's, no `mixedVariants`), with a
    ///   CONTAINER-scoped Late last in "childLate", not cached (made and cached by the first nested Handler); a weak One
    ///   first in "childCreating", dead at every resolve (a creating cut run: the child's creating walk with the leaves).
    @Test(arguments: ["failing", "wide", "child", "childLate", "childCreating"])
    func aCutRunWhoseAskerIsCachedInAFailingWideOrChildsPlanRunsThePlanWithItALeaf(shape: String) throws {
        let pads = shape == "wide" ? (0..<64).map { "P\($0)" } : shape == "childCreating" ? ["One"] : []
        let child = shape.hasPrefix("child")
        let run = try serve(pre: ["Session"], sessionSlot: pads.count, perChild: { fx, c in
            if child { try fx.register("Tag", scope: .transient, in: c) }
        }) { fx, x in
            for pad in pads { try fx.register(pad, scope: pad == "One" ? .weak : .transient) }
            try fx.register("Clock")
            try fx.register("Late", scope: .container)
            try fx.register("X", scope: .transient, body: x)
            try fx.register("Session", [dep("X")], scope: .container)
            let tail: [Param] = shape == "failing" ? [dep("Nowhere")] : child ? [dep("Tag")] + (shape == "childLate" ? [dep("Late")] : []) : []
            try fx.register("Handler", pads.map { dep($0) } + [dep("Session"), dep("Clock")] + tail, scope: .transient)
        }
        let made = pads.map { "make \($0)" } + ["make Clock"] + (child ? ["make Tag"] : [])
        let first = made + (shape == "childLate" ? ["make Late"] : []) + (shape == "failing" ? [] : ["make Handler"]) + ["make X"]
        let second = made + (shape == "failing" ? [] : ["make Handler"]) + ["make X"]
        try expectServed(run, makes: first + second, nested: true,
                         failure: shape == "failing" ? ("notFound", "\"Nowhere\"") : nil)
    }
}
