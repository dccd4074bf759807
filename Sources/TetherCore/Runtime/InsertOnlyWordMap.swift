import Synchronization

/// A map of nonzero words to nonzero words that only grows, read without a lock: for what is
/// made once and never freed (the ABI's provider trampolines by code address), looked up on a
/// request's path. Open addressing in a table of atomic words (no object: a reader retains
/// nothing): a writer (under `writer`) stores the value, then the key releasing; a reader loads
/// the key acquiring, so it sees the value. Grown by a doubled copy published releasing; an old
/// table is never freed (a reader may still probe it, and it answers every key it had; each
/// table links to the one before, so it stays reachable), so the map holds at most twice its last table.
package final class InsertOnlyWordMap: @unchecked Sendable {
    /// A table's address: its mask (slots - 1), the table before (0 for the first), then key,
    /// value, key, value, ...
    private let current: Atomic<UInt>
    /// The writers' lock, with how many keys there are.
    private let writer = Lock<Int>(0)

    package init() { current = Atomic(UInt(bitPattern: Self.table(slots: 256, after: nil))) }

    /// Around fork() (a `pthread_atfork` handler of the owner's): the writers' lock held, so a
    /// child forked while another thread inserted finds it free (`unlockAfterFork` in both).
    package func lockForFork() { writer.lockForFork() }
    package func unlockAfterFork() { writer.unlockAfterFork() }

    /// The value stored for `key`, or 0.
    package func value(of key: UInt) -> UInt {
        guard key != 0 else { return 0 }
        let table = UnsafeMutablePointer<Atomic<UInt>>(bitPattern: current.load(ordering: .acquiring)).unsafelyUnwrapped
        let mask = table[0].load(ordering: .relaxed)
        var i = Self.slot(of: key, mask)
        while true {
            let found = table[Self.keyAt(i)].load(ordering: .acquiring)
            if found == key { return table[Self.keyAt(i) + 1].load(ordering: .relaxed) }
            if found == 0 { return 0 }
            i = (i + 1) & mask
        }
    }

    /// Stores `value` for `key` (both nonzero; a key is inserted once).
    package func insert(_ key: UInt, _ value: UInt) {
        precondition(key != 0 && value != 0)
        writer.withLock { count in
            var table = UnsafeMutablePointer<Atomic<UInt>>(bitPattern: current.load(ordering: .relaxed)).unsafelyUnwrapped
            count += 1
            let slots = Int(table[0].load(ordering: .relaxed)) + 1
            if count * 2 > slots {
                let grown = Self.table(slots: slots * 2, after: table)
                for i in 0..<UInt(slots) {
                    let old = table[Self.keyAt(i)].load(ordering: .relaxed)
                    if old != 0 { Self.put(old, table[Self.keyAt(i) + 1].load(ordering: .relaxed), in: grown) }
                }
                current.store(UInt(bitPattern: grown), ordering: .releasing)
                table = grown
            }
            Self.put(key, value, in: table)
        }
    }

    private static func table(slots: Int, after previous: UnsafeMutablePointer<Atomic<UInt>>?) -> UnsafeMutablePointer<Atomic<UInt>> {
        let table = UnsafeMutablePointer<Atomic<UInt>>.allocate(capacity: 2 + 2 * slots)
        table.initialize(to: Atomic(UInt(slots - 1)))
        (table + 1).initialize(to: Atomic(UInt(bitPattern: previous)))
        for i in 2..<2 + 2 * slots { (table + i).initialize(to: Atomic(0)) }
        return table
    }

    @inline(__always)
    private static func keyAt(_ slot: UInt) -> Int { 2 + 2 * Int(slot) }

    @inline(__always)
    private static func slot(of key: UInt, _ mask: UInt) -> UInt { ((key &* 0x9E37_79B9_7F4A_7C15) >> 32) & mask }

    private static func put(_ key: UInt, _ value: UInt, in table: UnsafeMutablePointer<Atomic<UInt>>) {
        let mask = table[0].load(ordering: .relaxed)
        var i = slot(of: key, mask)
        while table[keyAt(i)].load(ordering: .relaxed) != 0 { i = (i + 1) & mask }
        table[keyAt(i) + 1].store(value, ordering: .relaxed)
        table[keyAt(i)].store(key, ordering: .releasing)
    }
}
