/// What a FACTORY slot (`Param.factory`) hands the dependent: builds `key` from the
/// container the dependent was resolved from, with runtime arguments given per call
/// and its other dependencies injected as usual (an ordinary top-level resolve).
public final class FactoryCell: @unchecked Sendable {
    public let container: Container
    public let key: Key

    public init(container: Container, key: Key) {
        container.noteReachedBesidesHandle()  // a call through the cell may read its table from any thread
        self.container = container
        self.key = key
    }

    /// A new instance of `key` built with `arguments`, with a reference for the caller.
    package func make(_ arguments: UnsafeBufferPointer<Argument>) throws(TetherError) -> Ref<Instance> {
        guard !container.isClosed else {
            throw TetherError(.invalidHandle, "the container of this factory for \(key.quoted) was freed; do not call a factory after its container")
        }
        return try container.resolveRetained(key, arguments: arguments)
    }
}
