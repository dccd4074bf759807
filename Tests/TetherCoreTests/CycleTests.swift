// Constructor cycles are errors naming the path; cycles close through deferred
// completion callbacks, which run after every factory, in creation order, with
// callback-created instances appended; no factory runs twice.
import Testing
import TetherCore

@Suite struct ConstructorCycleTests {
    @Test func twoNodeCycleNamesThePathAndTheFix() throws {
        let fx = try Fixture()
        try fx.register("Parent", [dep("Child")])
        try fx.register("Child", [dep("Parent")])
        expectError(.cycle,
                    "dependency cycle through constructors: \"Parent\" -> \"Child\" -> \"Parent\"",
                    "completion callback of \"Child\" (tether_on_complete)", "TETHER_WEAK_LAZY(\"Parent\")") {
            try fx.resolve("Parent")
        }
        expectError(.cycle, "\"Child\" -> \"Parent\" -> \"Child\"") { try fx.resolve("Child") }
        #expect(fx.tracker.calls("Parent") == 0 && fx.tracker.calls("Child") == 0)
    }

    @Test func selfCycle() throws {
        let fx = try Fixture()
        try fx.register("A", [dep("A")])
        let error = expectError(.cycle, "\"A\" -> \"A\"") { try fx.resolve("A") }
        #expect(error?.message.contains("\"A\" -> \"A\" -> \"A\"") == false)
        #expect(fx.tracker.calls("A") == 0)
    }

    @Test func cycleBelowTheRootNamesOnlyTheCycle() throws {
        let fx = try Fixture()
        try fx.register("Root", [dep("Leaf"), dep("A")])
        try fx.register("Leaf")
        try fx.register("A", [dep("B")])
        try fx.register("B", [dep("C")])
        try fx.register("C", [dep("A")])
        let error = expectError(.cycle, "\"A\" -> \"B\" -> \"C\" -> \"A\"") { try fx.resolve("Root") }
        #expect(error?.message.contains("\"Root\" ->") == false)
        // Leaf was built before the cycle was found: destroyed exactly once, nothing else ran.
        #expect(fx.tracker.made("Leaf") == 1 && fx.tracker.dropped("Leaf") == 1)
        #expect(fx.tracker.calls("A") == 0 && fx.tracker.calls("B") == 0 && fx.tracker.calls("C") == 0)
    }

    @Test func weakSlotIsAConstructorEdge() throws {
        let fx = try Fixture()
        try fx.register("A", [dep("B")])
        try fx.register("B", [weakDep("A")])
        expectError(.cycle, "\"A\" -> \"B\" -> \"A\"") { try fx.resolve("A") }
    }

    @Test func cycleInAChildContainerOnly() throws {
        let fx = try Fixture()
        try fx.register("A", [dep("B")])
        try fx.register("B")
        let child = try fx.child()
        try fx.register("B", [dep("A")], in: child)
        _ = try fx.resolve("A")
        expectError(.cycle, "\"A\" -> \"B\" -> \"A\"") { try fx.resolve("A", in: child) }
    }
}

@Suite struct CompletionTests {
    @Test func completionClosesTheCycleWithAWeakBackEdge() throws {
        let fx = try Fixture()
        try fx.register("Parent", [dep("Child")])
        let child = try fx.register("Child")
        fx.onComplete(child) { r, _, obj in obj.weaks.append(try r.getWeak(Key("Parent"))) }

        var parent: Instance? = try fx.resolve("Parent")
        let childObj = Obj.of(parent!).dep(0)
        #expect(childObj.weaks.count == 1)
        #expect(childObj.weaks[0].upgrade() === parent, "the back-reference is the resolved parent")
        #expect(fx.tracker.calls("Parent") == 1 && fx.tracker.calls("Child") == 1)
        parent = nil
        #expect(fx.tracker.dropped("Parent") == 1 && fx.tracker.dropped("Child") == 1)
        #expect(fx.tracker.badDrops == 0 && fx.tracker.liveCount == 0)
    }

