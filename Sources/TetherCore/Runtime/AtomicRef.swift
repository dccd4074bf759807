import Synchronization

/// An atomic word holding a class reference or nothing: how an object is
/// published to lock-free readers (a registration's spec, plans and singleton
/// slot, a container's children, a key's default spec, the tracer).
///
/// Readers `load` a `Borrowed`: the word never owns for them, and what it
/// refers to stays alive as long as the word's owner says (each site's comment
/// says who keeps it). A writer says whether the word owns what it publishes:
/// `publish(retaining:)` and `publishOnce(retaining:)` store a +1 that `take`
/// or `releaseOwned` gives up once; `publish(_:)` stores a +0 whose object
/// something else keeps. Stores are releasing and loads acquiring (the
/// `Relaxed` loads say so), so a reader sees the object as it was published.
@frozen
public struct AtomicRef<T: AnyObject>: ~Copyable {
    @usableFromInline let word: Atomic<UInt>

    @inlinable @inline(__always)
    public init() { word = Atomic<UInt>(0) }

    /// The published object, not retained; nil when nothing is.
    @inlinable @inline(__always)
    public func load() -> Borrowed<T>? { Borrowed(word: word.load(ordering: .acquiring)) }

    /// The published object's address as a word, or 0: to compare, never to dereference.
    @inlinable @inline(__always)
    public func loadWord() -> UInt { word.load(ordering: .acquiring) }

    /// `loadWord()` with no ordering, for a caller whose barrier orders it.
    @inlinable @inline(__always)
    public func loadWordRelaxed() -> UInt { word.load(ordering: .relaxed) }

    /// Whether nothing is published (relaxed: for a writer that holds the lock writers take).
    @inlinable @inline(__always)
    public var isEmpty: Bool { word.load(ordering: .relaxed) == 0 }

    /// Publishes `object` at +0: something else keeps it alive as long as readers may load it.
    @inlinable @inline(__always)
    public func publish(_ object: Borrowed<T>) { word.store(object.word, ordering: .releasing) }

    /// Publishes `object` at +1: the word owns it until `take` or `releaseOwned`.
    /// Whatever the word owned before is the caller's to have taken first.
    @inlinable @inline(__always)
    public func publish(retaining object: T) { word.store(Ref(retaining: object).word, ordering: .releasing) }

    /// The published object, publishing `make()` at +1 first if nothing is; when two
    /// threads race, one object wins and the other is released (never seen by a reader).
    @inlinable @inline(__always)
    public func publishOnce(retaining make: () -> T) -> Borrowed<T> {
        if let published = load() { return published }
        let made = Ref(retaining: make())
        let (won, seen) = word.compareExchange(expected: 0, desired: made.word, ordering: .acquiringAndReleasing)
        if won { return made.borrowed }
        made.release()
        return Borrowed(word: seen)!
    }

    /// Publishes `object` at +1 in place of what the word held, which the caller gets, owned
    /// as the word owned it (a +0 that it held is the caller's to leave alone).
    @inlinable @inline(__always)
    public func exchange(retaining object: T) -> Ref<T>? {
        Ref(word: word.exchange(Ref(retaining: object).word, ordering: .acquiringAndReleasing))
    }

    /// Empties the word; the caller gets the +1 it owned (nil: it was empty).
    @inlinable @inline(__always)
    public func take() -> Ref<T>? {
        let old = word.exchange(0, ordering: .relaxed)
        return old == 0 ? nil : Ref(word: old)!
    }

    /// Empties a word that held a +0: the object it referred to, if any (acquiring and releasing:
    /// readers that load after it see nothing, and the caller sees the object as published).
    @inlinable @inline(__always)
    public func unpublish() -> Borrowed<T>? { Borrowed(word: word.exchange(0, ordering: .acquiringAndReleasing)) }

    /// Releases the +1 the word owned, if any, and empties it (deinit; nothing reads it any more).
    @inlinable @inline(__always)
    public func releaseOwned() { take()?.release() }
}

/// A word that owns a +1 reference, kept in memory laid out by its owner (the
/// registration table's entries, which sit among key words in blocks of atomic
/// words): what `AtomicRef` does for a word of its own. 0 owns nothing.
@usableFromInline
enum OwnedWord<T: AnyObject> {
    /// A word owning a new +1 of `object` (0 for nil).
    @inlinable @inline(__always)
    static func make(_ object: T?) -> UInt { object.map { Ref(retaining: $0).word } ?? 0 }

    /// The object `word` owned, its +1 now the caller's (nil for 0).
    @inlinable @inline(__always)
    static func take(_ word: UInt) -> T? { word == 0 ? nil : Ref<T>(word: word)!.take() }

    /// Gives up the +1 `word` owned (nothing for 0).
    @inlinable @inline(__always)
    static func release(_ word: UInt) { if word != 0 { Ref<T>(word: word)!.release() } }

    /// Whether the +1 `word` owns is the only strong reference to its object (the word keeps it).
    static func isOnlyReference(_ word: UInt) -> Bool {
        var object = Ref<T>(word: word)!.take()
        defer { _ = Ref(retaining: object) }  // the word's reference, given back
        return isKnownUniquelyReferenced(&object)
    }
}
