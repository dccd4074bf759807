// S1-S4 with Tether's core (TetherCore) through its Swift API: Container, Key, Param,
// Factory / Completion objects, Instance. Swift objects go into the container as retained
// opaque pointers; the registration's destructor releases them, as a C client's would free.
import TetherCore

// MARK: adapters a Swift client of the core writes once

/// The core asks a bridge for the words of weak/lazy/resolver slots; these scenarios only use
/// dependency slots (and a completion callback's resolver), so this one is never asked.
final class PlainBridge: SlotBridge, @unchecked Sendable {
    func weakWord(_ ref: WeakRef) -> UInt64 { UInt64(UInt(bitPattern: Unmanaged.passRetained(ref).toOpaque())) }
    func lazyWord(_ cell: LazyCell) throws(TetherError) -> UInt64 { throw TetherError(.invalidArgument, "no lazy slots here") }
    func resolverWord(_ resolver: Resolver) -> UInt64 { UInt64(UInt(bitPattern: Unmanaged.passUnretained(resolver).toOpaque())) }
    func closeResolver(_ word: UInt64) {}
    func recall(_ instances: [Instance]) {}
}

@inline(__always) func object<T: AnyObject>(_ word: UInt64, as: T.Type = T.self) -> T {
    Unmanaged<T>.fromOpaque(UnsafeRawPointer(bitPattern: UInt(word))!).takeUnretainedValue()
}
@inline(__always) func object<T: AnyObject>(_ pointer: UnsafeMutableRawPointer, as: T.Type = T.self) -> T {
    Unmanaged<T>.fromOpaque(pointer).takeUnretainedValue()
}
@inline(__always) func retained(_ o: AnyObject) -> UnsafeMutableRawPointer {
    Unmanaged.passRetained(o).toOpaque()
}

/// Releases the Swift object a registration's instance holds.
let releaseObject: Destructor = { pointer, _ in Unmanaged<AnyObject>.fromOpaque(pointer).release() }

/// A factory from a closure over the dependency words.
final class SwiftFactory: Factory, @unchecked Sendable {
    let body: (UnsafeMutablePointer<UInt64>) -> AnyObject
    init(_ body: @escaping (UnsafeMutablePointer<UInt64>) -> AnyObject) { self.body = body }
    func make(_ words: UnsafeMutablePointer<UInt64>, count: Int) throws(CallbackFailure) -> UnsafeMutableRawPointer {
        retained(body(words))
    }
}

final class SwiftCompletion: Completion, @unchecked Sendable {
    let body: (Resolver, Instance) throws(TetherError) -> Void
    init(_ body: @escaping (Resolver, Instance) throws(TetherError) -> Void) { self.body = body }
    func complete(_ resolver: Resolver, instance: Instance) throws(CallbackFailure) {
        do { try body(resolver, instance) } catch { throw CallbackFailure(reason: error.message, code: error.code) }
    }
}

extension Container {
    @discardableResult
    func add(_ key: String, _ deps: [String] = [], scope: Scope = .graph,
             _ body: @escaping (UnsafeMutablePointer<UInt64>) -> AnyObject) throws -> Registration {
        let (r, _) = try register(Key(key), params: deps.map { .dependency(Key($0)) }, factory: SwiftFactory(body))
        r.setScope(scope)
        r.setContext(nil, destructor: releaseObject)
        return r
    }
}

// MARK: the scenarios

/// The instance keeps the Swift object (and its graph) alive; the loop keeps the object in
/// `sink` until the next iteration, like the Swinject loop does.
@inline(__always) func resolveObject<T: AnyObject>(_ c: Container, _ key: Key, as: T.Type) throws -> T {
    let instance = try c.resolve(key)
    // take our own reference to the object before the instance (and its graph) may go
    return withExtendedLifetime(instance) { object(instance.pointer, as: T.self) }
}

