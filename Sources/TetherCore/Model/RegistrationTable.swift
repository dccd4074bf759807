import Synchronization

/// A container's registrations indexed by key id, read without a lock: a
/// three-level array of atomic addresses (top block -> groups -> chunks ->
/// entries). Each entry owns a reference; a replaced registration is handed back
/// to the caller, who keeps it alive for readers still holding it.
///
/// Every level grows on demand, so an empty container (a per-request child, say)
/// costs a few words, and one with a few keys a few hundred bytes whatever their
/// ids: key ids are global, and with two levels a container registering one key
/// whose id is 100,000 needed a 12 KB top level. The top level is a block
/// `[capacity, group addresses...]` replaced by a bigger copy when a key id beyond
/// it is registered (the old block is kept until the table goes, for readers
/// still in it); a group of `groupSize` chunk addresses, and a chunk of
/// `chunkSize` entries, are made when their first key is registered. A chunk's
/// word after its entries marks which are stored (writers only), so walking a
/// table (close, dismantle, deinit) visits what is there, not every empty entry.
@usableFromInline
final class RegistrationTable: @unchecked Sendable {
    /// 64 entries (512 bytes): a container's first registration in a chunk
    /// allocates and zeroes all of it, which with 8 KB chunks made registering 10
    /// keys a container cost ~1.5x what registering 1,000 does.
    @usableFromInline static var chunkBits: Int { 6 }  // 64: one bit each in the chunk's mask word
    @usableFromInline static var chunkSize: Int { 1 << chunkBits }
    /// 16 chunks (128 bytes) a group: the top level grows by 8 bytes per 1,024 key ids.
    @usableFromInline static var groupBits: Int { 4 }
    @usableFromInline static var groupSize: Int { 1 << groupBits }
    static var maxGroups: Int { 1 << 12 }  // 4M keys

    /// The current top block's address, 0 before the first registration.
    @usableFromInline let top = Atomic<UInt>(0)
    /// Top blocks replaced by bigger ones (readers may still be in them). Writers only.
    private var retiredTops: [UnsafeMutableRawPointer] = []

    init() {}

    deinit {
        if let block = UnsafeMutableRawPointer(bitPattern: top.load(ordering: .acquiring)) {
            forEachEntry(in: block) { Unmanaged<Registration>.fromOpaque(UnsafeRawPointer(bitPattern: $0)!).release() }
            forEachGroup(in: block) { group in
                for j in 0..<Self.groupSize { UnsafeMutablePointer<Atomic<UInt>>(bitPattern: group[j].load(ordering: .relaxed))?.deallocate() }
                group.deallocate()
            }
            block.deallocate()
        }
        for block in retiredTops { block.deallocate() }
    }

    @inlinable @inline(__always)
    static func capacity(of block: UnsafeMutableRawPointer) -> Int { block.load(as: Int.self) }

    @inlinable @inline(__always)
    static func groups(of block: UnsafeMutableRawPointer) -> UnsafeMutablePointer<Atomic<UInt>> {
        (block + 8).assumingMemoryBound(to: Atomic<UInt>.self)
    }

    @inlinable @inline(__always)
    func get(_ key: Key) -> Unmanaged<Registration>? {
        let id = Int(key.id)
        let groupIndex = id >> (Self.chunkBits + Self.groupBits)
        guard let block = UnsafeMutableRawPointer(bitPattern: top.load(ordering: .acquiring)),
              groupIndex < Self.capacity(of: block) else { return nil }
        let group = Self.groups(of: block)[groupIndex].load(ordering: .acquiring)
        guard group != 0 else { return nil }
        let chunk = UnsafeMutablePointer<Atomic<UInt>>(bitPattern: group)![(id >> Self.chunkBits) & (Self.groupSize - 1)]
            .load(ordering: .acquiring)
        guard chunk != 0 else { return nil }
        let entry = UnsafeMutablePointer<Atomic<UInt>>(bitPattern: chunk)![id & (Self.chunkSize - 1)].load(ordering: .acquiring)
        guard entry != 0 else { return nil }
        return Unmanaged<Registration>.fromOpaque(UnsafeRawPointer(bitPattern: entry)!)
    }

