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
    }

    /// A completion callback the resolve runs: callback `number` (from 0, in the
    /// order added) of step `step`'s registration, with the steps of its targets.
    public struct Completion: Sendable {
        public let step: Int
        public let number: Int
        public let targets: [Int]
    }

    public static let context = Plan.context
    public static let resolver = Plan.resolver
    public static func argument(_ n: Int) -> Int { Plan.argument(n) }

    /// Post-order, root last.
    public let steps: [Step]
    /// In the order `Graph` runs them: by step, then by number.
    public let completions: [Completion]
}

extension Container {
    /// The plan of `key` resolved from here, or nil when there is none to hand
    /// out (plans off, the graph is not plain, or cannot be built: a resolve
    /// reports why). Valid while `configuration` (read before this call) is unchanged.
    /// `completions`: whether plans with (declared) completion callbacks are described.
    public func describePlan(_ key: Key, completions describesCompletions: Bool = false) throws(TetherError) -> PlanDescription? {
        guard !isClosed else { throw TetherError(.invalidHandle, "the container was freed") }
        guard let root = unretainedRegistration(for: key) else {
            throw TetherError(.notFound, "no registration for \(key.quoted); register it first (tether_register) or check the spelling",
                              ErrorParts(.register, key: key))
        }
        guard usesPlans, !root._withUnsafeGuaranteedRef({ $0.spec.scope.isShared }) else { return nil }
        var recorder = Plan.Recorder(lookup: self, allowsResolvers: true, allowsArguments: true, allowsValues: true)
        guard recorder.visit(root) != nil else { return nil }
        guard !recorder.steps.contains(where: { $0.completes && !describesCompletions }) else { return nil }
        let steps = recorder.steps.map { step in
            let registration = step.registration.takeUnretainedValue()
            let slots = step.isShared ? 0 : registration.params.count
            return PlanDescription.Step(registration: registration,
                                        inputs: recorder.inputs[step.firstInput ..< step.firstInput + slots],
                                        parent: step.parent, cached: step.isShared && !registration.isDeclaredValue,
                                        value: registration.isDeclaredValue)
        }
        guard let completions = describedCompletions(recorder) else { return nil }
        return PlanDescription(steps: steps, completions: completions)
    }

    /// The completion calls of a recorded plan, or nil when one cannot be described:
    /// not declared, a target that is not a step of the graph (the resolve would
    /// build it), or strong targets closing a cycle of strong edges.
    private func describedCompletions(_ recorder: Plan.Recorder) -> [PlanDescription.Completion]? {
        guard let calls = recorder.declaredCompletions() else { return nil }
        // Strong edges per step: its factory's inputs, then its strong completion targets.
        var strong: [[Int]] = recorder.steps.map { step in
            let count = step.isShared ? 0 : step.registration._withUnsafeGuaranteedRef { $0.params.count }
            return recorder.inputs[step.firstInput ..< step.firstInput + count].filter { $0 >= 0 }
        }
        for call in calls {
            for (param, target) in zip(call.completion.params, call.targets) {
                if case .dependency = param { strong[call.step].append(target) }
            }
        }
        guard !Self.hasCycle(strong) else { return nil }
        return calls.map { .init(step: $0.step, number: $0.number, targets: $0.targets) }
    }

    /// The error a resolve of `key` from here reports when the factory of step
    /// `step` of its described plan fails (`completion` nil), or its completion
    /// call `completion` (an index into `completions`), with the runner's
    /// `reason`: the message, status and path the library's own resolve gives.
    public func describedFailure(_ key: Key, step: Int, completion: Int?, reason: String?) throws(TetherError) -> TetherError {
        let failure = CallbackFailure(reason: reason)
        guard let plan = try describePlan(key, completions: true) else {
            throw TetherError(.invalidArgument, "\(key.quoted) has no described plan (its configuration changed?): describe it again")
        }
        if let completion {
            guard plan.completions.indices.contains(completion) else {
                throw TetherError(.invalidArgument, "the plan of \(key.quoted) has \(plan.completions.count) completion calls, not \(completion + 1)")
            }
            let call = plan.completions[completion]
            return Graph.completionFailure(plan.steps[call.step].registration.key, call.number, failure)
        }
        guard plan.steps.indices.contains(step) else {
            throw TetherError(.invalidArgument, "the plan of \(key.quoted) has \(plan.steps.count) steps, not \(step + 1)")
        }
        var path: [Key] = []
        var at = step
        while at >= 0 {
            path.append(plan.steps[at].registration.key)
            at = plan.steps[at].parent
        }
        return Graph.factoryFailure(plan.steps[step].registration, failure, path: path.reversed())
    }

    /// Whether the directed graph `edges` (per node, its successors) has a cycle.
    private static func hasCycle(_ edges: [[Int]]) -> Bool {
        var state = [UInt8](repeating: 0, count: edges.count)  // 0 unseen, 1 on the path, 2 done
        func visit(_ node: Int) -> Bool {
            state[node] = 1
            for next in edges[node] {
                if state[next] == 1 || (state[next] == 0 && visit(next)) { return true }
            }
            state[node] = 2
            return false
        }
        return edges.indices.contains { state[$0] == 0 && visit($0) }
    }
}
