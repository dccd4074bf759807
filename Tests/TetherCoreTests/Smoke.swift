// Basics: keys, one registration, one resolve, one release.
import Testing
import TetherCore

@Suite struct Smoke {
    @Test func keysAreInternedOnce() {
        let a = Key("Smoke.Logger")
        #expect(a == Key("Smoke.Logger"))
        #expect(a != Key("Smoke.Other"))
        #expect(a.name == "Smoke.Logger")
        #expect(a.quoted == "\"Smoke.Logger\"")
        #expect(KeyTable.shared.lookup("Smoke.Logger") == a)
        #expect(KeyTable.shared.lookup("Smoke.never interned \(#line)") == nil)
        #expect(Key(id: a.id) == a)
    }

    @Test func keyTableKeepsEveryNameThroughGrowth() {
        // Enough keys to grow the table several times; prefixes, non-ASCII and
        // the empty name must stay distinct and round-trip.
        let names = (0..<5_000).map { "Smoke.grow.\($0)" } + ["Smoke.grow.", "Smoke.grö", "Smoke.grö.Ω", ""]
        let keys = names.map(Key.init)
        #expect(Set(keys.map(\.id)).count == names.count)
        for (name, key) in zip(names, keys) {
            #expect(key.name == name)
            #expect(Key(name) == key)
            #expect(KeyTable.shared.lookup(name) == key)
            #expect(KeyTable.isValid(key.id))
        }
    }

    @Test func resolveMakesAndReleaseDestroys() throws {
        let fx = try Fixture()
        try fx.register("A")
        var a: Instance? = try fx.resolve("A")
        #expect(Obj.of(a!).label == "A")
        #expect(a!.key == Key("A"))
        #expect(fx.tracker.calls("A") == 1)
        #expect(fx.tracker.dropped("A") == 0)
        a = nil
        #expect(fx.tracker.dropped("A") == 1)
        #expect(fx.tracker.badDrops == 0)
    }

    @Test func missingTopLevelKey() throws {
        let fx = try Fixture()
        expectError(.notFound, "no registration for \"Nope\"") { try fx.resolve("Nope") }
    }

    @Test func contextSlotAndDestructorContext() throws {
        let fx = try Fixture()
        let context = UnsafeMutableRawPointer(bitPattern: 0x1234)!
        let seen = Box<UnsafeMutableRawPointer?>(nil)
        let r = try fx.container.register(Key("Ctx"), params: [.context], factory: ClosureFactory { words in
            Ref(retaining: Obj(label: "Ctx", words: words)).opaque
        }).registration
        r.setContext(context) { p, ctx in
            seen.value = ctx
            Ref<Obj>(opaque: p).release()
        }
        var c: Instance? = try fx.resolve("Ctx")
        #expect(Obj.of(c!).words == [UInt64(UInt(bitPattern: context))])
        #expect(r.spec.context == context)
        c = nil
        #expect(seen.value == context)
    }
}
