#if canImport(Glibc)
import Glibc
#endif
import CFFI
import Synchronization
import TetherCore

/// Kinds of handle, stored in the top byte so a handle of the wrong kind is
/// recognised as such instead of being looked up in the wrong table.
enum HandleKind: UInt64, CaseIterable {
    case container = 0x71, registration, ref, weak, resolver, factory

    var index: Int { Int(rawValue - HandleKind.container.rawValue) }

    var noun: String {
        switch self {
        case .container: "container"
        case .registration: "registration"
        case .ref: "strong handle (tether_ref)"
        case .weak: "weak handle (tether_weak)"
        case .resolver: "resolver"
        case .factory: "factory (tether_factory)"
        }
    }
}

/// A handle table: objects behind generation-counted handles
/// (`kind:8 | generation:32 | index:24`, never a pointer), so NULL, released,
/// stale, foreign and wrong-kind handles are detected instead of dereferenced.
/// A slot whose generation would wrap is retired instead of reused
/// (`SlotPages.maxGeneration`), so a released handle never equals a live one.
/// A handle owns one reference to its object, or (a loan, refs only) none: see
/// the hit path (`singletonHit`), `SlotPages.releaseRef` and `RetiredLoans`.
struct HandleTable<Object: AnyObject>: Sendable {
    let slots: HandleSlots

    init(_ kind: HandleKind) { slots = HandleSlots(kind) }

    func insert(_ object: Object) -> OpaquePointer {
        slots.insert(Ref(retaining: object).opaque, lent: false)
    }

    /// `insert` of a container whose handle starts marked as reached by other threads
    /// (`SlotPages.sharedBit`): its free never takes the unshared shortcut.
    func insert(shared object: Object) -> OpaquePointer {
        slots.insert(Ref(retaining: object).opaque, lent: slots.kind == .container)
    }

    /// `insert` without a reference, for an object the caller keeps alive until
    /// it removes the handle with `removeBorrowed` (resolvers: open for one callback).
    func insert(borrowing object: Object) -> OpaquePointer {
        slots.insert(Borrowed(object).opaque, lent: false)
    }

    /// Removes a handle made by `insert(borrowing:)`; it owned no reference.
    func removeBorrowed(_ handle: OpaquePointer?) {
        _ = try? slots.remove(handle, "close")
    }

    /// `insert` taking over the caller's reference.
    func insert(taking object: Ref<Object>) -> OpaquePointer {
        slots.insert(object.opaque, lent: false)
    }

    /// The object behind `handle`, or an INVALID_HANDLE error naming `function`.
    @inline(__always)
    func get(_ handle: OpaquePointer?, _ function: StaticString) throws(TetherError) -> Object {
        Ref<Object>(opaque: try slots.object(handle, function)).object
    }

    /// `get` without a retain, for hot paths that only borrow the object.
    @inline(__always)
    func unretained(_ handle: OpaquePointer?, _ function: StaticString) throws(TetherError) -> Borrowed<Object> {
        Borrowed<Object>(opaque: try slots.object(handle, function))
    }

    /// Makes a live `handle` name `object` instead (registrations: a decorated one moved,
    /// `tether_decorate`); false if the handle is not live. The caller keeps the object the
    /// handle named alive for readers that may still use it (a container keeps retired registrations).
    func repoint(_ handle: OpaquePointer?, to object: Object) -> Bool {
        guard let (s, _) = slots.fast.peekSlot(handle) else { return false }
        let old = SlotPages.word2(s).pointee.exchange(Ref(retaining: object).word,
                                                      ordering: .acquiringAndReleasing)
        Ref<Object>(word: old)!.release()
        return true
    }

    /// Removes `handle` (its generation moves on, so later uses are stale) and
    /// returns the reference it owned. Not for refs (see `SlotPages.releaseRef`).
    @discardableResult
    func remove(_ handle: OpaquePointer?, _ function: StaticString) throws(TetherError) -> Object? {
        let object = try slots.remove(handle, function).object
        return Ref<Object>(opaque: object).take()
    }

    /// `remove` for a container or a registration: also whether no thread but the caller can have
    /// reached it through the handle (`SlotPages.sharedBit`).
    func removeMarked(_ handle: OpaquePointer?, _ function: StaticString) throws(TetherError) -> (Object, unshared: Bool) {
        let (object, unshared) = try slots.remove(handle, function)
        return (Ref<Object>(opaque: object).take(), unshared)
    }
}

