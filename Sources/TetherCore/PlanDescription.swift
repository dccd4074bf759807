/// The recorded plan of a key, handed to an embedding layer that calls the
/// factories itself (the Python binding runs Python factories without crossing
/// into the library per resolve). Only plain plans are described: every step
/// made by this resolve (graph or transient scope), no completion callbacks, no
/// runtime arguments; resolver slots are allowed, since the runner makes every
/// instance and needs no resolver. The runner calls the factories in step
/// order, each with the instances its inputs name, exactly as `Graph` would.
public struct PlanDescription: Sendable {
    public struct Step: Sendable {
        public let registration: Registration
        /// Per declared slot: the step whose instance it receives, `context` or `resolver`.
        public let inputs: ArraySlice<Int>
        /// The step whose factory asked for this one first, -1 for the root: the
        /// path a failure message names (`Graph.factoryFailure`).
        public let parent: Int
    }

    public static let context = Plan.context
    public static let resolver = Plan.resolver

    /// Post-order, root last.
    public let steps: [Step]
}

extension Container {
    /// The plan of `key` resolved from here, or nil when there is none to hand
    /// out (plans off, the graph is not plain, or cannot be built: a resolve
    /// reports why). Valid while `configuration` (read before this call) is unchanged.
    public func describePlan(_ key: Key) throws(TetherError) -> PlanDescription? {
        guard !isClosed else { throw TetherError(.invalidHandle, "the container was freed") }
        guard let root = unretainedRegistration(for: key) else {
            throw TetherError(.notFound, "no registration for \(key.quoted); register it first (tether_register) or check the spelling")
        }
        guard usesPlans, !root._withUnsafeGuaranteedRef({ $0.spec.scope.isShared }) else { return nil }
        var recorder = Plan.Recorder(lookup: self, allowsResolvers: true)
        guard recorder.visit(root) != nil else { return nil }
        guard !recorder.steps.contains(where: { $0.isShared || $0.completes }) else { return nil }
        return PlanDescription(steps: recorder.steps.map { step in
            let registration = step.registration.takeUnretainedValue()
            return .init(registration: registration,
                         inputs: recorder.inputs[step.firstInput ..< step.firstInput + registration.params.count],
                         parent: step.parent)
        })
    }
}
