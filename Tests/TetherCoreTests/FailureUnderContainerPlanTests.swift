// A walk meeting an error (a cycle, a key not registered) with container-scoped frames open: the build takes the
// outermost of those keys cached in the resolving container where its walk asks for it and never meets the error;
// uncached, it reports the error. `failureUnderContainer` before branch failunder (the build served both); now a
// failing plan whose run checks those keys' caches first (`Plan.pickedForCaches`) and runs the plan of the build
// that takes the cached one (`Plan.Failing.variants`). Each shape runs with plans and without (`bothPaths`: the
// same factory calls, instances, destructors and errors), and no resolve goes to `Graph.build` (`servedAlike`).
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
        let seen = try servedAlike(resolves: 3) { fx -> [String] in
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
        let seen = try servedAlike(resolves: 3) { fx -> [String] in
            try fx.register("K1", [dep("K0")], scope: .container)
            try fx.register("K0", [dep("K1")])
            return [outcome(fx, "K0"), outcome(fx, "K1"), outcome(fx, "K0")]
        }.seen
        #expect(seen[0].hasPrefix("cycle") && seen[0].contains("\"K0\" -> \"K1\" -> \"K0\""), "\(seen)")
    }

    /// Two container-scoped frames open at the cycle (`K1` over `K2`), only the inner one cached: the build makes
    /// `K1` over the cached `K2` (that variant), then takes `K1` cached (the outer's).
    @Test func onlyTheInnerOfTwoContainerKeysCached() throws {
        let seen = try servedAlike(resolves: 3) { fx -> [String] in
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
        let seen = try servedAlike(resolves: 4) { fx -> [String] in
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
        let seen = try servedAlike(resolves: 5) { fx -> [String] in
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
        let seen = try servedAlike(resolves: 5) { fx -> [String] in
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
}
