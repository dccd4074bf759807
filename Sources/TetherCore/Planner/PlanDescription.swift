/// The recorded plan of a key, handed to an embedding layer that calls the
/// factories itself (the Python binding runs Python factories without crossing
/// into the library per resolve). Only plain plans are described: every step
/// made by this resolve (graph or transient scope) or a leaf taken from a
/// singleton or weak-scope cache (`Step.cached`), runtime arguments of the root only,
/// completion callbacks only declared ones (`DeclaredCompletion`) whose targets
/// are graph-scoped steps and whose strong targets close no cycle of strong
/// edges (a resolve reports `retainCycle` there); resolver slots are allowed,
/// since the runner makes every instance and needs no resolver. The runner
/// calls the factories in step order, each with the instances its inputs name,
/// then the completions in order, exactly as `Graph` would.
public struct PlanDescription: Sendable {
    public struct Step: Sendable {
        public let registration: Registration
        /// Per declared slot: the step whose instance it receives, `context`, `resolver` or `argument(n)`.
        public let inputs: ArraySlice<Int>
        /// The step whose factory asked for this one first, -1 for the root: the
        /// path a failure message names (`Graph.factoryFailure`).
        public let parent: Int
        /// A singleton- or weak-scoped dependency: the runner takes its cached
        /// instance (no slots); if there is none, it resolves the key instead.
        public let cached: Bool
        /// A declared value key (`Container.declareValue`) of the describing container or a
        /// parent: the runner takes the instance the resolving container provides for it
        /// (`provideValue`); where none does, it resolves the root instead (which reports it missing).
        public let value: Bool
        /// A container-scoped registration: made at most once per resolving container. Where
        /// the container resolved from holds its instance already (made by an earlier run of a
        /// plan there), the runner takes that one; else it makes it with its inputs and keeps it
        /// for that container, which lets go of it when it closes, after what was made after it
        /// (`Container.adoptScoped` hands it to the container's own cache). Its slots take
        /// declared values and other container steps only.
        public let container: Bool
    }

    /// A completion callback the resolve runs: callback `number` (from 0, in the
    /// order added) of step `step`'s registration, with the steps of its targets.
    public struct Completion: Sendable {
        public let step: Int
        public let number: Int
        public let targets: [Int]
        /// A resolver-form callback (no declared targets): what its resolver's `get`/`weak`
        /// finds is in `keys`; the rest the library answers (`Container.resolverAnswer`).
        public let resolverForm: Bool
    }

    /// A key a resolver-form callback's resolver finds in the graph: the instance of `step`.
    public struct KeyStep: Sendable {
        public let key: Key
        public let step: Int
        /// Bit `s`: a strong edge from step `s`'s instance to this one would close a retain
        /// cycle through the factories' edges (the step's own bit included). Only those
        /// edges: once a callback added a strong edge, the library answers (`resolverAnswer`).
        public let closes: UInt64
    }

    public static let context = Plan.context
    public static let resolver = Plan.resolver
    public static func argument(_ n: Int) -> Int { Plan.argument(n) }

    /// Post-order, root last.
    public let steps: [Step]

    /// The registrations from the root down to step `step` (of the plan of `key`), as a
    /// resolve's frames hold them while its factory runs: a failure's path, what a
    /// binding's replay constructs (`Reentry.enterReplay`).
    func constructing(_ step: Int, of key: Key) throws(TetherError) -> [Registration] {
        guard steps.indices.contains(step) else { throw TetherError.noSuchStep(key, step, of: steps.count) }
        var chain: [Registration] = []
        var at = step
        while at >= 0 {
            chain.append(steps[at].registration)
            at = steps[at].parent
        }
        return chain.reversed()
    }
    /// In the order `Graph` runs them: by step, then by number.
    public let completions: [Completion]
    /// With a resolver-form completion: every key its resolver finds in the graph (its
    /// graph-scoped and cached steps); otherwise empty.
    public let keys: [KeyStep]
}

