import TetherCore

/// tether_plan_step: registration handle, first input, slot count, parent, key, flags (checked in the header).
private let planStepStride = 40
/// tether_plan_step.flags: the step is a cached instance (TETHER_PLAN_STEP_CACHED).
private let planStepCached: UInt32 = 1
/// tether_plan_step.flags: the step is the resolving container's value of its key (TETHER_PLAN_STEP_VALUE).
private let planStepValue: UInt32 = 2
/// tether_plan_step.flags: a container-scoped step, made once per resolving container (TETHER_PLAN_STEP_CONTAINER).
private let planStepContainer: UInt32 = 4

/// tether_plan_completion: step, number, first target, target count, flags (checked in the header).
private let planCompletionStride = 40
/// tether_plan_completion.flags: a resolver-form callback (TETHER_PLAN_COMPLETION_RESOLVER).
private let planCompletionResolver = 1
/// tether_plan_key: key, step, closes (checked in the header).
private let planKeyStride = 16
/// tether_plan_resolver flags: a weak edge (TETHER_PLAN_RESOLVER_WEAK); after its callback returned
/// (TETHER_PLAN_RESOLVER_CLOSED); during it, on another thread (TETHER_PLAN_RESOLVER_OTHER_THREAD).
private let planResolverWeak: UInt32 = 1
private let planResolverClosed: UInt32 = 2
private let planResolverOtherThread: UInt32 = 4

@_cdecl("tether_plan_describe")
public func tether_plan_describe(_ c: OpaquePointer?, _ key: UInt32, _ steps: UnsafeMutableRawPointer?, _ stepCap: Int,
                                 _ inputs: UnsafeMutablePointer<Int32>?, _ inputCap: Int,
                                 _ completions: UnsafeMutableRawPointer?, _ completionCap: Int,
                                 _ stepCount: UnsafeMutablePointer<Int>?, _ inputCount: UnsafeMutablePointer<Int>?,
                                 _ completionCount: UnsafeMutablePointer<Int>?) -> Int32 {
    abiCall { () throws(TetherError) in
        let function: StaticString = "tether_plan_describe"
        guard let stepCount, let inputCount else { throw invalid(function, "step_count and input_count must not be NULL") }
        stepCount.pointee = 0
        inputCount.pointee = 0
        completionCount?.pointee = 0
        guard stepCap == 0 || steps != nil else { throw invalid(function, "steps is NULL but step_cap is \(stepCap)") }
        guard inputCap == 0 || inputs != nil else { throw invalid(function, "inputs is NULL but input_cap is \(inputCap)") }
        guard completionCap == 0 || completions != nil else { throw invalid(function, "completions is NULL but completion_cap is \(completionCap)") }
        let container = try containerArgument(c, function)
        let key = try internedKey(key, function)
        guard let plan = try container.describePlan(key, completions: completionCount != nil) else { return }
        let slots = plan.steps.reduce(0) { $0 + $1.inputs.count }
        let targets = plan.completions.reduce(0) { $0 + $1.targets.count }
        stepCount.pointee = plan.steps.count
        inputCount.pointee = slots + targets
        completionCount?.pointee = plan.completions.count
        guard plan.steps.count <= stepCap, slots + targets <= inputCap, plan.completions.count <= completionCap else {
            throw TetherError(.bufferTooSmall, "\(function): the plan of \(key.quoted) has \(plan.steps.count) steps, \(slots + targets) inputs "
                + "and \(plan.completions.count) completions, the buffers hold \(stepCap), \(inputCap) and \(completionCap); "
                + "call again with buffers of at least *step_count, *input_count and *completion_count")
        }
        var next = 0
        for (i, step) in plan.steps.enumerated() {
            let base = steps! + i * planStepStride
            base.storeBytes(of: step.registration.attachment.load(ordering: .acquiring), as: UInt.self)
            base.storeBytes(of: next, toByteOffset: 8, as: Int.self)
            base.storeBytes(of: step.inputs.count, toByteOffset: 16, as: Int.self)
            base.storeBytes(of: step.parent, toByteOffset: 24, as: Int.self)
            base.storeBytes(of: step.registration.key.id, toByteOffset: 32, as: UInt32.self)
            base.storeBytes(of: step.cached ? planStepCached : step.value ? planStepValue : step.container ? planStepContainer : 0, toByteOffset: 36, as: UInt32.self)
            for input in step.inputs {
                inputs![next] = Int32(input)
                next += 1
            }
        }
        for (i, completion) in plan.completions.enumerated() {
            let base = completions! + i * planCompletionStride
            base.storeBytes(of: completion.step, as: Int.self)
            base.storeBytes(of: completion.number, toByteOffset: 8, as: Int.self)
            base.storeBytes(of: next, toByteOffset: 16, as: Int.self)
            base.storeBytes(of: completion.targets.count, toByteOffset: 24, as: Int.self)
            base.storeBytes(of: completion.resolverForm ? planCompletionResolver : 0, toByteOffset: 32, as: Int.self)
            for target in completion.targets {
                inputs![next] = Int32(target)
                next += 1
            }
        }
    }
}

