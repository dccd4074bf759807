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
///
/// A table of at most `smallKeys` keys (a child made per request with a
/// registration or two) is one small block instead, `[count, (key id,
/// address) × smallKeys]`, searched in order, at `small` (read only while `top`
/// is 0, so a root's lookups cost what they did). Its pairs are appended (a
/// key's address replaced in place) and never removed; the next key moves them
/// all to the levels above, the block kept for readers still in it. The block is
/// the table's own first words (`smallArea`): a child's registrations make no
/// allocation for it, and it lives exactly as long as the table, as readers need.
@usableFromInline
final class RegistrationTable: @unchecked Sendable {
    /// The small block's words (`1 + 2 * smallKeys`), zero until the first key. First, so
    /// `_getUnsafePointerToStoredProperties` finds it; only ever accessed through that raw
    /// address, as atomics (`inlineSmall`).
    private var smallArea: (UInt, UInt, UInt, UInt, UInt, UInt, UInt, UInt, UInt) = (0, 0, 0, 0, 0, 0, 0, 0, 0)

    /// 64 entries (512 bytes): a container's first registration in a chunk
    /// allocates and zeroes all of it, which with 8 KB chunks made registering 10
    /// keys a container cost ~1.5x what registering 1,000 does.
    @usableFromInline static var chunkBits: Int { 6 }  // 64: one bit each in the chunk's mask word
    @usableFromInline static var chunkSize: Int { 1 << chunkBits }
    /// 16 chunks (128 bytes) a group: the top level grows by 8 bytes per 1,024 key ids.
    @usableFromInline static var groupBits: Int { 4 }
    @usableFromInline static var groupSize: Int { 1 << groupBits }
    static var maxGroups: Int { 1 << 12 }  // 4M keys

    /// The current top block's address, 0 before the first registration (or while the table is small).
    @usableFromInline let top = Atomic<UInt>(0)
    /// The small block's address, or 0.
    @usableFromInline let small = Atomic<UInt>(0)
    /// Whether the small block's entries are the table's (not moved to the levels). Writers only.
    private var smallOwns = true
    @usableFromInline static var smallKeys: Int { 4 }
    /// Top blocks replaced by bigger ones (readers may still be in them). Writers only.
    private var retiredTops: [UnsafeMutableRawPointer] = []

    /// Nothing was ever registered in the table.
    var neverStored: Bool { top.load(ordering: .acquiring) == 0 && small.load(ordering: .acquiring) == 0 }

    /// Whether the table starts as a small block (a child container's: see above);
    /// a root's starts with the levels, which its lookups read inline.
    private let startsSmall: Bool

    init(small: Bool = false) {
        startsSmall = small
        // Swift lays out a final class's stored properties in order; checked, not assumed.
        precondition(MemoryLayout.size(ofValue: smallArea) == (1 + 2 * Self.smallKeys) * MemoryLayout<UInt>.size
                         && withUnsafeMutablePointer(to: &smallArea) { UnsafeMutableRawPointer($0) } == _getUnsafePointerToStoredProperties(self),
                     "Tether: smallArea is not the first stored property, or not 1 + 2 * smallKeys words")
    }

    /// The small block in the table's own words (`smallArea`).
    private var inlineSmall: UnsafeMutablePointer<Atomic<UInt>> {
        _getUnsafePointerToStoredProperties(self).assumingMemoryBound(to: Atomic<UInt>.self)
    }

    deinit {
        if smallOwns, let block = UnsafeMutablePointer<Atomic<UInt>>(bitPattern: small.load(ordering: .acquiring)) {
            Self.forEachSmallEntry(block) { OwnedWord<Registration>.release($0) }
        }
        Self.release(levels: top.load(ordering: .acquiring), retiredTops)
        UnsafeMutablePointer<Atomic<UInt>>(bitPattern: grown.load(ordering: .acquiring))?.deallocate()
        for block in retiredGrown { block.deallocate() }
    }

