// Swift objects as instances (`ObjectFactory`, `ObjectCompletion`, `resolve(_:as:)`):
// with a plan of plain objects the resolve makes no instances, so what must hold is
// that ARC alone gives the same graph: each factory once, shared nodes shared, weak
// back-references to the same object, every object freed once when nothing holds it,
// failures freeing what was made (the same results with plans off until branch noplansoff).
import Testing
import TetherCore

/// Counts objects made and freed per label (one per test: tests run in parallel).
private final class Census: @unchecked Sendable {
    private let state = Lock<(made: [String: Int], freed: [String: Int])>(([:], [:]))
    func make(_ label: String) { state.withLock { $0.made[label, default: 0] += 1 } }
    func free(_ label: String) { state.withLock { $0.freed[label, default: 0] += 1 } }
    func made(_ label: String) -> Int { state.withLock { $0.made[label] ?? 0 } }
    func freed(_ label: String) -> Int { state.withLock { $0.freed[label] ?? 0 } }
    var live: Int { state.withLock { $0.made.values.reduce(0, +) - $0.freed.values.reduce(0, +) } }
}

/// A node holding its dependencies strongly and one weak back-reference.
private final class Node {
    let label: String
    let deps: [Node]
    weak var back: Node?
    let census: Census
    init(_ label: String, _ deps: [Node], _ census: Census) {
        self.label = label
        self.deps = deps
        self.census = census
        census.make(label)
    }
    deinit { census.free(label) }
}

/// Makes a `Node` from every dependency param (or, `takes` false, ignores them); `fails` throws instead.
private final class MakeNode: ObjectFactory, @unchecked Sendable {
    let label: String, census: Census, takes: Bool, fails: Bool
    init(_ label: String, _ census: Census, takes: Bool = true, fails: Bool = false) {
        self.label = label
        self.census = census
        self.takes = takes
        self.fails = fails
    }
    override func make(_ arguments: ObjectArguments) throws(CallbackFailure) -> AnyObject {
        if fails { throw CallbackFailure(reason: "\(label) refused") }
        return Node(label, takes ? (0..<arguments.count).map { arguments.object($0, as: Node.self) } : [], census)
    }
}

/// Sets the completed node's weak back-reference to its target; `fails` throws instead.
private final class LinkBack: ObjectCompletion, @unchecked Sendable {
    let fails: Bool
    init(_ param: Param, fails: Bool = false) {
        self.fails = fails
        super.init(params: [param])
    }
    override func complete(_ object: AnyObject, with arguments: ObjectArguments) throws(CallbackFailure) {
        if fails { throw CallbackFailure(reason: "no link") }
        arguments.withObject(0, as: Node.self) { (object as! Node).back = $0 }
    }
}

@Suite struct ObjectFactoryTests {
    private let census = Census()

    @discardableResult
    private func add(_ c: Container, _ key: String, _ deps: [String] = [], scope: Scope = .graph,
                     takes: Bool = true, fails: Bool = false) throws -> Registration {
        let r = try c.register(Key(key), params: deps.map(dep), factory: MakeNode(key, census, takes: takes, fails: fails)).registration
        try r.setScope(scope)
        return r
    }

    private func container() throws -> Container {
        try Container(bridge: TestBridge())
    }

    @Test func chainIsBuiltOnceAndFreedWithItsRoot() throws {
        let c = try container()
        try add(c, "C", scope: .transient)
        try add(c, "B", ["C"], scope: .transient)
        try add(c, "A", ["B"], scope: .transient)
        var a: Node? = try c.resolve(Key("A"), as: Node.self)
        #expect(a!.label == "A" && a!.deps[0].label == "B" && a!.deps[0].deps[0].label == "C")
        #expect(census.made("A") == 1 && census.made("B") == 1 && census.made("C") == 1)
        #expect(census.live == 3, "the container keeps nothing of a transient chain")
        let second = try c.resolve(Key("A"), as: Node.self)
        #expect(second !== a && second.deps[0] !== a!.deps[0])
        a = nil
        #expect(census.freed("A") == 1 && census.freed("B") == 1 && census.freed("C") == 1)
        #expect(c.registration(for: Key("A"))!.hasCurrentPlan)
    }

