// Test support: plain-Swift implementations of the core's client protocols
// (SlotBridge, Factory, Completion), test objects whose factories and
// destructors are counted, and a per-test fixture. Every test makes its own
// Fixture, so tests can run in parallel.
import Foundation
import Synchronization
import Testing
@testable import TetherCore

// MARK: - SlotBridge

/// Makes slot words with plain Swift tables instead of handles and libffi closures.
/// - weak slot: the WeakRef is kept in a table; the word is its index + 1 (never 0).
/// - lazy slot: the word is the LazyCell's index in a table. The table holds cells
///   *weakly*: in the ABI the provider trampoline is lent to the cell (`cell.attachment`), i.e. the
///   cell's lifetime is the dependent instance's, and a strong table here would keep
///   every lazily resolved instance alive and hide exactly what the lazy tests check.
/// - resolver slot: the word is a key in a table of open resolvers; `closeResolver`
///   removes it.
final class TestBridge: SlotBridge, @unchecked Sendable {
    private final class CellBox { weak var cell: LazyCell?; init(_ c: LazyCell) { cell = c } }
    private struct State {
        var weaks: [WeakRef] = []
        var cells: [CellBox] = []
        var resolvers: [UInt64: Resolver] = [:]
        var factories: [FactoryCell] = []
        var nextResolver: UInt64 = 1
        var closedResolvers = 0
        var recalled: [Key] = []
        var barriers = 0
        var barriersBeforeRecall: [Int] = []
        var retired: [AnyObject] = []
        var retiredEver = 0
    }
    private let state = Lock(State())
    /// Whether replaced plans are retired (kept in `retired` until the test says no resolve is under
    /// way: `releaseRetired`), as the ABI's bridge retires them to its reclaimer; off, the core keeps them.
    let retiring: Bool

    init(retiring: Bool = false) { self.retiring = retiring }

    var retiresReplaced: Bool { retiring }

    func retire(_ replaced: AnyObject) {
        state.withLock { s in
            s.retired.append(replaced)
            s.retiredEver += 1
        }
    }

    /// Lets go of what was retired (the caller: no resolve is under way), returning how many.
    @discardableResult
    func releaseRetired() -> Int {
        let retired = state.withLock { s in
            defer { s.retired = [] }
            return s.retired
        }
        return retired.count
    }
    var retiredEver: Int { state.withLock { $0.retiredEver } }

    func weakWord(_ ref: WeakRef) -> UInt64 {
        state.withLock { s in
            s.weaks.append(ref)
            return UInt64(s.weaks.count)  // index + 1
        }
    }

    func lazyWord(_ cell: LazyCell) throws(TetherError) -> UInt64 {
        state.withLock { s in
            s.cells.append(CellBox(cell))
            return UInt64(s.cells.count - 1)
        }
    }

    func resolverWord(_ resolver: Resolver) -> UInt64 {
        state.withLock { s in
            let word = s.nextResolver
            s.nextResolver += 1
            s.resolvers[word] = resolver
            return word
        }
    }

    /// Factory slot: the word is the cell's index in a table that keeps it.
    func factoryWord(_ cell: FactoryCell) -> UInt64 {
        state.withLock { s in
            s.factories.append(cell)
            return UInt64(s.factories.count - 1)
        }
    }

    func factoryCell(_ word: UInt64) -> FactoryCell { state.withLock { $0.factories[Int(word)] } }

    func closeResolver(_ word: UInt64) {
        state.withLock { s in
            if s.resolvers.removeValue(forKey: word) != nil { s.closedResolvers += 1 }
        }
    }

    /// Records which lent singletons the core handed over (the ABI keeps them
    /// until their loans are released), and how many barriers came before.
    func recall(_ instances: [Instance]) {
        state.withLock { s in
            s.recalled += instances.map(\.key)
            s.barriersBeforeRecall.append(s.barriers)
        }
    }

    /// Counts the unpublisher's barriers (the ABI: membarrier or a fence).
    func unpublishBarrier() {
        atomicMemoryFence(ordering: .sequentiallyConsistent)
        state.withLock { $0.barriers += 1 }
    }

