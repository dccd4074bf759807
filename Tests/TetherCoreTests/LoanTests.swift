// Singleton loans: a published singleton handed out without a retain is
// confirmed while published, refused once unpublished, and every way of
// unpublishing a lent singleton asks the bridge to take over its loans first,
// after the unpublisher's barrier (the other side of the lenders' barrier).
import Testing
import TetherCore

@Suite struct LoanTests {
    @Test func loanIsConfirmedWhilePublishedAndRefusedAfterReset() throws {
        let fx = try Fixture()
        let r = try fx.register("S", scope: .singleton)
        #expect(r.singletonLoan() == nil, "nothing is published before the first resolve")
        let s = try fx.resolve("S")
        let loan = try #require(r.singletonLoan())
        #expect(loan.lend().object === s)
        #expect(loan.pointer == s.pointer, "read from the slot, for held comparisons")
        #expect(loan.confirm())
        fx.container.reset(.singleton)
        #expect(!loan.confirm(), "a loan made before the reset is not confirmed after it")
        #expect(r.singletonLoan() == nil)
        #expect(fx.bridge.recalledKeys == [Key("S")])
    }

    @Test func onlyLentSingletonsAreRecalled() throws {
        let fx = try Fixture()
        let lent = try fx.register("Lent", scope: .singleton)
        try fx.register("Kept", scope: .singleton)
        _ = try fx.resolve("Lent")
        _ = try fx.resolve("Kept")
        _ = try #require(lent.singletonLoan()).lend()
        fx.container.reset(.singleton)
        #expect(fx.bridge.recalledKeys == [Key("Lent")])
    }

    @Test func replacingScopeAndClosingRecall() throws {
        let fx = try Fixture()
        let a = try fx.register("A", scope: .singleton)
        let b = try fx.register("B", scope: .singleton)
        let c = try fx.register("C", scope: .singleton)
        for key in ["A", "B", "C"] { _ = try fx.resolve(key) }
        for r in [a, b, c] { _ = try #require(r.singletonLoan()).lend() }
        try fx.register("A")  // replaced
        #expect(fx.bridge.recalledKeys == [Key("A")])
        try b.setScope(.graph)
        #expect(fx.bridge.recalledKeys == [Key("A"), Key("B")])
        try fx.container.close()
        #expect(fx.bridge.recalledKeys == [Key("A"), Key("B"), Key("C")])
        #expect(fx.tracker.dropped("A") == 1 && fx.tracker.dropped("B") == 1 && fx.tracker.dropped("C") == 1)
    }

    @Test func unpublishingIssuesTheBarrierBeforeReadingWhetherLent() throws {
        let fx = try Fixture()
        let lent = try fx.register("Lent", scope: .singleton)
        let kept = try fx.register("Kept", scope: .singleton)
        _ = try fx.resolve("Lent")
        _ = try fx.resolve("Kept")
        _ = try #require(lent.singletonLoan()).lend()
        fx.container.reset(.graph)
        #expect(fx.bridge.unpublishBarriers == 0, "nothing unpublished, no barrier")
        fx.container.reset(.singleton)
        #expect(fx.bridge.unpublishBarriers == 1, "one barrier for everything one reset lets go of")
        #expect(fx.bridge.barriersBeforeRecall == [1])
        _ = kept
    }
}
