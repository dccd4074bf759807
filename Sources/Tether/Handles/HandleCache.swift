#if canImport(Glibc)
import Glibc
#endif
import CFFI
import Synchronization
import TetherCore

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
    }

    /// The calling thread's locals, one per `HandleKind.index`; their address
    /// marks the pages the thread owns (unique while the thread lives).
    ///
    /// Found without a call: `threadTable` maps the thread id (`tether_thread_id`,
    /// the thread pointer) to the locals, direct-mapped. An entry is claimed by
    /// one thread (a CAS of its id word from 0), read only by that thread (only
    /// it matches the id) and cleared by it at exit. A thread whose entry is
    /// taken uses pthread_getspecific. The words are read as atomics (relaxed: a
    /// plain load on x86-64 and arm64): other threads claim and clear entries
    /// while a thread whose id maps to the same entry reads it.
    static var current: UnsafeMutablePointer<Local> {
        @inline(__always) get {
            let table = threadTableAddress.load(ordering: .relaxed)
            if table != 0 {
                let id = UInt(tether_thread_id())
                let word = idWord(table, id)
                if word.pointee.load(ordering: .relaxed) == id {
                    return UnsafeMutablePointer(bitPattern: (word + 1).pointee.load(ordering: .relaxed))!
                }
            }
            return currentSlow()
        }
    }

    /// The calling thread's locals if it made them (for a fork handler: makes none).
    static var currentIfAny: UnsafeMutablePointer<Local>? {
        pthread_getspecific(key).map { $0.assumingMemoryBound(to: Local.self) }
    }

    private static var threadTableSize: Int { 512 }

    @inline(__always)
    private static func threadTableIndex(_ id: UInt) -> Int {
        Int(truncatingIfNeeded: (id &* 0x9E37_79B9_7F4A_7C15) >> 55)  // 9 bits
    }

    /// The table entry's id word; the locals' address follows it.
    @inline(__always)
    private static func idWord(_ table: UInt, _ id: UInt) -> UnsafeMutablePointer<Atomic<UInt>> {
        UnsafeMutablePointer<Atomic<UInt>>(bitPattern: table)! + threadTableIndex(id) * 2
    }

    @inline(never)
    private static func currentSlow() -> UnsafeMutablePointer<Local> {
        let locals = pthread_getspecific(key).map { $0.assumingMemoryBound(to: Local.self) } ?? make()
        let table = threadTable
        let id = UInt(tether_thread_id())
        let word = idWord(table, id)
        if word.pointee.compareExchange(expected: 0, desired: id, ordering: .relaxed).exchanged {
            (word + 1).pointee.store(UInt(bitPattern: locals), ordering: .relaxed)
        }
        return locals
    }

    /// At thread exit: gives up the thread's table entry, if it holds one.
    private static func leaveThreadTable() {
        let table = threadTableAddress.load(ordering: .relaxed)
        guard table != 0 else { return }
        let id = UInt(tether_thread_id())
        let word = idWord(table, id)
        if word.pointee.load(ordering: .relaxed) == id {
            (word + 1).pointee.store(0, ordering: .relaxed)
            word.pointee.store(0, ordering: .relaxed)
        }
    }

    private static let threadTable: UInt = {
        let table = UnsafeMutablePointer<Atomic<UInt>>.allocate(capacity: threadTableSize * 2)
        for i in 0..<threadTableSize * 2 { (table + i).initialize(to: Atomic(0)) }
        threadTableAddress.store(UInt(bitPattern: table), ordering: .releasing)
        return UInt(bitPattern: table)
    }()

    @inline(__always)
    static func token(_ locals: UnsafeMutablePointer<Local>) -> UInt { UInt(bitPattern: locals) }

    private static let key: pthread_key_t = {
        var k = pthread_key_t()
        pthread_key_create(&k) { raw in
            HandleCache.leaveThreadTable()
            let locals = raw!.assumingMemoryBound(to: Local.self)
            Reclamation.reclaimer.release(locals.pointee.reclaim!)
            KeyCache.release(locals.pointee.keys)
            locals.pointee.keys = nil
            for (i, slots) in Handles.all.enumerated() { slots.abandon(locals + i) }
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

/// `HandleCache.threadTable` once made (0 before): a global atomic, so the hot
/// path reads it without the `swift_once` of a lazy static.
private let threadTableAddress = Atomic<UInt>(0)
