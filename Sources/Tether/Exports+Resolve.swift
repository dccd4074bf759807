import TetherCore

/// Every resolve entry point, the ordinary way: a strong handle in `out` and,
/// when asked, the instance's pointer in `pointer`. Out of line, so the hit
/// paths calling it save no registers for it.
@inline(never)
private func resolve(_ c: OpaquePointer?, _ key: () throws(TetherError) -> Key, _ args: UnsafeRawPointer?, _ count: Int,
                     _ out: UnsafeMutablePointer<OpaquePointer?>?, _ function: StaticString,
                     pointer: UnsafeMutablePointer<UnsafeMutableRawPointer?>? = nil) -> Int32 {
    abiCall { () throws(TetherError) in
        let out = try outParam(out, function)
        let container = try Handles.containers.unretained(c, function)
        let key = try key()
        if count == 0, let (handle, instance) = singletonHit(c, { _ in key }) {
            out.pointee = handle
            pointer?.pointee = instance._withUnsafeGuaranteedRef { $0.pointer }
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

/// The hit path: a published singleton of container `c` as a loan (a handle
/// that owns no reference), so hits touch no reference count and write no shared
/// cache line: the loan is recorded in the calling thread's handle slot, the
/// light barrier orders that before the recheck (`SingletonLoan`), and whoever
/// unpublishes the singleton later sees the loan (`RetiredLoans`). Straight-line,
/// no lazy statics, no error values: nil means take the ordinary path (which
/// also reports any error).
/// `key` is asked for once the container handle checked out (as on the
/// ordinary path, a call with a bad container interns nothing).
@inline(__always)
func singletonHit(_ c: OpaquePointer?, _ key: (UnsafeMutablePointer<HandleCache.Local>) -> Key) -> (OpaquePointer, Unmanaged<Instance>)? {
    guard let containers = Handles.containerPages, let refs = Handles.refPages,
          let core = containers.peek(c) else { return nil }
    let locals = HandleCache.current
    let key = key(locals)
    guard let loan = Unmanaged<Container>.fromOpaque(core)._withUnsafeGuaranteedRef({ $0.singletonLoan(for: key) }) else { return nil }
    let instance = loan.lend()
    guard let handle = refs.insert(instance.toOpaque(), lent: true, locals: locals) else { return nil }  // no slot at hand: the ordinary path refills
    lightBarrier()
    if loan.confirm() { return (handle, instance) }
    _ = refs.releaseRef(handle)  // unpublished meanwhile: withdrawn
    return nil
}

func internedKey(_ id: UInt32, _ function: StaticString) throws(TetherError) -> Key {
    guard KeyTable.isValid(id) else { throw invalid(function, "\(id) is not a key id from tether_intern") }
    return Key(id: id)
}

@_cdecl("tether_resolve")
public func tether_resolve(_ c: OpaquePointer?, _ key: UnsafePointer<CChar>?, _ out: UnsafeMutablePointer<OpaquePointer?>?) -> Int32 {
    if let out, let key, key.pointee != 0, let (handle, _) = singletonHit(c, { KeyCache.key(key, locals: $0) }) {
        out.pointee = handle
        return ok
    }
    return resolve(c, { () throws(TetherError) in try keyArgument(key, "tether_resolve") }, nil, 0, out, "tether_resolve")
}

@_cdecl("tether_resolve_args")
public func tether_resolve_args(_ c: OpaquePointer?, _ key: UnsafePointer<CChar>?, _ args: UnsafeRawPointer?, _ count: Int,
                                _ out: UnsafeMutablePointer<OpaquePointer?>?) -> Int32 {
    resolve(c, { () throws(TetherError) in try keyArgument(key, "tether_resolve_args") }, args, count, out, "tether_resolve_args")
}

@_cdecl("tether_resolve_key")
public func tether_resolve_key(_ c: OpaquePointer?, _ key: UInt32, _ out: UnsafeMutablePointer<OpaquePointer?>?) -> Int32 {
    if let out, KeyTable.isValid(key), let (handle, _) = singletonHit(c, { _ in Key(id: key) }) {
        out.pointee = handle
        return ok
    }
    return resolve(c, { () throws(TetherError) in try internedKey(key, "tether_resolve_key") }, nil, 0, out, "tether_resolve_key")
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
    if let out, KeyTable.isValid(key), let (handle, hit) = singletonHit(c, { _ in Key(id: key) }) {
        out.pointee = handle
        instance.pointee = hit._withUnsafeGuaranteedRef { $0.pointer }
        return ok
    }
    instance.pointee = nil
    return resolve(c, { () throws(TetherError) in try internedKey(key, "tether_resolve_key_instance") }, nil, 0, out,
                   "tether_resolve_key_instance", pointer: instance)
}
