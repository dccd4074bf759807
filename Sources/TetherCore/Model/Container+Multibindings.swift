/// Multibindings: what an ALL slot (`Param.all`) receives. One rule, used by the
/// build (`Graph`), validation and the picture (`GraphCheck`) and `resolveAll`.
extension Container {
    /// Every registration named `key` or `key#name` visible from here, in registration
    /// order: the outermost container's first; a child's registration of a key its
    /// parent has takes that one's place, a new key is added after. An empty list is
    /// not an error (a plugin host with no plugins).
    public func allRegistrations(for key: Key) -> [Registration] {
        // A child with no registrations of its own (one per request, say) lists what its parent does.
        var owner = self
        while owner.neverRegistered, let parent = owner.parent { owner = parent }
        return owner.memoizedList(key) { owner.listRegistrations(for: key) }
    }

    private func listRegistrations(for key: Key) -> [Registration] {
        var chain: [Container] = []
        var next: Container? = self
        while let c = next { chain.append(c); next = c.parent }
        var result: [Registration] = []
        for c in chain.reversed() { result = Self.listed(c.ownRegistrations(), for: key, moved: c.undecoratedKeys(), over: result) }
        return result
    }

    /// `list` (what the containers further out list for `key`) with one container's registrations `own` over it:
    /// those named `key` or `key#name`, not `moved` (a decorated element is listed once, decorated), in registration
    /// order, each taking the place of its key's listed one, a new key added after. One rule: `listRegistrations`
    /// reads the tables; a child's plan's walk reads its component's levels (`Plan.Recorder.allRegistrations`).
    static func listed(_ own: [Registration], for key: Key, moved: Set<Key>, over list: [Registration]) -> [Registration] {
        let prefix = key.name + "#"
        var result = list
        var place: [Key: Int] = [:]
        for (i, r) in list.enumerated() { place[r.key] = i }
        for r in own.filter({ ($0.key == key || $0.key.name.hasPrefix(prefix)) && !moved.contains($0.key) }).sorted(by: { $0.order < $1.order }) {
            if let i = place[r.key] { result[i] = r } else { place[r.key] = result.count; result.append(r) }
        }
        return result
    }

    /// A resolve of every registration `allRegistrations(for: key)` lists, in one graph
    /// (the one a factory with a single ALL slot would get): an instance whose pointer is
    /// the `SlotList` of their pointers, holding each strongly, with a reference for the caller.
    package func resolveAll(_ key: Key) throws(TetherError) -> Ref<Instance> {
        guard !isClosed else { throw TetherError.containerFreed }
        let registration = Registration(key: Key("\(key.name)[all]"), params: [.all(key)], factory: ListFactory(), container: self)
        registration.setUnlistedContext(SlotList.marker)  // what tells `listItem` a list from any other instance
        return try resolveRetained(.init(registration))
    }
}

/// The list an ALL slot receives (`{ size_t count; void *const *items; }` in C, its
/// items right after it in one allocation), owned by the dependent's instance.
public final class SlotList: @unchecked Sendable {
    public let address: UnsafeMutableRawPointer
    /// The context of `resolveAll`'s instances: an address nothing else has.
    nonisolated(unsafe) static let marker = UnsafeMutableRawPointer.allocate(byteCount: 1, alignment: 1)

    init(_ pointers: [UnsafeMutableRawPointer]) {
        let header = 2 * MemoryLayout<UInt>.stride
        address = .allocate(byteCount: header + max(pointers.count, 1) * MemoryLayout<UInt>.stride, alignment: MemoryLayout<UInt>.alignment)
        let items = (address + header).bindMemory(to: UnsafeMutableRawPointer.self, capacity: pointers.count)
        for (i, p) in pointers.enumerated() { (items + i).initialize(to: p) }
        address.storeBytes(of: UInt(pointers.count), as: UInt.self)
        address.storeBytes(of: UInt(bitPattern: items), toByteOffset: MemoryLayout<UInt>.stride, as: UInt.self)
    }

    deinit { address.deallocate() }

    /// The items of the list at `address` (as the words a factory receives).
    public static func items(at address: UnsafeRawPointer) -> [UnsafeMutableRawPointer] {
        let count = Int(address.load(as: UInt.self))
        guard let items = address.load(fromByteOffset: MemoryLayout<UInt>.stride, as: UnsafePointer<UnsafeMutableRawPointer>?.self) else { return [] }
        return (0..<count).map { items[$0] }
    }
}

extension Instance {
    /// Item `index` of the list this instance is (one `Container.resolveAll` made), held by
    /// it; nil when it is not such a list or `index` is out of range.
    public func listItem(_ index: Int) -> Instance? {
        guard spec.context == SlotList.marker, index >= 0 else { return nil }
        var items: [Instance] = []
        EdgeLock.withLock { _ = forEachStrongEdge { items.append($0); return true } }  // its items, in order
        return index < items.count ? items[index] : nil
    }
}

/// `resolveAll`'s root: its instance is its list (owned by the instance, `LateEdges.owned`).
private final class ListFactory: Factory {
    override func make(_ words: UnsafeMutablePointer<UInt64>, count: Int) throws(CallbackFailure) -> UnsafeMutableRawPointer {
        UnsafeMutableRawPointer(bitPattern: UInt(words[0]))!
    }
}
