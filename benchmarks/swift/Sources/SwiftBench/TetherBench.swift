// S1-S4 with Tether's core (TetherCore) through its Swift API: Container, Key, Param,
// ObjectFactory / ObjectCompletion subclasses, resolve(_:as:). The instances are the Swift
// objects themselves: the container builds the graph from its plan and hands over the root
// object; ARC keeps the rest (see TetherCore/ObjectFactory.swift).
import TetherCore

// MARK: what a Swift client of the core writes

/// The core asks a bridge for the words of weak/lazy/resolver slots of C-style
/// factories; object factories have none, so this one is never asked.
final class PlainBridge: SlotBridge, @unchecked Sendable {
    func weakWord(_ ref: WeakRef) -> UInt64 { UInt64(Ref(retaining: ref).word) }
    func lazyWord(_ cell: LazyCell) throws(TetherError) -> UInt64 { throw TetherError(.invalidArgument, "no lazy slots here") }
    func resolverWord(_ resolver: Resolver) -> UInt64 { UInt64(Ref(unretained: resolver).word) }
    func factoryWord(_ cell: FactoryCell) -> UInt64 { UInt64(Ref(retaining: cell).word) }
    func closeResolver(_ word: UInt64) {}
    func recall(_ instances: [Instance]) {}
}

final class MakeC: ObjectFactory { override func make(_ a: ObjectArguments) -> AnyObject { C() } }
final class MakeB: ObjectFactory { override func make(_ a: ObjectArguments) -> AnyObject { B(c: a.object(0)) } }
final class MakeA: ObjectFactory { override func make(_ a: ObjectArguments) -> AnyObject { A(b: a.object(0)) } }

final class MakeChild: ObjectFactory {
    override func make(_ a: ObjectArguments) -> AnyObject {
        childFactoryCalls += 1
        return Child()
    }
}
final class MakeParent: ObjectFactory {
    override func make(_ a: ObjectArguments) -> AnyObject {
        parentFactoryCalls += 1
        return Parent(child: a.object(0))
    }
}
/// Child's completion: its declared weak target is the Parent of the same graph.
final class LinkParent: ObjectCompletion {
    init(_ parent: Key) { super.init(params: [.weak(parent)]) }
    override func complete(_ object: AnyObject, with a: ObjectArguments) {
        a.withObject(0) { unsafeDowncast(object, to: Child.self).parent = $0 }
    }
}

/// S4's twelve factories as closures (S4 is not a target; S1 and S3 subclass `ObjectFactory` directly).
final class Make: ObjectFactory {
    let body: (ObjectArguments) -> AnyObject
    init(_ body: @escaping (ObjectArguments) -> AnyObject) { self.body = body }
    override func make(_ a: ObjectArguments) -> AnyObject { body(a) }
}

extension Container {
    @discardableResult
    func add(_ key: String, _ deps: [String], scope: Scope = .graph, _ factory: ObjectFactory) throws -> Registration {
        let (r, _) = try register(Key(key), params: deps.map { .dependency(Key($0)) }, factory: factory)
        try r.setScope(scope)
        return r
    }
}

// MARK: the scenarios

