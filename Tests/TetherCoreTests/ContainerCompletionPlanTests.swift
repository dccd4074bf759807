// Plans with container steps and completion callbacks, under roots with or without runtime arguments
// (issue 28 item 1, `containerScoped`, `containerWithCompletions`): such a plan replays
// into the thread's graph, which claims the container steps' cells in the resolving child as its
// build does, runs the callbacks, and publishes what it made only when the resolve succeeds. Each
// test asserts the factory calls, callbacks, drops and their order (the build's, which ran beside it as
// an oracle until branch noplansoff), and the plan's path by `PlanStats` (no decline counted).
import Foundation
import Testing
@testable import TetherCore

@Suite struct ContainerCompletionPlanTests {
    /// `requests` children, each resolving `root` `times` times (each instance dropped before the
    /// next, what is container-scoped kept by the child), then closed: the log, the counts.
    private func serve(root: String = "Handler", requests: Int = 3, times: Int = 3,
                       arguments: (Int) -> [Argument] = { _ in [] }, current: Box<Container?>? = nil,
                       _ setUp: (Fixture) throws -> Void) throws -> (log: [String], counts: [String: Int], fx: Fixture) {
        let fx = try Fixture()
        try setUp(fx)
        let counts = try counted {
            for r in 0..<requests {
                let child = try fx.child()
                current?.value = child
                for n in 0..<times {
                    do {
                        let instance = try fx.resolve(root, in: child, arguments(r * times + n))
                        fx.tracker.note("resolved \(Obj.of(instance).label) \(Obj.of(instance).words.first.map { $0 < 0x1000 ? "\($0)" : "_" } ?? "")")
                    } catch let error as TetherError {
                        fx.tracker.note("failed \(error.code)")
                    }
                }
                current?.value = nil
                _ = try child.close()
                fx.tracker.note("closed")
            }
        }
        #expect(fx.tracker.badDrops == 0 && fx.tracker.liveCount == 0)
        return (fx.tracker.log, counts, fx)
    }

    /// A CONTAINER-scoped Session with a completion callback under a graph-scoped Handler, resolved from
    /// three children: one Session per child, completed once, published into it after its callback
    /// (a resolve nested in the callback is refused it as unfinished, as in the build), taken cached after.
    @Test func aContainerStepWithACompletionCallbackIsPlanned() throws {
        let current = Box<Container?>(nil)
        let setUp = { (fx: Fixture) throws in
            try fx.register("Req")
            let session = try fx.register("Session", [dep("Req")], scope: .container)
            fx.onComplete(session) { _, _, _ in
                // Not published yet: the graph holds its made cell, a resolve of it from the child is refused.
                do {
                    _ = try fx.resolve("Session", in: current.value!)
                    fx.tracker.note("nested Session: resolved")
                } catch let error as TetherError {
                    fx.tracker.note("nested Session: \(error.code)")
                }
            }
            try fx.register("Handler", [dep("Session")])
        }
        let planned = try serve(current: current, setUp)
        // Each child: its first Handler makes the Session (completed, refused to the nested resolve), the next two
        // take it cached; the child's close drops the Session, then its Req.
        let child = ["make Req", "make Session", "make Handler", "complete Session", "nested Session: cycle", "resolved Handler _",
                     "drop Handler", "make Handler", "resolved Handler _", "drop Handler", "make Handler", "resolved Handler _",
                     "drop Handler", "drop Session", "drop Req", "closed"]
        #expect(planned.log == Array(repeating: child, count: 3).flatMap { $0 })
        #expect(planned.fx.tracker.made("Session") == 3 && planned.fx.tracker.made("Req") == 3 && planned.fx.tracker.made("Handler") == 9)
        #expect(planned.log.count { $0 == "complete Session" } == 3)
        // Every resolve is the plan's, the first one recording it; the nested one too (`containerHeld` before):
        // its plan fails where the build asks for the Session's cell, which the resolve further out made.
        #expect(planned.counts == ["resolves": 12])
        #expect(planned.fx.container.registration(for: Key("Handler"))!.hasCurrentPlan)
    }

