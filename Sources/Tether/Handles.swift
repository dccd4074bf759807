import Synchronization
import TetherCore

/// Kinds of handle, stored in the top byte so a handle of the wrong kind is
/// recognised as such instead of being looked up in the wrong table.
enum HandleKind: UInt64, CaseIterable {
    case container = 0x71, registration, ref, weak, resolver

    var index: Int { Int(rawValue - HandleKind.container.rawValue) }

    var noun: String {
        switch self {
        case .container: "container"
        case .registration: "registration"
        case .ref: "strong handle (tether_ref)"
        case .weak: "weak handle (tether_weak)"
        case .resolver: "resolver"
        }
    }
}

/// A handle table: objects behind generation-counted handles
/// (`kind:8 | generation:24 | index:32`, never a pointer), so NULL, released,
/// stale, foreign and wrong-kind handles are detected instead of dereferenced.
/// A handle owns one reference to its object, or (a loan, refs only) none: see
/// `lend` and `recall`.
struct HandleTable<Object: AnyObject>: Sendable {
    let slots: HandleSlots

    init(_ kind: HandleKind) { slots = HandleSlots(kind) }

    func insert(_ object: Object) -> OpaquePointer {
        slots.insert(Unmanaged.passRetained(object).toOpaque(), lent: false)
    }

    /// A handle that does not own a reference: the caller guarantees the object
    /// outlives it or `recall`s it first. Confirm or `withdraw` it as `SingletonLoan` says.
    func lend(_ object: Unmanaged<Object>) -> OpaquePointer {
        slots.insert(object.toOpaque(), lent: true)
    }

    /// The object behind `handle`, or an INVALID_HANDLE error naming `function`.
    @inline(__always)
    func get(_ handle: OpaquePointer?, _ function: StaticString) throws(TetherError) -> Object {
        Unmanaged<Object>.fromOpaque(try slots.object(handle, function)).takeUnretainedValue()
    }

    /// `get` without a retain, for hot paths that only borrow the object.
    @inline(__always)
    func unretained(_ handle: OpaquePointer?, _ function: StaticString) throws(TetherError) -> Unmanaged<Object> {
        Unmanaged<Object>.fromOpaque(try slots.object(handle, function))
    }

    /// Removes `handle` (its generation moves on, so later uses are stale) and
    /// returns the reference it owned (nil for a loan).
    @discardableResult
    func remove(_ handle: OpaquePointer?, _ function: StaticString) throws(TetherError) -> Object? {
        let (object, lent) = try slots.remove(handle, function)
        return lent ? nil : Unmanaged<Object>.fromOpaque(object).takeRetainedValue()
    }

    /// Removes a loan `lend` just made; false if `recall` already made it an
    /// owning handle (then the caller keeps it).
    func withdraw(_ handle: OpaquePointer) -> Bool { slots.withdraw(handle) }

    /// Turns every loan of `objects` into an owned reference: called before the
    /// lender drops its own references.
    func recall(_ objects: [Object]) {
        let addresses = Set(objects.map { UInt(bitPattern: Unmanaged.passUnretained($0).toOpaque()) })
        slots.recall(addresses,
                     retain: { _ = Unmanaged<Object>.fromOpaque($0).retain() },
                     release: { Unmanaged<Object>.fromOpaque($0).release() })
    }
}

/// The slots behind a `HandleTable`: pages of 16-byte slots (an atomic state
/// word `generation << 2 | lent << 1 | occupied`, and the object, or the next
/// free slot while free) that never move or get freed.
///
/// Each thread takes slots from pages it owns and frees them there, so
/// uncontended inserts and removes touch no shared cache line: a slot freed by
/// another thread goes onto its page's remote list (lock-free push; only the
/// owner takes the list, whole, so there is no ABA), and a thread that exits
/// hands its free slots and pages to whichever thread needs slots next.
///
/// Using a handle on one thread while another thread releases it is a race in
/// the caller's program (as with any C object); everything else is safe.
final class HandleSlots: @unchecked Sendable {
    let kind: HandleKind
    /// `kind.rawValue` and `kind.index`, stored (the enum's are computed by a switch).
    private let tag: UInt64
    private let kindIndex: Int
    private static var pageBits: Int { 10 }
    private static var pageSize: Int { 1 << pageBits }
    private static var maxPages: Int { 1 << 14 }  // 16M live handles per kind
    /// A page: a cache line of header (owner token, remote free list) then the slots.
    private static var headerBytes: Int { 64 }
    private static var slotStride: Int { 16 }
    private static var pageBytes: Int { headerBytes + pageSize * slotStride }

    /// Page base addresses; the first `pageCount` are allocated.
    private let pages: UnsafeMutablePointer<Atomic<UInt>>
    private let pageCount = Atomic<Int>(0)

    /// Free slots and pages left by threads that exited, for the next thread short of slots.
    private struct Orphans {
        var slots: [Int] = []
        var pages: [Int] = []
    }
    private let orphans = Mutex(Orphans())

    init(_ kind: HandleKind) {
        self.kind = kind
        tag = kind.rawValue
        kindIndex = kind.index
        pages = .allocate(capacity: Self.maxPages)
        for i in 0..<Self.maxPages { (pages + i).initialize(to: Atomic(0)) }
    }

