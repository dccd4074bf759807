import TetherCore

/// TETHER_DEFER_DROP in tether_registration_options.flags.
let deferDropFlag: UInt32 = 1

/// The caller's tether_drop buffer while a collecting resolve runs on this
/// thread: destructors of registrations marked TETHER_DEFER_DROP that come due
/// on the thread are stored here instead of called, until it is full; past it
/// they run in place, or (TETHER_RESOLVE_MORE_DROPS) go on in `more`, in order.
struct DropCollector {
    /// `capacity` tether_drop entries: { fn, instance, context }, 8 bytes each.
    let entries: UnsafeMutableRawPointer?
    let capacity: Int
    /// TETHER_RESOLVE_MORE_DROPS: drops past `capacity` are kept in `more`, not run in place.
    let keepsMore: Bool
    /// Drops stored: the first `capacity` in `entries`, the rest in `more`.
    var count = 0
    /// The drops past `capacity`, `moreCapacity` entries' room of the collector's own until `handOver`.
    private var more: UnsafeMutableRawPointer? = nil
    private var moreCapacity = 0

    init(entries: UnsafeMutableRawPointer?, capacity: Int, keepsMore: Bool) {
        self.entries = entries
        self.capacity = capacity
        self.keepsMore = keepsMore
    }

    /// Whether a drop coming due now is stored (not run in place).
    var hasRoom: Bool { count < capacity || keepsMore }

    /// The destructor of a TETHER_DEFER_DROP registration.
    static func deferrable(_ drop: @escaping CDropFn) -> Destructor {
        { instance, context in
            if let collector = HandleCache.current.pointee.drops, collector.pointee.add(drop, instance, context) { return }
            drop(instance, context)
        }
    }

    private mutating func add(_ drop: CDropFn, _ instance: UnsafeMutableRawPointer, _ context: UnsafeMutableRawPointer?) -> Bool {
        let entry: UnsafeMutableRawPointer
        if count < capacity, let entries {
            entry = entries + count * 24
        } else if keepsMore {
            entry = nextMore()
        } else {
            return false
        }
        entry.storeBytes(of: drop, as: CDropFn.self)
        entry.storeBytes(of: instance, toByteOffset: 8, as: UnsafeMutableRawPointer.self)
        entry.storeBytes(of: context, toByteOffset: 16, as: UnsafeMutableRawPointer?.self)
        count += 1
        return true
    }

    /// The entry of `more` for the drop coming due now, room grown (doubled) when full.
    private mutating func nextMore() -> UnsafeMutableRawPointer {
        let index = count - capacity
        if index == moreCapacity {
            moreCapacity = max(16, moreCapacity * 2)
            let grown = UnsafeMutableRawPointer.allocate(byteCount: moreCapacity * 24, alignment: 8)
            if let more {
                grown.copyMemory(from: more, byteCount: index * 24)
                more.deallocate()
            }
            more = grown
        }
        return more! + index * 24
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

    /// Once the call is over: the drops kept past `capacity` (nil if none), now the thread's
    /// (`HandleCache.Local.moreDrops`) until its next call that keeps some, or its exit, frees them.
    mutating func handOver() -> UnsafeMutableRawPointer? {
        guard let kept = more else { return nil }
        more = nil
        let locals = HandleCache.current
        locals.pointee.moreDrops?.deallocate()
        locals.pointee.moreDrops = kept
        return kept
    }
}
