import TetherCore

/// Providers from tether_make_provider, by code address, so tether_provider_free
/// can tell a live provider from anything else.
private let providers = Lock<[UInt: LazyCell]>([:])

@_cdecl("tether_make_provider")
public func tether_make_provider(_ c: OpaquePointer?, _ key: UnsafePointer<CChar>?, _ out: UnsafeMutablePointer<UnsafeRawPointer?>?) -> Int32 {
    abiCall { () throws(TetherError) in
        let out = try outParam(out, "tether_make_provider")
        let core = try containerArgument(c, "tether_make_provider")
        let cell = LazyCell(container: core, key: try keyArgument(key, "tether_make_provider"), isWeak: false)
        let code = try lendProvider(to: cell)
        providers.withLock { $0[UInt(bitPattern: code)] = cell }
        out.pointee = UnsafeRawPointer(code)
    }
}

@_cdecl("tether_provider_free")
public func tether_provider_free(_ provider: UnsafeRawPointer?) -> Int32 {
    abiCall { () throws(TetherError) in
        let cell = providers.withLock { $0.removeValue(forKey: UInt(bitPattern: provider)) }
        guard let cell else {
            throw TetherError(.invalidHandle, "tether_provider_free: that is not a live provider from tether_make_provider (already freed, NULL, or a lazy slot's provider, which is freed with its instance)")
        }
        _ = consume cell
    }
}

public typealias CProviderWatchFn = @convention(c) (UnsafeMutableRawPointer?, Int32, UnsafeMutableRawPointer?) -> Void

/// Binding protocol: tells `fn` what a lazy slot's provider answers from the
/// graph it was filled in (`LazyCell.watch`), for a binding whose own lazy
/// object outlives the slot.
@_cdecl("tether_provider_watch")
public func tether_provider_watch(_ provider: UnsafeRawPointer?, _ fn: CProviderWatchFn?, _ context: UnsafeMutableRawPointer?) -> Int32 {
    abiCall { () throws(TetherError) in
        guard let fn else { throw TetherError(.invalidArgument, "tether_provider_watch: fn is NULL") }
        guard let cell = providerCell(provider) else {
            throw TetherError(.invalidHandle, "tether_provider_watch: that is not a live provider (its instance was destroyed, or it was freed)")
        }
        let context = UInt(bitPattern: context)
        cell.watch { answer in
            switch answer {
            case .instance(let ref):
                guard let instance = ref.upgrade() else { return }
                fn(UnsafeMutableRawPointer(bitPattern: context), 0, instance.pointer)
            case .refused(let error):
                LastError.set(error)
                fn(UnsafeMutableRawPointer(bitPattern: context), error.code.rawValue, nil)
            }
        }
    }
}

/// Binding protocol: which of `chain` a lazy slot's provider or a factory slot's handle resolves
/// from (the cell's container: a singleton from further up has its own), for a binding whose own
/// object stands for the slot and must resolve where the library would.
@_cdecl("tether_slot_container")
public func tether_slot_container(_ provider: UnsafeRawPointer?, _ factory: OpaquePointer?, _ chain: UnsafePointer<OpaquePointer?>?,
                                  _ count: Int, _ index: UnsafeMutablePointer<Int>?) -> Int32 {
    let function: StaticString = "tether_slot_container"
    return abiCall { () throws(TetherError) in
        guard let index else { throw invalid(function, "index must not be NULL") }
        guard (provider == nil) != (factory == nil) else { throw invalid(function, "pass exactly one of a provider and a factory") }
        guard count == 0 || chain != nil else { throw invalid(function, "chain must not be NULL with a count") }
        let container: Container
        if provider != nil {
            guard let cell = providerCell(provider) else {
                throw TetherError(.invalidHandle, "tether_slot_container: that is not a live provider (its instance was destroyed, or it was freed)")
            }
            container = cell.container
        } else {
            container = try Handles.factories.get(factory, function).container
        }
        index.pointee = count
        for i in 0..<count where (try? Handles.containers.get(chain![i], function)) === container {
            index.pointee = i
            return
        }
    }
}

/// Binding protocol: a reference of the binding's own to the cell of LAZY slot `provider`, for a
/// binding whose own lazy object resolves anew through the slot (`tether_lazy_get`) where a call of
/// the provider could land on another slot's cell (its trampoline reused once the slot went).
@_cdecl("tether_lazy_hold")
public func tether_lazy_hold(_ provider: UnsafeRawPointer?, _ out: UnsafeMutablePointer<UnsafeMutableRawPointer?>?) -> Int32 {
    abiCall { () throws(TetherError) in
        let out = try outParam(out, "tether_lazy_hold")
        guard let cell = providerCell(provider) else {
            throw TetherError(.invalidHandle, "tether_lazy_hold: that is not a live provider (its instance was destroyed, or it was freed)")
        }
        guard !cell.isWeak else {
            throw invalid("tether_lazy_hold", "a weak-lazy slot's provider: its weak hold closes no retain cycle, resolve its key yourself")
        }
        out.pointee = Handoff.give(cell)
    }
}

/// Binding protocol: what a call of the held slot's provider answers (`LazyCell.call`: the first
/// resolves its key and holds it as a late strong edge of the slot's owner, refused when that edge
/// closes a retain cycle), with a strong handle of the caller's own to it in `out`.
@_cdecl("tether_lazy_get")
public func tether_lazy_get(_ held: UnsafeMutableRawPointer?, _ instance: UnsafeMutablePointer<UnsafeMutableRawPointer?>?,
                            _ out: UnsafeMutablePointer<OpaquePointer?>?) -> Int32 {
    abiCall { () throws(TetherError) in
        let instance = try outParam(instance, "tether_lazy_get")
        let out = try outParam(out, "tether_lazy_get")
        guard let held else { throw invalid("tether_lazy_get", "the held slot is NULL") }
        let cell = Borrowed<LazyCell>(opaque: held).object
        let pointer = try cell.callForBinding()
        // Its owner went during the call: what the cell held went with it (as a provider's call).
        guard let resolved = cell.resolved, resolved.pointer == pointer else {
            throw TetherError(.invalidHandle, "the lazy slot's owner was destroyed during the call: its result may be gone, so none is returned")
        }
        out.pointee = Handles.refs.insert(resolved)
        instance.pointee = pointer
    }
}

/// Binding protocol: gives up the reference `tether_lazy_hold` made.
@_cdecl("tether_lazy_release")
public func tether_lazy_release(_ held: UnsafeMutableRawPointer?) -> Int32 {
    abiCall { () throws(TetherError) in
        guard let held else { throw invalid("tether_lazy_release", "the held slot is NULL") }
        Handoff<LazyCell>.release(held)
    }
}
