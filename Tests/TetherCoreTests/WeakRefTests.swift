// Weak references are Tether's own (one shared object per instance, upgraded with
// the runtime's try-retain), not Swift `weak`: they must see an instance exactly
// while it is alive, never revive one being destroyed, and not keep its late edges
// alive after it goes.
import Synchronization
import Testing
import TetherCore

@Suite struct WeakRefTests {
    @Test func everyWeakReferenceToAnInstanceIsOneObject() throws {
        let fx = try Fixture()
        try fx.register("A")
        var a: Instance? = try fx.resolve("A")
        let weak = a!.weakRef
        #expect(a!.weakRef === weak, "made once, then shared")
        #expect(weak.upgrade() === a)
        #expect(weak.key == Key("A"))
        a = nil
        #expect(fx.tracker.dropped("A") == 1, "the weak reference did not keep A alive")
        #expect(weak.upgrade() == nil)
        #expect(weak.key == Key("A"), "the key stays for messages")
    }

    @Test func threadsTakingTheFirstWeakReferenceAtOnceShareOne() throws {
        // The weak reference is installed without a lock: of threads racing to make
        // it, all must end up with the one installed, and the edges it took over intact.
        let fx = try Fixture()
        try fx.register("A", [dep("B"), dep("C")], scope: .transient)
        try fx.register("B", scope: .transient)
        try fx.register("C", scope: .transient)
        for _ in 0..<200 {
            var a: Instance? = try fx.resolve("A")
            let seen = Box<[ObjectIdentifier]>([])
            // Unretained: the threads' closure may outlive `onThreads` a little, and must
            // not keep A alive past `a = nil` (`a` holds it while they run).
            nonisolated(unsafe) let instance = Ref(unretained: a!)
            onThreads(4) { _ in
                let id = instance.borrow { ObjectIdentifier($0.weakRef) }
                seen.value.append(id)
            }
            #expect(Set(seen.value).count == 1 && seen.value.count == 4)
            #expect(ObjectIdentifier(a!.weakRef) == seen.value[0])
            a = nil
        }
        #expect(fx.tracker.dropped("B") == 200 && fx.tracker.dropped("C") == 200, "the edges moved to the weak reference were released")
        #expect(fx.tracker.liveCount == 0 && fx.tracker.badDrops == 0)
    }

    @Test func upgradeDuringTheDestructorFindsNothing() throws {
        // The destructor runs after the strong count reached zero: an upgrade
        // then must fail rather than hand out an instance being destroyed.
        let fx = try Fixture()
        let seen = Box<[Bool]>([])
        let weak = Box<WeakRef?>(nil)
        try fx.container.register(Key("A"), params: [], factory: ClosureFactory { _ in
            UnsafeMutableRawPointer(bitPattern: 0x1000)
        }) { registration in
            registration.setContext(nil) { _, _ in seen.value.append(weak.value?.upgrade() != nil) }
        }
        var a: Instance? = try fx.resolve("A")
        weak.value = a!.weakRef
        a = nil
        #expect(seen.value == [false])
        #expect(weak.value?.upgrade() == nil)
    }

    @Test func lateEdgesGoWithTheInstanceNotWithItsWeakReference() throws {
        // A's completion takes B strongly (a late edge, kept beside A's weak
        // reference): B must go when A goes, though a weak reference to A lives on.
        let fx = try Fixture()
        let a = try fx.register("A")
        try fx.register("B")
        fx.onComplete(a) { r, _, obj in obj.got.append(try r.get(Key("B")).pointer) }
        var instance: Instance? = try fx.resolve("A")
        let weak = instance!.weakRef
        #expect(fx.tracker.made("B") == 1 && fx.tracker.dropped("B") == 0, "A's late edge holds B")
        instance = nil
        #expect(fx.tracker.events("drop ") == ["drop A", "drop B"])
        #expect(weak.upgrade() == nil)
        #expect(fx.tracker.liveCount == 0 && fx.tracker.badDrops == 0)
    }

    @Test func upgradesRacingTheLastReleaseSeeItAliveOrGone() throws {
        // Readers upgrade while the owner drops the last strong reference: each
        // upgrade gets the instance (and keeps it alive while it holds it) or nil;
        // every instance is destroyed exactly once.
        let fx = try Fixture()
        try fx.register("A")
        let rounds = 2_000
        let slots = (0..<rounds).map { _ in Box<WeakRef?>(nil) }
        let published = Atomic<Int>(0)
        let wrong = Atomic<Int>(0)
        onThreads(3) { thread in
            for round in 0..<rounds {
                if thread == 0 {
                    var a: Instance? = try? fx.resolve("A")
                    slots[round].value = a!.weakRef
                    published.store(round + 1, ordering: .releasing)
                    a = nil
                } else {
                    while published.load(ordering: .acquiring) <= round {}
                    if let a = slots[round].value?.upgrade(), a.key != Key("A") || Obj.of(a).label != "A" {
                        wrong.add(1, ordering: .relaxed)
                    }
                }
            }
        }
        #expect(wrong.load(ordering: .relaxed) == 0)
        #expect(fx.tracker.made("A") == rounds && fx.tracker.dropped("A") == rounds)
        #expect(fx.tracker.liveCount == 0 && fx.tracker.badDrops == 0)
        #expect(slots.allSatisfy { $0.value?.upgrade() == nil })
    }
}
