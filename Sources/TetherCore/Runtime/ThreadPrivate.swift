/// Allocation for memory one thread writes on every call (its reclaimer record,
/// its handle caches): whole cache lines of its own, so two threads' records
/// never share a line: a shared line makes every such write take the line from
/// the other core (false sharing). Two threads' singleton hits by key scaled
/// 1.45-1.79x with the records packed, 1.75-1.98x apart (alternating runs, one
/// VM). 128 bytes: adjacent-line prefetchers fetch 64-byte lines in pairs.
public enum ThreadPrivate {
    public static var lineBytes: Int { 128 }

    /// Uninitialized room for `count` values; free it with `deallocate()`.
    public static func allocate<T: ~Copyable>(_ type: T.Type, capacity count: Int) -> UnsafeMutablePointer<T> {
        let bytes = (MemoryLayout<T>.stride * count + lineBytes - 1) / lineBytes * lineBytes
        return UnsafeMutableRawPointer.allocate(byteCount: bytes, alignment: lineBytes).bindMemory(to: T.self, capacity: count)
    }
}

/// 128 bytes of nothing, for Swift objects one thread writes on every call (its
/// `ThreadState`, its `Graph`): such an object cannot be aligned to a cache line,
/// so it starts and ends its stored properties with one of these, and no other
/// allocation shares a line pair with the fields between (false sharing, as above).
struct LinePad {
    private var words: (UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64,
                        UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64) =
        (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
}
