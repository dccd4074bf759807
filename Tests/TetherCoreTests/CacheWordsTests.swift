// Cache words (Container.cacheVersionAddresses): what a binding that serves singleton hits itself
// checks. They move when a published singleton is let go of, here or in a parent, and with
// every configuration change; resets move no version word (plans stay valid).
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
        s.setScope(.transient)  // drops S too
        #expect(words[0].load(as: UInt.self) >= made + 2)
    }
}
