import Synchronization

// What the graph takes rather than makes (`existing`): its own instance of a key, a cache's (the creation cell
// claimed when none is), a provided value, a weak object a binding still holds (revived). Moved out of
// Graph+Build.swift in branch isolate.

extension Graph {
    /// The index in `alive` of the instance of `registration` this graph already
    /// has or a cache holds (a container-scoped one: `lookup`'s); nil when it
    /// must be built. A request for one under construction is a cycle.
    func existing(_ registration: Borrowed<Registration>, _ spec: Borrowed<InstanceSpec>, key: Key,
                          in lookup: Borrowed<Container>) throws(TetherError) -> Int? {
        let state = table.state(registration)
        if state == GraphTable.constructing {
            let path = path
            let start = path.firstIndex(of: key) ?? 0
            let keys = Array(path[start...]) + [key]
            throw TetherError.constructorCycle(keys)
        }
        if state != GraphTable.absent { return GraphTable.index(state) }
        if !outer.isEmpty {  // (a decorated registration's move is the registration it moved from)
            let identity = registration.borrow { $0.constructionIdentity }
            if outer.contains(where: { $0 === registration || $0.borrow { $0.constructionIdentity } == identity }) {
                throw Reentry.reentered(registration, by: self)
            }
        }
        let scope = spec.borrow { $0.scope }
        guard scope.isShared else {
            // A declared value key: the value a container on the way provides, else its factory reports it missing.
            guard registration.borrow({ $0.isDeclaredValue }),
                  let hit = registration.borrow({ r in lookup.borrow { $0.providedValue(of: r) } }) else { return nil }
            if let tracer { tracer.emit(.cacheHit, key, hit.borrow { $0.pointer }) }
            let index = alive.append(hit)
            table.set(registration, GraphTable.state(index))
            return index
        }
        // Unretained: a parent's registration is shared by every thread's requests (no count written).
        var found = registration.borrow { cache in
            lookup.borrow { container in SharedCache.cached(cache, scope, in: container) }
        }
        if found == nil {
            found = try registration.borrow { cache throws(TetherError) in
                try lookup.borrow { container throws(TetherError) in try claim(cache, scope, in: container) }
            }
        }
        if let hit = found {
            if let tracer { tracer.emit(.cacheHit, key, hit.borrow { $0.pointer }) }
            let index = alive.append(hit)
            table.set(registration, GraphTable.state(index))
            // Taken from its cache after a lazy slot on it was filled: the graph's instance it answers (`rememberGraph`).
            if !awaitingCells.isEmpty { bindAwaiting(registration, alive[index]) }
            return index
        }
        if scope.isKeptWeakly, let pointer = registration.borrow({ $0.revivedObject() }) {
            let index = revive(registration, spec, pointer)
            if !awaitingCells.isEmpty { bindAwaiting(registration, alive[index]) }
            return index
        }
        return nil
    }

    /// Enters a weak-scoped instance of `pointer`, an object a binding still held after its box
    /// died (`Registration.revivedObject`), and publishes it with the graph: a new box without edges (the
    /// object holds its dependencies itself) and without completion callbacks (they ran when it was
    /// made), so no factory or callback runs for it again.
    func revive(_ registration: Borrowed<Registration>, _ spec: Borrowed<InstanceSpec>,
                        _ pointer: UnsafeMutableRawPointer) -> Int {
        let index = alive.append(revived(registration, spec, pointer))
        table.set(registration, GraphTable.state(index))
        return index
    }

    /// `revive`'s instance of `pointer` (the graph's reference), published with the graph, its cell noted made.
    func revived(_ registration: Borrowed<Registration>, _ spec: Borrowed<InstanceSpec>,
                         _ pointer: UnsafeMutableRawPointer) -> Ref<Instance> {
        let copy = tracer == nil ? specs.retainedCopy(of: spec) : tracer!.spec(for: spec)
        let reference = Instance.make(pointer: pointer, spec: copy, dependencies: 0, reference: { _ in preconditionFailure() })
        revivedShared.append((registration, reference.object))
        let key = SharedCache.CellKey(registration: ObjectIdentifier(registration.object), container: nil)  // (a weak cell's)
        // Made, and finished: a resolve nested on this thread is handed it (`SharedCache.claim`), never refused it.
        for cell in cells where cell.key == key { cell.made = true; cell.revived = reference.object }
        return reference
    }

    /// A weak creation step of the plan replaying into this graph, where the build's walk reaches it
    /// (`Plan.CreationCheck.reachedThere`): the instance of the object a binding still holds (`revive`,
    /// retained for the run's word), nil when there is none (the run calls its factory).
    func reviveCreation(_ registration: Borrowed<Registration>, _ spec: Borrowed<InstanceSpec>) -> Ref<Instance>? {
        guard let pointer = registration.borrow({ $0.revivedObject() }) else { return nil }
        return revived(registration, spec, pointer)
    }

    /// Whether this graph revived `registration`'s weak instance (`revived`): published apart, no completion callbacks.
    func revivedHere(_ registration: Borrowed<Registration>) -> Bool {
        !revivedShared.isEmpty && revivedShared.contains { $0.0 === registration }
    }
}
