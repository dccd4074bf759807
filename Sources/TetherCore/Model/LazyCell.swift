
/// What a LAZY / WEAK_LAZY slot (or a provider) resolves on first use. It
/// resolves `key` from `container` in a graph of its own, then holds the result:
/// strongly as an edge of its owner (checked for retain cycles), or weakly.
public final class LazyCell: @unchecked Sendable {
    public let container: Container
    public let key: Key
    public let isWeak: Bool
    /// The dependent instance this cell belongs to (nil for a provider). Its
    /// weak reference, which holds this cell until the instance goes.
    var owner: WeakRef?
    /// Whatever the bridge allocated for this cell (a libffi closure); freed with the cell.
    public var attachment: AnyObject?

    private struct State {
        var strong: Instance?
        var weak: WeakRef?
    }
    private let state = Lock(State())

    public init(container: Container, key: Key, isWeak: Bool) {
        self.container = container
        self.key = key
        self.isWeak = isWeak
    }

    /// The instance's pointer, resolving it on first use.
    public func get() throws(TetherError) -> UnsafeMutableRawPointer {
        guard !container.isClosed else {
            throw TetherError(.invalidHandle, "the container of this lazy provider for \(key.quoted) was freed")
        }
        let known: (strong: Instance?, weak: WeakRef?) = state.withLock { ($0.strong, $0.weak) }
        if let strong = known.strong { return strong.pointer }
        if let weak = known.weak { return try alive(weak) }

        let instance = try container.resolve(key)
        if isWeak {
            let ref = state.withLock { s in
                if s.weak == nil { s.weak = instance.weakRef }
                return s.weak!
            }
            _ = consume instance
            // Held weakly: it is alive now only if something else holds it.
            return try alive(ref)
        }
        let winner = state.withLock { s in
            if s.strong == nil { s.strong = instance }
            return s.strong!
        }
        if winner === instance, let owner = owner?.upgrade() {
            do {
                try owner.addLateStrongEdge(to: instance)
            } catch {
                state.withLock { $0.strong = nil }
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
            throw TetherError(.invalidHandle, "stale provider: the instance it was handed to was destroyed; do not call it after that")
        }
        return try withExtendedLifetime(owner) { () throws(TetherError) in try get() }
    }

    /// What the cell holds strongly, if it resolved already.
    var resolved: Instance? { state.withLock { $0.strong } }

    private func alive(_ ref: WeakRef) throws(TetherError) -> UnsafeMutableRawPointer {
        guard let instance = ref.upgrade() else {
            throw TetherError(.expired, "the instance is gone: the weak-lazy dependency on \(key.quoted) is held weakly and nothing else holds it")
        }
        return instance.pointer
    }
}
