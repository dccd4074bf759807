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
    /// Strong edges, in one word so a leaf instance costs 40 bytes. Changed only
    /// under `EdgeLock` (or in deinit).
    private var edges: Edges

    /// Constructor edges, fixed once built; once an edge is added after
    /// construction or a lazy cell attached (rare), side storage holding all of them.
    private enum Edges {
        case fixed([Instance])
        case extended(InstanceExtras)
    }

    init(pointer: UnsafeMutableRawPointer, spec: InstanceSpec, dependencies: [Instance], extras: InstanceExtras?) {
        self.pointer = pointer
        self.spec = spec
        if let extras {
            extras.dependencies = dependencies
            edges = .extended(extras)
        } else {
            edges = .fixed(dependencies)
        }
    }

    public var key: Key { spec.key }

    deinit {
        spec.destructor?(pointer, spec.context)
        // Release what this instance holds without recursing once per level, so a
        // 10,000-deep chain cannot overflow the stack. Moving the edges out leaves
        // the queue holding the only references.
        let held = edges
        edges = .fixed([])
        switch consume held {
        case .fixed(let dependencies): if !dependencies.isEmpty { ReleaseQueue.release(dependencies, nil) }
        case .extended(let extras): ReleaseQueue.release([], extras)
        }
    }

    /// Side storage for late edges, created on first use. Caller holds `EdgeLock`.
    private func extrasForWriting() -> InstanceExtras {
        switch edges {
        case .extended(let extras):
            return extras
        case .fixed(let dependencies):
            let extras = InstanceExtras()
            extras.dependencies = dependencies
            edges = .extended(extras)
            return extras
        }
    }

    /// Visits every strong edge target. Caller holds `EdgeLock`.
    func forEachStrongEdge(_ body: (Instance) -> Bool) -> Bool {
        switch edges {
        case .fixed(let dependencies):
            for d in dependencies where !body(d) { return false }
        case .extended(let extras):
            for d in extras.dependencies where !body(d) { return false }
            for d in extras.lateStrong where !body(d) { return false }
        }
        return true
    }

    /// Adds a strong edge made after construction (resolver or lazy), refusing one
    /// that would close a cycle of strong edges.
    func addLateStrongEdge(to target: Instance) throws(TetherError) {
        let path: [Key]? = EdgeLock.shared.withLock {
            if let path = StrongPath.find(from: target, to: self) { return path }
            extrasForWriting().lateStrong.append(target)
            return nil
        }
        if let path {
            let cycle = path.map(\.quoted).joined(separator: " -> ")
            throw TetherError(.retainCycle,
                "strong edge \(key.quoted) -> \(target.key.quoted) would close a retain cycle \(cycle); use tether_resolver_get_weak for the back edge")
        }
    }
}

/// Edges of an instance that gained some after construction or owns lazy cells.
final class InstanceExtras: @unchecked Sendable {
    var dependencies: [Instance] = []
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
