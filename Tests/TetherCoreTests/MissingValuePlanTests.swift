// A declared value no container on the way provides in a plan over container steps (issue 28, `notCached` before:
// `takeShared` declined it, the build reported it): decided once the container steps are claimed (`Plan.execute`'s
// `absent`, `firstAbsent`), the run fails where the build's walk reaches it, with the build's error, what the steps
// before it made let go of, the container steps' claims with it.
import Synchronization
import Testing
import TetherCore

@Suite struct MissingValuePlanTests {
    /// H over A, a container-scoped Session (over A too) and Request, resolved from a child providing no Request: A and
    /// Session made, then the build's error (needed by H), A and Session let go of; again with Session cached in
    /// the child (taken there, only A made). Then a child providing it: the plans serve it.
    @Test func aValueMissingUnderContainerStepsFailsThePlanAsTheBuild() throws {
        let run = try planned { fx -> [String] in
            _ = try fx.container.declareValue(Key("Request"))
            try fx.register("A")
            try fx.register("Session", [dep("A")], scope: .container)
            try fx.register("H", [dep("A"), dep("Session"), dep("Request")])
            var seen: [String] = []
            let child = try fx.child()
            for _ in 0..<2 {
                do { _ = try fx.resolve("H", in: child) } catch let e as TetherError { seen.append("\(e.code): \(e.message)") }
            }
            let session = try fx.resolve("Session", in: child)
            do { _ = try fx.resolve("H", in: child) } catch let e as TetherError { seen.append("cached: \(e.code): \(e.message)") }
            seen.append("A \(fx.tracker.calls("A")), Session \(fx.tracker.calls("Session")), H \(fx.tracker.calls("H"))")
            let other = try fx.child()
            _ = try other.provideValue(Key("Request"), Ref(retaining: Obj(label: "Request", words: [])).opaque, context: nil,
                                       destructor: { p, _ in Ref<Obj>(opaque: p).release() })
            let h = try fx.resolve("H", in: other)
            seen.append(withExtendedLifetime((h, session)) { "\(Obj.of(h).words.count) slots" })
            _ = try child.close()
            _ = try other.close()
            return seen
        }
        let seen = run.seen
        #expect(seen.count == 5, "\(seen)")
        #expect(seen[0].hasPrefix("notFound: no value for \"Request\"") && seen[0].contains("(needed by \"H\")"), "\(seen)")
        #expect(seen[1] == seen[0] && seen[2] == "cached: " + seen[0], "\(seen)")
        #expect(seen[3] == "A 4, Session 3, H 0", "A and Session made and let go of twice, then Session alone, then A: \(seen)")
        #expect(seen[4] == "3 slots")
        // Every resolve of H a plan's (Session's own too); before: each failing H built (`notCached`).
        #expect(run.counts == ["resolves": 5], "\(run.counts)")
    }

    /// Traced (`notCached` before: a traced run declined any missing value, the build's events): H over A (over a cached
    /// singleton S), Request and S; `container`: over a container-scoped Session (over S) too, resolved from a child.
    /// The build tells S's hit where A asks, makes A (and Session), then calls Request's factory, which fails, then the
    /// drops; S's hit after Request is never told. The plan's run tells the same, in that order.
    @Test(arguments: [false, true]) func aTracedMissingValueIsThePlans(container: Bool) throws {
        let run = try planned { fx -> [String] in
            _ = try fx.container.declareValue(Key("Request"))
            try fx.register("S", scope: .singleton)
            try fx.register("A", [dep("S")])
            if container { try fx.register("Session", [dep("S")], scope: .container) }
            try fx.register("H", container ? [dep("A"), dep("Session"), dep("Request"), dep("S")] : [dep("A"), dep("Request"), dep("S")])
            _ = try fx.resolve("S")
            let events = Box<[String]>([])
            let child = try fx.child()
            child.setTrace { e in
                guard e.kind != .resolveStart && e.kind != .resolveEnd else { return }
                events.withLock { $0.append("\(e.kind) \(e.key.name)\(e.status.map { " \($0)" } ?? "")") }
            }
            var seen: [String] = []
            for _ in 0..<2 {
                do { _ = try fx.resolve("H", in: child) } catch let e as TetherError { seen.append("\(e.code): \(e.message)") }
            }
            child.setTrace(nil)
            _ = try child.close()
            return seen + events.withLock { $0 }
        }
        let seen = run.seen
        #expect(seen.count > 2 && seen[0].hasPrefix("notFound: no value for \"Request\"") && seen[1] == seen[0], "\(seen)")
        let once = Array(seen.dropFirst(2).prefix(seen.count / 2 - 1))
        let made = container ? ["factoryCall A", "factoryReturn A", "edge A", "factoryCall Session", "factoryReturn Session", "edge Session"]
            : ["factoryCall A", "factoryReturn A", "edge A"]
        let drops = container ? ["destroy Session", "destroy A"] : ["destroy A"]
        #expect(once == ["cacheHit S"] + made + ["factoryCall Request", "factoryReturn Request notFound"] + drops, "\(once)")
        #expect(run.counts == ["resolves": 3], "S, then each H a plan's: \(run.counts)")
    }
}
