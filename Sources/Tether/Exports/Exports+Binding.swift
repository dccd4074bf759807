import TetherCore

/// The binding protocol's version (tether_binding.h's TETHER_BINDING_API_VERSION).
private let bindingVersion: UInt32 = 18

/// The functions of `tether_binding`, in the struct's order after its version word (checked in the header),
/// each a C function calling the export of that name (a `@_cdecl` function converted directly would be a
/// second definition of its symbol). Those symbols are not exported (`exports.map`): a binding reaches
/// them through the table only.
private let bindingTable: [UnsafeRawPointer] = [
    unsafeBitCast({ tether_register_ex($0, $1, $2, $3, $4, $5, $6) } as @convention(c) (OpaquePointer?, UnsafePointer<CChar>?, UnsafeRawPointer?, UnsafeRawPointer?, Int,
                                                         UnsafeRawPointer?, UnsafeMutablePointer<OpaquePointer?>?) -> Int32,
                  to: UnsafeRawPointer.self),
    unsafeBitCast({ tether_registration_revive($0, $1, $2) } as @convention(c) (OpaquePointer?, CReviveFn?, UnsafeMutableRawPointer?) -> Int32,
                  to: UnsafeRawPointer.self),
    unsafeBitCast({ tether_resolve_key_instance($0, $1, $2, $3) } as @convention(c) (OpaquePointer?, UInt32, UnsafeMutablePointer<UnsafeMutableRawPointer?>?,
                                                                  UnsafeMutablePointer<OpaquePointer?>?) -> Int32,
                  to: UnsafeRawPointer.self),
    unsafeBitCast({ tether_resolve_key_collect($0, $1, $2, $3) } as @convention(c) (OpaquePointer?, UInt32, UInt32, UnsafeMutableRawPointer?) -> Int32,
                  to: UnsafeRawPointer.self),
    unsafeBitCast({ tether_resolver_get_weak_instance($0, $1, $2, $3) } as @convention(c) (OpaquePointer?, UnsafePointer<CChar>?,
                                                                        UnsafeMutablePointer<UnsafeMutableRawPointer?>?,
                                                                        UnsafeMutablePointer<OpaquePointer?>?) -> Int32,
                  to: UnsafeRawPointer.self),
    unsafeBitCast({ tether_resolver_ref($0, $1, $2) } as @convention(c) (OpaquePointer?, UnsafeMutableRawPointer?, UnsafeMutablePointer<OpaquePointer?>?) -> Int32,
                  to: UnsafeRawPointer.self),
    unsafeBitCast({ tether_list_ref($0, $1, $2) } as @convention(c) (OpaquePointer?, Int, UnsafeMutablePointer<OpaquePointer?>?) -> Int32,
                  to: UnsafeRawPointer.self),
    unsafeBitCast({ tether_provider_watch($0, $1, $2) } as @convention(c) (UnsafeRawPointer?, CProviderWatchFn?, UnsafeMutableRawPointer?) -> Int32,
                  to: UnsafeRawPointer.self),
    unsafeBitCast({ tether_last_error_parts($0) } as @convention(c) (UnsafeMutableRawPointer?) -> Int32,
                  to: UnsafeRawPointer.self),
    unsafeBitCast({ tether_validate_problem_parts($0, $1, $2) } as @convention(c) (Int, UnsafeMutableRawPointer?, UnsafeMutablePointer<Int>?) -> Int32,
                  to: UnsafeRawPointer.self),
    unsafeBitCast({ tether_plan_describe($0, $1, $2, $3, $4, $5, $6, $7, $8, $9, $10) } as @convention(c) (OpaquePointer?, UInt32, UnsafeMutableRawPointer?, Int, UnsafeMutablePointer<Int32>?,
                                                           Int, UnsafeMutableRawPointer?, Int, UnsafeMutablePointer<Int>?,
                                                           UnsafeMutablePointer<Int>?, UnsafeMutablePointer<Int>?) -> Int32,
                  to: UnsafeRawPointer.self),
    unsafeBitCast({ tether_plan_failure($0, $1, $2, $3, $4) } as @convention(c) (OpaquePointer?, UInt32, Int, Int, UnsafePointer<CChar>?) -> Int32,
                  to: UnsafeRawPointer.self),
    unsafeBitCast({ tether_plan_keys($0, $1, $2, $3, $4) } as @convention(c) (OpaquePointer?, UInt32, UnsafeMutableRawPointer?, Int, UnsafeMutablePointer<Int>?) -> Int32,
                  to: UnsafeRawPointer.self),
    unsafeBitCast({ tether_plan_resolver($0, $1, $2, $3, $4, $5, $6) } as @convention(c) (OpaquePointer?, UInt32, Int, UInt32, UInt32, UnsafePointer<Int>?, Int) -> Int32,
                  to: UnsafeRawPointer.self),
    unsafeBitCast({ tether_replay_enter($0, $1, $2) } as @convention(c) (OpaquePointer?, UInt32, Int) -> Int32,
                  to: UnsafeRawPointer.self),
    unsafeBitCast({ tether_replay_leave() } as @convention(c) () -> Int32,
                  to: UnsafeRawPointer.self),
    unsafeBitCast({ tether_construct_enter($0, $1, $2) } as @convention(c) (OpaquePointer?, UnsafePointer<UInt32>?, Int) -> Int32,
                  to: UnsafeRawPointer.self),
    unsafeBitCast({ tether_container_versions($0, $1, $2, $3) } as @convention(c) (OpaquePointer?, UnsafeMutablePointer<UnsafeRawPointer?>?, Int,
                                                                UnsafeMutablePointer<Int>?) -> Int32,
                  to: UnsafeRawPointer.self),
    unsafeBitCast({ tether_container_hit_word($0, $1) } as @convention(c) (OpaquePointer?, UnsafeMutablePointer<UnsafeRawPointer?>?) -> Int32,
                  to: UnsafeRawPointer.self),
    unsafeBitCast({ tether_plan_adopt($0, $1, $2) } as @convention(c) (OpaquePointer?, UInt32, UnsafeMutableRawPointer?) -> Int32,
                  to: UnsafeRawPointer.self),
    unsafeBitCast({ tether_token_new($0, $1) } as @convention(c) (UnsafeMutableRawPointer?, UnsafeMutablePointer<UnsafeMutableRawPointer?>?) -> Int32,
                  to: UnsafeRawPointer.self),
    unsafeBitCast({ tether_token_free($0) } as @convention(c) (UnsafeMutableRawPointer?) -> Int32,
                  to: UnsafeRawPointer.self),
    unsafeBitCast({ tether_token_enter($0) } as @convention(c) (UnsafeMutableRawPointer?) -> Int32,
                  to: UnsafeRawPointer.self),
    unsafeBitCast({ tether_token_leave() } as @convention(c) () -> Int32,
                  to: UnsafeRawPointer.self),
    unsafeBitCast({ tether_token_hold($0, $1, $2) } as @convention(c) (UnsafeMutableRawPointer?, OpaquePointer?, UInt32) -> Int32,
                  to: UnsafeRawPointer.self),
    unsafeBitCast({ tether_token_wait($0, $1, $2) } as @convention(c) (UnsafeMutableRawPointer?, (@convention(c) (UnsafeMutableRawPointer?) -> Void)?,
                                                        UnsafeMutableRawPointer?) -> Int32,
                  to: UnsafeRawPointer.self),
    unsafeBitCast({ tether_scope_traits($0, $1) } as @convention(c) (Int32, UnsafeMutablePointer<UInt32>?) -> Int32,
                  to: UnsafeRawPointer.self),
    unsafeBitCast({ tether_slot_container($0, $1, $2, $3, $4) } as @convention(c) (UnsafeRawPointer?, OpaquePointer?, UnsafePointer<OpaquePointer?>?, Int,
                                                                    UnsafeMutablePointer<Int>?) -> Int32,
                  to: UnsafeRawPointer.self),
    unsafeBitCast({ tether_lazy_hold($0, $1) } as @convention(c) (UnsafeRawPointer?, UnsafeMutablePointer<UnsafeMutableRawPointer?>?) -> Int32,
                  to: UnsafeRawPointer.self),
    unsafeBitCast({ tether_lazy_get($0, $1, $2) } as @convention(c) (UnsafeMutableRawPointer?, UnsafeMutablePointer<UnsafeMutableRawPointer?>?,
                                                      UnsafeMutablePointer<OpaquePointer?>?) -> Int32,
                  to: UnsafeRawPointer.self),
    unsafeBitCast({ tether_lazy_release($0) } as @convention(c) (UnsafeMutableRawPointer?) -> Int32,
                  to: UnsafeRawPointer.self),
]

