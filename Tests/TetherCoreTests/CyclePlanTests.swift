// Constructor cycles and keys not registered that used to send a resolve to `Graph.build`
// (`Plan.Decline.cycle`, `.missing`): a failing plan (`Plan.Failing`) or a run up to a cut
// (`Plan.meeting`, `replayCut`) makes what the build makes before it meets them, lets go of it
// as the build's abort does, and reports the build's error. Each test asserts the factory calls and
// drops in order, the status and message (the build's, which ran beside it as an oracle until branch
// noplansoff), and that no decline is counted (`planned`, Support.swift).
import Testing
@testable import TetherCore

@Suite struct CyclePlanTests {
    /// A strict container: a warm plan's frames are graph- or transient-scoped (no captive check),
    /// so its cycle and its missing key are the build's errors, reported by a failing plan.
    @Test func aStrictContainersCycleAndMissingKeyRunAPlan() throws {
        let (log, _, counts) = try planned { fx in
            fx.container.refusesCaptives = true
            try fx.register("S", scope: .singleton)
            try fx.register("T", [dep("S")], scope: .transient)
            try fx.register("A", [dep("T"), dep("B")])
            try fx.register("B", [dep("A")])
            try fx.register("M", [dep("T"), dep("Nowhere")])
            _ = try fx.resolve("S")
            for _ in 0..<3 {
                expectError(.cycle, "dependency cycle through constructors: \"A\" -> \"B\" -> \"A\"") { try fx.resolve("A") }
                expectError(.notFound, "\"Nowhere\"", "\"M\"") { try fx.resolve("M") }
            }
            #expect(fx.container.registration(for: Key("A"))!.hasCurrentPlan)
            #expect(fx.tracker.made("T") == 6 && fx.tracker.dropped("T") == 6 && fx.tracker.calls("A") == 0)
        }
        // Every resolve a plan's, the singleton root's first too (a creation plan checks captives: `sharedplans`).
        #expect(counts == ["resolves": 7], "\(counts)")
        let expected = ["make S", "make T", "drop T", "make T", "drop T", "make T", "drop T", "make T", "drop T",
                        "make T", "drop T", "make T", "drop T", "drop S"]
        expectLiteral(log, expected)
    }

    /// A factory resolving the root of the resolve under way (a nested resolve): its plan runs the
    /// steps the build makes before it asks for a key constructed further out, drops them, and
    /// reports the re-entry with its whole path.
    @Test func aNestedResolveMeetingAnOuterStepRunsItsPlanUpToIt() throws {
        let (log, _, counts) = try planned { fx in
            let messages = Box<[String]>([])
            try fx.register("L", scope: .transient)
            try fx.register("A", [dep("L"), dep("B")])
            try fx.register("B", [dep("C")])
            try fx.register("C", scope: .transient) { _ in
                do { _ = try fx.resolve("X") } catch let error as TetherError { messages.value.append(error.message) }
            }
            // X's first step is made before the build asks for B, constructed further out.
            try fx.register("X", [dep("L"), dep("B")])
            for _ in 0..<3 { _ = try fx.resolve("A") }
            #expect(messages.value.count == 3 && messages.value.allSatisfy { $0.contains("\"B\"") && $0.contains("\"X\"") }, "\(messages.value)")
            #expect(Set(messages.value).count == 1)
            #expect(fx.tracker.made("L") == 6 && fx.tracker.calls("X") == 0)
        }
        #expect(counts.keys.sorted() == ["resolves"], "\(counts)")
        let expected = ["make L", "make L", "drop L", "make C", "make B", "make A", "drop A", "drop B", "drop C",
                        "drop L", "make L", "make L", "drop L", "make C", "make B", "make A", "drop A", "drop B",
                        "drop C", "drop L", "make L", "make L", "drop L", "make C", "make B", "make A", "drop A",
                        "drop B", "drop C", "drop L"]
        expectLiteral(log, expected)
    }

    /// The nested resolve's plan creates a singleton before it asks for the key under construction
    /// further out: it claims the creation cells first, as the build's first claim does, makes the
    /// singleton, and rolls it back with the rest (`CreatingCutIntoGraph`): nothing cached.
    @Test func aNestedResolveMeetingAnOuterStepAfterACreationRollsItBack() throws {
        let (log, _, counts) = try planned { fx in
            let messages = Box<[String]>([])
            try fx.register("S", scope: .singleton)
            try fx.register("A", [dep("B")])
            try fx.register("B", [dep("C")])
            try fx.register("C", scope: .transient) { _ in
                do { _ = try fx.resolve("X") } catch let error as TetherError { messages.value.append(error.message) }
            }
            try fx.register("X", [dep("S"), dep("B")])
            for _ in 0..<3 { _ = try fx.resolve("A") }
            #expect(messages.value.count == 3 && Set(messages.value).count == 1 && messages.value[0].contains("\"B\""), "\(messages.value)")
            #expect(fx.tracker.made("S") == 3 && fx.tracker.dropped("S") == 3, "made and rolled back each time")
        }
        #expect(counts.keys.sorted() == ["resolves"], "\(counts)")
        let expected = ["make S", "drop S", "make C", "make B", "make A", "drop A", "drop B", "drop C", "make S",
                        "drop S", "make C", "make B", "make A", "drop A", "drop B", "drop C", "make S", "drop S",
                        "make C", "make B", "make A", "drop A", "drop B", "drop C"]
        expectLiteral(log, expected)
    }

    /// A child's own registration on the cycle: the child's plan fails as the build does, in each
    /// child of that component (its open frames are each child's registrations).
    @Test func aCycleThroughAChildsOwnRegistrationRunsTheChildsPlan() throws {
        let (log, _, counts) = try planned { fx in
            try fx.register("A", [dep("B")])
            try fx.register("B")
            try fx.register("T", scope: .transient)
            for _ in 0..<3 {
                let child = try fx.child()
                try fx.register("B", [dep("T"), dep("A")], in: child)
                expectError(.cycle, "\"A\" -> \"B\" -> \"A\"") { try fx.resolve("A", in: child) }
                _ = try child.close()
            }
            #expect(fx.tracker.made("T") == 3 && fx.tracker.dropped("T") == 3)
        }
        #expect(counts.keys.sorted() == ["resolves"], "\(counts)")
        let expected = ["make T", "drop T", "make T", "drop T", "make T", "drop T"]
        expectLiteral(log, expected)
    }

    /// A missing key after a LAZY slot made per resolve: the failing plan makes the slot's owner
    /// (its cell waiting for the root, which is never made) and drops it.
    @Test func aMissingKeyPastALazySlotRunsAFailingPlan() throws {
        let (log, _, counts) = try planned { fx in
            try fx.register("C", [lazyDep("R")])
            try fx.register("R", [dep("C"), dep("Nowhere")])
            for _ in 0..<3 { expectError(.notFound, "\"Nowhere\"", "\"R\"") { try fx.resolve("R") } }
            #expect(fx.tracker.made("C") == 3 && fx.tracker.dropped("C") == 3)
        }
        #expect(counts.keys.sorted() == ["resolves"], "\(counts)")
        let expected = ["make C", "drop C", "make C", "drop C", "make C", "drop C"]
        expectLiteral(log, expected)
    }
}
