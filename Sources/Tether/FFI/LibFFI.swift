// The only file that touches libffi: factory calls (ffi_call, with a typed fast
// path for all-word signatures) and closures (lazy slots and providers).
import CFFI
#if canImport(Glibc)
import Glibc
#endif
import Synchronization
import TetherCore

/// How one argument travels in a C call.
enum WordKind {
    case word     // pointer or int64: an integer register
    case double   // a floating-point register
}

/// A C factory: called through a typed function pointer when every parameter is
/// a word and there are at most 8, else through a libffi call interface
/// prepared once per factory (so most factories carry no cif).
///
/// Immutable, so one serves every registration of its function and parameter kinds: a
/// typed one is the calling thread's for its function (`shared`), so a registration made
/// per request (a request's child's) makes none. Re-preparing a registration's call as
/// variadic (`tether_set_variadic`) makes a new factory for that registration alone
/// (`variadic`, `Registration.replaceFactory`).
///
/// One stored word: the function, or a retained `FFICall` (which holds the function)
/// tagged with the top bit, which no user-space address has on x86-64 or AArch64 Linux.
/// The typed path's arity is the call's word count (the core passes one word per
/// declared param).
final class FFIFactory: Factory, @unchecked Sendable {
    private let word: UInt
    /// Owns the call `word` points to (tagged, so a leak checker could not see it there).
    private let heldCall: FFICall?
    private static var callTag: UInt { 1 << 63 }

    /// Forces every call through ffi_call (tests compare both paths).
    static let forceFFI = getenv("TETHER_FORCE_FFI").map { String(cString: $0) == "1" } ?? false

    /// A factory calling `function` with parameters `kinds`; variadic with `fixed` fixed ones when given.
    init(function: UnsafeRawPointer, kinds: [WordKind], fixed: Int? = nil) throws(TetherError) {
        precondition(UInt(bitPattern: function) & Self.callTag == 0, "Tether: a factory address with the top bit set")
        if fixed == nil && Self.callsTyped(kinds) {
            heldCall = nil
            word = UInt(bitPattern: function)
        } else {
            let call = try FFICall(function, kinds, fixed: fixed)
            heldCall = call
            word = Borrowed(call).word | Self.callTag
        }
        super.init()
    }

    /// A typed factory of `function` (no call interface to prepare).
    private init(typed function: UnsafeRawPointer) {
        precondition(UInt(bitPattern: function) & Self.callTag == 0, "Tether: a factory address with the top bit set")
        heldCall = nil
        word = UInt(bitPattern: function)
        super.init()
    }

    /// Whether a factory of parameters `kinds` calls through the typed path (no doubles, at most 8, not forced).
    static func callsTyped(_ kinds: [WordKind]) -> Bool { !forceFFI && kinds.count <= 8 && !kinds.contains(.double) }

    /// The factory of `function` with parameters `kinds` for a new registration: for the typed
    /// path, the calling thread's for `function` (`ThreadFactories`), made now if it has none.
    static func shared(function: UnsafeRawPointer, kinds: [WordKind]) throws(TetherError) -> FFIFactory {
        guard callsTyped(kinds) else { return try FFIFactory(function: function, kinds: kinds) }
        return ThreadFactories.typed(function)
    }

    /// This factory's call re-prepared for a C variadic function with `fixed` fixed
    /// parameters of `arity` (a typed one's kinds are all words), as a new factory.
    func variadic(fixed: Int, arity: Int) throws(TetherError) -> FFIFactory {
        let kinds = heldCall?.kinds ?? Array(repeating: .word, count: arity)
        let function = heldCall?.function ?? UnsafeRawPointer(bitPattern: word)!
        return try FFIFactory(function: function, kinds: kinds, fixed: fixed)
    }

    /// Set for signatures the typed path cannot take (doubles, more than 8, variadic).
    private var call: Borrowed<FFICall>? {
        word & Self.callTag == 0 ? nil : Borrowed(word: word & ~Self.callTag)!
    }

