/// A resolve replayed from a recorded order. For a root whose whole graph is
/// plain (graph- and transient-scoped registrations with DEP and CONTEXT slots
/// only, no runtime arguments, no completion callbacks; singleton- and
/// weak-scoped dependencies are leaves taken from their caches), the order in
/// which `Graph` would call the factories, and which instance each slot gets,
/// depend only on the registrations. A plan records that once and replays it
/// with no frames, no per-registration table and no cycle checks: a resolve is
/// then the factory calls, the instances and their edges.
///
/// A plan is valid while the configuration of its container and the
/// container's parents is unchanged (`Container.configuration`). Anything it
/// cannot replay exactly as `Graph` would (a shared dependency not cached yet,
/// a cycle, a slot kind it does not know) makes it decline, before any factory
/// ran, and the graph resolves the ordinary way.
final class Plan: @unchecked Sendable {
    /// One instance to make (or, `isShared`, to take from its cache).
    struct Step {
        let registration: Unmanaged<Registration>
        /// This step's slots: `inputs[firstInput ..< firstInput + params.count]`.
        let firstInput: Int
        let isShared: Bool
        /// The step that asked for this one first (its frame was below), -1 for the root: for messages.
        var parent: Int
    }

    /// Past this many instances, or this many slots in one factory, a graph
    /// resolves the ordinary way (its frames cost little next to that many calls).
    /// Constants, so a replay's buffers are plain stack memory.
    static var maxSteps: Int { 64 }
    static var maxSlots: Int { 32 }
    /// An input that is the registration's context, not a step's instance.
    private static let context = -1

    /// Post-order, as `Graph` builds: the root is last.
    private let steps: [Step]
    /// Per slot of every step: the step whose instance it receives, or `context`.
    private let inputs: [Int]
    private let hasShared: Bool
    /// `Container.configuration` of the lookup container when recorded.
    let configuration: UInt

    /// A plan that always declines: the graph of its root is not plain (recorded
    /// so, until the configuration changes, resolves do not try again).
    static func declined(_ configuration: UInt) -> Plan { Plan(steps: [], inputs: [], configuration: configuration) }

    var declines: Bool { steps.isEmpty }

    private init(steps: [Step], inputs: [Int], configuration: UInt) {
        self.steps = steps
        self.inputs = inputs
        self.configuration = configuration
        hasShared = steps.contains { $0.isShared }
    }

    /// Records the plan for `root` resolved from its own container, or nil when
    /// its graph is not plain (`Graph` resolves it, and reports what is wrong).
    static func record(_ root: Registration, configuration: UInt) -> Plan? {
        guard !root.spec.scope.isShared else { return nil }
        var recorder = Recorder(lookup: root.container)
        guard recorder.visit(Unmanaged.passUnretained(root)) != nil else { return nil }
        return Plan(steps: recorder.steps, inputs: recorder.inputs, configuration: configuration)
    }

    private struct Recorder {
        let lookup: Container
        var steps: [Step] = []
        var inputs: [Int] = []
        /// Graph-scoped and shared registrations: their one step in this graph.
        var stepOf: [ObjectIdentifier: Int] = [:]
        var onPath: Set<ObjectIdentifier> = []

        /// The step of `registration`'s instance; nil when the graph is not plain.
        mutating func visit(_ registration: Unmanaged<Registration>) -> Int? {
            let r = registration.takeUnretainedValue()
            let id = ObjectIdentifier(r)
            if let step = stepOf[id] { return step }
            let spec = r.spec
            if spec.scope.isShared {
                return add(Step(registration: registration, firstInput: inputs.count, isShared: true, parent: -1), id)
            }
            // Bounded depth as well: the recording recurses.
            guard steps.count < Plan.maxSteps, onPath.count < Plan.maxSteps else { return nil }
            guard !r.hasArguments, spec.completions.isEmpty, r.params.count <= Plan.maxSlots,
                  onPath.insert(id).inserted else { return nil }
            var slots: [Int] = []
            for param in r.params {
                switch param {
                case .dependency(let key):
                    guard let dep = lookup.unretainedRegistration(for: key),
                          !dep._withUnsafeGuaranteedRef({ $0.hasArguments }),
                          let step = visit(dep) else { return nil }
                    slots.append(step)
                case .context:
                    slots.append(Plan.context)
                default:
                    return nil
                }
            }
            onPath.remove(id)
            guard steps.count < Plan.maxSteps else { return nil }
            let index = steps.count
            for slot in slots where slot >= 0 && steps[slot].parent == -1 { steps[slot].parent = index }
            let firstInput = inputs.count
            inputs += slots
            return add(Step(registration: registration, firstInput: firstInput, isShared: false, parent: -1),
                       spec.scope == .graph ? id : nil)
        }

        private mutating func add(_ step: Step, _ id: ObjectIdentifier?) -> Int? {
            guard steps.count < Plan.maxSteps else { return nil }
            steps.append(step)
            if let id { stepOf[id] = steps.count - 1 }
            return steps.count - 1
        }
    }