    /// Stores (or with nil clears) the entry for `key` and returns the one it
    /// replaces. Callers serialize writes.
    func replace(_ key: Key, with registration: Registration?) -> Registration? {
        let id = Int(key.id)
        let groupIndex = id >> (Self.chunkBits + Self.groupBits)
        precondition(groupIndex < Self.maxGroups, "Tether: more than \(Self.maxGroups * Self.groupSize * Self.chunkSize) keys")
        var block = UnsafeMutableRawPointer(bitPattern: top.load(ordering: .relaxed))
        if block == nil || groupIndex >= Self.capacity(of: block!) {
            guard registration != nil else { return nil }
            block = grownTop(block, toHold: groupIndex)
        }
        guard let group = Self.made(Self.groups(of: block!) + groupIndex, size: Self.groupSize, if: registration != nil),
              let chunk = Self.made(group + ((id >> Self.chunkBits) & (Self.groupSize - 1)), size: Self.chunkSize + 1,
                                    if: registration != nil) else { return nil }
        let address = registration.map { UInt(bitPattern: Unmanaged.passRetained($0).toOpaque()) } ?? 0
        let bit: UInt = 1 << UInt(id & (Self.chunkSize - 1))
        let mask = chunk[Self.chunkSize].load(ordering: .relaxed)
        chunk[Self.chunkSize].store(registration == nil ? mask & ~bit : mask | bit, ordering: .relaxed)
        let old = chunk[id & (Self.chunkSize - 1)].exchange(address, ordering: .acquiringAndReleasing)
        return old == 0 ? nil : Unmanaged<Registration>.fromOpaque(UnsafeRawPointer(bitPattern: old)!).takeRetainedValue()
    }

    /// The zeroed array of `size` atomic words at `slot`, made and published now
    /// if there is none and `make`; nil if there is none and not `make`.
    private static func made(_ slot: UnsafeMutablePointer<Atomic<UInt>>, size: Int, if make: Bool) -> UnsafeMutablePointer<Atomic<UInt>>? {
        if let existing = UnsafeMutablePointer<Atomic<UInt>>(bitPattern: slot.pointee.load(ordering: .relaxed)) { return existing }
        guard make else { return nil }
        let fresh = UnsafeMutablePointer<Atomic<UInt>>.allocate(capacity: size)
        for i in 0..<size { (fresh + i).initialize(to: Atomic(0)) }
        slot.pointee.store(UInt(bitPattern: fresh), ordering: .releasing)
        return fresh
    }

    /// A top block holding group `index`, with the groups of `old` (kept for readers), published.
    private func grownTop(_ old: UnsafeMutableRawPointer?, toHold index: Int) -> UnsafeMutableRawPointer {
        let oldCapacity = old.map(Self.capacity(of:)) ?? 0
        let capacity = min(Self.maxGroups, max(index + 1, oldCapacity * 2, 4))
        let block = UnsafeMutableRawPointer.allocate(byteCount: 8 + capacity * 8, alignment: 8)
        block.storeBytes(of: capacity, as: Int.self)
        let groups = Self.groups(of: block)
        for i in 0..<capacity {
            let group = i < oldCapacity ? Self.groups(of: old!)[i].load(ordering: .relaxed) : 0
            (groups + i).initialize(to: Atomic(group))
        }
        top.store(UInt(bitPattern: block), ordering: .releasing)
        if let old { retiredTops.append(old) }
        return block
    }

    /// Calls `body` with every group of `block`.
    private func forEachGroup(in block: UnsafeMutableRawPointer, _ body: (UnsafeMutablePointer<Atomic<UInt>>) -> Void) {
        let groups = Self.groups(of: block)
        for i in 0..<Self.capacity(of: block) {
            if let group = UnsafeMutablePointer<Atomic<UInt>>(bitPattern: groups[i].load(ordering: .acquiring)) { body(group) }
        }
    }

    /// Calls `body` with every stored entry, in key id order.
    private func forEachEntry(in block: UnsafeMutableRawPointer, _ body: (UInt) -> Void) {
        forEachGroup(in: block) { group in
            for i in 0..<Self.groupSize {
                guard let chunk = UnsafeMutablePointer<Atomic<UInt>>(bitPattern: group[i].load(ordering: .acquiring)) else { continue }
                var mask = chunk[Self.chunkSize].load(ordering: .relaxed)
                while mask != 0 {
                    body(chunk[mask.trailingZeroBitCount].load(ordering: .relaxed))
                    mask &= mask - 1
                }
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
