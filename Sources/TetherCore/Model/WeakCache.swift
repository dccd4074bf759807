import Synchronization

/// A registration's weak-scope cache (in `Registration.Rare`: only weak-scoped registrations
/// make one): the instance published, if alive, and what a binding that hands its own object
/// out again reads of it (`epoch`, the reviver). Written under the registration's lock.
struct WeakCache: ~Copyable {
    /// The cached instance, if still alive.
    private var box = WeakBox(nil)
    /// `Registration.weakEpoch`.
    let epoch = Atomic<UInt>(WeakCache.emptyEpoch)
    /// The binding's reviver (`Registration.revivedObject`), and the pointer of the last instance
    /// published (nil once a reset or the like emptied the cache).
    var reviver: (any Reviver)?
    private var pointer: UnsafeMutableRawPointer?

    /// `epoch` before anything was published.
    static var emptyEpoch: UInt { 1 }

    init() {}

    /// The cached instance, retained, if alive.
    var retained: Ref<Instance>? { box.retained }

    /// Caches `instance` (the epoch turns even if the cache was emptied).
    mutating func publish(_ instance: Instance) {
        box = WeakBox(instance)
        pointer = instance.pointer
        if epoch.load(ordering: .relaxed) & 1 != 0 { epoch.add(1, ordering: .releasing) }
    }

    /// Empties the cache for a reason other than the instance dying (the epoch turns odd);
    /// false when it was emptied so already.
    mutating func forget() -> Bool {
        guard epoch.load(ordering: .relaxed) & 1 == 0 else { return false }
        box = WeakBox(nil)
        pointer = nil
        epoch.add(1, ordering: .releasing)
        return true
    }

    /// The reviver and the last published pointer, when the cache holds a published instance's
    /// place (even epoch) and a reviver was set.
    var revivable: (any Reviver, UnsafeMutableRawPointer)? {
        guard let reviver, let pointer, epoch.load(ordering: .relaxed) & 1 == 0 else { return nil }
        return (reviver, pointer)
    }

    /// A failed resolve made the object at `pointer`: if it was the last one published, there is nothing to revive.
    mutating func forgetPublished(at pointer: UnsafeMutableRawPointer) {
        if self.pointer == pointer { self.pointer = nil }
    }
}
