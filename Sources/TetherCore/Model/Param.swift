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

/// One declared factory parameter: a slot kind (`Param.Kind`) and what it names.
///
/// How a resolve fills each kind's slot is `Graph.build`'s (and `attach`'s) switch; what a
/// kind is otherwise (its C number and name, whether it names a key, its edges for walks,
/// validate and DOT, whether a plan records it, whether a completion may declare it) is one
/// row of `Param.Kind`, read by every other place. A new kind is a case here and in `Kind`:
/// the compiler then flags each `switch` that must decide it (none has a `default:`).
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

    /// The slot's kind: its row in `Kind`.
    public var kind: Kind {
        switch self {
        case .dependency: .dependency
        case .weak: .weak
        case .lazy: .lazy
        case .weakLazy: .weakLazy
        case .context: .context
        case .resolver: .resolver
        case .argument(let type):
            switch type {
            case .i64: .i64
            case .f64: .f64
            case .str: .str
            case .ptr: .ptr
            }
        case .all: .all
        case .factory: .factory
        }
    }

    /// The slot of `kind` naming `key`: nil when the kind names a key and `key` is nil (the one
    /// place a kind number becomes a slot: the ABI's `parseParams`, the conformance runner).
    public init?(kind: Kind, key: Key?) {
        if kind.takesKey && key == nil { return nil }
        switch kind {
        case .dependency: self = .dependency(key!)
        case .weak: self = .weak(key!)
        case .lazy: self = .lazy(key!)
        case .weakLazy: self = .weakLazy(key!)
        case .context: self = .context
        case .resolver: self = .resolver
        case .i64: self = .argument(.i64)
        case .f64: self = .argument(.f64)
        case .str: self = .argument(.str)
        case .ptr: self = .argument(.ptr)
        case .all: self = .all(key!)
        case .factory: self = .factory(key!)
        }
    }

    /// The key a dependency slot names.
    public var key: Key? {
        switch self {
        case .dependency(let k), .weak(let k), .lazy(let k), .weakLazy(let k), .all(let k), .factory(let k): k
        case .context, .resolver, .argument: nil
        }
    }

    /// Dependencies that must exist before the factory runs.
    var isConstructorEdge: Bool { kind.isConstructorEdge }

    /// Dependencies the instance holds strongly from its construction on.
    var isStrongEdge: Bool { kind.isStrongEdge }

    /// What the slot has edges to, as `lookup` sees them.
    enum Targets {
        /// No key (context, resolver, runtime arguments).
        case none
        /// The key the slot names.
        case key(Key)
        /// An ALL slot's items (`Container.allRegistrations`), in order.
        case list([Registration])
    }

    /// The one enumeration of a slot's edges, shared by the walks over declarations: validate
    /// and DOT (`GraphCheck.edges`), what an override rebuilds (`GraphCheck.dependents`), and
    /// which shared keys a build must claim (`Graph.forEachUncachedShared`).
    func targets(from lookup: Container) -> Targets {
        guard let key else { return .none }
        switch kind.edges {
        case .one: return .key(key)
        case .perItem: return .list(lookup.allRegistrations(for: key))
        case .none: return .none
        }
    }
}

extension Param {
    /// The slot kinds, numbered as `tether_param_kind` (include/tether.h: append, the ABI keeps
    /// old numbers). Each property is one exhaustive switch: a new kind is decided here once,
    /// and the ABI, validate, DOT, plans and messages read it.
    public enum Kind: Int32, Sendable, CaseIterable {
        case dependency = 0, weak, lazy, weakLazy, context, resolver, i64, f64, str, ptr, all, factory

        /// The C enumerator, as messages name it.
        public var cName: String {
            switch self {
            case .dependency: "TETHER_PARAM_DEP"
            case .weak: "TETHER_PARAM_WEAK"
            case .lazy: "TETHER_PARAM_LAZY"
            case .weakLazy: "TETHER_PARAM_WEAK_LAZY"
            case .context: "TETHER_PARAM_CONTEXT"
            case .resolver: "TETHER_PARAM_RESOLVER"
            case .i64: "TETHER_PARAM_I64"
            case .f64: "TETHER_PARAM_F64"
            case .str: "TETHER_PARAM_STR"
            case .ptr: "TETHER_PARAM_PTR"
            case .all: "TETHER_PARAM_ALL"
            case .factory: "TETHER_PARAM_FACTORY"
            }
        }