    /// Replays the plan; the root carries a reference for the caller. Nil: the
    /// plan declined (a shared dependency is not cached), before any factory ran.
    func run() -> Result<Unmanaged<Instance>?, TetherError> {
        let count = steps.count
        return withUnsafeTemporaryAllocation(of: UInt.self, capacity: Plan.maxSteps) { made in
            withUnsafeTemporaryAllocation(of: UInt64.self, capacity: Plan.maxSlots) { words -> Result<Unmanaged<Instance>?, TetherError> in
                let instances = Instances(words: made.baseAddress!)
                made.baseAddress!.initialize(repeating: 0, count: count)
                if hasShared && !takeShared(instances) { return .success(nil) }
                for i in 0..<count where !steps[i].isShared {
                    do throws(TetherError) {
                        instances.set(i, try make(i, words.baseAddress!, instances))
                    } catch {
                        instances.releaseUnowned(count)
                        return .failure(error)
                    }
                }
                // Every other step is some step's input, so its instance went to
                // that step's edges: nothing is left to release.
                return .success(instances.take(count - 1))
            }
        }
    }

    /// Takes every shared dependency from its cache; false (nothing kept) when one is missing.
    private func takeShared(_ instances: Instances) -> Bool {
        for i in 0..<steps.count where steps[i].isShared {
            let registration = steps[i].registration
            let scope = registration._withUnsafeGuaranteedRef { $0.specReference._withUnsafeGuaranteedRef { $0.scope } }
            guard let hit = registration._withUnsafeGuaranteedRef({ $0.cached(scope) }) else {
                instances.releaseUnowned(i)
                return false
            }
            instances.set(i, .passRetained(hit))
        }
        return true
    }

    /// Calls step `i`'s factory and makes its instance, its edges taking the inputs' references.
    private func make(_ i: Int, _ words: UnsafeMutablePointer<UInt64>, _ instances: Instances) throws(TetherError) -> Unmanaged<Instance> {
        let step = steps[i]
        return try step.registration._withUnsafeGuaranteedRef { registration -> Result<Unmanaged<Instance>, TetherError> in
            let spec = registration.specReference
            let slots = registration.params.count
            var edges = 0
            for s in 0..<slots {
                let input = inputs[step.firstInput + s]
                if input == Plan.context {
                    words[s] = UInt64(UInt(bitPattern: spec._withUnsafeGuaranteedRef { $0.context }))
                } else {
                    words[s] = UInt64(UInt(bitPattern: instances[input]._withUnsafeGuaranteedRef { $0.pointer }))
                    edges += 1
                }
            }
            let outcome: Result<UnsafeMutableRawPointer, CallbackFailure>
            do throws(CallbackFailure) { outcome = .success(try registration.factory.make(words, count: slots)) }
            catch { outcome = .failure(error) }
            switch outcome {
            case .failure(let failure):
                return .failure(Graph.factoryFailure(registration, failure, path: path(to: i)))
            case .success(let pointer):
                // `make` asks for edges 0, 1, ... in order: the non-context inputs in slot order.
                var next = step.firstInput
                return .success(Instance.make(pointer: pointer, spec: spec.takeUnretainedValue(), dependencies: edges, reference: { _ in
                    while inputs[next] == Plan.context { next += 1 }
                    next += 1
                    return instances.take(inputs[next - 1])
                }, extras: nil))
            }
        }.get()
    }

    /// The keys from the root down to step `i`, as `Graph`'s frames would hold them.
    private func path(to i: Int) -> [Key] {
        var keys: [Key] = []
        var step = i
        while step >= 0 {
            keys.append(steps[step].registration._withUnsafeGuaranteedRef { $0.key })
            step = steps[step].parent
        }
        return keys.reversed()
    }

    /// The instances made so far, by step: an address, low bit set once its
    /// reference went to a new owner (as in `ReferenceStack`).
    private struct Instances {
        let words: UnsafeMutablePointer<UInt>

        subscript(i: Int) -> Unmanaged<Instance> {
            Unmanaged.fromOpaque(UnsafeRawPointer(bitPattern: words[i] & ~1)!)
        }

        func set(_ i: Int, _ instance: Unmanaged<Instance>) { words[i] = UInt(bitPattern: instance.toOpaque()) }

        /// A reference for a new owner: the plan's own the first time, then a new one.
        func take(_ i: Int) -> Unmanaged<Instance> {
            let word = words[i]
            if word & 1 != 0 { return self[i].retain() }
            words[i] = word | 1
            return self[i]
        }

        /// Releases what was made or taken among steps `0 ..< end` and no owner took,
        /// last first (dependents before dependencies, as a graph's `alive`).
        func releaseUnowned(_ end: Int) {
            for i in stride(from: end - 1, through: 0, by: -1) where words[i] != 0 && words[i] & 1 == 0 {
                self[i].release()
            }
        }
    }
}
