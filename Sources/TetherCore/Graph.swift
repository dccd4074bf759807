/// One top-level resolve. Factories run depth-first along declared constructor
/// dependencies on an explicit stack (no recursion per level); every instance
/// enters the graph as soon as its factory returns; completion callbacks are
/// deferred until no factory of the graph is running, then run in creation
/// order. Any failure destroys everything the graph created and caches nothing.
///
/// A graph's storage is reused by the next resolve on the same thread, so a
/// resolve allocates little beyond the instances themselves.
final class Graph {
    /// Everything this graph created or reused: kept alive until the resolve returns.
    private var alive: [Instance] = []
    /// Non-transient instances of this graph, by registration.
    private var shared = InstanceMap()
    /// Frames of every build under way, outermost first (nested builds from a
    /// resolver continue above). Their registrations are the ones under construction.
    private var frames = PlainStack<Frame>()
    /// The registrations of `frames`, kept only while the stack is deep: a
    /// linear scan is cheaper for the usual few frames, a set keeps long chains linear.
    private var deepFrames: Set<ObjectIdentifier>?
    private static let deepThreshold = 32
    /// Argument words of the frames, contiguous; a frame owns `wordBase ..< wordBase + params.count`.
    private var words = PlainStack<UInt64>()
    /// Dependencies gathered by the frames, contiguous like `words`; unretained
    /// (`alive` holds every instance of the graph).
    private var dependencyStack = PlainStack<Unmanaged<Instance>>()
    /// Weak and lazy slots of the frames (rare), in frame order: the frame, the
    /// word the slot fills, its object. Kept out of `Frame` so frames stay plain data.
    private var weakSlots: [(frame: Int, index: Int, ref: WeakRef)] = []
    private var lazySlots: [(frame: Int, index: Int, cell: LazyCell)] = []
    /// Keys of the frames, for messages.
    var path: [Key] { (0..<frames.count).map { frames[$0].registration.key } }
    /// Instances waiting for their completion callbacks.
    private var queue: [(instance: Instance, registration: Registration, lookup: Container)] = []
    private var queueHead = 0
    /// Shared-scope instances to publish when the graph succeeds.
    private var pendingShared: [(Registration, Instance)] = []
    private var holdsCreationLock = false
    /// Unowned: the thread state keeps its spare graph, not the other way round.
    unowned let thread: ThreadState

    private init(thread: ThreadState) { self.thread = thread }

    deinit {
        frames.free()
        words.free()
        dependencyStack.free()
    }

    /// Nested top-level resolves on one thread beyond this depth are a runaway recursion.
    static let maxNesting = 256