/// The slots behind a `HandleTable`: pages of 16-byte slots (an atomic state
/// word `generation << 2 | lent << 1 | occupied`, and the object, or the next
/// free slot while free) that never move or get freed. A container's or a registration's
/// slot keeps in the `lent` bit whether a thread other than its page's owner looked it up
/// (`SlotPages.sharedBit`).
///
/// Each thread takes slots from pages it owns and frees them there, so
/// uncontended inserts and removes touch no shared cache line: a slot freed by
/// another thread goes onto its page's remote list (lock-free push; only the
/// owner takes the list, whole, so there is no ABA), and a thread that exits
/// hands its pages (their free slots on their remote lists) to whichever thread
/// needs slots next.
///
/// Using a handle on one thread while another thread releases it is a race in
/// the caller's program (as with any C object); everything else is safe.
///
/// The hot operations live in `SlotPages`, a plain value (the pages' address and
/// the kind), so hot paths reach them from a global without touching this object.
final class HandleSlots: @unchecked Sendable {
    let kind: HandleKind
    let fast: SlotPages
    private let pageCount = Atomic<Int>(0)

    /// Pages left by threads that exited, for the next thread short of slots.
    private struct Orphans {
        var pages: [Int] = []
    }
    private let orphans = Lock(Orphans())

    init(_ kind: HandleKind) {
        self.kind = kind
        let pages = UnsafeMutablePointer<Atomic<UInt>>.allocate(capacity: SlotPages.maxPages)
        for i in 0..<SlotPages.maxPages { (pages + i).initialize(to: Atomic(0)) }
        fast = SlotPages(pages: pages, tag: kind.rawValue, kindIndex: kind.index)
    }

    // MARK: handles

    func insert(_ object: UnsafeMutableRawPointer, lent: Bool) -> OpaquePointer {
        while true {
            if let handle = fast.insert(object, lent: lent) { return handle }
            let locals = HandleCache.current
            refill(locals + fast.kindIndex, HandleCache.token(locals))
        }
    }

    @inline(__always)
    func object(_ handle: OpaquePointer?, _ function: StaticString) throws(TetherError) -> UnsafeMutableRawPointer {
        if let object = fast.peek(handle) { return object }
        throw invalidHandle(handle, function)
    }

    /// Removes a handle of a kind that never lends (refs use `releaseRef`); with the object,
    /// whether the handle was reached only by the calling thread (`SlotPages.sharedBit`).
    func remove(_ handle: OpaquePointer?, _ function: StaticString) throws(TetherError) -> (object: UnsafeMutableRawPointer, unshared: Bool) {
        precondition(kind != .ref, "Tether: strong handles are released with SlotPages.releaseRef (loans own nothing)")
        guard let (base, s, first) = fast.peekSlotOnPage(handle) else { throw invalidHandle(handle, function) }
        let object = SlotPages.word2(s).pointee.load(ordering: .relaxed)
        // A CAS (these kinds are off the hot path): of two racing removals one fails cleanly. Its
        // old word is the one every other thread's mark (`SlotPages.markShared`) was made on or failed on.
        var word = first
        while true {
            let (done, seen) = SlotPages.state(s).pointee.compareExchange(expected: word, desired: (word >> 2 &+ 1) << 2,
                                                                          ordering: .acquiringAndReleasing)
            if done { break }
            // Marked meanwhile (another thread looked the container up): the same handle still.
            guard seen | SlotPages.sharedBit == word | SlotPages.sharedBit else { throw stale(function) }
            word = seen
        }
        let owned = SlotPages.ownsPage(base)
        if (word >> 2) & SlotPages.maxGeneration != SlotPages.maxGeneration {
            fast.release(SlotPages.index(of: handle), onPage: base, owned: owned)
        }
        return (UnsafeMutableRawPointer(bitPattern: object)!, owned && word & SlotPages.sharedBit == 0)
    }

    func countLoans(of object: UInt) -> Int { fast.countLoans(of: object) }

    // MARK: free slots

    /// Makes `page` the calling thread's.
    private func adopt(_ page: Int, _ local: UnsafeMutablePointer<HandleCache.Local>, _ token: UInt) {
        fast.owner(page).pointee.store(token, ordering: .relaxed)
        fast.ownerThread(page).pointee.store(UInt(tether_thread_id()), ordering: .relaxed)
        local.pointee.pages.append(page)
    }

