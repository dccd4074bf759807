// `Ref` is the one place the core keeps class references as words with ownership by
// hand (Runtime/Ref.swift): +1 must be given up exactly once, +0 must take nothing,
// and a word must round-trip to the same object (0 meaning none).
import Synchronization
import Testing
import TetherCore

private final class Counted {
    static let freed = Atomic<Int>(0)
    let value: Int
    init(_ value: Int) { self.value = value }
    deinit { Counted.freed.add(1, ordering: .relaxed) }
}

private struct Refused: Error, Equatable { let code: Int }

@Suite(.serialized) struct RefTests {
    @Test func retainingOwnsOneReferenceUntilTakenOrReleased() {
        let before = Counted.freed.load(ordering: .relaxed)
        var object: Counted? = Counted(1)
        let owned = Ref(retaining: object!)
        object = nil
        #expect(Counted.freed.load(ordering: .relaxed) == before, "the +1 keeps it alive")
        #expect(owned.borrow { $0.value } == 1)
        owned.retain()
        owned.release()
        #expect(Counted.freed.load(ordering: .relaxed) == before, "retain then release: still the one +1")
        var taken: Counted? = owned.take()
        #expect(taken?.value == 1)
        taken = nil
        #expect(Counted.freed.load(ordering: .relaxed) == before + 1, "take() consumed the +1: freed once")
    }

    @Test func unretainedTakesNothing() {
        let before = Counted.freed.load(ordering: .relaxed)
        var object: Counted? = Counted(2)
        let borrowed = Ref(unretained: object!)
        #expect(isKnownUniquelyReferenced(&object), "no reference was added")
        #expect(borrowed.object === object)
        object = nil
        #expect(Counted.freed.load(ordering: .relaxed) == before + 1)
    }

    @Test func wordsRoundTripAndZeroIsNone() {
        let object = Counted(3)
        let ref = Ref(unretained: object)
        #expect(Ref<Counted>(word: ref.word)?.object === object)
        #expect(Ref<Counted>(opaque: ref.opaque).object === object)
        #expect(ref.word == UInt(bitPattern: ref.opaque))
        #expect(Ref<Counted>(word: 0) == nil)
        #expect(ref === Ref(unretained: object))
        #expect(!(ref === Ref(unretained: Counted(4))))
    }

    @Test func borrowKeepsTheBodysTypedError() {
        let object = Counted(5)
        let ref = Ref(unretained: object)
        #expect(throws: Refused(code: 5)) {
            try ref.borrow { (o: Counted) throws(Refused) -> Int in throw Refused(code: o.value) }
        }
        let result: Result<Int, Refused> = Result { () throws(Refused) -> Int in try ref.borrow { (o: Counted) throws(Refused) -> Int in o.value } }
        #expect(result == .success(5))
    }
}
