// Validation without running anything: missing keys, constructor cycles (DEP and
// WEAK edges; lazy edges are not constructor edges), and the Graphviz picture.
import Testing
import TetherCore

@Suite struct GraphCheckTests {
    @Test func soundGraph() throws {
        let fx = try Fixture()
        try fx.register("A", [dep("B"), weakDep("C"), weakLazyDep("A")])  // a strong lazy self-edge would be a retain cycle
        try fx.register("B", [dep("C")])
        try fx.register("C", [weakLazyDep("A")])
        let check = GraphCheck(fx.container)
        #expect(check.missing.isEmpty && check.cycles.isEmpty)
        #expect(check.error == nil)
        #expect(check.registrations.map(\.key.name) == ["A", "B", "C"])
        #expect(fx.tracker.calls("A") == 0, "nothing runs")
    }

    @Test func missingKeysWithWhoNeedsThem() throws {
        let fx = try Fixture()
        try fx.register("A", [dep("B"), dep("Logger")])
        try fx.register("B", [dep("Logger"), lazyDep("Cache")])
        let check = GraphCheck(fx.container)
        #expect(check.missing.map(\.key.name) == ["Cache", "Logger"])
        #expect(check.missing.first { $0.key == Key("Logger") }?.neededBy.map(\.name).sorted() == ["A", "B"])
        #expect(check.missing.first { $0.key == Key("Cache") }?.neededBy == [Key("B")])
        let error = try #require(check.error)
        #expect(error.code == .notFound)
        #expect(error.message.contains("2 problem(s)"))
        #expect(error.message.contains("no registration for \"Cache\" (needed by \"B\")"))
        #expect(error.message.contains("no registration for \"Logger\" (needed by \"A\", \"B\")"))
        #expect(error.message.split(separator: "\n").count == 3, "one problem per line")
    }

    @Test func constructorCyclesThroughDepAndWeakEdges() throws {
        let fx = try Fixture()
        try fx.register("A", [dep("B")])
        try fx.register("B", [weakDep("A")])
        try fx.register("Self", [dep("Self")])
        try fx.register("L1", [dep("L2")])
        try fx.register("L2", [lazyDep("L1")])
        try fx.register("W1", [dep("W2")])
        try fx.register("W2", [weakLazyDep("W1")])
        let check = GraphCheck(fx.container)
        #expect(check.missing.isEmpty)
        let cycles = check.cycles.map { $0.map(\.name) }
        #expect(cycles.count == 2, "\(cycles)")
        #expect(cycles.contains(["A", "B", "A"]))
        #expect(cycles.contains(["Self", "Self"]))
        let error = try #require(check.error)
        #expect(error.code == .cycle)
        #expect(error.message.contains("dependency cycle through constructors: \"A\" -> \"B\" -> \"A\"; break its last edge \"B\" -> \"A\""))
        #expect(error.message.contains("\"Self\" -> \"Self\""))
        #expect(!error.message.contains("constructors: \"L"), "lazy edges are not constructor cycles")
        // ... but a strong lazy edge back to what holds it is a retain cycle, and weak-lazy is the fix
        #expect(error.message.contains("lazy dependency \"L2\" -> \"L1\" would close a retain cycle \"L2\" -> \"L1\" -> \"L2\""))
        #expect(!error.message.contains("\"W"))
        let lazyProblem = try #require(check.allProblems.first { $0.parts.fix == .weakLazy })
        #expect(lazyProblem.parts.key == Key("L2") && lazyProblem.parts.target == Key("L1"))
    }

    @Test func missingTakesPrecedenceOverCycles() throws {
        let fx = try Fixture()
        try fx.register("A", [dep("A"), dep("Gone")])
        let error = try #require(GraphCheck(fx.container).error)
        #expect(error.code == .notFound)
        #expect(error.message.contains("no registration for \"Gone\""))
        #expect(error.message.contains("\"A\" -> \"A\""))
    }