    var recalledKeys: [Key] { state.withLock { $0.recalled } }
    var unpublishBarriers: Int { state.withLock { $0.barriers } }
    /// For each `recall`, the number of `unpublishBarrier` calls before it.
    var barriersBeforeRecall: [Int] { state.withLock { $0.barriersBeforeRecall } }

    // Lookups for tests and test factories.
    func weak(_ word: UInt64) -> WeakRef {
        state.withLock { s in s.weaks[Int(word) - 1] }
    }
    /// The lazy cell of `word`, nil once it was freed (with its dependent instance).
    func cell(_ word: UInt64) -> LazyCell? {
        state.withLock { s in s.cells[Int(word)].cell }
    }
    func resolver(_ word: UInt64) -> Resolver? {
        state.withLock { s in s.resolvers[word] }
    }
    var weakCount: Int { state.withLock { $0.weaks.count } }
    var openResolvers: Int { state.withLock { $0.resolvers.count } }
    var closedResolvers: Int { state.withLock { $0.closedResolvers } }
}

// MARK: - Factory / Completion from closures

extension CallbackFailure {
    /// Any error a test closure throws, as the core's callback failure.
    static func from(_ error: any Error) -> CallbackFailure {
        if let failure = error as? CallbackFailure { return failure }
        if let tether = error as? TetherError { return CallbackFailure(reason: tether.message, code: tether.code) }
        return CallbackFailure(reason: "\(error)")
    }
}

/// A factory from a Swift closure over the slot words; nil means "returned NULL".
final class ClosureFactory: Factory, @unchecked Sendable {
    private let body: ([UInt64]) throws -> UnsafeMutableRawPointer?

    init(_ body: @escaping ([UInt64]) throws -> UnsafeMutableRawPointer?) { self.body = body }

    override func make(_ words: UnsafeMutablePointer<UInt64>, count: Int) throws(CallbackFailure) -> UnsafeMutableRawPointer {
        let array = Array(UnsafeBufferPointer(start: words, count: count))
        let result: UnsafeMutableRawPointer?
        do { result = try body(array) } catch { throw CallbackFailure.from(error) }
        guard let result else { throw CallbackFailure(reason: nil) }
        return result
    }
}

/// A completion callback from a Swift closure; thrown errors fail it.
final class ClosureCompletion: Completion, @unchecked Sendable {
    private let body: (Resolver, Instance) throws -> Void

    init(_ body: @escaping (Resolver, Instance) throws -> Void) { self.body = body }

    func complete(_ resolver: Resolver, instance: Instance) throws(CallbackFailure) {
        do { try body(resolver, instance) } catch { throw CallbackFailure.from(error) }
    }
}

// MARK: - Counting

/// Counts factory calls, creations, destructor runs and completions per label, and
/// keeps an event log ("make A", "complete A", "drop A", ...). Thread-safe.
final class Tracker: Sendable {
    private struct State {
        var calls: [String: Int] = [:]
        var made: [String: Int] = [:]
        var dropped: [String: Int] = [:]
        var log: [String] = []
        var live: Set<UInt> = []
        var badDrops = 0  // destructor for a pointer not live: a double destruction
    }
    private let state = Lock(State())

    func called(_ label: String) { state.withLock { $0.calls[label, default: 0] += 1 } }

    func made(_ label: String, _ p: UnsafeMutableRawPointer) {
        state.withLock { s in
            s.made[label, default: 0] += 1
            s.live.insert(UInt(bitPattern: p))
            s.log.append("make \(label)")
        }
    }

    func dropped(_ label: String, _ p: UnsafeMutableRawPointer) {
        state.withLock { s in
            s.dropped[label, default: 0] += 1
            if s.live.remove(UInt(bitPattern: p)) == nil { s.badDrops += 1 }
            s.log.append("drop \(label)")
        }
    }

    func note(_ event: String) { state.withLock { $0.log.append(event) } }

    func calls(_ label: String) -> Int { state.withLock { $0.calls[label] ?? 0 } }
    func made(_ label: String) -> Int { state.withLock { $0.made[label] ?? 0 } }
    func dropped(_ label: String) -> Int { state.withLock { $0.dropped[label] ?? 0 } }
    var log: [String] { state.withLock { $0.log } }
    /// Events starting with `prefix` ("make ", "drop ", "complete ").
    func events(_ prefix: String) -> [String] { log.filter { $0.hasPrefix(prefix) } }
    var liveCount: Int { state.withLock { $0.live.count } }
    /// Whether the object at `p` was made and not destroyed yet.
    func isLive(_ p: UnsafeMutableRawPointer) -> Bool { state.withLock { $0.live.contains(UInt(bitPattern: p)) } }
    var badDrops: Int { state.withLock { $0.badDrops } }
}

