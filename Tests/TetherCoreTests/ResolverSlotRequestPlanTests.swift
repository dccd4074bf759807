// RESOLVER slots over container or value steps, and a container step's own RESOLVER slot (branch
// `resolverslot`): these used to decline (`resolverSlot`) to `Graph.build`. The run enters the steps
// before the slot's owner as the build has entered them when its factory runs (`Plan.openFrames`,
// `enterRequest`), so a get through the resolver finds them; the container steps' publications keep
// the build's order. Each runs with plans and without: the same factory calls and drops in order, the
// same instances and errors; with plans no build (`Container.buildsOnThisThread`) and no decline counted.
// Since branch `resolverslot2` a container step after the slot's owner that is not one of its askers too: claimed
// late, where the build claims it (`Plan.claimLate`).
import Foundation
import Synchronization
import Testing
@testable import TetherCore

@Suite struct ResolverSlotRequestPlanTests {
    /// The builds `body` ran on this thread (`Graph.build`), and its `PlanStats` deltas.
    private func builds(_ body: () throws -> Void) rethrows -> (builds: Int, counts: [String: Int]) {
        let before = Container.buildsOnThisThread
        let counts = try counted(body)
        return (Container.buildsOnThisThread - before, counts)
    }

    /// A child of `fx`'s container.
    private func child(_ fx: Fixture) throws -> Container {
        let child = try fx.child()
        return child
    }

    /// A CONTAINER-scoped S whose RESOLVER slot gets the graph's P (its DEP, made before it), a singleton G the
    /// get builds, S itself (under construction: the build's cycle) and a weak W; from three children and the
    /// root, each twice (the second a cache hit). S is the container step that has the slot (the C tests'
    /// `runtime_edge_scoped_built_over_a_cleared_override` shape): published into each container after G.
    @Test func aContainerStepsResolverSlotRunsThePlan() throws {
        var builds: [Int] = []
        let (log, seen, counts) = try planned { fx -> [String] in
            try fx.register("P")
            try fx.register("G", scope: .singleton)
            try fx.register("W")
            try fx.register("S", [dep("P"), .resolver], scope: .container) { obj in
                let r = try #require(fx.bridge.resolver(obj.words[1]))
                fx.tracker.note("P is the graph's: \(try r.get(Key("P")).pointer == obj.depPointer(0))")
                obj.got.append(try r.get(Key("G")).pointer)
                obj.weaks.append(try r.getWeak(Key("W")))
                do { _ = try r.get(Key("S")) } catch let e as TetherError { fx.tracker.note("S: \(e.code) \(e.message)") }
            }
            var seen: [String] = []
            let (n, _) = try self.builds {
                for target in [try self.child(fx), try self.child(fx), fx.container] {
                    let s = try fx.resolve("S", in: target)
                    seen.append("cached: \(try fx.resolve("S", in: target).pointer == s.pointer), G: \(Obj.of(s).got[0] == (try fx.resolve("G")).pointer)")
                    if target !== fx.container { _ = try target.close() }
                }
            }
            builds.append(n)
            return seen
        }
        #expect(seen.allSatisfy { $0 == "cached: true, G: true" }, "\(seen)")
        #expect(log.contains { $0.hasPrefix("S: cycle dependency cycle through constructors: \"S\" -> \"S\"") }, "\(log)")
        #expect(log.filter { $0 == "make S" }.count == 3 && log.filter { $0 == "make G" }.count == 1)
        #expect(builds[0] == 0, "\(builds)")
        #expect(counts["resolverSlot"] == nil && counts["resolves"] != nil, "\(counts)")
    }

