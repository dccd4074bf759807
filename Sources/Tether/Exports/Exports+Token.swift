import TetherCore

/// Tokens: holders of shared-instance creation cells for a binding's awaiting calls
/// (tether_binding.h, "Tokens"). A token's address is its `Handoff` reference.

private func tokenArgument(_ t: UnsafeMutableRawPointer?, _ function: StaticString) throws(TetherError) -> CellToken {
    guard let t else { throw invalid(function, "the token is NULL (make one with token_new)") }
    return Borrowed<CellToken>(opaque: t).object
}

@_cdecl("tether_token_new")
public func tether_token_new(_ parent: UnsafeMutableRawPointer?, _ out: UnsafeMutablePointer<UnsafeMutableRawPointer?>?) -> Int32 {
    abiCall { () throws(TetherError) in
        let out = try outParam(out, "tether_token_new")
        out.pointee = Handoff.give(CellToken(parent: parent.map { Borrowed<CellToken>(opaque: $0).object }))
    }
}

@_cdecl("tether_token_free")
public func tether_token_free(_ t: UnsafeMutableRawPointer?) -> Int32 {
    abiCall { () throws(TetherError) in
        let function: StaticString = "tether_token_free"
        let token = try tokenArgument(t, function)
        guard token.entered == 0 else { throw invalid(function, "the token is entered on a thread: call token_leave first") }
        token.free()
        Handoff<CellToken>.release(t!)
    }
}

@_cdecl("tether_token_enter")
public func tether_token_enter(_ t: UnsafeMutableRawPointer?) -> Int32 {
    abiCall { () throws(TetherError) in
        try tokenArgument(t, "tether_token_enter").enter()
    }
}

@_cdecl("tether_token_leave")
public func tether_token_leave() -> Int32 {
    abiCall { () throws(TetherError) in
        guard CellToken.leave() else { throw invalid("tether_token_leave", "this thread has no token_enter to leave") }
    }
}

@_cdecl("tether_token_hold")
public func tether_token_hold(_ t: UnsafeMutableRawPointer?, _ c: OpaquePointer?, _ key: UInt32) -> Int32 {
    abiCall { () throws(TetherError) in
        let function: StaticString = "tether_token_hold"
        let token = try tokenArgument(t, function)
        let container = try containerArgument(c, function)
        let key = try internedKey(key, function)
        guard token.hold(key, in: container) else {
            throw TetherError(.notFound, "\(function): this thread creates no shared instance of \(key.quoted) from that container now: call it from that instance's factory")
        }
    }
}

@_cdecl("tether_token_wait")
public func tether_token_wait(_ t: UnsafeMutableRawPointer?, _ fn: (@convention(c) (UnsafeMutableRawPointer?) -> Void)?,
                              _ context: UnsafeMutableRawPointer?) -> Int32 {
    abiCall { () throws(TetherError) in
        let function: StaticString = "tether_token_wait"
        let token = try tokenArgument(t, function)
        guard let fn else { throw invalid(function, "fn is NULL") }
        token.wake(fn, context)
    }
}
