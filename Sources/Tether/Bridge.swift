import TetherCore

/// Makes the words factories receive for weak, lazy and resolver slots: handles
/// from the handle tables and libffi closures.
final class ABIBridge: SlotBridge, @unchecked Sendable {
    static let shared = ABIBridge()

    func weakWord(_ ref: WeakRef) -> UInt64 {
        UInt64(UInt(bitPattern: Handles.weaks.insert(ref)))
    }

    func lazyWord(_ cell: LazyCell) throws(TetherError) -> UInt64 {
        let closure = try ProviderClosure(cell)
        cell.attachment = closure
        return UInt64(UInt(bitPattern: closure.code))
    }

    func resolverWord(_ resolver: Resolver) -> UInt64 {
        UInt64(UInt(bitPattern: Handles.resolvers.insert(borrowing: resolver)))
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
        guard status == 0 else {
            let name = String(cString: tether_status_name(status))
            throw CallbackFailure(reason: LastError.reason(since: mark) ?? "it returned \(name)", code: ErrorCode(rawValue: status))
        }
    }
}