extension Container {
    /// The plan of `key` resolved from here, or nil when there is none to hand
    /// out (a trace hook set, the graph is not plain, or cannot be built: a resolve
    /// reports why). Valid while `configuration` (read before this call) is unchanged.
    /// `completions`: whether plans with completion callbacks are described (declared ones,
    /// and resolver-form ones where `describedCompletions` can answer their resolvers).
    public func describePlan(_ key: Key, completions describesCompletions: Bool = false) throws(TetherError) -> PlanDescription? {
        guard !isClosed else { throw TetherError.containerFreed }
        guard let root = unretainedRegistration(for: key) else {
            throw TetherError.notRegistered(key)
        }
        // A container-scoped root is a container step (made once per resolving container); other shared ones are cache hits.
        // None while a trace hook is set: an embedding layer resolves through the container then, whose plans run traced
        // (`Plan.RunMode.traced`). (`usesPlans` before branch twooracles, false too where a test had set plans off.)
        guard traceWord.load(ordering: .relaxed) == 0, root.borrow({ !$0.spec.scope.isShared || $0.spec.scope.isPerResolvingContainer }) else { return nil }
        let recorder = Plan.Recorder(lookup: self, allowsResolvers: true, allowsArguments: true, allowsValues: true,
                                     allowsContainer: true)
        guard recorder.visit(root) != nil else { return nil }
        guard !recorder.steps.contains(where: { $0.completes && !describesCompletions }) else { return nil }
        let steps = recorder.steps.map { step in
            let registration = step.registration.object
            let slots = step.isShared ? 0 : registration.params.count
            return PlanDescription.Step(registration: registration,
                                        inputs: recorder.inputs[step.firstInput ..< step.firstInput + slots],
                                        parent: step.parent, cached: step.isShared && !registration.isDeclaredValue,
                                        value: registration.isDeclaredValue, container: step.isContainer)
        }
        guard let (completions, keys) = describedCompletions(recorder) else { return nil }
        return PlanDescription(steps: steps, completions: completions, keys: keys)
    }

    /// The completion calls of a recorded plan, and with a resolver-form one the keys its
    /// resolver finds in the graph; nil when they cannot be described: a target that is not a
    /// step of the graph (the resolve would build it), strong targets closing a cycle of strong
    /// edges, or a resolver-form callback whose resolver the plan cannot answer (`answersResolvers`).
    private func describedCompletions(_ recorder: Plan.Recorder) -> ([PlanDescription.Completion], [PlanDescription.KeyStep])? {
        guard let calls = recorder.declaredCompletions(resolvers: true) else { return nil }
        let factoryEdges = Self.factoryEdges(recorder)
        // Strong edges per step: its factory's inputs, then its strong completion targets.
        var strong = factoryEdges
        for call in calls {
            for (param, target) in zip(call.completion?.params ?? [], call.targets) {
                if case .dependency = param { strong[call.step].append(target) }
            }
        }
        guard GraphWalk.cycles(count: strong.count, first: true, successors: { strong[$0] }).isEmpty else { return nil }
        let resolverForm = calls.contains { $0.completion == nil }
        // A resolver's strong edge is checked against the factories' edges (`KeyStep.closes`):
        // declared strong targets would add edges that depend on when they run.
        guard !resolverForm || strong == factoryEdges && answersResolvers(recorder) else { return nil }
        let described = calls.map { PlanDescription.Completion(step: $0.step, number: $0.number, targets: $0.targets, resolverForm: $0.completion == nil) }
        guard resolverForm else { return (described, []) }
        // `KeyStep.closes` has a bit per step: a larger graph's resolvers are the library's to answer.
        guard recorder.steps.count <= UInt64.bitWidth else { return nil }
        let keys = recorder.steps.indices.filter { recorder.steps[$0].isKeyed }.map { step in
            var closes: UInt64 = 0
            var stack = [step]
            while let at = stack.popLast() {  // what `step` reaches, itself included
                guard closes & (1 << UInt64(at)) == 0 else { continue }
                closes |= 1 << UInt64(at)
                stack += factoryEdges[at]
            }
            return PlanDescription.KeyStep(key: recorder.steps[step].registration.borrow { $0.key }, step: step, closes: closes)
        }
        return (described, keys)
    }

    /// Per step of a recorded plan, the steps its factory's inputs name: its strong edges.
    private static func factoryEdges(_ recorder: Plan.Recorder) -> [[Int]] {
        recorder.steps.map { step in
            let count = step.isShared ? 0 : step.registration.borrow { $0.params.count }
            return recorder.inputs[step.firstInput ..< step.firstInput + count].filter { $0 >= 0 }
        }
    }

