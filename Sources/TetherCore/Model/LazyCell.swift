import Synchronization

/// What a bridge lends a lazy cell for the cell's life (`LazyCell.attachment`): given back as the cell goes.
public protocol CellAttachment: AnyObject {
    func cellGone()
}

/// What a LAZY / WEAK_LAZY slot (or a provider) resolves on first use. A slot
/// filled while a graph is built remembers that graph's instance of `key` (the
/// graph binds it, `bind`): its first call answers that instance while it lives,
/// and a strong slot whose graph instance holds the slot's owner strongly is
/// refused (a retain cycle; TETHER_WEAK_LAZY is the fix). Otherwise it resolves
/// `key` from `container` in a graph of its own. Then it holds the result:
/// strongly as an edge of its owner (checked for retain cycles), or weakly.
public final class LazyCell: @unchecked Sendable {
    /// The container, held by a split reference when it takes them (`Container.acquireCellHold`:
    /// a root every thread's resolves make cells over), else by an ordinary one.
    private let containerWord: UInt
    private let splitHold: Bool
    public var container: Container { Borrowed<Container>(word: containerWord)!.object }
    public let key: Key
    public let isWeak: Bool
    /// The dependent instance this cell belongs to (nil for a provider). Its
    /// weak reference, which holds this cell until the instance goes.
    var owner: WeakRef?
    /// What the bridge lent this cell for its life (a provider's trampoline): told when the cell goes.
    public var attachment: (any CellAttachment)?

    /// What the graph the slot was filled in says about `key`.
    public enum GraphAnswer: Sendable {
        /// The graph's instance of `key` (held weakly): the first call's answer while it lives.
        case instance(WeakRef)
        /// A strong slot whose graph instance holds the owner strongly: every call fails with this.
        case refused(TetherError)
    }

    private struct State {
        var strong: Instance?
        var weak: WeakRef?
        var graph: GraphAnswer?
        /// Told the graph's answer once it is known (`watch`).
        var watcher: (@Sendable (GraphAnswer) -> Void)?
    }
    /// `State` and its lock in the cell's own allocation (a `Lock` is a second one, and a mutex
    /// initialized and destroyed, per lazy slot per resolve): a spin lock (`withSpinLock`'s), each
    /// hold a few loads and stores, never across a resolve, a destructor or a watcher.
    private let stateHeld = Atomic<Bool>(false)
    private var stateValue = State()
    @inline(__always)
    private func withState<R>(_ body: (inout State) -> R) -> R {
        stateHeld.spinLock()
        defer { stateHeld.spinUnlock() }
        return body(&stateValue)
    }

    public convenience init(container: Container, key: Key, isWeak: Bool) {
        self.init(holding: Borrowed(container), key: key, isWeak: isWeak)
    }

    /// A cell over `container`, which the caller keeps alive meanwhile (a resolve's lookup): no
    /// reference to it is made unless the cell keeps an ordinary one.
    init(holding container: Borrowed<Container>, key: Key, isWeak: Bool) {
        // A call through the cell may read the container's table from any thread: its free waits for calls.
        splitHold = container.borrow { c in c.noteReachedBesidesHandle(); return c.acquireCellHold() }
        containerWord = splitHold ? container.word : container.retained().word
        self.key = key
        self.isWeak = isWeak
    }

    deinit {
        attachment?.cellGone()
        if !splitHold {
            Ref<Container>(word: containerWord)!.release()
        } else if Borrowed<Container>(word: containerWord)!.borrow({ $0.releaseCellHold() }) {
            Ref<Container>(word: containerWord)!.release()  // the one `closeCellHolds` kept
        }
    }

    /// The graph that filled the slot has its instance of `key`: `instance`.
    /// Refused for a strong slot when `instance` reaches the slot's owner through
    /// strong edges (holding it would close a retain cycle).
    func bind(to instance: Instance) {
        var answer = GraphAnswer.instance(instance.weakRef)
        if !isWeak, let owner = owner?.upgrade() {
            let path = EdgeLock.withLock { StrongPath.find(from: instance, to: owner) }
            if let path { answer = .refused(TetherError.lazyRetainCycle(owner: owner.key, key: key, path: path)) }
        }
        let watcher: (@Sendable (GraphAnswer) -> Void)? = withState { s in
            guard s.graph == nil else { return nil }
            s.graph = answer
            return s.watcher
        }
        watcher?(answer)
    }

