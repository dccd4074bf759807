/// Swift objects as instances, for Swift clients: a factory returns the object
/// itself and takes its dependencies as objects, a completion callback gets its
/// declared targets as objects. An instance of such a registration is its
/// object (its pointer; the instance's destructor releases it), so a resolve
/// that hands out only the root object (`Container.resolve(_:as:)`) can let
/// ARC keep the graph: for a plan whose every node is a plain object
/// (`InstanceSpec.plainObject`) it makes no `Instance` at all, and each
/// dependency is handed to its first dependent's factory with the reference
/// the graph holds (no retain, no release), as hand-written `A(b: B(c: C()))` does.

/// The objects a factory or completion callback receives, one per declared
/// param. `object(i)` gives an owned reference: in a plan's object resolve the
/// first call takes over the graph's own reference, so a dependency stored by
/// its one dependent costs no reference counting; references nobody took are
/// released after the call.
public struct ObjectArguments {
    /// Object addresses, one word a param; `taken` set in a word whose reference was taken (`owns` only).
    @usableFromInline let words: UnsafeMutableRawPointer
    public let count: Int
    /// Whether the words hold references for the callee (else the graph's instances hold the objects).
    @usableFromInline let owns: Bool
    @usableFromInline static var taken: UInt { 1 }

    @usableFromInline init(words: UnsafeMutableRawPointer, count: Int, owns: Bool) {
        self.words = words
        self.count = count
        self.owns = owns
    }

    /// Param `i`'s object, owned by the caller. `T` must be the class the
    /// dependency's factory made (checked in debug builds only).
    @inlinable @inline(__always)
    public func object<T: AnyObject>(_ i: Int, as type: T.Type = T.self) -> T {
        precondition(i >= 0 && i < count, "Tether: no param \(i)")
        let word = words.load(fromByteOffset: i &* 8, as: UInt.self)
        if owns && word & Self.taken == 0 {
            words.storeBytes(of: word | Self.taken, toByteOffset: i &* 8, as: UInt.self)
            return unsafeDowncast(OwnedWord<AnyObject>.take(word)!, to: T.self)
        }
        return unsafeDowncast(Borrowed<AnyObject>(word: word & ~Self.taken)!.object, to: T.self)
    }

    /// Param `i`'s object, borrowed for `body` (no reference counting): to use it,
    /// or to store it in a `weak` or `unowned` property. `T` as for `object(_:as:)`.
    @inlinable @inline(__always)
    public func withObject<T: AnyObject, R>(_ i: Int, as type: T.Type = T.self, _ body: (T) throws -> R) rethrows -> R {
        precondition(i >= 0 && i < count, "Tether: no param \(i)")
        let word = words.load(fromByteOffset: i &* 8, as: UInt.self)
        return try Borrowed<T>(word: word & ~Self.taken)!.borrow(body)
    }

    /// After the call (`owns`): releases what the callee did not take.
    func releaseUntaken() {
        for i in 0..<count {
            let word = words.load(fromByteOffset: i &* 8, as: UInt.self)
            if word & Self.taken == 0 { OwnedWord<AnyObject>.release(word) }
        }
    }
}

/// Builds a Swift object from its dependencies (`.dependency` params; a
/// subclass overrides `make`). Register it with `Container.register(_:params:factory:)`.
/// Its dependencies must be `ObjectFactory` registrations too: what other
/// factories make are not objects (`ObjectArguments` cannot tell). The weak
/// scope shares an instance while something holds the instance, which objects
/// holding objects do not: `resolve(_:as:)` refuses a weak-scoped key, and a
/// weak-scoped dependency is shared only while its instance is held elsewhere.
open class ObjectFactory: Factory, @unchecked Sendable {
    public override init() {}

    /// The new object; `arguments.object(i)` is the dependency of param `i`.
    open func make(_ arguments: ObjectArguments) throws(CallbackFailure) -> AnyObject {
        fatalError("Tether: \(Self.self) must override make(_:)")
    }

    /// The object as an instance's pointer (which owns it), for resolves that make instances.
    public final override func make(_ words: UnsafeMutablePointer<UInt64>, count: Int) throws(CallbackFailure) -> UnsafeMutableRawPointer {
        Handoff.give(try make(ObjectArguments(words: UnsafeMutableRawPointer(words), count: count, owns: false)))
    }
}

/// A completion callback of an `ObjectFactory` registration with declared
/// targets: `.weak(K)` (the object of K in the same graph, for a weak
/// reference) or `.dependency(K)` (a strong edge). A plan's object resolve
/// hands them over without a resolver (a subclass overrides `complete(_:with:)`).
open class ObjectCompletion: DeclaredCompletion, @unchecked Sendable {
    public override init(params: [Param]) {
        super.init(params: params)
    }

    /// Completes `object`; `arguments.object(i)` is the target of param `i`.
    open func complete(_ object: AnyObject, with arguments: ObjectArguments) throws(CallbackFailure) {
        fatalError("Tether: \(Self.self) must override complete(_:with:)")
    }

    /// For resolves that make instances: the targets' objects.
    public final override func complete(_ instance: Instance, targets: UnsafeBufferPointer<Borrowed<Instance>>) throws(CallbackFailure) {
        guard instance.spec.holdsObject, targets.allSatisfy({ $0.borrow(\.spec.holdsObject) }) else {
            throw CallbackFailure(reason: "an ObjectCompletion completes and targets ObjectFactory registrations only", code: .invalidArgument)
        }
        var words = targets.map { UInt64(UInt(bitPattern: $0.borrow(\.pointer))) }
        let object = Borrowed<AnyObject>(opaque: instance.pointer).object
        let failure = words.withUnsafeMutableBytes { buffer -> CallbackFailure? in
            do throws(CallbackFailure) {
                try complete(object, with: ObjectArguments(words: buffer.baseAddress ?? UnsafeMutableRawPointer(bitPattern: 8)!,
                                                           count: params.count, owns: false))
            } catch { return error }
            return nil
        }
        if let failure { throw failure }
    }
}

/// An object resolve's result, consumed by a switch so the object moves out
/// (a Result's `get()` copies it: a retain and a release).
enum ObjectOutcome {
    case root(AnyObject)
    /// The plan cannot make it: resolve with instances.
    case declined
    case failure(TetherError)
}

/// The destructor of an `ObjectFactory` registration's instances: the release of its object.
let releaseObject: Destructor = { pointer, _ in Handoff<AnyObject>.release(pointer) }
