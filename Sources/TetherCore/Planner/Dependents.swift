extension GraphCheck {
    /// The keys of `registrations` that declare an edge (a factory slot or a declared completion
    /// target, strong or weak; an ALL slot's elements as `lookup` lists them) to `key`, directly or
    /// through other keys of `registrations`: what an override of `key` must rebuild (`Container.override`).
    static func dependents(of key: Key, among registrations: [Registration], lookup: Container) -> Set<Key> {
        var byTarget: [Key: [Key]] = [:]
        for r in registrations {
            for e in edges(of: r, lookup: lookup) { byTarget[e.target, default: []].append(r.key) }
        }
        return Set(GraphWalk.reachable(from: key, id: { $0 }) { byTarget[$0] ?? [] })
    }

    /// Whether `r` declares a path of edges to `key`, given `dependents(of: key, ...)` as `lookup`
    /// sees it: for a registration the table does not show (one an override displaced keeps its
    /// cache until the override ends), whose key `dependents` answers for another registration.
    static func declaresPath(_ r: Registration, to key: Key, dependents: Set<Key>, lookup: Container) -> Bool {
        edges(of: r, lookup: lookup).contains { $0.target == key || dependents.contains($0.target) }
    }
}

extension Instance {
    /// Whether a strong edge path from this instance reaches an instance of `key` (edges made by a
    /// resolver or a lazy slot included, which no declaration shows).
    func stronglyReaches(_ key: Key) -> Bool {
        EdgeLock.withLock {
            GraphWalk.path(from: self, id: ObjectIdentifier.init, successors: { node in
                var targets: [Instance] = []
                _ = node.forEachStrongEdge { targets.append($0); return true }
                return targets
            }, isGoal: { $0 !== self && $0.key == key }) != nil
        }
    }
}
