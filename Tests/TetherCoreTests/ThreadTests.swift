// Thread safety: a singleton raced for by many threads is created once; shared
// instances are published only when their graph is complete; instances outlive
// the thread that made them.
import Foundation
import Synchronization
import Testing
import TetherCore

@Suite struct ThreadTests {
    static let threads = 8

    @Test func eightThreadsCreateASingletonOnce() throws {
        let fx = try Fixture()
        try fx.register("S", [dep("Dep")], scope: .singleton) { _ in usleep(2_000) }  // widen the race window
        try fx.register("Dep")
        let results = Box<[UnsafeMutableRawPointer?]>(Array(repeating: nil, count: Self.threads))
        onThreads(Self.threads) { i in
            let p = try? fx.resolve("S").pointer
            results.value[i] = p  // Box serialises the writes
        }
        #expect(results.value.allSatisfy { $0 != nil })
        #expect(Set(results.value.map { UInt(bitPattern: $0) }).count == 1)
        #expect(fx.tracker.calls("S") == 1 && fx.tracker.calls("Dep") == 1)
    }

    @Test func racingRoundsAfterResetsCreateOncePerRound() throws {
        let fx = try Fixture()
        let s = try fx.register("S", scope: .singleton) { _ in sched_yield() }
        try fx.register("Root", [dep("S"), dep("G")])
        try fx.register("G")
        let completed = Box(0)
        fx.onComplete(s) { _, _, _ in completed.value += 1 }
        let failures = Box(0)
        for round in 1...10 {
            let seen = Box<Set<UInt>>([])
            onThreads(Self.threads) { _ in
                do {
                    let root = try fx.resolve("Root")
                    let sp = UInt(bitPattern: Obj.of(root).depPointer(0))
                    seen.value.insert(sp)
                } catch {
                    failures.value += 1
                }
            }
            #expect(seen.value.count == 1, "round \(round)")
            #expect(fx.tracker.calls("S") == round)
            fx.container.reset(.singleton)
        }
        #expect(failures.value == 0)
        #expect(completed.value == 10, "each singleton completed once")
        #expect(fx.tracker.calls("G") == 10 * Self.threads)
    }

    @Test func singletonIsSeenOnlyAfterItsCallbacksRan() throws {
        let fx = try Fixture()
        let s = try fx.register("S", scope: .singleton)
        fx.onComplete(s) { _, _, obj in
            usleep(2_000)
            obj.got.append(obj.pointer)  // "completed" marker
        }
        let incomplete = Box(0)
        onThreads(Self.threads) { _ in
            if let s = try? fx.resolve("S"), Obj.of(s).got.isEmpty { incomplete.value += 1 }
        }
        #expect(incomplete.value == 0)
        #expect(fx.tracker.calls("S") == 1)
    }

    @Test func weakScopeRacedWhileAllHoldIsShared() throws {
        let fx = try Fixture()
        try fx.register("W", scope: .weak) { _ in sched_yield() }
        let held = Box<[Instance]>([])
        onThreads(Self.threads) { _ in
            if let w = try? fx.resolve("W") { held.value.append(w) }
        }
        #expect(held.value.count == Self.threads)
        #expect(held.value.allSatisfy { $0 === held.value[0] })
        #expect(fx.tracker.calls("W") == 1)
        held.value = []
        #expect(fx.tracker.dropped("W") == 1)
    }

    @Test func resolvesRacingResetsAndReRegistrationsDestroyEachInstanceOnce() throws {
        let fx = try Fixture()
        try fx.register("S", [dep("Leaf")], scope: .singleton)
        try fx.register("W", scope: .weak)
        try fx.register("Leaf")
        let root = try fx.register("Root", [dep("S"), dep("W"), dep("Leaf")])
        fx.onComplete(root) { r, _, obj in obj.weaks.append(try r.getWeak(Key("S"))) }
        let errors = Box<[String]>([])
        onThreads(Self.threads) { i in
            for n in 0..<200 {
                switch i {
                case 0: fx.container.reset(.singleton)
                case 1:
                    guard n % 2 == 0 else { continue }
                    do { try fx.register("S", [dep("Leaf")], scope: .singleton) } catch { errors.value.append("\(error)") }
                case 2: fx.container.reset(.weak)
                default:
                    do {
                        let r = try fx.resolve("Root")
                        let o = Obj.of(r)
                        if o.dep(0).label != "S" || o.dep(1).label != "W" || o.dep(2).label != "Leaf" {
                            errors.value.append("wrong graph")
                        }
                    } catch {
                        errors.value.append("\(error)")
                    }
                }
            }
        }
        #expect(errors.value.isEmpty, "\(errors.value.prefix(3))")
        try fx.container.close()
        #expect(fx.tracker.liveCount == 0, "everything released once the container is gone")
        #expect(fx.tracker.badDrops == 0)
        #expect(fx.tracker.calls("Root") == 5 * 200)
        #expect(fx.tracker.made("S") == fx.tracker.dropped("S"))
    }

    @Test func overlappingGraphsOnManyThreadsDoNotDeadlock() throws {
        // Two singletons each needed (in opposite orders) by the roots of different threads.
        let fx = try Fixture()
        try fx.register("X", scope: .singleton) { _ in sched_yield() }
        try fx.register("Y", scope: .singleton) { _ in sched_yield() }
        try fx.register("XY", [dep("X"), dep("Y")])
        try fx.register("YX", [dep("Y"), dep("X")])
        let count = Box(0)
        onThreads(Self.threads) { i in
            for _ in 0..<50 {
                if (try? fx.resolve(i % 2 == 0 ? "XY" : "YX")) != nil { count.value += 1 }
            }
        }
        #expect(count.value == Self.threads * 50)
        #expect(fx.tracker.calls("X") == 1 && fx.tracker.calls("Y") == 1)
    }

    /// Instances hold their making thread's copy of the spec (`ThreadSpecs`), which
    /// keeps the registration's spec (and its callbacks) alive once the thread and
    /// the container are gone; the last instance takes it with it.
    @Test func instancesKeepTheirSpecAfterTheirThreadAndContainer() throws {
        let fx = try Fixture()
        weak var watched: ClosureCompletion?
        do {
            let completion = ClosureCompletion { _, _ in }
            watched = completion
            try fx.register("P").addCompletion(completion)
        }
        let kept = Box<[Instance]>([])
        for _ in 0..<2 {
            joinedThread { if let instance = try? fx.resolve("P") { kept.value.append(instance) } }
        }
        try fx.container.close()
        fx.container.dismantle()
        #expect(kept.value.count == 2 && watched != nil)
        kept.value = []  // destroyed on another thread than the makers
        #expect(fx.tracker.dropped("P") == 2 && fx.tracker.badDrops == 0)
        #expect(watched == nil, "the makers' copies went with their threads")
    }
}

/// Runs `body` on a new thread and returns once the thread is gone (its thread-specific data released).
private func joinedThread(_ body: @escaping @Sendable () -> Void) {
    final class Body { let run: @Sendable () -> Void; init(_ run: @escaping @Sendable () -> Void) { self.run = run } }
    var thread = pthread_t()
    let started = pthread_create(&thread, nil, { raw in
        Ref<Body>(opaque: raw!).take().run()
        return nil
    }, Ref(retaining: Body(body)).opaque)
    precondition(started == 0, "pthread_create failed")
    pthread_join(thread, nil)
}
