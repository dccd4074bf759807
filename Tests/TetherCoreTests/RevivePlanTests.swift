// The two shapes `Graph.build` still made on its own (issue 28, `sharedRoot` / `notCached`, branches revive, maxplans):
// a dead weak instance whose object a binding still holds (`Registration.revivedObject`), which a creation
// plan's run revives where the build's walk reaches it (`Plan.takePublished`, `Graph.reviveCreation`), and a
// key a resolve further out on this thread claimed and has not made, which a nested resolve's creation
// plan makes under that claim (`Graph.madeCreation`). Each as the build: its literal factory calls, completion
// callbacks, identities and destructor order (the build's, which ran beside the plans as an oracle until branch
// twooracles: written from the run that compared them); the plan path asserted (`counted`).
import Foundation
import Synchronization
import Testing
import TetherCore

/// A binding's side of a weak key (Python's): it holds the objects it made (`held`) after the library's
/// box of one died, and answers the library's question with that object again (owned, as a factory's).
private final class HoldingReviver: Reviver, @unchecked Sendable {
    let held = Box<[UInt: Obj]>([:])
    let asked = Box(0)
    func revive(_ pointer: UnsafeMutableRawPointer) -> UnsafeMutableRawPointer? {
        asked.value += 1
        guard let obj = held.value[UInt(bitPattern: pointer)] else { return nil }
        return Ref(retaining: obj).opaque
    }
}

/// `registration` (weak) revived through `reviver`: its destructor logs "drop KEY" and lets go of the box's reference
/// only (the binding's, `reviver.held`, stays).
private func revivable(_ registration: Registration, _ fx: Fixture, _ reviver: HoldingReviver) {
    let tracker = fx.tracker, drop = "drop \(registration.key.name)"
    registration.setContext(nil) { p, _ in
        tracker.note(drop)
        Ref<Obj>(opaque: p).release()
    }
    registration.setReviver(reviver)
}

@Suite struct RevivePlanTests {
    /// W (weak, over D) under R; D also under X after W when `shared` (a later step takes one of W's own
    /// dependencies: the plan's check is not where the build's walk reaches W). Returns the fixture and W's reviver,
    /// its destructor logging "drop W" and letting go of the box's reference only (the binding's stays).
    /// `hits`: D over a singleton S1, and R over W, a singleton S2 and X (`shared` too).
    /// `completes`: D with a completion callback too.
    private func setUp(shared: Bool, hits: Bool = false, completes: Bool = false) throws -> (Fixture, HoldingReviver) {
        let fx = try Fixture()
        let reviver = HoldingReviver()
        if hits {
            try fx.register("S1", scope: .singleton)
            try fx.register("S2", scope: .singleton)
        }
        let d = try fx.register("D", hits ? [dep("S1")] : [])
        if completes { fx.onComplete(d) }
        let w = try fx.register("W", [dep("D")], scope: .weak)
        revivable(w, fx, reviver)
        fx.onComplete(w)
        if shared {
            try fx.register("X", [dep("D")])
            try fx.register("R", hits ? [dep("W"), dep("S2"), dep("X")] : [dep("W"), dep("X")])
        } else {
            try fx.register("R", [dep("W")])
        }
        return (fx, reviver)
    }

    /// What one run of the scenario saw: the tracker's log, what it checked on the way, and the path counts.
    private struct Outcome: Equatable {
        var log: [String] = []
        var seen: [String] = []
        var counts: [String: Int] = [:]
    }

    /// R resolved, its W let go of while the binding holds W's object; then R and W resolved again
    /// (W revived), and once more after the binding let go of it (W made anew).
    private func serve(shared: Bool) throws -> Outcome {
        let (fx, reviver) = try setUp(shared: shared)
        var outcome = Outcome()
        var first: Instance? = try fx.resolve("R")
        let w1 = Obj.of(first!).dep(0)
        reviver.held.value[UInt(bitPattern: w1.pointer)] = w1
        first = nil  // R and W's box go (D with it); the binding's W stays
        outcome.counts = try counted {
            let r = try fx.resolve("R")
            let w = try fx.resolve("W")
            withExtendedLifetime((r, w)) {
                outcome.seen.append("R's W revived: \(Obj.of(r).dep(0) === w1), W cached: \(w.pointer == w1.pointer), asked \(reviver.asked.value)")
            }
        }
        // The binding no longer holds it: W made anew, by its factory.
        reviver.held.value = [:]
        let direct = try fx.resolve("W")
        withExtendedLifetime(direct) { outcome.seen.append("W made anew: \(Obj.of(direct) !== w1), asked \(reviver.asked.value)") }
        outcome.log = fx.tracker.log
        #expect(fx.tracker.badDrops == 0)
        return outcome
    }