    // MARK: layout

    @inline(__always)
    private func page(_ page: Int) -> UnsafeMutableRawPointer {
        UnsafeMutableRawPointer(bitPattern: pages[page].load(ordering: .acquiring))!
    }

    @inline(__always)
    private func slot(_ index: Int) -> UnsafeMutableRawPointer {
        page(index >> Self.pageBits) + Self.headerBytes + (index & (Self.pageSize - 1)) * Self.slotStride
    }

    @inline(__always)
    private func state(_ slot: UnsafeMutableRawPointer) -> UnsafeMutablePointer<Atomic<UInt64>> {
        slot.assumingMemoryBound(to: Atomic<UInt64>.self)
    }

    @inline(__always)
    private func owner(_ page: Int) -> UnsafeMutablePointer<Atomic<UInt>> {
        self.page(page).assumingMemoryBound(to: Atomic<UInt>.self)
    }

    @inline(__always)
    private func remoteHead(_ page: Int) -> UnsafeMutablePointer<Atomic<UInt>> {
        (self.page(page) + 8).assumingMemoryBound(to: Atomic<UInt>.self)
    }

    /// The link stored in a free slot: next free index + 1, 0 at the end.
    @inline(__always)
    private func next(_ index: Int) -> Int { slot(index).load(fromByteOffset: 8, as: Int.self) }

    @inline(__always)
    private func setNext(_ index: Int, _ next: Int) { slot(index).storeBytes(of: next, toByteOffset: 8, as: Int.self) }

    // MARK: handles

    func insert(_ object: UnsafeMutableRawPointer, lent: Bool) -> OpaquePointer {
        let locals = HandleCache.current
        let index = take(locals + kindIndex, HandleCache.token(locals))
        let s = slot(index)
        s.storeBytes(of: object, toByteOffset: 8, as: UnsafeMutableRawPointer.self)
        let generation = state(s).pointee.load(ordering: .relaxed) >> 2
        if lent {
            // Sequentially consistent: the lender's recheck must come after it (SingletonLoan).
            state(s).pointee.store(generation << 2 | 3, ordering: .sequentiallyConsistent)
        } else {
            state(s).pointee.store(generation << 2 | 1, ordering: .releasing)
        }
        return OpaquePointer(bitPattern: UInt(tag << 56 | (generation & 0xFF_FFFF) << 32 | UInt64(index)))!
    }

    @inline(__always)
    func object(_ handle: OpaquePointer?, _ function: StaticString) throws(TetherError) -> UnsafeMutableRawPointer {
        let (s, _) = try live(handle, function)
        return s.load(fromByteOffset: 8, as: UnsafeMutableRawPointer.self)
    }

    func remove(_ handle: OpaquePointer?, _ function: StaticString) throws(TetherError) -> (UnsafeMutableRawPointer, lent: Bool) {
        let (s, first) = try live(handle, function)
        var word = first
        while true {
            let (done, seen) = state(s).pointee.compareExchange(expected: word, desired: (word >> 2 &+ 1) << 2,
                                                                ordering: .acquiringAndReleasing)
            if done { break }
            // A recall may have turned this loan into a reference meanwhile: same handle, try again.
            guard seen & 1 == 1, seen >> 2 == word >> 2 else { throw stale(function) }
            word = seen
        }
        let object = s.load(fromByteOffset: 8, as: UnsafeMutableRawPointer.self)
        release(Int(UInt(bitPattern: handle) & 0xFFFF_FFFF))
        return (object, word & 2 != 0)
    }

    func withdraw(_ handle: OpaquePointer) -> Bool {
        let index = Int(UInt(bitPattern: handle) & 0xFFFF_FFFF)
        let s = slot(index)
        let word = state(s).pointee.load(ordering: .acquiring)
        guard word & 3 == 3,
              state(s).pointee.compareExchange(expected: word, desired: (word >> 2 &+ 1) << 2, ordering: .acquiringAndReleasing).exchanged
        else { return false }
        release(index)
        return true
    }

    func recall(_ objects: Set<UInt>, retain: (UnsafeMutableRawPointer) -> Void, release: (UnsafeMutableRawPointer) -> Void) {
        guard !objects.isEmpty else { return }
        for index in 0..<(pageCount.load(ordering: .acquiring) << Self.pageBits) {
            let s = slot(index)
            var word = state(s).pointee.load(ordering: .sequentiallyConsistent)
            guard word & 3 == 3 else { continue }
            let object = s.load(fromByteOffset: 8, as: UnsafeMutableRawPointer.self)
            guard objects.contains(UInt(bitPattern: object)) else { continue }
            // The lender still holds the object, so retaining it here is safe.
            retain(object)
            while true {
                let (done, seen) = state(s).pointee.compareExchange(expected: word, desired: word & ~2, ordering: .acquiringAndReleasing)
                if done { break }
                guard seen & 3 == 3, seen >> 2 == word >> 2 else { release(object); break }  // released meanwhile
                word = seen
            }
        }
    }

