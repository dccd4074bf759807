/// A weak reference to an instance: does not keep it alive, can be upgraded.
/// The reference is written only in `init`, so loads from any thread are safe
/// without a lock (Swift's weak load retains only a live object).
public final class WeakRef: @unchecked Sendable {
    private weak var target: Instance?
    /// The key of the instance, kept for messages after it is gone.
    public let key: Key

    public init(_ instance: Instance) {
        target = instance
        key = instance.key
    }

    /// The instance if it is still alive.
    public func upgrade() -> Instance? { target }
}

/// A weak reference in a value, for caches that swap it under their own lock.
struct WeakBox: @unchecked Sendable {
    weak var value: Instance?
    init(_ value: Instance?) { self.value = value }
}