    // Inlined into the override the core calls, with the typed call: one frame per factory call.
    @inline(__always)
    override func make(_ words: UnsafeMutablePointer<UInt64>, count: Int) throws(CallbackFailure) -> UnsafeMutableRawPointer {
        let mark = LastError.mark()
        let result = if let call { call.borrow { $0.invoke(words, count) } }
                     else { Self.callTyped(UnsafeRawPointer(bitPattern: word)!, count, words) }
        guard let result else { throw CallbackFailure(reason: LastError.reason(since: mark)) }
        return result
    }

    private typealias P = UnsafeMutableRawPointer?

    /// All-word signatures up to 8 parameters: a direct typed call, no libffi.
    @inline(__always)
    private static func callTyped(_ f: UnsafeRawPointer, _ arity: Int, _ w: UnsafeMutablePointer<UInt64>) -> P {
        func p(_ i: Int) -> P { UnsafeMutableRawPointer(bitPattern: UInt(w[i])) }
        switch arity {
        case 0: return unsafeBitCast(f, to: (@convention(c) () -> P).self)()
        case 1: return unsafeBitCast(f, to: (@convention(c) (P) -> P).self)(p(0))
        case 2: return unsafeBitCast(f, to: (@convention(c) (P, P) -> P).self)(p(0), p(1))
        case 3: return unsafeBitCast(f, to: (@convention(c) (P, P, P) -> P).self)(p(0), p(1), p(2))
        case 4: return unsafeBitCast(f, to: (@convention(c) (P, P, P, P) -> P).self)(p(0), p(1), p(2), p(3))
        case 5: return unsafeBitCast(f, to: (@convention(c) (P, P, P, P, P) -> P).self)(p(0), p(1), p(2), p(3), p(4))
        case 6: return unsafeBitCast(f, to: (@convention(c) (P, P, P, P, P, P) -> P).self)(p(0), p(1), p(2), p(3), p(4), p(5))
        case 7: return unsafeBitCast(f, to: (@convention(c) (P, P, P, P, P, P, P) -> P).self)(p(0), p(1), p(2), p(3), p(4), p(5), p(6))
        default: return unsafeBitCast(f, to: (@convention(c) (P, P, P, P, P, P, P, P) -> P).self)(p(0), p(1), p(2), p(3), p(4), p(5), p(6), p(7))
        }
    }
}

/// Each thread's typed factories (`FFIFactory.shared`), direct-mapped by function address: a
/// few functions registered per request each find theirs. A factory's count is then written by
/// its thread's registrations (and by a thread freeing one of them); up to `size` factories
/// per thread outlive their registrations until evicted or the thread exits.
private enum ThreadFactories {
    private static var size: Int { 8 }

    private static let key: pthread_key_t = {
        var k = pthread_key_t()
        pthread_key_create(&k) { raw in
            let entries = raw!.assumingMemoryBound(to: FFIFactory?.self)
            entries.deinitialize(count: size)
            entries.deallocate()
        }
        return k
    }()

    /// The calling thread's typed factory of `function`.
    static func typed(_ function: UnsafeRawPointer) -> FFIFactory {
        let entries: UnsafeMutablePointer<FFIFactory?>
        if let raw = pthread_getspecific(key) {
            entries = raw.assumingMemoryBound(to: FFIFactory?.self)
        } else {
            entries = .allocate(capacity: size)
            entries.initialize(repeating: nil, count: size)
            pthread_setspecific(key, entries)
        }
        let address = UInt(bitPattern: function)
        let entry = entries + Int(truncatingIfNeeded: (address &* 0x9E37_79B9_7F4A_7C15) >> 61)
        if let found = entry.pointee, found.typedFunction == address { return found }
        let made = FFIFactory.typed(function)
        entry.pointee = made
        return made
    }
}

extension FFIFactory {
    /// A typed factory's function address (0 for one with a call interface).
    fileprivate var typedFunction: UInt { heldCall == nil ? word : 0 }

    /// A new typed factory of `function`.
    fileprivate static func typed(_ function: UnsafeRawPointer) -> FFIFactory { FFIFactory(typed: function) }
}

