/// How long each scope's instances live, for the captive-dependency rule: an
/// instance a cache keeps beyond its resolve (a singleton) that holds a
/// shorter-lived one strongly keeps it alive with itself, whatever that one's
/// scope says. A new scope is one line in `lifetime`.
extension Scope {
    /// `rank`: longer-lived scopes rank higher. `cached`: a cache keeps the
    /// instance after the resolve that made it returns.
    var lifetime: (rank: Int, cached: Bool) {
        switch self {
        case .transient: (0, false)   // one use
        case .graph: (1, false)       // one top-level resolve
        case .weak: (2, false)        // while something else holds it
        case .container: (3, false)   // until its container goes: shorter than a singleton; holding
                                      // shorter-lived ones is its purpose (a request's), not a capture
        case .singleton: (4, true)    // until reset, re-registration or the container's free
        }
    }

    /// Whether an instance of this scope holding one of `target` strongly captures it.
    public func captures(_ target: Scope) -> Bool {
        lifetime.cached && target.lifetime.rank < lifetime.rank
    }
}

/// The captive-dependency problem, one text for `tether_validate` and strict resolves.
/// `via`: where the edge is declared (" (completion callback #1)", or ""); `note`: appended.
func captiveError(holder: Key, _ holderScope: Scope, target: Key, _ targetScope: Scope,
                  via: String = "", note: String = "") -> TetherError {
    TetherError(.captiveDependency,
        "captive dependency \(pathText([holder, target]))\(via): the \(holderScope.name) \(holder.quoted) would keep the \(targetScope.name)-scoped \(target.quoted) for as long as it lives; make \(target.quoted) a \(holderScope.name), or inject it lazily (TETHER_LAZY) or weakly (TETHER_WEAK)\(note)")
}

/// What a strict container's refusal adds to `captiveError`.
let strictNote = " (refused: the container is strict, tether_container_set_strict)"
