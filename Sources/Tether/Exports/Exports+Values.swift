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
        let (container, key, instance) = try valueArguments(c, key, instance, "tether_provide_value")
        // The C destructor as is (no closure around it): a request's child reuses its old value's spec.
        let replaced = try container.borrow { c throws(TetherError) in try c.provideValue(key, instance, context: context, cDestructor: drop) }
        if let replaced { retireHandle(of: replaced) }
    }
}

/// The arguments of a call giving `c` an instance for `key` (tether_provide_value, tether_override), checked;
/// the container unretained (the call's section keeps it: a request's value writes no count of its child's).
func valueArguments(_ c: OpaquePointer?, _ key: UnsafePointer<CChar>?, _ instance: UnsafeMutableRawPointer?,
                    _ function: StaticString) throws(TetherError) -> (Borrowed<Container>, Key, UnsafeMutableRawPointer) {
    let container = try Handles.unretainedContainer(c, function)
    let key = try keyArgument(key, function)
    guard let instance else { throw invalid(function, "the instance for \(key.quoted) is NULL") }
    return (container, key, instance)
}
