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

/// Memory every thread reads on every call and nobody writes once made (a plan's
/// steps, inputs and block template), from blocks of whole line pairs of its own
/// (`ThreadPrivate.lineBytes`-aligned and padded). What a worker makes lazily sits
/// in its malloc arena, next to the chunks its next requests take: one line shared
/// with a request's 32-byte object made every other core miss on the plan per
/// request (benchmarks/README, "Lines shared per resolve, shape by shape").
/// Bump-allocated; its owner frees every block at once (`deallocate`).
struct LineArena {
    private var blocks: [UnsafeMutableRawPointer] = []
    private var next = 0
    private var end = 0
    private static var blockBytes: Int { 4 * ThreadPrivate.lineBytes }

    /// Room for `count` values (nil for none), uninitialized.
    mutating func allocate<T>(_: T.Type, capacity count: Int) -> UnsafeMutablePointer<T>? {
        guard count > 0 else { return nil }
        let bytes = MemoryLayout<T>.stride * count, mask = MemoryLayout<T>.alignment - 1
        let start = (next + mask) & ~mask
        if next != 0 && start + bytes <= end {
            next = start + bytes
            return UnsafeMutableRawPointer(bitPattern: start)!.bindMemory(to: T.self, capacity: count)
        }
        let line = ThreadPrivate.lineBytes
        let size = (max(bytes, Self.blockBytes) + line - 1) / line * line
        let block = UnsafeMutableRawPointer.allocate(byteCount: size, alignment: line)
        blocks.append(block)
        // A block of its own for a large buffer leaves the current block's room as it is.
        if bytes < Self.blockBytes || next == 0 {
            next = Int(bitPattern: block) + bytes
            end = Int(bitPattern: block) + size
        }
        return block.bindMemory(to: T.self, capacity: count)
    }

    /// A copy of `array` in the arena.
    mutating func copy<T>(_ array: [T]) -> UnsafeBufferPointer<T> {
        guard let storage = allocate(T.self, capacity: array.count) else { return UnsafeBufferPointer(start: nil, count: 0) }
        _ = UnsafeMutableBufferPointer(start: storage, count: array.count).initialize(from: array)
        return UnsafeBufferPointer(start: storage, count: array.count)
    }

    func deallocate() {
        for block in blocks { block.deallocate() }
    }
}