    static func resolve(_ registration: Registration, from container: Container,
                        arguments: UnsafeBufferPointer<Argument>) throws(TetherError) -> Instance {
        let thread = ThreadState.current
        guard thread.nesting < maxNesting else {
            throw TetherError(.cycle, "resolves nested \(maxNesting) deep on one thread while resolving \(registration.key.quoted): a factory or provider keeps resolving itself; break the loop with a completion callback (tether_on_complete)")
        }
        thread.nesting += 1
        let graph = thread.spareGraph ?? Graph(thread: thread)
        thread.spareGraph = nil
        defer {
            thread.nesting -= 1
            graph.clear()
            thread.spareGraph = graph
        }
        do throws(TetherError) {
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
        if !registration.hasArguments && arguments.isEmpty { return }
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

    /// Drops everything for reuse, keeping capacity.
    private func clear() {
        alive.removeAll(keepingCapacity: true)
        shared.removeAll()
        frames.truncate(to: 0)
        deepFrames = nil
        words.truncate(to: 0)
        dependencyStack.truncate(to: 0)
        weakSlots.removeAll(keepingCapacity: true)
        lazySlots.removeAll(keepingCapacity: true)
        queue.removeAll(keepingCapacity: true)
        queueHead = 0
        pendingShared.removeAll(keepingCapacity: true)
    }

    // MARK: building

    /// Plain data with unowned(unsafe) references, so frames move without refcounting: the
    /// registration is kept by its container (or its retired list) and keeps its
    /// specs and its container; the lookup container is the caller's or one of those.
    private struct Frame {
        unowned(unsafe) let registration: Registration
        unowned(unsafe) let spec: InstanceSpec
        /// Where this frame's dependencies are looked up.
        unowned(unsafe) let lookup: Container
        let wordBase: Int
        /// Where this frame's dependencies start on `dependencyStack`.
        let dependencyBase: Int
        var slot = 0
        var resolverSlot: Int?
        var argumentIndex = 0
    }

    /// Builds (or finds in this graph or a cache) the instance of `root`.
    func build(_ root: Registration, from container: Container,
               arguments: UnsafeBufferPointer<Argument> = .init(start: nil, count: 0)) throws(TetherError) -> Instance {
        let rootSpec = root.spec
        if let found = try existing(root, rootSpec, key: root.key) { return found }
        let floor = frames.count
        push(root, rootSpec, from: container)
        do throws(TetherError) {
            while true {
                let top = frames.count - 1
                let params = frames[top].registration.params
                let slot = frames[top].slot
                guard slot < params.count else {
                    let instance = try construct(top)
                    pop()
                    if frames.count == floor { return instance }
                    attach(instance, to: frames.count - 1)
                    continue
                }
                let param = params[slot]
                let wordIndex = frames[top].wordBase + slot
                switch param {
                case .dependency(let key), .weak(let key):
                    let lookup = frames[top].lookup
                    guard let dep = lookup.registration(for: key) else {
                        throw TetherError(.notFound, "no registration for \(key.quoted) (needed by \(pathText(path))); register it first (tether_register) or check the spelling")
                    }
                    let spec = dep.spec
                    if let found = try existing(dep, spec, key: key) {
                        attach(found, to: top)
                    } else {
                        guard !dep.hasArguments else {
                            throw TetherError(.argumentMismatch, "\(key.quoted) takes runtime arguments and cannot be a dependency (needed by \(pathText(path)))")
                        }
                        push(dep, spec, from: lookup)
                    }
                case .lazy(let key), .weakLazy(let key):
                    let cell = LazyCell(container: frames[top].lookup, key: key, isWeak: param != .lazy(key))
                    lazySlots.append((top, wordIndex, cell))
                    frames[top].slot += 1
                case .context:
                    words[wordIndex] = UInt64(UInt(bitPattern: frames[top].spec.context))
                    frames[top].slot += 1
                case .resolver:
                    frames[top].resolverSlot = wordIndex
                    frames[top].slot += 1
                case .argument:
                    // Only a top-level frame has arguments: checked before the build.
                    words[wordIndex] = arguments[frames[top].argumentIndex].bits
                    frames[top].argumentIndex += 1
                    frames[top].slot += 1
                }
            }
        } catch {
            while frames.count > floor { pop() }
            throw error
        }
    }

    /// The instance of this graph whose pointer is `pointer`, if any.
    func instance(at pointer: UnsafeMutableRawPointer) -> Instance? {
        alive.last { $0.pointer == pointer }
    }

    private func push(_ registration: Registration, _ spec: InstanceSpec, from lookup: Container) {
        // A singleton's dependencies come from its own container, so the shared
        // instance does not depend on which child asked first.
        let depLookup = spec.scope == .singleton ? registration.container : lookup
        let base = words.count
        words.append(0, count: registration.params.count)
        frames.append(Frame(registration: registration, spec: spec, lookup: depLookup, wordBase: base,
                            dependencyBase: dependencyStack.count))
        if deepFrames != nil {
            deepFrames!.insert(ObjectIdentifier(registration))
        } else if frames.count > Self.deepThreshold {
            deepFrames = Set((0..<frames.count).map { ObjectIdentifier(frames[$0].registration) })
        }
    }

    private func isConstructing(_ registration: Registration) -> Bool {
        if let deepFrames { return deepFrames.contains(ObjectIdentifier(registration)) }
        for i in 0..<frames.count where frames[i].registration === registration { return true }
        return false
    }

    private func pop() {
        let frame = frames.removeLast()
        dependencyStack.truncate(to: frame.dependencyBase)
        while let last = weakSlots.last, last.frame == frames.count { weakSlots.removeLast() }
        while let last = lazySlots.last, last.frame == frames.count { lazySlots.removeLast() }
        if deepFrames != nil {
            deepFrames!.remove(ObjectIdentifier(frame.registration))
            if frames.count <= Self.deepThreshold / 2 { deepFrames = nil }
        }
        words.truncate(to: frame.wordBase)
    }

    /// The instance of `registration` this graph already has or a cache holds;
    /// nil when it must be built. A request for one under construction is a cycle.
    private func existing(_ registration: Registration, _ spec: InstanceSpec, key: Key) throws(TetherError) -> Instance? {
        if isConstructing(registration) {
            let path = path
            let start = path.firstIndex(of: registration.key) ?? 0
            let cycle = pathText(Array(path[start...]) + [key])
            throw TetherError(.cycle, "dependency cycle through constructors: \(cycle); break one edge with a completion callback (tether_on_complete) or a lazy dependency (TETHER_LAZY)")
        }
        if spec.scope == .transient { return nil }
        let id = ObjectIdentifier(registration)
        if let found = shared[id] { return found }
        guard spec.scope.isShared else { return nil }
        if let hit = registration.cached(spec.scope) ?? lockForCreation(registration, spec.scope) {
            alive.append(hit)
            shared[id] = hit
            return hit
        }
        return nil
    }

    /// Takes the creation lock (once per graph) and looks again: another thread may
    /// have published meanwhile, or an outer graph of this thread may be building it.
    private func lockForCreation(_ registration: Registration, _ scope: Scope) -> Instance? {
        if !holdsCreationLock {
            CreationLock.shared.lock()
            holdsCreationLock = true
        }
        return registration.cached(scope) ?? CreationLock.shared.pending[ObjectIdentifier(registration)]
    }

    private func attach(_ instance: Instance, to index: Int) {
        let wordIndex = frames[index].wordBase + frames[index].slot
        switch frames[index].registration.params[frames[index].slot] {
        case .weak:
            weakSlots.append((index, wordIndex, WeakRef(instance)))
        default:
            words[wordIndex] = UInt64(UInt(bitPattern: instance.pointer))
            dependencyStack.append(.passUnretained(instance))
        }
        frames[index].slot += 1
    }

    /// Where the slots of frame `index` start in `slots` (they are the last ones:
    /// deeper frames were constructed and popped, taking theirs).
    @inline(__always)
    private func firstSlot<T>(of index: Int, in slots: [T], frame: (T) -> Int) -> Int {
        var from = slots.count
        while from > 0 && frame(slots[from - 1]) == index { from -= 1 }
        return from
    }

    /// Calls the factory of frame `index` and enters the new instance into the graph.
    private func construct(_ index: Int) throws(TetherError) -> Instance {
        unowned(unsafe) let registration = frames[index].registration
        unowned(unsafe) let spec = frames[index].spec
        unowned(unsafe) let lookup = frames[index].lookup
        let wordBase = frames[index].wordBase
        let resolverSlot = frames[index].resolverSlot
        let weakFrom = firstSlot(of: index, in: weakSlots) { $0.frame }
        let lazyFrom = firstSlot(of: index, in: lazySlots) { $0.frame }
        // Words for handles and closures are made only now that the factory will
        // really run, so a failure earlier leaks nothing.
        if weakFrom < weakSlots.count || lazyFrom < lazySlots.count || resolverSlot != nil {
            let bridge = lookup.bridge
            for (_, i, ref) in weakSlots[weakFrom...] { words[i] = bridge.weakWord(ref) }
            for (_, i, cell) in lazySlots[lazyFrom...] { words[i] = try bridge.lazyWord(cell) }
        }
        var resolver: Resolver?
        if let i = resolverSlot {
            let r = Resolver(graph: self, lookup: lookup, owner: registration)
            words[i] = lookup.bridge.resolverWord(r)
            resolver = r
        }
        let count = registration.params.count
        // A copy: a factory with a resolver may build more and grow `words`.
        let outcome: Result<UnsafeMutableRawPointer, CallbackFailure> = withUnsafeTemporaryAllocation(of: UInt64.self, capacity: max(count, 1)) { buffer in
            for i in 0..<count { buffer[i] = words[wordBase + i] }
            do throws(CallbackFailure) { return .success(try registration.factory.make(buffer.baseAddress!, count: count)) }
            catch { return .failure(error) }
        }
        if let resolver, let i = resolverSlot {
            resolver.close()
            lookup.bridge.closeResolver(words[i])
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

        let pendingStrong = resolver?.takePending() ?? []
        var extras: InstanceExtras?
        let hasLazy = lazyFrom < lazySlots.count
        if hasLazy || !pendingStrong.isEmpty {
            let e = InstanceExtras()
            e.lazyCells = lazySlots[lazyFrom...].map(\.cell)
            e.lateStrong = pendingStrong
            extras = e
        }
        let first = frames[index].dependencyBase
        let dependencies: [Instance] = first == dependencyStack.count ? [] : Array(unsafeUninitializedCapacity: dependencyStack.count - first) { buffer, count in
            for i in first..<dependencyStack.count { (buffer.baseAddress! + count).initialize(to: dependencyStack[i].takeUnretainedValue()); count += 1 }
        }
        let instance = Instance(pointer: pointer, spec: spec, dependencies: dependencies, extras: extras)
        if hasLazy { for (_, _, cell) in lazySlots[lazyFrom...] { cell.owner = instance } }

        alive.append(instance)
        let scope = spec.scope
        if scope != .transient { shared[ObjectIdentifier(registration)] = instance }
        if scope.isShared {
            pendingShared.append((registration, instance))
            CreationLock.shared.pending[ObjectIdentifier(registration)] = instance
        }
        if !spec.completions.isEmpty { queue.append((instance, registration, lookup)) }
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
            CreationLock.shared.pending[ObjectIdentifier(registration)] = nil
        }
        pendingShared = []
        releaseCreationLock()
    }

    private func abort() {
        for (registration, _) in pendingShared { CreationLock.shared.pending[ObjectIdentifier(registration)] = nil }
        pendingShared = []
        releaseCreationLock()
        // Dropping the graph's references destroys what it created, each once;
        // cached instances it merely reused stay cached.
        clear()
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

/// Registration -> instance for one graph: a linear scan while small (the usual
/// case), a dictionary beyond that.
struct InstanceMap {
    private var small: [(ObjectIdentifier, Instance)] = []
    private var large: [ObjectIdentifier: Instance]?

    subscript(id: ObjectIdentifier) -> Instance? {
        get {
            if let large { return large[id] }
            for (k, v) in small where k == id { return v }
            return nil
        }
        set {
            guard let newValue else { return }
            if large != nil { large![id] = newValue; return }
            if small.count < 16 { small.append((id, newValue)); return }
            var map = Dictionary(small, uniquingKeysWith: { a, _ in a })
            map[id] = newValue
            large = map
        }
    }

    mutating func removeAll() {
        small.removeAll(keepingCapacity: true)
        large = nil
    }
}
