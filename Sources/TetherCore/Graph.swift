/// One top-level resolve. Factories run depth-first along declared constructor
/// dependencies on an explicit stack (no recursion per level); every instance
/// enters the graph as soon as its factory returns; completion callbacks are
/// deferred until no factory of the graph is running, then run in creation
/// order. Any failure destroys everything the graph created and caches nothing.
final class Graph {
    /// Everything this graph created or reused: kept alive until the resolve returns.
    private var alive: [Instance] = []
    /// Non-transient instances of this graph, by registration.
    private var shared: [ObjectIdentifier: Instance] = [:]
    /// Registrations whose factory is pending (on some build stack).
    private var constructing: Set<ObjectIdentifier> = []
    /// Keys of the frames under construction, outermost first, for messages.
    private(set) var path: [Key] = []
    /// Instances waiting for their completion callbacks, with the container they were resolved from.
    private var queue: [(instance: Instance, registration: Registration, lookup: Container)] = []
    private var queueHead = 0
    /// Shared-scope instances to publish when the graph succeeds.
    private var pendingShared: [(Registration, Instance)] = []
    private var holdsCreationLock = false
    let thread: ThreadState

    private init(thread: ThreadState) { self.thread = thread }

    /// Nested top-level resolves on one thread beyond this depth are a runaway recursion.
    static let maxNesting = 256

    static func resolve(_ registration: Registration, from container: Container,
                        arguments: UnsafeBufferPointer<Argument>) throws(TetherError) -> Instance {
        let thread = ThreadState.current
        guard thread.nesting < maxNesting else {
            throw TetherError(.cycle, "resolves nested \(maxNesting) deep on one thread while resolving \(registration.key.quoted): a factory or provider keeps resolving itself; break the loop with a completion callback (tether_on_complete)")
        }
        thread.nesting += 1
        defer { thread.nesting -= 1 }
        let graph = Graph(thread: thread)
        do {
            let root = try graph.build(registration, from: container, arguments: arguments)
            try graph.runCompletions()
            graph.publish()
            return root
        } catch {
            graph.abort()
            throw error
        }
    }

    static func checkArguments(_ registration: Registration, _ arguments: UnsafeBufferPointer<Argument>) throws(TetherError) {
        let types = registration.argumentTypes
        guard arguments.count == types.count else {
            throw TetherError(.argumentMismatch,
                "\(registration.key.quoted) takes \(types.count) runtime argument\(types.count == 1 ? "" : "s"), got \(arguments.count)")
        }
        for (i, t) in types.enumerated() where arguments[i].type != t {
            throw TetherError(.argumentMismatch,
                "runtime argument \(i + 1) of \(registration.key.quoted) must be \(t.name), got \(arguments[i].type.name)")
        }
    }

    // MARK: building

    private struct Frame {
        let registration: Registration
        let spec: InstanceSpec
        /// Where this frame's dependencies are looked up.
        let lookup: Container
        var slot = 0
        var words: [UInt64]
        var dependencies: [Instance] = []
        var weakSlots: [(index: Int, ref: WeakRef)] = []
        var lazySlots: [(index: Int, cell: LazyCell)] = []
        var resolverSlot: Int?
        var argumentIndex = 0

        init(_ registration: Registration, _ spec: InstanceSpec, lookup: Container) {
            self.registration = registration
            self.spec = spec
            self.lookup = lookup
            words = []
            words.reserveCapacity(registration.params.count)
        }
    }

