#if canImport(Glibc)
import Glibc
#endif
import CFFI
import Synchronization
import TetherCore
import ThreadWord

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
        /// The thread's `KeyCache` (in the first Local only).
        var keys: UnsafeMutablePointer<KeyCache.Entry>? = nil
        /// The thread's record in `Reclamation.reclaimer` (in the first Local only).
        var reclaim: UnsafeMutablePointer<Reclaimer.Record>? = nil
        /// The innermost collecting resolve running on the thread (in the first Local only).
        var drops: UnsafeMutablePointer<DropCollector>? = nil
        /// The drops past the buffer the thread's last collecting resolve handed back (`DropCollector.handOver`).
        var moreDrops: UnsafeMutableRawPointer? = nil
        /// The thread's free provider trampolines (`TrampolineCache`, in the first Local only).
        var trampolines: UnsafeMutablePointer<TrampolineCache>? = nil
    }

    /// The calling thread's locals, one per `HandleKind.index`; their address
    /// marks the pages the thread owns (unique while the thread lives).
    /// Read from the thread's word of static TLS (`tether_handles_word`, no call), which
    /// `currentSlow` fills; the key's destructor clears it before letting go of the locals.
    static var current: UnsafeMutablePointer<Local> {
        @inline(__always) get {
            if let raw = tether_handles_word_get() { return raw.assumingMemoryBound(to: Local.self) }
            return currentSlow()
        }
    }

    /// The calling thread's locals if it made them (for a fork handler: makes none).
    static var currentIfAny: UnsafeMutablePointer<Local>? {
        pthread_getspecific(key).map { $0.assumingMemoryBound(to: Local.self) }
    }

    @inline(never)
    private static func currentSlow() -> UnsafeMutablePointer<Local> {
        let locals = pthread_getspecific(key).map { $0.assumingMemoryBound(to: Local.self) } ?? make()
        tether_handles_word_set(locals)
        return locals
    }

    @inline(__always)
    static func token(_ locals: UnsafeMutablePointer<Local>) -> UInt { UInt(bitPattern: locals) }

    private static let key: pthread_key_t = {
        var k = pthread_key_t()
        pthread_key_create(&k) { raw in
            tether_handles_word_set(nil)  // (a later destructor's call into the library makes new locals)
            let locals = raw!.assumingMemoryBound(to: Local.self)
            Reclamation.reclaimer.release(locals.pointee.reclaim!)
            KeyCache.release(locals.pointee.keys)
            locals.pointee.keys = nil
            locals.pointee.moreDrops?.deallocate()
            locals.pointee.moreDrops = nil
            let trampolines = locals.pointee.trampolines  // (`abandon` resets the locals)
            locals.pointee.trampolines = nil
            for (i, slots) in Handles.all.enumerated() { slots.abandon(locals + i) }
            TrampolineCache.release(trampolines)  // after the handles: what they free may give one back
            locals.deinitialize(count: HandleKind.allCases.count)
            locals.deallocate()
        }
        return k
    }()

    @inline(never)
    private static func make() -> UnsafeMutablePointer<Local> {
        let locals = ThreadPrivate.allocate(Local.self, capacity: HandleKind.allCases.count)
        locals.initialize(repeating: Local(), count: HandleKind.allCases.count)
        locals.pointee.reclaim = Reclamation.reclaimer.claim()
        pthread_setspecific(key, locals)
        return locals
    }
}

