#if canImport(Glibc)
import Glibc
#endif
import TetherCore

/// C-string key -> interned `Key`, without building a Swift String or hashing
/// on a hit: a small per-thread direct-mapped cache keyed by the string's
/// address and confirmed with strcmp (the caller may reuse a buffer).
final class KeyCache {
    private static let size = 256
    private var addresses = [UInt](repeating: 0, count: size)
    private var ids = [UInt32](repeating: 0, count: size)
    private var names = [UnsafeMutablePointer<CChar>?](repeating: nil, count: size)

    private static let key: pthread_key_t = {
        var k = pthread_key_t()
        pthread_key_create(&k) { raw in Unmanaged<KeyCache>.fromOpaque(raw!).release() }
        return k
    }()

    deinit { for name in names { free(name) } }

    static func key(_ cString: UnsafePointer<CChar>) -> Key {
        let cache: KeyCache
        if let raw = pthread_getspecific(key) {
            cache = Unmanaged<KeyCache>.fromOpaque(raw).takeUnretainedValue()
        } else {
            cache = KeyCache()
            pthread_setspecific(key, Unmanaged.passRetained(cache).toOpaque())
        }
        return cache.lookup(cString)
    }

    private func lookup(_ cString: UnsafePointer<CChar>) -> Key {
        let address = UInt(bitPattern: cString)
        let slot = Int((address >> 3 ^ address >> 11) & UInt(Self.size - 1))
        if addresses[slot] == address, let name = names[slot], strcmp(name, cString) == 0 {
            return Key(id: ids[slot])
        }
        let key = Key(String(cString: cString))
        free(names[slot])
        names[slot] = strdup(cString)
        addresses[slot] = address
        ids[slot] = key.id
        return key
    }
}
