// Any failure inside a graph aborts the whole resolve: every instance it created
// is destroyed exactly once, nothing half-built is cached, caches made earlier
// stay. Runtime arguments are checked for count and type.
import Testing
import TetherCore

@Suite struct FailureTests {
    /// A -> B -> D (singleton), A -> E (singleton, cached beforehand), A -> C (fails while `fail` is set).
    private func midGraph(_ fx: Fixture, fail: Box<Bool>) throws -> Registration {
        let a = try fx.register("A", [dep("B"), dep("E"), dep("C")])
        let b = try fx.register("B", [dep("D")])
        try fx.register("D", scope: .singleton)
        try fx.register("E", scope: .singleton)
        try fx.register("C") { _ in if fail.value { throw CallbackFailure(reason: "boom") } }
        for r in [a, b] { fx.onComplete(r) }
        return a
    }

    @Test func factoryFailureMidGraphDestroysEverythingOnceAndCachesNothing() throws {
        let fx = try Fixture()
        let fail = Box(true)
        _ = try midGraph(fx, fail: fail)
        let e = try fx.resolve("E")
        #expect(fx.tracker.calls("E") == 1)

        expectError(.factoryFailed, "factory for \"C\" returned NULL: boom", "\"A\" -> \"C\"") { try fx.resolve("A") }
        #expect(fx.tracker.made("B") == 1 && fx.tracker.dropped("B") == 1)
        #expect(fx.tracker.made("D") == 1 && fx.tracker.dropped("D") == 1, "the new singleton is not cached")
        #expect(fx.tracker.calls("C") == 1 && fx.tracker.made("C") == 0)
        #expect(fx.tracker.calls("A") == 0)
        #expect(fx.tracker.dropped("E") == 0, "the singleton cached before is kept")
        #expect(fx.tracker.events("complete ").isEmpty, "no callback runs in a failed graph")
        #expect(fx.tracker.badDrops == 0)

        fail.value = false
        let a = try fx.resolve("A")
        #expect(fx.tracker.calls("D") == 2, "the singleton is made again")
        #expect(fx.tracker.calls("E") == 1)
        #expect(Obj.of(a).depPointer(1) == e.pointer)
        #expect(fx.tracker.events("complete ") == ["complete B", "complete A"])
    }

    @Test func blockFailingAfterTakingSingletonsLetsThemGoOnce() throws {
        // A plan's block takes cached singletons by split references; a factory failing
        // half-way turns them into ordinary references for the instances made so far,
        // which are destroyed once; the singletons stay cached, and go once, at the end.
        let fx = try Fixture()
        let fail = Box(false)
        try fx.register("A", [dep("B"), dep("S"), dep("C")])
        try fx.register("B", [dep("S"), dep("T")])
        try fx.register("C", [dep("T")]) { _ in if fail.value { throw CallbackFailure(reason: "boom") } }
        try fx.register("S", scope: .singleton)
        try fx.register("T", scope: .singleton)
        _ = try fx.resolve("A")  // records the plan; S and T cached
        _ = try fx.resolve("A")  // from the plan
        fail.value = true
        for _ in 0..<3 {
            expectError(.factoryFailed, "factory for \"C\" returned NULL: boom") { try fx.resolve("A") }
        }
        #expect(fx.tracker.made("B") == 5 && fx.tracker.dropped("B") == 5)
        #expect(fx.tracker.dropped("S") == 0 && fx.tracker.dropped("T") == 0, "the cached singletons stay")
        fail.value = false
        try withExtendedLifetime(fx.resolve("A")) {
            fx.container.reset(.singleton)
            #expect(fx.tracker.dropped("S") == 0, "the block still holds S and T")
        }
        #expect(fx.tracker.dropped("S") == 1 && fx.tracker.dropped("T") == 1)
        #expect(fx.tracker.liveCount == 0 && fx.tracker.badDrops == 0)
    }