    @Test func checksWhatAChildSees() throws {
        let fx = try Fixture()
        try fx.register("A", [dep("B")])
        let child = try fx.child()
        try fx.register("B", [dep("A")], in: child)
        #expect(GraphCheck(fx.container).missing.map(\.key.name) == ["B"])
        let fromChild = GraphCheck(child)
        #expect(fromChild.missing.isEmpty)
        #expect(fromChild.cycles.map { $0.map(\.name) } == [["A", "B", "A"]])
    }

    @Test func dotShowsNodesScopesAndEdgeStyles() throws {
        let fx = try Fixture()
        try fx.register("A", [dep("B"), weakDep("C"), lazyDep("D"), weakLazyDep("E"), dep("Missing")], scope: .singleton)
        try fx.register("B", scope: .transient)
        try fx.register("C", scope: .weak)
        try fx.register("D")
        try fx.register("E")
        let dot = GraphCheck(fx.container).dot()
        #expect(dot.hasPrefix("digraph tether {"))
        #expect(dot.hasSuffix("}\n"))
        #expect(dot.contains(#""A" [label="A\n(singleton)"];"#), "\(dot)")
        #expect(dot.contains(#""B" [label="B\n(transient)"];"#))
        #expect(dot.contains(#""C" [label="C\n(weak)"];"#))
        #expect(dot.contains(#""D" [label="D\n(graph)"];"#))
        #expect(dot.contains(#""A" -> "B" [color=orange, penwidth=2];"#), "a singleton holding a transient: captive")
        #expect(dot.contains(#""A" -> "C" [style=dashed];"#))
        #expect(dot.contains(#""A" -> "D" [style=dotted];"#))
        #expect(dot.contains(#""A" -> "E" [style=dotted, arrowhead=odot];"#))
        #expect(dot.contains(#""Missing" [label="Missing\n(missing)", style=dashed, color=red, fontcolor=red];"#))
        #expect(dot.contains(#""A" -> "Missing";"#))
    }

    @Test func dotMarksCycleEdgesRed() throws {
        let fx = try Fixture()
        try fx.register("A", [dep("B"), dep("C")])
        try fx.register("B", [dep("A")])
        try fx.register("C")
        let dot = GraphCheck(fx.container).dot()
        #expect(dot.contains(#""A" -> "B" [color=red, penwidth=2];"#), "\(dot)")
        #expect(dot.contains(#""B" -> "A" [color=red, penwidth=2];"#))
        #expect(dot.contains(#""A" -> "C";"#))
    }

    @Test func dotShowsEdgesMadeByCompletionCallbacks() throws {
        let fx = try Fixture()
        try fx.register("Parent", [dep("Child")])
        let child = try fx.register("Child")
        try fx.register("Log", scope: .singleton)
        fx.onComplete(child) { r, _, obj in
            obj.weaks.append(try r.getWeak(Key("Parent")))
            obj.got.append(try r.get(Key("Log")).pointer)
        }
        #expect(!GraphCheck(fx.container).dot().contains("completion"), "nothing seen before a resolve")
        _ = try fx.resolve("Parent")
        #expect(child.observedEdges.map(\.target.name) == ["Log", "Parent"])
        let dot = GraphCheck(fx.container).dot()
        #expect(dot.contains(#""Child" -> "Parent" [style=dashed, color=gray40, label="completion"];"#), "\(dot)")
        #expect(dot.contains(#""Child" -> "Log" [color=gray40, label="completion"];"#))
        #expect(GraphCheck(fx.container).error == nil, "callback edges are not constructor edges")
    }

    @Test func dotEscapesKeys() throws {
        let fx = try Fixture()
        try fx.register("Say \"hi\"", [dep("back\\slash")])
        try fx.register("back\\slash")
        let dot = GraphCheck(fx.container).dot()
        #expect(dot.contains(#""Say \"hi\"" -> "back\\slash";"#), "\(dot)")
    }
}
