/// A class reference kept as one machine word whose ownership the code tracks by
/// hand: the one door through which the core and the ABI use `Unmanaged`.
///
/// Why words and not ordinary references: the hot paths keep references in atomic
/// words (published specs, singletons, plans, table entries), in tails of
/// `ManagedBuffer`s and in stacks, where the retain and release an ordinary
/// reference costs on every copy would write a shared reference count (see
/// benchmarks/README.md). A `Ref` says at each site which of three things happens:
///
/// - **+0, borrowed** (`Ref(unretained:)`, `object`, `borrow`): the caller knows
///   something else keeps the object alive for as long as it is used; `borrow`
///   lends it to a closure without a retain/release pair (the stdlib's guaranteed
///   reference). A value that is only ever borrowed is a `Borrowed` instead
///   (Borrowed.swift), which cannot release what it refers to.
/// - **+1, owned** (`Ref(retaining:)`, `retain`, `release`, `take`): the holder of
///   the word owns one strong reference and gives it up exactly once.
/// - **as a word** (`word`, `Ref(word:)`, `opaque`, `Ref(opaque:)`): for atomics,
///   tagged words and C, which hold the address and not the type.
///
/// Published words, words in a table's blocks and a +1 handed through C have
/// helpers of their own (AtomicRef.swift, Handoff.swift): outside Runtime/, a
/// `Ref` is a +1 handed over.
///
/// Everything is `@inlinable @inline(__always)`: a `Ref` compiles to the same
/// instructions as the `Unmanaged` it wraps (profiled: benchmarks/c/profile.sh).
@frozen
public struct Ref<T: AnyObject> {
    @usableFromInline let unmanaged: Unmanaged<T>

    @inlinable @inline(__always)
    public init(_ unmanaged: Unmanaged<T>) { self.unmanaged = unmanaged }

    /// +0: refers to `object` without retaining it.
    @inlinable @inline(__always)
    public init(unretained object: T) { unmanaged = .passUnretained(object) }

    /// +1: retains `object`; whoever holds this `Ref` releases it once (`release`, `take`).
    @inlinable @inline(__always)
    public init(retaining object: T) { unmanaged = .passRetained(object) }

    /// The reference at `opaque` (an address from `opaque`, `word`, or C); ownership as it was given.
    @inlinable @inline(__always)
    public init(opaque: UnsafeRawPointer) { unmanaged = .fromOpaque(opaque) }

    /// The reference stored as `word`; nil for 0 (the empty word of atomics and tables).
    @inlinable @inline(__always)
    public init?(word: UInt) {
        guard let pointer = UnsafeRawPointer(bitPattern: word) else { return nil }
        unmanaged = .fromOpaque(pointer)
    }

    /// The object's address, for C and for handles.
    @inlinable @inline(__always)
    public var opaque: UnsafeMutableRawPointer { unmanaged.toOpaque() }

    /// The object's address as a word, for atomics and tagged words.
    @inlinable @inline(__always)
    public var word: UInt { UInt(bitPattern: unmanaged.toOpaque()) }

    /// The object, as a new strong reference the caller's scope manages (+0 on the word).
    @inlinable @inline(__always)
    public var object: T { unmanaged.takeUnretainedValue() }

    /// The object, consuming the +1 this word held.
    @inlinable @inline(__always)
    public func take() -> T { unmanaged.takeRetainedValue() }

    /// Adds one strong reference (the word now stands for one more owner).
    @inlinable @inline(__always) @discardableResult
    public func retain() -> Ref { Ref(unmanaged.retain()) }

    /// Gives up one strong reference this word stood for.
    @inlinable @inline(__always)
    public func release() { unmanaged.release() }

    /// Lends the object to `body` without retaining it: the caller guarantees it
    /// stays alive for the call (something else owns it).
    @inlinable @inline(__always)
    public func borrow<R, E: Error>(_ body: (T) throws(E) -> R) throws(E) -> R {
        do { return try unmanaged._withUnsafeGuaranteedRef(body) } catch { throw error as! E }
    }

    /// Whether two words refer to the same object.
    @inlinable @inline(__always)
    public static func === (a: Ref, b: Ref) -> Bool { a.unmanaged.toOpaque() == b.unmanaged.toOpaque() }
}