    @Test func factoryReturningNilWithoutAReason() throws {
        let fx = try Fixture()
        try fx.container.register(Key("Null"), params: [], factory: ClosureFactory { _ in nil })
        let error = expectError(.factoryFailed, "factory for \"Null\" returned NULL") { try fx.resolve("Null") }
        #expect(error?.message.contains("NULL:") == false)
    }

    @Test func completionFailureDestroysEverythingIncludingCallbackMadeInstances() throws {
        let fx = try Fixture()
        let fail = Box(true)
        let x = try fx.register("X", [dep("S")])
        try fx.register("S", scope: .singleton)
        try fx.register("W", scope: .weak)
        try fx.register("Extra")
        fx.onComplete(x, event: "complete X#1") { r, _, obj in
            obj.got.append(try r.get(Key("Extra")).pointer)
            obj.got.append(try r.get(Key("W")).pointer)
        }
        fx.onComplete(x, event: "complete X#2") { _, _, _ in
            if fail.value { throw CallbackFailure(reason: "nope") }
        }
        expectError(.factoryFailed, "completion callback #2 of \"X\" failed: nope") { try fx.resolve("X") }
        for key in ["X", "S", "W", "Extra"] {
            #expect(fx.tracker.made(key) == 1 && fx.tracker.dropped(key) == 1, "\(key)")
        }
        #expect(fx.tracker.badDrops == 0)

        fail.value = false
        _ = try fx.resolve("X")
        #expect(fx.tracker.calls("S") == 2 && fx.tracker.calls("W") == 2)
        _ = try fx.resolve("S")
        #expect(fx.tracker.calls("S") == 2, "published once the graph succeeded")
    }

    @Test func completionFailureStatusAndNoReason() throws {
        let fx = try Fixture()
        let x = try fx.register("X")
        fx.onComplete(x) { _, _, _ in throw CallbackFailure(reason: nil, code: .invalidArgument) }
        let error = expectError(.factoryFailed, "completion callback #1 of \"X\" failed") { try fx.resolve("X") }
        #expect(error?.message.hasSuffix("failed") == true, "\(error?.message ?? "")")
    }

    @Test func missingKeyMidGraphNamesThePath() throws {
        let fx = try Fixture()
        try fx.register("Service", [dep("Made"), dep("Repository")])
        try fx.register("Made")
        try fx.register("Repository", [dep("Logger")])
        expectError(.notFound, "no registration for \"Logger\" (needed by \"Service\" -> \"Repository\")") {
            try fx.resolve("Service")
        }
        #expect(fx.tracker.made("Made") == 1 && fx.tracker.dropped("Made") == 1)
        #expect(fx.tracker.calls("Repository") == 0 && fx.tracker.calls("Service") == 0)
    }

    @Test func failureDoesNotPoisonLaterResolves() throws {
        let fx = try Fixture()
        try fx.register("A", [dep("B")])
        expectError(.notFound) { try fx.resolve("A") }
        try fx.register("B")
        _ = try fx.resolve("A")
        try fx.register("B", [dep("A")])
        expectError(.cycle) { try fx.resolve("A") }
        try fx.register("B")
        _ = try fx.resolve("A")
        #expect(fx.tracker.calls("A") == 2)
    }

    @Test func failureInsideADeepSingletonChainCachesNone() throws {
        let fx = try Fixture()
        let fail = Box(true)
        try fx.register("S1", [dep("S2")], scope: .singleton)
        try fx.register("S2", [dep("S3")], scope: .singleton)
        try fx.register("S3", [dep("Bad")], scope: .singleton)
        try fx.register("Bad") { _ in if fail.value { throw CallbackFailure(reason: "no") } }
        try fx.register("Top", [dep("S3"), dep("S1")])
        // Bad fails under S3, Top's first dependency: no singleton of the chain may stay cached.
        expectError(.factoryFailed, "factory for \"Bad\" returned NULL: no") { try fx.resolve("Top") }
        fail.value = false
        let top = try fx.resolve("Top")
        #expect(Obj.of(top).dep(1).dep(0).depPointer(0) == Obj.of(top).depPointer(0), "one S3")
        #expect(fx.tracker.calls("S3") == 1 && fx.tracker.calls("S1") == 1)
    }
}

