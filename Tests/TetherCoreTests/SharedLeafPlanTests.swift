// Shared keys not cached that a plan now makes (issue 28 item 1, `sharedRoot` and `notCached` left after
// sharedplans): a singleton registered further up than the container the plan is recorded from is a
// creation step, its dependencies looked up in its own container as the build's (`Graph.push`). Each as
// the build: the same factory calls, instances, destructor order and errors.
import Foundation
import Testing
import TetherCore

@Suite struct SharedLeafPlanTests {
    /// A child's singleton over its parent's uncached singleton (`sharedRoot` before: no creation step for
    /// a registration of another container): one creation plan makes both, the parent's from the parent's
    /// registrations (its G, not the child's), published where the build publishes them.
    @Test func aChildsSingletonOverAParentsSingletonIsOneCreationPlan() throws {
        var outcomes: [(log: [String], seen: [String], counts: [String: Int])] = []
        do {
            let fx = try Fixture()
            try fx.register("Db", [dep("G")], scope: .singleton)
            try fx.register("G", label: "G@root")
            let child = try fx.child()
            try fx.register("G", in: child, label: "G@child")
            try fx.register("Repo", [dep("G"), dep("Db")], scope: .singleton, in: child)
            var seen: [String] = []
            let before = Container.buildsOnThisThread
            let counts = try counted {
                let repo = try fx.resolve("Repo", in: child)
                let again = try fx.resolve("Repo", in: child)
                let db = try fx.resolve("Db")
                withExtendedLifetime((repo, again, db)) {
                    let o = Obj.of(repo)
                    seen.append("\(o.dep(0).label) \(o.dep(1).label) \(o.dep(1).dep(0).label) \(repo.pointer == again.pointer)")
                    seen.append(db.pointer == o.depPointer(1) ? "Db shared" : "two Db")
                }
            }
            seen.append("builds \(Container.buildsOnThisThread - before)")
            #expect(fx.tracker.badDrops == 0)
            outcomes.append((fx.tracker.log, seen, counts))
        }
        #expect(outcomes[0].log == ["make G@child", "make G@root", "make Db", "make Repo"])
        #expect(outcomes[0].seen == ["G@child Db G@root true", "Db shared", "builds 0"])
        #expect(outcomes[0].counts == ["resolves": 1], "the creation plan (the others: cache hits, before any plan): \(outcomes[0].counts)")
    }

    /// The same graph failing after the parent's singleton was made: the plan lets go of it, last made
    /// first, and caches nothing, as the build's abort; the next resolve makes it again.
    @Test func aFailureAfterAParentsSingletonLetsGoOfItAsTheBuild() throws {
        var outcomes: [(log: [String], error: String, counts: [String: Int])] = []
        do {
            let fx = try Fixture()
            let fail = Box(true)
            try fx.register("Db", [dep("G")], scope: .singleton)
            try fx.register("G")
            let child = try fx.child()
            try fx.register("F", in: child) { _ in if fail.value { throw CallbackFailure(reason: "no F") } }
            try fx.register("Repo", [dep("Db"), dep("F")], scope: .singleton, in: child)
            var error = ""
            let counts = try counted {
                do { _ = try fx.resolve("Repo", in: child) } catch let e as TetherError { error = "\(e.code): \(e.message)" }
                fail.value = false
                _ = try fx.resolve("Repo", in: child)
            }
            #expect(fx.tracker.badDrops == 0)
            outcomes.append((fx.tracker.log, error, counts))
        }
        #expect(outcomes[0].log == ["make G", "make Db", "drop Db", "drop G", "make G", "make Db", "make F", "make Repo"])
        #expect(outcomes[0].error.contains("no F"))
        #expect(outcomes[0].counts == ["resolves": 2], "both creation plans: \(outcomes[0].counts)")
    }

    /// A child's component plan finding its owner's singleton not cached (`notCached` before: a child's plan
    /// had no creation steps): the component's creation plan makes it (one per component and caches' state,
    /// `Registration.componentCreationPlan`), for each child of that component, in the build's order.
    @Test func aChildsPlanMakesItsOwnersUncachedSingleton() throws {
        var outcomes: [(log: [String], seen: [String], counts: [String: Int])] = []
        do {
            let fx = try Fixture()
            try fx.register("S", [dep("G")], scope: .singleton)
            try fx.register("G")
            try fx.register("Svc", [dep("S")])
            try fx.register("Handler", [dep("Req"), dep("Svc")])
            var seen: [String] = []
            let before = Container.buildsOnThisThread
            let counts = try counted {
                for round in 0..<3 {
                    let child = try fx.child()
                    try fx.register("Req", in: child)
                    // Both held while their dependencies are read.
                    let first = try fx.resolve("Handler", in: child), second = try fx.resolve("Handler", in: child)
                    withExtendedLifetime((first, second)) {
                        let (h, again) = (Obj.of(first), Obj.of(second))
                        seen.append("\(round): \(h.dep(0).label) \(h.dep(1).dep(0).label) one S \(h.dep(1).depPointer(0) == again.dep(1).depPointer(0))")
                    }
                    if round < 2 { fx.container.reset(.singleton) }
                }
            }
            seen.append("builds \(Container.buildsOnThisThread - before)")
            #expect(fx.tracker.badDrops == 0)
            outcomes.append((fx.tracker.log, seen, counts))
        }
        #expect(outcomes[0].seen.last == "builds 0")
        #expect(outcomes[0].log.filter { $0 == "make S" || $0 == "make G" }.count == 6, "S and its G once per round")
        #expect(outcomes[0].counts == ["resolves": 6], "creation plans, then warm plans: \(outcomes[0].counts)")
    }

    /// A weak root resolved from a child with registrations of its own (`sharedRoot` before): a creation
    /// step of the child's component plan, its dependencies the child's (as the build: only a singleton's
    /// come from its own container), cached in its registration for every container while it lives.
    @Test func aWeakRootFromAChildWithRegistrationsIsACreationStep() throws {
        var outcomes: [(log: [String], seen: [String], counts: [String: Int])] = []
        do {
            let fx = try Fixture()
            try fx.register("W", [dep("D")], scope: .weak)
            try fx.register("D", label: "D@root")
            var seen: [String] = []
            let before = Container.buildsOnThisThread
            let counts = try counted {
                for round in 0..<2 {
                    let child = try fx.child()
                    try fx.register("D", in: child, label: "D@child\(round)")
                    let w = try fx.resolve("W", in: child)
                    let again = try fx.resolve("W")
                    withExtendedLifetime((w, again)) { seen.append("\(Obj.of(w).dep(0).label) one W \(w.pointer == again.pointer)") }
                }
            }
            seen.append("builds \(Container.buildsOnThisThread - before)")
            #expect(fx.tracker.badDrops == 0)
            outcomes.append((fx.tracker.log, seen, counts))
        }
        #expect(outcomes[0].seen == ["D@child0 one W true", "D@child1 one W true", "builds 0"])
        #expect(outcomes[0].counts == ["resolves": 2], "each round's first resolve, the creation plan: \(outcomes[0].counts)")
    }
}
