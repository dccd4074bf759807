// Cache words (Container.cacheVersionAddresses) and hit words (Container.hitWordAddress): what a
// binding that serves singleton and weak hits itself checks. They move when a published singleton or weak instance is let go of, here or
// in a parent, and with every configuration change; resets move no version word (plans stay
// valid). The weak epoch (Registration.weakEpoch) says which weak registration forgot its instance.
import Testing
import TetherCore

@Suite struct CacheWordsTests {
    @Test func resetsMoveTheCacheWordsOnly() throws {
        let fx = try Fixture()
        let child = try fx.child()
        try fx.register("S", scope: .singleton)
        try fx.register("T", scope: .singleton, in: child)
        let words = child.cacheVersionAddresses
        #expect(words.count == 2 && fx.container.cacheVersionAddresses.first == words[1])
        #expect(words[0] != child.versionAddresses[0] && words[1] != child.versionAddresses[1])
        func sum() -> UInt { words.reduce(0) { $0 &+ $1.load(as: UInt.self) } }
        let configuration = child.configuration
        _ = try fx.resolve("S", in: child)
        _ = try fx.resolve("T", in: child)
        let before = sum()
        child.reset(.weak)
        fx.container.reset(.transient)
        #expect(sum() == before, "nothing of those scopes cached: nothing moves")
        child.reset(.singleton)
        #expect(sum() == before + 1 && words[1].load(as: UInt.self) == fx.container.cacheVersionAddresses[0].load(as: UInt.self))
        fx.container.reset(.singleton)
        #expect(sum() == before + 2 && child.configuration == configuration)
        child.reset(.singleton)
        #expect(sum() == before + 2, "reset again with nothing cached: nothing moves")
    }

    @Test func configurationChangesMoveTheCacheWords() throws {
        let fx = try Fixture()
        let words = fx.container.cacheVersionAddresses
        let before = words[0].load(as: UInt.self)
        let s = try fx.register("S", scope: .singleton)
        #expect(words[0].load(as: UInt.self) > before)
        _ = try fx.resolve("S")
        let made = words[0].load(as: UInt.self)
        try s.setScope(.transient)  // drops S too
        #expect(words[0].load(as: UInt.self) >= made + 2)
    }

    @Test func forgettingAWeakInstanceMovesTheWordsAndTheEpoch() throws {
        let fx = try Fixture()
        let w = try fx.register("W", scope: .weak)
        let v = try fx.register("V", scope: .weak)
        let word = fx.container.cacheVersionAddresses[0]
        let start = w.weakEpoch
        #expect(start % 2 == 1, "nothing published yet")
        var before = word.load(as: UInt.self)
        fx.container.reset(.weak)
        #expect(word.load(as: UInt.self) == before && w.weakEpoch == start, "nothing cached: nothing moves")

        var held: Instance? = try fx.resolve("W")
        #expect(w.weakEpoch == start + 1 && word.load(as: UInt.self) == before)
        held = nil
        #expect(fx.tracker.made("W") == 1 && fx.tracker.dropped("W") == 1 && w.weakEpoch == start + 1, "dying moves nothing")
        fx.container.reset(.weak)  // forgets the dead instance: what a binding that still holds its object must see
        #expect(word.load(as: UInt.self) == before + 1 && w.weakEpoch == start + 2 && v.weakEpoch % 2 == 1)
        fx.container.reset(.weak)
        #expect(word.load(as: UInt.self) == before + 1 && w.weakEpoch == start + 2, "forgotten already")

        held = try fx.resolve("W")
        #expect(w.weakEpoch == start + 3)
        before = word.load(as: UInt.self)
        try w.setScope(.transient)  // forgets it while alive; a configuration change too
        #expect(word.load(as: UInt.self) >= before + 2 && w.weakEpoch == start + 4)
        _ = try fx.resolve("W")
        #expect(w.weakEpoch == start + 4, "stays odd while the scope is not weak")
        _ = held
    }

    @Test func aHitWordMovesWithEveryCacheWordUpItsChainOnly() throws {
        let fx = try Fixture()
        let child = try fx.child()
        var grandchild: Container? = try fx.child(of: child)
        let sibling = try fx.child()
        try fx.register("S", scope: .singleton)
        try fx.register("T", scope: .singleton, in: child)
        func word(_ c: Container) -> UInt { c.hitWordAddress.load(as: UInt.self) }
        #expect(word(fx.container) > 0 && word(child) > 0 && child.hitToken == word(child))
        _ = try fx.resolve("S", in: grandchild)
        _ = try fx.resolve("T", in: grandchild)
        var seen = [word(fx.container), word(child), word(grandchild!), word(sibling)]
        try fx.register("U", in: sibling)
        sibling.reset(.singleton)
        grandchild!.reset(.singleton)  // nothing cached there
        #expect([word(fx.container), word(child), word(grandchild!)] == Array(seen[0..<3]) && word(sibling) > seen[3])
        child.reset(.singleton)  // drops T: the child's and the grandchild's move
        #expect(word(fx.container) == seen[0] && word(child) > seen[1] && word(grandchild!) > seen[2])
        seen = [word(fx.container), word(child), word(grandchild!), word(sibling)]
        fx.container.reset(.singleton)  // drops S: every word below moves
        #expect(word(fx.container) > seen[0] && word(child) > seen[1] && word(grandchild!) > seen[2] && word(sibling) > seen[3])
        grandchild = nil  // its word leaves the lists of its ancestors
        seen = [word(fx.container), word(child)]
        try fx.register("V", in: child)
        #expect(word(fx.container) == seen[0] && word(child) > seen[1])
        _ = try fx.resolve("S", in: child)
        fx.container.reset(.singleton)
        #expect(word(fx.container) > seen[0] && word(child) > seen[1] + 1)
    }

    /// A child's version and hit words are made when first read (a request's child that nobody
    /// asks makes none): a change before that is seen by the first read, every change after moves them.
    @Test func aChildsWordsMadeWhenFirstReadMoveWithEveryLaterChange() throws {
        let fx = try Fixture()
        try fx.register("S", scope: .singleton)
        let child = try fx.child()
        try fx.register("A", in: child)  // nobody has read the child's words yet
        _ = try fx.resolve("A", in: child)
        let configuration = child.configuration
        let token = child.hitToken
        try fx.register("B", in: child)
        #expect(child.configuration != configuration)
        #expect(child.hitToken != token)
        let afterB = child.hitToken
        _ = try fx.resolve("S", in: child)
        fx.container.reset(.singleton)
        #expect(child.hitToken != afterB, "the parent's change reaches a hit word made late")
        try child.close()
    }
}