    /// Finds free slots: freed back to our pages by other threads, on pages
    /// exited threads left, or a new page.
    private func refill(_ local: UnsafeMutablePointer<HandleCache.Local>, _ token: UInt) {
        for page in local.pointee.pages {
            let head = fast.remoteHead(page).pointee.exchange(0, ordering: .acquiring)
            if head != 0 { local.pointee.head = Int(head); return }
        }
        orphans.withLock { orphans in
            while let page = orphans.pages.popLast() {
                adopt(page, local, token)
                let head = fast.remoteHead(page).pointee.exchange(0, ordering: .acquiring)
                if head != 0 { local.pointee.head = Int(head); return }
            }
            let page = pageCount.load(ordering: .relaxed)
            precondition(page < SlotPages.maxPages, "Tether: the handle table of \(kind.noun)s is full")
            let base = UnsafeMutableRawPointer.allocate(byteCount: SlotPages.pageBytes, alignment: 64)
            base.initializeMemory(as: UInt8.self, repeating: 0, count: SlotPages.pageBytes)
            fast.pages[page].store(UInt(bitPattern: base), ordering: .releasing)
            pageCount.store(page + 1, ordering: .releasing)
            adopt(page, local, token)
            local.pointee.fresh = page << SlotPages.pageBits
            local.pointee.freshEnd = (page + 1) << SlotPages.pageBits
        }
    }

    /// A thread is exiting: its free slots go back to their pages' remote lists
    /// and its pages to the orphans, whole, for the next thread short of slots
    /// (so that thread owns every slot it takes and frees it locally).
    func abandon(_ local: UnsafeMutablePointer<HandleCache.Local>) {
        var byPage: [Int: [Int]] = [:]
        var link = local.pointee.head
        while link != 0 {
            let index = link - 1
            link = fast.next(index)
            byPage[index >> SlotPages.pageBits, default: []].append(index)
        }
        for index in local.pointee.fresh..<local.pointee.freshEnd { byPage[index >> SlotPages.pageBits, default: []].append(index) }
        for (page, indices) in byPage {
            for (i, index) in indices.enumerated().dropLast() { fast.setNext(index, indices[i + 1] + 1) }
            fast.push(first: indices[0], last: indices[indices.count - 1], onto: page)
        }
        orphans.withLock { orphans in
            for page in local.pointee.pages {
                fast.ownerThread(page).pointee.store(0, ordering: .relaxed)
                fast.owner(page).pointee.store(0, ordering: .relaxed)
                orphans.pages.append(page)
            }
        }
        local.pointee = HandleCache.Local()
    }

    // MARK: errors

    /// Why `handle` is not a live handle of this kind.
    @inline(never)
    func invalidHandle(_ handle: OpaquePointer?, _ function: StaticString) -> TetherError {
        guard let handle else { return TetherError(.invalidHandle, "\(function): the \(kind.noun) is NULL") }
        let raw = UInt64(UInt(bitPattern: handle))
        guard raw >> 56 == fast.tag else { return wrongKind(raw >> 56, function) }
        return stale(function)
    }

    private func wrongKind(_ tag: UInt64, _ function: StaticString) -> TetherError {
        if let other = HandleKind(rawValue: tag) {
            return TetherError(.invalidHandle, "\(function): that is a \(other.noun), not a \(kind.noun)")
        }
        return TetherError(.invalidHandle, "\(function): that is not a \(kind.noun) from this library")
    }

    private func stale(_ function: StaticString) -> TetherError {
        switch kind {
        case .container: TetherError(.invalidHandle, "\(function): the container was already freed")
        case .registration: TetherError(.invalidHandle, "\(function): the registration is stale: its key was registered again or its container was freed")
        case .resolver: closedResolver(function)
        case .ref, .weak, .factory: TetherError(.invalidHandle, "\(function): the \(kind.noun) was already released (stale handle)")
        }
    }
}

