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
    /// A cached instance would hold a shorter-lived one strongly (`Scope.captures`; strict containers).
    case captiveDependency
}

/// A failure with a message in words: what happened and what to do.
public struct TetherError: Error, Sendable, CustomStringConvertible {
    public let code: ErrorCode
    public let message: String
    /// Boxed: errors travel in every resolve's result type, which stays small this way.
    private let box: PartsBox?

    /// What the message is made of, for a binding that says the fix in its own terms.
    public var parts: ErrorParts { box?.parts ?? ErrorParts() }

    public init(_ code: ErrorCode, _ message: String, _ parts: ErrorParts? = nil) {
        self.code = code
        self.message = message
        box = parts.map(PartsBox.init)
    }

    /// The same failure, its message prefixed with the ABI function that reports it.
    public func prefixed(_ function: StaticString) -> TetherError {
        TetherError(code, "\(function): \(message)", parts)
    }

    public var description: String { message }
}

private final class PartsBox: Sendable {
    let parts: ErrorParts
    init(_ parts: ErrorParts) { self.parts = parts }
}

/// The parts of a message: which kind of fix applies and the keys and reason it
/// names (the ABI's tether_error_parts). Every message that has them is composed
/// from them here, in the core; a binding renders them in its own language.
public struct ErrorParts: Sendable {
    /// The ABI's tether_fix values.
    public enum Fix: Int32, Sendable {
        case none = 0
        /// `key` has no registration; `path` needed it.
        case register
        /// A constructor cycle, `path` (its first key repeated last): a completion callback or a lazy dependency breaks it.
        case breakCycle
        /// A resolver's strong edge `key` -> `target` would close the retain cycle `path`: take it weakly.
        case weakEdge
        /// The same for a declared completion target: declare it weak.
        case weakTarget
        /// The factory of `key` failed (in C: returned NULL), with `reason`; `path` was being resolved.
        case factory
        /// Completion callback `callback` of `callbackOf` failed, with `reason`.
        case callback
        /// Resolves of `key` nested too deep on one thread: a factory keeps resolving itself.
        case recursion
        /// `key` is a declared value (`Container.declareValue`) no container on the way provides; `path` needed it.
        case provideValue
        /// A nested resolve (`path`) asked for the shared `key`, made by a resolve further out
        /// on this thread that has not finished: take it from the callback's resolver instead.
        case unfinished
        /// A strong lazy slot of `key` on `target` whose graph instance holds `key` strongly
        /// closes the retain cycle `path` (first key repeated last): make the slot weak-lazy.
        case weakLazy
        /// `key` takes runtime arguments and cannot be a dependency (of `path`'s last key):
        /// declare the slot a factory slot (TETHER_FACTORY), or resolve it at the top level.
        case runtimeArguments
        /// Threads or tasks (a binding's awaiting calls) would wait for each other's creation of shared
        /// instances forever: `path` is the cycle (its first key repeated last), each key needed while
        /// the one before it is made, the failing caller's edge last (`path[-2]` -> `key`). A completion
        /// callback does not break it (an instance is published after its callbacks): `key` must not be
        /// resolved while `path[-2]` is made (a weak-lazy slot called later).
        case waitCycle
        /// A resolve nested in the factory of `key` (or in a lazy provider it called) asked, through
        /// `target` (the key it resolved), for the last key of `path` (the cycle, first key repeated
        /// last) while that was still being constructed: from `target`'s own construction, from a
        /// completion callback of `callbackOf` it ran, or (`target` is the last key) directly.
        /// `nested`: every resolve the cycle runs through that was nested, this one last; each but
        /// the last is to become a slot (or a resolver's get) so that one resolve builds the cycle.
        case nestedResolve
        /// Completion callbacks would build the cycle `path` anew forever (its first key repeated last,
        /// `callbackOf` the key whose callback asks for `path[1]`; every instance on it transient):
        /// make `path[n-2]` graph-scoped, or, when `key` is set, `key`'s slot on `target` weak-lazy.
        case callbackLap
    }

    public var fix: Fix = .none
    public var key: Key?
    public var target: Key?
    public var path: [Key] = []
    public var reason: String?
    /// A completion callback the failure happened in (number from 1, and its instance's key).
    public var callback = 0
    public var callbackOf: Key?
    /// `.nestedResolve`: the resolves the cycle runs through that were nested, each building a graph of
    /// its own, outermost first (at most `nestedCap`); the last is `key` -> `target`.
    public var nested: [NestedResolve] = []

    /// A resolve nested in the factory of `from` (or a lazy provider it called), or in a completion
    /// callback of `from` (`inCallback`), that asked for `to`.
    public struct NestedResolve: Sendable, Equatable {
        public let from: Key
        public let to: Key
        public let inCallback: Bool
    }
    /// Nested resolves a part lists at most (a bit each in tether_error_parts.nested_in_callback).
    public static let nestedCap = 64

    public init(_ fix: Fix = .none, key: Key? = nil, target: Key? = nil, path: [Key] = [], reason: String? = nil) {
        self.fix = fix
        self.key = key
        self.target = target
        self.path = path
        self.reason = reason.map { capped($0, ErrorParts.reasonCap) }
    }

    /// Longest key and reason quoted in full, in UTF-8 bytes; longer ones end in "...".
    public static let keyCap = 80
    public static let reasonCap = 400
    /// A path longer than head + tail keys is quoted as its first `pathHead` and last `pathTail`.
    public static let pathHead = 3
    public static let pathTail = 3

    /// `path` as quoted: its head, how many keys are left out after it, its tail.
    public static func cappedPath<T>(_ path: [T]) -> (shown: [T], omitted: Int) {
        guard path.count > pathHead + pathTail + 1 else { return (path, 0) }
        return (Array(path[..<pathHead] + path[(path.count - pathTail)...]), path.count - pathHead - pathTail)
    }
}

/// `text` cut to at most `limit` UTF-8 bytes plus "...": its first and last halves (at
/// character boundaries), so the innermost reason of a chain of nested failures stays.
public func capped(_ text: String, _ limit: Int) -> String {
    guard text.utf8.count > limit else { return text }
    var head = "", tail = ""
    for ch in text {
        if head.utf8.count + String(ch).utf8.count > limit / 2 { break }
        head.append(ch)
    }
    for ch in text.reversed() {
        if tail.utf8.count + String(ch).utf8.count > limit - limit / 2 { break }
        tail.insert(ch, at: tail.startIndex)
    }
    return head + "..." + tail
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
