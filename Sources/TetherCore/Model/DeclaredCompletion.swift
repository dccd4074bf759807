/// A completion callback that declares its targets, as a factory declares its
/// params: `.dependency(K)` (the graph's instance of K, with a strong edge from
/// the completed instance) or `.weak(K)` (a weak edge). Targets resolve within
/// the graph exactly as `Resolver.get` / `getWeakTarget` would. Declared, so a
/// plan can hand them over without a resolver (`Plan.Objects`,
/// `PlanDescription`). A subclass overrides `complete(_:targets:)`.
open class DeclaredCompletion: Completion, @unchecked Sendable {
    public let params: [Param]

    /// `params`: `.dependency` and `.weak` only (`isTarget`; the ABI checks client input first).
    public init(params: [Param]) {
        precondition(params.allSatisfy(DeclaredCompletion.isTarget), "Tether: a declared completion takes .weak or .dependency params only")
        self.params = params
    }

    public static func isTarget(_ param: Param) -> Bool { param.kind.isCompletionTarget }

    /// Completes `instance`; `targets[i]` is the graph's instance for param `i`,
    /// unretained: the graph keeps every one alive until the resolve returns.
    open func complete(_ instance: Instance, targets: UnsafeBufferPointer<Borrowed<Instance>>) throws(CallbackFailure) {
        fatalError("Tether: \(Self.self) must override complete(_:targets:)")
    }

    /// Resolves the targets through the resolver (which records the edges); a
    /// target it cannot hand over fails the resolve with that error (`CallbackFailure.target`).
    /// (The targets go in a stack buffer: a resolve allocates nothing for them.)
    public final func complete(_ resolver: Resolver, instance: Instance) throws(CallbackFailure) {
        let failure = withUnsafeTemporaryAllocation(of: Borrowed<Instance>.self, capacity: max(params.count, 1)) { buffer -> CallbackFailure? in
            do throws(TetherError) {
                for (i, param) in params.enumerated() {
                    let target = if case .weak(let key) = param { try resolver.getWeakTarget(key) }
                                 else { try resolver.get(param.key!, backEdge: "declare that target weak", fix: .weakTarget) }
                    buffer[i] = Borrowed(target)
                }
            } catch {
                return CallbackFailure(target: error)
            }
            do throws(CallbackFailure) {
                try complete(instance, targets: UnsafeBufferPointer(rebasing: buffer[0 ..< params.count]))
            } catch { return error }
            return nil
        }
        if let failure { throw failure }
    }
}