    @Test func callbacksRunAfterEveryFactoryInCreationOrder() throws {
        let fx = try Fixture()
        let a = try fx.register("A", [dep("B"), dep("C")])
        let b = try fx.register("B", [dep("D")])
        let c = try fx.register("C")
        let d = try fx.register("D")
        fx.onComplete(a, event: "complete A#1")
        fx.onComplete(a, event: "complete A#2")
        fx.onComplete(b)
        fx.onComplete(c)
        fx.onComplete(d)
        let root = try fx.resolve("A")
        #expect(fx.tracker.log == [
            "make D", "make B", "make C", "make A",
            "complete D", "complete B", "complete C", "complete A#1", "complete A#2",
        ])
        withExtendedLifetime(root) {}
    }

    @Test func instancesMadeByCallbacksAreAppended() throws {
        let fx = try Fixture()
        let a = try fx.register("A", [dep("B"), dep("C")])
        let b = try fx.register("B")
        let c = try fx.register("C")
        let e = try fx.register("E", [dep("F")])
        let f = try fx.register("F")
        fx.onComplete(a)
        fx.onComplete(b) { r, _, obj in obj.got.append(try r.get(Key("E")).pointer) }
        fx.onComplete(c) { r, _, obj in
            // Already made by B's callback: the same instance, nothing rebuilt.
            obj.got.append(try r.get(Key("E")).pointer)
        }
        fx.onComplete(e)
        fx.onComplete(f)
        let root = try fx.resolve("A")
        #expect(fx.tracker.log == [
            "make B", "make C", "make A",
            "complete B", "make F", "make E",
            "complete C", "complete A", "complete F", "complete E",
        ])
        let o = Obj.of(root)
        #expect(o.dep(0).got == o.dep(1).got)
        for key in ["A", "B", "C", "E", "F"] { #expect(fx.tracker.calls(key) == 1, "\(key)") }
    }

    @Test func allFactoriesHaveReturnedBeforeTheFirstCallback() throws {
        // The callback of the deepest instance can already reach the root, fully built.
        let fx = try Fixture()
        try fx.register("A", [dep("B")])
        try fx.register("B", [dep("C")])
        let c = try fx.register("C")
        let seenRoot = Box<UnsafeMutableRawPointer?>(nil)
        fx.onComplete(c) { r, _, obj in
            #expect(fx.tracker.made("A") == 1)
            let w = try r.getWeak(Key("A"))
            obj.weaks.append(w)
            seenRoot.value = w.upgrade()?.pointer
        }
        let root = try fx.resolve("A")
        #expect(seenRoot.value == root.pointer)
        #expect(fx.tracker.calls("A") == 1)
    }

    @Test func swinjectStyleCycleRunsEachFactoryOnce() throws {
        // Each side gets the other in a callback (one strong, one weak); the
        // factory of neither runs twice, whichever side is resolved first.
        for root in ["Parent", "Child"] {
            let fx = try Fixture()
            let p = try fx.register("Parent")
            let ch = try fx.register("Child")
            fx.onComplete(p) { r, _, obj in obj.got.append(try r.get(Key("Child")).pointer) }
            fx.onComplete(ch) { r, _, obj in obj.weaks.append(try r.getWeak(Key("Parent"))) }
            var top: Instance? = try fx.resolve(root)
            #expect(fx.tracker.calls("Parent") == 1 && fx.tracker.calls("Child") == 1, "root \(root)")
            if root == "Parent" {
                let parentObj = Obj.of(top!)
                let childObj = Obj.at(parentObj.got[0])
                #expect(childObj.weaks[0].upgrade() === top)
                top = nil
                #expect(fx.tracker.dropped("Parent") == 1 && fx.tracker.dropped("Child") == 1)
            } else {
                // Only a weak edge points at Parent: it is gone once the resolve returns.
                #expect(Obj.of(top!).weaks[0].upgrade() == nil)
                #expect(fx.tracker.dropped("Parent") == 1 && fx.tracker.dropped("Child") == 0)
                top = nil
                #expect(fx.tracker.dropped("Child") == 1)
            }
        }
    }
}

@Suite struct ResolverTests {
    @Test func resolverInAFactoryResolvesWithinTheGraph() throws {
        let fx = try Fixture()
        let captured = Box<Resolver?>(nil)
        try fx.register("A", [dep("B"), .resolver]) { obj in
            let r = try #require(fx.bridge.resolver(obj.words[1]))
            captured.value = r
            let b = try r.get(Key("B"))
            #expect(b.pointer == obj.depPointer(0), "graph scope: the B this factory already got")
            obj.got.append(try r.get(Key("C")).pointer)
            obj.weaks.append(try r.getWeak(Key("D")))
        }
        try fx.register("B")
        try fx.register("C")
        try fx.register("D")
        var a: Instance? = try fx.resolve("A")
        #expect(fx.bridge.openResolvers == 0 && fx.bridge.closedResolvers == 1)
        #expect(fx.tracker.calls("B") == 1 && fx.tracker.calls("C") == 1)
        #expect(fx.tracker.dropped("C") == 0, "held by A's strong edge")
        #expect(fx.tracker.dropped("D") == 1, "only a weak edge pointed at D")
        #expect(Obj.of(a!).weaks[0].upgrade() == nil)

        do {
            let r = try #require(captured.value)
            expectError(.wrongContext, "only valid during the callback") { try r.get(Key("B")) }
            expectError(.wrongContext) { try r.getWeak(Key("B")) }
        }

        // (A Resolver kept past its callback still lists the edges it handed out: drop ours first.)
        captured.value = nil
        a = nil
        let drops = fx.tracker.events("drop ")
        #expect(drops.prefix(2) == ["drop D", "drop A"], "D at the end of the resolve, then A before its edges")
        #expect(drops.dropFirst(2).sorted() == ["drop B", "drop C"])
    }