/// A prepared libffi call interface: `void *f(kinds...)`, optionally variadic.
private final class FFICall {
    let function: UnsafeRawPointer
    let kinds: [WordKind]
    private let cif = UnsafeMutablePointer<ffi_cif>.allocate(capacity: 1)
    private let types: UnsafeMutablePointer<UnsafeMutablePointer<ffi_type>?>

    init(_ function: UnsafeRawPointer, _ kinds: [WordKind], fixed: Int?) throws(TetherError) {
        self.function = function
        self.kinds = kinds
        types = .allocate(capacity: max(kinds.count, 1))
        for (i, kind) in kinds.enumerated() {
            types[i] = kind == .double ? tether_ffi_type_double() : tether_ffi_type_pointer()
        }
        let count = UInt32(kinds.count)
        let status = if let fixed { ffi_prep_cif_var(cif, FFI_DEFAULT_ABI, UInt32(fixed), count, tether_ffi_type_pointer(), types) }
                     else { ffi_prep_cif(cif, FFI_DEFAULT_ABI, count, tether_ffi_type_pointer(), types) }
        guard status == FFI_OK else {
            cif.deallocate(); types.deallocate()
            let what = fixed.map { "tether_set_variadic: libffi cannot prepare a variadic call with \($0) fixed of \(kinds.count) parameters" }
                ?? "tether_register: libffi cannot prepare a call with \(kinds.count) parameters"
            throw TetherError(.invalidArgument, "\(what) (status \(status.rawValue))")
        }
    }

    deinit {
        cif.deallocate()
        types.deallocate()
    }

    func invoke(_ words: UnsafeMutablePointer<UInt64>, _ count: Int) -> UnsafeMutableRawPointer? {
        withUnsafeTemporaryAllocation(of: UnsafeMutableRawPointer?.self, capacity: max(count, 1)) { values in
            for i in 0..<count { values[i] = UnsafeMutableRawPointer(words + i) }
            var ret: UInt64 = 0
            ffi_call(cif, unsafeBitCast(function, to: (@convention(c) () -> Void).self), &ret, values.baseAddress)
            return UnsafeMutableRawPointer(bitPattern: UInt(ret))
        }
    }
}

/// A provider's code address for `cell` (a lazy slot's or tether_make_provider's), lent
/// for the cell's life: the cell keeps its trampoline as its `attachment`, which goes
/// back to the pool as the cell goes (`cellGone`), without an object of its own.
func lendProvider(to cell: LazyCell) throws(TetherError) -> UnsafeMutableRawPointer {
    let trampoline = try ProviderTrampoline.take(for: cell)
    cell.attachment = trampoline
    return trampoline.code
}

/// The lazy cell a provider (a lazy slot's or tether_make_provider's) serves now, if it is a live one.
func providerCell(_ provider: UnsafeRawPointer?) -> LazyCell? { ProviderTrampoline.cell(at: provider) }

/// A libffi closure, a plain `void *(*)(void)`, made once and never freed: C
/// may call a provider after its cell is gone, and then lands here and finds
/// no cell (NULL + TETHER_E_INVALID_HANDLE) instead of jumping into freed code.
/// Freed trampolines are reused oldest first, and only once `TrampolineCache.quarantine`
/// others were freed after them, so a stale provider stays recognised while many others
/// come and go (`TrampolineCache`: per thread, no process-wide lock on a resolve).
private final class ProviderTrampoline: CellAttachment, @unchecked Sendable {
    let code: UnsafeMutableRawPointer
    /// The cell served now, unretained: the cell's deinit clears it (`cellGone`) under the
    /// lock, and a call retains it under the lock only if its count has not reached zero
    /// (`tryRetained`, as `WeakRef.upgrade`), so a cell being destroyed is never handed to a
    /// call. Not a Swift weak reference: that made the cell a side table (a malloc and a
    /// slower release) per lazy slot per resolve. A spin lock in the trampoline
    /// (`withSpinLock`'s): each hold a load or a store, twice per lazy slot per resolve.
    private let servedHeld = Atomic<Bool>(false)
    private var servedCell: Borrowed<LazyCell>?
    private var served: LazyCell? {
        servedHeld.spinLock()
        defer { servedHeld.spinUnlock() }
        return servedCell?.tryRetained()?.take()
    }
    private func serve(_ cell: Borrowed<LazyCell>?) {
        servedHeld.spinLock()
        defer { servedHeld.spinUnlock() }
        servedCell = cell
    }