// MARK: - Test objects

/// What every test factory makes: remembers its label and the words it received.
/// Tests may hang more state on it (what a C object would store in its fields).
final class Obj: @unchecked Sendable {
    let label: String
    let words: [UInt64]
    /// Raw pointers taken strongly by callbacks (a C object's `got` field).
    var got: [UnsafeMutableRawPointer] = []
    /// Weak references taken by callbacks.
    var weaks: [WeakRef] = []
    var cell: LazyCell?

    init(label: String, words: [UInt64]) {
        self.label = label
        self.words = words
    }

    var pointer: UnsafeMutableRawPointer { Ref(unretained: self).opaque }

    static func at(_ pointer: UnsafeMutableRawPointer) -> Obj {
        Ref<Obj>(opaque: pointer).object
    }
    static func of(_ instance: Instance) -> Obj { at(instance.pointer) }

    /// The object tree below this one by labels, `A(B,C(D))`, through the words that hold objects (the
    /// dependency slots); `withEdges`: with what callbacks took too, strongly (`+X`) and weakly (`~X`, `~gone`).
    func tree(withEdges: Bool = false) -> String {
        var parts = words.compactMap { word -> String? in
            guard word > 0x1000, let p = UnsafeMutableRawPointer(bitPattern: UInt(word)) else { return nil }
            return Obj.at(p).tree(withEdges: withEdges)
        }
        if withEdges {
            parts += got.map { "+" + Obj.at($0).label }
            parts += weaks.map { "~" + ($0.upgrade().map { Obj.of($0).label } ?? "gone") }
        }
        return parts.isEmpty ? label : "\(label)(\(parts.joined(separator: ",")))"
    }

    /// The object a strong dependency slot received.
    func dep(_ slot: Int) -> Obj { Obj.at(UnsafeMutableRawPointer(bitPattern: UInt(words[slot]))!) }
    func depPointer(_ slot: Int) -> UnsafeMutableRawPointer { UnsafeMutableRawPointer(bitPattern: UInt(words[slot]))! }
}

/// A thread-safe switch and value box for test closures.
final class Box<T>: @unchecked Sendable {
    private let lock = NSLock()
    private var _value: T
    init(_ value: T) { _value = value }
    /// Reads, writes and in-place mutations (`+=`, `append`, subscripts) happen under the lock.
    var value: T {
        get { lock.lock(); defer { lock.unlock() }; return _value }
        set { lock.lock(); defer { lock.unlock() }; _value = newValue }
        _modify { lock.lock(); defer { lock.unlock() }; yield &_value }
    }
    /// What `Synchronization.Mutex` offers, under a lock ThreadSanitizer sees: `Mutex` waits on a futex directly,
    /// which TSan does not model, so two threads' turns under it are reported as a race (`make test-swift-tsan`).
    func withLock<R>(_ body: (inout T) throws -> R) rethrows -> R { lock.lock(); defer { lock.unlock() }; return try body(&_value) }
}

// MARK: - Fixture

/// One container (and its bridge and tracker) per test.
final class Fixture: @unchecked Sendable {
    let tracker = Tracker()
    let bridge: TestBridge
    let container: Container

    /// `retiring`: the bridge retires replaced plans (`TestBridge.retiring`).
    init(retiring: Bool = false) throws {
        bridge = TestBridge(retiring: retiring)
        container = try Container(bridge: bridge)
    }

    func child(of parent: Container? = nil) throws -> Container {
        try Container(parent: parent ?? container, bridge: bridge)
    }

    /// Whether `registration` is one of this fixture's (its containers share `bridge`). A test hook
    /// (`Graph.setBeforeClaimingCreations` and the like) is process-wide and sees the resolves of every
    /// test running meanwhile (Swift Testing runs suites in parallel), of keys named alike too.
    func owns(_ registration: Registration) -> Bool { registration.container.bridge === bridge }

