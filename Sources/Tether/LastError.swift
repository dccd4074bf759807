#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import TetherCore

/// The calling thread's last error (status + message in words) and the reason a
/// factory or callback gave with tether_set_error.
final class LastError {
    var status: Int32 = 0
    /// malloc'd, NUL-terminated; stays valid until the next failure on this thread.
    var message: UnsafeMutablePointer<CChar>?
    /// Set by tether_set_error; taken by the factory/callback wrapper that called the client.
    var reason: String?
    /// Bumped on every failure, so a callback wrapper can tell whether one happened during the call.
    var serial = 0

    private static let key: pthread_key_t = {
        var k = pthread_key_t()
        pthread_key_create(&k) { raw in
            let state = Unmanaged<LastError>.fromOpaque(raw!).takeRetainedValue()
            free(state.message)
        }
        return k
    }()

    static var current: LastError {
        if let raw = pthread_getspecific(key) {
            return Unmanaged<LastError>.fromOpaque(raw).takeUnretainedValue()
        }
        let state = LastError()
        pthread_setspecific(key, Unmanaged.passRetained(state).toOpaque())
        return state
    }

    static func set(_ status: Int32, _ text: String) {
        let state = current
        free(state.message)
        state.message = strdup(text)
        state.status = status
        state.serial &+= 1
    }

    static func set(_ error: TetherError) { set(error.code.rawValue, error.message) }

    /// Clears the reason before calling into a client callback.
    static func beginCallback() -> Int {
        let state = current
        state.reason = nil
        return state.serial
    }

    /// Why the client callback just called failed: its own reason, else the
    /// message of a failure it ran into (since `serial`), else nil.
    static func reasonSince(_ serial: Int) -> String? {
        let state = current
        if let reason = state.reason {
            state.reason = nil
            return reason
        }
        if state.serial != serial, let message = state.message { return String(cString: message) }
        return nil
    }
}
