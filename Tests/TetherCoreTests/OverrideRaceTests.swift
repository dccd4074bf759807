// A resolve racing tether_override_clear: the clear lands after the resolve picked the override's
// registration (a value) and before it read the override's cache, the window another thread's
// clear hits by luck (test_overrides' threads, about 1 run in 80). Made deterministic by the plan
// recorder's test hook, which runs the clear there. The resolve must see the old or the new
// configuration whole: it starts over on the new one rather than call the value's factory.
// With a trace hook set too (`Container.tracedResolve`): the same outcome, the trace's resolve ending well.
@testable import TetherCore
import Testing

@Suite(.serialized) struct OverrideRaceTests {
    /// Pool <- Repo <- Service, singletons of the root; Pool overridden with a value.
    private func app(_ fx: Fixture, fakeDrops: Box<Int>) throws -> Registration {
        try fx.register("Pool", scope: .singleton)
        try fx.register("Repo", [dep("Pool")], scope: .singleton)
        try fx.register("Service", [dep("Repo")], scope: .singleton)
        let fake = Ref(retaining: Obj(label: "fake", words: [])).opaque
        return try fx.container.overrideValue(Key("Pool"), fake, context: nil) { p, _ in
            fakeDrops.value += 1
            Ref<Obj>(opaque: p).release()
        }
    }

    /// Runs `body` with the override of Pool cleared where the recorder reaches `override`, once.
    private func clearing(_ override: Registration, in root: Container, _ body: () throws -> Void) rethrows -> Bool {
        let cleared = Box(false)
        try withTestHook {
            Plan.Recorder.setBeforeReadingCache { r in
                guard r === override, !cleared.value else { return }
                cleared.value = true
                _ = try? root.clearOverride(Key("Pool"))
            }
            defer { Plan.Recorder.setBeforeReadingCache(nil) }
            try body()
        }
        return cleared.value
    }

    /// Sets a trace hook on `container` that notes each event's kind and key (an end's status too) in `fx.tracker`.
    private func trace(_ container: Container, _ fx: Fixture) {
        let tracker = fx.tracker
        container.setTrace { e in tracker.note("trace \(e.kind) \(e.key.name)" + (e.status.map { " \($0)" } ?? "")) }
    }

    /// The resolve of `key` traced: its start first, its end last, no failure on the way.
    private func expectTracedWhole(_ fx: Fixture, _ key: String) {
        let events = fx.tracker.events("trace ")
        #expect(events.first == "trace resolveStart \(key)" && events.last == "trace resolveEnd \(key)")
        #expect(!events.contains { $0.hasPrefix("trace resolveEnd") && $0.split(separator: " ").count > 3 })
    }

    @Test(arguments: [false, true], [false, true])
    func aClearLandingAfterTheOverrideWasPickedStartsTheResolveOver(fromChild: Bool, traced: Bool) throws {
        let fx = try Fixture(retiring: fromChild)
        let fakeDrops = Box(0)
        let override = try app(fx, fakeDrops: fakeDrops)
        let child = try fx.child()
        if traced { trace(fromChild ? child : fx.container, fx) }
        var service: Instance?
        let cleared = try clearing(override, in: fx.container) {
            service = try fx.resolve("Service", in: fromChild ? child : nil)
        }
        #expect(cleared)
        // The configuration after the clear, whole: the original Pool, made once; the fake let go of once.
        let svc = Obj.of(service!)
        #expect(svc.label == "Service" && svc.dep(0).label == "Repo" && svc.dep(0).dep(0).label == "Pool")
        #expect(fx.tracker.made("Pool") == 1 && fx.tracker.made("Repo") == 1 && fx.tracker.made("Service") == 1)
        #expect(fakeDrops.value == 1)
        if traced { expectTracedWhole(fx, "Service") }
        // What it made was published: resolved again, the same instances, nothing made.
        do {
            let again = try fx.resolve("Service")
            #expect(again === service!)
        }
        #expect(fx.tracker.calls("Pool") == 1 && fx.tracker.calls("Repo") == 1 && fx.tracker.calls("Service") == 1)
        service = nil
        try child.closeRetiring()
        try fx.container.closeRetiring()
        #expect(fx.tracker.dropped("Service") == 1 && fx.tracker.dropped("Repo") == 1 && fx.tracker.dropped("Pool") == 1)
        #expect(fx.tracker.badDrops == 0)
    }
    /// The key itself: a resolve that looked Pool up before the clear (the ABI finds the registration,
    /// then reads its cache) and resolves it after gets the original, not "the value of Pool was let go of".
    /// Traced (`Container.tracedResolve`) the same: failed before with that message.
    @Test(arguments: [false, true])
    func theClearedValueLookedUpBeforeTheClearResolvesToTheOriginal(traced: Bool) throws {
        let fx = try Fixture()
        let fakeDrops = Box(0)
        let override = try app(fx, fakeDrops: fakeDrops)
        try fx.container.clearOverride(Key("Pool"))
        #expect(fakeDrops.value == 1)
        if traced { trace(fx.container, fx) }
        do {
            let pool = try fx.container.resolveRetained(Borrowed(override)).take()
            #expect(Obj.of(pool).label == "Pool" && fx.tracker.made("Pool") == 1)
            if traced { expectTracedWhole(fx, "Pool") }
            #expect(try fx.resolve("Pool") === pool)  // cached: the original's singleton
        }
        #expect(fx.tracker.calls("Pool") == 1)
        try fx.container.closeRetiring()
        #expect(fx.tracker.dropped("Pool") == 1 && fakeDrops.value == 1 && fx.tracker.badDrops == 0)
    }

