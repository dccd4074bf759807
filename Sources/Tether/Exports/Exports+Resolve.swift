import TetherCore

/// Every resolve entry point runs in one call section (`CallSection`): the hit
/// path and, on a miss, the ordinary path. Inlined once per barrier mode, so
/// the membarrier copy checks the mode once for all its barriers.
@inline(__always)
func inSection(_ body: (CallSection) -> Int32) -> Int32 {
    LightBarrier().compilerOnly ? inSection(LightBarrier(compilerOnly: true), body)
                                : inSection(LightBarrier(compilerOnly: false), body)
}

@inline(__always)
private func inSection(_ barrier: LightBarrier, _ body: (CallSection) -> Int32) -> Int32 {
    let section = CallSection(barrier: barrier)
    defer { section.leave() }
    return body(section)
}

/// The ordinary way, inside the caller's section: a strong handle in `out` and,
/// when asked, the instance's pointer in `pointer`; first the hit path unless
/// the caller tried it (`hitTried`: a miss there is a miss here too, and if it
/// had no handle slot at hand, a strong handle serves as well). Out of line, so
/// the hit paths calling it save no registers for it.
@inline(never)
private func resolve(_ section: CallSection, _ c: OpaquePointer?, _ key: () throws(TetherError) -> Key, _ args: UnsafeRawPointer?,
                     _ count: Int, _ out: UnsafeMutablePointer<OpaquePointer?>?, _ function: StaticString,
                     pointer: UnsafeMutablePointer<UnsafeMutableRawPointer?>? = nil, hitTried: Bool = false) -> Int32 {
    statusOf { () throws(TetherError) in
        let out = try outParam(out, function)
        // The pages when they exist: no once-check of the lazy table on the way.
        let container = try Handles.unretainedContainer(c, function)
        try checkOpen(container.object, function)
        let key = try key()
        if !hitTried, count == 0, let (handle, instance) = singletonHit(c, { _ in key }, section) {
            out.pointee = handle
            pointer?.pointee = instance.borrow { $0.pointer }
            return
        }
        let instance = try withArguments(args, count, function) { arguments throws(TetherError) in
            try container.borrow { core throws(TetherError) in try core.resolveRetained(key, arguments: arguments) }
        }
        pointer?.pointee = instance.borrow { $0.pointer }
        out.pointee = Handles.refPages?.insert(instance.opaque, lent: false, locals: section.locals)
            ?? Handles.refs.insert(taking: instance)
    }
}

/// The hit path: a published singleton of container `c` as a loan (a handle
/// that owns no reference), so hits touch no reference count and write no shared
/// cache line: the loan is recorded in the calling thread's handle slot, the
/// light barrier orders that before the recheck (`SingletonLoan`), and whoever
/// unpublishes the singleton later sees the loan (`RetiredLoans`). The caller's
/// section keeps the container from being let go of meanwhile (a concurrent free).
/// Straight-line, no lazy statics, no error values: nil means take the ordinary
/// path (which also reports any error).
/// `key` is asked for once the container handle checked out (as on the
/// ordinary path, a call with a bad container interns nothing).
@inline(__always)
func singletonHit(_ c: OpaquePointer?, _ key: (UnsafeMutablePointer<HandleCache.Local>) -> Key,
                  _ section: CallSection) -> (OpaquePointer, Borrowed<Instance>)? {
    var found: (Borrowed<Container>, Borrowed<Registration>)?
    return singletonHit(c, key, section, found: &found)
}

/// `singletonHit`, leaving in `found` the registration it looked up (for the
/// ordinary path, so a miss looks it up once).
@inline(__always)
func singletonHit(_ c: OpaquePointer?, _ key: (UnsafeMutablePointer<HandleCache.Local>) -> Key, _ section: CallSection,
                  found: inout (Borrowed<Container>, Borrowed<Registration>)?) -> (OpaquePointer, Borrowed<Instance>)? {
    guard let containers = Handles.containerPages, let refs = Handles.refPages, let core = containers.peek(c) else { return nil }
    let container = Borrowed<Container>(opaque: core)
    let key = key(section.locals)
    // A traced container's resolves all take the ordinary path, which reports every step.
    guard let registration = container.borrow({ $0.isTraced ? nil : $0.registrationToResolve(key) }) else { return nil }
    found = (container, registration)
    guard let loan = registration.borrow({ $0.lendableLoan() }) else { return nil }
    return lend(loan, refs, section)
}