    /// Releases the entries of the levels whose top block is at `levels` and frees their blocks, and `retiredTops`.
    private static func release(levels: UInt, _ retiredTops: [UnsafeMutableRawPointer]) {
        if let block = UnsafeMutableRawPointer(bitPattern: levels) {
            forEachEntry(in: block) { OwnedWord<Registration>.release($0) }
            forEachGroup(in: block) { group in
                for j in 0..<groupSize { UnsafeMutablePointer<Atomic<UInt>>(bitPattern: group[j].load(ordering: .relaxed))?.deallocate() }
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

    /// The entry for `key` in the levels only: a small table's are found by
    /// `getSmall` (`lookup` asks both), kept off this path so that a root's
    /// lookups, inlined into the hit paths, cost what they did.
    @inlinable @inline(__always)
    func get(_ key: Key) -> Borrowed<Registration>? {
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
        return Borrowed<Registration>(word: entry)!
    }

    /// The entry for `key`, wherever it is.
    @inline(__always)
    func lookup(_ key: Key) -> Borrowed<Registration>? { get(key) ?? getSmall(key) }

    /// The entry for `key` in the small block, if the table is small (or was:
    /// a reader that still sees `top` 0 finds the moved entries there).
    func getSmall(_ key: Key) -> Borrowed<Registration>? {
        let id = key.id
        guard top.load(ordering: .acquiring) == 0,
              let block = UnsafeMutablePointer<Atomic<UInt>>(bitPattern: small.load(ordering: .acquiring)) else { return nil }
        let count = Int(block[0].load(ordering: .acquiring))
        var i = 1
        while i < 1 + 2 * count {
            if block[i].load(ordering: .relaxed) == UInt(id) {
                let address = block[i + 1].load(ordering: .acquiring)
                return address == 0 ? nil : Borrowed<Registration>(word: address)!
            }
            i += 2
        }
        return nil
    }

    /// The number of keys a small table holds (any replaced by nil included: keys are never
    /// removed from the block), or nil once the levels hold them.
    var smallKeyCount: Int? {
        guard top.load(ordering: .acquiring) == 0 else { return nil }
        guard let block = UnsafeMutablePointer<Atomic<UInt>>(bitPattern: small.load(ordering: .acquiring)) else { return 0 }
        return Int(block[0].load(ordering: .acquiring))
    }

    /// The table's slots (nil before its first key): the small block while the table is small, else
    /// (a child that registered more than `smallKeys`) `grown`, the same layout. Its slots are its keys
    /// in the order first registered, a key registered again keeping its slot. A child's own
    /// registrations, so read, are its per-request component, which a plan recorded through a child's
    /// names by slot (`Plan.fits`).
    @inline(__always)
    var componentSlots: UnsafeMutablePointer<Atomic<UInt>>? {
        guard top.load(ordering: .acquiring) != 0 else {
            return UnsafeMutablePointer<Atomic<UInt>>(bitPattern: small.load(ordering: .acquiring))
        }
        return UnsafeMutablePointer<Atomic<UInt>>(bitPattern: grown.load(ordering: .acquiring))
    }

    /// The number of slots of a small block (`componentSlots`).
    @inline(__always)
    static func slotCount(_ block: UnsafeMutablePointer<Atomic<UInt>>) -> Int { Int(block[0].load(ordering: .acquiring)) }

    /// The registration in slot `slot` of a block (`componentSlots`), nil if its key was cleared.
    @inline(__always)
    static func registration(atSlot slot: Int, in block: UnsafeMutablePointer<Atomic<UInt>>) -> Borrowed<Registration>? {
        Borrowed<Registration>(word: block[2 + 2 * slot].load(ordering: .acquiring))
    }

    /// The key of slot `slot` of a block (`componentSlots`), cleared or not.
    static func key(atSlot slot: Int, in block: UnsafeMutablePointer<Atomic<UInt>>) -> Key {
        Key(id: UInt32(block[1 + 2 * slot].load(ordering: .relaxed)))
    }

    /// A table that started small and outgrew it (a child's of more than `smallKeys` registrations):
    /// its slots as the small block lays them out, `[count, (key id, address) × count]`, every key in
    /// the order first registered (a key registered again keeping its slot), each address the levels'
    /// entry of the key (not owned: the levels' reference; a replaced one the caller keeps alive, as a
    /// small block's), so a child's component is its slots whatever their number (`componentSlots`).
    /// Published before `top` on the move to the levels; a full block is replaced by a bigger copy,
    /// the old kept until the table goes, for readers still in it. 0 while the table is small.
    private let grown = Atomic<UInt>(0)
    /// Writers only: each key's slot in `grown`, and its capacity in slots.
    private var grownSlot: [UInt32: Int] = [:]
    private var grownCapacity = 0
    private var retiredGrown: [UnsafeMutablePointer<Atomic<UInt>>] = []

    /// Mirrors `key`'s levels entry (`address`, its registration's) into `grown`, giving a new key the
    /// next slot (a cleared one only when `keepsSlot`: a small block's, moved). Writers only.
    private func noteGrown(_ key: Key, _ address: UInt, keepsSlot: Bool = false) {
        var block = UnsafeMutablePointer<Atomic<UInt>>(bitPattern: grown.load(ordering: .relaxed))
        if let slot = grownSlot[key.id] {
            block![2 + 2 * slot].store(address, ordering: .releasing)
            return
        }
        guard address != 0 || keepsSlot else { return }  // clearing a key never registered here
        let count = grownSlot.count
        if count == grownCapacity {
            let capacity = max(2 * Self.smallKeys, 2 * grownCapacity)
            let fresh = UnsafeMutablePointer<Atomic<UInt>>.allocate(capacity: 1 + 2 * capacity)
            for i in 0..<(1 + 2 * capacity) {
                (fresh + i).initialize(to: Atomic(i < 1 + 2 * count ? block.map { $0[i].load(ordering: .relaxed) } ?? 0 : 0))
            }
            if let block { retiredGrown.append(block) }
            block = fresh
            grownCapacity = capacity
            grown.store(UInt(bitPattern: fresh), ordering: .releasing)
        }
        grownSlot[key.id] = count
        block![1 + 2 * count].store(UInt(key.id), ordering: .relaxed)
        block![2 + 2 * count].store(address, ordering: .relaxed)
        block![0].store(UInt(count + 1), ordering: .releasing)
    }

    /// Calls `body` with every stored address of the small block.
    fileprivate static func forEachSmallEntry(_ block: UnsafeMutablePointer<Atomic<UInt>>, _ body: (UInt) -> Void) {
        for i in 0..<Int(block[0].load(ordering: .relaxed)) {
            let address = block[2 + 2 * i].load(ordering: .relaxed)
            if address != 0 { body(address) }
        }
    }

    /// Stores (or with nil clears) the entry for `key` and returns the one it
    /// replaces. Callers serialize writes.
    func replace(_ key: Key, with registration: Registration?) -> Registration? {
        if startsSmall && levels == 0 {
            if let done = replaceSmall(key, with: registration) { return done.old }
        }
        let old = replaceInLevels(key, with: registration)
        if startsSmall { noteGrown(key, registration.map { UInt(bitPattern: Unmanaged.passUnretained($0).toOpaque()) } ?? 0) }
        return old
    }

    /// `replace` while the table is small (or empty); nil when `key` does not
    /// fit, after the entries moved to the levels.
    private func replaceSmall(_ key: Key, with registration: Registration?) -> (old: Registration?, Void)? {
        var block = UnsafeMutablePointer<Atomic<UInt>>(bitPattern: small.load(ordering: .relaxed))
        let count = block.map { Int($0[0].load(ordering: .relaxed)) } ?? 0
        for i in 0..<count where block![1 + 2 * i].load(ordering: .relaxed) == UInt(key.id) {
            let address = OwnedWord.make(registration)
            let old = block![2 + 2 * i].exchange(address, ordering: .acquiringAndReleasing)
            return (OwnedWord<Registration>.take(old), ())
        }
        guard let registration else { return (nil, ()) }
        if count < Self.smallKeys {
            if block == nil { block = inlineSmall }  // zero since init
            block![1 + 2 * count].store(UInt(key.id), ordering: .relaxed)
            block![2 + 2 * count].store(OwnedWord.make(registration), ordering: .relaxed)
            block![0].store(UInt(count + 1), ordering: .releasing)
            if count == 0 { small.store(UInt(bitPattern: block!), ordering: .releasing) }
            return (nil, ())
        }
        // Full: its entries move to the levels (their references with them); readers may still be in it.
        let full = block!
        migrating = true  // the levels are built aside, then published at once
        var moved: [(Key, Registration)] = []
        Self.forEachSmallEntry(full) { address in
            let r = OwnedWord<Registration>.take(address)!
            moved.append((r.key, r))
        }
        for (key, r) in moved { _ = replaceInLevels(key, with: r) }
        // The slots (cleared ones too) keep their order, published before `top` (`componentSlots`).
        for i in 0..<Int(full[0].load(ordering: .relaxed)) {
            noteGrown(Key(id: UInt32(full[1 + 2 * i].load(ordering: .relaxed))), full[2 + 2 * i].load(ordering: .relaxed),
                      keepsSlot: true)
        }
        migrating = false
        smallOwns = false  // the block stays at `small`, for readers that saw `top` still 0
        top.store(levels, ordering: .releasing)
        return nil
    }

    /// The levels' top block (what `top` holds unless the table is small). Writers only.
    private var levels: UInt = 0
    /// Set while a full small block moves to the levels: `grownTop` then leaves `top` alone.
    private var migrating = false


    private func replaceInLevels(_ key: Key, with registration: Registration?) -> Registration? {
        let id = Int(key.id)
        let groupIndex = id >> (Self.chunkBits + Self.groupBits)
        precondition(groupIndex < Self.maxGroups, "Tether: more than \(Self.maxGroups * Self.groupSize * Self.chunkSize) keys")
        var block = UnsafeMutableRawPointer(bitPattern: levels)
        if block == nil || groupIndex >= Self.capacity(of: block!) {
            guard registration != nil else { return nil }
            block = grownTop(block, toHold: groupIndex)
        }
        guard let group = Self.made(Self.groups(of: block!) + groupIndex, size: Self.groupSize, if: registration != nil),
              let chunk = Self.made(group + ((id >> Self.chunkBits) & (Self.groupSize - 1)), size: Self.chunkSize + 1,
                                    if: registration != nil) else { return nil }
        let address = OwnedWord.make(registration)
        let bit: UInt = 1 << UInt(id & (Self.chunkSize - 1))
        let mask = chunk[Self.chunkSize].load(ordering: .relaxed)
        chunk[Self.chunkSize].store(registration == nil ? mask & ~bit : mask | bit, ordering: .relaxed)
        let old = chunk[id & (Self.chunkSize - 1)].exchange(address, ordering: .acquiringAndReleasing)
        return OwnedWord<Registration>.take(old)
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
        levels = UInt(bitPattern: block)
        if !migrating { top.store(levels, ordering: .releasing) }
        if let old { retiredTops.append(old) }
        return block
    }

    /// Calls `body` with every group of `block`.
    private static func forEachGroup(in block: UnsafeMutableRawPointer, _ body: (UnsafeMutablePointer<Atomic<UInt>>) -> Void) {
        let groups = Self.groups(of: block)
        for i in 0..<Self.capacity(of: block) {
            if let group = UnsafeMutablePointer<Atomic<UInt>>(bitPattern: groups[i].load(ordering: .acquiring)) { body(group) }
        }
    }

    /// Calls `body` with every stored entry, in key id order.
    private static func forEachEntry(in block: UnsafeMutableRawPointer, _ body: (UInt) -> Void) {
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
        forEach { result.append($0) }
        if top.load(ordering: .acquiring) == 0, result.count > 1 { result.sort { $0.key.id < $1.key.id } }  // as the levels give them
        return result
    }

    /// Calls `body` with every registration stored (a small table's in the order registered,
    /// else in key id order). Callers serialize with writes.
    func forEach(_ body: (Registration) -> Void) {
        let word = top.load(ordering: .acquiring)
        if word == 0, let block = UnsafeMutablePointer<Atomic<UInt>>(bitPattern: small.load(ordering: .acquiring)) {
            Self.forEachSmallEntry(block) { Borrowed<Registration>(word: $0)!.borrow(body) }
            return
        }
        guard let block = UnsafeMutableRawPointer(bitPattern: word) else { return }
        Self.forEachEntry(in: block) { Borrowed<Registration>(word: $0)!.borrow(body) }
    }
}