func benchTether() -> Contender {
    var out = Contender(name: "Tether core")
    func run(_ id: String, _ body: () throws -> Void) {
        do { try body() } catch { out.cells[id] = Cell(ns: nil, note: "\(error)") }
    }

    // S1: transient chain A(B(C))
    run("S1") {
        let c = try Container(bridge: PlainBridge())
        try c.add("C", [], scope: .transient, MakeC())
        try c.add("B", ["C"], scope: .transient, MakeB())
        try c.add("A", ["B"], scope: .transient, MakeA())
        let key = Key("A")
        try checkS1(try c.resolve(key, as: A.self))
        var failure: Error?
        let ns = measure("S1") { n in
            for _ in 0..<n {
                do { consume(try c.resolve(key, as: A.self)) } catch { failure = error; return }
            }
        }
        if let failure { throw failure }
        out.cells["S1"] = Cell(ns: ns)
        try c.close()
    }

    // S2: singleton hit
    run("S2") {
        let c = try Container(bridge: PlainBridge())
        try c.add("Config", [], scope: .singleton, Make { _ in Config() })
        let key = Key("Config")
        let a = try c.resolve(key, as: Config.self), b = try c.resolve(key, as: Config.self)
        guard a === b else { throw CheckFailure(description: "S2: singleton not shared") }
        var failure: Error?
        let ns = measure("S2") { n in
            for _ in 0..<n {
                do { consume(try c.resolve(key, as: Config.self)) } catch { failure = error; return }
            }
        }
        if let failure { throw failure }
        out.cells["S2"] = Cell(ns: ns)
        try c.close()
    }

    // S3: Parent/Child cycle, graph scope; Child's completion callback takes a weak edge back to
    // Parent (Resolver.getWeak) and sets the Swift weak reference from it.
    run("S3") {
        let c = try Container(bridge: PlainBridge())
        let parentKey = Key("Parent")
        try c.add("Child", [], MakeChild()).addCompletion(LinkParent(parentKey))
        try c.add("Parent", ["Child"], MakeParent())
        parentFactoryCalls = 0; childFactoryCalls = 0
        let first = try c.resolve(parentKey, as: Parent.self)
        let calls = (parentFactoryCalls, childFactoryCalls)
        try checkS3(first)
        var failure: Error?
        let ns = measure("S3") { n in
            for _ in 0..<n {
                do { consume(try c.resolve(parentKey, as: Parent.self)) } catch { failure = error; return }
            }
        }
        if let failure { throw failure }
        out.cells["S3"] = Cell(ns: ns, note: "ObjectCompletion with a declared weak target (the same Parent); factories per resolve: Parent \(calls.0), Child \(calls.1)")
        try c.close()
    }

    // S4: 12-node layered graph, graph scope
    run("S4") {
        let c = try Container(bridge: PlainBridge())
        try c.add("Log", [], Make { _ in Log() })
        try c.add("Cfg", [], Make { _ in Cfg() })
        try c.add("Pool", [], Make { _ in Pool() })
        try c.add("Clock", [], Make { _ in Clock() })
        try c.add("Repo1", ["Log", "Cfg"], Make { a in Repo1(log: a.object(0), cfg: a.object(1)) })
        try c.add("Repo2", ["Log", "Pool"], Make { a in Repo2(log: a.object(0), pool: a.object(1)) })
        try c.add("Repo3", ["Cfg", "Clock", "Log"], Make { a in Repo3(cfg: a.object(0), clock: a.object(1), log: a.object(2)) })
        try c.add("Repo4", ["Pool", "Clock"], Make { a in Repo4(pool: a.object(0), clock: a.object(1)) })
        try c.add("Svc1", ["Repo1", "Repo2"], Make { a in Svc1(r1: a.object(0), r2: a.object(1)) })
        try c.add("Svc2", ["Repo2", "Repo3"], Make { a in Svc2(r2: a.object(0), r3: a.object(1)) })
        try c.add("Svc3", ["Repo3", "Repo4"], Make { a in Svc3(r3: a.object(0), r4: a.object(1)) })
        try c.add("App", ["Svc1", "Svc2", "Svc3"], Make { a in App(s1: a.object(0), s2: a.object(1), s3: a.object(2)) })
        let key = Key("App")
        try checkS4(try c.resolve(key, as: App.self))
        var failure: Error?
        let ns = measure("S4") { n in
            for _ in 0..<n {
                do { consume(try c.resolve(key, as: App.self)) } catch { failure = error; return }
            }
        }
        if let failure { throw failure }
        out.cells["S4"] = Cell(ns: ns)
        try c.close()
    }
    return out
}
