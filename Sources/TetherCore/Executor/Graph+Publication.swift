import Synchronization

// The end of a resolve: publication of what it made, abort, and the creation cells let go of.

extension Graph {
    func publish() {
        if !pendingShared.isEmpty {
            let unwrapped = unwrappedLayers()
            for (n, (registration, instance, container)) in pendingShared.enumerated() {
                if !unwrapped.isEmpty && unwrapped.contains(n) {
                    if instance.spec.scope.isKeptWeakly { registration.borrow { $0.forgetPublished(at: instance.pointer) } }
                    continue
                }
                registration.borrow { r in
                    if let container {
                        container.borrow { SharedCache.publish(r, instance, in: $0, builtSince: builtSince) }
                    } else {
                        SharedCache.publish(r, instance, in: nil, builtSince: builtSince)
                    }
                }
            }
            pendingShared.removeAll(keepingCapacity: true)
        }
        if !revivedShared.isEmpty {
            for (registration, instance) in revivedShared { registration.borrow { SharedCache.publish($0, instance, in: nil, builtSince: builtSince) } }
            revivedShared.removeAll()
        }
        releaseCells()
    }

    /// The pended decorator layers (`movedFrom`: `K (before decorator n)`) that no instance published after them
    /// holds by a strong edge (the layer above failed, under a request the resolve survived: a completion callback's
    /// get, a RESOLVER slot's), by index: they go with the graph, published under no key, and so do the layers below
    /// them: a decorated key caches its decorated result, never an undecorated original alone (README "Decorators").
    private func unwrappedLayers() -> [Int] {
        var skipped: [Int] = []
        for n in pendingShared.indices.reversed() where pendingShared[n].0.borrow({ $0.movedFrom != nil }) {
            let layer = pendingShared[n].1
            let held = EdgeLock.withLock {
                pendingShared.indices[(n + 1)...].contains { m in !skipped.contains(m) && !pendingShared[m].1.forEachStrongEdge { $0 !== layer } }
            }
            if !held { skipped.append(n) }
        }
        return skipped
    }

    /// A failed resolve publishes nothing: the shared instances it pended let go of (their references
    /// here too, so a failed replay's own release order holds: `Plan.openFrames` pends before the last factory).
    func unpendShared() {
        guard !pendingShared.isEmpty else { return }
        // A weak-scoped object this resolve made at the address of the one last published
        // (dead, its memory reused) must not be taken for it by a binding asked to revive it.
        for (registration, instance, _) in pendingShared where instance.spec.scope.isKeptWeakly {
            registration.borrow { $0.forgetPublished(at: instance.pointer) }
        }
        pendingShared.removeAll(keepingCapacity: true)
    }

    func abort() {
        // The graph holds everything it made again, so dropping its references destroys
        // each once, last made first (dependents first: the newer), as the model's rollback
        // does; cached instances it merely reused stay cached. (A second call finds it empty.)
        alive.reown(from: 0)
        unpendShared()
        releaseCells(failed: true)
        clear()
    }

    /// A resolve that must not wait for another thread's creation cell
    /// (`WaitMode`) fails before any factory runs when a shared instance its
    /// constructor edges reach is being created by another thread: finding that
    /// only later would fail the resolve after factories ran, and the caller's
    /// retry would run them again. So the thread's outermost resolve claims
    /// those cells ahead (a check alone would let another thread claim one
    /// between the check and the build); a nested one, whose thread may hold
    /// cells further out, checks. (What lazy, resolver slots and completion
    /// callbacks reach is known only as they run.)
    func checkBeforeNotWaiting(_ root: Registration, from container: Container) throws(TetherError) {
        let (noWait, acting) = (Borrowed<ThreadState>(opaque: thread).borrow { $0.noWait }, SharedCache.refusing(thread) != nil)
        guard noWait || acting else { return }
        // The outermost resolve of a thread acting for no token holds no cell yet.
        let outermost = Borrowed<ThreadState>(opaque: thread).borrow { $0.nesting == 1 && $0.replaying.isEmpty && $0.tokens.isEmpty }
        if !acting && outermost && outer.isEmpty {
            claimedInOrder = true
            return try claimInOrder(root, from: container, evenOne: true)
        }
        var blocked: (Registration, Container)?
        Self.forEachUncachedShared(root, from: container) { registration, lookup in
            guard SharedCache.shared.heldElsewhere(registration, registration.spec.scope, in: lookup, thread: thread) else { return true }
            blocked = (registration, lookup)
            return false
        }
        // Acting for a token: its claim refuses the wait (the token then waits for that cell),
        // or finds the cell let go of meanwhile and holds it for this build.
        if acting, let (registration, lookup) = blocked {
            try claimOne(registration, registration.spec.scope, in: lookup)?.release()
            return
        }
        if let (blocked, _) = blocked {
            Borrowed<ThreadState>(opaque: thread).borrow { $0.blocked = true }
            throw Self.wouldBlock(root, blocked: blocked)
        }
        if Self.checkHooked.load(ordering: .acquiring), let hook = Self.afterCheckBeforeNotWaiting.withLock({ $0 }) { hook(root) }
    }

