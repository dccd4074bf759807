// Branch recordlock (issue 27: no lock held across work another thread may need): a plan's variant store
// (`Plan.MixedVariants`: `mixedVariant`'s, a failing plan's `Failing.variants`) is looked up and kept under its lock,
// and the variant walked without it. Probed from the recorder's hook (`Recorder.setBeforeReadingCache`, a creating
// walk reaching a shared key) with `Lock.isLocked()`: before, the walk held the store's lock, so every other run of
// that plan waited for it (a second thread's walk of the same set never started).
import Dispatch
import Testing
@testable import TetherCore

@Suite struct VariantStoreLockTests {
    /// The hook's observations: per creating walk reaching `key`, whether the store was locked; with two threads,
    /// the first two arrivals meet (the first waits for the second, given up after a while so that a walk under the
    /// lock fails, not hangs).
    final class Probe: @unchecked Sendable {
        let threads: Int
        init(threads: Int) { self.threads = threads }
        let locked = Box<[Bool]>([])
        let arrivals = Box(0)
        let met = Box(false)
        private let second = DispatchSemaphore(value: 0)

        func arrive(_ store: Plan.MixedVariants) {
            locked.value.append(store.plans.isLocked())
            switch threads < 2 ? 0 : Self.incremented(&arrivals.value) {
            case 1: met.value = second.wait(timeout: .now() + 10) == .success
            case 2: second.signal()
            default: break
            }
        }

        private static func incremented(_ n: inout Int) -> Int {
            n += 1
            return n
        }
    }

    /// `body` with the recorder's hook probing `store` at each creating walk's reach of `key`.
    func probing<T>(_ fx: Fixture, _ key: String, _ store: Plan.MixedVariants, threads: Int = 1,
                    _ body: (Probe) throws -> T) rethrows -> T {
        let probe = Probe(threads: threads)
        let shared = Box(store)
        return try withTestHook {
            Plan.Recorder.setBeforeReadingCache { r in
                guard fx.owns(r), r.key == Key(key) else { return }
                probe.arrive(shared.value)
            }
            defer { Plan.Recorder.setBeforeReadingCache(nil) }
            return try body(probe)
        }
    }

    /// `DeclineReasonTests`' mixed-cache shape 0 with a singleton One the Handler takes, not cached: its creation plan
    /// (`Plan.recordCreating`) keeps `mixedVariants`; the set with Session cached (Late, made, takes the Req Session
    /// asked for) is a `mixedVariant`, a creating walk that reaches One.
    func creatingMixedPlan(_ fx: Fixture) throws -> (plan: Plan, cached: UInt) {
        let handler = try fx.registerMixedCacheShape(0, more: [dep("One")]) { _ = try $0.register("One", scope: .singleton) }
        let plan = try #require(Plan.recordCreating(handler, configuration: fx.container.configuration))
        #expect(plan.mixedVariants != nil && plan.createsShared)
        let session = try #require(plan.containerSteps.first { plan.steps[$0].registration.borrow { $0.key } == Key("Session") })
        return (plan, 1 << UInt(session))
    }

    @Test func aMixedVariantIsWalkedWithTheStoreUnlocked() throws {
        let fx = try Fixture()
        let (plan, cached) = try creatingMixedPlan(fx)
        let (variant, probe) = probing(fx, "One", plan.mixedVariants!) { probe in (plan.mixedVariant(cached), probe) }
        let kept = try #require(variant)
        #expect(!probe.locked.value.isEmpty && probe.locked.value.allSatisfy { !$0 }, "locked during the walk: \(probe.locked.value)")
        #expect(!kept.keptByNone && plan.mixedVariantCount == 1)
        // Known now: served from the store, no walk.
        let again = probing(fx, "One", plan.mixedVariants!) { probe in (plan.mixedVariant(cached), probe.locked.value.count) }
        #expect(again.0 === kept && again.1 == 0)
        #expect(fx.tracker.made("One") == 0 && fx.tracker.made("Handler") == 0, "recording runs no factory")
    }

    /// Two threads needing the same set, neither kept yet: both walk at once (each waits in its walk for the other:
    /// under the lock the second never started), the first kept serves both (one identity, one kept).
    @Test func twoThreadsWalkingTheSameSetKeepOneMixedVariant() throws {
        let fx = try Fixture()
        let (plan, cached) = try creatingMixedPlan(fx)
        let shared = Box(plan)
        let results = Box<[ObjectIdentifier?]>([nil, nil])
        let kept = Box<[Bool]>([])
        let probe = probing(fx, "One", plan.mixedVariants!, threads: 2) { probe in
            onThreads(2) { i in
                let variant = shared.value.mixedVariant(cached)
                results.value[i] = variant.map(ObjectIdentifier.init)
                kept.value.append(variant.map { !$0.keptByNone } ?? false)
            }
            return probe
        }
        #expect(probe.met.value, "both threads walked at once")
        #expect(probe.arrivals.value >= 2 && probe.locked.value.allSatisfy { !$0 }, "\(probe.locked.value)")
        #expect(results.value[0] != nil && results.value[0] == results.value[1], "one variant for both")
        #expect(kept.value == [true, true])
        #expect(plan.mixedVariantCount == 1)
        #expect(plan.mixedVariants!.plans.withLock { $0.count } == 1)
    }

    /// `HoldPastPicksPlanTests`' failing shape: K0 over S (a singleton, not cached) and K1 (container-scoped, over
    /// ALL K3, whose K9 is missing). K0's creation plan fails under K1's frame; its variant for K1 cached
    /// (`Plan.failingVariant`) is a creating walk reaching S, with the store free; two threads: one variant kept.
    @Test(arguments: [1, 2]) func aFailingPlansVariantIsWalkedWithTheStoreUnlocked(threads: Int) throws {
        let fx = try Fixture()
        try fx.register("K1", [.all(Key("K3"))], scope: .container)
        try fx.register("K3", [dep("K9")])
        try fx.register("S", scope: .singleton)
        let k0 = try fx.register("K0", [dep("S"), dep("K1")])
        let plan = try #require(Plan.recordCreating(k0, configuration: fx.container.configuration))
        let store = try #require(plan.failing?.variants)
        #expect(plan.failing?.containers.count == 1 && plan.failing?.creating == true)
        let shared = Box(plan)
        let results = Box<[UInt?]>(Array(repeating: nil, count: threads))
        let locals = UnsafeMutablePointer<Borrowed<Registration>>.allocate(capacity: 1)  // (an owner's plan: not read)
        defer { locals.deallocate() }
        let sharedLocals = Box(locals)
        let probe = probing(fx, "S", store, threads: threads) { probe in
            onThreads(threads) { i in
                results.value[i] = shared.value.failingVariant(0, fx.container, sharedLocals.value).map { $0.word }
            }
            return probe
        }
        #expect(!probe.locked.value.isEmpty && probe.locked.value.allSatisfy { !$0 }, "locked during the walk: \(probe.locked.value)")
        if threads == 2 { #expect(probe.met.value, "both threads walked at once") }
        #expect(results.value[0] != nil && results.value.allSatisfy { $0 == results.value[0] }, "one variant: \(results.value)")
        #expect(store.plans.withLock { $0.count } == 1)
        #expect(fx.tracker.made("S") == 0 && fx.tracker.made("K0") == 0)
    }
}