    /// An override starting between a resolve's plan pick and its run (the hook runs it while the plan is
    /// recorded, reading the cached Pool's cache; Clock, not cached, makes the plan a creation plan, which
    /// the graph runs): the resolve returns what it built over the configuration it picked, the original
    /// Pool, and caches none of what the override superseded: Repo resolved again is built over the fake.
    /// (Cached before: the run read the clock after the pick.) Not the container scope: its resolve here
    /// picks its plan again after the change (the graph's claims find the state changed) and builds over the fake.
    @Test(arguments: [Scope.singleton, .weak])
    func anOverrideStartingWhileThePlanIsPickedCachesNothingItSuperseded(scope: Scope) throws {
        let fx = try Fixture()
        let fakeDrops = Box(0)
        try fx.register("Pool", scope: .singleton)
        try fx.register("Clock", scope: .singleton)
        try fx.register("Repo", [dep("Pool"), dep("Clock")], scope: scope)
        let child = try fx.child()
        _ = try fx.resolve("Pool")  // cached
        let fakeObject = Obj(label: "fake", words: [])
        let fake = UInt(bitPattern: Ref(retaining: fakeObject).opaque)
        let started = Box(false)
        let root = fx.container
        try withTestHook {
            Plan.Recorder.setBeforeReadingCache { r in
                guard r.key == Key("Pool"), fx.owns(r), !started.value else { return }
                started.value = true
                _ = try? root.overrideValue(Key("Pool"), UnsafeMutableRawPointer(bitPattern: fake)!, context: nil) { p, _ in
                    fakeDrops.value += 1
                    Ref<Obj>(opaque: p).release()
                }
            }
            defer { Plan.Recorder.setBeforeReadingCache(nil) }
            do {
                let repo1 = try fx.resolve("Repo", in: child)
                #expect(started.value)
                #expect(Obj.of(repo1).dep(0).label == "Pool")  // the configuration it picked, whole
                Plan.Recorder.setBeforeReadingCache(nil)
                let repo2 = try fx.resolve("Repo", in: child)
                #expect(repo2 !== repo1 && Obj.of(repo2).dep(0) === fakeObject)
                #expect(try fx.resolve("Repo", in: child) === repo2)  // the one over the fake is cached
            }
        }
        #expect(fx.tracker.made("Pool") == 1 && fx.tracker.made("Clock") == 1 && fx.tracker.made("Repo") == 2)
        try root.clearOverride(Key("Pool"))
        try child.closeRetiring()
        try root.closeRetiring()
        #expect(fx.tracker.dropped("Repo") == 2 && fx.tracker.dropped("Pool") == 1 && fx.tracker.dropped("Clock") == 1)
        #expect(fakeDrops.value == 1 && fx.tracker.badDrops == 0)
    }

    /// A resolve in one root while `changes` override start/clear pairs run (from Service's factory, inside
    /// the resolve's window) in `changed`: over Flag, which nothing here reaches.
    private func resolveWhileChanging(_ fx: Fixture, in changed: Container, changes: Int) throws -> (Instance, Instance) {
        try fx.register("Flag", scope: .singleton, in: changed)
        try fx.register("Pool", scope: .singleton)
        let ran = Box(false)
        try fx.register("Service", [dep("Pool")], scope: .singleton) { _ in
            guard !ran.value else { return }  // the first make only
            ran.value = true
            for _ in 0..<changes {
                try changed.override(Key("Flag"), params: [], factory: ClosureFactory { _ in nil })
                try changed.clearOverride(Key("Flag"))
            }
        }
        let first = try fx.resolve("Service")
        return (first, try fx.resolve("Service"))
    }

    /// Changes in another root's tree (more of them than a tree's log keeps) supersede nothing here: the
    /// resolve's singletons are cached, each made once (a suite running tests in parallel, each its own root).
    @Test(arguments: [1, 100])
    func changesInAnotherTreeDoNotStopCaching(changes: Int) throws {
        let fx = try Fixture()
        let other = try Fixture()
        do {
            let (first, second) = try resolveWhileChanging(fx, in: other.container, changes: changes)
            let pool = try fx.resolve("Pool")
            #expect(second === first && Obj.of(second).dep(0) === Obj.of(pool))
        }
        #expect(fx.tracker.made("Service") == 1 && fx.tracker.made("Pool") == 1)
        try fx.container.closeRetiring()
        try other.container.closeRetiring()
        #expect(fx.tracker.dropped("Service") == 1 && fx.tracker.dropped("Pool") == 1 && fx.tracker.badDrops == 0)
    }

    /// Changes in the resolve's own tree over a key nothing reaches: a few let it cache; more than the tree's
    /// log keeps (64) and it publishes none of its singletons (what the forgotten ones superseded is not known),
    /// so the next resolve makes them again and caches those.
    @Test(arguments: [(10, 1), (100, 2)])
    func changesInTheOwnTreeBeyondTheLogStopCaching(changes: Int, made: Int) throws {
        let fx = try Fixture()
        let child = try fx.child()
        do {
            let (first, second) = try resolveWhileChanging(fx, in: child, changes: changes)
            #expect((second === first) == (made == 1))
            #expect(fx.tracker.made("Service") == made && fx.tracker.made("Pool") == made)
            let third = try fx.resolve("Service")
            #expect(third === second)
        }
        try child.closeRetiring()
        try fx.container.closeRetiring()
        #expect(fx.tracker.dropped("Service") == made && fx.tracker.dropped("Pool") == made && fx.tracker.badDrops == 0)
    }
}
