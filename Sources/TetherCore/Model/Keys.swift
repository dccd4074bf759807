#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import Synchronization

/// A process-wide interned key: the same string has the same id in every container.
public struct Key: Hashable, Sendable {
    public let id: UInt32
    @inlinable public init(id: UInt32) { self.id = id }

    /// Interns `name` (idempotent).
    public init(_ name: String) { self = KeyTable.shared.intern(name) }

    /// The key's string.
    public var name: String { KeyTable.shared.name(of: self) }

    /// The key quoted for messages: `"Logger"` (a very long one cut short: `ErrorParts.keyCap`).
    public var quoted: String { "\"" + capped(name, ErrorParts.keyCap) + "\"" }
}

/// Number of keys interned so far (a global, so reading it needs no object).
@usableFromInline let internedCount = Atomic<UInt32>(0)

/// String <-> id table behind `Key`. Keys are never removed, so ids stay valid.
/// Compact (about 30 bytes a 10-byte key) and with no bulk copying as it grows:
/// each name stored once in pages that are never moved or freed (so a stored
/// name can be handed out as a C string for good: the ABI's `KeyCache` compares
/// against it), a block list of where each name starts, and an open-addressing
/// table of ids over their hashes. Everything is written under `state`; a
/// stored name is read without it only through the pointer `intern` returned
/// (after the lock, so its bytes were written before), and `isValid` reads
/// `internedCount`, stored releasing after the name.
public final class KeyTable: Sendable {
    public static let shared = KeyTable()

    /// Names are stored as a 4-byte length, the UTF-8 and a NUL, in pages of
    /// `pageSize` bytes (a longer name gets a page of its own).
    private static var pageSize: Int { 1 << 16 }
    /// Start locations (`page << 16 | offset`) are kept in blocks of this many.
    private static var blockSize: Int { 4096 }

    private struct State {
        var pages: [UnsafeMutableRawPointer] = []
        /// Bytes used in the last page.
        var used = pageSize
        var blocks: [UnsafeMutablePointer<UInt32>] = []
        var count = 0
        /// id + 1 per slot, 0 when empty; a power of two, at most half full.
        var slots = [UInt32](repeating: 0, count: 64)

        /// Where name `id` is stored: its length, then its UTF-8 (NUL-terminated).
        func record(_ id: Int) -> UnsafeMutableRawPointer {
            let location = Int(blocks[id / blockSize][id % blockSize])
            return pages[location >> 16] + (location & 0xFFFF)
        }

        func name(_ id: Int) -> UnsafeBufferPointer<UInt8> {
            let record = record(id)
            return UnsafeBufferPointer(start: (record + 4).assumingMemoryBound(to: UInt8.self),
                                       count: Int(record.loadUnaligned(as: UInt32.self)))
        }

        /// The slot holding `utf8`, or the empty slot where it would go.
        func find(_ utf8: UnsafeBufferPointer<UInt8>) -> (slot: Int, id: UInt32?) {
            let mask = slots.count - 1
            var slot = Int(KeyTable.hash(utf8)) & mask
            while slots[slot] != 0 {
                let id = slots[slot] - 1
                let stored = name(Int(id))
                if stored.count == utf8.count && (utf8.isEmpty || memcmp(stored.baseAddress!, utf8.baseAddress!, utf8.count) == 0) {
                    return (slot, id)
                }
                slot = (slot + 1) & mask
            }
            return (slot, nil)
        }

        /// Stores `utf8` as name `count` (the caller then counts it).
        mutating func append(_ utf8: UnsafeBufferPointer<UInt8>) {
            let size = 4 + utf8.count + 1
            if used + size > pageSize {
                precondition(pages.count < 1 << 16, "Tether: the key names exceed 4 GB")
                pages.append(.allocate(byteCount: max(size, pageSize), alignment: 16))
                used = 0
            }
            let record = pages[pages.count - 1] + used
            record.storeBytes(of: UInt32(utf8.count), as: UInt32.self)
            if !utf8.isEmpty { (record + 4).copyMemory(from: utf8.baseAddress!, byteCount: utf8.count) }
            (record + 4 + utf8.count).storeBytes(of: 0, as: UInt8.self)
            if count % blockSize == 0 { blocks.append(.allocate(capacity: blockSize)) }
            blocks[count / blockSize][count % blockSize] = UInt32((pages.count - 1) << 16 | used)
            used += size
        }

        mutating func grow() {
            slots = [UInt32](repeating: 0, count: slots.count * 2)
            let mask = slots.count - 1
            for id in 0..<count {
                var slot = Int(KeyTable.hash(name(id))) & mask
                while slots[slot] != 0 { slot = (slot + 1) & mask }
                slots[slot] = UInt32(id + 1)
            }
        }
    }
    private let state = Lock(State())

    /// FNV-1a: keys are the application's own names, so no flooding defence is needed.
    private static func hash(_ utf8: UnsafeBufferPointer<UInt8>) -> UInt32 {
        var h: UInt32 = 2_166_136_261
        for byte in utf8 { h = (h ^ UInt32(byte)) &* 16_777_619 }
        return h
    }

    public func intern(_ name: String) -> Key {
        var name = name
        return name.withUTF8 { intern(utf8: $0).key }
    }

    /// Interns `utf8` (idempotent); also returns the stored name, NUL-terminated,
    /// which stays valid and unchanged for the life of the process.
    public func intern(utf8: UnsafeBufferPointer<UInt8>) -> (key: Key, name: UnsafePointer<CChar>) {
        state.withLock { s in
            let (slot, found) = s.find(utf8)
            let id: UInt32
            if let found {
                id = found
            } else {
                id = UInt32(s.count)
                s.append(utf8)
                s.count += 1
                s.slots[slot] = id + 1
                if s.count * 2 > s.slots.count { s.grow() }
                internedCount.store(id + 1, ordering: .releasing)
            }
            return (Key(id: id), UnsafePointer((s.record(Int(id)) + 4).assumingMemoryBound(to: CChar.self)))
        }
    }

    /// The key for `name` if it was ever interned.
    public func lookup(_ name: String) -> Key? {
        var name = name
        return name.withUTF8 { utf8 in state.withLock { s in s.find(utf8).id.map(Key.init(id:)) } }
    }

    /// Whether `id` is a key interned so far (no lock, no retain: resolves by id check it).
    @inlinable @inline(__always)
    public static func isValid(_ id: UInt32) -> Bool {
        id < internedCount.load(ordering: .acquiring)
    }

    /// The stored name of `key`, NUL-terminated, valid for the life of the process.
    public func cName(of key: Key) -> UnsafePointer<CChar>? {
        state.withLock { s in
            Int(key.id) < s.count ? UnsafePointer((s.record(Int(key.id)) + 4).assumingMemoryBound(to: CChar.self)) : nil
        }
    }

    public func name(of key: Key) -> String {
        state.withLock { s in
            Int(key.id) < s.count ? String(decoding: s.name(Int(key.id)), as: UTF8.self) : "#\(key.id)"
        }
    }
}
