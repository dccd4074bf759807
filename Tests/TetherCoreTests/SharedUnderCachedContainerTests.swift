// A shared step asked for only under container steps the resolving child has cached already (issue 28,
// `notCached` before): a dead weak key a Session's WEAK slot names, a singleton reset under a cached Session.
// The build takes the Session cached and never asks for it; the warm plan leaves it missing until the
// container steps' claims say whether a step still made asks for it (`Plan.takeShared`'s `untaken`,
// `Plan.underCached`), as a build that finds them cached does. Each asserts the factory calls, trees and drops
// (the build's, which `bothPaths` ran beside it as an oracle until branch noplansoff) and the plan path (no decline
// counted).
import Foundation
import Testing
@testable import TetherCore

@Suite struct SharedUnderCachedContainerTests {
    /// Handler(Clock, Session(`input`)), the Session CONTAINER-scoped, over `key` registered with `scope`.
    private static func handlerOverSession(_ fx: Fixture, _ input: Param, _ key: String, scope: Scope) throws {
        try fx.register(key, scope: scope)
        try fx.register("Session", [input], scope: .container)
        try fx.register("Clock")
        try fx.register("Handler", [dep("Clock"), dep("Session")])
    }

    /// Handler(Clock, Session(~W)), Session CONTAINER-scoped, W weak: each child's first resolve makes W and
    /// the Session (W dies at once: only the Session's WEAK slot names it); its next resolves take the Session
    /// cached and never ask for W (corpus `a_weak_slot_under_a_cached_container_step_of_a_dead_weak_key`).
    @Test func aDeadWeakKeyOnlyACachedSessionNamesIsNotAsked() throws {
        // Every resolve a plan's: the warm plan with the Session cached, the creation plan in each new child.
        let (log, seen) = try served(resolves: 6) { fx -> [String] in
            try Self.handlerOverSession(fx, weakDep("W"), "W", scope: .weak)
            var trees: [String] = []
            for _ in 0..<2 {
                let child = try fx.child()
                for _ in 0..<3 {
                    let h = try fx.resolve("Handler", in: child)
                    trees.append(withExtendedLifetime(h) { Obj.of(h).dep(1).tree(withEdges: true) })
                }
                _ = try child.close()
            }
            trees.append("W made \(fx.tracker.made("W")), Session made \(fx.tracker.made("Session")), Handler made \(fx.tracker.made("Handler"))")
            return trees
        }
        #expect(seen.last == "W made 2, Session made 2, Handler made 6", "\(seen)")
        #expect(Array(log.prefix(6)) == ["make Clock", "make W", "make Session", "make Handler", "drop W", "drop Handler"], "\(log)")
    }

