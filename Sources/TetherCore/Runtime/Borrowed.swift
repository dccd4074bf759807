import SwiftRuntime

/// A +0 reference: a class reference kept as one word that owns nothing.
///
/// What the resolve path passes around most (registrations, containers, specs,
/// plans, the thread's state) is kept alive by something else for as long as
/// it is used: the container keeps its registrations, a registration its specs
/// and plans, a thread its state. An ordinary reference would retain and release
/// on every copy (a write to a count other threads share); a `Borrowed` copies
/// as a word. Unlike `Ref`, it cannot release or take what it refers to: the
/// type says that nothing is owned, and a +1 is made only by `retained()`,
/// whose `Ref` the caller then owns. Same instructions as the `Unmanaged` it
/// wraps (`@inline(__always)` throughout).
@frozen
public struct Borrowed<T: AnyObject> {
    @usableFromInline let unmanaged: Unmanaged<T>

    /// Refers to `object` without retaining it: something else keeps it alive while this is used.
    @inlinable @inline(__always)
    public init(_ object: T) { unmanaged = .passUnretained(object) }

    @inlinable @inline(__always)
    init(unmanaged: Unmanaged<T>) { self.unmanaged = unmanaged }

    /// The reference at `opaque` (a handle's or a `word`'s address), not retained.
    @inlinable @inline(__always)
    public init(opaque: UnsafeRawPointer) { unmanaged = .fromOpaque(opaque) }

    /// The reference stored as `word`, not retained; nil for 0 (an empty atomic word).
    @inlinable @inline(__always)
    public init?(word: UInt) {
        guard let pointer = UnsafeRawPointer(bitPattern: word) else { return nil }
        unmanaged = .fromOpaque(pointer)
    }

    /// The object, as a strong reference the caller's scope manages.
    @inlinable @inline(__always)
    public var object: T { unmanaged.takeUnretainedValue() }

    /// Lends the object to `body` without a retain/release pair.
    @inlinable @inline(__always)
    public func borrow<R, E: Error>(_ body: (T) throws(E) -> R) throws(E) -> R {
        do { return try unmanaged._withUnsafeGuaranteedRef(body) } catch { throw error as! E }
    }

    /// A new strong reference (+1), which the caller owns and gives up once (`Ref.release`, `Ref.take`).
    @inlinable @inline(__always)
    public func retained() -> Ref<T> { Ref(unmanaged.retain()) }

    /// A new strong reference (+1) unless the object's count already reached zero (it is being
    /// destroyed): how a weak reference upgrades (`WeakRef`, a provider trampoline's cell), under the
    /// lock its deinit takes.
    @inline(__always)
    package func tryRetained() -> Ref<T>? { swift_tryRetain(opaque) == nil ? nil : Ref(unmanaged) }

    /// The object's address as a word, for atomics and tagged words.
    @inlinable @inline(__always)
    public var word: UInt { UInt(bitPattern: unmanaged.toOpaque()) }

    /// The object's address, for C and for handles.
    @inlinable @inline(__always)
    public var opaque: UnsafeMutableRawPointer { unmanaged.toOpaque() }

    /// Whether two words refer to the same object.
    @inlinable @inline(__always)
    public static func === (a: Borrowed, b: Borrowed) -> Bool { a.unmanaged.toOpaque() == b.unmanaged.toOpaque() }
}

extension Ref {
    /// The same reference, seen as +0 (the `Ref`'s owner keeps it alive meanwhile).
    @inlinable @inline(__always)
    public var borrowed: Borrowed<T> { Borrowed(unmanaged: unmanaged) }
}