    /// Builds (or finds in this graph or a cache) the instance of `root`.
    func build(_ root: Registration, from container: Container,
               arguments: UnsafeBufferPointer<Argument> = .init(start: nil, count: 0)) throws(TetherError) -> Instance {
        let rootSpec = root.spec
        if let found = try existing(root, rootSpec, key: root.key) { return found }
        var stack: [Frame] = []
        push(&stack, root, rootSpec, from: container)
        do throws(TetherError) {
            while true {
                let top = stack.count - 1
                let params = stack[top].registration.params
                guard stack[top].slot < params.count else {
                    let instance = try construct(&stack[top])
                    let done = stack.removeLast()
                    constructing.remove(ObjectIdentifier(done.registration))
                    path.removeLast()
                    if stack.isEmpty { return instance }
                    attach(instance, to: &stack[stack.count - 1])
                    continue
                }
                let param = params[stack[top].slot]
                switch param {
                case .dependency(let key), .weak(let key):
                    let lookup = stack[top].lookup
                    guard let dep = lookup.registration(for: key) else {
                        throw TetherError(.notFound, "no registration for \(key.quoted) (needed by \(pathText(path))); register it first (tether_register) or check the spelling")
                    }
                    let spec = dep.spec
                    if let found = try existing(dep, spec, key: key) {
                        attach(found, to: &stack[top])
                    } else {
                        guard dep.argumentTypes.isEmpty else {
                            throw TetherError(.argumentMismatch, "\(key.quoted) takes runtime arguments and cannot be a dependency (needed by \(pathText(path)))")
                        }
                        push(&stack, dep, spec, from: lookup)
                    }
                case .lazy(let key), .weakLazy(let key):
                    let cell = LazyCell(container: stack[top].lookup, key: key, isWeak: param != .lazy(key))
                    stack[top].lazySlots.append((stack[top].words.count, cell))
                    stack[top].words.append(0)
                    stack[top].slot += 1
                case .context:
                    stack[top].words.append(UInt64(UInt(bitPattern: stack[top].spec.context)))
                    stack[top].slot += 1
                case .resolver:
                    stack[top].resolverSlot = stack[top].words.count
                    stack[top].words.append(0)
                    stack[top].slot += 1
                case .argument:
                    // Only a top-level frame has arguments: checked before the build.
                    stack[top].words.append(arguments[stack[top].argumentIndex].bits)
                    stack[top].argumentIndex += 1
                    stack[top].slot += 1
                }
            }
        } catch {
            for frame in stack { constructing.remove(ObjectIdentifier(frame.registration)) }
            path.removeLast(stack.count)
            throw error
        }
    }

    private func push(_ stack: inout [Frame], _ registration: Registration, _ spec: InstanceSpec, from lookup: Container) {
        // A singleton's dependencies come from its own container, so the shared
        // instance does not depend on which child asked first.
        let depLookup = spec.scope == .singleton ? registration.container : lookup
        stack.append(Frame(registration, spec, lookup: depLookup))
        constructing.insert(ObjectIdentifier(registration))
        path.append(registration.key)
    }

    /// The instance of `registration` this graph already has or a cache holds;
    /// nil when it must be built. A request for one under construction is a cycle.
    private func existing(_ registration: Registration, _ spec: InstanceSpec, key: Key) throws(TetherError) -> Instance? {
        let id = ObjectIdentifier(registration)
        if constructing.contains(id) {
            let start = path.firstIndex(of: registration.key) ?? 0
            let cycle = pathText(Array(path[start...]) + [key])
            throw TetherError(.cycle, "dependency cycle through constructors: \(cycle); break one edge with a completion callback (tether_on_complete) or a lazy dependency (TETHER_LAZY)")
        }
        if spec.scope == .transient { return nil }
        if let found = shared[id] { return found }
        guard spec.scope.isShared else { return nil }
        if let hit = registration.cached() ?? lockForCreation(registration) {
            alive.append(hit)
            shared[id] = hit
            return hit
        }
        return nil
    }

    /// Takes the creation lock (once per graph) and looks again: another thread may
    /// have published meanwhile, or an outer graph of this thread may be building it.
    private func lockForCreation(_ registration: Registration) -> Instance? {
        if !holdsCreationLock {
            CreationLock.shared.lock()
            holdsCreationLock = true
        }
        return registration.cached() ?? registration.pending
    }

    private func attach(_ instance: Instance, to frame: inout Frame) {
        switch frame.registration.params[frame.slot] {
        case .weak:
            frame.weakSlots.append((frame.words.count, WeakRef(instance)))
            frame.words.append(0)
        default:
            frame.words.append(UInt64(UInt(bitPattern: instance.pointer)))
            frame.dependencies.append(instance)
        }
        frame.slot += 1
    }