    /// Registers `key` with a counted factory that makes an `Obj`. `label` names it in
    /// the tracker (default: the key); `body` runs inside the factory after the object
    /// exists and may fail it by throwing.
    @discardableResult
    func register(_ key: String, _ params: [Param] = [], scope: Scope = .graph, in target: Container? = nil,
                  label: String? = nil, context: UnsafeMutableRawPointer? = nil,
                  body: ((Obj) throws -> Void)? = nil) throws -> Registration {
        let label = label ?? key
        let tracker = tracker
        let factory = ClosureFactory { words in
            tracker.called(label)
            let obj = Obj(label: label, words: words)
            try body?(obj)
            let p = Ref(retaining: obj).opaque
            tracker.made(label, p)
            return p
        }
        return try (target ?? container).register(Key(key), params: params, factory: factory) { (registration: Registration) throws(TetherError) in
            try registration.setScope(scope)
            registration.setContext(context) { p, _ in
                tracker.dropped(label, p)
                Ref<Obj>(opaque: p).release()
            }
        }.registration
    }

    /// Adds a completion callback that logs "complete <label>" (or `event`) and then runs `body`.
    func onComplete(_ registration: Registration, event: String? = nil,
                    _ body: @escaping (Resolver, Instance, Obj) throws -> Void = { _, _, _ in }) {
        let tracker = tracker
        let event = event ?? "complete \(registration.key.name)"
        registration.addCompletion(ClosureCompletion { resolver, instance in
            tracker.note(event)
            try body(resolver, instance, Obj.of(instance))
        })
    }

    func resolve(_ key: String, in target: Container? = nil, _ arguments: [Argument] = []) throws -> Instance {
        let c = target ?? container
        return try arguments.withUnsafeBufferPointer { buffer in try c.resolve(Key(key), arguments: buffer) }
    }
}

// MARK: - Assertions

/// Runs `body`, expects a TetherError with `code` whose message contains every fragment; returns it.
@discardableResult
func expectError<T>(_ code: ErrorCode, _ fragments: String..., sourceLocation: SourceLocation = #_sourceLocation,
                    _ body: () throws -> T) -> TetherError? {
    do {
        _ = try body()
        Issue.record("expected \(code) but the call succeeded", sourceLocation: sourceLocation)
        return nil
    } catch let error as TetherError {
        #expect(error.code == code, "code \(error.code), message: \(error.message)", sourceLocation: sourceLocation)
        for fragment in fragments {
            #expect(error.message.contains(fragment), "missing «\(fragment)» in: \(error.message)", sourceLocation: sourceLocation)
        }
        return error
    } catch {
        Issue.record("expected TetherError \(code), got \(error)", sourceLocation: sourceLocation)
        return nil
    }
}

/// Deps in one line: `.dependency(Key("B"))` as `dep("B")`.
func dep(_ key: String) -> Param { .dependency(Key(key)) }
func weakDep(_ key: String) -> Param { .weak(Key(key)) }
func lazyDep(_ key: String) -> Param { .lazy(Key(key)) }
func weakLazyDep(_ key: String) -> Param { .weakLazy(Key(key)) }

/// Runs `body` on `count` new threads released together; returns when all finished.
func onThreads(_ count: Int, _ body: @escaping @Sendable (Int) -> Void) {
    let gate = Gate()
    let group = DispatchGroup()
    for i in 0..<count {
        group.enter()
        let thread = Thread {
            gate.arrive(andWaitFor: count)
            body(i)
            group.leave()
        }
        thread.stackSize = 1 << 20
        thread.start()
    }
    group.wait()
}

/// Runs `body`, which sets a process-wide test hook and clears it, while no other test has one set: a
/// hook is one slot (a second test's would replace the first's, or its clear remove it before the first's
/// resolve reached it), and suites run in parallel (`.serialized` orders a suite's own tests only).
func withTestHook<T>(_ body: () throws -> T) rethrows -> T {
    testHooks.lock()
    defer { testHooks.unlock() }
    return try body()
}

private let testHooks = NSLock()

/// A spinning barrier for `onThreads` bodies: each party arrives, then waits for all.
final class Gate: Sendable {
    private let arrived = Atomic<Int>(0)
    func arrive(andWaitFor parties: Int) {
        arrived.add(1, ordering: .sequentiallyConsistent)
        while arrived.load(ordering: .sequentiallyConsistent) < parties { sched_yield() }
    }
}