/// The binding's `scope_traits`: `Scope.bindingTraits`, the scope's description as the header's bits.
@_cdecl("tether_scope_traits")
public func tether_scope_traits(_ scope: Int32, _ out: UnsafeMutablePointer<UInt32>?) -> Int32 {
    abiCall { () throws(TetherError) in
        guard let out else { throw invalid("tether_scope_traits", "out must not be NULL") }
        guard let scope = Scope(rawValue: scope) else { throw invalid("tether_scope_traits", "\(scope) is not a tether_scope") }
        out.pointee = scope.bindingTraits
    }
}

@_cdecl("tether_binding_open")
public func tether_binding_open(_ b: UnsafeMutableRawPointer?) -> Int32 {
    abiCall { () throws(TetherError) in
        let function: StaticString = "tether_binding_open"
        guard let b else { throw invalid(function, "b must not be NULL (a tether_binding set with TETHER_BINDING_INIT)") }
        let asked = b.load(as: UInt32.self)
        guard asked == bindingVersion else {
            throw invalid(function, "the binding speaks protocol version \(asked), this library version \(bindingVersion): "
                + "use a binding and a library of the same release")
        }
        for (i, fn) in bindingTable.enumerated() { b.storeBytes(of: fn, toByteOffset: 8 * (i + 1), as: UnsafeRawPointer.self) }
    }
}