/// Where a kind's slots are, and the hot operations on them: a plain value, so
/// the hit path builds one from a global word and constants (`Handles.refPages`)
/// and touches no object, reference count or lazy static.
struct SlotPages {
    static var pageBits: Int { 10 }
    static var pageSize: Int { 1 << pageBits }
    static var maxPages: Int { 1 << 14 }  // 16M live handles per kind: an index fits `indexBits`
    static var indexBits: UInt64 { 24 }
    /// The generations a slot goes through before it is retired (`release(_:after:)`).
    static var maxGeneration: UInt64 { 0xFFFF_FFFF }
    /// A page: a cache line of header (owner token, remote free list, owner thread) then the slots.
    static var headerBytes: Int { 64 }
    static var slotStride: Int { 16 }
    static var pageBytes: Int { headerBytes + pageSize * slotStride }

    /// Page base addresses: `maxPages` entries, 0 until that page is allocated.
    let pages: UnsafeMutablePointer<Atomic<UInt>>
    /// `HandleKind.rawValue` and `.index`.
    let tag: UInt64
    let kindIndex: Int

    // MARK: layout

    /// The base of page `page`, or nil if it does not exist (yet).
    @inline(__always)
    func pageIfAny(_ page: Int) -> UnsafeMutableRawPointer? {
        UnsafeMutableRawPointer(bitPattern: pages[page].load(ordering: .acquiring))
    }

    /// A page known to exist (it holds a slot this code has in hand).
    @inline(__always)
    func page(_ page: Int) -> UnsafeMutableRawPointer { pageIfAny(page).unsafelyUnwrapped }

    @inline(__always)
    func slot(_ index: Int) -> UnsafeMutableRawPointer {
        page(index >> Self.pageBits) + Self.headerBytes + (index & (Self.pageSize - 1)) * Self.slotStride
    }

    @inline(__always)
    static func state(_ slot: UnsafeMutableRawPointer) -> UnsafeMutablePointer<Atomic<UInt64>> {
        slot.assumingMemoryBound(to: Atomic<UInt64>.self)
    }

    /// The slot's second word: the object while occupied, the free-list link while free.
    @inline(__always)
    static func word2(_ slot: UnsafeMutableRawPointer) -> UnsafeMutablePointer<Atomic<UInt>> {
        (slot + 8).assumingMemoryBound(to: Atomic<UInt>.self)
    }

    /// Page header: the owner's token (its `HandleCache` locals), the remote free
    /// list, and the owner's `tether_thread_id()` (0 while orphaned). The owner
    /// writes the first and last, only for itself.
    @inline(__always)
    func owner(_ page: Int) -> UnsafeMutablePointer<Atomic<UInt>> {
        self.page(page).assumingMemoryBound(to: Atomic<UInt>.self)
    }

    @inline(__always)
    func remoteHead(_ page: Int) -> UnsafeMutablePointer<Atomic<UInt>> {
        (self.page(page) + 8).assumingMemoryBound(to: Atomic<UInt>.self)
    }

    @inline(__always)
    func ownerThread(_ page: Int) -> UnsafeMutablePointer<Atomic<UInt>> {
        (self.page(page) + 16).assumingMemoryBound(to: Atomic<UInt>.self)
    }

    /// The link stored in a free slot: next free index + 1, 0 at the end.
    @inline(__always)
    func next(_ index: Int) -> Int { Int(bitPattern: Self.word2(slot(index)).pointee.load(ordering: .relaxed)) }

    @inline(__always)
    func setNext(_ index: Int, _ next: Int) { Self.word2(slot(index)).pointee.store(UInt(bitPattern: next), ordering: .releasing) }

    // MARK: handles

    /// A new handle for `object` in a free slot of the calling thread, or nil if
    /// it has none at hand (`HandleSlots.insert` refills).
    @inline(__always)
    func insert(_ object: UnsafeMutableRawPointer, lent: Bool,
                locals: UnsafeMutablePointer<HandleCache.Local> = HandleCache.current) -> OpaquePointer? {
        let local = locals + kindIndex
        let index: Int
        // Wrapping arithmetic: the values are slot indices, far from overflow.
        if local.pointee.head != 0 {
            index = local.pointee.head &- 1
            local.pointee.head = next(index)
        } else if local.pointee.fresh < local.pointee.freshEnd {
            index = local.pointee.fresh
            local.pointee.fresh &+= 1
        } else {
            return nil
        }
        let s = slot(index)
        Self.word2(s).pointee.store(UInt(bitPattern: object), ordering: .releasing)
        let generation = Self.state(s).pointee.load(ordering: .relaxed) >> 2
        // Releasing: a scan (`countLoans`) that sees the state sees the object.
        Self.state(s).pointee.store(generation << 2 | (lent ? 3 : 1), ordering: .releasing)
        return OpaquePointer(bitPattern: UInt(tag << 56 | (generation & Self.maxGeneration) << Self.indexBits | UInt64(truncatingIfNeeded: index)))!
    }