    /// The revive where the build's walk reaches W: the creation plan's run (`sharedRoot` / `notCached`
    /// before: the build only). No factory of W or D runs again, no completion callback; R's W is the
    /// object the binding held; published, the next W is a cache hit; the order of drops as the build's.
    @Test func aDeadWeakInstanceTheBindingHoldsIsRevivedByThePlan() throws {
        let planned = try serve(shared: false)
        #expect(planned.log == ["make D", "make W", "make R", "complete W", "drop R", "drop W", "drop D",
                                "make R", "drop R", "drop W", "make D", "make W", "complete W"], "\(planned.log)")
        #expect(planned.seen == ["R's W revived: true, W cached: true, asked 1", "W made anew: true, asked 2"])
        // R's served by its creation plan (W then a cache hit, before any plan).
        #expect(planned.counts == ["resolves": 1], "served by a plan: \(planned.counts)")
    }

    /// A later step takes one of W's own dependencies (X over D): the build revives W where its walk
    /// reaches it and makes D for X only, where X asks (`notCached` before: the build's). The creation
    /// plan's early check for W (before D, `Plan.PublishedVariant`) revives it there and the run goes on in
    /// that variant: D made for X, W's factory not called, the same calls and drops as the build's.
    @Test func aReviveWhoseDependencyALaterStepTakesIsThePlans() throws {
        let planned = try serve(shared: true)
        #expect(planned.log == ["make D", "make W", "make X", "make R", "complete W", "drop R", "drop X", "drop W", "drop D",
                                "make D", "make X", "make R", "drop R", "drop X", "drop D", "drop W", "make D", "make W", "complete W"],
                "\(planned.log)")
        #expect(planned.seen == ["R's W revived: true, W cached: true, asked 1", "W made anew: true, asked 2"])
        #expect(planned.counts == ["resolves": 1], "served by a plan: \(planned.counts)")
    }

    /// `aReviveWhoseDependencyALaterStepTakesIsThePlans` traced (`notCached` before: a traced run did not switch to a
    /// `PublishedVariant`, the build served it): R over W, S2 and X; W (weak, revived) and X over D, D over S1; S1 and S2
    /// cached singletons. The build revives W where it asks (no hit), finds S2, then makes D for X, finding S1 there: the
    /// variant's run tells its hits in that walk (`Plan.tellPublishedInWalk`), S2's before S1's, not in step order.
    @Test func aTracedReviveWhoseDependencyALaterStepTakesIsThePlans() throws {
        let (fx, reviver) = try setUp(shared: true, hits: true)
        var outcome = Outcome()
        var first: Instance? = try fx.resolve("R")
        let w1 = Obj.of(first!).dep(0)
        reviver.held.value[UInt(bitPattern: w1.pointer)] = w1
        first = nil
        let events = Box<[String]>([])
        fx.container.setTrace { event in events.withLock { $0.append("\(event.kind) \(event.key.name)") } }
        outcome.counts = try counted {
            let r = try fx.resolve("R")
            withExtendedLifetime(r) { outcome.seen.append("R's W revived: \(Obj.of(r).dep(0) === w1), asked \(reviver.asked.value)") }
        }
        fx.container.setTrace(nil)
        outcome.seen += events.withLock { $0 }
        outcome.log = fx.tracker.log
        #expect(fx.tracker.badDrops == 0)
        expectLiteral(outcome.log, ["make S1", "make D", "make W", "make S2", "make X", "make R", "complete W", "drop R", "drop X", "drop W",
                "drop D", "make D", "make X", "make R", "drop R", "drop X", "drop D", "drop W"])
        expectLiteral(outcome.seen, ["R's W revived: true, asked 1", "resolveStart R", "cacheHit S2", "cacheHit S1", "factoryCall D",
                "factoryReturn D", "edge D", "factoryCall X", "factoryReturn X", "edge X", "factoryCall R",
                "factoryReturn R", "edge R", "edge R", "edge R", "resolveEnd R", "destroy R", "destroy X", "destroy D",
                "destroy W"])
        #expect(outcome.seen.first == "R's W revived: true, asked 1")
        let calls = outcome.seen.filter { $0.hasPrefix("cacheHit") || $0.hasPrefix("factoryCall") }
        #expect(calls == ["cacheHit S2", "cacheHit S1", "factoryCall D", "factoryCall X", "factoryCall R"], "\(outcome.seen)")
        #expect(outcome.counts == ["resolves": 1], "served by a plan: \(outcome.counts)")
    }

    /// `aReviveWhoseDependencyALaterStepTakesIsThePlans` in a run up to a cut (`notCached` before: a cut run did not switch
    /// to a `PublishedVariant`, the build served it): Y's factory resolves R (nested) while Y is under construction, R over
    /// W (weak, revived), a cached singleton S and X, X over Y. `deep` false: W over D, X over D and Y: the build revives W, makes D for X, then
    /// meets Y (the plan alone would make D under W and W's factory, then stop at Y). `deep`: W over A and Y, X over Y:
    /// the build revives W and meets Y under X before making anything (the plan alone would make A). The run revives W at
    /// its early check and goes on in the variant up to where that walk asks for Y (`Plan.cutPosition`): the same calls,
    /// drops and the build's cycle message (its path through X, the variant's asker, `Plan.opened(before:_:parents:)`).
    /// `traced`: with a trace hook, the same events (S's hit told in that walk, `Plan.Walk.cut`).
    /// `slots`: D over a RESOLVER slot, its factory getting a graph-scoped G through it (built by the resolver, let go of
    /// in its place among the variant's made steps, `letGoBuilt`).
    @Test(arguments: [(false, false, false), (true, false, false), (false, true, false), (true, true, false), (false, false, true),
                      (false, true, true)])
    func aReviveWhoseDependencyALaterStepTakesInARunUpToACutIsThePlans(deep: Bool, traced: Bool, slots: Bool) throws {
        let fx = try Fixture()
        let reviver = HoldingReviver()
        let nesting = Box(false), messages = Box<[String]>([])
        try fx.register("Y") { _ in
            guard nesting.value else { return }
            do { _ = try fx.resolve("R") } catch let e as TetherError { messages.value.append("\(e.code): \(e.message)") }
        }
        try fx.register("G")
        if slots {
            try fx.register("D", [.resolver]) { obj in
                guard nesting.value else { return }
                _ = try #require(fx.bridge.resolver(obj.words[0])).get(Key("G"))
            }
        } else {
            try fx.register("D")
        }
        try fx.register("A")
        let w = try fx.register("W", deep ? [dep("A"), dep("Y")] : [dep("D")], scope: .weak)
        let tracker = fx.tracker
        w.setContext(nil) { p, _ in
            tracker.note("drop W")
            Ref<Obj>(opaque: p).release()
        }
        w.setReviver(reviver)
        try fx.register("X", deep ? [dep("Y")] : [dep("D"), dep("Y")])
        try fx.register("S", scope: .singleton)
        try fx.register("R", [dep("W"), dep("S"), dep("X")])
        var outcome = Outcome()
        var first: Instance? = try fx.resolve("R")
        let w1 = Obj.of(first!).dep(0)
        reviver.held.value[UInt(bitPattern: w1.pointer)] = w1
        first = nil  // R and W's box go; the binding's W stays
        fx.tracker.note("nesting")
        let events = Box<[String]>([])
        if traced { fx.container.setTrace { event in events.withLock { $0.append("\(event.kind) \(event.key.name)") } } }
        nesting.value = true
        outcome.counts = try counted { _ = try fx.resolve("Y") }
        nesting.value = false
        fx.container.setTrace(nil)
        outcome.seen = messages.value + [("asked \(reviver.asked.value)")] + events.withLock { $0 }
        outcome.log = fx.tracker.log
        #expect(fx.tracker.badDrops == 0)
        let expectedLog: [String: [String]] = [
            "false false false": ["make D", "make W", "make S", "make Y", "make X", "make R", "drop R", "drop X", "drop Y", "drop W",
                    "drop D", "nesting", "make D", "drop D", "drop W", "make Y", "drop Y"],
            "false false true": ["make D", "make W", "make S", "make Y", "make X", "make R", "drop R", "drop X", "drop Y", "drop W",
                    "drop D", "nesting", "make G", "make D", "drop D", "drop G", "drop W", "make Y", "drop Y"],
            "false true false": ["make D", "make W", "make S", "make Y", "make X", "make R", "drop R", "drop X", "drop Y", "drop W",
                    "drop D", "nesting", "make D", "drop D", "drop W", "make Y", "drop Y"],
            "false true true": ["make D", "make W", "make S", "make Y", "make X", "make R", "drop R", "drop X", "drop Y", "drop W",
                    "drop D", "nesting", "make G", "make D", "drop D", "drop G", "drop W", "make Y", "drop Y"],
            "true false false": ["make A", "make Y", "make W", "make S", "make X", "make R", "drop R", "drop X", "drop W", "drop Y",
                    "drop A", "nesting", "drop W", "make Y", "drop Y"],
            "true true false": ["make A", "make Y", "make W", "make S", "make X", "make R", "drop R", "drop X", "drop W", "drop Y",
                    "drop A", "nesting", "drop W", "make Y", "drop Y"],
        ]
        expectLiteral(outcome.log, try #require(expectedLog["\(deep) \(traced) \(slots)"]))
        let expectedSeen: [String: [String]] = [
            "false false false": ["cycle: dependency cycle through constructors: \"Y\" -> \"R\" -> \"X\" -> \"Y\"; the factory of \"Y\" resolves \"R\", whose construction needs \"Y\" before that factory returned; take \"R\" from the resolver of a completion callback of \"Y\" instead (tether_on_complete), once \"Y\" is made, weakly (tether_resolver_get_weak) or with the slot on \"Y\" declared TETHER_WEAK",
                    "asked 1"],
            "false false true": ["cycle: dependency cycle through constructors: \"Y\" -> \"R\" -> \"X\" -> \"Y\"; the factory of \"Y\" resolves \"R\", whose construction needs \"Y\" before that factory returned; take \"R\" from the resolver of a completion callback of \"Y\" instead (tether_on_complete), once \"Y\" is made, weakly (tether_resolver_get_weak) or with the slot on \"Y\" declared TETHER_WEAK",
                    "asked 1"],
            "false true false": ["cycle: dependency cycle through constructors: \"Y\" -> \"R\" -> \"X\" -> \"Y\"; the factory of \"Y\" resolves \"R\", whose construction needs \"Y\" before that factory returned; take \"R\" from the resolver of a completion callback of \"Y\" instead (tether_on_complete), once \"Y\" is made, weakly (tether_resolver_get_weak) or with the slot on \"Y\" declared TETHER_WEAK",
                    "asked 1", "resolveStart Y", "factoryCall Y", "resolveStart R", "cacheHit S", "factoryCall D",
                    "factoryReturn D", "destroy D", "destroy W", "resolveEnd R", "factoryReturn Y", "resolveEnd Y",
                    "destroy Y"],
            "false true true": ["cycle: dependency cycle through constructors: \"Y\" -> \"R\" -> \"X\" -> \"Y\"; the factory of \"Y\" resolves \"R\", whose construction needs \"Y\" before that factory returned; take \"R\" from the resolver of a completion callback of \"Y\" instead (tether_on_complete), once \"Y\" is made, weakly (tether_resolver_get_weak) or with the slot on \"Y\" declared TETHER_WEAK",
                    "asked 1", "resolveStart Y", "factoryCall Y", "resolveStart R", "cacheHit S", "factoryCall D",
                    "factoryCall G", "factoryReturn G", "factoryReturn D", "edge D", "destroy D", "destroy G", "destroy W",
                    "resolveEnd R", "factoryReturn Y", "resolveEnd Y", "destroy Y"],
            "true false false": ["cycle: dependency cycle through constructors: \"Y\" -> \"R\" -> \"X\" -> \"Y\"; the factory of \"Y\" resolves \"R\", whose construction needs \"Y\" before that factory returned; take \"R\" from the resolver of a completion callback of \"Y\" instead (tether_on_complete), once \"Y\" is made, weakly (tether_resolver_get_weak) or with the slot on \"Y\" declared TETHER_WEAK",
                    "asked 1"],
            "true true false": ["cycle: dependency cycle through constructors: \"Y\" -> \"R\" -> \"X\" -> \"Y\"; the factory of \"Y\" resolves \"R\", whose construction needs \"Y\" before that factory returned; take \"R\" from the resolver of a completion callback of \"Y\" instead (tether_on_complete), once \"Y\" is made, weakly (tether_resolver_get_weak) or with the slot on \"Y\" declared TETHER_WEAK",
                    "asked 1", "resolveStart Y", "factoryCall Y", "resolveStart R", "cacheHit S", "destroy W",
                    "resolveEnd R", "factoryReturn Y", "resolveEnd Y", "destroy Y"],
        ]
        expectLiteral(outcome.seen, try #require(expectedSeen["\(deep) \(traced) \(slots)"]))
        let nested = Array(outcome.log.drop { $0 != "nesting" })
        #expect(nested == ["nesting"] + (deep ? ["drop W"] : slots ? ["make G", "make D", "drop D", "drop G", "drop W"] : ["make D", "drop D", "drop W"])
                + ["make Y", "drop Y"], "\(nested)")
        #expect(outcome.seen.first?.contains("\"Y\" -> \"R\" -> \"X\" -> \"Y\"") == true, "\(outcome.seen)")
        #expect(outcome.seen.contains("asked 1"), "\(outcome.seen)")
        // Traced: S's hit after W's revive (no event), before X's frame meets Y.
        let calls = outcome.seen.filter { $0.hasPrefix("cacheHit") || $0.hasPrefix("factoryCall") }
        #expect(calls == (traced ? ["factoryCall Y", "cacheHit S"] + (deep ? [] : ["factoryCall D"] + (slots ? ["factoryCall G"] : [])) : []),
                "\(outcome.seen)")
        // Y's plan and R's nested creation plan, run up to Y.
        #expect(outcome.counts == ["resolves": 2], "served by a plan: \(outcome.counts)")
    }

    /// A dead weak W the binding holds in a plan over a container step (Q over a container-scoped Session and W,
    /// resolved from a child; `notCached` before: `claimWithContainerSteps` declined any revive, the build's). W's
    /// check is where the build's walk reaches it (nothing after W takes D): the creation plan's run revives it
    /// there, no factory of W or D, no completion callback; W published, the next W a cache hit. `later`: Q over
    /// W, Session and X (`order`: the keys of Q's dependencies after W), X over D: the build revives W where it asks
    /// and makes D for X only (D, Session and Y with completion callbacks, queued in the order made). `sessionOverD`:
    /// Session over D too. `sessionCached`: the child's Session resolved first. `traced`: Q's resolve with a trace hook on the
    /// child, its events appended to `seen`.
    private func serveUnderContainer(later: Bool = false, order: [String] = ["Session", "X"],
                                     sessionOverD: Bool = false, sessionCached: Bool = false, traced: Bool = false) throws -> Outcome {
        let (fx, reviver) = try setUp(shared: false, completes: later)
        let session = try fx.register("Session", sessionOverD ? [dep("D")] : [], scope: .container)
        if later {
            fx.onComplete(session)
            try fx.register("X", [dep("D")])
            fx.onComplete(try fx.register("Y"))
        }
        try fx.register("Q", later ? [dep("W")] + order.map { dep($0) } : [dep("Session"), dep("W")])
        let child = try fx.child()
        var outcome = Outcome()
        let w1 = try Obj.of(fx.resolve("W"))  // W's box goes at once (D with it); the binding's W stays
        reviver.held.value[UInt(bitPattern: w1.pointer)] = w1
        let cached = sessionCached ? try fx.resolve("Session", in: child) : nil
        let events = Box<[String]>([])
        if traced { child.setTrace { event in events.withLock { $0.append("\(event.kind) \(event.key.name)") } } }
        outcome.counts = try counted {
            let q = try fx.resolve("Q", in: child)
            child.setTrace(nil)
            let w = try fx.resolve("W")
            withExtendedLifetime((q, w)) {
                outcome.seen.append("Q's W revived: \(Obj.of(q).dep(later ? 0 : 1) === w1), W cached: \(w.pointer == w1.pointer), asked \(reviver.asked.value)")
            }
        }
        outcome.seen += events.withLock { $0 }
        withExtendedLifetime(cached) {}
        _ = try child.close()
        outcome.log = fx.tracker.log
        #expect(fx.tracker.badDrops == 0)
        return outcome
    }

    @Test func aReviveInAPlanOverAContainerStepIsThePlans() throws {
        let planned = try serveUnderContainer()
        #expect(planned.log == ["make D", "make W", "complete W", "drop W", "drop D", "make Session", "make Q", "drop Q", "drop W", "drop Session"],
                "\(planned.log)")
        #expect(planned.seen == ["Q's W revived: true, W cached: true, asked 1"], "\(planned.seen)")
        #expect(planned.counts == ["resolves": 1], "served by a plan: \(planned.counts)")
    }

    /// Q over W, Session and X, X over D, resolved from a child (`notCached` before: W's check is not where the build's
    /// walk reaches it, X takes D, and a plan over container steps had no `PublishedVariant` to go on in). The build revives
    /// W where it asks, makes Session, then D for X only. The creation plan's early check for W (before D) revives it
    /// there and the run goes on in the variant (`Plan.publishedVariants` over container steps): the same calls and drops.
    /// `order` ["Session", "Y", "X"]: a step between Session and X (D made after Y, where X asks); ["X", "Session"]: Session after X;
    /// `sessionCached`: the child's Session cached (the `cachedVariant`'s run, its own variant).
    /// `sessionOverD`: Session over D too: D, no longer asked for under W, is asked for under Session in the build's walk then
    /// (`notCached` before branch revivev: a container step's steps the variant did not keep): the variant makes it there
    /// (`PublishedVariant.movesUnderContainer`), its completion callback queued before Session's; `order` ["Session"]: only
    /// Session takes D past W; ["X", "Session"]: X asks for D first, none moved under Session. With `sessionCached` too
    /// (`notCached` before branch revsess): the claims find Session cached and switch to the `cachedVariant`, Session a leaf,
    /// whose own `PublishedVariant` makes D where X asks (none: ["Session"], ["Session", "Y"]).
    @Test(arguments: [(["Session", "X"], false, false), (["Session", "Y", "X"], false, false), (["X", "Session"], false, false),
                      (["Session", "Y", "X"], false, true), (["Session", "X"], true, false), (["Session", "Y", "X"], true, false),
                      (["X", "Session"], true, false), (["Session", "Y", "X"], true, true), (["Session"], true, false), (["Session", "Y"], true, false),
                      (["Session", "X"], true, true), (["X", "Session"], true, true), (["Session"], true, true), (["Session", "Y"], true, true),
                      (["Session", "X"], false, true), (["X", "Session"], false, true)])
    func aReviveWhoseDependencyALaterStepTakesUnderAContainerStepIsThePlans(order: [String], sessionOverD: Bool, sessionCached: Bool) throws {
        let planned = try serveUnderContainer(later: true, order: order, sessionOverD: sessionOverD, sessionCached: sessionCached)
        let expectedLog: [String: [String]] = [
            "[\"Session\", \"X\"] false false": ["make D", "make W", "complete D", "complete W", "drop W", "drop D", "make Session", "make D", "make X",
                    "make Q", "complete Session", "complete D", "drop Q", "drop X", "drop D", "drop W", "drop Session"],
            "[\"Session\", \"X\"] false true": ["make D", "make W", "complete D", "complete W", "drop W", "drop D", "make Session", "complete Session",
                    "make D", "make X", "make Q", "complete D", "drop Q", "drop X", "drop D", "drop W"],
            "[\"Session\", \"X\"] true true": ["make D", "make W", "complete D", "complete W", "drop W", "drop D", "make D", "make Session", "complete D",
                    "complete Session", "make D", "make X", "make Q", "complete D", "drop Q", "drop X", "drop D", "drop W"],
            "[\"Session\", \"X\"] true false": ["make D", "make W", "complete D", "complete W", "drop W", "drop D", "make D", "make Session", "make X",
                    "make Q", "complete D", "complete Session", "drop Q", "drop X", "drop W", "drop Session", "drop D"],
            "[\"Session\", \"Y\", \"X\"] false false": ["make D", "make W", "complete D", "complete W", "drop W", "drop D", "make Session", "make Y", "make D",
                    "make X", "make Q", "complete Session", "complete Y", "complete D", "drop Q", "drop X", "drop D",
                    "drop Y", "drop W", "drop Session"],
            "[\"Session\", \"Y\", \"X\"] false true": ["make D", "make W", "complete D", "complete W", "drop W", "drop D", "make Session", "complete Session",
                    "make Y", "make D", "make X", "make Q", "complete Y", "complete D", "drop Q", "drop X", "drop D",
                    "drop Y", "drop W"],
            "[\"Session\", \"Y\", \"X\"] true false": ["make D", "make W", "complete D", "complete W", "drop W", "drop D", "make D", "make Session", "make Y",
                    "make X", "make Q", "complete D", "complete Session", "complete Y", "drop Q", "drop X", "drop Y",
                    "drop W", "drop Session", "drop D"],
            "[\"Session\", \"Y\", \"X\"] true true": ["make D", "make W", "complete D", "complete W", "drop W", "drop D", "make D", "make Session", "complete D",
                    "complete Session", "make Y", "make D", "make X", "make Q", "complete Y", "complete D", "drop Q",
                    "drop X", "drop D", "drop Y", "drop W"],
            "[\"Session\", \"Y\"] true false": ["make D", "make W", "complete D", "complete W", "drop W", "drop D", "make D", "make Session", "make Y",
                    "make Q", "complete D", "complete Session", "complete Y", "drop Q", "drop Y", "drop W", "drop Session",
                    "drop D"],
            "[\"Session\", \"Y\"] true true": ["make D", "make W", "complete D", "complete W", "drop W", "drop D", "make D", "make Session", "complete D",
                    "complete Session", "make Y", "make Q", "complete Y", "drop Q", "drop Y", "drop W"],
            "[\"Session\"] true true": ["make D", "make W", "complete D", "complete W", "drop W", "drop D", "make D", "make Session", "complete D",
                    "complete Session", "make Q", "drop Q", "drop W"],
            "[\"Session\"] true false": ["make D", "make W", "complete D", "complete W", "drop W", "drop D", "make D", "make Session", "make Q",
                    "complete D", "complete Session", "drop Q", "drop W", "drop Session", "drop D"],
            "[\"X\", \"Session\"] false false": ["make D", "make W", "complete D", "complete W", "drop W", "drop D", "make D", "make X", "make Session",
                    "make Q", "complete D", "complete Session", "drop Q", "drop X", "drop D", "drop W", "drop Session"],
            "[\"X\", \"Session\"] false true": ["make D", "make W", "complete D", "complete W", "drop W", "drop D", "make Session", "complete Session",
                    "make D", "make X", "make Q", "complete D", "drop Q", "drop X", "drop D", "drop W"],
            "[\"X\", \"Session\"] true true": ["make D", "make W", "complete D", "complete W", "drop W", "drop D", "make D", "make Session", "complete D",
                    "complete Session", "make D", "make X", "make Q", "complete D", "drop Q", "drop X", "drop D", "drop W"],
            "[\"X\", \"Session\"] true false": ["make D", "make W", "complete D", "complete W", "drop W", "drop D", "make D", "make X", "make Session",
                    "make Q", "complete D", "complete Session", "drop Q", "drop X", "drop W", "drop Session", "drop D"],
        ]
        expectLiteral(planned.log, try #require(expectedLog["\(order) \(sessionOverD) \(sessionCached)"]))
        #expect(planned.seen == ["Q's W revived: true, W cached: true, asked 1"], "\(planned.seen)")
        // After W's first box went: no factory of W, D made where X asks (after Session's and Y's, as ordered).
        let made = Array(planned.log.drop { $0 != "drop D" }.dropFirst()).filter { $0.hasPrefix("make") || $0.hasPrefix("complete") }
        // (Session cached: made before, its hit no factory. D made by the first that asks for it. The completion
        // callbacks in the order made: the build's queue, `Plan.enterRequest` in the variant's order.)
        let asking = order.filter { !sessionCached || $0 != "Session" }
        let dTaker = asking.first { $0 == "X" || $0 == "Session" && sessionOverD }
        let makes = asking.flatMap { $0 == dTaker ? ["D", $0] : [$0] } + ["Q"]
        let expected = (sessionCached ? (sessionOverD ? ["make D", "make Session", "complete D", "complete Session"] : ["make Session", "complete Session"]) : []) + makes.map { "make \($0)" }
            + makes.filter { ["D", "Session", "Y"].contains($0) }.map { "complete \($0)" }
        #expect(made == expected, "\(planned.log)")
        // (`sessionOverD` with the child's Session cached: `notCached` before branch revsess, the build's, the plan with Session a
        // container-scoped leaf recording no `PublishedVariant` and the plan's own variant making D under Session, before Y;
        // its claims switch to that `cachedVariant` now, whose variant makes D where X asks, as the build.)
        #expect(planned.counts == ["resolves": 1], "\(planned.counts)")
    }

    /// `aReviveWhoseDependencyALaterStepTakesUnderAContainerStepIsThePlans` traced, `order` ["Session", "Y", "X"]: the build's
    /// events (W revived, no hit; Session's hit where it asks when cached). `sessionCached`: the plans' since branch revsess
    /// (`notCached` before): the claims switch to the `cachedVariant`, which has no container step, so the traced run goes on
    /// in its `PublishedVariant` telling its hits in the build's walk (`Plan.tellPublishedInWalk`). Not cached: still the
    /// build's (`notCached`: a traced run over container steps does not switch to a `PublishedVariant`), pinned here.
    @Test(arguments: [(false, false), (false, true), (true, false), (true, true)])
    func aTracedReviveUnderAContainerStep(sessionOverD: Bool, sessionCached: Bool) throws {
        let planned = try serveUnderContainer(later: true, order: ["Session", "Y", "X"], sessionOverD: sessionOverD, sessionCached: sessionCached,
                                              traced: true)
        let expectedLog: [String: [String]] = [
            "false false": ["make D", "make W", "complete D", "complete W", "drop W", "drop D", "make Session", "make Y", "make D", "make X",
                    "make Q", "complete Session", "complete Y", "complete D", "drop Q", "drop X", "drop D", "drop Y", "drop W",
                    "drop Session"],
            "false true": ["make D", "make W", "complete D", "complete W", "drop W", "drop D", "make Session", "complete Session", "make Y",
                    "make D", "make X", "make Q", "complete Y", "complete D", "drop Q", "drop X", "drop D", "drop Y", "drop W"],
            "true false": ["make D", "make W", "complete D", "complete W", "drop W", "drop D", "make D", "make Session", "make Y", "make X",
                    "make Q", "complete D", "complete Session", "complete Y", "drop Q", "drop X", "drop Y", "drop W", "drop Session",
                    "drop D"],
            "true true": ["make D", "make W", "complete D", "complete W", "drop W", "drop D", "make D", "make Session", "complete D",
                    "complete Session", "make Y", "make D", "make X", "make Q", "complete Y", "complete D", "drop Q", "drop X", "drop D",
                    "drop Y", "drop W"],
        ]
        expectLiteral(planned.log, try #require(expectedLog["\(sessionOverD) \(sessionCached)"]))
        let madeAll = ["Q's W revived: true, W cached: true, asked 1", "resolveStart Q"]
        let tail = ["factoryCall X", "factoryReturn X", "edge X", "factoryCall Q", "factoryReturn Q", "edge Q", "edge Q", "edge Q", "edge Q"]
        let expectedSeen: [String: [String]] = [
            "false false": madeAll + ["factoryCall Session", "factoryReturn Session", "factoryCall Y", "factoryReturn Y", "factoryCall D",
                    "factoryReturn D"] + tail + ["complete Session", "complete Y", "complete D", "resolveEnd Q"],
            "false true": madeAll + ["cacheHit Session", "factoryCall Y", "factoryReturn Y", "factoryCall D", "factoryReturn D"] + tail
                    + ["complete Y", "complete D", "resolveEnd Q"],
            "true false": madeAll + ["factoryCall D", "factoryReturn D", "factoryCall Session", "factoryReturn Session", "edge Session",
                    "factoryCall Y", "factoryReturn Y"] + tail + ["complete D", "complete Session", "complete Y", "resolveEnd Q"],
            "true true": madeAll + ["cacheHit Session", "factoryCall Y", "factoryReturn Y", "factoryCall D", "factoryReturn D"] + tail
                    + ["complete Y", "complete D", "resolveEnd Q"],
        ]
        expectLiteral(planned.seen, try #require(expectedSeen["\(sessionOverD) \(sessionCached)"]))
        #expect(planned.counts == (sessionCached ? ["resolves": 1] : ["resolves": 1, "notCached": 1]), "\(planned.counts)")
    }

    /// `aReviveWhoseDependencyALaterStepTakesUnderAContainerStepIsThePlans` over two container steps, Session and Session2, each
    /// over D: Q over W, Session, Session2, Y and X, resolved from a child whose `cached` ones were resolved first. The build
    /// revives W, takes the cached ones, and makes D where the first step still made asks for it (under the first uncached
    /// one; with both cached, for X after Y). The claims find some cached and switch to the plan for that set (`notCached`
    /// before branch revsess; its `mixedVariant`, or the `cachedVariant` for both), whose own `PublishedVariant` serves it.
    @Test(arguments: [["Session"], ["Session2"], ["Session", "Session2"]])
    func aReviveUnderTwoContainerStepsSomeCached(cached: [String]) throws {
        let (fx, reviver) = try setUp(shared: false, completes: true)
        try fx.register("Session", [dep("D")], scope: .container)
        try fx.register("Session2", [dep("D")], scope: .container)
        try fx.register("X", [dep("D")])
        fx.onComplete(try fx.register("Y"))
        try fx.register("Q", [dep("W"), dep("Session"), dep("Session2"), dep("Y"), dep("X")])
        let child = try fx.child()
        var outcome = Outcome()
        let w1 = try Obj.of(fx.resolve("W"))
        reviver.held.value[UInt(bitPattern: w1.pointer)] = w1
        let held = try cached.map { try fx.resolve($0, in: child) }
        fx.tracker.note("resolving")
        outcome.counts = try counted {
            let q = try fx.resolve("Q", in: child)
            let w = try fx.resolve("W")
            withExtendedLifetime((q, w)) {
                outcome.seen.append("Q's W revived: \(Obj.of(q).dep(0) === w1), W cached: \(w.pointer == w1.pointer), asked \(reviver.asked.value)")
            }
        }
        withExtendedLifetime(held) {}
        _ = try child.close()
        outcome.log = fx.tracker.log
        #expect(fx.tracker.badDrops == 0)
        let before = ["make D", "make W", "complete D", "complete W", "drop W", "drop D"]
        let expectedLog: [String: [String]] = [
            "[\"Session\"]": before + ["make D", "make Session", "complete D", "resolving", "make D", "make Session2", "make Y", "make X",
                    "make Q", "complete D", "complete Y", "drop Q", "drop X", "drop Y", "drop W", "drop Session2", "drop D"],
            "[\"Session2\"]": before + ["make D", "make Session2", "complete D", "resolving", "make D", "make Session", "make Y", "make X",
                    "make Q", "complete D", "complete Y", "drop Q", "drop X", "drop Y", "drop W", "drop Session", "drop D"],
            "[\"Session\", \"Session2\"]": before + ["make D", "make Session", "complete D", "make D", "make Session2", "complete D", "resolving",
                    "make Y", "make D", "make X", "make Q", "complete Y", "complete D", "drop Q", "drop X", "drop D", "drop Y", "drop W"],
        ]
        expectLiteral(outcome.log, try #require(expectedLog["\(cached)"]))
        // After "resolving": no factory of W; D made once, by the first uncached Session or else by X, after Y.
        let made = outcome.log.drop { $0 != "resolving" }.filter { $0.hasPrefix("make") }
        let uncached = ["Session", "Session2"].filter { !cached.contains($0) }
        #expect(made == (uncached.isEmpty ? ["make Y", "make D", "make X", "make Q"]
                         : ["make D"] + uncached.map { "make \($0)" } + ["make Y", "make X", "make Q"]), "\(outcome.log)")
        #expect(outcome.seen == ["Q's W revived: true, W cached: true, asked 1"], "\(outcome.seen)")
        #expect(outcome.counts == ["resolves": 1], "\(outcome.counts)")
    }

    /// `aReviveWhoseDependencyALaterStepTakesUnderAContainerStepIsThePlans` failing past the revive: Q over W, Session, Y and
    /// X, X over D failing. The variant's run lets go of what it made last made first in its order (D, Y, Session: not step
    /// order, where D comes first) and the revived box, as the build's abort; the next resolve revives W again.
    /// `sessionOverD`: Session over D too, D made under it in the variant (`PublishedVariant.movesUnderContainer`, since branch
    /// revivev): let go of after Session, as made.
    @Test(arguments: [false, true])
    func aFailureInAVariantOverAContainerStepLetsGoInItsOrder(sessionOverD: Bool) throws {
        let (fx, reviver) = try setUp(shared: false)
        let fail = Box(false)
        try fx.register("Session", sessionOverD ? [dep("D")] : [], scope: .container)
        try fx.register("Y")
        try fx.register("X", [dep("D")]) { _ in if fail.value { throw CallbackFailure(reason: "no X") } }
        try fx.register("Q", [dep("W"), dep("Session"), dep("Y"), dep("X")])
        let child = try fx.child()
        var outcome = Outcome()
        let w1 = try Obj.of(fx.resolve("W"))
        reviver.held.value[UInt(bitPattern: w1.pointer)] = w1
        fx.tracker.note("failing")
        outcome.counts = try counted {
            fail.value = true
            let error = expectError(.factoryFailed, "no X") { try fx.resolve("Q", in: child) }
            outcome.seen.append("failed: \(error != nil), asked \(reviver.asked.value)")
            fail.value = false
            let w = try fx.resolve("W")
            outcome.seen.append("W revived again: \(Obj.of(w) === w1), asked \(reviver.asked.value)")
        }
        _ = try child.close()
        outcome.log = fx.tracker.log
        #expect(fx.tracker.badDrops == 0)
        let expectedLog: [String: [String]] = [
            "false": ["make D", "make W", "complete W", "drop W", "drop D", "failing", "make Session", "make Y", "make D",
                    "drop D", "drop Y", "drop Session", "drop W", "drop W"],
            "true": ["make D", "make W", "complete W", "drop W", "drop D", "failing", "make D", "make Session", "make Y",
                    "drop Y", "drop Session", "drop D", "drop W", "drop W"],
        ]
        expectLiteral(outcome.log, try #require(expectedLog["\(sessionOverD)"]))
        #expect(outcome.seen == ["failed: true, asked 1", "W revived again: true, asked 2"], "\(outcome.seen)")
        let failing = Array(outcome.log.drop { $0 != "failing" })
        #expect(failing == (sessionOverD ? ["failing", "make D", "make Session", "make Y", "drop Y", "drop Session", "drop D", "drop W", "drop W"]
                            : ["failing", "make Session", "make Y", "make D", "drop D", "drop Y", "drop Session", "drop W", "drop W"]), "\(failing)")
        #expect(outcome.counts == ["resolves": 2], "\(outcome.counts)")
    }

    /// A weak root revived (`sharedRoot` before): its creation plan takes the object and publishes it;
    /// a revive failing later in the plan's graph (R over W and a failing F) drops the revived box once,
    /// publishes nothing, and the binding's object is asked for again by the next resolve.
    @Test func aRevivedRootAndAFailureAfterARevive() throws {
        let (fx, reviver) = try setUp(shared: false)
        let fail = Box(false)
        try fx.register("F") { _ in if fail.value { throw CallbackFailure(reason: "no F") } }
        try fx.register("S", [dep("W"), dep("F")])
        var outcome = Outcome()
        let w1 = try Obj.of(fx.resolve("W"))
        reviver.held.value[UInt(bitPattern: w1.pointer)] = w1
        outcome.counts = try counted {
            fail.value = true
            let error = expectError(.factoryFailed, "no F") { try fx.resolve("S") }
            outcome.seen.append("failed: \(error != nil), asked \(reviver.asked.value)")
            fail.value = false
            let w = try fx.resolve("W")
            outcome.seen.append("root revived: \(Obj.of(w) === w1), asked \(reviver.asked.value)")
        }
        outcome.log = fx.tracker.log
        #expect(fx.tracker.badDrops == 0)
        // The first W's box and D, the revived box the failure let go of, the root's revived box.
        #expect(outcome.log == ["make D", "make W", "complete W", "drop W", "drop D", "drop W", "drop W"], "\(outcome.log)")
        #expect(outcome.seen == ["failed: true, asked 1", "root revived: true, asked 2"])
        #expect(outcome.counts == ["resolves": 2], "\(outcome.counts)")
    }

    /// A factory resolving a singleton its resolve further out claimed and has not made (R over S1 and S2,
    /// both claimed by R's first claim; S1's factory resolves S2): the nested resolve's creation plan makes
    /// S2 under that claim and publishes it (`sharedRoot` before: the build's), the outer one takes it
    /// (`takePublished`): S2 made once, the same instance everywhere, the same drops.
    @Test func aNestedResolveMakesAKeyClaimedFurtherOutUnderThatClaim() throws {
        let fx = try Fixture()
        let nested = Box<Instance?>(nil)
        let container = fx.container
        try fx.register("G")
        try fx.register("S2", [dep("G")], scope: .singleton)
        try fx.register("S1", scope: .singleton) { _ in nested.value = try container.resolve(Key("S2")) }
        try fx.register("R", [dep("S1"), dep("S2")])
        var outcome = Outcome()
        outcome.counts = try counted {
            let r = try fx.resolve("R")
            outcome.seen.append("one S2: \(nested.value?.pointer == Obj.of(r).depPointer(1))")
            nested.value = nil
            _ = try fx.resolve("R")
        }
        outcome.log = fx.tracker.log
        #expect(fx.tracker.badDrops == 0 && fx.tracker.made("S2") == 1)
        _ = try fx.container.close()
        outcome.log = fx.tracker.log
        expectLiteral(outcome.log, ["make G", "make S2", "make S1", "make R", "make R", "drop R", "drop R", "drop S1", "drop S2", "drop G"])
        #expect(outcome.seen == ["one S2: true"])
        #expect(outcome.counts == ["resolves": 3], "R, S2 nested, R again: \(outcome.counts)")
    }
    /// T over S over W; S's factory resolves W while T's resolve, which revived W (the binding still holding
    /// its object), is under way. A revived instance was made and finished long ago, not an unfinished
    /// creation of this thread: the nested resolve is handed it (`SharedCache.Cell.revived`), never refused
    /// it, no factory runs (corpus `a_nested_resolve_of_a_live_weak_instance_its_outer_resolve_revived_answers_it`).
    @Test func aNestedResolveIsHandedTheInstanceItsOuterResolveRevived() throws {
        let (fx, reviver) = try setUp(shared: false)
        let held = Box<Obj?>(nil)
        let answers = Box<[String]>([])
        try fx.register("S", [dep("W")]) { _ in
            do {
                let w = try fx.resolve("W")
                answers.value.append("S's W is the revived one: \(Obj.of(w) === held.value)")
            } catch let e as TetherError { answers.value.append("S's W: \(e.code)") }
        }
        try fx.register("T", [dep("S")])
        var outcome = Outcome()
        held.value = try Obj.of(fx.resolve("W"))
        reviver.held.value[UInt(bitPattern: held.value!.pointer)] = held.value!
        outcome.counts = try counted {
            let t = try fx.resolve("T")
            withExtendedLifetime(t) { outcome.seen.append("T's W revived: \(Obj.of(t).dep(0).dep(0) === held.value), asked \(reviver.asked.value)") }
        }
        outcome.seen += answers.value
        outcome.log = fx.tracker.log
        #expect(fx.tracker.badDrops == 0)
        #expect(outcome.seen == ["T's W revived: true, asked 1", "S's W is the revived one: true"], "\(outcome.seen)")
        #expect(outcome.log == ["make D", "make W", "complete W", "drop W", "drop D", "make S", "make T",
                                    "drop T", "drop S", "drop W"], "\(outcome.log)")
        #expect(outcome.counts == ["resolves": 2], "T's plan and W's nested: \(outcome.counts)")
    }

    /// Branch meetrevive (issue 28): a nested resolve whose plan has a step under construction further out (Y) only
    /// under an asker the build takes without asking for Y: it never meets Y, no cycle, the nested R is made. Y's factory
    /// resolves R (nested); R over W (and a transient Z after it in "revivedThenZ"), W over Y. W is:
    /// - "revived", "revivedThenZ", "revivedDeep" (W over A and Y), "revivedByGet" (a get of Y's RESOLVER slot: a request),
    ///   "revivedTraced" (with a trace hook): weak, dead, its object the binding holds: the build revives it where its walk
    ///   reaches it. Its creation plan's check is there (`CreationCheck.reachedThere`, nothing later takes Y), at or before
    ///   the cut (`Plan.meeting`: Y, first asked for under W): before branch meetrevive the run up to the cut stopped
    ///   before that check and reported the cycle "Y" -> "R" -> "W" -> "Y" the build never meets; then it declined
    ///   (`notCached`, the build's). Branch revivecut: the run revives W at that check and goes past the cut
    ///   (`PlanProgress.cutMoves`, `Plan.takePublished`), a request's too (`Graph.askedCutMoves`).
    ///   "revivedThenU": R over W, U (weak, revived, over D) and X (over D): past the moved cut U's early check switches to
    ///   its `PublishedVariant` as in a run not cut (D made for X only).
    /// - "gone": weak, dead, the binding let go of it too: the revive fails, W made, the cut reached: the build's cycle.
    /// - "liveWeak": weak, alive (the first R held); "singleton": a singleton, cached: R's plan for those caches takes W
    ///   a leaf, without Y (no cut).
    /// - "revivedUnderV": revived, R over W and V, the outer resolve V's, whose factory resolves Y: the plan meets V too,
    ///   which the build meets past W (`notCached` before branch revivev, `Plan.meetsOnly` false): the run revives W at its
    ///   check and moves its cut to where the build asks for V (`Plan.nextMeeting`), reporting the build's cycle through V.
    ///   "revivedUnderVThenZ": R over W, Z and V: Z made before the moved cut, let go of there with W's revived box;
    ///   "revivedUnderVThenZTraced" with a trace hook too.
    ///   "revivedUnderVByU": R over W and U, U (weak, revived) over V: the cut moved past W to V, then past U (over V) to
    ///   the run's end: the build meets neither, the nested R made.
    @Test(arguments: ["revived", "revivedThenZ", "revivedDeep", "revivedByGet", "revivedTraced", "revivedThenU", "gone", "liveWeak",
                      "singleton", "revivedUnderV", "revivedUnderVThenZ", "revivedUnderVByU", "revivedUnderVThenZTraced"])
    func aNestedResolveWhoseCutIsUnderAnAskerTheBuildTakesMakesIt(shape: String) throws {
        let outerV = shape.hasPrefix("revivedUnderV"), byU = shape == "revivedUnderVByU", thenU = shape == "revivedThenU"
        let underV = outerV && !byU
        let fx = try Fixture()
        let reviver = HoldingReviver()
        let nesting = Box(false), messages = Box<[String]>([]), held = Box<Obj?>(nil)
        let viaResolver = shape == "revivedByGet"
        try fx.register("Y", viaResolver ? [.resolver] : []) { obj in
            guard nesting.value else { return }
            do {
                let r = viaResolver ? try #require(fx.bridge.resolver(obj.words[0])).get(Key("R")) : try fx.resolve("R")
                withExtendedLifetime(r) { messages.value.append("nested R, its W the first: \(Obj.of(r).dep(0) === held.value)") }
            } catch let e as TetherError { messages.value.append("\(e.code): \(e.message)") }
        }
        try fx.register("Z")
        try fx.register("A")
        // ("revivedUnderV": V's factory resolves Y, nested: both under construction further out when Y's resolves R.)
        try fx.register("V") { _ in if nesting.value { _ = try fx.resolve("Y") } }
        let w = try fx.register("W", shape == "revivedDeep" ? [dep("A"), dep("Y")] : [dep("Y")], scope: shape == "singleton" ? .singleton : .weak)
        if shape != "singleton" { revivable(w, fx, reviver) }
        // ("revivedThenU": U weak over D, X over D after it: U's early check, `PublishedVariant`, past the moved cut.)
        // ("revivedUnderVByU": U weak over V, R over W and U: both revived, the cut moved past each.)
        if byU { try revivable(fx.register("U", [dep("V")], scope: .weak), fx, reviver) }
        if thenU {
            try fx.register("D")
            try revivable(fx.register("U", [dep("D")], scope: .weak), fx, reviver)
            try fx.register("X", [dep("D")])
        }
        try fx.register("R", shape == "revivedThenZ" ? [dep("W"), dep("Z")] : shape == "revivedUnderV" ? [dep("W"), dep("V")]
                        : shape.hasPrefix("revivedUnderVThenZ") ? [dep("W"), dep("Z"), dep("V")] : byU ? [dep("W"), dep("U")]
                        : thenU ? [dep("W"), dep("U"), dep("X")] : [dep("W")], scope: .transient)
        var outcome = Outcome()
        var first: Instance? = try fx.resolve("R")
        held.value = Obj.of(first!).dep(0)
        if thenU || byU { reviver.held.value[UInt(bitPattern: Obj.of(first!).dep(1).pointer)] = Obj.of(first!).dep(1) }
        if shape.hasPrefix("revived") || shape == "gone" {
            if shape != "gone" { reviver.held.value[UInt(bitPattern: held.value!.pointer)] = held.value! }
            first = nil  // R and W's box go (Y with it); the binding's W stays (not "gone"'s)
        }
        fx.tracker.note("nesting")
        let events = Box<[String]>([])
        if shape.hasSuffix("Traced") { fx.container.setTrace { event in events.withLock { $0.append("\(event.kind) \(event.key.name)") } } }
        nesting.value = true
        var requests: [String: Int] = [:]
        outcome.counts = try counted { requests = try countedRequests { _ = try fx.resolve(outerV ? "V" : "Y") } }
        for (name, n) in requests { outcome.counts["request " + name] = n }
        nesting.value = false
        fx.container.setTrace(nil)
        withExtendedLifetime(first) {}
        outcome.seen = messages.value + ["asked \(reviver.asked.value)"] + events.withLock { $0 }
        outcome.log = fx.tracker.log
        #expect(fx.tracker.badDrops == 0)
        let expectedLog: [String: [String]] = [
            "gone": ["make Y", "make W", "make R", "drop R", "drop W", "drop Y", "nesting", "make Y", "drop Y"],
            "liveWeak": ["make Y", "make W", "make R", "nesting", "make R", "drop R", "make Y", "drop Y"],
            "revived": ["make Y", "make W", "make R", "drop R", "drop W", "drop Y", "nesting", "make R", "drop R", "drop W",
                    "make Y", "drop Y"],
            "revivedByGet": ["make Y", "make W", "make R", "drop R", "drop W", "drop Y", "nesting", "make R", "make Y", "drop Y",
                    "drop R", "drop W"],
            "revivedDeep": ["make A", "make Y", "make W", "make R", "drop R", "drop W", "drop Y", "drop A", "nesting", "make R",
                    "drop R", "drop W", "make Y", "drop Y"],
            "revivedThenU": ["make Y", "make W", "make D", "make U", "make X", "make R", "drop R", "drop X", "drop U", "drop D",
                    "drop W", "drop Y", "nesting", "make D", "make X", "make R", "drop R", "drop X", "drop D", "drop U",
                    "drop W", "make Y", "drop Y"],
            "revivedThenZ": ["make Y", "make W", "make Z", "make R", "drop R", "drop Z", "drop W", "drop Y", "nesting", "make Z",
                    "make R", "drop R", "drop Z", "drop W", "make Y", "drop Y"],
            "revivedTraced": ["make Y", "make W", "make R", "drop R", "drop W", "drop Y", "nesting", "make R", "drop R", "drop W",
                    "make Y", "drop Y"],
            "revivedUnderV": ["make Y", "make W", "make V", "make R", "drop R", "drop V", "drop W", "drop Y", "nesting", "drop W",
                    "make Y", "drop Y", "make V", "drop V"],
            "revivedUnderVByU": ["make Y", "make W", "make V", "make U", "make R", "drop R", "drop U", "drop V", "drop W", "drop Y",
                    "nesting", "make R", "drop R", "drop U", "drop W", "make Y", "drop Y", "make V", "drop V"],
            "revivedUnderVThenZ": ["make Y", "make W", "make Z", "make V", "make R", "drop R", "drop V", "drop Z", "drop W", "drop Y",
                    "nesting", "make Z", "drop Z", "drop W", "make Y", "drop Y", "make V", "drop V"],
            "revivedUnderVThenZTraced": ["make Y", "make W", "make Z", "make V", "make R", "drop R", "drop V", "drop Z", "drop W", "drop Y",
                    "nesting", "make Z", "drop Z", "drop W", "make Y", "drop Y", "make V", "drop V"],
            "singleton": ["make Y", "make W", "make R", "nesting", "make R", "drop R", "make Y", "drop Y"],
        ]
        expectLiteral(outcome.log, try #require(expectedLog[shape]))
        let expectedSeen: [String: [String]] = [
            "gone": ["cycle: dependency cycle through constructors: \"Y\" -> \"R\" -> \"W\" -> \"Y\"; the factory of \"Y\" resolves \"R\", whose construction needs \"Y\" before that factory returned; take \"R\" from the resolver of a completion callback of \"Y\" instead (tether_on_complete), once \"Y\" is made, weakly (tether_resolver_get_weak) or with the slot on \"Y\" declared TETHER_WEAK",
                    "asked 1"],
            "liveWeak": ["nested R, its W the first: true", "asked 0"],
            "revived": ["nested R, its W the first: true", "asked 1"],
            "revivedByGet": ["nested R, its W the first: true", "asked 1"],
            "revivedDeep": ["nested R, its W the first: true", "asked 1"],
            "revivedThenU": ["nested R, its W the first: true", "asked 2"],
            "revivedThenZ": ["nested R, its W the first: true", "asked 1"],
            "revivedTraced": ["nested R, its W the first: true", "asked 1", "resolveStart Y", "factoryCall Y", "resolveStart R",
                    "factoryCall R", "factoryReturn R", "edge R", "resolveEnd R", "destroy R", "destroy W",
                    "factoryReturn Y", "resolveEnd Y", "destroy Y"],
            "revivedUnderV": ["cycle: dependency cycle through constructors: \"V\" -> \"Y\" -> \"R\" -> \"V\"; the factory of \"Y\" resolves \"R\", whose construction needs \"V\" before that factory returned; take \"R\" from the resolver of a completion callback of \"Y\" instead (tether_on_complete), once \"V\" is made, weakly (tether_resolver_get_weak) or with the slot on \"V\" declared TETHER_WEAK; but first take \"Y\" as a slot of \"V\" (instead of its nested resolve): a nested resolve builds a graph of its own, so this fix works only once one resolve builds the whole cycle",
                    "asked 1"],
            "revivedUnderVByU": ["nested R, its W the first: true", "asked 2"],
            "revivedUnderVThenZ": ["cycle: dependency cycle through constructors: \"V\" -> \"Y\" -> \"R\" -> \"V\"; the factory of \"Y\" resolves \"R\", whose construction needs \"V\" before that factory returned; take \"R\" from the resolver of a completion callback of \"Y\" instead (tether_on_complete), once \"V\" is made, weakly (tether_resolver_get_weak) or with the slot on \"V\" declared TETHER_WEAK; but first take \"Y\" as a slot of \"V\" (instead of its nested resolve): a nested resolve builds a graph of its own, so this fix works only once one resolve builds the whole cycle",
                    "asked 1"],
            "revivedUnderVThenZTraced": ["cycle: dependency cycle through constructors: \"V\" -> \"Y\" -> \"R\" -> \"V\"; the factory of \"Y\" resolves \"R\", whose construction needs \"V\" before that factory returned; take \"R\" from the resolver of a completion callback of \"Y\" instead (tether_on_complete), once \"V\" is made, weakly (tether_resolver_get_weak) or with the slot on \"V\" declared TETHER_WEAK; but first take \"Y\" as a slot of \"V\" (instead of its nested resolve): a nested resolve builds a graph of its own, so this fix works only once one resolve builds the whole cycle",
                    "asked 1", "resolveStart V", "factoryCall V", "resolveStart Y", "factoryCall Y", "resolveStart R",
                    "factoryCall Z", "factoryReturn Z", "destroy Z", "destroy W", "resolveEnd R", "factoryReturn Y",
                    "resolveEnd Y", "destroy Y", "factoryReturn V", "resolveEnd V", "destroy V"],
            "singleton": ["nested R, its W the first: true", "asked 0"],
        ]
        expectLiteral(outcome.seen, try #require(expectedSeen[shape]))
        let revived = shape.hasPrefix("revived"), viaGet = shape == "revivedByGet"
        let nested = Array(outcome.log.drop { $0 != "nesting" })
        if shape == "gone" || underV {
            // The build's cycle, where the run up to the cut reports it ("gone": W's factory not called, its reviver asked);
            // through V past the revived W, the build's ("revivedUnderV").
            let cycle = underV
                ? "cycle: dependency cycle through constructors: \"V\" -> \"Y\" -> \"R\" -> \"V\"; the factory of \"Y\" resolves \"R\", whose "
                    + "construction needs \"V\" before that factory returned; take \"R\" from the resolver of a completion callback of \"Y\" "
                    + "instead (tether_on_complete), once \"V\" is made, weakly (tether_resolver_get_weak) or with the slot on \"V\" declared "
                    + "TETHER_WEAK; but first take \"Y\" as a slot of \"V\" (instead of its nested resolve): a nested resolve builds a graph of "
                    + "its own, so this fix works only once one resolve builds the whole cycle"
                : "cycle: dependency cycle through constructors: \"Y\" -> \"R\" -> \"W\" -> \"Y\"; the factory of \"Y\" resolves \"R\", whose "
                    + "construction needs \"Y\" before that factory returned; take \"R\" from the resolver of a completion callback of \"Y\" "
                    + "instead (tether_on_complete), once \"Y\" is made, weakly (tether_resolver_get_weak) or with the slot on \"Y\" declared TETHER_WEAK"
            // ("revivedUnderVThenZTraced": the moved cut's run tells Z's call and return, none for W's revive, no hit.)
            let traced = shape.hasSuffix("Traced")
                ? ["resolveStart V", "factoryCall V", "resolveStart Y", "factoryCall Y", "resolveStart R", "factoryCall Z", "factoryReturn Z",
                   "destroy Z", "destroy W", "resolveEnd R", "factoryReturn Y", "resolveEnd Y", "destroy Y", "factoryReturn V", "resolveEnd V",
                   "destroy V"] : []
            #expect(outcome.seen == [cycle, "asked 1"] + traced, "\(outcome.seen)")
            // ("revivedUnderVThenZ": Z made before the moved cut, let go of there, then W's revived box.)
            #expect(nested == ["nesting"] + (shape.hasPrefix("revivedUnderVThenZ") ? ["make Z", "drop Z"] : [])
                    + (underV ? ["drop W", "make Y", "drop Y", "make V", "drop V"] : ["make Y", "drop Y"]), "\(nested)")
            // (V's plan, Y's and R's nested ones, none declining: R's cut moved past W to V.)
            #expect(outcome.counts == (underV ? ["resolves": 3] : ["resolves": 2]), "\(outcome.counts)")
            return
        }
        #expect(Array(outcome.seen.prefix(2)) == ["nested R, its W the first: true", "asked \(thenU || byU ? 2 : revived ? 1 : 0)"], "\(outcome.seen)")
        // (Y's factory notes its make once the nested R is let go of. "revivedThenU": U revived too, D made for X only.)
        let made = (shape == "revivedThenZ" ? ["make Z"] : thenU ? ["make D", "make X"] : []) + ["make R"]
        let dropped = ["drop R"] + (shape == "revivedThenZ" ? ["drop Z"] : thenU ? ["drop X", "drop D", "drop U"] : byU ? ["drop U"] : [])
            + (revived ? ["drop W"] : [])
        // (The get's R is Y's graph's, let go of with it.)
        // ("revivedUnderVByU": V's factory notes its make after Y's.)
        let expected: [String] = viaGet ? made + ["make Y", "drop Y"] + dropped
            : made + dropped + ["make Y", "drop Y"] + (byU ? ["make V", "drop V"] : [])
        #expect(nested == ["nesting"] + expected, "\(nested)")
        // Traced: W revived tells nothing (`Graph.existing` hands it out without a hit), R's factory inside Y's.
        let calls = outcome.seen.filter { $0.hasPrefix("cacheHit") || $0.hasPrefix("factoryCall") }
        #expect(calls == (shape == "revivedTraced" ? ["factoryCall Y", "factoryCall R"] : []), "\(outcome.seen)")
        // Y's plan and R's nested one (the get's: a request's plan), none declining: the cut run revives W at its check and
        // goes past the cut (`PlanProgress.cutMoves`; `notCached` before: the build's). ("revivedUnderVByU": V's plan too.)
        let counts: [String: Int] = viaGet ? ["resolves": 1, "request requests": 1, "request plan": 1] : ["resolves": byU ? 3 : 2]
        #expect(outcome.counts == counts, "\(outcome.counts)")
    }
}
