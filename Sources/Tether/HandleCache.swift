#if canImport(Glibc)
import Glibc
#endif
import Synchronization

/// One thread's free handle slots, per kind of handle: a list linked through
/// the free slots, never-used slots of its newest page, and the pages it owns.
/// Only its thread touches it; at thread exit it is handed to the tables.
/// Plain memory behind a thread-specific pointer (no object to retain on the hot path).
enum HandleCache {
    struct Local {
        /// First free slot + 1 (0: none); each free slot links to the next.
        var head = 0
        var fresh = 0
        var freshEnd = 0
        var pages: [Int] = []
    }

    /// The calling thread's locals, one per `HandleKind.index`; their address
    /// marks the pages the thread owns (unique while the thread lives).
    static var current: UnsafeMutablePointer<Local> {
        @inline(__always) get {
            let k = handleCacheKey.load(ordering: .relaxed)
            if k != 0, let raw = pthread_getspecific(pthread_key_t(truncatingIfNeeded: k - 1)) {
                return raw.assumingMemoryBound(to: Local.self)
            }
            return make()
        }
    }

    @inline(__always)
    static func token(_ locals: UnsafeMutablePointer<Local>) -> UInt { UInt(bitPattern: locals) }

    private static let key: pthread_key_t = {
        var k = pthread_key_t()
        pthread_key_create(&k) { raw in
            let locals = raw!.assumingMemoryBound(to: Local.self)
            for (i, slots) in Handles.all.enumerated() { slots.abandon(locals + i) }
            locals.deinitialize(count: HandleKind.allCases.count)
            locals.deallocate()
        }
        return k
    }()

    @inline(never)
    private static func make() -> UnsafeMutablePointer<Local> {
        let locals = UnsafeMutablePointer<Local>.allocate(capacity: HandleKind.allCases.count)
        locals.initialize(repeating: Local(), count: HandleKind.allCases.count)
        pthread_setspecific(key, locals)
        handleCacheKey.store(UInt(key) + 1, ordering: .relaxed)
        return locals
    }
}

/// `HandleCache.key` + 1 once created (0 before): a global atomic, so the hot
/// path reads it without the `swift_once` of a lazy static.
private let handleCacheKey = Atomic<UInt>(0)
