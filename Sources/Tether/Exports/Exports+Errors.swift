#if canImport(Glibc)
import Glibc
#endif
import TetherCore

private let versionString: StaticString = "0.1.0"
private let emptyString: StaticString = ""
private let statusNames: [StaticString] = [
    "TETHER_OK", "TETHER_E_INVALID_ARGUMENT", "TETHER_E_INVALID_HANDLE", "TETHER_E_NOT_FOUND", "TETHER_E_CYCLE",
    "TETHER_E_RETAIN_CYCLE", "TETHER_E_FACTORY_FAILED", "TETHER_E_ARGUMENT_MISMATCH", "TETHER_E_EXPIRED",
    "TETHER_E_WRONG_CONTEXT", "TETHER_E_NO_MEMORY", "TETHER_E_WOULD_BLOCK", "TETHER_E_BUFFER_TOO_SMALL",
    "TETHER_E_CAPTIVE_DEPENDENCY",
]
private let unknownStatus: StaticString = "TETHER_E_UNKNOWN"

private func cString(_ s: StaticString) -> UnsafePointer<CChar> {
    UnsafeRawPointer(s.utf8Start).assumingMemoryBound(to: CChar.self)
}

@_cdecl("tether_version")
public func tether_version() -> UnsafePointer<CChar> { cString(versionString) }

@_cdecl("tether_status_name")
public func tether_status_name(_ status: Int32) -> UnsafePointer<CChar> {
    status >= 0 && Int(status) < statusNames.count ? cString(statusNames[Int(status)]) : cString(unknownStatus)
}

@_cdecl("tether_last_error")
public func tether_last_error() -> UnsafePointer<CChar> {
    LastError.current.message.map { UnsafePointer($0) } ?? cString(emptyString)
}

@_cdecl("tether_last_status")
public func tether_last_status() -> Int32 { LastError.current.status }

@_cdecl("tether_set_error")
public func tether_set_error(_ message: UnsafePointer<CChar>?) {
    let text = message.map { String(cString: $0) } ?? ""
    LastError.set(ErrorCode.factoryFailed.rawValue, text)
    LastError.setReason(message == nil ? nil : text)
}

@_cdecl("tether_string_free")
public func tether_string_free(_ s: UnsafeMutablePointer<CChar>?) { free(s) }

/// tether_error_parts, as tether_binding.h lays it out.
struct CErrorParts {
    var status: Int32
    var fix: Int32
    var key: UnsafePointer<CChar>?
    var target: UnsafePointer<CChar>?
    var path: UnsafePointer<UnsafePointer<CChar>?>?
    var pathCount: Int
    var pathOmitted: Int
    var reason: UnsafePointer<CChar>?
    var callbackOf: UnsafePointer<CChar>?
    var callback: Int
    var nested: UnsafePointer<UnsafePointer<CChar>?>?
    var nestedCount: Int
    var nestedInCallback: UInt64
}

@_cdecl("tether_last_error_parts")
public func tether_last_error_parts(_ out: UnsafeMutableRawPointer?) -> Int32 {
    guard let out else {
        LastError.set(invalid("tether_last_error_parts", "out is NULL"))
        return ErrorCode.invalidArgument.rawValue
    }
    let state = LastError.current
    fill(out, status: state.status, parts: state.parts, strings: state.partStrings)
    return 0
}

/// Writes `parts` as tether_error_parts into `out`, its strings kept in `strings` until their next use.
private func fill(_ out: UnsafeMutableRawPointer, status: Int32, parts: ErrorParts, strings: PartStrings) {
    strings.clear()
    let (shown, omitted) = ErrorParts.cappedPath(parts.path)
    for (i, key) in shown.enumerated() { strings.path[i] = strings.keep(capped(key.name, ErrorParts.keyCap)) }
    let name = { (key: Key?) in strings.keep(key.map { capped($0.name, ErrorParts.keyCap) }) }
    var inCallback: UInt64 = 0
    for (i, resolve) in parts.nested.enumerated() {
        strings.nested[2 * i] = name(resolve.from)
        strings.nested[2 * i + 1] = name(resolve.to)
        if resolve.inCallback { inCallback |= 1 << UInt64(i) }
    }
    out.assumingMemoryBound(to: CErrorParts.self).pointee = CErrorParts(
        status: status, fix: parts.fix.rawValue, key: name(parts.key), target: name(parts.target),
        path: shown.isEmpty ? nil : UnsafePointer(strings.path), pathCount: shown.count, pathOmitted: omitted,
        reason: strings.keep(parts.reason), callbackOf: name(parts.callbackOf), callback: parts.callback,
        nested: parts.nested.isEmpty ? nil : UnsafePointer(strings.nested), nestedCount: parts.nested.count,
        nestedInCallback: inCallback)
}

@_cdecl("tether_validate_problem_parts")
public func tether_validate_problem_parts(_ index: Int, _ out: UnsafeMutableRawPointer?, _ count: UnsafeMutablePointer<Int>?) -> Int32 {
    let function: StaticString = "tether_validate_problem_parts"
    let state = LastError.current
    let problems = state.problems
    count?.pointee = problems.count
    guard let out else {
        LastError.set(invalid(function, "out is NULL"))
        return ErrorCode.invalidArgument.rawValue
    }
    guard index >= 0, index < problems.count else {
        LastError.set(invalid(function, "index \(index) is not below the \(problems.count) problem(s) of this thread's last tether_validate"))
        return ErrorCode.invalidArgument.rawValue
    }
    let problem = problems[index]
    fill(out, status: problem.code.rawValue, parts: problem.parts, strings: state.partStrings)
    return 0
}
