import Synchronization

// Which plan serves a run: the variant for the caches found (cachedVariant, mixedVariant,
// a failing plan's variants).

extension Plan {
    /// The plan a run of this one is for the resolving container's caches now: a failing plan whose error the
    /// walk met under container-scoped frames (`Failing.containers`) is the build's only while none of those is
    /// cached there; the outermost cached one's `Failing.variants` plan (itself picked so) else (`variant(forCached:)`
    /// over `cachedNow`). `locals`: a child's plan's, written by `fits` (a local frame's registration). Nil: that
    /// variant not recorded (a child's component changed since the pick, `failingVariant`), the caller picks again.
    func pickedForCaches(_ container: Container, _ locals: UnsafeMutablePointer<Borrowed<Registration>>) -> Borrowed<Plan>? {
        guard failing?.variants != nil, case let cached = cachedNow(in: container, locals), cached.count > 0 else { return .init(self) }
        return variant(forCached: cached.bits, count: cached.count, from: container, locals)?.pickedForCaches(container, locals)
    }

    /// Which plan serves a run of this one that found `cached` (a bit each, `cachedNow`: read from the caches, or a
    /// request's claims, `runRequest`) cached in the resolving container, the one rule for every variant. Read before
    /// any factory runs, as the build reads the cache where its walk asks: an instance published there stays until
    /// the container closes.
    /// - None cached: this plan.
    /// - A failing plan's `Failing.containers` frames (bit n: the n-th, outermost first): the outermost cached one's
    ///   `Failing.variants` plan, recorded on its first pick (`failingVariant`, walked from `container` for a child's
    ///   plan; the build takes that frame's key cached and never meets the error; picked again for its own frames,
    ///   `pickedForCaches`).
    /// - Container steps (bit i: step i), every one: the `cachedVariant` (nil: none, this plan skips under them; for a
    ///   run up to a cut whose met step's asker is among them, `cut`, the `mixedVariant` of them all: the plan with them
    ///   leaves, which does not meet that step there, `Graph.replayMeeting`; for a creation plan's claims, one a creation
    ///   step under them a step still made asks for too: the creating walk with them leaves, `Graph.claimWithContainerSteps`).
    /// - Some, not the others: the `mixedVariant` for that set (nil: none fits), past `maxMixedVariants` sets one
    ///   recorded for the run and kept by no plan (`keptByNone`: the caller holds it till the run ends).
    /// `count`: how many are cached, where `cached` cannot say (a container step past the 64th step: a wide plan,
    /// which keeps no mixed variants, `wideMasks`).
    func variant(forCached cached: UInt, count: Int? = nil, cut: Bool = false, from container: Container,
                 _ locals: UnsafeMutablePointer<Borrowed<Registration>>) -> Plan? {
        let count = count ?? cached.nonzeroBitCount
        if count == 0 { return self }
        if let failing { return failing.variants == nil ? self : failingVariant(cached.trailingZeroBitCount, container, locals)?.object }
        if count == containerSteps.count { return cachedVariant ?? (cut || createsShared ? mixedVariant(cached) : nil) }
        return mixedVariant(cached)
    }

    /// The set `variant(forCached:)` picks by, read now from the caches (without claiming) where the build would
    /// look: a failing plan's `Failing.containers` frames (only the outermost cached one: it asks for nothing under
    /// it), each where the build's frame reads it (`Failing.containerLookups`: the resolving container, a singleton's
    /// from further up, a stacked level), else its container steps, each where it looks up (`lookup(of:_:)`).
    /// `locals`: a child's plan's, written by `fits` (a local frame's or step's registration).
    func cachedNow(in resolving: Container, _ locals: UnsafeMutablePointer<Borrowed<Registration>>) -> (bits: UInt, count: Int) {
        if let failing {
            for (n, frame) in failing.containers.enumerated() {
                let local = failing.openLocals.isEmpty ? -1 : failing.openLocals[frame]
                let (lookup, slot) = failing.containerLookups[n]
                let cache = slot >= 0 ? Self.level(of: slot, locals) : lookup ?? Borrowed(resolving)
                if Self.isCached(local < 0 ? failing.open[frame] : locals[local], in: cache) { return (1 << UInt(n), 1) }
            }
            return (0, 0)
        }
        var cached: (bits: UInt, count: Int) = (0, 0)
        for i in containerSteps where Self.isCached(registration(of: i, locals), in: lookup(of: i, locals) ?? Borrowed(resolving)) {
            if i < UInt.bitWidth { cached.bits |= 1 << UInt(i) }  // (past the 64th step: counted only)
            cached.count += 1
        }
        return cached
    }

