import Synchronization

/// Builds an instance. The core hands it one 64-bit word per declared param, in
/// order (pointer bits, integer bits, or a double's bit pattern); the word for a
/// weak, lazy or resolver slot comes from the container's `SlotBridge`.
///
/// A class, not a protocol: a registration publishes its factory in one atomic word
/// (`Registration.factoryReference`), which a protocol value (two words) cannot be, so a
/// registration's factory can be replaced (`Registration.replaceFactory`) and an immutable
/// factory shared by many registrations (the ABI's per-thread FFI factories).
open class Factory: @unchecked Sendable {
    public init() {}

    open func make(_ words: UnsafeMutablePointer<UInt64>, count: Int) throws(CallbackFailure) -> UnsafeMutableRawPointer {
        fatalError("Tether: \(Self.self) must override make(_:count:)")
    }
}

/// Runs after an instance exists and every factory of the resolve has returned.
public protocol Completion: AnyObject, Sendable {
    func complete(_ resolver: Resolver, instance: Instance) throws(CallbackFailure)
}

/// A completion callback in an object of its own, so a resolve calls it
/// without retaining it: a callback taken from an array (or any protocol value
/// in memory) is retained for the call, a write to the shared callback's
/// reference count from every thread on every call, while a `let` of an
/// object borrowed (`Borrowed.borrow`) is not (`InstanceSpec.complete`).
final class CompletionBox: Sendable {
    let completion: any Completion
    init(_ completion: any Completion) { self.completion = completion }
}

/// A binding's answer for the last published weak-scoped instance, whose box died while the
/// binding's object of it may live on (a Python object outlives its box): `pointer` again, owned
/// as a factory's result, if the binding still holds that object; else nil (`Registration.revivedObject`).
public protocol Reviver: AnyObject, Sendable {
    func revive(_ pointer: UnsafeMutableRawPointer) -> UnsafeMutableRawPointer?
}

/// The destructor of every instance a registration makes: `(instance, context)`.
public typealias Destructor = @Sendable (UnsafeMutableRawPointer, UnsafeMutableRawPointer?) -> Void

/// A destructor that is a C function: a spec calls it directly (`InstanceSpec.destroy`), with no
/// closure around it, so setting one allocates nothing and each call is one indirect call.
public typealias CDestructor = @convention(c) (UnsafeMutableRawPointer?, UnsafeMutableRawPointer?) -> Void

/// Turns the core's objects into the words a client's factory receives. The ABI
/// implements it with handles and libffi closures; tests with plain Swift.
public protocol SlotBridge: AnyObject, Sendable {
    /// A weak handle the factory will own.
    func weakWord(_ ref: WeakRef) -> UInt64
    /// A provider for the lazy cell; the bridge may lend it what the word needs in `cell.attachment`.
    func lazyWord(_ cell: LazyCell) throws(TetherError) -> UInt64
    /// A resolver handle, valid until `closeResolver`.
    func resolverWord(_ resolver: Resolver) -> UInt64
    /// A factory handle (FACTORY slot) the factory will own.
    func factoryWord(_ cell: FactoryCell) -> UInt64
    /// Invalidates the word `resolverWord` returned once the factory has returned.
    func closeResolver(_ word: UInt64)
    /// Takes over what the loans of these instances (`SingletonLoan`) need: the
    /// core releases its own references after this returns.
    func recall(_ instances: [Instance])
    /// Called after a cache unpublished singletons and before it reads whether
    /// they were lent: the unpublisher's side of the handshake with lenders, who
    /// issue the matching barrier between recording a loan and `confirm()`.
    /// Default: a sequentially consistent fence (lenders then fence too).
    func unpublishBarrier()
    /// Whether `retire` lets go of what the core replaces while lock-free readers may
    /// still use it (a registration's replaced plans). Default false: the core keeps
    /// each as long as its registration, so it keeps at most `Registration.maxPlans`.
    var retiresReplaced: Bool { get }
    /// Lets go of `replaced`, already unreachable for new resolves, once no resolve
    /// under way can still be using it (the ABI: its reclaimer, whose read-side sections
    /// are the exported calls, every resolve inside one). Called only if `retiresReplaced`.
    func retire(_ replaced: AnyObject)
}

extension SlotBridge {
    public func unpublishBarrier() { atomicMemoryFence(ordering: .sequentiallyConsistent) }
    public var retiresReplaced: Bool { false }
    public func retire(_ replaced: AnyObject) { preconditionFailure("Tether: retire on a bridge that keeps what is replaced") }
}
