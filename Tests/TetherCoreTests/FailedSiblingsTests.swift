// A failed resolve's let-go: the cells it claimed are released first, then what it made is let go of, last made
// first (dependents first), as `Graph.abort` does, on both paths (`Plan.releaseClaims`). A destructor running then
// holds no cell: another thread's resolve of a key the failed one claimed beside others waits for no destructor of a
// key it does not ask for, and a resolve on this thread claims anew.
import Foundation
import Testing
@testable import TetherCore

@Suite struct FailedSiblingsTests {
    /// `planned` of R (-> A, B, F; A and B singletons, or container-scoped in a child, `container`) resolved while F
    /// fails, then once more. `inDestructor` runs in the destructor of the first instance of `key` (after its drop is
    /// logged; its end logged too). Seen: the first resolve's error, what `inDestructor` returned, the second R's tree.
    private func failingOnce(container: Bool, _ key: String, inDestructor: @escaping @Sendable (Fixture, Container) -> String)
        throws -> (log: [String], seen: [String], counts: [String: Int]) {
        try planned { fx -> [String] in
            let scope: Scope = container ? .container : .singleton
            let failing = Box(true)
            try fx.register("R", [dep("A"), dep("B"), dep("F")], scope: .transient)
            let registrations = ["A": try fx.register("A", scope: scope), "B": try fx.register("B", scope: scope)]
            try fx.register("F", scope: .transient) { _ in if failing.value { throw CallbackFailure(reason: "F down") } }
            let target = container ? try fx.child() : fx.container
            let answered = Box<[String]>([])
            let tracker = fx.tracker
            registrations[key]!.setContext(nil) { p, _ in
                tracker.dropped(key, p)
                Ref<Obj>(opaque: p).release()
                guard tracker.dropped(key) == 1 else { return }
                answered.value.append(inDestructor(fx, target))
                tracker.note("\(key)'s destructor ends")
            }
            var seen: [String] = []
            do { _ = try fx.resolve("R", in: target) } catch let e as TetherError { seen.append("R: \(e.code)") }
            seen += answered.value
            failing.value = false
            let r = try fx.resolve("R", in: target)
            seen.append(withExtendedLifetime(r) { Obj.of(r).tree() })
            if container { _ = try target.close() }
            return seen
        }
    }

    /// `key` resolved from `target`: its label, or the error's code.
    private static func answer(_ fx: Fixture, _ key: String, in target: Container) -> String {
        do { return "\(key): " + Obj.of(try fx.resolve(key, in: target)).label } catch let e as TetherError {
            return "\(key): \(e.code)"
        } catch { return "\(key): \(error)" }
    }

    /// R claims its sibling keys A and B together (`claimInOrder`; container-scoped ones in the resolving child), makes
    /// them and fails at F; what it made is let go of last made first: B, then A. While A's destructor runs, another
    /// thread resolves B without waiting (`WaitMode`): B's cell is free, so it makes B and goes on, as the build lets it
    /// (`Graph.abort`: the cells, then what it made); the second R takes that B. Before: a plan's failed run let go of
    /// what it made with the cells still held (released after, by `Graph.abort` or `runRequest`): that resolve was
    /// refused (`wouldBlock`), and a waiting one waited for A's destructor.
    @Test(arguments: [false, true]) func aFailedResolvesSiblingsAreLetGoOfWithTheirCellsReleased(container: Bool) throws {
        let run = try failingOnce(container: container, "A") { fx, target in
            let other = Box("")
            onThreads(1) { _ in other.value = WaitMode.run(noWait: true) { Self.answer(fx, "B", in: target) }.result }
            return other.value
        }
        #expect(run.counts == ["resolves": 2], "both of this thread's resolves the plans': \(run.counts)")
        #expect(run.seen == ["R: factoryFailed", "B: B", "R(A,B,F)"], "\(run.seen)")
        #expect(Array(run.log.prefix(6)) == ["make A", "make B", "drop B", "drop A", "make B", "A's destructor ends"], "\(run.log)")
    }

    /// The same on one thread: B's destructor (the failed resolve's B, let go of before A) resolves A, which the failed
    /// resolve made under the cell it claimed beside B's: that cell released, the resolve makes A anew and caches it, as
    /// the build's; the second R takes that A. Before: a plan's failed run let go of B with A's cell held and A made
    /// there: that resolve was refused (A unfinished).
    @Test(arguments: [false, true]) func aDestructorOfAFailedResolvesKeyResolvesItsSiblingAnew(container: Bool) throws {
        let run = try failingOnce(container: container, "B") { fx, target in Self.answer(fx, "A", in: target) }
        #expect(run.counts == ["resolves": 3], "the failed R, the destructor's A and the second R, each a plan's: \(run.counts)")
        #expect(run.seen == ["R: factoryFailed", "A: A", "R(A,B,F)"], "\(run.seen)")
        #expect(Array(run.log.prefix(6)) == ["make A", "make B", "drop B", "make A", "B's destructor ends", "drop A"], "\(run.log)")
    }
}