    /// Calls `watcher` with the graph's answer once it is known (now, if it is):
    /// a binding whose own object outlives this cell keeps the answer there.
    public func watch(_ watcher: @escaping @Sendable (GraphAnswer) -> Void) {
        let known: GraphAnswer? = withState { s in
            s.watcher = watcher
            return s.graph
        }
        if let known { watcher(known) }
    }


    /// The instance's pointer, resolving it on first use.
    public func get() throws(TetherError) -> UnsafeMutableRawPointer {
        guard !container.isClosed else {
            throw TetherError(.invalidHandle, "the container of this lazy provider for \(key.quoted) was freed")
        }
        let known: (strong: Instance?, weak: WeakRef?, graph: GraphAnswer?) = withState { ($0.strong, $0.weak, $0.graph) }
        if let strong = known.strong { return strong.pointer }
        if let weak = known.weak { return try alive(weak) }

        var fromGraph: Instance?
        switch known.graph {
        case .refused(let error)?: throw error
        case .instance(let ref)?: fromGraph = ref.upgrade()  // gone: resolved anew
        case nil: break
        }
        let instance: Instance
        if let fromGraph { instance = fromGraph } else { instance = try container.resolve(key) }
        if isWeak {
            let ref = withState { s in
                if s.weak == nil { s.weak = instance.weakRef }
                return s.weak!
            }
            _ = consume instance
            // Held weakly: it is alive now only if something else holds it.
            return try alive(ref)
        }
        let winner = withState { s in
            if s.strong == nil { s.strong = instance }
            return s.strong!
        }
        if winner === instance, let owner = owner?.upgrade() {
            do throws(TetherError) {
                try owner.addLateStrongEdge(to: instance)
            } catch {
                let undone = withState { s -> Instance? in
                    defer { s.strong = nil }
                    return s.strong
                }
                _ = consume undone  // outside the lock, as `ownerDestroyed`
                if error.code == .retainCycle, error.parts.fix == .weakEdge {
                    throw TetherError.lazyRetainCycle(owner: owner.key, key: key, path: error.parts.path)
                }
                throw error
            }
        }
        return winner.pointer
    }

    /// `get()` for a call of the cell's provider: its owner stays alive for the
    /// call, as whatever the call resolves does, even if a factory the call runs
    /// releases the owner's last handle (it is destroyed when the call returns).
    public func call() throws(TetherError) -> UnsafeMutableRawPointer {
        guard let ownerRef = owner else { return try get() }
        guard let owner = ownerRef.upgrade() else {
            throw TetherError.staleProvider(mayBeFreed: false)
        }
        return try withExtendedLifetime(owner) { () throws(TetherError) in try get() }
    }

    /// `call()` for a binding's own object standing for a slot (`tether_lazy_get`): stale also while
    /// no owner holds the cell (its factory has not returned, or its resolve failed), where a
    /// strong answer would be held by nothing but the cell, no edge of an owner.
    public func callForBinding() throws(TetherError) -> UnsafeMutableRawPointer {
        guard owner != nil else { throw TetherError.staleProvider(mayBeFreed: false) }
        return try call()
    }

    /// What the cell holds strongly, if it resolved already.
    public var resolved: Instance? { withState { $0.strong } }

    /// Its owner is being destroyed: lets go of the answer, which the owner's edge to it also
    /// holds (`get`, `Graph`'s late edges), so that edge alone decides when it goes: the
    /// owner's edges go last edge first (`ReleaseQueue.queue`), not this cell's whenever it goes.
    func ownerDestroyed() {
        let held = withState { s -> Instance? in
            defer { s.strong = nil }
            return s.strong
        }
        _ = consume held  // outside the lock: a last reference's release runs a destructor
    }

    private func alive(_ ref: WeakRef) throws(TetherError) -> UnsafeMutableRawPointer {
        guard let instance = ref.upgrade() else {
            throw TetherError(.expired, "the instance is gone: the weak-lazy dependency on \(key.quoted) is held weakly and nothing else holds it")
        }
        return instance.pointer
    }
}
