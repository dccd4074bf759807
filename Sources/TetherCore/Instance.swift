import Synchronization

/// What every instance of one registration configuration shares: its key, its
/// destructor and context. Immutable; a registration swaps in a new one on change.
public final class InstanceSpec: Sendable {
    public let key: Key
    public let scope: Scope
    nonisolated(unsafe) public let context: UnsafeMutableRawPointer?
    public let destructor: Destructor?
    public let completions: [Completion]

    init(key: Key, scope: Scope, context: UnsafeMutableRawPointer?, destructor: Destructor?, completions: [Completion]) {
        self.key = key
        self.scope = scope
        self.context = context
        self.destructor = destructor
        self.completions = completions
    }

    func with(scope: Scope? = nil, context: UnsafeMutableRawPointer?? = nil, destructor: Destructor?? = nil,
              completions: [Completion]? = nil) -> InstanceSpec {
        InstanceSpec(key: key, scope: scope ?? self.scope, context: context ?? self.context,
                     destructor: destructor ?? self.destructor, completions: completions ?? self.completions)
    }
}

/// A factory's result in a reference-counted box: it remembers its destructor
/// and its outgoing edges. The destructor runs exactly once, when the last strong
/// reference (handle, edge or scope cache) goes; then the box's own strong edges
/// are released, so dependents die before their dependencies.
public final class Instance: @unchecked Sendable {
    public let pointer: UnsafeMutableRawPointer
    public let spec: InstanceSpec
    /// Strong constructor edges, fixed once built.
    private var dependencies: [Instance]
    /// Edges made after construction and lazy cells; rare, so kept out of line.
    private var extras: InstanceExtras?

    init(pointer: UnsafeMutableRawPointer, spec: InstanceSpec, dependencies: [Instance], extras: InstanceExtras?) {
        self.pointer = pointer
        self.spec = spec
        self.dependencies = dependencies
        self.extras = extras
    }

    public var key: Key { spec.key }

    deinit {
        spec.destructor?(pointer, spec.context)
        // Release what this instance holds without recursing once per level, so a
        // 10,000-deep chain cannot overflow the stack.
        if !dependencies.isEmpty || extras != nil {
            // Move the references out so the queue holds the only ones.
            var held: [Instance] = []
            swap(&held, &dependencies)
            let heldExtras = extras
            extras = nil
            ReleaseQueue.release(held, heldExtras)
        }
    }

    /// Lazily created side storage for late edges.
    func extrasForWriting() -> InstanceExtras {
        EdgeLock.shared.withLock {
            if let e = extras { return e }
            let e = InstanceExtras()
            extras = e
            return e
        }
    }

    /// Visits every strong edge target. Caller holds `EdgeLock`.
    func forEachStrongEdge(_ body: (Instance) -> Bool) -> Bool {
        for d in dependencies where !body(d) { return false }
        if let e = extras {
            for d in e.lateStrong where !body(d) { return false }
        }
        return true
    }

    /// Adds a strong edge made after construction (resolver or lazy), refusing one
    /// that would close a cycle of strong edges.
    func addLateStrongEdge(to target: Instance) throws(TetherError) {
        let extras = extrasForWriting()
        let path: [Key]? = EdgeLock.shared.withLock {
            if let path = StrongPath.find(from: target, to: self) { return path }
            extras.lateStrong.append(target)
            return nil
        }
        if let path {
            let cycle = path.map(\.quoted).joined(separator: " -> ")
            throw TetherError(.retainCycle,
                "strong edge \(key.quoted) -> \(target.key.quoted) would close a retain cycle \(cycle); use tether_resolver_get_weak for the back edge")
        }
    }
}

/// Edges an instance gains after construction.
final class InstanceExtras: @unchecked Sendable {
    var lateStrong: [Instance] = []
    var lazyCells: [LazyCell] = []
}

/// Guards late edges (they can be added after an instance is published).
final class EdgeLock: Sendable {
    static let shared = EdgeLock()
    private let mutex = Mutex(())
    func withLock<R>(_ body: () throws -> R) rethrows -> R {
        try mutex.withLock { _ in try body() }
    }
}

/// Strong-edge reachability for retain-cycle detection.
enum StrongPath {
    /// The keys along a strong path `from` ... `to`, then `from` again, if one exists.
    static func find(from start: Instance, to goal: Instance) -> [Key]? {
        var seen = Set<ObjectIdentifier>()
        var parent: [ObjectIdentifier: Instance] = [:]
        var stack = [start]
        seen.insert(ObjectIdentifier(start))
        while let node = stack.popLast() {
            if node === goal {
                var path = [node.key]
                var cur = node
                while let p = parent[ObjectIdentifier(cur)] { path.append(p.key); cur = p }
                path.reverse()
                // start ... goal, then the new edge goal -> start closes it
                return path + [start.key]
            }
            _ = node.forEachStrongEdge { next in
                if seen.insert(ObjectIdentifier(next)).inserted {
                    parent[ObjectIdentifier(next)] = node
                    stack.append(next)
                }
                return true
            }
        }
        return nil
    }
}