    /// The same graph with W held alive first (the warm plan recorded with W a shared leaf), then let go of while
    /// the child keeps its Session: the warm plan leaves W missing (`takeShared`'s `untaken`), finds the Session
    /// cached and makes Clock and Handler only, as the build (corpus
    /// `a_warm_plans_weak_leaf_dead_under_a_cached_container_step_is_not_asked_for`).
    @Test func aWarmPlansWeakLeafDeadUnderACachedSessionIsNotAsked() throws {
        let (log, seen) = try served(resolves: 5) { fx -> [String] in
            try Self.handlerOverSession(fx, weakDep("W"), "W", scope: .weak)
            var w: Instance? = try fx.resolve("W")
            let child = try fx.child()
            var seen: [String] = []
            for n in 0..<4 {
                if n == 2 { w = nil }
                let h = try fx.resolve("Handler", in: child)
                seen.append(withExtendedLifetime(h) { "\(Obj.of(h).tree()) W alive: \(w != nil)" })
            }
            _ = try child.close()
            seen.append("W made \(fx.tracker.made("W")), Session made \(fx.tracker.made("Session")), Clock made \(fx.tracker.made("Clock"))")
            // The warm plan served W's death too: no creation plan recorded for that state.
            let handler = try #require(fx.container.registration(for: Key("Handler")))
            seen.append("creation plans: \(handler.creationPlanCount), warm: \(handler.hasCurrentPlan)")
            return seen
        }
        #expect(seen.suffix(2) == ["W made 1, Session made 1, Clock made 4", "creation plans: 0, warm: true"], "\(seen)")
        #expect(log.filter { $0.hasPrefix("make") } == ["make W", "make Clock", "make Session", "make Handler", "make Clock", "make Handler",
                                                       "make Clock", "make Handler", "make Clock", "make Handler"], "\(log)")
    }

    /// Handler(Session(Db)), Db a singleton of the root, reset while a child holds its Session: the child's next
    /// resolves take the Session (over the old Db) cached and never ask for Db; a new child's first resolve makes
    /// a new Db (the creation plan), as the build.
    @Test func aSingletonResetUnderACachedSessionIsNotAsked() throws {
        let seen = try served(resolves: 4) { fx -> [String] in
            try Self.handlerOverSession(fx, dep("Db"), "Db", scope: .singleton)
            var trees: [String] = []
            let first = try fx.child()
            let h1 = try fx.resolve("Handler", in: first)
            let db1 = Obj.of(h1).dep(1).depPointer(0)
            fx.container.reset(.singleton)
            for _ in 0..<2 {
                let h = try fx.resolve("Handler", in: first)
                trees.append(withExtendedLifetime(h) { "\(Obj.of(h).tree()) old Db: \(Obj.of(h).dep(1).depPointer(0) == db1)" })
            }
            let second = try fx.child()
            let h2 = try fx.resolve("Handler", in: second)
            trees.append(withExtendedLifetime(h2) { "\(Obj.of(h2).tree()) old Db: \(Obj.of(h2).dep(1).depPointer(0) == db1)" })
            _ = consume h1
            _ = consume h2
            _ = try first.close()
            _ = try second.close()
            trees.append("Db made \(fx.tracker.made("Db")), Session made \(fx.tracker.made("Session"))")
            return trees
        }.seen
        #expect(seen == ["Handler(Clock,Session(Db)) old Db: true", "Handler(Clock,Session(Db)) old Db: true",
                         "Handler(Clock,Session(Db)) old Db: false", "Db made 2, Session made 2"], "\(seen)")
    }

    /// Handler(Session(Db), Pool(Db)), Db a singleton reset while a child holds its Session: the child's next resolve
    /// takes the Session cached, and the build makes a new Db where Pool asks for it (`notCached` before: the creation
    /// plan's claims met Db under the cached Session that Pool still takes, the build's). The claims switch to the
    /// plan for the set of container steps cached (`Graph.switchesToVariant`, the creating `mixedVariant` with every
    /// one a leaf), whose run makes Db where Pool asks, as the build; then the warm plan over the new Db.
    @Test func aSingletonResetUnderACachedSessionThatAStepStillMadeTakesIsMadeWhereItAsks() throws {
        let (log, seen) = try served(resolves: 3) { fx -> [String] in
            try fx.register("Db", scope: .singleton)
            try fx.register("Session", [dep("Db")], scope: .container)
            try fx.register("Pool", [dep("Db")])
            try fx.register("Handler", [dep("Session"), dep("Pool")])
            let child = try fx.child()
            let h1 = try fx.resolve("Handler", in: child)
            let db1 = Obj.of(h1).dep(0).depPointer(0)
            fx.container.reset(.singleton)
            fx.tracker.note("reset")
            var seen: [String] = []
            for _ in 0..<2 {
                let h = try fx.resolve("Handler", in: child)
                seen.append(withExtendedLifetime(h) {
                    "\(Obj.of(h).tree()) Session's old Db: \(Obj.of(h).dep(0).depPointer(0) == db1), Pool's new: \(Obj.of(h).dep(1).depPointer(0) != db1)"
                })
            }
            _ = consume h1
            _ = try child.close()
            seen.append("Db made \(fx.tracker.made("Db")), Session made \(fx.tracker.made("Session"))")
            return seen
        }
        #expect(seen == ["Handler(Session(Db),Pool(Db)) Session's old Db: true, Pool's new: true",
                         "Handler(Session(Db),Pool(Db)) Session's old Db: true, Pool's new: true", "Db made 2, Session made 1"], "\(seen)")
        let reset = try #require(log.firstIndex(of: "reset"))
        #expect(log[reset...].filter { $0.hasPrefix("make") } == ["make Db", "make Pool", "make Handler", "make Pool", "make Handler"], "\(log)")
    }
}