    /// Whether a binding can answer the resolvers of the plan's resolver-form callbacks: a key
    /// of the plan's table (`PlanDescription.keys`) from the plan, any other visible key by an
    /// ordinary resolve from here (or a failing one: the library then says what the resolver
    /// reports, `resolverAnswer`). That holds when no such key's build shares an instance with
    /// the graph or with another resolve of the callbacks: every registration it would make is
    /// transient, with DEP, WEAK and CONTEXT slots only and no completion callback (a singleton
    /// such a resolve created would stay published if the replay then failed, where the
    /// library's resolve would destroy it with the rest); and no step is a declared value (a
    /// child's own, not this container's).
    private func answersResolvers(_ recorder: Plan.Recorder) -> Bool {
        guard !recorder.steps.contains(where: { $0.isContainer || $0.registration.borrow { $0.isDeclaredValue } }) else { return false }
        let keyed = Set(recorder.steps.filter(\.isKeyed).map { ObjectIdentifier($0.registration.object) })
        var alone: [ObjectIdentifier: Bool] = [:]
        func buildsAlone(_ r: Registration) -> Bool {
            let id = ObjectIdentifier(r)
            if let known = alone[id] { return known }
            alone[id] = false  // on the way: a constructor cycle is not alone
            let spec = r.spec
            guard !spec.scope.isShared, !spec.scope.isKeyedInGraph, spec.completionCount == 0, !r.isDeclaredValue else { return false }
            for param in r.params where param != .context {
                // A constructor edge to one key that builds alone; nothing a resolve makes per slot.
                guard param.isConstructorEdge, param.kind.edges == .one, let dep = unretainedRegistration(for: param.key!),
                      dep.borrow({ !$0.hasArguments && buildsAlone($0) }) else { return false }
            }
            alone[id] = true
            return true
        }
        // A key with runtime arguments: a resolver refuses it, the library says so (`resolverAnswer`).
        return visibleRegistrations().allSatisfy { keyed.contains(ObjectIdentifier($0)) || $0.hasArguments || buildsAlone($0) }
    }

    /// What the resolver of the described plan of `key`'s completion call `completion` (a
    /// resolver-form one) answers where the plan's key table does not settle it: a `get`
    /// (`weak` false) or `weak` of `target`, after the callbacks of this resolve added the
    /// strong edges `late` (from step, to step) beyond the factories'. Returns when the
    /// binding may go on (the target's step, or an ordinary resolve of a key outside the plan);
    /// throws what the library's resolver would: `notFound`, `argumentMismatch`, `retainCycle`,
    /// and `wrongContext` when the binding says its resolver is used on another thread during the callback.
    public func resolverAnswer(_ key: Key, completion: Int, target: Key, weak: Bool, otherThread: Bool = false,
                               late: [(from: Int, to: Int)]) throws(TetherError) {
        guard !otherThread else { throw Resolver.wrongContext }
        guard let plan = try describePlan(key, completions: true) else {
            throw TetherError.noDescribedPlan(key)
        }
        guard plan.completions.indices.contains(completion), plan.completions[completion].resolverForm else {
            throw TetherError(.invalidArgument, "completion call \(completion) of the plan of \(key.quoted) is not a resolver-form callback")
        }
        let owner = plan.completions[completion].step
        let ownerKey = plan.steps[owner].registration.key
        guard let registration = unretainedRegistration(for: target) else { throw Resolver.missing(target, owner: ownerKey, path: []) }
        guard !registration.borrow({ $0.hasArguments }) else { throw Resolver.takesArguments(target, owner: ownerKey) }
        guard !weak, let step = plan.keys.first(where: { $0.key == target })?.step else { return }
        var edges = plan.steps.map { step in step.inputs.filter { $0 >= 0 } }
        for edge in late {
            guard edges.indices.contains(edge.from), edges.indices.contains(edge.to) else {
                throw TetherError(.invalidArgument, "the late edge \(edge.from) -> \(edge.to) names no step of the plan of \(key.quoted)")
            }
            edges[edge.from].append(edge.to)
        }
        let path = StrongPath.find(from: step, to: owner, id: { $0 }, key: { plan.steps[$0].registration.key }) { edges[$0] }
        if let path { throw TetherError.retainCycle(from: ownerKey, to: target, path: path) }
    }

    /// The error a resolve of `key` from here reports when the factory of step
    /// `step` of its described plan fails (`completion` nil), or its completion
    /// call `completion` (an index into `completions`), with the runner's
    /// `reason`: the message, status and path the library's own resolve gives.
    public func describedFailure(_ key: Key, step: Int, completion: Int?, reason: String?) throws(TetherError) -> TetherError {
        let failure = CallbackFailure(reason: reason)
        guard let plan = try describePlan(key, completions: true) else {
            throw TetherError.noDescribedPlan(key)
        }
        if let completion {
            guard plan.completions.indices.contains(completion) else {
                throw TetherError(.invalidArgument, "the plan of \(key.quoted) has \(plan.completions.count) completion calls, not \(completion + 1)")
            }
            let call = plan.completions[completion]
            return Graph.completionFailure(plan.steps[call.step].registration.key, call.number, failure)
        }
        let chain = try plan.constructing(step, of: key)
        return Graph.factoryFailure(plan.steps[step].registration, failure, path: chain.map(\.key))
    }
}