    /// The Session's callback fails in each child's first resolve: nothing is published, what the
    /// resolve made is dropped (dependents first), and the next resolve makes a Session again.
    @Test func aFailedCallbackPublishesNothing() throws {
        let setUp = { (fx: Fixture) throws in
            try fx.register("Req")
            let session = try fx.register("Session", [dep("Req")], scope: .container)
            let failures = Box(0)
            fx.onComplete(session) { _, _, _ in
                failures.value += 1
                if failures.value % 2 == 1 { throw TetherError(.factoryFailed, "no") }
            }
            try fx.register("Handler", [dep("Session")])
        }
        let planned = try serve(times: 2, setUp)
        // Each child: the first resolve's callback fails (dependents dropped first), the second's succeeds.
        let child = ["make Req", "make Session", "make Handler", "complete Session", "drop Handler", "drop Session", "drop Req",
                     "failed factoryFailed", "make Req", "make Session", "make Handler", "complete Session", "resolved Handler _",
                     "drop Handler", "drop Session", "drop Req", "closed"]
        #expect(planned.log == Array(repeating: child, count: 3).flatMap { $0 })
        #expect(planned.fx.tracker.made("Session") == 6 && planned.fx.tracker.dropped("Session") == 6)
        #expect(planned.counts == ["resolves": 6])
    }

    /// A root taking a runtime argument over a CONTAINER-scoped Session with a callback (no shared
    /// registration takes runtime arguments: `Registration.check`): each resolve's argument reaches the
    /// root, the Session is made once per child with its first resolve, completed once.
    @Test func aRootWithArgumentsOverAContainerStepWithACallbackIsPlanned() throws {
        let setUp = { (fx: Fixture) throws in
            try fx.register("Req")
            let session = try fx.register("Session", [dep("Req")], scope: .container)
            fx.onComplete(session)
            try fx.register("Handler", [.argument(.i64), dep("Session")])
        }
        let arguments = { (n: Int) in [Argument(type: .i64, bits: UInt64(40 + n))] }
        let planned = try serve(times: 2, arguments: arguments, setUp)
        #expect(planned.log == (0..<3).flatMap { r in
            ["make Req", "make Session", "make Handler", "complete Session", "resolved Handler \(40 + 2 * r)", "drop Handler",
             "make Handler", "resolved Handler \(41 + 2 * r)", "drop Handler", "drop Session", "drop Req", "closed"]
        })
        #expect(planned.log.filter { $0.hasPrefix("resolved") } == (0..<6).map { "resolved Handler \(40 + $0)" })
        #expect(planned.fx.tracker.made("Session") == 3 && planned.log.count { $0 == "complete Session" } == 3)
        #expect(planned.counts == ["resolves": 6])
        #expect(planned.fx.container.registration(for: Key("Handler"))!.hasCurrentPlan)
    }

    /// Some container steps cached in the child, others not (`containerHeld` before): the run takes the
    /// cached Session, skips what only it asked for (its Req), and makes the Late over it with its own Conn.
    @Test func aMixOfCachedAndMissingContainerStepsIsPlanned() throws {
        let setUp = { (fx: Fixture) throws in
            try fx.register("Req")
            try fx.register("Conn")
            try fx.register("Session", [dep("Req")], scope: .container)
            try fx.register("Late", [dep("Session"), dep("Conn")], scope: .container)
            try fx.register("Handler", [dep("Late"), dep("Session")])
        }
        let run = { () throws -> (log: [String], counts: [String: Int]) in
            let fx = try Fixture()
            try setUp(fx)
            var counts: [String: Int] = [:]
            for _ in 0..<3 {
                let child = try fx.child()
                _ = try fx.resolve("Session", in: child)  // cached in the child before its Handlers
                let delta = try counted {
                    for _ in 0..<2 { _ = try fx.resolve("Handler", in: child) }
                }
                for (k, v) in delta { counts[k, default: 0] += v }
                _ = try child.close()
                fx.tracker.note("closed")
            }
            #expect(fx.tracker.badDrops == 0 && fx.tracker.liveCount == 0)
            return (fx.tracker.log, counts)
        }
        let planned = try run()
        // Each child: the Session cached first; the first Handler makes Late over it with its Conn, the second takes
        // both cached; the close drops Late (then its Conn), then the Session (then its Req).
        let child = ["make Req", "make Session", "make Conn", "make Late", "make Handler", "drop Handler", "make Handler",
                     "drop Handler", "drop Late", "drop Conn", "drop Session", "drop Req", "closed"]
        #expect(planned.log == Array(repeating: child, count: 3).flatMap { $0 })
        #expect(planned.log.count { $0 == "make Req" } == 3 && planned.log.count { $0 == "make Late" } == 3)
        // Each child's first Handler resolve is the mix; the second finds both cached.
        #expect(planned.counts == ["resolves": 6])
    }
}