    @Test func graphScopedNodeIsSharedWithinOneResolve() throws {
        let c = try container()
        try add(c, "D")
        try add(c, "B", ["D"])
        try add(c, "C", ["D"])
        try add(c, "A", ["B", "C"], scope: .transient)
        var a: Node? = try c.resolve(Key("A"), as: Node.self)
        #expect(a!.deps[0].deps[0] === a!.deps[1].deps[0])
        #expect(census.made("D") == 1)
        let other = try c.resolve(Key("A"), as: Node.self)
        #expect(other.deps[0].deps[0] !== a!.deps[0].deps[0], "one D per resolve")
        a = nil
        #expect(census.freed("D") == 1 && census.live == 4)
    }

    @Test func cachedSingletonIsTheSameObjectAndOutlivesTheGraph() throws {
        let c = try container()
        try add(c, "S", scope: .singleton)
        try add(c, "A", ["S"], scope: .transient)
        let s = try c.resolve(Key("S"), as: Node.self)
        var a: Node? = try c.resolve(Key("A"), as: Node.self)
        let again = try c.resolve(Key("S"), as: Node.self)
        #expect(a!.deps[0] === s && again === s)
        a = nil
        #expect(census.freed("A") == 1 && census.freed("S") == 0)
        c.reset(.singleton)
        #expect(census.freed("S") == 0, "still held here")
        _ = consume s
        _ = consume again
        #expect(census.freed("S") == 1)
    }

    /// S3's shape: Parent(child), Child's completion takes a weak reference to the same Parent.
    @Test func completionGetsTheParentOfTheSameGraph() throws {
        let c = try container()
        try add(c, "Child").addCompletion(LinkBack(weakDep("Parent")))
        try add(c, "Parent", ["Child"])
        var parent: Node? = try c.resolve(Key("Parent"), as: Node.self)
        #expect(parent!.deps[0].back === parent)
        #expect(census.made("Parent") == 1 && census.made("Child") == 1, "each factory once")
        let again = try c.resolve(Key("Parent"), as: Node.self)
        #expect(again.deps[0].back === again && again !== parent)
        parent = nil
        #expect(census.freed("Parent") == 1 && census.freed("Child") == 1, "a weak back-reference keeps nothing")
    }

    @Test func completionTargetOutsideTheGraphIsBuiltByTheGraph() throws {
        let c = try container()
        try add(c, "Peer", scope: .singleton)
        try add(c, "Child").addCompletion(LinkBack(weakDep("Peer")))
        try add(c, "Parent", ["Child"])
        let parent = try c.resolve(Key("Parent"), as: Node.self)
        let peer = try c.resolve(Key("Peer"), as: Node.self)
        #expect(parent.deps[0].back === peer && census.made("Peer") == 1)
        // Now cached: a plan can take it, and the next resolve makes no instance.
        let next = try c.resolve(Key("Parent"), as: Node.self)
        #expect(next.deps[0].back === peer && census.made("Peer") == 1)
    }

    @Test func strongCompletionTargetIsAnEdgeOfTheInstance() throws {
        let c = try container()
        let child = try add(c, "Child")
        child.addCompletion(LinkBack(dep("Log")))
        try add(c, "Log", scope: .transient)
        try add(c, "Parent", ["Child"])
        var parent: Instance? = try c.resolve(Key("Parent"))
        Ref<Node>(opaque: parent!.pointer).borrow { node in
            #expect(node.deps[0].back?.label == "Log", "the instance's strong edge keeps Log")
        }
        #expect(child.observedEdges.contains { $0.target == Key("Log") && !$0.isWeak })
        parent = nil
        #expect(census.live == 0)
    }

    @Test func failingFactoryFreesWhatWasMade() throws {
        let c = try container()
        try add(c, "C")
        try add(c, "B", ["C"], fails: true)
        try add(c, "A", ["B"])
        expectError(.factoryFailed, "\"B\"", "B refused") { try c.resolve(Key("A"), as: Node.self) }
        #expect(census.made("C") == 1 && census.freed("C") == 1 && census.made("A") == 0)
    }