/// The hit path's second half: `loan` recorded in a handle and confirmed.
@inline(__always)
private func lend(_ loan: SingletonLoan, _ refs: SlotPages, _ section: CallSection) -> (OpaquePointer, Borrowed<Instance>)? {
    let locals = section.locals
    let instance = loan.lend()
    guard let handle = refs.insert(instance.opaque, lent: true, locals: locals) else { return nil }  // no slot at hand: the ordinary path refills
    section.barrier()
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
    // `inSection` spelled out, as in tether_resolve_key.
    LightBarrier().compilerOnly ? resolveName(LightBarrier(compilerOnly: true), c, key, out)
                                : resolveName(LightBarrier(compilerOnly: false), c, key, out)
}

@inline(__always)
private func resolveName(_ barrier: LightBarrier, _ c: OpaquePointer?, _ key: UnsafePointer<CChar>?,
                         _ out: UnsafeMutablePointer<OpaquePointer?>?) -> Int32 {
    let section = CallSection(barrier: barrier)
    defer { section.leave() }
    var found: (Borrowed<Container>, Borrowed<Registration>)?
    if let out, let key, key.pointee != 0,
       let (handle, _) = singletonHit(c, { KeyCache.key(key, locals: $0) }, section, found: &found) {
        out.pointee = handle
        return ok
    }
    if let out, let (container, registration) = found { return resolve(section, container, registration, out) }
    return resolve(section, c, { () throws(TetherError) in try keyArgument(key, "tether_resolve") }, nil, 0, out, "tether_resolve", hitTried: true)
}

@_cdecl("tether_resolve_args")
public func tether_resolve_args(_ c: OpaquePointer?, _ key: UnsafePointer<CChar>?, _ args: UnsafeRawPointer?, _ count: Int,
                                _ out: UnsafeMutablePointer<OpaquePointer?>?) -> Int32 {
    inSection { section in
        resolve(section, c, { () throws(TetherError) in try keyArgument(key, "tether_resolve_args") }, args, count, out, "tether_resolve_args")
    }
}

@_cdecl("tether_resolve_key")
public func tether_resolve_key(_ c: OpaquePointer?, _ key: UInt32, _ out: UnsafeMutablePointer<OpaquePointer?>?) -> Int32 {
    // `inSection` spelled out: a function marked inline-always is inlined, a closure only maybe.
    LightBarrier().compilerOnly ? resolveKey(LightBarrier(compilerOnly: true), c, key, out)
                                : resolveKey(LightBarrier(compilerOnly: false), c, key, out)
}

@inline(__always)
private func resolveKey(_ barrier: LightBarrier, _ c: OpaquePointer?, _ key: UInt32, _ out: UnsafeMutablePointer<OpaquePointer?>?) -> Int32 {
    let section = CallSection(barrier: barrier)
    defer { section.leave() }
    var found: (Borrowed<Container>, Borrowed<Registration>)?
    if let out, KeyTable.isValid(key), let (handle, _) = singletonHit(c, { _ in Key(id: key) }, section, found: &found) {
        out.pointee = handle
        return ok
    }
    if let out, let (container, registration) = found { return resolve(section, container, registration, out) }
    return resolve(section, c, { () throws(TetherError) in try internedKey(key, "tether_resolve_key") }, nil, 0, out, "tether_resolve_key", hitTried: true)
}

/// The ordinary path of a resolve without arguments whose registration the
/// caller found (and tried the hit path of).
@inline(never)
private func resolve(_ section: CallSection, _ container: Borrowed<Container>, _ registration: Borrowed<Registration>,
                     _ out: UnsafeMutablePointer<OpaquePointer?>) -> Int32 {
    statusOf { () throws(TetherError) in
        out.pointee = nil  // as `outParam` does: NULL unless it succeeds
        try resolve(section, container, registration, out, arguments: .init(start: nil, count: 0))
    }
}

