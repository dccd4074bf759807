// A walk meeting an error (a cycle, a key not registered) with container-scoped frames open: the build takes the
// outermost of those keys cached in the resolving container where its walk asks for it and never meets the error;
// uncached, it reports the error. `failureUnderContainer` before branch failunder (the build served both); now a
// failing plan whose run checks those keys' caches first (`Plan.pickedForCaches`) and runs the plan of the build
// that takes the cached one (`Plan.Failing.variants`). Each shape asserts the factory calls, instances, destructors
// and errors (the build's, which `bothPaths` ran beside it as an oracle until branch noplansoff), and that no resolve
// goes to `Graph.build` (`served`).
import Testing
@testable import TetherCore

@Suite struct FailureUnderContainerPlanTests {
    /// The tree below `obj` through its words holding live objects (not an ALL slot's list word).
    private func tree(_ fx: Fixture, _ obj: Obj) -> String {
        let parts = obj.words.compactMap { word -> String? in
            guard word > 0x1000, let p = UnsafeMutableRawPointer(bitPattern: UInt(word)), fx.tracker.isLive(p) else { return nil }
            return tree(fx, Obj.at(p))
        }
        return parts.isEmpty ? obj.label : "\(obj.label)(\(parts.joined(separator: ",")))"
    }

    /// A resolve's tree, or its error's code and message.
    private func outcome(_ fx: Fixture, _ key: String, in target: Container? = nil) -> String {
        do {
            let instance = try fx.resolve(key, in: target)
            return withExtendedLifetime(instance) { tree(fx, Obj.of(instance)) }
        } catch let error as TetherError {
            return "\(error.code): \(error.message)"
        } catch {
            return "\(error)"
        }
    }

    /// `K1` (container-scoped, `all:K0`) cached, then `K0` over `K1` registered: the walk from `K0` meets `K0`
    /// again under `K1`, which the build takes cached. Fuzz finding 59f44910's shape.
    @Test func aCycleUnderACachedContainerKeyRunsTheBuildsPlan() throws {
        let seen = try served(resolves: 3) { fx -> [String] in
            try fx.register("K1", [.all(Key("K0"))], scope: .container)
            var seen = [outcome(fx, "K1")]
            try fx.register("K0", [dep("K1")])
            seen += [outcome(fx, "K0"), outcome(fx, "K0")]
            seen.append("K1 made \(fx.tracker.made("K1")), K0 made \(fx.tracker.made("K0"))")
            return seen
        }.seen
        #expect(seen == ["K1", "K0(K1)", "K0(K1)", "K1 made 1, K0 made 2"], "\(seen)")
    }

    /// Not cached: the failing plan reports the build's cycle, with its path, and makes nothing.
    @Test func aCycleUnderAnUncachedContainerKeyIsThePlansError() throws {
        let seen = try served(resolves: 3) { fx -> [String] in
            try fx.register("K1", [dep("K0")], scope: .container)
            try fx.register("K0", [dep("K1")])
            return [outcome(fx, "K0"), outcome(fx, "K1"), outcome(fx, "K0")]
        }.seen
        #expect(seen[0].hasPrefix("cycle") && seen[0].contains("\"K0\" -> \"K1\" -> \"K0\""), "\(seen)")
    }

    /// Two container-scoped frames open at the cycle (`K1` over `K2`), only the inner one cached: the build makes
    /// `K1` over the cached `K2` (that variant), then takes `K1` cached (the outer's).
    @Test func onlyTheInnerOfTwoContainerKeysCached() throws {
        let seen = try served(resolves: 3) { fx -> [String] in
            try fx.register("K2", [.all(Key("K0"))], scope: .container)
            try fx.register("K1", [dep("K2")], scope: .container)
            var seen = [outcome(fx, "K2")]
            try fx.register("K0", [dep("K1")])
            seen += [outcome(fx, "K0"), outcome(fx, "K0")]
            seen.append("K1 made \(fx.tracker.made("K1")), K2 made \(fx.tracker.made("K2"))")
            return seen
        }.seen
        #expect(seen == ["K2", "K0(K1(K2))", "K0(K1(K2))", "K1 made 1, K2 made 1"], "\(seen)")
    }

