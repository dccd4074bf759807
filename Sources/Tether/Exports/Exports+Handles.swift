import TetherCore

@_cdecl("tether_ref_get") @inline(__always)
public func tether_ref_get(_ ref: OpaquePointer?) -> UnsafeMutableRawPointer? {
    if let refs = Handles.refPages, let object = refs.peek(ref) {
        return Borrowed<Instance>(opaque: object).borrow { $0.pointer }
    }
    return refGetFailed(ref)
}

/// Out of line, so the hit path above saves no registers for it.
@inline(never)
private func refGetFailed(_ ref: OpaquePointer?) -> UnsafeMutableRawPointer? {
    do {
        return try Handles.refs.get(ref, "tether_ref_get").pointer
    } catch {
        LastError.set(error)
        return nil
    }
}

@_cdecl("tether_ref_clone")
public func tether_ref_clone(_ ref: OpaquePointer?, _ out: UnsafeMutablePointer<OpaquePointer?>?) -> Int32 {
    abiCall { () throws(TetherError) in
        let out = try outParam(out, "tether_ref_clone")
        out.pointee = Handles.refs.insert(try Handles.refs.get(ref, "tether_ref_clone"))
    }
}

@_cdecl("tether_ref_release")
public func tether_ref_release(_ ref: OpaquePointer?) -> Int32 {
    if let refs = Handles.refPages {
        switch refs.releaseRef(ref) {
        case .owned(let object):
            Handoff<Instance>.release(object)  // the destructor may run here
            return ok
        case .lent:
            return ok
        case .invalid:
            break
        }
    }
    return refReleaseFailed(ref)
}

@inline(never)
private func refReleaseFailed(_ ref: OpaquePointer?) -> Int32 {
    abiCall { () throws(TetherError) in throw Handles.refs.slots.invalidHandle(ref, "tether_ref_release") }
}

@_cdecl("tether_ref_downgrade")
public func tether_ref_downgrade(_ ref: OpaquePointer?, _ out: UnsafeMutablePointer<OpaquePointer?>?) -> Int32 {
    abiCall { () throws(TetherError) in
        let out = try outParam(out, "tether_ref_downgrade")
        out.pointee = Handles.weaks.insert(try Handles.refs.get(ref, "tether_ref_downgrade").weakRef)
    }
}

@_cdecl("tether_weak_upgrade")
public func tether_weak_upgrade(_ weak: OpaquePointer?, _ out: UnsafeMutablePointer<OpaquePointer?>?) -> Int32 {
    tether_weak_upgrade(weak, out, "tether_weak_upgrade") { _ in }
}

/// The upgrade behind tether_weak_upgrade and tether_weak_get (`upgraded` sees the instance).
private func tether_weak_upgrade(_ weak: OpaquePointer?, _ out: UnsafeMutablePointer<OpaquePointer?>?, _ function: StaticString,
                                 _ upgraded: (Instance) -> Void) -> Int32 {
    abiCall { () throws(TetherError) in
        let out = try outParam(out, function)
        let ref = try Handles.weaks.get(weak, function)
        guard let instance = ref.upgrade() else {
            throw TetherError(.expired, "\(function): the instance is gone (\(ref.key.quoted) was destroyed when its last strong reference went)")
        }
        upgraded(instance)
        out.pointee = Handles.refs.insert(instance)
    }
}

@_cdecl("tether_weak_get")
public func tether_weak_get(_ weak: OpaquePointer?, _ keep: UnsafeMutablePointer<OpaquePointer?>?) -> UnsafeMutableRawPointer? {
    var instance: UnsafeMutableRawPointer?
    let status = tether_weak_upgrade(weak, keep, "tether_weak_get") { instance = $0.pointer }
    return status == ok ? instance : nil
}

@_cdecl("tether_weak_release")
public func tether_weak_release(_ weak: OpaquePointer?) -> Int32 {
    abiCall { () throws(TetherError) in
        try Handles.weaks.remove(weak, "tether_weak_release")
    }
}

@_cdecl("tether_resolver_get")
public func tether_resolver_get(_ r: OpaquePointer?, _ key: UnsafePointer<CChar>?, _ out: UnsafeMutablePointer<UnsafeMutableRawPointer?>?) -> Int32 {
    abiCall { () throws(TetherError) in
        let out = try outParam(out, "tether_resolver_get")
        let resolver = try Handles.resolvers.unretained(r, "tether_resolver_get").object
        out.pointee = try resolver.get(try keyArgument(key, "tether_resolver_get")).pointer
    }
}

@_cdecl("tether_resolver_ref")
public func tether_resolver_ref(_ r: OpaquePointer?, _ instance: UnsafeMutableRawPointer?, _ out: UnsafeMutablePointer<OpaquePointer?>?) -> Int32 {
    abiCall { () throws(TetherError) in
        let out = try outParam(out, "tether_resolver_ref")
        let resolver = try Handles.resolvers.unretained(r, "tether_resolver_ref").object
        guard let instance else { throw invalid("tether_resolver_ref", "the instance is NULL") }
        do throws(TetherError) {
            out.pointee = Handles.refs.insert(try resolver.instance(at: instance))
        } catch {
            throw error.prefixed("tether_resolver_ref")
        }
    }
}

@_cdecl("tether_resolver_get_weak_instance")
public func tether_resolver_get_weak_instance(_ r: OpaquePointer?, _ key: UnsafePointer<CChar>?,
                                             _ instance: UnsafeMutablePointer<UnsafeMutableRawPointer?>?,
                                             _ out: UnsafeMutablePointer<OpaquePointer?>?) -> Int32 {
    abiCall { () throws(TetherError) in
        out?.pointee = nil
        let instanceOut = try outParam(instance, "tether_resolver_get_weak_instance")
        let resolver = try Handles.resolvers.unretained(r, "tether_resolver_get_weak_instance").object
        let target = try resolver.getWeakTarget(try keyArgument(key, "tether_resolver_get_weak_instance"))
        out?.pointee = Handles.weaks.insert(target.weakRef)
        instanceOut.pointee = target.pointer
    }
}

@_cdecl("tether_resolver_get_weak")
public func tether_resolver_get_weak(_ r: OpaquePointer?, _ key: UnsafePointer<CChar>?, _ out: UnsafeMutablePointer<OpaquePointer?>?) -> Int32 {
    abiCall { () throws(TetherError) in
        let out = try outParam(out, "tether_resolver_get_weak")
        let resolver = try Handles.resolvers.unretained(r, "tether_resolver_get_weak")
        let key = try keyArgument(key, "tether_resolver_get_weak")
        // Retained inside the borrow: the new weak reference's +1 goes to the handle with no pair around it.
        let weak = try resolver.borrow { resolver throws(TetherError) in Ref(retaining: try resolver.getWeak(key)) }
        out.pointee = Handles.weaks.insert(taking: weak)
    }
}
