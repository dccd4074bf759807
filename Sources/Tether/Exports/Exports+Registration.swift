import TetherCore

@_cdecl("tether_register")
public func tether_register(_ c: OpaquePointer?, _ key: UnsafePointer<CChar>?, _ factory: UnsafeRawPointer?,
                            _ params: UnsafeRawPointer?, _ count: Int,
                            _ out: UnsafeMutablePointer<OpaquePointer?>?) -> Int32 {
    register(c, key, factory, params, count, nil, out, "tether_register")
}

@_cdecl("tether_register_ex")
public func tether_register_ex(_ c: OpaquePointer?, _ key: UnsafePointer<CChar>?, _ factory: UnsafeRawPointer?,
                               _ params: UnsafeRawPointer?, _ count: Int, _ options: UnsafeRawPointer?,
                               _ out: UnsafeMutablePointer<OpaquePointer?>?) -> Int32 {
    register(c, key, factory, params, count, options.map { .legacy($0) }, out, "tether_register_ex")
}

@_cdecl("tether_register_with")
public func tether_register_with(_ c: OpaquePointer?, _ key: UnsafePointer<CChar>?, _ factory: UnsafeRawPointer?,
                                 _ params: UnsafeRawPointer?, _ count: Int, _ options: UnsafeRawPointer?,
                                 _ out: UnsafeMutablePointer<OpaquePointer?>?) -> Int32 {
    register(c, key, factory, params, count, options.map { .versioned($0) }, out, "tether_register_with")
}

/// The options struct a caller passed: tether_options (versioned) or the
/// older tether_registration_options (tether_register_ex).
private enum RawOptions {
    case versioned(UnsafeRawPointer)
    case legacy(UnsafeRawPointer)
}

/// The tether_options versions this library reads.
private let optionsVersion: UInt32 = 1

/// tether_options or tether_registration_options, read field by field (layouts checked in the headers).
private struct Options {
    var scope = Scope.graph
    var context: UnsafeMutableRawPointer?
    /// A deferrable drop's (TETHER_DEFER_DROP) destructor; else the drop itself, in `drop`.
    var destructor: Destructor?
    var drop: CDropFn?
    var defersDrop = false
    var completions: [Completion] = []
    var variadicFixed = 0
    /// TETHER_OVERRIDE: an override of the key (`Container.override`), not a registration.
    var overrides = false
    /// TETHER_DECORATE: a decorator of the key (`Container.decorate`).
    var decorates = false

    init(_ options: RawOptions, _ count: Int, _ key: Key, _ function: StaticString) throws(TetherError) {
        switch options {
        case .versioned(let raw):
            let version = raw.load(as: UInt32.self)
            guard version == optionsVersion else {
                throw invalid(function, "options.version is \(version); this library reads version \(optionsVersion) (start from TETHER_OPTIONS_INIT, and compile against the tether.h of the library you load)")
            }
            let flags = raw.load(fromByteOffset: 8, as: UInt32.self)
            try self.init(scope: raw.load(fromByteOffset: 4, as: Int32.self), flags: flags, allowed: deferDropFlag | overrideFlag | decorateFlag,
                          context: raw.load(fromByteOffset: 16, as: UnsafeMutableRawPointer?.self),
                          drop: raw.load(fromByteOffset: 24, as: CDropFn?.self), function)
            variadicFixed = raw.load(fromByteOffset: 48, as: Int.self)
            try checkVariadic(count, key, function)
            try addCallbacks(raw.load(fromByteOffset: 32, as: UnsafeRawPointer?.self), raw.load(fromByteOffset: 40, as: Int.self),
                             key, function)
        case .legacy(let raw):
            try self.init(legacy: raw, count, key, function)
        }
    }