    /// The slot index a handle names (its kind checked elsewhere).
    @inline(__always)
    static func index(of handle: OpaquePointer?) -> Int { Int(UInt(bitPattern: handle) & (1 << indexBits - 1)) }

    /// The slot and state word of a live handle of this kind, or nil.
    @inline(__always)
    func peekSlot(_ handle: OpaquePointer?) -> (UnsafeMutableRawPointer, UInt64)? {
        guard let (_, s, word) = peekSlotOnPage(handle) else { return nil }
        return (s, word)
    }

    /// `peekSlot`, with the base of the slot's page.
    @inline(__always)
    func peekSlotOnPage(_ handle: OpaquePointer?) -> (UnsafeMutableRawPointer, UnsafeMutableRawPointer, UInt64)? {
        let raw = UInt64(UInt(bitPattern: handle))  // NULL: 0, a wrong tag
        guard raw >> 56 == tag else { return nil }
        let index = Self.index(of: handle)
        guard let base = pageIfAny(index >> Self.pageBits) else { return nil }
        let s = base + Self.headerBytes + (index & (Self.pageSize - 1)) * Self.slotStride
        let word = Self.state(s).pointee.load(ordering: .acquiring)
        guard word & 1 == 1, (word >> 2) & Self.maxGeneration == (raw >> Self.indexBits) & Self.maxGeneration else { return nil }
        return (base, s, word)
    }

    /// The object behind a live handle of this kind, or nil. No error, no retain.
    /// A container or registration looked up by a thread other than its slot's owner is marked first (`markShared`).
    @inline(__always)
    func peek(_ handle: OpaquePointer?) -> UnsafeMutableRawPointer? {
        guard let (base, s, word) = peekSlotOnPage(handle) else { return nil }
        // Acquiring: a removal writes the free-list link over it, and an insert the next object
        // (releasing, `setNext`, `insert`), after moving the generation on.
        let object = Self.word2(s).pointee.load(ordering: .acquiring)
        // A container's free may race this call (the reclaimer waits for it), so the object must
        // be the one of the generation checked: the state is read again after it (or the mark's
        // read-modify-write succeeds on it). Marked and unchanged (a root, a shared child): one compare.
        // Its registrations' handles go in the same free: the same.
        if Self.marksLookups(tag) {
            let again = Self.state(s).pointee.load(ordering: .relaxed)
            if again != word | Self.sharedBit, !Self.unmarkedStill(base, s, word, again) { return nil }
        }
        return UnsafeMutableRawPointer(bitPattern: object)
    }

    /// `peek`'s container whose state was `word`, then `again`, not both marked: whether the
    /// lookup may go on (the caller's own if it owns the page, else marked now), false if stale.
    @inline(__always)
    static func unmarkedStill(_ base: UnsafeMutableRawPointer, _ s: UnsafeMutableRawPointer, _ word: UInt64, _ again: UInt64) -> Bool {
        guard word & sharedBit == 0 else { return false }  // marked before and changed since: removed
        return ownsPage(base) ? again == word : markShared(s, word)
    }

    // MARK: containers reached by one thread

    /// A container or registration slot's state bit (where refs keep `lent`): another thread than
    /// the owner of the slot's page (the thread that made the container, or the registration's
    /// handle) looked the handle up. Set once, never cleared while the handle lives, and always
    /// before that thread reads the object; a container freed by the page's owner, outside any
    /// call, with the bit clear on its slot and on its registrations' was reached by no other
    /// thread's call through those handles (`HandleSlots.remove`; `Reclamation.retire`).
    static var sharedBit: UInt64 { 2 }

    /// Whether lookups of handles tagged `tag` are marked (`sharedBit`): containers and registrations.
    @inline(__always)
    static func marksLookups(_ tag: UInt64) -> Bool {
        tag &- HandleKind.container.rawValue <= HandleKind.registration.rawValue &- HandleKind.container.rawValue
    }

