// Overrides and decorators through the core's Swift API: the children an override reaches (a
// child made after a sibling closed included, a child let go of without closing not), and what is rebuilt.
import Testing
import TetherCore

@Suite struct OverrideTests {
    /// Pool <- Repo (container scope), resolved from a child.
    private func app(_ fx: Fixture) throws {
        try fx.register("Pool", scope: .singleton)
        try fx.register("Repo", [dep("Pool")], scope: .container)
    }

    @Test func overrideReachesAChildMadeAfterASiblingClosed() throws {
        let fx = try Fixture()
        try app(fx)
        let first = try fx.child()
        _ = try first.resolve(Key("Repo"))
        try first.closeRetiring()
        first.dismantle()
        let child = try fx.child()
        _ = try child.resolve(Key("Repo"))
        let before = fx.tracker.dropped("Repo")
        try fx.register("Fake", scope: .singleton)
        try fx.container.override(Key("Pool"), params: [dep("Fake")], factory: ClosureFactory { words in
            UnsafeMutableRawPointer(bitPattern: UInt(words[0]))!
        })
        #expect(fx.tracker.dropped("Repo") == before + 1, "the new child's cached Repo was built over Pool")
        let repo = try child.resolve(Key("Repo"))
        #expect(Obj.of(repo).dep(0).label == "Fake")
        try fx.container.clearOverride(Key("Pool"))
        #expect(Obj.of(try child.resolve(Key("Repo"))).dep(0).label == "Pool")
        try child.closeRetiring()
    }

    @Test func aChildLetGoOfWithoutClosingIsNotReached() throws {
        let fx = try Fixture()
        try app(fx)
        do {
            let child = try fx.child()
            _ = try child.resolve(Key("Repo"))
        }
        try fx.register("Fake", scope: .singleton)
        try fx.container.override(Key("Pool"), params: [dep("Fake")], factory: ClosureFactory { words in
            UnsafeMutableRawPointer(bitPattern: UInt(words[0]))!
        })
        #expect(fx.container.isOverridden(Key("Pool")))
        try fx.container.clearOverride(Key("Pool"))
        expectError(.invalidArgument, "\"Pool\" is not overridden") { try fx.container.clearOverride(Key("Pool")) }
    }

    @Test func decoratorsSeeTheInstanceAndValidateSeesThem() throws {
        let fx = try Fixture()
        try fx.register("Db", scope: .singleton)
        try fx.container.decorate(Key("Db"), params: [dep("Db")], factory: ClosureFactory { words in
            fx.tracker.called("wrap")
            return UnsafeMutableRawPointer(bitPattern: UInt(words[0]))!
        })
        let a = try fx.resolve("Db"), b = try fx.resolve("Db")
        #expect(a === b && fx.tracker.calls("wrap") == 1 && fx.tracker.calls("Db") == 1)
        let check = GraphCheck(fx.container)
        #expect(check.registrations.map(\.key.name) == ["Db", "Db (before decorator 1)"])
        expectError(.invalidArgument, "exactly one DEP slot") {
            try fx.container.decorate(Key("Db"), params: [], factory: ClosureFactory { words in
                UnsafeMutableRawPointer(bitPattern: UInt(words[0]))!
            })
        }
    }
}
