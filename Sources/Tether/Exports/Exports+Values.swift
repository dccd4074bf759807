import TetherCore

@_cdecl("tether_declare_value")
public func tether_declare_value(_ c: OpaquePointer?, _ key: UnsafePointer<CChar>?) -> Int32 {
    abiCall { () throws(TetherError) in
        let container = try Handles.containers.get(c, "tether_declare_value")
        let key = try keyArgument(key, "tether_declare_value")
        let replaced = try container.declareValue(key).replaced
        if let replaced { retireHandle(of: replaced) }
    }
}

@_cdecl("tether_provide_value")
public func tether_provide_value(_ c: OpaquePointer?, _ key: UnsafePointer<CChar>?, _ instance: UnsafeMutableRawPointer?,
                                 _ drop: CDropFn?, _ context: UnsafeMutableRawPointer?) -> Int32 {
    abiCall { () throws(TetherError) in
        let (container, key, instance, destructor) = try valueArguments(c, key, instance, drop, "tether_provide_value")
        let replaced = try container.provideValue(key, instance, context: context, destructor: destructor).replaced
        if let replaced { retireHandle(of: replaced) }
    }
}

/// The arguments of a call giving `c` an instance for `key` (tether_provide_value, tether_override), checked.
func valueArguments(_ c: OpaquePointer?, _ key: UnsafePointer<CChar>?, _ instance: UnsafeMutableRawPointer?, _ drop: CDropFn?,
                    _ function: StaticString) throws(TetherError) -> (Container, Key, UnsafeMutableRawPointer, Destructor?) {
    let container = try Handles.containers.get(c, function)
    let key = try keyArgument(key, function)
    guard let instance else { throw invalid(function, "the instance for \(key.quoted) is NULL") }
    let destructor: Destructor? = drop.map { drop in { instance, context in drop(instance, context) } }
    return (container, key, instance, destructor)
}
