import Synchronization

/// A map of nonzero words to nonzero words that only grows, read without a lock: for what is
/// made once and never freed (the ABI's provider trampolines by code address), looked up on a
/// request's path. Open addressing in a table whose slots are atomics: a writer (under `writer`)
/// stores the value, then the key releasing; a reader loads the key acquiring, so it sees the
/// value. Grown by a doubled copy published through `AtomicRef`; an old table stays (never
/// freed: a reader may still probe it, and it still answers every key it had), so what it holds
/// is at most twice the last table.
package final class InsertOnlyWordMap: @unchecked Sendable {
    private final class Table {
        let mask: Int
        /// Key, value, key, value, ...; 0 is an empty slot.
        let words: UnsafeMutablePointer<Atomic<UInt>>

        init(capacity: Int) {
            mask = capacity - 1
            words = .allocate(capacity: capacity * 2)
            for i in 0..<capacity * 2 { (words + i).initialize(to: Atomic(0)) }
        }

        func slot(of key: UInt) -> Int {
            Int(truncatingIfNeeded: (key &* 0x9E37_79B9_7F4A_7C15) >> 32) & mask
        }
    }

    private let current = AtomicRef<Table>()
    private let writer = Lock<Int>(0)

    package init() {
        current.publish(Borrowed(Unmanaged.passRetained(Table(capacity: 256)).takeUnretainedValue()))
    }

    /// The value stored for `key`, or 0.
    package func value(of key: UInt) -> UInt {
        guard key != 0, let table = current.load()?.object else { return 0 }
        var i = table.slot(of: key)
        while true {
            let found = table.words[2 * i].load(ordering: .acquiring)
            if found == key { return table.words[2 * i + 1].load(ordering: .relaxed) }
            if found == 0 { return 0 }
            i = (i + 1) & table.mask
        }
    }

    /// Stores `value` for `key` (both nonzero; a key is inserted once).
    package func insert(_ key: UInt, _ value: UInt) {
        precondition(key != 0 && value != 0)
        writer.withLock { count in
            var table = current.load()!.object
            count += 1
            if count * 2 > table.mask + 1 {
                let grown = Unmanaged.passRetained(Table(capacity: (table.mask + 1) * 2)).takeUnretainedValue()
                for i in 0...table.mask {
                    let old = table.words[2 * i].load(ordering: .relaxed)
                    if old != 0 { Self.put(old, table.words[2 * i + 1].load(ordering: .relaxed), in: grown) }
                }
                current.publish(Borrowed(grown))
                table = grown
            }
            Self.put(key, value, in: table)
        }
    }

    private static func put(_ key: UInt, _ value: UInt, in table: Table) {
        var i = table.slot(of: key)
        while table.words[2 * i].load(ordering: .relaxed) != 0 { i = (i + 1) & table.mask }
        table.words[2 * i + 1].store(value, ordering: .relaxed)
        table.words[2 * i].store(key, ordering: .releasing)
    }
}
