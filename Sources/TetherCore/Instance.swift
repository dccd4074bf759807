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
    /// Strong edges in one word, so a leaf instance costs 40 bytes and edges are
    /// plain references (no array machinery on the resolve and release paths):
    /// an `Edges` word, or (tag `extrasTag`) a retained `InstanceExtras` for the
    /// rare instance with late edges or lazy cells. Changed only under `EdgeLock`
    /// (or in deinit).
    private var edges: UInt

    private static let extrasTag: UInt = 1

    /// `dependencies` is an `Edges` word whose references the instance takes over.
    init(pointer: UnsafeMutableRawPointer, spec: InstanceSpec, dependencies: UInt, extras: InstanceExtras?) {
        self.pointer = pointer
        self.spec = spec
        if let extras {
            extras.dependencies = dependencies
            edges = UInt(bitPattern: Unmanaged.passRetained(extras).toOpaque()) | Self.extrasTag
        } else {
            edges = dependencies
        }
    }

    public var key: Key { spec.key }

    deinit {
        let pointer = pointer
        Unmanaged.passUnretained(spec)._withUnsafeGuaranteedRef { spec in spec.destructor?(pointer, spec.context) }
        // Released without recursing once per level, so a 10,000-deep chain
        // cannot overflow the stack (see ReleaseQueue).
        if edges & Edges.tagMask == Self.extrasTag {
            let extras = Unmanaged<InstanceExtras>.fromOpaque(UnsafeRawPointer(bitPattern: edges & ~Edges.tagMask)!).takeRetainedValue()
            let dependencies = extras.dependencies
            extras.dependencies = 0
            ReleaseQueue.release(dependencies, extras)
        } else if edges != 0 {
            ReleaseQueue.release(edges, nil)
        }
    }

    private var extras: InstanceExtras? {
        guard edges & Edges.tagMask == Self.extrasTag else { return nil }
        return Unmanaged<InstanceExtras>.fromOpaque(UnsafeRawPointer(bitPattern: edges & ~Edges.tagMask)!).takeUnretainedValue()
    }

    /// Side storage for late edges, created on first use. Caller holds `EdgeLock`.
    private func extrasForWriting() -> InstanceExtras {
        if let extras { return extras }
        let extras = InstanceExtras()
        extras.dependencies = edges
        edges = UInt(bitPattern: Unmanaged.passRetained(extras).toOpaque()) | Self.extrasTag
        return extras
    }

    /// Visits every strong edge target. Caller holds `EdgeLock`.
    func forEachStrongEdge(_ body: (Instance) -> Bool) -> Bool {
        guard let extras else { return Edges.forEach(edges, body) }
        guard Edges.forEach(extras.dependencies, body) else { return false }
        for d in extras.lateStrong where !body(d) { return false }
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

/// Constructor edges in one word of plain memory: 0 (none), one retained
/// instance reference tagged `singleTag` (the usual case costs no allocation),
/// or the address of a malloc'd list: a count, then that many retained references.
/// `ReleaseQueue` releases the references and frees the list.
enum Edges {
    static let tagMask: UInt = 3
    static let singleTag: UInt = 2

    /// The word for `count` edges; `reference(i)` must hand over one reference each.
    static func make(count: Int, reference: (Int) -> Unmanaged<Instance>) -> UInt {
        switch count {
        case 0: return 0
        case 1: return UInt(bitPattern: reference(0).toOpaque()) | singleTag
        default:
            let base = malloc((count + 1) * 8)!  // plain malloc: the allocator's aligned path is slower
            base.storeBytes(of: count, as: Int.self)
            let targets = (base + 8).assumingMemoryBound(to: Unmanaged<Instance>.self)
            for i in 0..<count { (targets + i).initialize(to: reference(i)) }
            return UInt(bitPattern: base)
        }
    }

    /// The references of `word`, without consuming them.
    @inline(__always)
    static func withTargets<R>(_ word: UInt, _ body: (UnsafeBufferPointer<Unmanaged<Instance>>) -> R) -> R {
        if word & singleTag != 0 {
            var single = Unmanaged<Instance>.fromOpaque(UnsafeRawPointer(bitPattern: word & ~tagMask)!)
            return withUnsafePointer(to: &single) { body(UnsafeBufferPointer(start: $0, count: 1)) }
        }
        guard let base = UnsafeMutableRawPointer(bitPattern: word) else { return body(UnsafeBufferPointer(start: nil, count: 0)) }
        return body(UnsafeBufferPointer(start: (base + 8).assumingMemoryBound(to: Unmanaged<Instance>.self), count: base.load(as: Int.self)))
    }

    static func forEach(_ word: UInt, _ body: (Instance) -> Bool) -> Bool {
        withTargets(word) { targets in
            for target in targets where !target._withUnsafeGuaranteedRef(body) { return false }
            return true
        }
    }

    /// Frees the storage of `word` (its references were released or handed on).
    static func deallocate(_ word: UInt) {
        if word & singleTag == 0, let base = UnsafeMutableRawPointer(bitPattern: word) { free(base) }
    }
}

/// Edges of an instance that gained some after construction or owns lazy cells.
final class InstanceExtras: @unchecked Sendable {
    /// Constructor edges, an `Edges` word (handed to ReleaseQueue by the instance's deinit).
    var dependencies: UInt = 0
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
