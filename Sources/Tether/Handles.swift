import Synchronization
import TetherCore

/// Kinds of handle, stored in the top byte so a handle of the wrong kind is
/// recognised as such instead of being looked up in the wrong table.
enum HandleKind: UInt64 {
    case container = 0x71, registration, ref, weak, resolver

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

/// A lock-free, generation-counted handle table. A handle is
/// `kind:8 | generation:24 | index:32`, never a pointer, so NULL, released,
/// stale, foreign and wrong-kind handles are detected instead of dereferenced.
///
/// Slots live in fixed chunks that never move or get freed, each with an atomic
/// state word `generation << 1 | occupied`; free slots form a tagged Treiber
/// stack. Using a handle on one thread while another thread releases it is a
/// race in the caller's program (as with any C object); everything else is safe.
final class HandleTable<Object: AnyObject>: @unchecked Sendable {
    let kind: HandleKind
    private static var chunkBits: Int { 12 }
    private static var chunkSize: Int { 1 << chunkBits }
    private static var maxChunks: Int { 1 << 12 }  // 16M live handles per kind

    /// Chunk base addresses (0 = not yet allocated).
    private let chunks: UnsafeMutablePointer<Atomic<UInt>>
    private let allocated = Atomic<Int>(0)
    /// Free-list head: `tag << 32 | (index + 1)`, 0 when empty.
    private let freeHead = Atomic<UInt64>(0)
    private let growLock = Mutex(())

    /// Per-slot layout inside a chunk: state word, object, next-free link.
    private struct Layout {
        static var stride: Int { 24 }
        static var object: Int { 8 }
        static var next: Int { 16 }
    }

    init(_ kind: HandleKind) {
        self.kind = kind
        chunks = .allocate(capacity: Self.maxChunks)
        for i in 0..<Self.maxChunks { (chunks + i).initialize(to: Atomic(0)) }
    }

    private func slot(_ index: Int) -> UnsafeMutableRawPointer? {
        let base = chunks[index >> Self.chunkBits].load(ordering: .acquiring)
        guard base != 0 else { return nil }
        return UnsafeMutableRawPointer(bitPattern: base)! + (index & (Self.chunkSize - 1)) * Layout.stride
    }

    private func state(_ slot: UnsafeMutableRawPointer) -> UnsafeMutablePointer<Atomic<UInt64>> {
        slot.assumingMemoryBound(to: Atomic<UInt64>.self)
    }

    func insert(_ object: Object) -> OpaquePointer {
        let index = popFree() ?? grow()
        let s = slot(index)!
        s.storeBytes(of: Unmanaged.passRetained(object).toOpaque(), toByteOffset: Layout.object, as: UnsafeMutableRawPointer.self)
        let generation = state(s).pointee.load(ordering: .relaxed) >> 1
        state(s).pointee.store(generation << 1 | 1, ordering: .releasing)
        return OpaquePointer(bitPattern: UInt(kind.rawValue << 56 | (generation & 0xFF_FFFF) << 32 | UInt64(index)))!
    }

    /// The object behind `handle`, or an INVALID_HANDLE error naming `function`.
    @inline(__always)
    func get(_ handle: OpaquePointer?, _ function: StaticString) throws(TetherError) -> Object {
        let (s, _) = try live(handle, function)
        let raw = s.load(fromByteOffset: Layout.object, as: UnsafeMutableRawPointer.self)
        return Unmanaged<Object>.fromOpaque(raw).takeUnretainedValue()
    }

    /// Removes `handle` (its generation moves on, so later uses are stale) and
    /// returns the object with the table's reference.
    @discardableResult
    func remove(_ handle: OpaquePointer?, _ function: StaticString) throws(TetherError) -> Object {
        let (s, word) = try live(handle, function)
        let next = ((word >> 1) &+ 1) << 1
        guard state(s).pointee.compareExchange(expected: word, desired: next, ordering: .acquiringAndReleasing).exchanged else {
            throw stale(function)
        }
        let raw = s.load(fromByteOffset: Layout.object, as: UnsafeMutableRawPointer.self)
        pushFree(Int(UInt(bitPattern: handle) & 0xFFFF_FFFF))
        return Unmanaged<Object>.fromOpaque(raw).takeRetainedValue()
    }