    /// Whether the calling thread owns the page at `base` (its header's owner thread; a page changes
    /// hands only after its owner exited, under the orphans' lock: `HandleSlots.abandon`, `adopt`).
    @inline(__always)
    static func ownsPage(_ base: UnsafeMutableRawPointer) -> Bool {
        base.assumingMemoryBound(to: Atomic<UInt>.self)[2].load(ordering: .relaxed) == UInt(tether_thread_id())
    }

    /// Marks the container or registration slot `s` (state `word` seen live) as reached by another
    /// thread, before the caller reads the object. A read-modify-write of the state word, so it is ordered with
    /// the removal's (`HandleSlots.remove`): the mark comes first and the removal sees it, or the
    /// removal comes first and the mark fails (false: the handle is stale, nothing was read).
    /// Succeeding on `word` itself, it also says the object read before it was the slot's then:
    /// a removal in between would have moved the generation.
    @inline(never)
    static func markShared(_ s: UnsafeMutableRawPointer, _ word: UInt64) -> Bool {
        var expected = word
        while true {
            let (done, seen) = state(s).pointee.compareExchange(expected: expected, desired: expected | sharedBit,
                                                                ordering: .sequentiallyConsistent)
            if done { return true }
            // Another generation (removed, maybe reused): stale. Else only the mark differs.
            guard seen & 1 == 1, seen >> 2 == expected >> 2 else { return false }
            if seen & sharedBit != 0 { return true }
            expected = seen
        }
    }

    /// What `releaseRef` found.
    enum RefRelease {
        case invalid
        /// The handle owned this reference: the caller releases it.
        case owned(UnsafeMutableRawPointer)
        case lent
    }

    /// Removes a strong handle (its generation moves on) without an atomic
    /// read-modify-write: only the thread releasing a handle writes its state
    /// word (using a handle while another thread releases it is the caller's
    /// race), so a plain store frees it. A loan owns nothing; if unpublished
    /// singletons may still be lent (`RetiredLoans`), the release is reported
    /// after `lightBarrier()`, which pairs with the heavy barrier
    /// `RetiredLoans.retire` issues between marking an instance and counting its loans.
    @inline(__always)
    func releaseRef(_ handle: OpaquePointer?) -> RefRelease {
        guard let (s, word) = peekSlot(handle) else { return .invalid }
        let object = Self.word2(s).pointee.load(ordering: .relaxed)
        Self.state(s).pointee.store((word >> 2 &+ 1) << 2, ordering: .releasing)
        release(Self.index(of: handle), after: word)
        if word & 2 == 0 { return .owned(UnsafeMutableRawPointer(bitPattern: object)!) }
        lightBarrier()
        if retiredLoanCount.load(ordering: .relaxed) != 0 { RetiredLoans.shared.loanReleased(object) }
        return .lent
    }

    /// How many live loans of `object` the slots hold. Each slot is read as a
    /// seqlock (state, object, state again: a free moves the generation on), so a
    /// slot counts only if it held a loan of `object` at one instant. Every word
    /// read is atomic, so nothing here races; the acquire fence (which TSan does
    /// not model) only keeps the second state load after the object load.
    func countLoans(of object: UInt) -> Int {
        var count = 0
        var page = 0
        while page < Self.maxPages, let base = pageIfAny(page) {
            for i in 0..<Self.pageSize {
                let s = base + Self.headerBytes + i * Self.slotStride
                let first = Self.state(s).pointee.load(ordering: .acquiring)
                guard first & 3 == 3, Self.word2(s).pointee.load(ordering: .relaxed) == object else { continue }
                atomicMemoryFence(ordering: .acquiring)
                if Self.state(s).pointee.load(ordering: .relaxed) == first { count += 1 }
            }
            page += 1
        }
        return count
    }

    // MARK: free slots

    /// Puts a removed slot whose state word was `word` back, unless its
    /// generation is used up: then it is retired (never reused; 16 bytes), so
    /// no handle of it can ever be handed out twice.
    @inline(__always)
    func release(_ index: Int, after word: UInt64) {
        if (word >> 2) & Self.maxGeneration != Self.maxGeneration { release(index) }
    }

    /// Puts a removed slot back: on this thread's list if its page is ours, else
    /// on the page's remote list. Ownership is checked against `tether_thread_id()`
    /// (the thread pointer) instead of the thread-specific locals.
    @inline(__always)
    func release(_ index: Int) {
        let base = page(index >> Self.pageBits)
        release(index, onPage: base, owned: Self.ownsPage(base))
    }