    private init(scope scopeValue: Int32, flags: UInt32, allowed: UInt32, context: UnsafeMutableRawPointer?, drop: CDropFn?,
                 _ function: StaticString) throws(TetherError) {
        guard let scope = Scope(rawValue: scopeValue) else { throw invalid(function, "options.scope \(scopeValue) is not a tether_scope") }
        self.scope = scope
        guard flags & ~allowed == 0 else {
            let names = allowed & callbacksFlag != 0 ? "TETHER_DEFER_DROP, TETHER_OVERRIDE, TETHER_DECORATE and TETHER_OPTIONS_CALLBACKS"
                                                     : "TETHER_DEFER_DROP, TETHER_OVERRIDE and TETHER_DECORATE"
            throw invalid(function, "options.flags 0x\(String(flags, radix: 16)) has bits other than \(names)")
        }
        overrides = flags & overrideFlag != 0
        decorates = flags & decorateFlag != 0
        if overrides && decorates { throw invalid(function, "options.flags has both TETHER_OVERRIDE and TETHER_DECORATE: one call does one") }
        self.context = context
        if let drop {
            defersDrop = flags & deferDropFlag != 0
            if defersDrop { destructor = DropCollector.deferrable(drop) } else { self.drop = drop }
        }
    }

    private func checkVariadic(_ count: Int, _ key: Key, _ function: StaticString) throws(TetherError) {
        guard variadicFixed >= 0, variadicFixed <= count else {
            throw invalid(function, "options.variadic_fixed \(variadicFixed) must be between 0 and the \(count) declared params of \(key.quoted)")
        }
    }

    /// The tether_completion array of either struct.
    private mutating func addCallbacks(_ list: UnsafeRawPointer?, _ listCount: Int, _ key: Key, _ function: StaticString) throws(TetherError) {
        guard listCount >= 0, listCount <= 1024, listCount == 0 || list != nil else {
            throw invalid(function, "options.callback_count \(listCount) does not match options.callbacks")
        }
        for i in 0..<listCount {
            completions.append(try completion(list! + i * completionStride, "options.callbacks[\(i)]", key, function))
        }
    }

    private init(legacy raw: UnsafeRawPointer, _ count: Int, _ key: Key, _ function: StaticString) throws(TetherError) {
        let flags = raw.load(fromByteOffset: 4, as: UInt32.self)
        try self.init(scope: raw.load(as: Int32.self), flags: flags, allowed: deferDropFlag | callbacksFlag | overrideFlag | decorateFlag,
                      context: raw.load(fromByteOffset: 8, as: UnsafeMutableRawPointer?.self),
                      drop: raw.load(fromByteOffset: 16, as: CDropFn?.self), function)
        let functions = raw.load(fromByteOffset: 24, as: UnsafePointer<CCompleteFn?>?.self)
        let contexts = raw.load(fromByteOffset: 32, as: UnsafePointer<UnsafeMutableRawPointer?>?.self)
        let completionCount = raw.load(fromByteOffset: 40, as: Int.self)
        guard completionCount >= 0, completionCount <= 1024, completionCount == 0 || functions != nil else {
            throw invalid(function, "options.completion_count \(completionCount) does not match options.completions")
        }
        for i in 0..<completionCount {
            guard let fn = functions![i] else { throw invalid(function, "options.completions[\(i)] is NULL") }
            completions.append(CCompletion(fn, context: contexts?[i]))
        }
        variadicFixed = raw.load(fromByteOffset: 48, as: Int.self)
        try checkVariadic(count, key, function)
        // Callers built against a header without these fields pass a shorter struct: read them only when flagged.
        guard flags & callbacksFlag != 0 else { return }
        try addCallbacks(raw.load(fromByteOffset: 56, as: UnsafeRawPointer?.self), raw.load(fromByteOffset: 64, as: Int.self), key, function)
    }
}

/// The flag of tether_registration_options.flags saying its callbacks fields are set (tether_options always has them).
private let callbacksFlag: UInt32 = 2
/// TETHER_OVERRIDE, in either struct's flags.
private let overrideFlag: UInt32 = 4
/// TETHER_DECORATE, in either struct's flags.
private let decorateFlag: UInt32 = 8

/// tether_completion: fn, args_fn, params, param_count, context (layout checked in the header).
private let completionStride = 40

