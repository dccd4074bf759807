import TetherCore

// FACTORY slots' handles (tether_factory) and multibinding resolves (tether_resolve_all).

@_cdecl("tether_factory_call")
public func tether_factory_call(_ f: OpaquePointer?, _ args: UnsafeRawPointer?, _ count: Int,
                                _ out: UnsafeMutablePointer<OpaquePointer?>?) -> Int32 {
    // abiCall's call section: a concurrent tether_container_free lets go of nothing this reads.
    abiCall { () throws(TetherError) in
        let out = try outParam(out, "tether_factory_call")
        let cell = try Handles.factories.get(f, "tether_factory_call")
        guard !cell.container.isClosed else {
            throw TetherError(.invalidHandle, "tether_factory_call: the container of this factory for \(cell.key.quoted) was freed; call a factory only while its container lives")
        }
        let instance = try withArguments(args, count, "tether_factory_call") { arguments throws(TetherError) in
            try cell.make(arguments)
        }
        out.pointee = Handles.refs.insert(taking: instance)
    }
}

@_cdecl("tether_factory_release")
public func tether_factory_release(_ f: OpaquePointer?) -> Int32 {
    abiCall { () throws(TetherError) in
        try Handles.factories.remove(f, "tether_factory_release")
    }
}

@_cdecl("tether_resolve_all")
public func tether_resolve_all(_ c: OpaquePointer?, _ key: UnsafePointer<CChar>?, _ out: UnsafeMutablePointer<OpaquePointer?>?,
                               _ list: UnsafeMutablePointer<UnsafeRawPointer?>?) -> Int32 {
    abiCall { () throws(TetherError) in
        let out = try outParam(out, "tether_resolve_all")
        list?.pointee = nil
        let core = try containerArgument(c, "tether_resolve_all")
        let instance = try core.resolveAll(try keyArgument(key, "tether_resolve_all"))
        list?.pointee = UnsafeRawPointer(instance.borrow { $0.pointer })
        out.pointee = Handles.refs.insert(taking: instance)
    }
}

@_cdecl("tether_list_ref")
public func tether_list_ref(_ list: OpaquePointer?, _ index: Int, _ out: UnsafeMutablePointer<OpaquePointer?>?) -> Int32 {
    abiCall { () throws(TetherError) in
        let out = try outParam(out, "tether_list_ref")
        let instance = try Handles.refs.get(list, "tether_list_ref")
        guard let item = instance.listItem(index) else {
            throw invalid("tether_list_ref", "no item \(index) in that handle's instance: pass a handle from tether_resolve_all and an index below its list's count")
        }
        out.pointee = Handles.refs.insert(item)
    }
}
