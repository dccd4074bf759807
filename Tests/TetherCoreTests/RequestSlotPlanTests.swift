// Shapes that read the request and used to send a resolve to `Graph.build` (branch `declinerest`):
// slots made per resolve over container or value steps (`lazySlot`, `weakLazySlot`,
// `slotsWithRequestSteps`), a nested resolve meeting a step under construction further out in a plan
// that reads the request (`cycle`), and a container step's cell held where the run without a graph
// declined (`containerHeld`). Each runs with plans and without: the same factory calls and drops in
// order, the same instances and errors, and with plans no decline counted.
import Foundation
import Testing
@testable import TetherCore

@Suite struct RequestSlotPlanTests {
    private func cell(_ fx: Fixture, _ obj: Obj, slot: Int) throws -> LazyCell {
        try #require(fx.bridge.cell(obj.words[slot]))
    }

    /// X and Y container-scoped, Y's WEAK_LAZY slot on X (on the path): the slot is in a container step,
    /// its cell waits for X and is bound when X is made; from each of three children.
    @Test func aWeakLazySlotInAContainerStepRunsThePlan() throws {
        let (_, seen, counts) = try planned { fx -> [Bool] in
            try fx.register("X", [dep("Y")], scope: .container)
            try fx.register("Y", [weakLazyDep("X")], scope: .container)
            var same: [Bool] = []
            for _ in 0..<3 {
                let child = try fx.child()
                let x = try fx.resolve("X", in: child)
                let lazy = try cell(fx, Obj.of(x).dep(0), slot: 0)
                same.append(try lazy.get() == x.pointer)  // the graph's X, not a second one
                same.append(try fx.resolve("X", in: child).pointer == x.pointer)
                _ = consume x
                _ = try child.close()
            }
            return same
        }
        #expect(seen.allSatisfy { $0 }, "\(seen)")
        // Each child's second resolve is a cache hit (no graph, no plan).
        #expect(counts == ["resolves": 3], "\(counts)")
    }

    /// A graph-scoped root with a LAZY slot on a container-scoped Session, then a DEP on it: the cell is
    /// bound to the Session made in the run, or, the Session taken cached from the child, waits as the
    /// build's (`Graph.existing` enters none); either way it answers the child's Session. A LAZY slot on
    /// a declared value waits too.
    @Test func aLazySlotOnAContainerStepOrAValueRunsThePlan() throws {
        let (_, seen, counts) = try planned { fx -> [Bool] in
            _ = try fx.container.declareValue(Key("Request"))
            try fx.register("Session", scope: .container)
            try fx.register("H", [lazyDep("Session"), dep("Session"), lazyDep("Request"), dep("Request")])
            var answers: [Bool] = []
            for _ in 0..<2 {
                let child = try fx.child()
                let request = Obj(label: "Request", words: [])
                _ = try child.provideValue(Key("Request"), Ref(retaining: request).opaque, context: nil,
                                           destructor: { p, _ in Ref<Obj>(opaque: p).release() })
                for _ in 0..<2 {  // the second: the Session cached in the child
                    let h = try fx.resolve("H", in: child)
                    let obj = Obj.of(h)
                    answers.append(try cell(fx, obj, slot: 0).get() == obj.depPointer(1))
                    answers.append(try cell(fx, obj, slot: 2).get() == obj.depPointer(3))
                    answers.append(Obj.at(obj.depPointer(3)) === request)
                    _ = consume h
                }
                _ = try child.close()
            }
            return answers
        }
        #expect(seen.count == 12 && seen.allSatisfy { $0 }, "\(seen)")
        // (The cells' gets are resolves too: those answered from the child's cache or value too.)
        #expect(counts.keys.sorted() == ["resolves"], "\(counts)")
    }

    /// ALL, WEAK and FACTORY slots in a container step: made per resolve, as the build's.
    @Test func otherSlotsInAContainerStepRunThePlan() throws {
        let (_, seen, counts) = try planned { fx -> [Int] in
            try fx.register("Item")
            try fx.register("Item#two")
            try fx.register("P")
            try fx.register("Session", [.all(Key("Item")), weakDep("P"), dep("P"), .factory(Key("P"))], scope: .container)
            var shapes: [Int] = []
            for _ in 0..<2 {
                let child = try fx.child()
                let session = try fx.resolve("Session", in: child)
                shapes.append(Obj.of(session).words.count)
                _ = consume session
                _ = try child.close()
            }
            return shapes
        }
        #expect(seen == [4, 4], "\(seen)")
        #expect(counts == ["resolves": 2], "\(counts)")
    }