/// `resolve` with runtime arguments (`args`, `count` as the caller gave them).
@inline(never)
private func resolve(_ section: CallSection, _ container: Borrowed<Container>, _ registration: Borrowed<Registration>,
                     _ out: UnsafeMutablePointer<OpaquePointer?>, _ args: UnsafeRawPointer?, _ count: Int, _ function: StaticString) -> Int32 {
    statusOf { () throws(TetherError) in
        out.pointee = nil
        // Before the arguments, as on the general path (the test without a retain: `checkOpen` says it).
        if container.borrow({ $0.isClosed }) { try checkOpen(container.object, function) }
        try withArguments(args, count, function) { arguments throws(TetherError) in
            try resolve(section, container, registration, out, arguments: arguments)
        }
    }
}

/// The core's resolve of a found registration, its root in a new strong handle in `out`.
@inline(__always)
private func resolve(_ section: CallSection, _ container: Borrowed<Container>, _ registration: Borrowed<Registration>,
                     _ out: UnsafeMutablePointer<OpaquePointer?>, arguments: UnsafeBufferPointer<Argument>) throws(TetherError) {
    let instance = try container.borrow { core throws(TetherError) in try core.resolveRetained(registration, arguments: arguments) }
    out.pointee = Handles.refPages?.insert(instance.opaque, lent: false, locals: section.locals)
        ?? Handles.refs.insert(taking: instance)
}

@_cdecl("tether_resolve_key_args")
public func tether_resolve_key_args(_ c: OpaquePointer?, _ key: UInt32, _ args: UnsafeRawPointer?, _ count: Int,
                                    _ out: UnsafeMutablePointer<OpaquePointer?>?) -> Int32 {
    inSection { section in
        // The registration found as the hit path finds it; a bad container or key takes the general path, which reports it.
        if let out, KeyTable.isValid(key), let object = Handles.containerPages?.peek(c),
           let registration = Borrowed<Container>(opaque: object).borrow({ $0.registrationToResolve(Key(id: key)) }) {
            return resolve(section, .init(opaque: object), registration, out, args, count, "tether_resolve_key_args")
        }
        return resolve(section, c, { () throws(TetherError) in try internedKey(key, "tether_resolve_key_args") }, args, count, out,
                       "tether_resolve_key_args")
    }
}

@_cdecl("tether_resolve_key_instance")
public func tether_resolve_key_instance(_ c: OpaquePointer?, _ key: UInt32, _ instance: UnsafeMutablePointer<UnsafeMutableRawPointer?>?,
                                        _ out: UnsafeMutablePointer<OpaquePointer?>?) -> Int32 {
    guard let instance else {
        out?.pointee = nil
        return abiCall { () throws(TetherError) in throw invalid("tether_resolve_key_instance", "the instance out-parameter is NULL") }
    }
    return inSection { section in
        if let out, KeyTable.isValid(key), let (handle, hit) = singletonHit(c, { _ in Key(id: key) }, section) {
            out.pointee = handle
            instance.pointee = hit.borrow { $0.pointer }
            return ok
        }
        instance.pointee = nil
        return resolve(section, c, { () throws(TetherError) in try internedKey(key, "tether_resolve_key_instance") }, nil, 0, out,
                       "tether_resolve_key_instance", pointer: instance, hitTried: true)
    }
}

@_cdecl("tether_get")
public func tether_get(_ c: OpaquePointer?, _ key: UnsafePointer<CChar>?, _ keep: UnsafeMutablePointer<OpaquePointer?>?) -> UnsafeMutableRawPointer? {
    var instance: UnsafeMutableRawPointer?
    let status = inSection { section in
        resolve(section, c, { () throws(TetherError) in try keyArgument(key, "tether_get") }, nil, 0, keep, "tether_get", pointer: &instance)
    }
    return status == ok ? instance : nil
}