@_cdecl("tether_plan_failure")
public func tether_plan_failure(_ c: OpaquePointer?, _ key: UInt32, _ step: Int, _ completion: Int,
                                _ reason: UnsafePointer<CChar>?) -> Int32 {
    abiCall { () throws(TetherError) in
        let function: StaticString = "tether_plan_failure"
        let container = try containerArgument(c, function)
        let key = try internedKey(key, function)
        guard completion >= -1 else { throw invalid(function, "completion is \(completion): -1 or the index of a completion call") }
        throw try container.describedFailure(key, step: step, completion: completion < 0 ? nil : completion,
                                             reason: reason.map { String(cString: $0) })
    }
}

@_cdecl("tether_plan_keys")
public func tether_plan_keys(_ c: OpaquePointer?, _ key: UInt32, _ keys: UnsafeMutableRawPointer?, _ cap: Int,
                             _ count: UnsafeMutablePointer<Int>?) -> Int32 {
    abiCall { () throws(TetherError) in
        let function: StaticString = "tether_plan_keys"
        guard let count else { throw invalid(function, "count must not be NULL") }
        count.pointee = 0
        guard cap == 0 || keys != nil else { throw invalid(function, "keys is NULL but cap is \(cap)") }
        let container = try containerArgument(c, function)
        let key = try internedKey(key, function)
        guard let plan = try container.describePlan(key, completions: true) else { return }
        count.pointee = plan.keys.count
        guard plan.keys.count <= cap else {
            throw TetherError(.bufferTooSmall, "\(function): the plan of \(key.quoted) has \(plan.keys.count) keys, the buffer holds \(cap); "
                + "call again with a buffer of at least *count")
        }
        for (i, entry) in plan.keys.enumerated() {
            let base = keys! + i * planKeyStride
            base.storeBytes(of: entry.key.id, as: UInt32.self)
            base.storeBytes(of: UInt32(entry.step), toByteOffset: 4, as: UInt32.self)
            base.storeBytes(of: entry.closes, toByteOffset: 8, as: UInt64.self)
        }
    }
}

@_cdecl("tether_plan_resolver")
public func tether_plan_resolver(_ c: OpaquePointer?, _ key: UInt32, _ completion: Int, _ target: UInt32, _ flags: UInt32,
                                 _ late: UnsafePointer<Int>?, _ lateCount: Int) -> Int32 {
    abiCall { () throws(TetherError) in
        let function: StaticString = "tether_plan_resolver"
        guard flags & ~(planResolverWeak | planResolverClosed | planResolverOtherThread) == 0 else { throw invalid(function, "unknown flags \(flags)") }
        // the library's resolvers: a stale handle after the callback, the resolver's own check on another thread
        guard flags & planResolverClosed == 0 else { throw closedResolver(function) }
        guard lateCount >= 0, lateCount == 0 || late != nil else { throw invalid(function, "late is NULL but late_count is \(lateCount)") }
        let container = try containerArgument(c, function)
        let key = try internedKey(key, function)
        let target = try internedKey(target, function)
        let edges = (0..<lateCount).map { (from: late![2 * $0], to: late![2 * $0 + 1]) }
        try container.resolverAnswer(key, completion: completion, target: target, weak: flags & planResolverWeak != 0,
                                     otherThread: flags & planResolverOtherThread != 0, late: edges)
    }
}

@_cdecl("tether_replay_enter")
public func tether_replay_enter(_ c: OpaquePointer?, _ key: UInt32, _ step: Int) -> Int32 {
    abiCall { () throws(TetherError) in
        let function: StaticString = "tether_replay_enter"
        let container = try containerArgument(c, function)
        try container.enterReplay(try internedKey(key, function), step: step)
    }
}

@_cdecl("tether_construct_enter")
public func tether_construct_enter(_ c: OpaquePointer?, _ keys: UnsafePointer<UInt32>?, _ count: Int) -> Int32 {
    abiCall { () throws(TetherError) in
        let function: StaticString = "tether_construct_enter"
        let container = try containerArgument(c, function)
        guard count > 0, let keys else { throw invalid(function, "keys must name at least one key (count \(count))") }
        var path: [Key] = []
        path.reserveCapacity(count)
        for i in 0..<count { path.append(try internedKey(keys[i], function)) }
        container.enterConstructing(path)
    }
}

@_cdecl("tether_replay_leave")
public func tether_replay_leave() -> Int32 {
    abiCall { () throws(TetherError) in
        guard Container.leaveReplay() else { throw invalid("tether_replay_leave", "this thread has no tether_replay_enter to leave") }
    }
}

@_cdecl("tether_plan_adopt")
public func tether_plan_adopt(_ c: OpaquePointer?, _ key: UInt32, _ instance: UnsafeMutableRawPointer?) -> Int32 {
    abiCall { () throws(TetherError) in
        let function: StaticString = "tether_plan_adopt"
        let container = try containerArgument(c, function)
        let key = try internedKey(key, function)
        guard let instance else { throw invalid(function, "the instance for \(key.quoted) is NULL") }
        try container.adoptScoped(key, instance)
    }
}