    /// Whether `registration`'s instance is cached in `container` now (read, not claimed: `SharedCache.cached`).
    static func isCached(_ registration: Borrowed<Registration>, in container: Borrowed<Container>) -> Bool {
        guard let hit = registration.borrow({ r in container.borrow { SharedCache.cached(r, r.specReference.borrow { $0.scope }, in: $0) } }) else {
            return false
        }
        hit.release()
        return true
    }

    /// Container-scoped registrations a walk takes as leaves from their caches (`Recorder.leafContainers`), not walked
    /// into: a failing plan's variant's. A child's own registration by its slot in the component (`Recorder.leafSlots`):
    /// the same in every child the plan serves (`fits`), whose registrations there are each run's.
    /// `graph`: keys a request's graph has (`graphVariant`), steps its run takes from the graph (`Recorder.graphLeaves`).
    struct Leaves: Sendable {
        var ids: Set<ObjectIdentifier> = []
        var slots: Set<Int> = []
        var graph: Set<ObjectIdentifier> = []
    }

    /// `failing` with what records its `variants` on first need (`variant`): from `root`, `creating` or not, `leaves`.
    static func withVariants(_ failing: Failing, _ root: Registration, creating: Bool, leaves: Leaves) -> Failing {
        guard !failing.containers.isEmpty else { return failing }
        var failing = failing
        (failing.variants, failing.root, failing.creating, failing.leaves) = (MixedVariants(), Borrowed(root), creating, leaves)
        return failing
    }

    /// The variant of container frame `failing.containers[n]` (`Failing.variants`), recorded now if no pick needed it
    /// before (as `mixedVariant`, per state, walked without the store's lock): walked from `container` for a child's plan (the
    /// resolving child, which `fits` it), for the configuration that walk sees: one changed since this plan's pick (a
    /// race) is the state the build walks then too. A declined plan when its walk declines (the build serves that
    /// state). Nil when a child's component changed since the pick (a race: its slots are not those `fits` wrote; not
    /// kept): the caller picks again, for the child as it is (`Registration.picked`: nil).
    func failingVariant(_ n: Int, _ container: Container, _ locals: UnsafeMutablePointer<Borrowed<Registration>>) -> Borrowed<Plan>? {
        let failing = failing.unsafelyUnwrapped
        let frame = failing.containers[n]
        let local = failing.openLocals.isEmpty ? -1 : failing.openLocals[frame]
        var leaves = failing.leaves
        if local < 0 { leaves.ids.insert(ObjectIdentifier(failing.open[frame].object)) } else { leaves.slots.insert(local) }
        let variants = failing.variants.unsafelyUnwrapped
        let known = variants.known(UInt(n))
        if known.found { return known.plan.map { .init($0) } }
        // Walked without the store's lock (`MixedVariants`), kept under it: the first kept serves every run.
        let root = failing.root.unsafelyUnwrapped.object
        let configuration = root.container.configuration
        let plan: Plan
        do throws(Decline) {
            plan = try Self.recordVariant(root, configuration: configuration, creating: failing.creating,
                                          child: hasLocals ? container : nil, leaves: leaves)
        } catch {
            plan = Self.declined(configuration, error)
        }
        guard plan.declines || plan.hasSameComponent(as: self) else { return nil }
        // (The store holds what it returns: a `Borrowed` of it outlives this call.)
        return variants.keep(UInt(n), plan).plan.map { .init($0) }
    }

    /// The plan of the build that takes the asker of the step a cut run meets cached (`Graph.replayMeeting`), where
    /// `variant(forCached:cut:)` has none: a failing plan's (its bits name frames, not steps), a wide one's (no bit past
    /// the 64th step), a child's (no `mixedVariants`; its `cachedVariant`, if any, serves every one cached). Walked as a
    /// failing plan's variants (`recordVariant`: from `root`, creating if this plan creates), the container steps cached
    /// now in the resolving container and this plan's container-scoped leaves taken from their caches (a child's own by
    /// slot), for the run only (`keptByNone`). Nil: its walk declines, or a child's component changed since the pick.
    /// `graph`, `creating`: `graphVariant`'s (its leaves taken from the graph; creating or not as the request's pick).
    func leafVariant(_ root: Registration, from container: Container, _ locals: UnsafeMutablePointer<Borrowed<Registration>>,
                     graph: Set<ObjectIdentifier> = [], creating: Bool? = nil) -> Plan? {
        var leaves = failing?.leaves ?? Leaves()
        leaves.graph = graph
        for i in steps.indices {
            let r = registration(of: i, locals)
            if steps[i].isContainer ? !Self.isCached(r, in: lookup(of: i, locals) ?? Borrowed(container))
                : !steps[i].isShared || !r.borrow({ $0.spec.scope.isPerResolvingContainer }) { continue }
            if steps[i].local >= 0 { leaves.slots.insert(steps[i].local) } else { leaves.ids.insert(ObjectIdentifier(r.object)) }
        }
        let plan: Plan
        do throws(Decline) {
            plan = try Self.recordVariant(root, configuration: root.container.configuration, creating: creating ?? createsShared,
                                          child: hasLocals ? container : nil, leaves: leaves)
        } catch {
            return nil
        }
        guard !plan.declines, !hasLocals || plan.hasSameComponent(as: self) else { return nil }
        plan.keptByNone = true
        return plan
    }

