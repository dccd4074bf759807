import Synchronization

/// A weak reference to an instance: does not keep it alive, can be upgraded.
public final class WeakRef: Sendable {
    private let target: Mutex<WeakBox>
    /// The key of the instance, kept for messages after it is gone.
    public let key: Key

    public init(_ instance: Instance) {
        target = Mutex(WeakBox(instance))
        key = instance.key
    }

    /// The instance if it is still alive.
    public func upgrade() -> Instance? {
        target.withLock { $0.value }
    }
}

struct WeakBox: @unchecked Sendable {
    weak var value: Instance?
    init(_ value: Instance?) { self.value = value }
}