    @Test func resolverInAFactoryAskingForItsOwnKeyIsACycle() throws {
        let fx = try Fixture()
        let inner = Box<TetherError?>(nil)
        try fx.register("A", [.resolver]) { obj in
            let r = try #require(fx.bridge.resolver(obj.words[0]))
            do { _ = try r.get(Key("A")) } catch let e as TetherError { inner.value = e; throw e }
        }
        expectError(.factoryFailed, "factory for \"A\" returned NULL", "\"A\" -> \"A\"") { try fx.resolve("A") }
        #expect(inner.value?.code == .cycle)
        #expect(inner.value?.message.contains("dependency cycle through constructors: \"A\" -> \"A\"") == true)
    }

    @Test func reentryThroughSeveralNestedResolvesNamesTheWholePathAndListsThem() throws {
        // X's factory resolves Y, Y's resolves Z, Z's resolves X (each going on after a failure).
        let fx = try Fixture()
        let inner = Box<TetherError?>(nil)
        for (key, next) in [("X", "Y"), ("Y", "Z"), ("Z", "X")] {
            _ = try fx.register(key) { _ in
                do { _ = try fx.resolve(next) } catch let e as TetherError { if inner.value == nil { inner.value = e } }
            }
        }
        _ = try fx.resolve("X")
        let error = try #require(inner.value)
        #expect(error.code == .cycle)
        #expect(error.message.hasPrefix("dependency cycle through constructors: \"X\" -> \"Y\" -> \"Z\" -> \"X\"; "))
        #expect(error.message.contains("declare the slot of \"Z\" on it TETHER_WEAK_LAZY(\"X\")"))
        #expect(error.message.contains("; but first take \"Y\" as a slot of \"X\", \"Z\" as a slot of \"Y\" (each instead of its nested resolve)"))
        #expect(error.parts.fix == .nestedResolve && error.parts.key == Key("Z") && error.parts.target == Key("X"))
        #expect(error.parts.nested.map { "\($0.from.name)>\($0.to.name)\($0.inCallback ? "!" : "")" } == ["X>Y", "Y>Z", "Z>X"])
        #expect(fx.tracker.events("make ").count == 3, "each factory once")
    }

    @Test func factoryMayRecoverFromAFailedResolverCall() throws {
        let fx = try Fixture()
        try fx.register("A", [.resolver]) { obj in
            let r = try #require(fx.bridge.resolver(obj.words[0]))
            #expect(throws: TetherError.self) { try r.get(Key("Missing")) }
            obj.got.append(try r.get(Key("B")).pointer)
        }
        try fx.register("B")
        var a: Instance? = try fx.resolve("A")
        #expect(Obj.at(Obj.of(a!).got[0]).label == "B")
        a = nil
        #expect(fx.tracker.liveCount == 0 && fx.tracker.badDrops == 0)
    }

    @Test func completionResolverIsInvalidAfterwardsAndOnOtherThreads() throws {
        let fx = try Fixture()
        let reg = try fx.register("A")
        try fx.register("B")
        let captured = Box<Resolver?>(nil)
        let fromOtherThread = Box<ErrorCode?>(nil)
        fx.onComplete(reg) { r, _, _ in
            captured.value = r
            onThreads(1) { _ in
                do { _ = try r.get(Key("B")) } catch let e as TetherError { fromOtherThread.value = e.code } catch {}
            }
        }
        _ = try fx.resolve("A")
        #expect(fromOtherThread.value == .wrongContext)
        let r = try #require(captured.value)
        expectError(.wrongContext, "resolver is only valid during the callback") { try r.get(Key("B")) }
        #expect(fx.tracker.calls("B") == 0)
    }

    @Test func resolverMissingKeyNamesTheCallback() throws {
        let fx = try Fixture()
        let reg = try fx.register("A")
        let seen = Box<TetherError?>(nil)
        fx.onComplete(reg) { r, _, _ in
            do { _ = try r.get(Key("Nope")) } catch let e as TetherError { seen.value = e }
        }
        _ = try fx.resolve("A")
        #expect(seen.value?.code == .notFound)
        #expect(seen.value?.message.contains("no registration for \"Nope\" (needed by the completion callback of \"A\")") == true,
                "\(seen.value?.message ?? "")")
    }

    @Test func resolverGetInCallbackOfAChildResolvesFromTheChild() throws {
        let fx = try Fixture()
        let reg = try fx.register("A")
        try fx.register("B", label: "B@parent")
        let child = try fx.child()
        try fx.register("B", in: child, label: "B@child")
        fx.onComplete(reg) { r, _, obj in obj.got.append(try r.get(Key("B")).pointer) }
        let fromChild = try fx.resolve("A", in: child)
        #expect(Obj.at(Obj.of(fromChild).got[0]).label == "B@child")
        let fromParent = try fx.resolve("A")
        #expect(Obj.at(Obj.of(fromParent).got[0]).label == "B@parent")
    }
}