    /// A request's failing plan whose open frames include keys its graph has (`has`; `Graph.runAsked`: a configuration
    /// changed before the request, the walk meeting its error under a key the graph made before): the build takes each
    /// from the graph and never asks for what is below it, so the plan of that walk, those keys leaves the run takes
    /// from the graph (`Leaves.graph`, `takeFromGraph`), walked again while it fails under one more the graph has (as
    /// `leafVariant`: from `root`, `creating`, this plan's container leaves too; for the run only, `keptByNone`). Nil:
    /// a walk declines or has a `cachedVariant`, or a child's component changed since the pick (since branch
    /// failopen; built before, `requestInGraph`).
    func graphVariant(_ root: Registration, creating: Bool, from container: Container,
                      _ locals: UnsafeMutablePointer<Borrowed<Registration>>, has: (Borrowed<Registration>) -> Bool) -> Plan? {
        var graph = Set<ObjectIdentifier>(), plan = self
        while let open = plan.failing?.allOpen(locals).filter(has), !open.isEmpty {
            let before = graph.count
            graph.formUnion(open.map { ObjectIdentifier($0.object) })
            guard graph.count > before, let next = leafVariant(root, from: container, locals, graph: graph, creating: creating),
                  next.cachedVariant == nil else { return nil }
            plan = next
        }
        return plan === self ? nil : plan
    }

    /// A variant's walk (`failingVariant`): as the failing plan's, `leaves` taken from their caches. A child's creating walk
    /// that creates nothing: its warm plan.
    private static func recordVariant(_ root: Registration, configuration: UInt, creating: Bool, child: Container?,
                                      leaves: Leaves) throws(Decline) -> Plan {
        guard let child else { return try record(root, configuration: configuration, creating: creating, leaves: leaves) }
        do throws(Decline) {
            return try record(root, configuration: configuration, child: child, creating: creating, leaves: leaves)
        } catch {
            guard creating && error == .notCached else { throw error }
            return try record(root, configuration: configuration, child: child, leaves: leaves)
        }
    }

    /// Whether `other`'s component has this plan's slots (a variant recorded through the resolving child: each of its
    /// local steps names a slot `fits` wrote for this plan). None for an owner's plans.
    private func hasSameComponent(as other: Plan) -> Bool {
        component.count == other.component.count && zip(component, other.component).allSatisfy { a, b in
            a.key == b.key && a.scope == b.scope && a.paramInfo == b.paramInfo && a.completes == b.completes && a.cleared == b.cleared
                && a.startsLevel == b.startsLevel
        }
    }

    /// The reason of a variant recorded declined (`failingVariant`): why a resolve this failing plan picked for went to the build.
    var declinedVariant: Decline? {
        failing?.variants?.plans.withLock { plans in plans.first { $0.plan?.declines == true }?.plan?.decline }
    }

    var stepCount: Int { steps.count }


    /// Whether the caches are in the state this creation plan was compiled for: every shared leaf
    /// cached, every creation step's registration not (read without claiming: the claims decide).
    /// `locals`: a child's plan's, written by `fits` (a local step's cache is the resolving child's registration's).
    /// Not the request's leaves (a value, a container-scoped leaf): each resolving container's, read by the run.
    /// `takingPublished`: creation steps cached too (a pick after the caches changed: its claims take them).
    func matchesCaches(_ locals: UnsafeMutablePointer<Borrowed<Registration>>? = nil, takingPublished: Bool = false) -> Bool {
        for shared in sharedSteps where !shared.isValue && !shared.inResolving {
            guard let hit = registration(of: shared.step, locals).borrow({ $0.cachedRetained(shared.scope) }) else { return false }
            hit.release()
        }
        // A failing plan's open frames of shared registrations (`Failing.opensShared`): the build takes one cached
        // and never meets the error there.
        if let failing, failing.opensShared {
            for (i, open) in failing.open.enumerated() {
                let r = failing.openLocals.isEmpty || failing.openLocals[i] < 0 ? open : locals.unsafelyUnwrapped[failing.openLocals[i]]
                guard let hit = r.borrow({ $0.cachedRetained($0.spec.scope) }) else { continue }
                hit.release()
                return false
            }
        }
        if takingPublished { return true }
        for creation in creations {
            if let hit = registration(of: creation.step, locals).borrow({ $0.cachedRetained(creation.scope) }) {
                hit.release()
                return false
            }
        }
        return true
    }
}
