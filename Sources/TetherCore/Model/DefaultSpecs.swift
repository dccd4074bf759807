import Synchronization

/// The spec a registration starts with (graph scope; no context, destructor or completion
/// callbacks), one per key for the process instead of one per registration: a registration made
/// per request and configured once (`tether_set_context`) then allocates one spec, not two, and
/// frees none it did not make. Immortal (never released; at most one per key, and keys are never
/// removed either), so a registration that replaces it neither releases nor keeps it.
/// Lock-free: pages of atomic addresses indexed by key id, each made on first use.
enum DefaultSpecs {
    private static var pageBits: Int { 10 }
    /// Key ids below 1M; a registration of a key beyond makes a spec of its own.
    private static var maxPages: Int { 1 << 10 }
    private static let pages: UnsafeMutablePointer<Atomic<UInt>> = {
        let pages = UnsafeMutablePointer<Atomic<UInt>>.allocate(capacity: maxPages)
        for i in 0..<maxPages { (pages + i).initialize(to: Atomic(0)) }
        return pages
    }()

    /// `key`'s default spec (made now if it is the first), unretained; nil when `key` has no slot.
    static func spec(for key: Key) -> Borrowed<InstanceSpec>? {
        let id = Int(key.id)
        guard id >> pageBits < maxPages else { return nil }
        let slot = page(id >> pageBits) + (id & (1 << pageBits - 1))
        return slot.pointee.publishOnce(retaining: {
            InstanceSpec(key: key, scope: .graph, context: nil, destructor: nil, completions: [])
        })
    }

    /// The slots of the keys of page `index` (owned specs, never released).
    private static func page(_ index: Int) -> UnsafeMutablePointer<AtomicRef<InstanceSpec>> {
        typealias Slots = UnsafeMutablePointer<AtomicRef<InstanceSpec>>
        if let page = Slots(bitPattern: pages[index].load(ordering: .acquiring)) { return page }
        let size = 1 << pageBits
        let fresh = Slots.allocate(capacity: size)
        for i in 0..<size { (fresh + i).initialize(to: AtomicRef()) }
        let (exchanged, found) = pages[index].compareExchange(expected: 0, desired: UInt(bitPattern: fresh), ordering: .acquiringAndReleasing)
        if exchanged { return fresh }
        fresh.deallocate()
        return Slots(bitPattern: found)!
    }
}
