/// How long the instances of a registration live and who shares them.
///
/// A scope's one description: every decision a scope makes elsewhere reads a property here
/// (`cache`, `isKeyedInGraph`, `resolvesFromOwnContainer`, its lifetime for the captive rule in
/// `ScopeLifetime.swift`), each an exhaustive `switch`, so a new case fails the build at each
/// property that must decide it; no code outside compares a scope by name. Code that differs
/// by where an instance is kept switches over `Cache` (exhaustively), never over a scope's name.
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

    /// Where an instance is kept between resolves: what each cache's code switches over
    /// (`Registration.cachedRetained`/`publish`, `Container.publishScoped`, `SharedCache.cellKey`,
    /// the plans' shared steps).
    enum Cache: Sendable {
        /// Not kept: made per graph (`isKeyedInGraph`) or per use.
        case none
        /// The registering container's registration holds it strongly until reset (its
        /// `PublishedSingleton` slot: lent to the hit path, edges to it split references).
        case registration
        /// The registration holds it weakly: shared while anything else holds it (`WeakCache`).
        case registrationWeakly
        /// The resolving container holds it until it closes (`ScopedEntries`).
        case resolvingContainer
    }

    var cache: Cache {
        @inline(__always) get {
            switch self {
            case .graph, .transient: .none
            case .singleton: .registration
            case .weak: .registrationWeakly
            case .container: .resolvingContainer
            }
        }
    }

    /// Whether a resolve may share an instance it did not make: singleton, weak and container instances.
    var isShared: Bool {
        @inline(__always) get {
            switch cache {
            case .registration, .registrationWeakly, .resolvingContainer: true
            case .none: false
            }
        }
    }

    /// Whether the instance is kept by its registration (rather than per resolving container):
    /// what `reset` of a registration and the cache checks of overrides look at.
    var isKeptByRegistration: Bool {
        @inline(__always) get {
            switch cache {
            case .registration, .registrationWeakly: true
            case .none, .resolvingContainer: false
            }
        }
    }

    /// Whether the registration's cache holds its instance strongly (a singleton's slot): its
    /// cached object can be handed out bare (`Container.resolveObject`), and edges to it be split
    /// references (`SplitEdge`: the plans' `SharedStep.splits`); a container step may take it.
    var isKeptStronglyByRegistration: Bool {
        @inline(__always) get {
            switch cache {
            case .registration: true
            case .none, .registrationWeakly, .resolvingContainer: false
            }
        }
    }

    /// Whether the registration's cache holds its instance weakly: a dead one's object may be
    /// revived by a binding (`Registration.revivedObject`), and a declined publication must be
    /// seen by the layers that cache hits (`Container.cachesChanged`).
    var isKeptWeakly: Bool {
        @inline(__always) get {
            switch cache {
            case .registrationWeakly: true
            case .none, .registration, .resolvingContainer: false
            }
        }
    }

    /// Whether a shared instance is one per resolving container (its creation cell and cache
    /// keyed by that container: `SharedCache.cellKey`, `Graph`'s pending publications) rather
    /// than one per registration.
    var isPerResolvingContainer: Bool {
        @inline(__always) get {
            switch cache {
            case .resolvingContainer: true
            case .none, .registration, .registrationWeakly: false
            }
        }
    }

    /// Whether a graph holds at most one instance of the registration: its graph table entry (and
    /// a plan's `Step.isKeyed`) hands the same to every slot; a transient one is made per slot.
    var isKeyedInGraph: Bool {
        @inline(__always) get {
            switch self {
            case .graph, .singleton, .weak, .container: true
            case .transient: false
            }
        }
    }

    /// Whether the scope's dependencies are looked up from the registering container rather than
    /// the resolving one: a singleton's, so the shared instance does not depend on which child asked
    /// first. Read by the build (`Graph.push`), its claims walk and validate/DOT (`GraphCheck`).
    var resolvesFromOwnContainer: Bool {
        @inline(__always) get {
            switch self {
            case .singleton: true
            case .graph, .transient, .weak, .container: false
            }
        }
    }

    /// The description as tether_binding.h's TETHER_SCOPE_TRAIT_* bits (`scope_traits`), so a binding
    /// acts on what the library decides for a scope without naming it.
    package var bindingTraits: UInt32 {
        (isShared ? 0x1 : 0) | (isKeptStronglyByRegistration ? 0x2 : 0) | (isKeptWeakly ? 0x4 : 0)
            | (isPerResolvingContainer ? 0x8 : 0) | (isKeyedInGraph ? 0x10 : 0) | (resolvesFromOwnContainer ? 0x20 : 0)
    }
}