    /// The slot and state word of a live handle.
    @inline(__always)
    private func live(_ handle: OpaquePointer?, _ function: StaticString) throws(TetherError) -> (UnsafeMutableRawPointer, UInt64) {
        guard let handle else { throw TetherError(.invalidHandle, "\(function): the \(kind.noun) is NULL") }
        let raw = UInt64(UInt(bitPattern: handle))
        guard raw >> 56 == tag else { throw wrongKind(raw >> 56, function) }
        let index = Int(raw & 0xFFFF_FFFF)
        guard index >> Self.pageBits < pageCount.load(ordering: .acquiring) else { throw stale(function) }
        let s = slot(index)
        let word = state(s).pointee.load(ordering: .acquiring)
        guard word & 1 == 1, (word >> 2) & 0xFF_FFFF == (raw >> 32) & 0xFF_FFFF else { throw stale(function) }
        return (s, word)
    }

    // MARK: free slots

    /// A free slot for the calling thread.
    @inline(__always)
    private func take(_ local: UnsafeMutablePointer<HandleCache.Local>, _ token: UInt) -> Int {
        while true {
            if local.pointee.head != 0 {
                let index = local.pointee.head - 1
                local.pointee.head = next(index)
                return index
            }
            if local.pointee.fresh < local.pointee.freshEnd {
                defer { local.pointee.fresh += 1 }
                return local.pointee.fresh
            }
            refill(local, token)
        }
    }

    /// Puts a removed slot back: on this thread's list if its page is ours, else
    /// on the page's remote list.
    @inline(__always)
    private func release(_ index: Int) {
        let locals = HandleCache.current
        let page = index >> Self.pageBits
        if owner(page).pointee.load(ordering: .relaxed) == HandleCache.token(locals) {
            let local = locals + kindIndex
            setNext(index, local.pointee.head)
            local.pointee.head = index + 1
            return
        }
        let head = remoteHead(page)
        var current = head.pointee.load(ordering: .relaxed)
        while true {
            setNext(index, Int(current))
            let (done, seen) = head.pointee.compareExchange(expected: current, desired: UInt(index + 1), ordering: .releasing)
            if done { return }
            current = seen
        }
    }

    /// Finds free slots: freed back to our pages by other threads, left by exited
    /// threads, or a new page.
    private func refill(_ local: UnsafeMutablePointer<HandleCache.Local>, _ token: UInt) {
        for page in local.pointee.pages {
            let head = remoteHead(page).pointee.exchange(0, ordering: .acquiring)
            if head != 0 { local.pointee.head = Int(head); return }
        }
        orphans.withLock { orphans in
            if !orphans.slots.isEmpty {
                for index in orphans.slots { setNext(index, local.pointee.head); local.pointee.head = index + 1 }
                orphans.slots = []
                return
            }
            while let page = orphans.pages.popLast() {
                owner(page).pointee.store(token, ordering: .relaxed)
                local.pointee.pages.append(page)
                let head = remoteHead(page).pointee.exchange(0, ordering: .acquiring)
                if head != 0 { local.pointee.head = Int(head); return }
            }
            let page = pageCount.load(ordering: .relaxed)
            precondition(page < Self.maxPages, "Tether: the handle table of \(kind.noun)s is full")
            let base = UnsafeMutableRawPointer.allocate(byteCount: Self.pageBytes, alignment: 64)
            base.initializeMemory(as: UInt8.self, repeating: 0, count: Self.pageBytes)
            base.storeBytes(of: token, as: UInt.self)
            pages[page].store(UInt(bitPattern: base), ordering: .releasing)
            pageCount.store(page + 1, ordering: .releasing)
            local.pointee.pages.append(page)
            local.pointee.fresh = page << Self.pageBits
            local.pointee.freshEnd = (page + 1) << Self.pageBits
        }
    }

    /// A thread is exiting: its free slots and pages go to the orphans.
    func abandon(_ local: UnsafeMutablePointer<HandleCache.Local>) {
        orphans.withLock { orphans in
            var link = local.pointee.head
            while link != 0 { orphans.slots.append(link - 1); link = next(link - 1) }
            orphans.slots.append(contentsOf: local.pointee.fresh..<local.pointee.freshEnd)
            for page in local.pointee.pages {
                owner(page).pointee.store(0, ordering: .relaxed)
                orphans.pages.append(page)
            }
        }
        local.pointee = HandleCache.Local()
    }

    // MARK: errors

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
        case .resolver: TetherError(.wrongContext, "\(function): the resolver is only valid during the callback that received it")
        default: TetherError(.invalidHandle, "\(function): the \(kind.noun) was already released (stale handle)")
        }
    }
}

/// Every handle the library hands out.
enum Handles {
    static let containers = HandleTable<Container>(.container)
    static let registrations = HandleTable<Registration>(.registration)
    static let refs = HandleTable<Instance>(.ref)
    static let weaks = HandleTable<WeakRef>(.weak)
    static let resolvers = HandleTable<Resolver>(.resolver)

    /// The slots of every kind, by `HandleKind.index`.
    static var all: [HandleSlots] { [containers.slots, registrations.slots, refs.slots, weaks.slots, resolvers.slots] }
}