/// One tether_completion: exactly one of its two callbacks.
private func completion(_ raw: UnsafeRawPointer, _ what: String, _ key: Key, _ function: StaticString) throws(TetherError) -> Completion {
    let fn = raw.load(as: CCompleteFn?.self)
    let argsFn = raw.load(fromByteOffset: 8, as: CCompleteArgsFn?.self)
    let params = raw.load(fromByteOffset: 16, as: UnsafeRawPointer?.self)
    let count = raw.load(fromByteOffset: 24, as: Int.self)
    let context = raw.load(fromByteOffset: 32, as: UnsafeMutableRawPointer?.self)
    switch (fn, argsFn) {
    case (let fn?, nil):
        guard count == 0 else { throw invalid(function, "\(what) has a resolver callback (fn) and \(count) params: params are for args_fn") }
        return CCompletion(fn, context: context)
    case (nil, let argsFn?):
        return CDeclaredCompletion(argsFn, params: try completionParams(params, count, what, key, function), context: context)
    default:
        throw invalid(function, "\(what) must set exactly one of fn and args_fn")
    }
}

/// The declared targets of a completion callback: kinds `Param.Kind.isCompletionTarget` allows, with keys.
private func completionParams(_ params: UnsafeRawPointer?, _ count: Int, _ what: String, _ key: Key,
                              _ function: StaticString) throws(TetherError) -> [Param] {
    guard count >= 0, count <= maxParams else { throw invalid(function, "\(what): param_count \(count) is out of range (0...\(maxParams))") }
    guard count == 0 || params != nil else { throw invalid(function, "\(what): params is NULL but param_count is \(count)") }
    var declared: [Param] = []
    for i in 0..<count {
        let base = params! + i * tetherParamStride
        let kind = base.load(as: Int32.self)
        guard let target = Param.Kind(rawValue: kind), target.isCompletionTarget else {
            let allowed = Param.Kind.allCases.filter(\.isCompletionTarget).map(\.cName).joined(separator: " or ")
            throw invalid(function, "\(what) of \(key.quoted): param \(i + 1) has kind \(paramKindName(kind)); a completion callback declares \(allowed) targets only")
        }
        guard let keyPointer = base.load(fromByteOffset: 8, as: UnsafePointer<CChar>?.self), keyPointer.pointee != 0 else {
            throw invalid(function, "\(what) of \(key.quoted): param \(i + 1) is \(paramKindName(kind)) but its key is NULL or empty")
        }
        declared.append(Param(kind: target, key: KeyCache.key(keyPointer))!)
    }
    return declared
}

