// A 10,000-deep dependency chain resolves and is released without recursion
// per level (no stack overflow), and so do failures, cycles and checks on it.
import Testing
import TetherCore

@Suite struct DeepChainTests {
    static let depth = 10_000

    /// Deep.0 -> Deep.1 -> ... -> Deep.(depth-1).
    private func chain(_ fx: Fixture, prefix: String, scope: Scope = .graph, lastDependsOn last: String? = nil) throws {
        for i in 0..<Self.depth {
            let params: [Param]
            if i + 1 < Self.depth { params = [dep("\(prefix).\(i + 1)")] }
            else if let last { params = [dep(last)] }
            else { params = [] }
            try fx.register("\(prefix).\(i)", params, scope: scope)
        }
    }

    @Test func tenThousandDeepChainResolvesAndReleases() throws {
        let fx = try Fixture()
        try chain(fx, prefix: "Deep")
        var root: Instance? = try fx.resolve("Deep.0")
        #expect(fx.tracker.liveCount == Self.depth)
        // Walk it: every level got the next one.
        var node = Obj.of(root!)
        var length = 1
        while !node.words.isEmpty { node = node.dep(0); length += 1 }
        #expect(length == Self.depth)
        #expect(node.label == "Deep.\(Self.depth - 1)")
        let log = fx.tracker.events("make ")
        #expect(log.first == "make Deep.\(Self.depth - 1)" && log.last == "make Deep.0")

        root = nil
        #expect(fx.tracker.liveCount == 0)
        let drops = fx.tracker.events("drop ")
        #expect(drops.count == Self.depth)
        #expect(drops.first == "drop Deep.0" && drops.last == "drop Deep.\(Self.depth - 1)", "dependents first")
        #expect(fx.tracker.badDrops == 0)
    }

    @Test func deepSingletonChainIsReleasedByClose() throws {
        let fx = try Fixture()
        try chain(fx, prefix: "DeepS", scope: .singleton)
        _ = try fx.resolve("DeepS.0")
        #expect(fx.tracker.liveCount == Self.depth)
        try fx.container.close()
        #expect(fx.tracker.liveCount == 0)
        #expect(fx.tracker.badDrops == 0)
    }

    @Test func deepChainFailingInTheRootCallbackDestroysAll() throws {
        let fx = try Fixture()
        try chain(fx, prefix: "DeepF")
        let root = try #require(fx.container.registration(for: Key("DeepF.0")))
        fx.onComplete(root) { _, _, _ in throw CallbackFailure(reason: "at the top") }
        expectError(.factoryFailed, "completion callback #1 of \"DeepF.0\" failed: at the top") { try fx.resolve("DeepF.0") }
        #expect(fx.tracker.events("make ").count == Self.depth)
        #expect(fx.tracker.events("drop ").count == Self.depth)
        #expect(fx.tracker.liveCount == 0 && fx.tracker.badDrops == 0)
    }

    @Test func deepCycleIsReportedNotRecursed() throws {
        let fx = try Fixture()
        try chain(fx, prefix: "DeepC", lastDependsOn: "DeepC.0")
        let error = expectError(.cycle, "\"DeepC.0\" -> \"DeepC.1\" -> ", "\"DeepC.\(Self.depth - 1)\" -> \"DeepC.0\"") {
            try fx.resolve("DeepC.0")
        }
        // The message quotes the path's ends; its parts hold it whole.
        #expect(error?.message.contains("... (\(Self.depth - 5) more)") == true)
        #expect(error?.parts.path.count == Self.depth + 1 && error?.parts.fix == .breakCycle)
        #expect(fx.tracker.events("make ").isEmpty)

        let check = GraphCheck(fx.container)
        #expect(check.cycles.count == 1)
        #expect(check.cycles.first?.count == Self.depth + 1)
    }

    @Test func deepChainMissingLeafNamesTheWholePath() throws {
        let fx = try Fixture()
        try chain(fx, prefix: "DeepM", lastDependsOn: "DeepM.Missing")
        expectError(.notFound, "no registration for \"DeepM.Missing\" (needed by \"DeepM.0\" -> \"DeepM.1\" -> ",
                    "\"DeepM.\(Self.depth - 1)\")") { try fx.resolve("DeepM.0") }
        let check = GraphCheck(fx.container)
        #expect(check.missing.map(\.key) == [Key("DeepM.Missing")])
        #expect(check.cycles.isEmpty)
    }
}