    /// The slot and state word of a live handle.
    @inline(__always)
    private func live(_ handle: OpaquePointer?, _ function: StaticString) throws(TetherError) -> (UnsafeMutableRawPointer, UInt64) {
        guard let handle else { throw TetherError(.invalidHandle, "\(function): the \(kind.noun) is NULL") }
        let raw = UInt64(UInt(bitPattern: handle))
        guard raw >> 56 == kind.rawValue else { throw wrongKind(raw >> 56, function) }
        let index = Int(raw & 0xFFFF_FFFF)
        guard index < allocated.load(ordering: .acquiring), let s = slot(index) else { throw stale(function) }
        let word = state(s).pointee.load(ordering: .acquiring)
        guard word & 1 == 1, (word >> 1) & 0xFF_FFFF == (raw >> 32) & 0xFF_FFFF else { throw stale(function) }
        return (s, word)
    }

    private func popFree() -> Int? {
        var head = freeHead.load(ordering: .acquiring)
        while head & 0xFFFF_FFFF != 0 {
            let index = Int(head & 0xFFFF_FFFF) - 1
            let next = slot(index)!.load(fromByteOffset: Layout.next, as: UInt64.self)
            let desired = ((head >> 32) &+ 1) << 32 | next
            let (done, current) = freeHead.compareExchange(expected: head, desired: desired, ordering: .acquiringAndReleasing)
            if done { return index }
            head = current
        }
        return nil
    }

    private func pushFree(_ index: Int) {
        let s = slot(index)!
        var head = freeHead.load(ordering: .relaxed)
        while true {
            s.storeBytes(of: head & 0xFFFF_FFFF, toByteOffset: Layout.next, as: UInt64.self)
            let desired = ((head >> 32) &+ 1) << 32 | UInt64(index + 1)
            let (done, current) = freeHead.compareExchange(expected: head, desired: desired, ordering: .acquiringAndReleasing)
            if done { return }
            head = current
        }
    }

    /// A never-used slot, allocating its chunk when needed.
    private func grow() -> Int {
        growLock.withLock { _ in
            let index = allocated.load(ordering: .relaxed)
            precondition(index < Self.maxChunks * Self.chunkSize, "Tether: handle table of \(kind.noun)s is full")
            if index & (Self.chunkSize - 1) == 0 {
                let bytes = Self.chunkSize * Layout.stride
                let chunk = UnsafeMutableRawPointer.allocate(byteCount: bytes, alignment: 16)
                chunk.initializeMemory(as: UInt8.self, repeating: 0, count: bytes)
                chunks[index >> Self.chunkBits].store(UInt(bitPattern: chunk), ordering: .releasing)
            }
            allocated.store(index + 1, ordering: .releasing)
            return index
        }
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
        case .resolver: TetherError(.wrongContext, "\(function): the resolver is only valid during the callback that received it")
        default: TetherError(.invalidHandle, "\(function): the \(kind.noun) was already released (stale handle)")
        }
    }
}

/// Every handle the library hands out.
enum Handles {
    static let containers = HandleTable<ContainerBox>(.container)
    static let registrations = HandleTable<Registration>(.registration)
    static let refs = HandleTable<Instance>(.ref)
    static let weaks = HandleTable<WeakRef>(.weak)
    static let resolvers = HandleTable<Resolver>(.resolver)
}

/// A container with the handles of its registrations (retired with it).
final class ContainerBox: @unchecked Sendable {
    let core: Container
    let registrationHandles = Mutex<[ObjectIdentifier: OpaquePointer]>([:])
    init(_ core: Container) { self.core = core }
}
