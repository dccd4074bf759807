import Synchronization

/// A container's registrations indexed by key id, read without a lock: a
/// two-level array of atomic addresses. Each entry owns a reference; a replaced
/// registration is handed back to the caller, who keeps it alive for readers
/// still holding it.
///
/// Both levels grow on demand, so an empty container (a per-request child, say)
/// costs a few words: the top level is a block `[capacity, chunk addresses...]`
/// replaced by a bigger copy when a key id beyond it is registered (the old
/// block is kept until the table goes, for readers still in it), and a chunk of
/// `chunkSize` entries is made when its first key is registered.
@usableFromInline
final class RegistrationTable: @unchecked Sendable {
    /// 64 entries (512 bytes): a container's first registration in a chunk
    /// allocates and zeroes all of it, which with 8 KB chunks made registering 10
    /// keys a container cost ~1.5x what registering 1,000 does (measured: 180-250
    /// against 135-140 ns a key; 110-150 with these). The price: the top level
    /// grows by 8 bytes per 64 key ids below the container's highest.
    @usableFromInline static var chunkBits: Int { 6 }
    @usableFromInline static var chunkSize: Int { 1 << chunkBits }
    static var maxChunks: Int { 1 << 16 }  // 4M keys

    /// The current top block's address, 0 before the first registration.
    @usableFromInline let top = Atomic<UInt>(0)
    /// Top blocks replaced by bigger ones (readers may still be in them). Writers only.
    private var retiredTops: [UnsafeMutableRawPointer] = []

    init() {}

    deinit {
        if let block = UnsafeMutableRawPointer(bitPattern: top.load(ordering: .acquiring)) {
            forEachEntry(in: block) { Unmanaged<Registration>.fromOpaque(UnsafeRawPointer(bitPattern: $0)!).release() }
            let chunks = Self.chunks(of: block)
            for i in 0..<Self.capacity(of: block) {
                UnsafeMutablePointer<Atomic<UInt>>(bitPattern: chunks[i].load(ordering: .relaxed))?.deallocate()
            }
            block.deallocate()
        }
        for block in retiredTops { block.deallocate() }
    }

    @inlinable @inline(__always)
    static func capacity(of block: UnsafeMutableRawPointer) -> Int { block.load(as: Int.self) }

    @inlinable @inline(__always)
    static func chunks(of block: UnsafeMutableRawPointer) -> UnsafeMutablePointer<Atomic<UInt>> {
        (block + 8).assumingMemoryBound(to: Atomic<UInt>.self)
    }

    @inlinable @inline(__always)
    func get(_ key: Key) -> Unmanaged<Registration>? {
        let id = Int(key.id)
        guard let block = UnsafeMutableRawPointer(bitPattern: top.load(ordering: .acquiring)),
              id >> Self.chunkBits < Self.capacity(of: block) else { return nil }
        let chunk = Self.chunks(of: block)[id >> Self.chunkBits].load(ordering: .acquiring)
        guard chunk != 0 else { return nil }
        let entry = UnsafeMutablePointer<Atomic<UInt>>(bitPattern: chunk)![id & (Self.chunkSize - 1)].load(ordering: .acquiring)
        guard entry != 0 else { return nil }
        return Unmanaged<Registration>.fromOpaque(UnsafeRawPointer(bitPattern: entry)!)
    }

    /// Stores (or with nil clears) the entry for `key` and returns the one it
    /// replaces. Callers serialize writes.
    func replace(_ key: Key, with registration: Registration?) -> Registration? {
        let id = Int(key.id)
        let index = id >> Self.chunkBits
        precondition(index < Self.maxChunks, "Tether: more than \(Self.maxChunks * Self.chunkSize) keys")
        var block = UnsafeMutableRawPointer(bitPattern: top.load(ordering: .relaxed))
        if block == nil || index >= Self.capacity(of: block!) {
            guard registration != nil else { return nil }
            block = grownTop(block, toHold: index)
        }
        let chunks = Self.chunks(of: block!)
        var chunk = UnsafeMutablePointer<Atomic<UInt>>(bitPattern: chunks[index].load(ordering: .relaxed))
        if chunk == nil {
            guard registration != nil else { return nil }
            let fresh = UnsafeMutablePointer<Atomic<UInt>>.allocate(capacity: Self.chunkSize)
            for i in 0..<Self.chunkSize { (fresh + i).initialize(to: Atomic(0)) }
            chunks[index].store(UInt(bitPattern: fresh), ordering: .releasing)
            chunk = fresh
        }
        let address = registration.map { UInt(bitPattern: Unmanaged.passRetained($0).toOpaque()) } ?? 0
        let old = chunk![id & (Self.chunkSize - 1)].exchange(address, ordering: .acquiringAndReleasing)
        return old == 0 ? nil : Unmanaged<Registration>.fromOpaque(UnsafeRawPointer(bitPattern: old)!).takeRetainedValue()
    }

    /// A top block holding chunk `index`, with the chunks of `old` (kept for readers), published.
    private func grownTop(_ old: UnsafeMutableRawPointer?, toHold index: Int) -> UnsafeMutableRawPointer {
        let oldCapacity = old.map(Self.capacity(of:)) ?? 0
        let capacity = min(Self.maxChunks, max(index + 1, oldCapacity * 2, 4))
        let block = UnsafeMutableRawPointer.allocate(byteCount: 8 + capacity * 8, alignment: 8)
        block.storeBytes(of: capacity, as: Int.self)
        let chunks = Self.chunks(of: block)
        for i in 0..<capacity {
            let chunk = i < oldCapacity ? Self.chunks(of: old!)[i].load(ordering: .relaxed) : 0
            (chunks + i).initialize(to: Atomic(chunk))
        }
        top.store(UInt(bitPattern: block), ordering: .releasing)
        if let old { retiredTops.append(old) }
        return block
    }

    /// Calls `body` with every stored entry, in key id order.
    private func forEachEntry(in block: UnsafeMutableRawPointer, _ body: (UInt) -> Void) {
        let chunks = Self.chunks(of: block)
        for i in 0..<Self.capacity(of: block) {
            guard let chunk = UnsafeMutablePointer<Atomic<UInt>>(bitPattern: chunks[i].load(ordering: .acquiring)) else { continue }
            for j in 0..<Self.chunkSize {
                let entry = chunk[j].load(ordering: .relaxed)
                if entry != 0 { body(entry) }
            }
        }
    }

    /// Every registration stored, in key id order. Callers serialize with writes.
    func all() -> [Registration] {
        var result: [Registration] = []
        guard let block = UnsafeMutableRawPointer(bitPattern: top.load(ordering: .acquiring)) else { return result }
        forEachEntry(in: block) { result.append(Unmanaged<Registration>.fromOpaque(UnsafeRawPointer(bitPattern: $0)!).takeUnretainedValue()) }
        return result
    }
}
