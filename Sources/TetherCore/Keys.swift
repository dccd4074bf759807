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
private let internedCount = Atomic<UInt32>(0)

/// String <-> id table behind `Key`. Keys are never removed, so ids stay valid.
public final class KeyTable: Sendable {
    public static let shared = KeyTable()

    private struct State {
        var ids: [String: UInt32] = [:]
        var names: [String] = []
    }
    private let state = Mutex(State())

    public func intern(_ name: String) -> Key {
        state.withLock { s in
            if let id = s.ids[name] { return Key(id: id) }
            let id = UInt32(s.names.count)
            s.names.append(name)
            s.ids[name] = id
            internedCount.store(id + 1, ordering: .releasing)
            return Key(id: id)
        }
    }

    /// The key for `name` if it was ever interned.
    public func lookup(_ name: String) -> Key? {
        state.withLock { s in s.ids[name].map(Key.init(id:)) }
    }

    /// Whether `id` is a key interned so far (no lock, no retain: resolves by id check it).
    @inline(__always)
    public static func isValid(_ id: UInt32) -> Bool {
        id < internedCount.load(ordering: .acquiring)
    }

    public func name(of key: Key) -> String {
        state.withLock { s in Int(key.id) < s.names.count ? s.names[Int(key.id)] : "#\(key.id)" }
    }
}
