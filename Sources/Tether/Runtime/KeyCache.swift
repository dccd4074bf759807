#if canImport(Glibc)
import Glibc
#endif
import TetherCore

/// C-string key -> interned `Key`, without building a Swift String or hashing
/// on a hit: a small per-thread direct-mapped cache keyed by the string's
/// address and confirmed with strcmp (the caller may reuse a buffer). Plain
/// memory kept with the thread's handle cache (`HandleCache.Local.keys`), so a
/// lookup costs no reference count and no second thread-specific lookup.
enum KeyCache {
    struct Entry {
        var address: UInt = 0
        /// The key table's copy of the name (never freed or moved).
        var name: UnsafePointer<CChar>? = nil
        var id: UInt32 = 0
    }

    static let size = 256

    static func key(_ cString: UnsafePointer<CChar>) -> Key { key(cString, locals: HandleCache.current) }

    @inline(__always)
    static func key(_ cString: UnsafePointer<CChar>, locals: UnsafeMutablePointer<HandleCache.Local>) -> Key {
        guard let entries = locals.pointee.keys else { return miss(cString, locals) }
        let address = UInt(bitPattern: cString)
        let entry = entries + Int((address >> 3 ^ address >> 11) & UInt(size - 1))
        if entry.pointee.address == address, let name = entry.pointee.name, strcmp(name, cString) == 0 {
            return Key(id: entry.pointee.id)
        }
        return miss(cString, locals)
    }

    @inline(never)
    private static func miss(_ cString: UnsafePointer<CChar>, _ locals: UnsafeMutablePointer<HandleCache.Local>) -> Key {
        let entries = locals.pointee.keys ?? {
            let fresh = ThreadPrivate.allocate(Entry.self, capacity: size)
            fresh.initialize(repeating: Entry(), count: size)
            locals.pointee.keys = fresh
            return fresh
        }()
        let address = UInt(bitPattern: cString)
        let entry = entries + Int((address >> 3 ^ address >> 11) & UInt(size - 1))
        let (key, name) = cString.withMemoryRebound(to: UInt8.self, capacity: 1) {
            KeyTable.shared.intern(utf8: UnsafeBufferPointer(start: $0, count: strlen(cString)))
        }
        entry.pointee = Entry(address: address, name: name, id: key.id)
        return key
    }

    /// At thread exit.
    static func release(_ entries: UnsafeMutablePointer<Entry>?) {
        guard let entries else { return }
        entries.deinitialize(count: size)
        entries.deallocate()
    }
}
