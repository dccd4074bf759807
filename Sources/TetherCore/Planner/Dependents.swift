extension GraphCheck {
    /// The keys of `registrations` that declare an edge (a factory slot or a declared completion
    /// target, strong or weak; an ALL slot's elements as `lookup` lists them) to `key`, directly or
    /// through other keys of `registrations`: what an override of `key` must rebuild (`Container.override`).
    static func dependents(of key: Key, among registrations: [Registration], lookup: Container) -> Set<Key> {
        var byTarget: [Key: [Key]] = [:]
        for r in registrations {
            for e in edges(of: r, lookup: lookup) { byTarget[e.target, default: []].append(r.key) }
        }
        var found = Set<Key>()
        var stack = [key]
        while let k = stack.popLast() {
            for d in byTarget[k] ?? [] where found.insert(d).inserted { stack.append(d) }
        }
        return found
    }
}

extension Instance {
    /// Whether a strong edge path from this instance reaches an instance of `key` (edges made by a
    /// resolver or a lazy slot included, which no declaration shows).
    func stronglyReaches(_ key: Key) -> Bool {
        EdgeLock.withLock {
            var seen: Set<ObjectIdentifier> = [ObjectIdentifier(self)]
            var stack = [self]
            var found = false
            while !found, let node = stack.popLast() {
                _ = node.forEachStrongEdge { target in
                    if target.key == key { found = true; return false }
                    if seen.insert(ObjectIdentifier(target)).inserted { stack.append(target) }
                    return true
                }
            }
            return found
        }
    }
}
