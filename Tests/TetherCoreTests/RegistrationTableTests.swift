// A container's registration table grows on demand (an empty container holds
// nothing): every key stays findable through growth, from the container and its
// children, and readers racing a growth never miss a key registered before.
import Synchronization
import Testing
import TetherCore

@Suite struct RegistrationTableTests {
    @Test func everyKeyStaysFindableAsTheTableGrows() throws {
        let fx = try Fixture()
        let child = try fx.child()
        // Fresh key names: their ids are the newest, so they spread over new chunks
        // and groups (1,024 ids each) and make the top level grow several times.
        let names = (0..<3000).map { "table.grow.\($0)" }
        for name in names { try fx.register(name, scope: .transient) }
        for name in names {
            #expect(Obj.of(try fx.resolve(name)).label == name)
            #expect(Obj.of(try fx.resolve(name, in: child)).label == name)
        }
        expectError(.notFound, "no registration for \"table.grow.never\"") { try fx.resolve("table.grow.never") }
        #expect(fx.container.visibleRegistrations().count == names.count)
        try child.close()
        let closed = try fx.container.close()
        #expect(closed.count == names.count)
    }

    /// Walks visit each stored registration once: replaced ones are not listed, and
    /// keys in one chunk and in chunks far apart are all found, in key id order.
    @Test func closeListsEachStoredRegistrationOnce() throws {
        let fx = try Fixture()
        let names = (0..<70).map { "table.walk.\($0)" } + ["table.walk.far"]
        _ = (0..<2000).map { Key("table.walk.gap.\($0)") }  // "far" lands in another chunk and group
        var latest: [ObjectIdentifier] = []
        for name in names { try fx.register(name, scope: .transient) }
        for name in names where name.hasSuffix("5") { try fx.register(name, scope: .transient, label: "again") }
        for name in names { latest.append(ObjectIdentifier(fx.container.registration(for: Key(name))!)) }
        let closed = try fx.container.close()
        #expect(closed.map { $0.key.name } == names)
        #expect(closed.map(ObjectIdentifier.init) == latest)
    }

    @Test func readersRacingGrowthFindEarlierKeys() throws {
        let fx = try Fixture()
        try fx.register("table.race.first", scope: .transient)
        let names = (0..<2000).map { "table.race.\($0)" }
        _ = names.map(Key.init)  // interned up front: growth comes from registering only
        let done = Atomic<Bool>(false)
        let misses = Atomic<Int>(0)
        let container = fx.container
        let fixture = fx
        onThreads(2) { i in
            if i == 0 {
                for name in names { _ = try? fixture.register(name, scope: .transient) }
                done.store(true, ordering: .releasing)
            } else {
                var rounds = 0
                while !done.load(ordering: .acquiring) || rounds < 100 {
                    if container.registration(for: Key("table.race.first")) == nil { misses.add(1, ordering: .relaxed) }
                    rounds += 1
                }
            }
        }
        #expect(misses.load(ordering: .relaxed) == 0)
        #expect(names.allSatisfy { fx.container.registration(for: Key($0)) != nil })
    }
}
