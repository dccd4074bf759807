import TetherCore

/// Makes the words factories receive for weak, lazy, resolver and factory slots: handles
/// from the handle tables and libffi closures.
final class ABIBridge: SlotBridge, @unchecked Sendable {
    static let shared = ABIBridge()

    func weakWord(_ ref: WeakRef) -> UInt64 {
        UInt64(UInt(bitPattern: Handles.weaks.insert(ref)))
    }

    func lazyWord(_ cell: LazyCell) throws(TetherError) -> UInt64 {
        UInt64(UInt(bitPattern: try lendProvider(to: cell)))
    }

    func resolverWord(_ resolver: Resolver) -> UInt64 {
        UInt64(UInt(bitPattern: Handles.resolvers.insert(borrowing: resolver)))
    }

    func factoryWord(_ cell: FactoryCell) -> UInt64 {
        UInt64(UInt(bitPattern: Handles.factories.insert(cell)))
    }

    func closeResolver(_ word: UInt64) {
        Handles.resolvers.removeBorrowed(OpaquePointer(bitPattern: UInt(word)))
    }

    func recall(_ instances: [Instance]) {
        RetiredLoans.shared.retire(instances)
    }

    func unpublishBarrier() {
        heavyBarrier()
    }

    /// A replaced plan is retired by the reclaimer of the calls' sections: the resolve that replaced
    /// it is one such call (or nested in one), as is every resolve that may still be replaying it.
    var retiresReplaced: Bool { true }

    func retire(_ replaced: AnyObject) {
        let handed = Ref(retaining: replaced)
        Reclamation.reclaimer.retire(by: HandleCache.current.pointee.reclaim) { handed.release() }
    }
}

public typealias CCompleteFn = @convention(c) (OpaquePointer?, UnsafeMutableRawPointer?, UnsafeMutableRawPointer?) -> Int32
public typealias CDropFn = @convention(c) (UnsafeMutableRawPointer?, UnsafeMutableRawPointer?) -> Void

/// A C completion callback: gets a resolver handle valid for the call only.
final class CCompletion: Completion, @unchecked Sendable {
    private let function: CCompleteFn
    private let context: UnsafeMutableRawPointer?

    init(_ function: CCompleteFn, context: UnsafeMutableRawPointer?) {
        self.function = function
        self.context = context
    }

    func complete(_ resolver: Resolver, instance: Instance) throws(CallbackFailure) {
        let handle = Handles.resolvers.insert(borrowing: resolver)
        let mark = LastError.mark()
        let status = function(handle, instance.pointer, context ?? instance.spec.context)
        Handles.resolvers.removeBorrowed(handle)
        guard status == 0 else { throw callbackFailure(status, reason: LastError.reason(since: mark)) }
    }
}

/// A C completion callback's failure: its tether_set_error message, else the status it returned.
private func callbackFailure(_ status: Int32, reason: String?) -> CallbackFailure {
    CallbackFailure(reason: reason ?? "it returned \(String(cString: tether_status_name(status)))", code: ErrorCode(rawValue: status))
}

public typealias CCompleteArgsFn = @convention(c) (UnsafeMutableRawPointer?, UnsafePointer<UnsafeMutableRawPointer?>?, Int, UnsafeMutableRawPointer?) -> Int32

/// A C completion callback with declared targets: gets them as arguments, a
/// DEP target as the instance's pointer, a WEAK one as a new weak handle it owns.
final class CDeclaredCompletion: DeclaredCompletion, @unchecked Sendable {
    private let function: CCompleteArgsFn
    private let context: UnsafeMutableRawPointer?

    init(_ function: CCompleteArgsFn, params: [Param], context: UnsafeMutableRawPointer?) {
        self.function = function
        self.context = context
        super.init(params: params)
    }

    override func complete(_ instance: Instance, targets: UnsafeBufferPointer<Borrowed<Instance>>) throws(CallbackFailure) {
        let status = withUnsafeTemporaryAllocation(of: UnsafeMutableRawPointer?.self, capacity: max(targets.count, 1)) { args in
            for i in targets.indices {
                args[i] = targets[i].borrow { target in
                    if case .weak = params[i] { UnsafeMutableRawPointer(Handles.weaks.insert(target.weakRef)) } else { target.pointer }
                }
            }
            let mark = LastError.mark()
            let status = function(instance.pointer, args.baseAddress, targets.count, context ?? instance.spec.context)
            return (status, status == 0 ? nil : LastError.reason(since: mark))
        }
        guard status.0 == 0 else { throw callbackFailure(status.0, reason: status.1) }
    }
}
