/// Why an operation failed. The raw values are the C ABI's `tether_status` codes.
public enum ErrorCode: Int32, Sendable {
    case invalidArgument = 1
    case invalidHandle
    case notFound
    case cycle
    case retainCycle
    case factoryFailed
    case argumentMismatch
    case expired
    case wrongContext
    case noMemory
    /// A no-wait resolve (`WaitMode`) needed the creation lock another thread held.
    case wouldBlock
    /// A caller's buffer was too small; the call said how much it needs.
    case bufferTooSmall
}

/// A failure with a message in words: what happened and what to do.
public struct TetherError: Error, Sendable, CustomStringConvertible {
    public let code: ErrorCode
    public let message: String

    public init(_ code: ErrorCode, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { message }
}

/// What a factory or completion callback reports when it fails.
public struct CallbackFailure: Error, Sendable {
    /// The callback's own reason, if it gave one.
    public let reason: String?
    /// The status a completion callback returned, if it returned one.
    public let code: ErrorCode?

    /// A declared target the library could not hand over (`DeclaredCompletion`):
    /// the callback did not run, and the resolve fails with this error's status.
    public let target: TetherError?

    public init(reason: String?, code: ErrorCode? = nil) {
        self.reason = reason
        self.code = code
        target = nil
    }

    public init(target error: TetherError) {
        reason = error.message
        code = error.code
        target = error
    }
}