    /// `release(_:)` of a slot on the page at `base`, `owned` by the calling thread or not.
    @inline(__always)
    func release(_ index: Int, onPage base: UnsafeMutableRawPointer, owned: Bool) {
        if owned {
            // Only the owner wrote both words, so the token is its own locals.
            let token = base.assumingMemoryBound(to: Atomic<UInt>.self).pointee.load(ordering: .relaxed)
            let local = UnsafeMutablePointer<HandleCache.Local>(bitPattern: token).unsafelyUnwrapped + kindIndex
            setNext(index, local.pointee.head)
            local.pointee.head = index &+ 1
            return
        }
        push(first: index, last: index, onto: index >> Self.pageBits)
    }

    /// Pushes a chain of free slots (`first` ... `last`, all on `page`, already
    /// linked) onto the page's remote list.
    func push(first: Int, last: Int, onto page: Int) {
        let head = remoteHead(page)
        var current = head.pointee.load(ordering: .relaxed)
        while true {
            setNext(last, Int(current))
            let (done, seen) = head.pointee.compareExchange(expected: current, desired: UInt(first + 1), ordering: .releasing)
            if done { return }
            current = seen
        }
    }
}

/// Every handle the library hands out.
enum Handles {
    static let containers: HandleTable<Container> = published(HandleTable(.container), in: containerSlotsAddress)
    static let registrations = HandleTable<Registration>(.registration)
    static let refs: HandleTable<Instance> = published(HandleTable(.ref), in: refSlotsAddress)
    static let weaks = HandleTable<WeakRef>(.weak)
    /// Borrowed (`insert(borrowing:)`): a resolver's handle is open only during
    /// the callback that received it, while the graph holds the resolver.
    static let resolvers = HandleTable<Resolver>(.resolver)
    /// What FACTORY slots hand out; the receiver owns the handle (tether_factory_release).
    static let factories = HandleTable<FactoryCell>(.factory)

    /// The slots of every kind, by `HandleKind.index`.
    static var all: [HandleSlots] { [containers.slots, registrations.slots, refs.slots, weaks.slots, resolvers.slots, factories.slots] }

    private static func published<Object>(_ table: HandleTable<Object>, in address: borrowing Atomic<UInt>) -> HandleTable<Object> {
        address.store(UInt(bitPattern: table.slots.fast.pages), ordering: .releasing)
        return table
    }

    /// The slots of refs and containers for hot paths, without the `swift_once`
    /// of the lazy statics above; nil until those exist (then take the ordinary path).
    @inline(__always)
    static var refPages: SlotPages? { pages(at: refSlotsAddress, .ref) }

    @inline(__always)
    static var containerPages: SlotPages? { pages(at: containerSlotsAddress, .container) }

    /// `containers.unretained`, through `containerPages` when they exist (a request's child's
    /// new, value and free: no once-check of the lazy table).
    @inline(__always)
    static func unretainedContainer(_ c: OpaquePointer?, _ function: StaticString) throws(TetherError) -> Borrowed<Container> {
        if let object = containerPages?.peek(c) { return Borrowed(opaque: object) }
        return try containers.unretained(c, function)
    }

    /// `containers.insert(taking:)`, through `containerPages` as above.
    @inline(__always)
    static func insertContainer(taking container: Ref<Container>) -> OpaquePointer {
        containerPages?.insert(container.opaque, lent: false) ?? containers.insert(taking: container)
    }

    @inline(__always)
    private static func pages(at address: borrowing Atomic<UInt>, _ kind: HandleKind) -> SlotPages? {
        UnsafeMutablePointer(bitPattern: address.load(ordering: .acquiring))
            .map { SlotPages(pages: $0, tag: kind.rawValue, kindIndex: kind.index) }
    }
}

/// `SlotPages.pages` of `Handles.refs` and `Handles.containers` (0 before
/// they exist): global atomics are initialized statically, so reading them needs no `swift_once`.
private let refSlotsAddress = Atomic<UInt>(0)
private let containerSlotsAddress = Atomic<UInt>(0)


/// The error of a resolver used after its callback returned (a stale resolver handle, and a
/// binding's own resolver of a described plan: tether_plan_resolver).
func closedResolver(_ function: StaticString) -> TetherError {
    TetherError(.wrongContext, "\(function): the resolver is only valid during the callback that received it")
}
