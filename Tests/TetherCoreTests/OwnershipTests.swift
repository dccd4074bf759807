// The ownership helpers of Runtime/: each gives up exactly the references it
// owns, once. An object's life is watched through a weak variable: it goes
// when the last strong reference does, not before.
import Testing
@testable import TetherCore

private final class Probe {}

@Suite struct OwnershipTests {
    @Test func atomicRefOwnsWhatItPublishesRetainedUntilReleased() {
        let slot = AtomicRef<Probe>()
        weak var watched: Probe?
        do {
            let probe = Probe()
            watched = probe
            slot.publish(retaining: probe)
        }
        #expect(watched != nil, "the slot's +1 keeps it")
        #expect(slot.load()?.object === watched)
        slot.releaseOwned()
        #expect(watched == nil, "released once, by the slot")
        #expect(slot.load() == nil)
    }

    @Test func publishOnceKeepsTheFirstObjectAndMakesNoOther() {
        let slot = AtomicRef<Probe>()
        var made = 0
        let first = slot.publishOnce { made += 1; return Probe() }
        let second = slot.publishOnce { made += 1; return Probe() }
        #expect(first === second)
        #expect(made == 1)
        weak var watched = first.object
        slot.releaseOwned()
        #expect(watched == nil)
    }

    @Test func exchangeHandsTheOldReferenceToTheCaller() {
        let slot = AtomicRef<Probe>()
        weak var old: Probe?
        weak var new: Probe?
        do {
            let a = Probe(), b = Probe()
            old = a
            new = b
            slot.publish(retaining: a)
            let previous = slot.exchange(retaining: b)
            #expect(previous?.borrowed.object === a)
            previous?.release()
        }
        #expect(old == nil, "the caller released what the slot held")
        #expect(new != nil)
        slot.releaseOwned()
        #expect(new == nil)
    }

    @Test func unpublishLeavesAPlusZeroObjectToItsOwner() {
        let slot = AtomicRef<Probe>()
        weak var watched: Probe?
        do {
            let probe = Probe()
            watched = probe
            slot.publish(Borrowed(probe))
            #expect(slot.unpublish()?.object === probe)
            let empty = slot.isEmpty
            #expect(empty)
        }
        #expect(watched == nil, "the slot took no count")
    }

    @Test func ownedWordRoundTripsAndTellsTheOnlyReference() {
        weak var watched: Probe?
        var word: UInt = 0
        do {
            let probe = Probe()
            watched = probe
            word = OwnedWord.make(probe)
            #expect(!OwnedWord<Probe>.isOnlyReference(word), "`probe` holds it too")
        }
        #expect(OwnedWord<Probe>.isOnlyReference(word))
        #expect(watched != nil, "asking did not release it")
        OwnedWord<Probe>.release(word)
        #expect(watched == nil)
        #expect(OwnedWord<Probe>.take(0) == nil)
    }

    @Test func handoffGivesOneReferenceTakenOnce() {
        weak var watched: Probe?
        var address: UnsafeMutableRawPointer?
        do {
            let probe = Probe()
            watched = probe
            address = Handoff.give(probe)
        }
        #expect(watched != nil, "the address owns it")
        #expect(Borrowed<Probe>(opaque: address!).object === watched)
        _ = Handoff<Probe>.take(address!)
        #expect(watched == nil)
    }

    @Test func borrowedRetainsOnlyWhenAsked() {
        weak var watched: Probe?
        var owned: Ref<Probe>?
        do {
            let probe = Probe()
            watched = probe
            let borrowed = Borrowed(probe)
            owned = borrowed.tryRetained()
            #expect(owned != nil)
        }
        #expect(watched != nil, "tryRetained's +1 keeps it")
        owned?.release()
        #expect(watched == nil)
    }
}
