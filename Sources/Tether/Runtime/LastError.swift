#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import Synchronization
import TetherCore

/// The calling thread's last error (status + message in words) and the reason a
/// factory or callback gave with tether_set_error.
///
/// Every failure and every tether_set_error bumps a process-wide event counter
/// and remembers its value on the thread. A call into a client takes the
/// counter first (one relaxed load, no thread-local lookup) and, only if the
/// client failed, asks for what happened on this thread after that mark.
final class LastError {
    var status: Int32 = 0
    /// malloc'd, NUL-terminated; stays valid until the next failure on this thread.
    var message: UnsafeMutablePointer<CChar>?
    /// What `message` is made of (tether_last_error_parts).
    var parts = ErrorParts()
    /// The C strings tether_last_error_parts handed out last.
    let partStrings = PartStrings()
    /// Set by tether_set_error.
    var reason: String?
    /// The problems of this thread's last tether_validate, in its report's order (tether_validate_problem_parts).
    var problems: [TetherError] = []
    /// Event counter values of this thread's last failure and last reason.
    var failureMark: UInt = 0
    var reasonMark: UInt = 0

    private static let events = Atomic<UInt>(0)

    private static let key: pthread_key_t = {
        var k = pthread_key_t()
        pthread_key_create(&k) { raw in
            let state = Handoff<LastError>.take(raw!)
            free(state.message)
            state.partStrings.clear()
        }
        return k
    }()

    static var current: LastError {
        if let raw = pthread_getspecific(key) {
            return Borrowed<LastError>(opaque: raw).object
        }
        let state = LastError()
        pthread_setspecific(key, Handoff.give(state))
        return state
    }

    static func set(_ status: Int32, _ text: String, _ parts: ErrorParts = ErrorParts()) {
        let state = current
        free(state.message)
        state.message = strdup(text)
        state.status = status
        state.parts = parts
        state.failureMark = events.add(1, ordering: .relaxed).newValue
    }

    static func set(_ error: TetherError) { set(error.code.rawValue, error.message, error.parts) }

    /// tether_set_error: the reason the callback about to fail gives.
    static func setReason(_ reason: String?) {
        let state = current
        state.reason = reason
        state.reasonMark = events.add(1, ordering: .relaxed).newValue
    }

    /// Taken before calling into a client.
    @inline(__always)
    static func mark() -> UInt { events.load(ordering: .relaxed) }

    /// Why the client called after `mark` failed: its own reason, else the message
    /// of a failure it ran into, else nil.
    static func reason(since mark: UInt) -> String? {
        guard events.load(ordering: .relaxed) != mark else { return nil }
        let state = current
        if state.reasonMark > mark, let reason = state.reason {
            state.reason = nil
            return reason
        }
        if state.failureMark > mark, let message = state.message { return String(cString: message) }
        return nil
    }
}

/// The C strings of a thread's last tether_last_error_parts, kept until its next
/// call (malloc'd: the error path, never hot).
final class PartStrings {
    private var strings: [UnsafeMutablePointer<CChar>] = []
    /// The path's keys (at most `ErrorParts.cappedPath`'s count), allocated once per thread.
    let path = UnsafeMutablePointer<UnsafePointer<CChar>?>.allocate(capacity: ErrorParts.pathHead + ErrorParts.pathTail + 1)
    /// The keys of the nested resolves' pairs (`ErrorParts.nested`, at most `nestedCap`), likewise.
    let nested = UnsafeMutablePointer<UnsafePointer<CChar>?>.allocate(capacity: 2 * ErrorParts.nestedCap)

    deinit {
        path.deallocate()
        nested.deallocate()
    }

    func keep(_ text: String?) -> UnsafePointer<CChar>? {
        guard let text, let copy = strdup(text) else { return nil }
        strings.append(copy)
        return UnsafePointer(copy)
    }

    func clear() {
        for s in strings { free(s) }
        strings.removeAll(keepingCapacity: true)
    }
}
