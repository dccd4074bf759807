/// How long the instances of a registration live and who shares them.
public enum Scope: Int32, Sendable, CaseIterable {
    /// One instance per top-level resolve: what lets a cycle close.
    case graph = 0
    /// A new instance every time one is needed.
    case transient
    /// One instance, cached in the registering container until reset.
    case singleton
    /// Shared while anything still holds it strongly.
    case weak
    /// One instance per resolving container, shared by its resolves and let go
    /// of when that container closes (a request's child gets its own).
    case container

    public var name: String {
        switch self {
        case .graph: "graph"
        case .transient: "transient"
        case .singleton: "singleton"
        case .weak: "weak"
        case .container: "container"
        }
    }

    /// Singleton, weak and container instances are shared between resolves.
    var isShared: Bool {
        @inline(__always) get {
            switch self {
            case .singleton, .weak, .container: true
            case .graph, .transient: false
            }
        }
    }
}

/// The C type of a runtime argument.
public enum ArgumentType: UInt8, Sendable {
    case i64, f64, str, ptr

    public var name: String {
        switch self {
        case .i64: "i64"
        case .f64: "f64"
        case .str: "str"
        case .ptr: "ptr"
        }
    }
}

/// A runtime argument: its declared type and its 64 bits (pointer, integer or double).
public struct Argument: Sendable {
    public var type: ArgumentType
    public var bits: UInt64
    public init(type: ArgumentType, bits: UInt64) {
        self.type = type
        self.bits = bits
    }
}

/// One declared factory parameter.
public enum Param: Sendable, Equatable {
    case dependency(Key)
    case weak(Key)
    case lazy(Key)
    case weakLazy(Key)
    case context
    case resolver
    case argument(ArgumentType)
    /// Every registration named the key or `key#name` visible from the resolving
    /// container (`Container.allRegistrations`), each held by a strong edge.
    case all(Key)
    /// A handle that builds the key with runtime arguments, on call, from the resolving container.
    case factory(Key)

    /// The key a dependency slot names.
    public var key: Key? {
        switch self {
        case .dependency(let k), .weak(let k), .lazy(let k), .weakLazy(let k), .all(let k), .factory(let k): k
        case .context, .resolver, .argument: nil
        }
    }

    /// Dependencies that must exist before the factory runs.
    var isConstructorEdge: Bool {
        switch self {
        case .dependency, .weak, .all: true
        case .lazy, .weakLazy, .context, .resolver, .argument, .factory: false
        }
    }

    /// Dependencies the instance holds strongly from its construction on.
    var isStrongEdge: Bool {
        switch self {
        case .dependency, .all: true
        case .weak, .lazy, .weakLazy, .context, .resolver, .argument, .factory: false
        }
    }
}
