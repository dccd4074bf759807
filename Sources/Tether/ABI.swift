#if canImport(Glibc)
import Glibc
#endif
import TetherCore

/// The status code of a successful call.
let ok: Int32 = 0

/// Runs an exported call: maps a thrown error to its status and stores the message
/// as the thread's last error. The one place errors cross the ABI. The call is a
/// read-side section (`Reclamation`): nothing it reaches through a handle is freed under it.
@inline(__always)
func abiCall(_ body: () throws(TetherError) -> Void) -> Int32 {
    let section = CallSection()
    defer { section.leave() }
    return statusOf(body)
}

/// `abiCall` for a body already inside a call section.
@inline(__always)
func statusOf(_ body: () throws(TetherError) -> Void) -> Int32 {
    do {
        try body()
        return ok
    } catch {
        LastError.set(error)
        return error.code.rawValue
    }
}

func invalid(_ function: StaticString, _ what: String) -> TetherError {
    TetherError(.invalidArgument, "\(function): \(what)")
}

/// A non-NULL out-parameter, cleared so a failing call leaves NULL in it.
func outParam<T>(_ out: UnsafeMutablePointer<T?>?, _ function: StaticString) throws(TetherError) -> UnsafeMutablePointer<T?> {
    guard let out else { throw invalid(function, "the out-parameter is NULL") }
    out.pointee = nil
    return out
}

/// A key from a C string: non-NULL, non-empty.
func keyArgument(_ key: UnsafePointer<CChar>?, _ function: StaticString) throws(TetherError) -> Key {
    guard let key else { throw invalid(function, "the key is NULL") }
    guard key.pointee != 0 else { throw invalid(function, "the key is empty") }
    return KeyCache.key(key)
}

/// A live container: also refused while tether_container_free is freeing it
/// (its handle goes last, so destructors the free runs get the same answer as later calls).
func containerArgument(_ c: OpaquePointer?, _ function: StaticString) throws(TetherError) -> Container {
    let core = try Handles.containers.get(c, function)
    try checkOpen(core, function)
    return core
}

/// A container being freed (its destructors calling back) answers as a freed one, before
/// any other argument is looked at: every call agrees on the status.
@inline(__always)
func checkOpen(_ core: Container, _ function: StaticString) throws(TetherError) {
    guard !core.isClosed else { throw TetherError(.invalidHandle, "\(function): the container was already freed") }
}

/// Reads `count` tether_value structs (kind at offset 0, 8-byte union at offset 8).
func withArguments<R>(_ values: UnsafeRawPointer?, _ count: Int, _ function: StaticString,
                      _ body: (UnsafeBufferPointer<Argument>) throws(TetherError) -> R) throws(TetherError) -> R {
    guard count == 0 || values != nil else { throw invalid(function, "args is NULL but arg_count is \(count)") }
    guard count >= 0, count <= maxParams else {  // negative: a size_t above Int.max
        throw TetherError(.argumentMismatch, "\(function): arg_count \(UInt(bitPattern: count)) exceeds the \(maxParams) params a registration can declare")
    }
    if count == 0 { return try body(UnsafeBufferPointer(start: nil, count: 0)) }
    // On the stack for the usual few arguments (a heap array per resolve cost more than the check).
    let result = withUnsafeTemporaryAllocation(of: Argument.self, capacity: count) { buffer -> Result<R, TetherError> in
        for i in 0..<count {
            let base = values! + i * tetherValueStride
            let kind = base.load(as: Int32.self)
            guard let type = argumentType(of: kind) else {
                buffer.baseAddress!.deinitialize(count: i)
                return .failure(TetherError(.argumentMismatch, "\(function): runtime argument \(i + 1) has kind \(paramKindName(kind)); runtime arguments are TETHER_PARAM_I64, F64, STR or PTR"))
            }
            (buffer.baseAddress! + i).initialize(to: Argument(type: type, bits: base.load(fromByteOffset: 8, as: UInt64.self)))
        }
        defer { buffer.baseAddress!.deinitialize(count: count) }
        do throws(TetherError) { return .success(try body(UnsafeBufferPointer(buffer))) } catch { return .failure(error) }
    }
    return try result.get()
}

/// The most params a factory or a completion callback declares (and so runtime arguments a resolve takes).
let maxParams = 1024

let tetherValueStride = 16
let tetherParamStride = 16

/// A `tether_param_kind` number as messages name it (`Param.Kind.cName`).
func paramKindName(_ kind: Int32) -> String {
    Param.Kind(rawValue: kind)?.cName ?? "\(kind) (not a tether_param_kind)"
}

func argumentType(of kind: Int32) -> ArgumentType? { Param.Kind(rawValue: kind)?.argumentType }