    /// Only the outer one cached (`K1`, cached before its `all:K2` had an item): the build takes it and never asks
    /// for `K2`; resolving `K2` itself, the root's frame is the outer one (not cached) and `K1` the inner.
    @Test func onlyTheOuterOfTwoContainerKeysCached() throws {
        // (The second `K2` is the root container's cached instance, answered before any plan: not counted.)
        let seen = try served(resolves: 4) { fx -> [String] in
            try fx.register("K1", [.all(Key("K2"))], scope: .container)
            var seen = [outcome(fx, "K1")]
            try fx.register("K2", [dep("K0")], scope: .container)
            try fx.register("K0", [dep("K1")])
            seen += [outcome(fx, "K0"), outcome(fx, "K2"), outcome(fx, "K2"), outcome(fx, "K0")]
            seen.append("K1 made \(fx.tracker.made("K1")), K2 made \(fx.tracker.made("K2")), K0 made \(fx.tracker.made("K0"))")
            return seen
        }.seen
        #expect(seen == ["K1", "K0(K1)", "K2(K0(K1))", "K2(K0(K1))", "K0(K1)", "K1 made 1, K2 made 1, K0 made 3"],
                "\(seen)")
    }

    /// A key not registered under a container-scoped key cached in a child: from the child the build takes it; from
    /// the root (not cached there) it reports the key missing, and again once the child is closed.
    @Test func aMissingKeyUnderAContainerKeyCachedInAChild() throws {
        let seen = try served(resolves: 5) { fx -> [String] in
            try fx.register("K1", [.all(Key("K3"))], scope: .container)
            let child = try fx.child()
            var seen = [outcome(fx, "K1", in: child)]
            try fx.register("K3", [dep("K9")])
            try fx.register("K0", [dep("K1")])
            seen += [outcome(fx, "K0", in: child), outcome(fx, "K0"), outcome(fx, "K0", in: child)]
            _ = try child.close()
            seen += [outcome(fx, "K0"), "K1 made \(fx.tracker.made("K1")) dropped \(fx.tracker.dropped("K1"))"]
            return seen
        }.seen
        #expect(seen[1] == "K0(K1)" && seen[2].hasPrefix("notFound") && seen[2].contains("K9"), "\(seen)")
        #expect(seen.last == "K1 made 1 dropped 1")
    }

    /// The container-scoped key a child's own registration (a local frame: `Failing.openLocals`), the plan its
    /// component's: cached in one child the build takes it; another child of the same component has none cached.
    @Test func aMissingKeyUnderAChildsOwnCachedContainerKey() throws {
        let seen = try served(resolves: 5) { fx -> [String] in
            try fx.register("K0", [dep("K1"), dep("K5")])
            var seen: [String] = []
            var children: [Container] = []
            for name in ["a", "b"] {
                let child = try fx.child()
                try fx.register("K1", [.all(Key("K4"))], scope: .container, in: child, label: "K1@\(name)")
                try fx.register("K5", in: child, label: "K5@\(name)")
                children.append(child)
            }
            // `a`'s `K1` cached over `all:K4` (none), then `K4` over the missing `K9`: `a` takes it, `b` reports it.
            seen.append(outcome(fx, "K1", in: children[0]))
            try fx.register("K4", [dep("K9")])
            for child in children + children { seen.append(outcome(fx, "K0", in: child)) }
            for child in children { _ = try child.close() }
            seen.append("K1@a made \(fx.tracker.made("K1@a")), K1@b made \(fx.tracker.made("K1@b"))")
            return seen
        }.seen
        #expect(seen[1] == "K0(K1@a,K5@a)" && seen[2].hasPrefix("notFound"), "\(seen)")
        #expect(seen.last == "K1@a made 1, K1@b made 0")
    }

    /// The container-scoped frame under a singleton from further up (`S`, not cached, registered in the root): the build's
    /// frame reads its cache in the singleton's container, not the resolving child's (`failureUnderContainer` before branch
    /// failunder2, the build). Cached in the root, a child's resolve takes it there (the variant, its leaf read in the root:
    /// `Failing.containerLookups`, `Step.lookup`); the next resolve finds `S` cached. A cycle and a key not registered alike.
    @Test(arguments: [false, true]) func aFailureUnderASingletonsContainerKeyCachedInItsContainer(missing: Bool) throws {
        let run = try planned { fx -> [String] in
            try fx.register("K1", [.all(Key(missing ? "K3" : "H"))], scope: .container)
            var seen = [outcome(fx, "K1")]
            if missing { try fx.register("K3", [dep("K9")]) }
            try fx.register("S", [dep("K1")], scope: .singleton)
            try fx.register("H", [dep("S")])
            let child = try fx.child()
            seen += [outcome(fx, "H", in: child), outcome(fx, "H", in: child), outcome(fx, "H")]
            _ = try child.close()
            seen.append("K1 made \(fx.tracker.made("K1")), S made \(fx.tracker.made("S")), H made \(fx.tracker.made("H"))")
            return seen
        }
        #expect(run.counts == ["resolves": 4], "\(run.counts)")
        #expect(run.seen == ["K1", "H(S(K1))", "H(S(K1))", "H(S(K1))", "K1 made 1, S made 1, H made 3"], "\(run.seen)")
    }

    /// Not cached in the singleton's container (a child's cached one is not the build's): the failing plan's error, with
    /// the build's path; once cached in the root, the variant.
    @Test func aCycleUnderASingletonsContainerKeyCachedOnlyInAChildIsTheError() throws {
        let run = try planned { fx -> [String] in
            try fx.register("K1", [.all(Key("H"))], scope: .container)
            let child = try fx.child()
            var seen = [outcome(fx, "K1", in: child)]
            try fx.register("S", [dep("K1")], scope: .singleton)
            try fx.register("H", [dep("S")])
            seen += [outcome(fx, "H", in: child), outcome(fx, "H")]
            _ = try child.close()
            seen.append("K1 made \(fx.tracker.made("K1")) dropped \(fx.tracker.dropped("K1")), S made \(fx.tracker.made("S"))")
            return seen
        }
        #expect(run.counts == ["resolves": 3], "\(run.counts)")
        #expect(run.seen.count == 4 && run.seen[1].hasPrefix("cycle") && run.seen[1].contains("\"H\" -> \"S\" -> \"K1\" -> \"H\""),
                "\(run.seen)")
        #expect(run.seen[2] == run.seen[1] && run.seen[3] == "K1 made 1 dropped 1, S made 0", "\(run.seen)")
    }

    /// A stacked level's singleton (`S` registered in `mid`, between the resolving child and the owner) over that level's
    /// container-scoped `K1`, cached in `mid`: the build's frame reads it there (the level of each run, `lookupSlot`).
    @Test func aCycleUnderAStackedLevelsSingletonsContainerKeyCachedInTheLevel() throws {
        let run = try planned { fx -> [String] in
            let mid = try fx.child()
            try fx.register("K1", [.all(Key("H"))], scope: .container, in: mid)
            var seen = [outcome(fx, "K1", in: mid)]
            try fx.register("S", [dep("K1")], scope: .singleton, in: mid)
            try fx.register("H", [dep("S"), dep("Own")])
            for name in ["a", "b"] {
                let request = try fx.child(of: mid)
                try fx.register("Own", in: request, label: "Own@\(name)")
                seen += [outcome(fx, "H", in: request), outcome(fx, "H", in: request)]
                _ = try request.close()
            }
            _ = try mid.close()
            seen.append("K1 made \(fx.tracker.made("K1")), S made \(fx.tracker.made("S"))")
            return seen
        }
        #expect(run.counts == ["resolves": 5], "\(run.counts)")
        #expect(run.seen == ["K1", "H(S(K1),Own@a)", "H(S(K1),Own@a)", "H(S(K1),Own@b)", "H(S(K1),Own@b)", "K1 made 1, S made 1"],
                "\(run.seen)")
    }

    /// Five sibling container-scoped keys, each over a key not registered (`K9`) through an ALL item registered after it
    /// was cached: the walk meets the error under `K1`; the build taking `K1` cached meets it under `K2`, and so on, each
    /// variant one more leaf (past `Plan.maxContainerLeaves`, 4, before branch failunder2: `failureUnderContainer`, the
    /// build). Variants recorded on first pick: from the root (all cached) the build's instance; from a child with the
    /// first three cached, the error under `K4`; from a child with none, the error under `K1`.
    @Test func variantsNestedPastFourLeavesAreRecordedOnFirstPick() throws {
        let run = try planned { fx -> [String] in
            let keys = (1...5).map { "K\($0)" }
            for (i, key) in keys.enumerated() { try fx.register(key, [.all(Key("X\(i + 1)"))], scope: .container) }
            let some = try fx.child()
            var seen = keys.map { outcome(fx, $0) } + keys.prefix(3).map { outcome(fx, $0, in: some) }
            for i in 1...5 { try fx.register("X\(i)", [dep("K9")]) }
            try fx.register("H", keys.map { dep($0) })
            let none = try fx.child()
            seen += [outcome(fx, "H"), outcome(fx, "H", in: some), outcome(fx, "H", in: none), outcome(fx, "H"), outcome(fx, "H", in: some)]
            _ = try some.close()
            _ = try none.close()
            seen.append("K made \(keys.map { fx.tracker.made($0) }), H made \(fx.tracker.made("H"))")
            return seen
        }
        #expect(run.counts == ["resolves": 13], "\(run.counts)")
        let seen = run.seen
        #expect(seen[8] == "H(K1,K2,K3,K4,K5)" && seen[11] == seen[8], "\(seen)")
        #expect(seen[9].hasPrefix("notFound") && seen[9].contains("X4") && seen[10].hasPrefix("notFound") && seen[10].contains("X1"), "\(seen)")
        #expect(seen[12] == seen[9] && seen.last == "K made [2, 2, 2, 1, 1], H made 2", "\(seen)")
    }
}