func benchTether() -> Contender {
    var out = Contender(name: "Tether core")
    func run(_ id: String, _ body: () throws -> Void) {
        do { try body() } catch { out.cells[id] = Cell(ns: nil, note: "\(error)") }
    }

    // S1: transient chain A(B(C))
    run("S1") {
        let c = try Container(bridge: PlainBridge())
        try c.add("C", scope: .transient) { _ in C() }
        try c.add("B", ["C"], scope: .transient) { w in B(c: object(w[0])) }
        try c.add("A", ["B"], scope: .transient) { w in A(b: object(w[0])) }
        let key = Key("A")
        try checkS1(try resolveObject(c, key, as: A.self))
        var failure: Error?
        let ns = measure("S1") { n in
            for _ in 0..<n {
                do { consume(try resolveObject(c, key, as: A.self)) } catch { failure = error; return }
            }
        }
        if let failure { throw failure }
        out.cells["S1"] = Cell(ns: ns)
        try c.close()
    }

    // S2: singleton hit
    run("S2") {
        let c = try Container(bridge: PlainBridge())
        try c.add("Config", scope: .singleton) { _ in Config() }
        let key = Key("Config")
        let a = try resolveObject(c, key, as: Config.self), b = try resolveObject(c, key, as: Config.self)
        guard a === b else { throw CheckFailure(description: "S2: singleton not shared") }
        var failure: Error?
        let ns = measure("S2") { n in
            for _ in 0..<n {
                do { consume(try resolveObject(c, key, as: Config.self)) } catch { failure = error; return }
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
        let child = try c.add("Child") { _ in
            childFactoryCalls += 1
            return Child()
        }
        child.addCompletion(SwiftCompletion { (r, instance) throws(TetherError) in
            let ref = try r.getWeak(parentKey)
            guard let parent = ref.upgrade() else { throw TetherError(.expired, "the instance is gone") }
            withExtendedLifetime(parent) {
                object(instance.pointer, as: Child.self).parent = object(parent.pointer, as: Parent.self)
            }
        })
        try c.add("Parent", ["Child"]) { w in
            parentFactoryCalls += 1
            return Parent(child: object(w[0]))
        }
        parentFactoryCalls = 0; childFactoryCalls = 0
        let first = try resolveObject(c, parentKey, as: Parent.self)
        let calls = (parentFactoryCalls, childFactoryCalls)
        try checkS3(first)
        var failure: Error?
        let ns = measure("S3") { n in
            for _ in 0..<n {
                do { consume(try resolveObject(c, parentKey, as: Parent.self)) } catch { failure = error; return }
            }
        }
        if let failure { throw failure }
        out.cells["S3"] = Cell(ns: ns, note: "completion callback + weak edge; factories per resolve: Parent \(calls.0), Child \(calls.1)")
        try c.close()
    }

    // S4: 12-node layered graph, graph scope
    run("S4") {
        let c = try Container(bridge: PlainBridge())
        try c.add("Log") { _ in Log() }
        try c.add("Cfg") { _ in Cfg() }
        try c.add("Pool") { _ in Pool() }
        try c.add("Clock") { _ in Clock() }
        try c.add("Repo1", ["Log", "Cfg"]) { w in Repo1(log: object(w[0]), cfg: object(w[1])) }
        try c.add("Repo2", ["Log", "Pool"]) { w in Repo2(log: object(w[0]), pool: object(w[1])) }
        try c.add("Repo3", ["Cfg", "Clock", "Log"]) { w in Repo3(cfg: object(w[0]), clock: object(w[1]), log: object(w[2])) }
        try c.add("Repo4", ["Pool", "Clock"]) { w in Repo4(pool: object(w[0]), clock: object(w[1])) }
        try c.add("Svc1", ["Repo1", "Repo2"]) { w in Svc1(r1: object(w[0]), r2: object(w[1])) }
        try c.add("Svc2", ["Repo2", "Repo3"]) { w in Svc2(r2: object(w[0]), r3: object(w[1])) }
        try c.add("Svc3", ["Repo3", "Repo4"]) { w in Svc3(r3: object(w[0]), r4: object(w[1])) }
        try c.add("App", ["Svc1", "Svc2", "Svc3"]) { w in App(s1: object(w[0]), s2: object(w[1]), s3: object(w[2])) }
        let key = Key("App")
        try checkS4(try resolveObject(c, key, as: App.self))
        var failure: Error?
        let ns = measure("S4") { n in
            for _ in 0..<n {
                do { consume(try resolveObject(c, key, as: App.self)) } catch { failure = error; return }
            }
        }
        if let failure { throw failure }
        out.cells["S4"] = Cell(ns: ns)
        try c.close()
    }
    return out
}
