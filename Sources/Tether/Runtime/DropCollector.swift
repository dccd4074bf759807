import TetherCore

/// TETHER_DEFER_DROP in tether_registration_options.flags.
let deferDropFlag: UInt32 = 1

/// The caller's tether_drop buffer while a collecting resolve runs on this
/// thread: destructors of registrations marked TETHER_DEFER_DROP that come due
/// on the thread are stored here instead of called, until it is full.
struct DropCollector {
    /// `capacity` tether_drop entries: { fn, instance, context }, 8 bytes each.
    let entries: UnsafeMutableRawPointer?
    let capacity: Int
    var count = 0

    /// The destructor of a TETHER_DEFER_DROP registration.
    static func deferrable(_ drop: @escaping CDropFn) -> Destructor {
        { instance, context in
            if let collector = HandleCache.current.pointee.drops, collector.pointee.add(drop, instance, context) { return }
            drop(instance, context)
        }
    }

    private mutating func add(_ drop: CDropFn, _ instance: UnsafeMutableRawPointer, _ context: UnsafeMutableRawPointer?) -> Bool {
        guard count < capacity, let entries else { return false }
        let entry = entries + count * 24
        entry.storeBytes(of: drop, as: CDropFn.self)
        entry.storeBytes(of: instance, toByteOffset: 8, as: UnsafeMutableRawPointer.self)
        entry.storeBytes(of: context, toByteOffset: 16, as: UnsafeMutableRawPointer?.self)
        count += 1
        return true
    }

    /// Runs `body` with `self` as the thread's innermost collector.
    mutating func collect<R>(_ body: (UnsafeMutablePointer<DropCollector>) -> R) -> R {
        let locals = HandleCache.current
        let outer = locals.pointee.drops
        defer { locals.pointee.drops = outer }
        return withUnsafeMutablePointer(to: &self) { me in
            locals.pointee.drops = me
            return body(me)
        }
    }
}
