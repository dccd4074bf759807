import Synchronization

/// A process-wide interned key: the same string has the same id in every container.
public struct Key: Hashable, Sendable {
    public let id: UInt32
    @inlinable public init(id: UInt32) { self.id = id }

    /// Interns `name` (idempotent).
    public init(_ name: String) { self = KeyTable.shared.intern(name) }

    /// The key's string.
    public var name: String { KeyTable.shared.name(of: self) }

    /// The key quoted for messages: `"Logger"`.
    public var quoted: String { "\"" + name + "\"" }
}

/// Number of keys interned so far (a global, so reading it needs no object).
@usableFromInline let internedCount = Atomic<UInt32>(0)

/// String <-> id table behind `Key`. Keys are never removed, so ids stay valid.
/// Compact (about 35 bytes a key): the names' UTF-8 back to back, and an
/// open-addressing table of ids over their hashes.
public final class KeyTable: Sendable {
    public static let shared = KeyTable()

    private struct State {
        /// Every name's UTF-8, back to back: name `id` ends at `ends[id]` and
        /// starts where the previous one ends.
        var bytes: [UInt8] = []
        var ends: [UInt32] = []
        /// id + 1 per slot, 0 when empty; a power of two, at most half full.
        var slots = [UInt32](repeating: 0, count: 64)

        func name(_ id: Int) -> ArraySlice<UInt8> {
            bytes[(id == 0 ? 0 : Int(ends[id - 1]))..<Int(ends[id])]
        }

        /// The slot holding `utf8`, or the empty slot where it would go.
        func find(_ utf8: UnsafeBufferPointer<UInt8>) -> (slot: Int, id: UInt32?) {
            let mask = slots.count - 1
            var slot = Int(KeyTable.hash(utf8)) & mask
            while slots[slot] != 0 {
                let id = slots[slot] - 1
                if name(Int(id)).elementsEqual(utf8) { return (slot, id) }
                slot = (slot + 1) & mask
            }
            return (slot, nil)
        }

        mutating func grow() {
            slots = [UInt32](repeating: 0, count: slots.count * 2)
            let mask = slots.count - 1
            for id in 0..<ends.count {
                var slot = name(id).withUnsafeBufferPointer { Int(KeyTable.hash($0)) } & mask
                while slots[slot] != 0 { slot = (slot + 1) & mask }
                slots[slot] = UInt32(id + 1)
            }
        }
    }
    private let state = Mutex(State())

    /// FNV-1a: keys are the application's own names, so no flooding defence is needed.
    private static func hash(_ utf8: UnsafeBufferPointer<UInt8>) -> UInt32 {
        var h: UInt32 = 2_166_136_261
        for byte in utf8 { h = (h ^ UInt32(byte)) &* 16_777_619 }
        return h
    }

    public func intern(_ name: String) -> Key {
        var name = name
        return name.withUTF8 { utf8 in
            state.withLock { s in
                let (slot, found) = s.find(utf8)
                if let found { return Key(id: found) }
                precondition(s.bytes.count + utf8.count <= Int(UInt32.max), "Tether: the key names exceed 4 GB")
                let id = UInt32(s.ends.count)
                s.bytes.append(contentsOf: utf8)
                s.ends.append(UInt32(s.bytes.count))
                s.slots[slot] = id + 1
                if s.ends.count * 2 > s.slots.count { s.grow() }
                internedCount.store(id + 1, ordering: .releasing)
                return Key(id: id)
            }
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

    public func name(of key: Key) -> String {
        state.withLock { s in
            Int(key.id) < s.ends.count ? String(decoding: s.name(Int(key.id)), as: UTF8.self) : "#\(key.id)"
        }
    }
}
