import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

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
    /// Strong edges in one word, so a leaf instance costs 40 bytes and an edge list
    /// is plain memory (no array machinery on the resolve and release paths):
    /// 0, an `EdgeList` address, or (low bit set) a retained `InstanceExtras` for
    /// the rare instance with late edges or lazy cells. Changed only under
    /// `EdgeLock` (or in deinit).
    private var edges: UInt

    /// `dependencies` is an `EdgeList` (or nil) whose references the instance takes over.
    init(pointer: UnsafeMutableRawPointer, spec: InstanceSpec, dependencies: EdgeList?, extras: InstanceExtras?) {
        self.pointer = pointer
        self.spec = spec
        if let extras {
            extras.dependencies = dependencies
            edges = UInt(bitPattern: Unmanaged.passRetained(extras).toOpaque()) | 1
        } else {
            edges = dependencies.map { UInt(bitPattern: $0.base) } ?? 0
        }
    }

    public var key: Key { spec.key }

    deinit {
        let pointer = pointer
        Unmanaged.passUnretained(spec)._withUnsafeGuaranteedRef { spec in spec.destructor?(pointer, spec.context) }
        // Released without recursing once per level, so a 10,000-deep chain
        // cannot overflow the stack (see ReleaseQueue).
        if edges & 1 == 1 {
            let extras = Unmanaged<InstanceExtras>.fromOpaque(UnsafeRawPointer(bitPattern: edges & ~1)!).takeRetainedValue()
            let list = extras.dependencies
            extras.dependencies = nil
            ReleaseQueue.release(list, extras)
        } else if edges != 0 {
            ReleaseQueue.release(EdgeList(UnsafeMutableRawPointer(bitPattern: edges)!), nil)
        }
    }

    /// Side storage for late edges, created on first use. Caller holds `EdgeLock`.
    private func extrasForWriting() -> InstanceExtras {
        if edges & 1 == 1 {
            return Unmanaged<InstanceExtras>.fromOpaque(UnsafeRawPointer(bitPattern: edges & ~1)!).takeUnretainedValue()
        }
        let extras = InstanceExtras()
        extras.dependencies = UnsafeMutableRawPointer(bitPattern: edges).map(EdgeList.init)
        edges = UInt(bitPattern: Unmanaged.passRetained(extras).toOpaque()) | 1
        return extras
    }

    /// Visits every strong edge target. Caller holds `EdgeLock`.
    func forEachStrongEdge(_ body: (Instance) -> Bool) -> Bool {
        if edges & 1 == 1 {
            let extras = Unmanaged<InstanceExtras>.fromOpaque(UnsafeRawPointer(bitPattern: edges & ~1)!).takeUnretainedValue()
            if let list = extras.dependencies, !list.forEach(body) { return false }
            for d in extras.lateStrong where !body(d) { return false }
            return true
        }
        guard edges != 0 else { return true }
        return EdgeList(UnsafeMutableRawPointer(bitPattern: edges)!).forEach(body)
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

/// A constructor edge list in plain memory: a count, then that many retained
/// instance references. Made by the graph, owned by one instance, freed by
/// `ReleaseQueue` after it released the references.
struct EdgeList {
    let base: UnsafeMutableRawPointer

    init(_ base: UnsafeMutableRawPointer) { self.base = base }

    /// A list of `count` (> 0) edges; `reference(i)` must hand over one reference each.
    init(count: Int, reference: (Int) -> Unmanaged<Instance>) {
        base = malloc((count + 1) * 8)!  // plain malloc: the allocator's aligned path is slower
        base.storeBytes(of: count, as: Int.self)
        let targets = self.targets
        for i in 0..<count { (targets + i).initialize(to: reference(i)) }
    }

    var count: Int { base.load(as: Int.self) }
    var targets: UnsafeMutablePointer<Unmanaged<Instance>> { (base + 8).assumingMemoryBound(to: Unmanaged<Instance>.self) }

    func forEach(_ body: (Instance) -> Bool) -> Bool {
        let targets = self.targets
        for i in 0..<count where !targets[i]._withUnsafeGuaranteedRef(body) { return false }
        return true
    }

    func deallocate() { free(base) }
}

/// Edges of an instance that gained some after construction or owns lazy cells.
final class InstanceExtras: @unchecked Sendable {
    /// Constructor edges (owned; handed to ReleaseQueue by the instance's deinit).
    var dependencies: EdgeList?
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
