// PlanStats: every resolve counted once, and each one that goes to Graph.build under the
// reason its plan declined (the recorder's, a run's, or why none was looked for).
import Testing
import TetherCore

@Suite struct PlanStatsTests {
    @Test func aPlainGraphIsServedByItsPlan() throws {
        let fx = try Fixture()
        try fx.register("A", [dep("B")], scope: .transient)
        try fx.register("B", scope: .transient)
        let counts = try counted {
            for _ in 0..<3 { _ = try fx.resolve("A") }
        }
        #expect(counts == ["resolves": 3])
    }

    @Test func eachRecorderReasonIsCountedPerResolve() throws {
        let fx = try Fixture()
        try fx.register("M", [dep("Nowhere")])
        try fx.register("C1", [dep("C2")])
        try fx.register("C2", [dep("C1")])
        try fx.register("A", [dep("X")])
        try fx.register("X", [.argument(.i64)])
        let counts = try counted {
            // Each resolve counts once, the second under the reason the declined plan kept.
            // (The missing dependency and the cycle are their plans' errors: no build.)
            for _ in 0..<2 { #expect(throws: TetherError.self) { try fx.resolve("M") } }
            #expect(throws: TetherError.self) { try fx.resolve("C1") }
            #expect(throws: TetherError.self) { try fx.resolve("A") }
        }
        // A dependency not registered, a cycle and A's dependency taking runtime arguments are known
        // when the plan is recorded: each plan fails as the build does, no decline.
        #expect(counts == ["resolves": 4])
    }

    /// A plan recorded through a child with registrations of its own makes slots per resolve as the
    /// owner's plans do (a WEAK slot here), a container step's WEAK slot too (`weakSlot` before
    /// branch `declinerest`); a singleton it names not cached yet is a creation step of the child's creation
    /// plan over the container step (`notCached` before branch `createrequest`).
    @Test func aChildsPlanMakesSlotsAContainerStepsSlotToo() throws {
        let fx = try Fixture()
        try fx.register("B")
        try fx.register("W", [weakDep("B")])
        try fx.register("R", [weakDep("V")], scope: .container)
        try fx.register("V", scope: .singleton)
        try fx.register("H", [dep("R")])
        let child = try fx.child()
        try fx.register("Own", in: child)
        let counts = try counted {
            for _ in 0..<2 { _ = try fx.resolve("W", in: child) }
            _ = try fx.resolve("H", in: child)  // V not cached: a creation step of the child's creation plan
        }
        #expect(counts == ["resolves": 3])
        #expect(fx.tracker.made("V") == 1 && fx.tracker.made("R") == 1)
        let other = try fx.child()
        try fx.register("Own", in: other)
        let warm = try counted { _ = try fx.resolve("H", in: other) }
        #expect(warm == ["resolves": 1], "V cached: the child's plan, with R's WEAK slot")
        _ = try other.close()
        _ = try child.close()
    }

    @Test func aSingletonNotCachedYetIsCreatedByAPlan() throws {
        let fx = try Fixture()
        try fx.register("A", [dep("S")], scope: .transient)
        try fx.register("S", scope: .singleton)
        let counts = try counted {
            for _ in 0..<3 { _ = try fx.resolve("A") }
        }
        // The first resolve runs the plan compiled with S not cached (S a creation step); the next two
        // replay the warm plan: none goes to the graph's build.
        #expect(counts == ["resolves": 3])
    }

    /// A resolve nested in a factory runs its plan (on a progress of its own: the outer plan is
    /// under way on the thread's), none goes to the build; the nested graph's instances are its own.
    @Test func aResolveNestedInAFactoryRunsItsPlan() throws {
        let fx = try Fixture()
        try fx.register("A", scope: .transient) { _ in _ = try fx.resolve("B") }
        try fx.register("B", [dep("C")], scope: .transient)
        try fx.register("C", scope: .graph)
        try fx.register("D", [dep("C"), dep("A")], scope: .transient)
        let counts = try counted {
            for _ in 0..<3 { _ = try fx.resolve("A") }
            _ = try fx.resolve("D")
        }
        #expect(counts == ["resolves": 8])
        // D's graph has its C; the resolve nested in A's factory made another.
        #expect(fx.tracker.calls("A") == 4 && fx.tracker.calls("B") == 4 && fx.tracker.calls("C") == 5)
        #expect(fx.tracker.dropped("B") == 4 && fx.tracker.dropped("C") == 5, "the nested roots let go of when their resolves returned")
    }

    /// A resolve nested in the factory of a nested plan's step that asks for a key under construction
    /// further out (the outer plan's root): the cycle, with the nested parts through the nested plan's
    /// steps, its factory run once; the nested resolve that meets it runs its plan up to where the
    /// build asks for it (`Plan.meeting`): no decline.
    @Test func aNestedPlansStepSeesWhatIsUnderConstructionFurtherOut() throws {
        let fx = try Fixture()
        let inner = Box<TetherError?>(nil)
        try fx.register("A", scope: .transient) { _ in _ = try fx.resolve("B") }
        try fx.register("B", [dep("C")], scope: .transient)
        try fx.register("C", scope: .transient) { _ in
            do { _ = try fx.resolve("A") } catch let e as TetherError { inner.value = e }
        }
        _ = try fx.resolve("A")  // records the plans (the cycle is met once more below)
        let counts = try counted { _ = try fx.resolve("A") }
        #expect(counts == ["resolves": 3])
        let error = try #require(inner.value)
        #expect(error.code == .cycle)
        #expect(error.message.hasPrefix("dependency cycle through constructors: \"A\" -> \"B\" -> \"C\" -> \"A\""))
        #expect(error.parts.nested.map { "\($0.from.name)>\($0.to.name)" } == ["A>B", "C>A"])
        #expect(fx.tracker.calls("A") == 2 && fx.tracker.calls("C") == 2, "each factory once per resolve")
    }

    /// A cycle or a missing dependency is known when the plan is recorded: the plan's outcome is the
    /// build's error (status, message, parts), after what the build makes first (an earlier sibling,
    /// let go of), nothing cached.
    @Test func aCycleOrAMissingDependencyIsThePlansError() throws {
        let fx = try Fixture()
        try fx.register("M", [dep("S"), dep("Nowhere")], scope: .transient)
        try fx.register("S", scope: .singleton)
        try fx.register("C1", [dep("C2")])
        try fx.register("C2", [dep("C1")])
        try fx.register("Late", [dep("B"), dep("Nowhere")])
        try fx.register("B", scope: .transient)
        _ = try fx.resolve("S")
        var errors: [TetherError] = []
        let counts = try counted {
            for key in ["M", "M", "C1", "C1", "Late"] {
                do { _ = try fx.resolve(key) } catch let e as TetherError { errors.append(e) }
            }
        }
        #expect(counts == ["resolves": 5])
        #expect(errors.count == 5)
        #expect(errors[0].code == .notFound && errors[0].message == errors[1].message)
        #expect(errors[0].message.hasPrefix("no registration for \"Nowhere\" (needed by \"M\")"))
        #expect(errors[0].parts.fix == .register && errors[0].parts.key == Key("Nowhere") && errors[0].parts.path == [Key("M")])
        #expect(errors[2].code == .cycle && errors[2].message == errors[3].message)
        #expect(errors[2].message.hasPrefix("dependency cycle through constructors: \"C1\" -> \"C2\" -> \"C1\""))
        #expect(errors[2].parts.path == [Key("C1"), Key("C2"), Key("C1")])
        #expect(fx.tracker.calls("M") == 0 && fx.tracker.calls("C1") == 0 && fx.tracker.calls("C2") == 0)
        #expect(fx.tracker.calls("B") == 1 && fx.tracker.dropped("B") == 1, "made before the error, as the build makes it")
        #expect(errors[4].message.hasPrefix("no registration for \"Nowhere\" (needed by \"Late\")"))
        #expect(fx.tracker.calls("S") == 1 && fx.tracker.dropped("S") == 0)
    }

    /// A failing plan's step was asked for by a frame still open when the walk met the error: a
    /// resolve nested in its factory sees that frame under construction (a cycle, the factory once),
    /// and its own factory's failure names the path from the root, as the build's frames give them.
    @Test func aFailingPlansStepsSeeTheFramesOpenAboveThem() throws {
        let fx = try Fixture()
        let inner = Box<TetherError?>(nil)
        let failR = Box(false)
        try fx.register("Open", [dep("Mid")], scope: .transient)
        try fx.register("Mid", [dep("R"), dep("Nowhere")], scope: .transient)
        try fx.register("R", scope: .transient) { _ in
            do { _ = try fx.resolve("Open") } catch let e as TetherError { inner.value = e }
            if failR.value { throw TetherError(.factoryFailed, "R failed") }
        }
        var errors: [TetherError] = []
        let counts = try counted {
            for _ in 0..<2 {
                do { _ = try fx.resolve("Open") } catch let e as TetherError { errors.append(e) }
            }
        }
        #expect(counts == ["resolves": 4], "each nested resolve of Open meets it under construction: a cut run (branch cyclecut)")
        #expect(errors.count == 2 && errors.allSatisfy { $0.code == .notFound && $0.parts.path == [Key("Open"), Key("Mid")] })
        let cycle = try #require(inner.value)
        #expect(cycle.code == .cycle)
        #expect(cycle.message.hasPrefix("dependency cycle through constructors: \"Open\" -> \"Mid\" -> \"R\" -> \"Open\""))
        #expect(fx.tracker.calls("R") == 2 && fx.tracker.dropped("R") == 2 && fx.tracker.calls("Open") == 0)
        failR.value = true
        let failed = expectError(.factoryFailed, "\"Open\" -> \"Mid\" -> \"R\"") { try fx.resolve("Open") }
        #expect(failed?.parts.path == [Key("Open"), Key("Mid"), Key("R")])
    }
}
