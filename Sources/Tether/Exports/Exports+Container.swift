#if canImport(Glibc)
import Glibc
#endif
import TetherCore

@_cdecl("tether_container_new")
public func tether_container_new(_ parent: OpaquePointer?, _ out: UnsafeMutablePointer<OpaquePointer?>?) -> Int32 {
    abiCall { () throws(TetherError) in
        let out = try outParam(out, "tether_container_new")
        guard let parent else {
            let core = try Container(parent: nil, bridge: ABIBridge.shared)
            // Its lazy cells hold it by split references (no count every core writes per lazy slot):
            // `tether_container_free` lets them go before the handle's reference goes.
            core.splitsCellHolds = true
            // Marked shared from the start: a root is any thread's to use, and its lookups then
            // skip the owner check (`SlotPages.peek`; a root never takes the unshared free's shortcut).
            out.pointee = Handles.containers.insert(shared: core)
            return
        }
        // The parent unretained (this call's section keeps it), so a request's child writes no
        // reference count its siblings on other threads write too.
        let parentCore = try Handles.unretainedContainer(parent, "tether_container_new")
        let made = parentCore.borrow { parentCore -> Result<OpaquePointer, TetherError> in
            do throws(TetherError) {
                try checkOpen(parentCore, "tether_container_new")
                // Held by the parent's count of open children, not a reference (the parent's
                // handle keeps it: a parent with open children is not freed).
                let core = try Container(childOf: Borrowed(parentCore))
                // (A child follows its parent's plans switch, `Container.init`: the environment is read
                // once per root, not per request's child.)
                // Consumed: the handle takes over the reference the initializer made (no retain and release).
                return .success(Handles.insertContainer(taking: Ref(retaining: consume core)))
            } catch {
                return .failure(error)
            }
        }
        out.pointee = try made.get()
    }
}

@_cdecl("tether_container_free")
public func tether_container_free(_ c: OpaquePointer?) -> Int32 {
    // Retired after the call's section is left: a free that is no other call's
    // part (not from a factory or destructor) of a container no other thread reached,
    // or with no other thread about, then lets go of it at once (`Reclamation.retire`).
    var retired: Container?
    var unshared = false
    defer { Reclamation.retire(&retired, unshared: unshared) }
    return abiCall { () throws(TetherError) in
        // Unretained until its handle's reference is taken over (this call's section keeps it).
        let core = try Handles.unretainedContainer(c, "tether_container_free")
        do throws(TetherError) {
            try core.borrow { c throws(TetherError) in
                try c.closeRetiring()
                c.closeCellHolds()  // (before the handle's reference goes: `Container.splitsCellHolds`)
            }
        } catch {
            throw error.prefixed("tether_container_free")
        }
        // Unreachable first (the container's handle, then its registrations'), so a
        // call starting after the retirement cannot find it; calls already under
        // way may still use it: the reclaimer waits for them.
        if let (container, alone) = try? Handles.containers.removeMarked(c, "tether_container_free") {
            (retired, unshared) = (container, alone)
        }
        // Each registration's handle looked up by the calling thread only, too (a request's own registration).
        core.borrow { $0.forEachRegistration { if !retireHandle(of: $0) { unshared = false } } }
    }
}

/// tether.h's TETHER_STRICT_CAPTIVE.
private let strictCaptive: UInt32 = 1

@_cdecl("tether_container_set_strict")
public func tether_container_set_strict(_ c: OpaquePointer?, _ flags: UInt32) -> Int32 {
    abiCall { () throws(TetherError) in
        let core = try containerArgument(c, "tether_container_set_strict")
        guard flags & ~strictCaptive == 0 else {
            throw invalid("tether_container_set_strict", "flags 0x\(String(flags, radix: 16)) has bits other than TETHER_STRICT_CAPTIVE")
        }
        core.refusesCaptives = flags & strictCaptive != 0
    }
}

@_cdecl("tether_reset")
public func tether_reset(_ c: OpaquePointer?, _ scope: Int32) -> Int32 {
    abiCall { () throws(TetherError) in
        let core = try containerArgument(c, "tether_reset")
        guard let scope = Scope(rawValue: scope) else { throw invalid("tether_reset", "\(scope) is not a tether_scope") }
        core.reset(scope)
    }
}

@_cdecl("tether_intern")
public func tether_intern(_ c: OpaquePointer?, _ key: UnsafePointer<CChar>?, _ out: UnsafeMutablePointer<UInt32>?) -> Int32 {
    abiCall { () throws(TetherError) in
        _ = try containerArgument(c, "tether_intern")
        let key = try keyArgument(key, "tether_intern")
        guard let out else { throw invalid("tether_intern", "the out-parameter is NULL") }
        out.pointee = key.id
    }
}

@_cdecl("tether_validate")
public func tether_validate(_ c: OpaquePointer?) -> Int32 {
    abiCall { () throws(TetherError) in
        let core = try containerArgument(c, "tether_validate")
        let report = GraphCheck(core)
        LastError.current.problems = report.allProblems
        if let error = report.error { throw error }
    }
}

@_cdecl("tether_export_dot")
public func tether_export_dot(_ c: OpaquePointer?, _ out: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> Int32 {
    abiCall { () throws(TetherError) in
        let out = try outParam(out, "tether_export_dot")
        let core = try containerArgument(c, "tether_export_dot")
        guard let text = strdup(GraphCheck(core).dot()) else {
            throw TetherError(.noMemory, "tether_export_dot: out of memory")
        }
        out.pointee = text
    }
}