    @Test func failingCompletionFreesTheGraph() throws {
        let c = try container()
        try add(c, "Child").addCompletion(LinkBack(weakDep("Parent"), fails: true))
        try add(c, "Parent", ["Child"])
        expectError(.factoryFailed, "completion callback #1 of \"Child\"", "no link") { try c.resolve(Key("Parent"), as: Node.self) }
        #expect(census.made("Parent") == 1 && census.live == 0)
    }

    @Test func dependencyNobodyTookIsReleased() throws {
        let c = try container()
        try add(c, "C")
        try add(c, "A", ["C"], takes: false)
        let a = try c.resolve(Key("A"), as: Node.self)
        #expect(a.deps.isEmpty && census.made("C") == 1 && census.freed("C") == 1)
    }

    @Test func instanceOfAnObjectRegistrationIsTheObject() throws {
        let c = try container()
        try add(c, "C", scope: .transient)
        try add(c, "A", ["C"], scope: .transient)
        var instance: Instance? = try c.resolve(Key("A"))
        var a: Node? = Ref<Node>(opaque: instance!.pointer).object
        #expect(a!.deps[0].label == "C")
        instance = nil
        #expect(census.freed("A") == 0, "the caller's own reference keeps it")
        a = nil
        #expect(census.live == 0)
    }

    @Test func clientDestructorRunsBeforeTheRelease() throws {
        let c = try container()
        let ran = Box(0)
        try add(c, "C", scope: .transient)
        try add(c, "A", ["C"], scope: .transient).setContext(nil) { pointer, _ in
            #expect(Ref<Node>(opaque: pointer).object.label == "A")
            ran.value += 1
        }
        var a: Node? = try c.resolve(Key("A"), as: Node.self)
        #expect(ran.value == 1 && census.freed("A") == 0, "made as an instance, which let go of it")
        a = nil
        #expect(census.live == 0 && ran.value == 1)
    }

    @Test func threadsResolvingWhileTheSingletonIsResetFreeEverythingOnce() throws {
        let c = try container()
        try add(c, "S", scope: .singleton)
        try add(c, "B", ["S"])
        try add(c, "A", ["B", "S"], scope: .transient)
        _ = try c.resolve(Key("S"), as: Node.self)
        let failures = Box(0)
        onThreads(3) { t in
            for _ in 0..<2_000 {
                if t == 2 { c.reset(.singleton); continue }
                guard let a = try? c.resolve(Key("A"), as: Node.self), a.deps[0].deps[0] === a.deps[1] else {
                    failures.value += 1
                    continue
                }
            }
        }
        #expect(failures.value == 0, "one S per graph, even while it is reset")
        c.reset(.singleton)
        #expect(census.live == 0 && census.made("A") == 4_000 && census.made("S") >= 1)
    }

    @Test func misuseIsReported() throws {
        let c = try container()
        try add(c, "A")
        expectError(.invalidArgument, "\"A\"", "Census") { try c.resolve(Key("A"), as: Census.self) }
        #expect(census.live == 0, "the object made for a wrong type is freed")
        expectError(.notFound, "\"Nope\"") { try c.resolve(Key("Nope"), as: Node.self) }
        try add(c, "W", scope: .weak)
        expectError(.invalidArgument, "weak scope", "resolve(_:)") { try c.resolve(Key("W"), as: Node.self) }
        expectError(.invalidArgument, ".dependency") {
            try c.register(Key("L"), params: [lazyDep("A")], factory: MakeNode("L", census))
        }
        try c.register(Key("Plain"), params: [], factory: ClosureFactory { _ in UnsafeMutableRawPointer(bitPattern: 16) })
        expectError(.invalidArgument, "ObjectFactory") { try c.resolve(Key("Plain"), as: Node.self) }
        // An object's completion aimed at something that is not an object fails the resolve, never reads it.
        try add(c, "Child").addCompletion(LinkBack(weakDep("Plain")))
        try add(c, "Parent", ["Child"])
        expectError(.factoryFailed, "ObjectFactory registrations only") { try c.resolve(Key("Parent"), as: Node.self) }
        #expect(census.made("Parent") == 1 && census.live == 0)
    }
}
