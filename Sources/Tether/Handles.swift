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

/// A generation-counted handle table: a handle is `kind:8 | generation:24 | index:32`,
/// never a pointer, so NULL, released, stale, foreign and wrong-kind handles are
/// all detected instead of dereferenced.
final class HandleTable<Object: AnyObject>: @unchecked Sendable {
    let kind: HandleKind
    private struct Slot {
        var generation: UInt32 = 1
        var object: Object?
    }
    private struct State {
        var slots: [Slot] = []
        var free: [UInt32] = []
    }
    private let state = Mutex(State())

    init(_ kind: HandleKind) { self.kind = kind }

    func insert(_ object: Object) -> OpaquePointer {
        let raw: UInt64 = state.withLock { s in
            let index: UInt32
            if let reused = s.free.popLast() {
                index = reused
            } else {
                index = UInt32(s.slots.count)
                s.slots.append(Slot())
            }
            s.slots[Int(index)].object = object
            return kind.rawValue << 56 | UInt64(s.slots[Int(index)].generation) << 32 | UInt64(index)
        }
        return OpaquePointer(bitPattern: UInt(raw))!
    }

    /// The object behind `handle`, or an INVALID_HANDLE error naming `function`.
    func get(_ handle: OpaquePointer?, _ function: StaticString) throws(TetherError) -> Object {
        let (index, generation) = try decode(handle, function)
        let object: Object? = state.withLock { s in
            guard index < s.slots.count, s.slots[index].generation == generation else { return nil }
            return s.slots[index].object
        }
        guard let object else { throw stale(function) }
        return object
    }

    /// Removes `handle`; later uses of it are detected as stale.
    @discardableResult
    func remove(_ handle: OpaquePointer?, _ function: StaticString) throws(TetherError) -> Object {
        let (index, generation) = try decode(handle, function)
        let object: Object? = state.withLock { s in
            guard index < s.slots.count, s.slots[index].generation == generation,
                  let object = s.slots[index].object else { return nil }
            s.slots[index].object = nil
            s.slots[index].generation = s.slots[index].generation & 0xFF_FFFF == 0xFF_FFFF ? 1 : s.slots[index].generation + 1
            s.free.append(UInt32(index))
            return object
        }
        guard let object else { throw stale(function) }
        return object
    }

    /// Points an existing handle at another object (a registration replaced in place).
    func replace(_ handle: OpaquePointer, with object: Object) {
        guard let (index, generation) = try? decode(handle, "replace") else { return }
        state.withLock { s in
            if index < s.slots.count, s.slots[index].generation == generation { s.slots[index].object = object }
        }
    }

    private func decode(_ handle: OpaquePointer?, _ function: StaticString) throws(TetherError) -> (Int, UInt32) {
        guard let handle else { throw TetherError(.invalidHandle, "\(function): the \(kind.noun) is NULL") }
        let raw = UInt64(UInt(bitPattern: handle))
        let tag = raw >> 56
        guard tag == kind.rawValue else {
            if let other = HandleKind(rawValue: tag) {
                throw TetherError(.invalidHandle, "\(function): that is a \(other.noun), not a \(kind.noun)")
            }
            throw TetherError(.invalidHandle, "\(function): that is not a \(kind.noun) from this library")
        }
        return (Int(raw & 0xFFFF_FFFF), UInt32((raw >> 32) & 0xFF_FFFF))
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