    /// Calls the frame's factory and enters the new instance into the graph.
    private func construct(_ frame: inout Frame) throws(TetherError) -> Instance {
        let registration = frame.registration
        let bridge = frame.lookup.bridge
        // Words for handles and closures are made only now that the factory will
        // really run, so a failure earlier leaks nothing.
        for (index, ref) in frame.weakSlots { frame.words[index] = bridge.weakWord(ref) }
        for (index, cell) in frame.lazySlots { frame.words[index] = try bridge.lazyWord(cell) }
        var resolver: Resolver?
        if let index = frame.resolverSlot {
            let r = Resolver(graph: self, lookup: frame.lookup, owner: registration)
            frame.words[index] = bridge.resolverWord(r)
            resolver = r
        }
        defer {
            if let resolver, let index = frame.resolverSlot {
                resolver.close()
                bridge.closeResolver(frame.words[index])
            }
        }
        let outcome: Result<UnsafeMutableRawPointer, CallbackFailure> = frame.words.withUnsafeMutableBufferPointer { words in
            do throws(CallbackFailure) { return .success(try registration.factory.make(words.baseAddress!, count: words.count)) }
            catch { return .failure(error) }
        }
        let pointer: UnsafeMutableRawPointer
        switch outcome {
        case .success(let p): pointer = p
        case .failure(let failure):
            var message = "factory for \(registration.key.quoted) returned NULL"
            if let reason = failure.reason, !reason.isEmpty { message += ": \(reason)" }
            if path.count > 1 { message += " (while resolving \(pathText(path)))" }
            throw TetherError(.factoryFailed, message)
        }

        var extras: InstanceExtras?
        if !frame.weakSlots.isEmpty || !frame.lazySlots.isEmpty || !(resolver?.pendingStrong.isEmpty ?? true) || !(resolver?.pendingWeak.isEmpty ?? true) {
            let e = InstanceExtras()
            e.weak = frame.weakSlots.map(\.ref) + (resolver?.pendingWeak ?? [])
            e.lazyCells = frame.lazySlots.map(\.cell)
            e.lateStrong = resolver?.pendingStrong ?? []
            extras = e
        }
        let instance = Instance(pointer: pointer, spec: frame.spec, dependencies: frame.dependencies, extras: extras)
        for (_, cell) in frame.lazySlots { cell.owner = instance }

        alive.append(instance)
        let scope = frame.spec.scope
        if scope != .transient { shared[ObjectIdentifier(registration)] = instance }
        if scope.isShared {
            pendingShared.append((registration, instance))
            registration.pending = instance
        }
        if !frame.spec.completions.isEmpty { queue.append((instance, registration, frame.lookup)) }
        return instance
    }

    // MARK: completion, publication, failure

    /// Runs queued completion callbacks; callbacks that create instances append theirs.
    private func runCompletions() throws(TetherError) {
        while queueHead < queue.count {
            let (instance, registration, lookup) = queue[queueHead]
            queueHead += 1
            for (n, completion) in instance.spec.completions.enumerated() {
                let resolver = Resolver(graph: self, lookup: lookup, owner: registration, instance: instance)
                defer { resolver.close() }
                do {
                    try completion.complete(resolver, instance: instance)
                } catch {
                    var message = "completion callback #\(n + 1) of \(instance.key.quoted) failed"
                    if let reason = error.reason, !reason.isEmpty { message += ": \(reason)" }
                    throw TetherError(.factoryFailed, message)
                }
            }
        }
    }

    private func publish() {
        for (registration, instance) in pendingShared {
            registration.publish(instance)
            registration.pending = nil
        }
        pendingShared = []
        releaseCreationLock()
    }

    private func abort() {
        for (registration, _) in pendingShared { registration.pending = nil }
        pendingShared = []
        releaseCreationLock()
        // Dropping the graph's references destroys what it created, each once;
        // cached instances it merely reused stay cached.
        queue = []
        shared = [:]
        alive = []
    }

    private func releaseCreationLock() {
        if holdsCreationLock {
            holdsCreationLock = false
            CreationLock.shared.unlock()
        }
    }
}

func pathText(_ keys: [Key]) -> String {
    keys.map(\.quoted).joined(separator: " -> ")
}