        /// The spelling of the conformance corpus and the bindings (`dep`, `weak_lazy`, ...):
        /// the C name's tail, lower case.
        public var spelling: String { cName.dropFirst("TETHER_PARAM_".count).lowercased() }

        /// The kind spelt `spelling` (`spelling`'s inverse).
        public init?(spelling: String) {
            guard let kind = Kind.allCases.first(where: { $0.spelling == spelling }) else { return nil }
            self = kind
        }

        /// Whether the slot names a key (its `tether_param.key` must be set).
        public var takesKey: Bool {
            switch self {
            case .dependency, .weak, .lazy, .weakLazy, .all, .factory: true
            case .context, .resolver, .i64, .f64, .str, .ptr: false
            }
        }

        /// The runtime argument the slot takes, if it is one.
        public var argumentType: ArgumentType? {
            switch self {
            case .i64: .i64
            case .f64: .f64
            case .str: .str
            case .ptr: .ptr
            case .dependency, .weak, .lazy, .weakLazy, .context, .resolver, .all, .factory: nil
            }
        }

        /// Dependencies that must exist before the factory runs (a constructor cycle through them is an error).
        var isConstructorEdge: Bool {
            switch self {
            case .dependency, .weak, .all: true
            case .lazy, .weakLazy, .context, .resolver, .i64, .f64, .str, .ptr, .factory: false
            }
        }

        /// Dependencies the instance holds strongly from its construction on.
        var isStrongEdge: Bool {
            switch self {
            case .dependency, .all: true
            case .weak, .lazy, .weakLazy, .context, .resolver, .i64, .f64, .str, .ptr, .factory: false
            }
        }

        /// Whether a slot naming a key nothing registers is a problem (validate's NOT_FOUND, a
        /// resolve's `notRegistered`): every kind that names a key needs it today.
        var needsRegistration: Bool {
            switch self {
            case .dependency, .weak, .lazy, .weakLazy, .all, .factory: true
            case .context, .resolver, .i64, .f64, .str, .ptr: false
            }
        }

        /// How many declared edges the slot has: none, one to its key, or one per item an ALL slot lists.
        enum Edges { case none, one, perItem }
        var edges: Edges {
            switch self {
            case .dependency, .weak, .lazy, .weakLazy, .factory: .one
            case .all: .perItem
            case .context, .resolver, .i64, .f64, .str, .ptr: .none
            }
        }

        /// How DOT draws the slot's edges (`GraphCheck.dot`).
        var dotAttributes: [String] {
            switch self {
            case .weak: ["style=dashed"]
            case .lazy: ["style=dotted"]
            case .weakLazy: ["style=dotted", "arrowhead=odot"]
            case .all: ["label=\"all\""]
            case .factory: ["style=dotted", "arrowhead=diamond", "label=\"factory\""]
            case .dependency, .context, .resolver, .i64, .f64, .str, .ptr: []
            }
        }

        /// Whether a declared completion callback may name a target of this kind (`DeclaredCompletion`).
        package var isCompletionTarget: Bool {
            switch self {
            case .dependency, .weak: true
            case .lazy, .weakLazy, .context, .resolver, .i64, .f64, .str, .ptr, .all, .factory: false
            }
        }

        /// What a recorded plan makes of the slot (`Plan`, `PlanDescription`). No default: a new kind
        /// is decided here, and each recorder's `switch` over it then must handle it.
        enum Planned: Equatable {
            /// A step's instance (the key's step).
            case instance
            /// The registration's context word.
            case context
            /// The resolver word (only where the plan allows resolvers).
            case resolver
            /// The root's next runtime argument (only at the root).
            case argument
            /// A handle to a step's instance, held weakly (no edge).
            case weak
            /// A cell made per resolve, bound to the graph's instance of the key (`LazyCell`); `isWeak`
            /// for WEAK_LAZY.
            case lazy(isWeak: Bool)
            /// The list of the key's registrations' instances, each a step and a strong edge.
            case all
            /// A handle that builds the key with runtime arguments, made per resolve (`FactoryCell`).
            case factory
        }
        var planned: Planned {
            switch self {
            case .dependency: .instance
            case .context: .context
            case .resolver: .resolver
            case .i64, .f64, .str, .ptr: .argument
            case .weak: .weak
            case .lazy: .lazy(isWeak: false)
            case .weakLazy: .lazy(isWeak: true)
            case .all: .all
            case .factory: .factory
            }
        }
    }
}