    /// The call interface every provider shares: `void *(void)`.
    nonisolated(unsafe) private static let cif: UnsafeMutablePointer<ffi_cif>? = {
        let cif = UnsafeMutablePointer<ffi_cif>.allocate(capacity: 1)
        guard ffi_prep_cif(cif, FFI_DEFAULT_ABI, 0, tether_ffi_type_pointer(), nil) == FFI_OK else { return nil }
        return cif
    }()

    private init(code: UnsafeMutableRawPointer) { self.code = code }

    static func take(for cell: LazyCell) throws(TetherError) -> ProviderTrampoline {
        let trampoline: ProviderTrampoline
        if let reused = TrampolineCache.take() {
            trampoline = Borrowed<ProviderTrampoline>(opaque: reused).object
        } else {
            trampoline = try make(for: cell.key)
        }
        trampoline.serve(Borrowed(cell))
        return trampoline
    }

    /// Every trampoline's address by its code address (they are never freed): which cell a
    /// provider serves now, read without a lock (a binding asks per lazy slot per resolve).
    private static let byCode: InsertOnlyWordMap = {
        _ = forkHandlers
        return InsertOnlyWordMap()
    }()

    /// fork(): the two locks a thread may hold here (a new trampoline's insert, a batch moved
    /// to or from the shared list) are held across it, so the child finds them free, as the
    /// reclaimer's and the creation cells' are (`Reclamation.reclaimer`, `SharedCache`).
    private static let forkHandlers: Void = {
        pthread_atfork({ ProviderTrampoline.lockForFork() }, { ProviderTrampoline.unlockAfterFork() },
                       { ProviderTrampoline.unlockAfterFork() })
    }()
    private static func lockForFork() {
        byCode.lockForFork()
        TrampolineCache.sharedLockForFork()
    }
    private static func unlockAfterFork() {
        TrampolineCache.sharedUnlockAfterFork()
        byCode.unlockAfterFork()
    }
    static func registerForkHandlers() { _ = forkHandlers }

    /// The cell the provider at `code` serves, if it is a live provider.
    static func cell(at code: UnsafeRawPointer?) -> LazyCell? {
        let word = byCode.value(of: UInt(bitPattern: code))
        guard let trampoline = Borrowed<ProviderTrampoline>(word: word) else { return nil }
        return trampoline.object.served
    }

    /// Its cell is going: back to the pool.
    func cellGone() {
        serve(nil)
        TrampolineCache.give(Borrowed(self).opaque)
    }

    private static func make(for key: Key) throws(TetherError) -> ProviderTrampoline {
        var code: UnsafeMutableRawPointer?
        guard let cif, let closure = ffi_closure_alloc(MemoryLayout<ffi_closure>.size, &code), let code else {
            throw TetherError(.noMemory, "libffi could not allocate a closure for the provider of \(key.quoted) (writable+executable memory refused by the system?)")
        }
        let trampoline = ProviderTrampoline(code: code)
        // Retained for good: the closure is never freed, and neither is what it calls.
        let user = Handoff.give(trampoline)
        guard ffi_prep_closure_loc(closure.assumingMemoryBound(to: ffi_closure.self), cif, providerEntry, user, code) == FFI_OK else {
            Handoff<ProviderTrampoline>.release(user)
            ffi_closure_free(closure)
            throw TetherError(.noMemory, "libffi could not prepare the closure for the provider of \(key.quoted)")
        }
        byCode.insert(UInt(bitPattern: code), UInt(bitPattern: user))
        return trampoline
    }

    /// One call of the provider: the cell's instance pointer.
    func call() throws(TetherError) -> UnsafeMutableRawPointer {
        guard var cell = served else {
            throw TetherError.staleProvider(mayBeFreed: true)
        }
        let pointer = try cell.call()
        // Whoever held the cell (its owner, the provider table) let go of it
        // during the call: what it resolved may go with this last reference.
        guard !isKnownUniquelyReferenced(&cell) else {
            throw TetherError(.invalidHandle, "the provider's owner was destroyed during the call (or the provider freed): its result may be gone, so none is returned")
        }
        return pointer
    }
}

