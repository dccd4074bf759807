import TetherCore

@_cdecl("tether_override")
public func tether_override(_ c: OpaquePointer?, _ key: UnsafePointer<CChar>?, _ instance: UnsafeMutableRawPointer?,
                            _ drop: CDropFn?, _ context: UnsafeMutableRawPointer?) -> Int32 {
    abiCall { () throws(TetherError) in
        let (container, key, instance) = try valueArguments(c, key, instance, "tether_override")
        let destructor: Destructor? = drop.map { drop in { instance, context in drop(instance, context) } }
        _ = try container.borrow { c throws(TetherError) in try c.overrideValue(key, instance, context: context, destructor: destructor) }
    }
}

@_cdecl("tether_override_clear")
public func tether_override_clear(_ c: OpaquePointer?, _ key: UnsafePointer<CChar>?) -> Int32 {
    abiCall { () throws(TetherError) in
        let container = try Handles.containers.get(c, "tether_override_clear")
        let key = try keyArgument(key, "tether_override_clear")
        do throws(TetherError) {
            retireHandle(of: try container.clearOverride(key))
        } catch {
            throw error.prefixed("tether_override_clear")
        }
    }
}