private func register(_ c: OpaquePointer?, _ key: UnsafePointer<CChar>?, _ factory: UnsafeRawPointer?,
                      _ params: UnsafeRawPointer?, _ count: Int, _ rawOptions: RawOptions?,
                      _ out: UnsafeMutablePointer<OpaquePointer?>?, _ function: StaticString) -> Int32 {
    abiCall { () throws(TetherError) in
        out?.pointee = nil
        let container = try Handles.containers.get(c, function)
        try checkOpen(container, function)
        let key = try keyArgument(key, function)
        guard let factory else { throw invalid(function, "the factory for \(key.quoted) is NULL") }
        let (declared, kinds) = try parseParams(params, count, key)
        let options = try rawOptions.map { raw throws(TetherError) in try Options(raw, count, key, function) }
        let variadic = options?.variadicFixed ?? 0
        let configure = { (registration: Registration) throws(TetherError) in
            guard let options else { return }
            try registration.setScope(options.scope)
            if options.defersDrop {
                registration.setContext(options.context, destructor: options.destructor, defersDrop: true)
            } else {
                registration.setContext(options.context, cDestructor: options.drop)
            }
            for completion in options.completions { registration.addCompletion(completion) }
        }
        let registration: Registration, replaced: Registration?
        var ffi = try FFIFactory.shared(function: factory, kinds: kinds)
        if variadic > 0 { ffi = try ffi.variadic(fixed: variadic, arity: count) }
        if options?.overrides == true {
            (registration, replaced) = (try container.override(key, params: declared, factory: ffi, configure: configure), nil)
        } else if options?.decorates == true {
            let (decorator, decorated, moved) = try container.decorate(key, params: declared, factory: ffi, configure: configure)
            // The decorated registration's handle names it where it moved: it still configures it.
            let handle = decorated.attachment.exchange(0, ordering: .acquiringAndReleasing)
            if handle != 0 {
                if Handles.registrations.repoint(OpaquePointer(bitPattern: handle), to: moved) {
                    moved.attachment.store(handle, ordering: .releasing)
                }
            }
            (registration, replaced) = (decorator, nil)
        } else {
            (registration, replaced) = try container.register(key, params: declared, factory: ffi, configure: configure)
        }
        if let replaced { retireHandle(of: replaced) }
        // A handle only for callers who take one (it is the only way to configure later).
        if let out {
            let handle = Handles.registrations.insert(registration)
            registration.attachment.store(UInt(bitPattern: handle), ordering: .releasing)
            out.pointee = handle
        }
        // A destructor of what the replaced registration made may have freed the container or
        // registered the key again meanwhile, retiring this registration before it had a handle
        // (retiring sets the flag before it takes the handle: one of the two sees the other).
        if container.isClosed {
            retireHandle(of: registration)
            out?.pointee = nil
            throw TetherError(.invalidHandle, "\(function): the container was freed while this call ran (by a destructor of an instance the replaced registration made); nothing was registered")
        }
        if let out, !registration.isLive {
            // Decorated meanwhile (not replaced): the handle names the registration where it moved,
            // as a decorated registration's handle does (the decorating call found no handle to move).
            if let moved = registration.liveMove {
                let handle = registration.attachment.exchange(0, ordering: .acquiringAndReleasing)
                if handle != 0, Handles.registrations.repoint(OpaquePointer(bitPattern: handle), to: moved) {
                    moved.attachment.store(handle, ordering: .releasing)
                }
                if moved.isLive { return }
                retireHandle(of: moved)
            } else {
                retireHandle(of: registration)
            }
            out.pointee = nil
            throw TetherError(.invalidHandle, "\(function): \(registration.key.quoted) was registered again while this call ran (by a destructor of an instance the replaced registration made), which replaced this registration: there is no handle to give")
        }
    }
}

/// The registration behind handle `r`, refused once its container let go of it (replaced or
/// freed) even while the handle's own retirement is still under way (a destructor the
/// replacing call runs, or one run by the free, may call with it).
func liveRegistration(_ r: OpaquePointer?, _ function: StaticString) throws(TetherError) -> Registration {
    let registration = try Handles.registrations.get(r, function)
    guard registration.isLive else {
        throw TetherError(.invalidHandle, "\(function): this registration was replaced (its key registered again) or its container freed; the handle is stale")
    }
    return registration
}

/// Invalidates the handle of a registration its container let go of (replaced or freed); whether
/// no thread but the caller can have reached the registration through it (no handle: true;
/// `SlotPages.sharedBit`), which a container's free asks of each (`tether_container_free`).
@discardableResult
func retireHandle(of registration: Registration) -> Bool {
    let handle = registration.attachment.exchange(0, ordering: .acquiringAndReleasing)
    guard handle != 0 else { return true }
    guard let (_, unshared) = try? Handles.registrations.removeMarked(OpaquePointer(bitPattern: handle), "tether_register") else { return false }
    return unshared
}

/// Reads the C param array (kind at offset 0, key pointer at offset 8).
private func parseParams(_ params: UnsafeRawPointer?, _ count: Int, _ key: Key) throws(TetherError) -> ([Param], [WordKind]) {
    guard count >= 0, count <= maxParams else { throw invalid("tether_register", "param_count \(count) is out of range (0...\(maxParams))") }
    guard count == 0 || params != nil else { throw invalid("tether_register", "params is NULL but param_count is \(count)") }
    var declared: [Param] = []
    var kinds: [WordKind] = []
    for i in 0..<count {
        let base = params! + i * tetherParamStride
        let number = base.load(as: Int32.self)
        let keyPointer = base.load(fromByteOffset: 8, as: UnsafePointer<CChar>?.self)
        guard let kind = Param.Kind(rawValue: number) else {
            throw invalid("tether_register", "param \(i + 1) of \(key.quoted) has kind \(number), which is not a tether_param_kind")
        }
        var slotKey: Key?
        if kind.takesKey {
            guard let keyPointer, keyPointer.pointee != 0 else {
                throw invalid("tether_register", "param \(i + 1) of \(key.quoted) is \(kind.cName) but its key is NULL or empty")
            }
            slotKey = KeyCache.key(keyPointer)
        }
        declared.append(Param(kind: kind, key: slotKey)!)
        kinds.append(kind.argumentType == .f64 ? .double : .word)
    }
    return (declared, kinds)
}

