import TetherCore

/// TETHER_RESOLVE_NO_WAIT in tether_resolve_key_collect's flags.
private let noWaitFlag: UInt32 = 1

@_cdecl("tether_resolve_key_collect")
public func tether_resolve_key_collect(_ c: OpaquePointer?, _ key: UInt32, _ flags: UInt32, _ io: UnsafeMutableRawPointer?) -> Int32 {
    let function: StaticString = "tether_resolve_key_collect"
    guard let io else { return abiCall { () throws(TetherError) in throw invalid(function, "io is NULL") } }
    // tether_collect: drops, capacity (in); count, instance, out (out)
    let drops = io.load(as: UnsafeMutableRawPointer?.self)
    let capacity = io.load(fromByteOffset: 8, as: Int.self)
    let count = (io + 16).assumingMemoryBound(to: Int.self)
    let instance = (io + 24).assumingMemoryBound(to: UnsafeMutableRawPointer?.self)
    let out = (io + 32).assumingMemoryBound(to: OpaquePointer?.self)
    count.pointee = 0
    instance.pointee = nil
    out.pointee = nil
    guard flags & ~noWaitFlag == 0 else {
        return abiCall { () throws(TetherError) in throw invalid(function, "flags 0x\(String(flags, radix: 16)) has bits other than TETHER_RESOLVE_NO_WAIT") }
    }
    guard capacity >= 0, capacity <= 1 << 32, drops != nil || capacity == 0 else {
        return abiCall { () throws(TetherError) in throw invalid(function, "io->drops is NULL or io->capacity \(capacity) is out of range (0...2^32)") }
    }
    var collector = DropCollector(entries: drops, capacity: capacity)
    var blocked = false
    let status = inSection { section in
        let (status, wasBlocked) = WaitMode.run(noWait: flags & noWaitFlag != 0) {
            collector.collect { collectingResolve(section, c, key, instance, out, $0) }
        }
        blocked = wasBlocked
        return status
    }
    count.pointee = collector.count
    guard status != ok, blocked, status != ErrorCode.wouldBlock.rawValue else { return status }
    // A resolve nested in a factory failed for want of the lock, and the factory then failed.
    let error = TetherError(.wouldBlock, "a resolve nested in this one would have had to wait for the creation lock (TETHER_RESOLVE_NO_WAIT): \(String(cString: tether_last_error()))")
    return abiCall { () throws(TetherError) in throw error }
}

/// The resolve of tether_resolve_key_collect, with `collector` installed; releases the
/// result itself when that destroys it and its drop is collected.
private func collectingResolve(_ section: CallSection, _ c: OpaquePointer?, _ id: UInt32,
                               _ instance: UnsafeMutablePointer<UnsafeMutableRawPointer?>,
                               _ out: UnsafeMutablePointer<OpaquePointer?>, _ collector: UnsafeMutablePointer<DropCollector>) -> Int32 {
    if KeyTable.isValid(id), let (handle, hit) = singletonHit(c, { _ in Key(id: id) }, section) {
        out.pointee = handle
        instance.pointee = hit._withUnsafeGuaranteedRef { $0.pointer }
        return ok
    }
    return statusOf { () throws(TetherError) in
        let container = try Handles.containers.unretained(c, "tether_resolve_key_collect")
        let key = try internedKey(id, "tether_resolve_key_collect")
        var result = try container.takeUnretainedValue().resolve(key)
        instance.pointee = result.pointer
        let first = collector.pointee.count
        guard result.spec.defersDrop, first < collector.pointee.capacity, isKnownUniquelyReferenced(&result) else {
            out.pointee = Handles.refs.insert(result)
            return
        }
        // Destroyed now (its destructor, the first to come due, is collected at `first`),
        // unless another thread upgraded a weak handle to it since the check.
        _ = consume result
    }
}
