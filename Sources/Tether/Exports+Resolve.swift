import TetherCore

/// Every resolve entry point: a strong handle in `out` and, when asked, the
/// instance's pointer in `pointer`.
private func resolve(_ c: OpaquePointer?, _ key: () throws(TetherError) -> Key, _ args: UnsafeRawPointer?, _ count: Int,
                     _ out: UnsafeMutablePointer<OpaquePointer?>?, _ function: StaticString,
                     pointer: UnsafeMutablePointer<UnsafeMutableRawPointer?>? = nil) -> Int32 {
    abiCall { () throws(TetherError) in
        let out = try outParam(out, function)
        let container = try Handles.containers.unretained(c, function)
        let key = try key()
        if count == 0, let (handle, instance) = container._withUnsafeGuaranteedRef({ lendSingleton($0, key) }) {
            out.pointee = handle
            pointer?.pointee = instance
            return
        }
        let core = container.takeUnretainedValue()
        let instance = try withArguments(args, count, function) { arguments throws(TetherError) in
            try core.resolve(key, arguments: arguments)
        }
        out.pointee = Handles.refs.insert(instance)
        pointer?.pointee = instance.pointer
    }
}

/// A published singleton as a loan (a handle that owns no reference), so hits
/// touch no reference count; see `SingletonLoan`.
@inline(__always)
private func lendSingleton(_ core: Container, _ key: Key) -> (OpaquePointer, UnsafeMutableRawPointer)? {
    guard let loan = core.singletonLoan(for: key) else { return nil }
    let instance = loan.lend()
    let handle = Handles.refs.lend(instance)
    if loan.confirm() || !Handles.refs.withdraw(handle) { return (handle, instance._withUnsafeGuaranteedRef { $0.pointer }) }
    return nil
}

private func internedKey(_ id: UInt32, _ function: StaticString) throws(TetherError) -> Key {
    guard KeyTable.isValid(id) else { throw invalid(function, "\(id) is not a key id from tether_intern") }
    return Key(id: id)
}

@_cdecl("tether_resolve")
public func tether_resolve(_ c: OpaquePointer?, _ key: UnsafePointer<CChar>?, _ out: UnsafeMutablePointer<OpaquePointer?>?) -> Int32 {
    resolve(c, { () throws(TetherError) in try keyArgument(key, "tether_resolve") }, nil, 0, out, "tether_resolve")
}

@_cdecl("tether_resolve_args")
public func tether_resolve_args(_ c: OpaquePointer?, _ key: UnsafePointer<CChar>?, _ args: UnsafeRawPointer?, _ count: Int,
                                _ out: UnsafeMutablePointer<OpaquePointer?>?) -> Int32 {
    resolve(c, { () throws(TetherError) in try keyArgument(key, "tether_resolve_args") }, args, count, out, "tether_resolve_args")
}

@_cdecl("tether_resolve_key")
public func tether_resolve_key(_ c: OpaquePointer?, _ key: UInt32, _ out: UnsafeMutablePointer<OpaquePointer?>?) -> Int32 {
    resolve(c, { () throws(TetherError) in try internedKey(key, "tether_resolve_key") }, nil, 0, out, "tether_resolve_key")
}

@_cdecl("tether_resolve_key_args")
public func tether_resolve_key_args(_ c: OpaquePointer?, _ key: UInt32, _ args: UnsafeRawPointer?, _ count: Int,
                                    _ out: UnsafeMutablePointer<OpaquePointer?>?) -> Int32 {
    resolve(c, { () throws(TetherError) in try internedKey(key, "tether_resolve_key_args") }, args, count, out, "tether_resolve_key_args")
}

@_cdecl("tether_resolve_key_instance")
public func tether_resolve_key_instance(_ c: OpaquePointer?, _ key: UInt32, _ instance: UnsafeMutablePointer<UnsafeMutableRawPointer?>?,
                                        _ out: UnsafeMutablePointer<OpaquePointer?>?) -> Int32 {
    guard let instance else {
        out?.pointee = nil
        return abiCall { () throws(TetherError) in throw invalid("tether_resolve_key_instance", "the instance out-parameter is NULL") }
    }
    instance.pointee = nil
    return resolve(c, { () throws(TetherError) in try internedKey(key, "tether_resolve_key_instance") }, nil, 0, out,
                   "tether_resolve_key_instance", pointer: instance)
}