    /// A graph-scoped H with a RESOLVER slot between container steps: C (made before H, its DEP) and R (the root,
    /// H's asker); H's factory gets C (the graph's, entered before the factory), the request's value V, R (under
    /// construction: the cycle with its path) and a CONTAINER-scoped D the plan does not make (built by the get,
    /// published into the child, after C and before R, as the build's). Closing each child drops them in reverse.
    @Test func aResolverSlotOverContainerStepsAndAValueRunsThePlan() throws {
        var builds: [Int] = []
        let (log, seen, counts) = try planned { fx -> [String] in
            _ = try fx.container.declareValue(Key("V"))
            try fx.register("C", scope: .container)
            try fx.register("D", scope: .container)
            try fx.register("R", [dep("H")], scope: .container)
            try fx.register("H", [dep("C"), dep("V"), .resolver]) { obj in
                let r = try #require(fx.bridge.resolver(obj.words[2]))
                fx.tracker.note("C is the graph's: \(try r.get(Key("C")).pointer == obj.depPointer(0))")
                fx.tracker.note("V is the request's: \(try r.get(Key("V")).pointer == obj.depPointer(1))")
                obj.got.append(try r.get(Key("D")).pointer)
                do { _ = try r.get(Key("R")) } catch let e as TetherError { fx.tracker.note("R: \(e.code) \(e.message)") }
            }
            var seen: [String] = []
            let (n, _) = try self.builds {
                for k in 0..<3 {
                    let child = try self.child(fx)
                    let v = Obj(label: "V\(k)", words: [])
                    _ = try child.provideValue(Key("V"), Ref(retaining: v).opaque, context: nil,
                                               destructor: { p, _ in Ref<Obj>(opaque: p).release() })
                    let root = try fx.resolve("R", in: child)
                    let h = Obj.of(root).dep(0)
                    seen.append("C: \(h.depPointer(0) == (try fx.resolve("C", in: child)).pointer), D: \(h.got[0] == (try fx.resolve("D", in: child)).pointer), R: \(root.pointer == (try fx.resolve("R", in: child)).pointer)")
                    _ = consume root
                    _ = try child.close()
                }
            }
            builds.append(n)
            return seen
        }
        #expect(seen.allSatisfy { $0 == "C: true, D: true, R: true" }, "\(seen)")
        #expect(log.contains { $0.hasPrefix("R: cycle dependency cycle through constructors: \"R\" -> \"H\" -> \"R\"") }, "\(log)")
        let once = ["make C", "C is the graph's: true", "V is the request's: true", "make D", "make H", "make R", "drop R", "drop H", "drop D", "drop C"]
        #expect(Array(log.filter { !$0.hasPrefix("R: ") }.prefix(10)) == once, "\(log)")
        #expect(builds[0] == 0, "\(builds)")
        #expect(counts["resolverSlot"] == nil, "\(counts)")
    }

