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
