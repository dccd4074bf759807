import Synchronization
import TetherCore

/// TETHER_RESOLVE_NO_WAIT, TETHER_RESOLVE_HELD and TETHER_RESOLVE_MORE_DROPS in tether_resolve_key_collect's flags.
private let noWaitFlag: UInt32 = 1
private let heldFlag: UInt32 = 2
private let moreDropsFlag: UInt32 = 4

@_cdecl("tether_resolve_key_collect")
public func tether_resolve_key_collect(_ c: OpaquePointer?, _ key: UInt32, _ flags: UInt32, _ io: UnsafeMutableRawPointer?) -> Int32 {
    let function: StaticString = "tether_resolve_key_collect"
    guard let io else { return abiCall { () throws(TetherError) in throw invalid(function, "io is NULL") } }
    // tether_collect: drops, capacity (in); count, instance, out, token, more (out; more only with the flag)
    let drops = io.load(as: UnsafeMutableRawPointer?.self)
    let capacity = io.load(fromByteOffset: 8, as: Int.self)
    let count = (io + 16).assumingMemoryBound(to: Int.self)
    let instance = (io + 24).assumingMemoryBound(to: UnsafeMutableRawPointer?.self)
    let out = (io + 32).assumingMemoryBound(to: OpaquePointer?.self)
    let token = (io + 40).assumingMemoryBound(to: UInt.self)
    let held = flags & heldFlag != 0 ? instance.pointee : nil
    count.pointee = 0
    instance.pointee = nil
    out.pointee = nil
    token.pointee = 0
    let keepsMore = flags & moreDropsFlag != 0
    if keepsMore { (io + 48).storeBytes(of: nil, as: UnsafeMutableRawPointer?.self) }
    guard flags & ~(noWaitFlag | heldFlag | moreDropsFlag) == 0 else {
        return abiCall { () throws(TetherError) in
            throw invalid(function, "flags 0x\(String(flags, radix: 16)) has bits other than TETHER_RESOLVE_NO_WAIT, TETHER_RESOLVE_HELD and TETHER_RESOLVE_MORE_DROPS")
        }
    }
    guard held != nil || flags & heldFlag == 0 else {
        return abiCall { () throws(TetherError) in throw invalid(function, "TETHER_RESOLVE_HELD with io->instance NULL: set it to the instance you keep alive") }
    }
    guard capacity >= 0, capacity <= 1 << 32, drops != nil || capacity == 0 else {
        return abiCall { () throws(TetherError) in throw invalid(function, "io->drops is NULL or io->capacity \(capacity) is out of range (0...2^32)") }
    }
    var collector = DropCollector(entries: drops, capacity: capacity, keepsMore: keepsMore)
    var blocked = false
    let status = inSection { section in
        let (status, wasBlocked) = WaitMode.run(noWait: flags & noWaitFlag != 0) {
            collector.collect { collectingResolve(section, c, key, held, instance, out, token, $0) }
        }
        blocked = wasBlocked
        return status
    }
    count.pointee = collector.count
    if let more = collector.handOver() { (io + 48).storeBytes(of: more, as: UnsafeMutableRawPointer.self) }
    guard status != ok, blocked, status != ErrorCode.wouldBlock.rawValue else { return status }
    // A resolve nested in a factory failed rather than wait for another thread's creation cell, and the factory then failed.
    let error = TetherError(.wouldBlock, "a resolve nested in this one would have had to wait for another thread creating a shared instance (TETHER_RESOLVE_NO_WAIT): \(String(cString: tether_last_error()))")
    return abiCall { () throws(TetherError) in throw error }
}

/// The resolve of tether_resolve_key_collect, with `collector` installed: a published
/// singleton the caller holds (`held`) is answered without a handle, with the hit
/// token it holds under, and any other result is released by the call when that
/// destroys it and its drop is collected.
private func collectingResolve(_ section: CallSection, _ c: OpaquePointer?, _ id: UInt32, _ held: UnsafeMutableRawPointer?,
                               _ instance: UnsafeMutablePointer<UnsafeMutableRawPointer?>,
                               _ out: UnsafeMutablePointer<OpaquePointer?>, _ token: UnsafeMutablePointer<UInt>,
                               _ collector: UnsafeMutablePointer<DropCollector>) -> Int32 {
    if KeyTable.isValid(id) {
        if let held {
            let hit = heldHit(c, Key(id: id), held)
            if hit != 0 {
                instance.pointee = held
                token.pointee = hit
                return ok
            }
        }
        if let (handle, hit) = singletonHit(c, { _ in Key(id: id) }, section) {
            out.pointee = handle
            instance.pointee = hit.borrow { $0.pointer }
            return ok
        }
    }
    return statusOf { () throws(TetherError) in
        let container = try Handles.containers.unretained(c, "tether_resolve_key_collect")
        try checkOpen(container.object, "tether_resolve_key_collect")
        let key = try internedKey(id, "tether_resolve_key_collect")
        var result = try container.object.resolve(key)
        instance.pointee = result.pointer
        // Even when it is `held`: a handle says it was not the published singleton (it may be
        // one an outer graph of this thread is still building, not published yet).
        guard result.spec.defersDrop && collector.pointee.hasRoom && isKnownUniquelyReferenced(&result) else {
            out.pointee = Handles.refs.insert(result)
            return
        }
        // Destroyed now (its destructor, the first to come due, is the next drop collected),
        // unless another thread upgraded a weak handle to it since the check.
        _ = consume result
    }
}

/// `c`'s hit token (never 0) if its published singleton for `key` is `held`, else 0:
/// compared through its slot, with no loan (the caller keeps `held` alive) and
/// nothing written. The token is read first: every unpublish that moved the hit
/// word past it comes after that read, so `held` was published under the token.
@inline(__always)
private func heldHit(_ c: OpaquePointer?, _ key: Key, _ held: UnsafeMutableRawPointer) -> UInt {
    // The caller's earlier loads of the cache words stay before the slot's (free on x86-64):
    // a sum that already counts an unpublish makes the comparison see it (cachesChanged).
    // It orders atomic loads only, so TSan, which ignores it, misses no edge a race hides behind.
    atomicMemoryFence(ordering: .acquiring)
    guard let core = Handles.containerPages?.peek(c) else { return 0 }
    return Borrowed<Container>(opaque: core).borrow { container in
        let token = container.hitToken
        return !container.isTraced && container.singletonLoan(for: key)?.pointer == held ? token : 0
    }
}