    /// A failure after the resolver's gets built: H's own factory fails (its D built, the C made before it), or F,
    /// made after H, fails. Nothing is published into the child (the next resolve makes C and D again), and
    /// what was made goes last made first, D right before H, as the build's abort lets go of it.
    @Test func aFailureAfterTheResolversGetsPublishesNothing() throws {
        for failsInH in [true, false] {
            var builds: [Int] = []
            let (log, seen, _) = try planned { fx -> [String] in
                try fx.register("C", scope: .container)
                try fx.register("D", scope: .container)
                try fx.register("F", scope: .transient) { _ in if !failsInH { throw CallbackFailure(reason: "no F") } }
                try fx.register("R", [dep("H"), dep("F")], scope: .container)
                try fx.register("H", [dep("C"), .resolver]) { obj in
                    obj.got.append(try #require(fx.bridge.resolver(obj.words[1])).get(Key("D")).pointer)
                    if failsInH { throw CallbackFailure(reason: "no H") }
                }
                var errors: [String] = []
                let (n, _) = try self.builds {
                    let child = try self.child(fx)
                    for _ in 0..<2 {
                        do { _ = try fx.resolve("R", in: child) } catch let e as TetherError { errors.append(e.message) }
                    }
                    _ = try child.close()
                }
                builds.append(n)
                return errors
            }
            #expect(seen == Array(repeating: failsInH ? "factory for \"H\" returned NULL: no H (while resolving \"R\" -> \"H\")"
                                                       : "factory for \"F\" returned NULL: no F (while resolving \"R\" -> \"F\")", count: 2), "\(seen)")
            let once = failsInH ? ["make C", "make D", "drop D", "drop C"] : ["make C", "make D", "make H", "drop H", "drop D", "drop C"]
            #expect(log == once + once, "\(failsInH): \(log)")
            #expect(builds[0] == 0, "\(builds)")
        }
    }

    /// A request child's first resolve over singletons not cached (a creation plan over container steps,
    /// `Graph.claimWithContainerSteps`): H's RESOLVER slot gets S2, a singleton the plan makes after H (the get
    /// builds it; the run takes it from the graph, `Plan.takeBuilt`, and does not publish it twice), and S, made
    /// before H. The singletons and the container step are published once, in the build's order; the second
    /// child's resolve runs the warm plan.
    @Test func aCreationPlanOverContainerStepsWithAResolverSlotRunsThePlan() throws {
        var builds: [Int] = []
        let (log, seen, counts) = try planned { fx -> [String] in
            try fx.register("C", scope: .container)
            try fx.register("S", scope: .singleton)
            try fx.register("S2", scope: .singleton)
            try fx.register("H", [dep("C"), dep("S"), .resolver]) { obj in
                let r = try #require(fx.bridge.resolver(obj.words[2]))
                obj.got.append(try r.get(Key("S2")).pointer)
                fx.tracker.note("S is the graph's: \(try r.get(Key("S")).pointer == obj.depPointer(1))")
            }
            try fx.register("R", [dep("H"), dep("S2")])
            var seen: [String] = []
            let (n, _) = try self.builds {
                for _ in 0..<2 {
                    let child = try self.child(fx)
                    let root = try fx.resolve("R", in: child)
                    let h = Obj.of(root).dep(0)
                    seen.append("S2: \(h.got[0] == Obj.of(root).depPointer(1)), \(h.got[0] == (try fx.resolve("S2")).pointer), C: \(h.depPointer(0) == (try fx.resolve("C", in: child)).pointer)")
                    _ = consume root
                    _ = try child.close()
                }
            }
            builds.append(n)
            return seen
        }
        #expect(seen.allSatisfy { $0 == "S2: true, true, C: true" }, "\(seen)")
        #expect(log.filter { $0 == "make S2" }.count == 1 && log.filter { $0 == "make S" }.count == 1, "\(log)")
        #expect(builds[0] == 0, "\(builds)")
        #expect(counts["resolverSlot"] == nil, "\(counts)")
    }

    /// A container step after the slot's owner that is not one of its askers (declined, `resolverSlot`, before branch
    /// `resolverslot2`): claimed late, where the build claims it (`Step.claimsLate`, `Plan.claimLate`): at A's get when
    /// A gets it (the graph builds it, the run takes it, `takeBuilt`), else where Root asks for it. C is over a
    /// graph-scoped D (not made when C is taken cached). Two children, each resolving Root twice (the second
    /// finds C cached), and the root container once: C and D made once per container, in the build's order.
    @Test(arguments: [true, false]) func aContainerStepAfterTheOwnerNotItsAskerRunsThePlan(gets: Bool) throws {
        var builds: [Int] = []
        let (log, seen, counts) = try planned { fx -> [String] in
            try fx.register("D")
            try fx.register("C", [dep("D")], scope: .container)
            try fx.register("A", [.resolver]) { obj in
                guard gets else { return }
                obj.got.append(try #require(fx.bridge.resolver(obj.words[0])).get(Key("C")).pointer)
            }
            try fx.register("Root", [dep("A"), dep("C")])
            var seen: [String] = []
            let (n, _) = try self.builds {
                for target in [try self.child(fx), try self.child(fx), fx.container] {
                    for _ in 0..<2 {
                        let root = try fx.resolve("Root", in: target)
                        let got = Obj.of(root).dep(0).got
                        seen.append("same C: \(got.allSatisfy { $0 == Obj.of(root).depPointer(1) }), cached: \(Obj.of(root).depPointer(1) == (try fx.resolve("C", in: target)).pointer)")
                    }
                    if target !== fx.container { _ = try target.close() }
                }
            }
            builds.append(n)
            return seen
        }
        #expect(seen.allSatisfy { $0 == "same C: true, cached: true" }, "\(seen)")
        let once = gets ? ["make D", "make C", "make A", "make Root", "drop Root", "drop A", "make A", "make Root", "drop Root", "drop A"]
                        : ["make A", "make D", "make C", "make Root", "drop Root", "drop A", "make A", "make Root", "drop Root", "drop A"]
        #expect(Array(log.prefix(10)) == once, "\(log)")
        #expect(log.filter { $0 == "make C" }.count == 3 && log.filter { $0 == "make D" }.count == 3, "\(log)")
        #expect(builds[0] == 0, "\(builds)")
        #expect(counts["resolverSlot"] == nil && counts["resolves"] != nil, "\(counts)")
    }

    /// The late claim's failure is the build's, where the build reports it: Root is resolved from N's factory while
    /// the resolve further out (Outer) has made C and not published it (`unfinished`). A's get fails with it (A
    /// goes on, or fails with it); Root's own ask for C then fails with it too. The same errors, calls and drops.
    @Test(arguments: [true, false]) func aLateClaimsFailureIsTheBuilds(propagates: Bool) throws {
        var builds: [Int] = []
        let (log, seen, counts) = try planned { fx -> [String] in
            try fx.register("C", scope: .container)
            try fx.register("A", [.resolver]) { obj in
                do { _ = try #require(fx.bridge.resolver(obj.words[0])).get(Key("C")) } catch let e as TetherError {
                    fx.tracker.note("get C: \(e.code) \(e.message)")
                    if propagates { throw e }
                }
            }
            try fx.register("Root", [dep("A"), dep("C")])
            let child = try self.child(fx)
            try fx.register("N") { _ in
                do { _ = try fx.resolve("Root", in: child) } catch let e as TetherError { fx.tracker.note("Root: \(e.code) \(e.message)") }
            }
            try fx.register("Outer", [dep("C"), dep("N")])
            var seen: [String] = []
            let (n, _) = try self.builds {
                _ = try fx.resolve("Outer", in: child)
                let root = try fx.resolve("Root", in: child)  // (C published now: the plan's warm run)
                seen.append("C: \(Obj.of(root).depPointer(1) == (try fx.resolve("C", in: child)).pointer)")
            }
            builds.append(n)
            _ = try child.close()
            return seen
        }
        #expect(seen == ["C: true"], "\(seen)")
        let notes = log.filter { $0.hasPrefix("get C: ") || $0.hasPrefix("Root: ") }
        #expect(notes.count == 2 && notes.allSatisfy { $0.contains("\"C\"") }, "\(log)")
        #expect(notes.first!.hasPrefix("get C: cycle \"C\" was resolved again"), "\(notes)")
        #expect(builds[0] == 0, "\(builds)")
        #expect(counts["resolverSlot"] == nil, "\(counts)")
    }

    /// Another thread making C (its cell held): the build runs A's factory first and waits for C where A's get asks
    /// (or where Root asks), then takes the one published; the run does the same, claiming C late (a run claiming it
    /// before any factory would wait before A's, and C's factory, waiting for A's, would time out).
    @Test(arguments: [true, false]) func aLateClaimWaitsWhereTheBuildWaits(gets: Bool) throws {
        do {
            let fx = try Fixture()
            let entered = Gate()
            let aMade = Flag(), timedOut = Flag()
            try fx.register("C", scope: .container) { _ in
                guard !aMade.isSet else { return }
                entered.arrive(andWaitFor: 2)
                let deadline = ContinuousClock.now + .seconds(20)
                while !aMade.isSet {
                    if ContinuousClock.now > deadline { timedOut.set(); return }
                    sched_yield()
                }
            }
            try fx.register("A", [.resolver]) { obj in
                aMade.set()
                if gets { obj.got.append(try #require(fx.bridge.resolver(obj.words[0])).get(Key("C")).pointer) }
            }
            try fx.register("Root", [dep("A"), dep("C")])
            let child = try self.child(fx)
            let c = Box<UnsafeMutableRawPointer?>(nil), rootC = Box<UnsafeMutableRawPointer?>(nil), seen = Box(""), counts = Box<[String: Int]>([:])
            onThreads(2) { i in
                if i == 0 {
                    c.value = try? fx.resolve("C", in: child).pointer
                    return
                }
                entered.arrive(andWaitFor: 2)
                let before = Container.buildsOnThisThread
                counts.value = counted {
                    guard let root = try? fx.resolve("Root", in: child) else { seen.value = "failed"; return }
                    let got = Obj.of(root).dep(0).got
                    rootC.value = Obj.of(root).depPointer(1)
                    seen.value = "got: \(got.allSatisfy { $0 == Obj.of(root).depPointer(1) })"
                }
                if Container.buildsOnThisThread != before { seen.value += ", built" }
            }
            #expect(!timedOut.isSet)
            #expect(seen.value == "got: true" && rootC.value != nil && rootC.value == c.value, "\(seen.value)")
            #expect(fx.tracker.made("C") == 1 && fx.tracker.made("A") == 1)
            #expect(counts.value == ["resolves": 1], "\(counts.value)")
            _ = try child.close()
            _ = try fx.container.close()
            #expect(fx.tracker.badDrops == 0 && fx.tracker.liveCount == 0)
        }
    }
}

/// A flag threads set and read (`Atomic` is not copyable: a closure cannot capture it).
private final class Flag: Sendable {
    private let value = Atomic<Bool>(false)
    var isSet: Bool { value.load(ordering: .sequentiallyConsistent) }
    func set() { value.store(true, ordering: .sequentiallyConsistent) }
}