    /// The refusal of a no-wait resolve of `root` that would wait for another thread creating `blocked`.
    static func wouldBlock(_ root: Registration, blocked: Registration) -> TetherError {
        TetherError(.wouldBlock, "resolving \(root.key.quoted) must wait for another thread that is creating \(blocked.key.quoted); this resolve was asked not to wait (TETHER_RESOLVE_NO_WAIT): retry without it")
    }

    /// Calls `body` with each singleton-, weak- or container-scoped registration
    /// (and the container it is looked up from) that building `root` from
    /// `container` reaches through constructor edges and no cache holds, until
    /// `body` returns false. Unretained throughout (containers keep their
    /// registrations, registrations their specs); what was seen kept in a small
    /// array (graphs are small; a set past 32), as it runs on every graph that creates.
    /// `keep` takes the weak instances found cached (else let go of at once).
    static func forEachUncachedShared(_ root: Registration, from container: Container,
                                              keepingWeak keep: ((Ref<Instance>) -> Void)? = nil,
                                              _ body: (Registration, Container) -> Bool) {
        var seenList: [ObjectIdentifier] = []
        var seenSet: Set<ObjectIdentifier>?
        var stack = [(Borrowed(root), Borrowed(container))]
        while let (next, lookup) = stack.popLast() {
            let id = ObjectIdentifier(next.object)
            if seenSet != nil {
                guard seenSet!.insert(id).inserted else { continue }
            } else {
                guard !seenList.contains(id) else { continue }
                seenList.append(id)
                if seenList.count > 32 { seenSet = Set(seenList) }
            }
            let scope = next.borrow { $0.specReference.borrow { $0.scope } }
            if scope.isShared {
                if let hit = next.borrow({ SharedCache.cached($0, scope, in: lookup.object) }) {
                    if let keep, scope.isKeptWeakly { keep(hit) } else { hit.release() }
                    continue
                }
                if !body(next.object, lookup.object) { return }
            }
            let depLookup = scope.resolvesFromOwnContainer ? next.borrow { Borrowed($0.container) } : lookup
            for param in next.borrow({ $0.params }) where param.isConstructorEdge {
                switch depLookup.borrow({ param.targets(from: $0) }) {
                case .key(let key):
                    if let dep = depLookup.borrow({ $0.unretainedRegistration(for: key) }) { stack.append((dep, depLookup)) }
                case .list(let items):
                    for dep in items { stack.append((.init(dep), depLookup)) }
                case .none: break
                }
            }
        }
    }

    /// The cells claimed from `first` on let go of (a request's plan declined: `claimAsked`; the graph keeps the others).
    func releaseCells(from first: Int) {
        guard first < cells.count else { return }
        for cell in cells[first...] { SharedCache.shared.release(cell) }
        cells.removeSubrange(first...)
    }

    /// The instances this graph made under its thread's outer claims are no longer unfinished ones of its.
    private func endUnderOuter() {
        for cell in madeUnderOuterCells { cell.madeBelow -= 1 }
        madeUnderOuterCells.removeAll()
        outerCells.removeAll()
    }

    /// `failed`: a cell whose factory suspended goes to its token (`SharedCache.release`).
    func releaseCells(failed: Bool = false) {
        if !madeUnderOuter.isEmpty { madeUnderOuter.removeAll() }
        if !outerCells.isEmpty { endUnderOuter() }
        guard !cells.isEmpty else { return }
        for cell in cells { SharedCache.shared.release(cell, failed: failed) }
        cells.removeAll(keepingCapacity: true)
    }
}