// MARK: - The C header

/// The enumerators of the enum `name` in include/tether.h, in declaration order (their numbers),
/// without `prefix`: what a description in the core (`Param.Kind`, `Scope`) must number and name alike.
func headerEnumerators(_ name: String, prefix: String) throws -> [String] {
    let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    let header = try String(contentsOf: root.appendingPathComponent("include/tether.h"), encoding: .utf8)
    let start = try #require(header.range(of: "typedef enum \(name) {"))
    let end = try #require(header.range(of: "} \(name);", range: start.upperBound..<header.endIndex))
    // Each enumerator starts a line (after a separating comma, if any); comments follow it.
    return header[start.upperBound..<end.lowerBound].split(separator: "\n").compactMap { line in
        let text = line.drop { $0 == " " || $0 == "," }
        guard text.hasPrefix(prefix) else { return nil }
        return String(text.dropFirst(prefix.count).prefix { $0.isLetter || $0.isNumber || $0 == "_" })
    }
}

/// `actual` is `expected`, a test's literal result (where a test compared plans with the build until branch
/// noplansoff, the build's: written from the run that compared them).
func expectLiteral(_ actual: [String], _ expected: [String], sourceLocation: SourceLocation = #_sourceLocation) {
    #expect(actual == expected, "\(actual)", sourceLocation: sourceLocation)
}

/// Runs `scenario` on a fixture of its own closed after it (every instance dropped once): the tracker's log, what
/// the scenario returned, and its `PlanStats` counts. (Each test using it asserts the literal log or result: the
/// build's, which `bothPaths` ran beside it as an oracle until branch noplansoff, branch twooracles the last.)
func planned<T>(_ scenario: (Fixture) throws -> T) throws -> (log: [String], seen: T, counts: [String: Int]) {
    let fx = try Fixture()
    var result: T?
    let counts = try counted { result = try scenario(fx) }
    _ = try fx.container.close()
    #expect(fx.tracker.badDrops == 0 && fx.tracker.liveCount == 0)
    return (fx.tracker.log, result!, counts)
}

/// `planned` of a scenario plans serve whole: `resolves` resolves counted and none built (`Graph.build`).
/// Returns the tracker's log and the scenario's result.
func served<T>(resolves: Int, sourceLocation: SourceLocation = #_sourceLocation,
               _ scenario: (Fixture) throws -> T) throws -> (log: [String], seen: T) {
    let run = try planned(scenario)
    #expect(run.counts == ["resolves": resolves], "\(run.counts)", sourceLocation: sourceLocation)
    return (run.log, run.seen)
}

/// `key` resolved on another thread that must not wait (`WaitMode`), while this one waits for it: "made", or the
/// error's code (a cell this thread holds: `wouldBlock`).
func resolvedNoWaitElsewhere(_ fx: Fixture, _ key: String) -> String {
    let outcome = Box("")
    onThreads(1) { _ in
        outcome.value = WaitMode.run(noWait: true) { () -> String in
            do { _ = try fx.resolve(key); return "made" } catch let e as TetherError { return "\(e.code)" } catch { return "?" }
        }.result
    }
    return outcome.value
}

/// The calling thread's `PlanStats` counts after `body` less those before (a test body runs on one
/// thread): which resolves a plan served and why the others went to `Graph.build`.
func counted(_ body: () throws -> Void) rethrows -> [String: Int] {
    try countedDelta(PlanStats.thisThread, body)
}

/// `counted`'s of the calling thread's resolver requests (`PlanStats.requestsOnThisThread`): how many there were,
/// found, served by a plan, and built for each reason.
func countedRequests(_ body: () throws -> Void) rethrows -> [String: Int] {
    try countedDelta(PlanStats.requestsOnThisThread, body)
}

private func countedDelta(_ read: () -> [String: Int], _ body: () throws -> Void) rethrows -> [String: Int] {
    PlanStats.countOnThisThread()
    let before = read()
    try body()
    var delta = read()
    for (name, n) in before { delta[name, default: 0] -= n }
    return delta.filter { $0.value != 0 }
}