@_cdecl("tether_set_variadic")
public func tether_set_variadic(_ r: OpaquePointer?, _ fixed: Int) -> Int32 {
    abiCall { () throws(TetherError) in
        let registration = try liveRegistration(r, "tether_set_variadic")
        guard fixed > 0, fixed <= registration.params.count else {
            throw invalid("tether_set_variadic", "fixed_count \(fixed) must be between 1 and the \(registration.params.count) declared params of \(registration.key.quoted)")
        }
        // A new factory for this registration alone: its old one may serve others (`FFIFactory.shared`).
        registration.replaceFactory(try (registration.factory as! FFIFactory).variadic(fixed: fixed, arity: registration.params.count))
    }
}

@_cdecl("tether_set_scope")
public func tether_set_scope(_ r: OpaquePointer?, _ scope: Int32) -> Int32 {
    abiCall { () throws(TetherError) in
        let registration = try liveRegistration(r, "tether_set_scope")
        guard let scope = Scope(rawValue: scope) else { throw invalid("tether_set_scope", "\(scope) is not a tether_scope") }
        try registration.setScope(scope)
    }
}

@_cdecl("tether_set_context")
public func tether_set_context(_ r: OpaquePointer?, _ context: UnsafeMutableRawPointer?, _ drop: CDropFn?) -> Int32 {
    abiCall { () throws(TetherError) in
        try liveRegistration(r, "tether_set_context").setContext(context, cDestructor: drop)
    }
}

@_cdecl("tether_on_complete")
public func tether_on_complete(_ r: OpaquePointer?, _ fn: CCompleteFn?, _ context: UnsafeMutableRawPointer?) -> Int32 {
    abiCall { () throws(TetherError) in
        let registration = try liveRegistration(r, "tether_on_complete")
        guard let fn else { throw invalid("tether_on_complete", "the callback is NULL") }
        registration.addCompletion(CCompletion(fn, context: context))
    }
}

@_cdecl("tether_on_complete_params")
public func tether_on_complete_params(_ r: OpaquePointer?, _ fn: CCompleteArgsFn?, _ params: UnsafeRawPointer?, _ count: Int,
                                      _ context: UnsafeMutableRawPointer?) -> Int32 {
    abiCall { () throws(TetherError) in
        let function: StaticString = "tether_on_complete_params"
        let registration = try liveRegistration(r, function)
        guard let fn else { throw invalid(function, "the callback is NULL") }
        let declared = try completionParams(params, count, "the completion callback", registration.key, function)
        registration.addCompletion(CDeclaredCompletion(fn, params: declared, context: context))
    }
}

/// `revive(context, instance)` of `tether_registration_revive`.
public typealias CReviveFn = @convention(c) (UnsafeMutableRawPointer?, UnsafeMutableRawPointer?) -> UnsafeMutableRawPointer?

/// A binding's C reviver (`Reviver`).
private final class CReviver: Reviver, @unchecked Sendable {
    let fn: CReviveFn
    let context: UnsafeMutableRawPointer?
    init(_ fn: CReviveFn, _ context: UnsafeMutableRawPointer?) { (self.fn, self.context) = (fn, context) }
    func revive(_ pointer: UnsafeMutableRawPointer) -> UnsafeMutableRawPointer? { fn(context, pointer) }
}

@_cdecl("tether_registration_revive")
public func tether_registration_revive(_ r: OpaquePointer?, _ fn: CReviveFn?, _ context: UnsafeMutableRawPointer?) -> Int32 {
    abiCall { () throws(TetherError) in
        let registration = try liveRegistration(r, "tether_registration_revive")
        registration.setReviver(fn.map { CReviver($0, context) })
    }
}