/// Where every provider call lands: NULL + last error on failure. An exported
/// call like any other (its container may be freed meanwhile).
private let providerEntry: @convention(c) (UnsafeMutablePointer<ffi_cif>?, UnsafeMutableRawPointer?,
                                           UnsafeMutablePointer<UnsafeMutableRawPointer?>?, UnsafeMutableRawPointer?) -> Void = { _, ret, _, user in
    let trampoline = Borrowed<ProviderTrampoline>(opaque: user!).object
    var result: UInt64 = 0
    _ = abiCall { () throws(TetherError) in result = UInt64(UInt(bitPattern: try trampoline.call())) }
    ret!.storeBytes(of: result, as: UInt64.self)
}

/// The free provider trampolines, per thread (in the thread's `HandleCache` locals): a lazy
/// slot takes one and gives it back per resolve with no lock and no shared write.
///
/// Quarantine: a thread's freed trampolines wait in its FIFO (`ring`), and its oldest is
/// reused only once `quarantine` others were freed on the thread after it; so in one thread,
/// as before, a stale provider is recognised until `quarantine` others were freed. A thread
/// that frees more than it takes hands its oldest beyond `quarantine` to the shared list in
/// batches of `batch` (already quarantined: any thread may reuse them); one that takes more
/// than it frees takes such a batch (`ready`). At thread exit its ready ones go back as a batch
/// and its FIFO to the shared `orphans`, reused oldest first once `quarantine` other orphans
/// came after them. Trampolines are never freed, so nothing is lost; what waits is bounded
/// (per live thread `quarantine + batch`, orphans `quarantine + batch`).
/// The shared list's lock is taken once per `batch` trampolines moved, never per resolve.
struct TrampolineCache {
    static var quarantine: Int { 1024 }
    static var batch: Int { 64 }
    private static var ringCapacity: Int { quarantine + batch + 1 }

    /// The FIFO: `count` entries from `head`, wrapping at `ringCapacity`.
    private let ring: UnsafeMutablePointer<UnsafeMutableRawPointer>
    private var head = 0
    private var count = 0
    /// Trampolines from the shared list, reusable now (at most `batch`).
    private let ready: UnsafeMutablePointer<UnsafeMutableRawPointer>
    private var readyCount = 0

    private init() {
        ring = .allocate(capacity: Self.ringCapacity)
        ready = .allocate(capacity: Self.batch)
    }

    /// The calling thread's cache (made on its first use).
    private static var current: UnsafeMutablePointer<TrampolineCache> {
        @inline(__always) get {
            let locals = HandleCache.current
            if let cache = locals.pointee.trampolines { return cache }
            return make(locals)
        }
    }

    @inline(never)
    private static func make(_ locals: UnsafeMutablePointer<HandleCache.Local>) -> UnsafeMutablePointer<TrampolineCache> {
        let cache = ThreadPrivate.allocate(TrampolineCache.self, capacity: 1)
        cache.initialize(to: TrampolineCache())
        locals.pointee.trampolines = cache
        return cache
    }

    /// A free trampoline (unretained; they live for good) past its quarantine, if there is one.
    static func take() -> UnsafeMutableRawPointer? {
        let cache = current
        if cache.pointee.readyCount > 0 {
            cache.pointee.readyCount -= 1
            return cache.pointee.ready[cache.pointee.readyCount]
        }
        if cache.pointee.count > quarantine { return cache.pointee.popOldest() }
        guard shared.hasReady.load(ordering: .relaxed) else { return nil }
        let moved = shared.takeBatch(into: cache.pointee.ready)
        guard moved > 0 else { return nil }
        cache.pointee.readyCount = moved - 1
        return cache.pointee.ready[moved - 1]
    }