@Suite struct ArgumentTests {
    private func i64(_ v: Int64) -> Argument { Argument(type: .i64, bits: UInt64(bitPattern: v)) }
    private func f64(_ v: Double) -> Argument { Argument(type: .f64, bits: v.bitPattern) }

    @Test func argumentsReachTheFactoryInSlotOrder() throws {
        let fx = try Fixture()
        let context = UnsafeMutableRawPointer(bitPattern: 0xC0FFEE)!
        try fx.register("X", [.argument(.i64), dep("D"), .argument(.f64), .context, .argument(.ptr)], context: context)
        try fx.register("D")
        let p = UnsafeMutableRawPointer(bitPattern: 0xBEEF)!
        let x = try fx.resolve("X", [i64(-42), f64(2.5), Argument(type: .ptr, bits: UInt64(UInt(bitPattern: p)))])
        let w = Obj.of(x).words
        #expect(w.count == 5)
        #expect(Int64(bitPattern: w[0]) == -42)
        #expect(Obj.of(x).dep(1).label == "D")
        #expect(Double(bitPattern: w[2]) == 2.5)
        #expect(w[3] == UInt64(UInt(bitPattern: context)))
        #expect(w[4] == 0xBEEF)
    }

    @Test func wrongCount() throws {
        let fx = try Fixture()
        try fx.register("X", [.argument(.i64), .argument(.f64)])
        try fx.register("One", [.argument(.str)])
        try fx.register("None")
        expectError(.argumentMismatch, "\"X\" takes 2 runtime arguments, got 1") { try fx.resolve("X", [i64(1)]) }
        expectError(.argumentMismatch, "\"X\" takes 2 runtime arguments, got 0") { try fx.resolve("X") }
        expectError(.argumentMismatch, "\"One\" takes 1 runtime argument, got 0") { try fx.resolve("One") }
        expectError(.argumentMismatch, "\"None\" takes 0 runtime arguments, got 1") { try fx.resolve("None", [i64(1)]) }
        #expect(fx.tracker.calls("X") == 0 && fx.tracker.calls("One") == 0 && fx.tracker.calls("None") == 0)
    }

    @Test func wrongType() throws {
        let fx = try Fixture()
        try fx.register("X", [.argument(.i64), .argument(.f64)])
        expectError(.argumentMismatch, "runtime argument 2 of \"X\" must be f64, got i64") {
            try fx.resolve("X", [i64(1), i64(2)])
        }
        expectError(.argumentMismatch, "runtime argument 1 of \"X\" must be i64, got str") {
            try fx.resolve("X", [Argument(type: .str, bits: 0), f64(2.0)])
        }
        #expect(fx.tracker.calls("X") == 0)
    }

    @Test func aRegistrationWithArgumentsCannotBeADependency() throws {
        let fx = try Fixture()
        try fx.register("A", [dep("X")])
        try fx.register("X", [.argument(.i64)])
        let b = try fx.register("B")
        let seen = Box<TetherError?>(nil)
        fx.onComplete(b) { r, _, _ in
            do { _ = try r.get(Key("X")) } catch let e as TetherError { seen.value = e }
        }
        expectError(.argumentMismatch, "\"X\" takes runtime arguments and cannot be a dependency (needed by \"A\")") {
            try fx.resolve("A")
        }
        _ = try fx.resolve("B")
        #expect(seen.value?.code == .argumentMismatch)
        #expect(seen.value?.message.contains("cannot be a dependency (needed by \"B\")") == true)
        #expect(fx.tracker.calls("X") == 0)
    }
}