    /// A container-scoped X whose factory resolves Y from the same child, Y's over X: the nested plan
    /// reads the request and meets X under construction: it runs up to it (nothing before it here),
    /// claiming no cell of X's, and reports the build's re-entry; X is made once, and cached.
    @Test func aNestedResolveMeetingAContainerStepRunsItsPlanUpToIt() throws {
        let (_, seen, counts) = try planned { fx -> [String] in
            let messages = Box<[String]>([])
            let current = Box<Container?>(nil)
            try fx.register("L", scope: .transient)
            try fx.register("X", scope: .container, body: { _ in
                do { _ = try fx.resolve("Y", in: current.value!) } catch let error as TetherError { messages.value.append(error.message) }
            })
            try fx.register("Y", [dep("L"), dep("X")], scope: .container)
            for _ in 0..<3 {
                let child = try fx.child()
                current.value = child
                let x = try fx.resolve("X", in: child)
                #expect(try fx.resolve("X", in: child).pointer == x.pointer)
                _ = consume x
                current.value = nil
                _ = try child.close()
            }
            #expect(fx.tracker.made("X") == 3 && fx.tracker.calls("Y") == 0 && fx.tracker.made("L") == 3 && fx.tracker.dropped("L") == 3)
            return messages.value
        }
        #expect(seen.count == 3 && seen[0].contains("\"X\" -> \"Y\" -> \"X\""), "\(seen)")
        // Three children: X's resolve, and Y's nested in it.
        #expect(counts == ["resolves": 6], "\(counts)")
    }

    /// A resolve asked not to wait, from a child whose container-scoped root another thread is making:
    /// refused (`wouldBlock`) with the build's message, through the plan replayed into the graph
    /// (`containerHeld` before); the maker's instance is the one both then have.
    @Test func aNoWaitResolveFindingAHeldContainerStepRunsThePlan() throws {
        var outcomes: [[String]] = []
        do {
            let fx = try Fixture()
            let started = Box(0)
            let open = Box(true)
            try fx.register("Conn")
            try fx.register("Slow", [dep("Conn")], scope: .container, body: { _ in
                started.value += 1
                while !open.value { usleep(1_000) }
            })
            let warm = try fx.child()
            _ = try fx.resolve("Slow", in: warm)  // records the plan
            open.value = false
            let child = try fx.child()
            let seen = Box<[String]>([])
            let declines = Box<[String: Int]>([:])
            onThreads(2) { i in
                if i == 0 {
                    _ = try? fx.resolve("Slow", in: child)
                    return
                }
                while started.value < 2 { usleep(1_000) }
                PlanStats.countOnThisThread()
                let before = PlanStats.thisThread()
                let (got, blocked) = WaitMode.run(noWait: true) { () -> String in
                    do { _ = try fx.resolve("Slow", in: child); return "ok" } catch let e as TetherError { return "\(e.code): \(e.message)" } catch { return "?" }
                }
                for (name, n) in PlanStats.thisThread() where name != "resolves" && n != before[name, default: 0] { declines.value[name] = n }
                seen.value.append("\(got) blocked \(blocked)")
                open.value = true
            }
            let a = try fx.resolve("Slow", in: child)
            #expect(fx.tracker.made("Slow") == 2, "one in the warm-up child, one here")
            #expect(declines.value.isEmpty, "\(declines.value)")
            _ = consume a
            _ = try child.close()
            _ = try warm.close()
            #expect(fx.tracker.badDrops == 0 && fx.tracker.liveCount == 0)
            outcomes.append(seen.value)
        }
        #expect(outcomes[0].count == 1 && outcomes[0][0].contains("wouldBlock") && outcomes[0][0].contains("\"Slow\""), "\(outcomes)")
    }

    /// A key not registered and a constructor cycle past a container step with a completion callback or a
    /// LAZY slot (`missing`, `cycle` before): the failing plan replays into the graph with the request, makes
    /// what the build makes before the error (the container step too), lets go of it, caches nothing.
    @Test func aFailingPlanOverAContainerStepWithACallbackOrASlotRunsThePlan() throws {
        let (_, seen, counts) = try planned { fx -> [String] in
            let session = try fx.register("Session", [lazyDep("T")], scope: .container)
            fx.onComplete(session)
            try fx.register("T", scope: .transient)
            try fx.register("M", [dep("Session"), dep("Nowhere")])
            try fx.register("A", [dep("Session"), dep("B")])
            try fx.register("B", [dep("A")])
            var errors: [String] = []
            for _ in 0..<2 {
                let child = try fx.child()
                for key in ["M", "A"] {
                    do { _ = try fx.resolve(key, in: child) } catch let e as TetherError { errors.append("\(e.code): \(e.message)") }
                }
                _ = try child.close()
            }
            #expect(fx.tracker.made("Session") == 4 && fx.tracker.dropped("Session") == 4, "made and let go of each time")
            return errors
        }
        #expect(seen.count == 4 && seen[0].contains("Nowhere") && seen[1].contains("\"A\" -> \"B\" -> \"A\""), "\(seen)")
        #expect(counts == ["resolves": 4], "\(counts)")
    }
}