    /// A trampoline whose cell went: into the thread's FIFO; its oldest beyond the
    /// quarantine to the shared list once a batch of them is there.
    static func give(_ trampoline: UnsafeMutableRawPointer) {
        let cache = current
        cache.pointee.push(trampoline)
        if cache.pointee.count >= quarantine + batch {
            withUnsafeTemporaryAllocation(of: UnsafeMutableRawPointer.self, capacity: batch) { moving in
                for i in 0..<batch { moving[i] = cache.pointee.popOldest() }
                shared.giveBatch(UnsafeMutableBufferPointer(rebasing: moving[...]))
            }
        }
    }

    /// The thread is exiting (`HandleCache`'s key destructor): what it holds to the shared list.
    static func release(_ cache: UnsafeMutablePointer<TrampolineCache>?) {
        guard let cache else { return }
        shared.giveBatch(UnsafeMutableBufferPointer(start: cache.pointee.ready, count: cache.pointee.readyCount))
        var fifo: [UnsafeMutableRawPointer] = []
        fifo.reserveCapacity(cache.pointee.count)
        while cache.pointee.count > 0 { fifo.append(cache.pointee.popOldest()) }
        shared.giveOrphans(fifo)
        cache.pointee.ring.deallocate()
        cache.pointee.ready.deallocate()
        cache.deinitialize(count: 1)
        cache.deallocate()
    }

    private mutating func push(_ trampoline: UnsafeMutableRawPointer) {
        var tail = head + count
        if tail >= Self.ringCapacity { tail -= Self.ringCapacity }
        ring[tail] = trampoline
        count += 1
    }

    private mutating func popOldest() -> UnsafeMutableRawPointer {
        let trampoline = ring[head]
        head += 1
        if head == Self.ringCapacity { head = 0 }
        count -= 1
        return trampoline
    }

    /// Batches past their quarantine, and exited threads' FIFOs (`orphans`, oldest first
    /// from `orphanHead`). Behind a mutex: a thread comes here once per `batch` trampolines.
    private final class Shared: @unchecked Sendable {
        private struct State {
            var batches: [UnsafeMutableRawPointer] = []
            var orphans: [UnsafeMutableRawPointer] = []
            var orphanHead = 0
            var hasReady: Bool { !batches.isEmpty || orphans.count - orphanHead > TrampolineCache.quarantine }
        }
        private let state = Lock(State())
        func lockForFork() { state.lockForFork() }
        func unlockAfterFork() { state.unlockAfterFork() }
        /// Whether a take could get any (read without the lock: a thread with none checks it per take).
        let hasReady = Atomic<Bool>(false)

        func giveBatch(_ trampolines: UnsafeMutableBufferPointer<UnsafeMutableRawPointer>) {
            guard !trampolines.isEmpty else { return }
            state.withLock { state in
                state.batches.append(contentsOf: trampolines)
                hasReady.store(true, ordering: .relaxed)
            }
        }

        func giveOrphans(_ fifo: [UnsafeMutableRawPointer]) {
            guard !fifo.isEmpty else { return }
            state.withLock { state in
                state.orphans.append(contentsOf: fifo)
                hasReady.store(state.hasReady, ordering: .relaxed)
            }
        }

        /// Up to `batch` reusable trampolines into `into`: how many.
        func takeBatch(into: UnsafeMutablePointer<UnsafeMutableRawPointer>) -> Int {
            state.withLock { state in
                var moved = 0
                while moved < TrampolineCache.batch, let trampoline = state.batches.popLast() {
                    into[moved] = trampoline
                    moved += 1
                }
                while moved < TrampolineCache.batch, state.orphans.count - state.orphanHead > TrampolineCache.quarantine {
                    into[moved] = state.orphans[state.orphanHead]
                    state.orphanHead += 1
                    moved += 1
                }
                if state.orphanHead >= TrampolineCache.quarantine, state.orphanHead * 2 >= state.orphans.count {
                    state.orphans.removeFirst(state.orphanHead)
                    state.orphanHead = 0
                }
                hasReady.store(state.hasReady, ordering: .relaxed)
                return moved
            }
        }
    }
    private static let shared: Shared = {
        ProviderTrampoline.registerForkHandlers()
        return Shared()
    }()
    fileprivate static func sharedLockForFork() { shared.lockForFork() }
    fileprivate static func sharedUnlockAfterFork() { shared.unlockAfterFork() }
}
