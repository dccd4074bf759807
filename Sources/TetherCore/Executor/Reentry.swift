/// A resolve nested in a factory (through a resolve call, a lazy provider, a
/// binding's resolve) that asks for an instance the thread is constructing
/// further out: a constructor cycle, reported with its whole path, never a
/// second instance or a recursion down to the nesting limit. Nested resolves
/// build step by step (no plans) while anything is under construction, so
/// every step is checked against what the outer resolves are constructing.
enum Reentry {
    /// The registrations resolves under way on this thread are constructing,
    /// outermost first: a plan's steps from its root to the one whose factory
    /// runs, then the frames of the thread's graph and of nested graphs.
    static func constructing(_ thread: ThreadState) -> [Borrowed<Registration>] {
        // A binding's replay calls into the library only from a factory of its own: outermost.
        var registrations: [Borrowed<Registration>] = thread.replaying.map { .init($0) }
        let progress = thread.planProgress.pointee
        if let plan = progress.plan { registrations += plan.borrow { $0.constructing(at: progress.step, progress.locals) } }
        registrations += thread.graph.constructing
        for graph in thread.nestedGraphs { registrations += graph.borrow { $0.constructing } }
        return registrations
    }

    /// Whether anything but `graph` is constructing on this thread: a plan's step, or a frame
    /// of another graph. A graph's own frames it checks itself; what others construct is
    /// known to it only through `outer`, which must then be taken afresh: another graph may
    /// have begun constructing after this one began (an older callback's resolver used from
    /// a resolve nested further in).
    static func othersConstruct(_ thread: ThreadState, besides graph: Graph) -> Bool {
        if thread.planProgress.pointee.plan != nil || !thread.replaying.isEmpty { return true }
        if thread.graph !== graph && thread.graph.isConstructing { return true }
        for nested in thread.nestedGraphs where !(nested === Borrowed(graph)) {
            if nested.borrow({ $0.isConstructing }) { return true }
        }
        return false
    }
}

extension Reentry {
    /// A binding runs the described plan of `key` from `container` itself and calls into the
    /// library from the factory of step `step` (a resolve nested in it): until `leaveReplay`,
    /// this thread's resolves see the steps from the plan's root down to `step` under
    /// construction, as they see a plan's or a graph's own (a key among them is a cycle).
    /// Registrations already entered are not added again (the same factory calling in again
    /// from a resolve nested further in).
    static func enterReplay(_ key: Key, step: Int, from container: Container) throws(TetherError) {
        guard let plan = try container.describePlan(key, completions: true) else {
            throw TetherError.noDescribedPlan(key)
        }
        let chain = try plan.constructing(step, of: key)
        let thread = ThreadState.currentReference.object
        let added = chain.filter { r in !thread.replaying.contains { $0 === r } }
        thread.replaying += added
        thread.replayGroups.append(added.count)
    }

    /// A binding's factory for the last of `keys` (the path a resolve from `container` took to
    /// it, root first, as a failure's parts name it) suspended and goes on outside the library
    /// (Python's `await`): until `leaveReplay`, this thread's resolves see the registrations of
    /// that path under construction, as `enterReplay` does a described plan's steps, so a resolve
    /// the factory makes meanwhile that needs one of them is a cycle before any factory runs
    /// twice. Each key is looked up as a resolve walks the path: from `container`, and below a
    /// singleton from the singleton's own container; a key with no registration there any more
    /// (re-registered meanwhile) is left out.
    static func enterConstructing(_ keys: [Key], from container: Container) {
        var lookup = container
        var chain: [Registration] = []
        for key in keys {
            guard let registration = lookup.registration(for: key) else { continue }
            chain.append(registration)
            if registration.spec.scope.resolvesFromOwnContainer { lookup = registration.container }
        }
        let thread = ThreadState.currentReference.object
        let added = chain.filter { r in !thread.replaying.contains { $0 === r } }
        thread.replaying += added
        thread.replayGroups.append(added.count)
    }

    /// Undoes the last `enterReplay` or `enterConstructing` of this thread; false when there was none.
    static func leaveReplay() -> Bool {
        let thread = ThreadState.currentReference.object
        guard let count = thread.replayGroups.popLast() else { return false }
        thread.replaying.removeLast(count)
        return true
    }
}

extension Container {
    /// See `Reentry.enterReplay`.
    public func enterReplay(_ key: Key, step: Int) throws(TetherError) { try Reentry.enterReplay(key, step: step, from: self) }
    /// See `Reentry.enterConstructing`.
    public func enterConstructing(_ keys: [Key]) { Reentry.enterConstructing(keys, from: self) }
    /// See `Reentry.leaveReplay`.
    public static func leaveReplay() -> Bool { Reentry.leaveReplay() }
}

/// The plan whose factories a resolve on this thread is calling (only one at a
/// time: plans run only while nothing else is under construction) and the
/// step whose factory runs; written by the plan, read by `Reentry`.
struct PlanProgress {
    var plan: Borrowed<Plan>?
    var step = 0
    /// A child's own registrations bound to a plan's local steps (`Plan.bind`),
    /// `Plan.maxSteps` words, allocated with the thread's state.
    let locals = UnsafeMutablePointer<Borrowed<Registration>>.allocate(capacity: Plan.maxSteps)
}
