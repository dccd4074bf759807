import Synchronization

/// What every instance of one registration configuration shares: its key, its
/// destructor and context. Immutable once anyone but its registration can see it (`reuse`);
/// a registration swaps in a new one on change.
/// Instances hold a copy of their thread's (`ThreadSpecs`), never the registration's own.
/// The copies' extra field lives in a subclass (`InstanceSpecCopy`): a registration's own
/// specs do not need it.
/// Unchecked Sendable only because a Sendable class must be final: every field is a `let`.
public class InstanceSpec: @unchecked Sendable {
    public let key: Key
    public private(set) final var scope: Scope
    /// The embedding layer may hand `destructor` calls back to its caller
    /// instead of making them (the ABI's TETHER_DEFER_DROP); the core only keeps the flag.
    public let defersDrop: Bool
    /// Instances are Swift objects an `ObjectFactory` made: the destructor ends with their release.
    public let holdsObject: Bool
    /// A client destructor runs before that release (`with(destructor:)`).
    let hasClientDestructor: Bool
    nonisolated(unsafe) public private(set) final var context: UnsafeMutableRawPointer?
    public let destructor: Destructor?
    /// A C destructor, called directly (`destroy`); only ever set while `destructor` is nil.
    nonisolated(unsafe) private(set) final var cDestructor: CDestructor?
    /// `completions`, each in a box of this spec's (`CompletionBox`), kept by `boxesHeld`.
    private let boxes: [Borrowed<CompletionBox>]
    private let boxesHeld: [CompletionBox]

    init(key: Key, scope: Scope, context: UnsafeMutableRawPointer?, destructor: Destructor?, cDestructor: CDestructor? = nil,
         completions: [Completion], defersDrop: Bool = false, holdsObject: Bool = false, hasClientDestructor: Bool = false) {
        self.key = key
        self.scope = scope
        self.context = context
        self.destructor = destructor
        self.cDestructor = destructor == nil ? cDestructor : nil
        boxesHeld = completions.map(CompletionBox.init)
        boxes = boxesHeld.map(Borrowed.init)
        self.defersDrop = defersDrop
        self.holdsObject = holdsObject
        self.hasClientDestructor = hasClientDestructor
    }

    /// This spec, which nothing but its holder references and no one else can reach (the previous
    /// request's value spec of a reused child: `Container.provideValue`), made what
    /// `with(scope:context:cDestructor:)` would make of a spec with nothing but a C destructor, a
    /// context and a scope (no callbacks, no Swift destructor, no object), in place of a new one.
    final func reuse(scope: Scope, context: UnsafeMutableRawPointer?, cDestructor: CDestructor?) -> InstanceSpec {
        self.scope = scope
        self.context = context
        self.cDestructor = cDestructor
        return self
    }

    /// Runs the destructor, if any, on an instance's `pointer` (with this spec's context).
    @inline(__always)
    final func destroy(_ pointer: UnsafeMutableRawPointer) {
        if let cDestructor { cDestructor(pointer, context) } else { destructor?(pointer, context) }
    }

    public final var completions: [Completion] { boxes.map { $0.object.completion } }

    final var completionCount: Int { boxes.count }

    /// Runs completion callback `n` without retaining it (see `CompletionBox`).
    @inline(__always)
    final func complete(_ n: Int, _ resolver: Resolver, instance: Instance) throws(CallbackFailure) {
        try boxes[n].borrow { box -> Result<Void, CallbackFailure> in
            do throws(CallbackFailure) { try box.completion.complete(resolver, instance: instance) } catch { return .failure(error) }
            return .success(())
        }.get()
    }

    /// `holdsObject` with nothing else to destroy: ARC alone can keep such
    /// instances (`Plan`'s object resolve makes none).
    final var plainObject: Bool { holdsObject && !hasClientDestructor && !defersDrop }

    /// A new destructor of a spec that `holdsObject` runs before the object's release. A C
    /// destructor (`cDestructor`) replaces the destructor as `destructor` would.
    final func with(scope: Scope? = nil, context: UnsafeMutableRawPointer?? = nil, destructor: Destructor?? = nil,
                    cDestructor: CDestructor?? = nil, completions: [Completion]? = nil, defersDrop: Bool? = nil) -> InstanceSpec {
        var newDestructor = self.destructor, newC = self.cDestructor, client = hasClientDestructor
        var destructor = destructor
        if let cDestructor {
            // An object's release must follow the C destructor: then it goes in a closure, as a Swift one.
            if holdsObject { destructor = .some(cDestructor.map { c in { pointer, context in c(pointer, context) } }) }
            else { newC = cDestructor; newDestructor = nil }
        }
        if let destructor {
            newC = nil
            newDestructor = destructor
            if holdsObject {
                if let given = destructor {
                    newDestructor = { pointer, context in
                        given(pointer, context)
                        releaseObject(pointer, context)
                    }
                } else {
                    newDestructor = releaseObject
                }
                client = destructor != nil
            }
        }
        return InstanceSpec(key: key, scope: scope ?? self.scope, context: context ?? self.context,
                            destructor: newDestructor, cDestructor: newC, completions: completions ?? self.completions,
                            defersDrop: defersDrop ?? self.defersDrop, holdsObject: holdsObject, hasClientDestructor: client)
    }
}

/// What an instance holds besides its edges (the header of its allocation).
public struct InstanceHeader {
    let pointer: UnsafeMutableRawPointer
    /// The making thread's copy (`ThreadSpecs`).
    let spec: InstanceSpec
    /// Strong constructor edges, or the rare instance's side storage, in one
    /// word (see `Instance`). Once the instance may be shared it changes only
    /// once, atomically, when the side object is installed (`sideForWriting`).
    var edges: UInt
}

/// A factory's result in a reference-counted box: it remembers its destructor
/// and its outgoing edges. The destructor runs exactly once, when the last strong
/// reference (handle, edge or scope cache) goes; then the box's own strong edges
/// are released, so dependents die before their dependencies.
///
/// One allocation: a leaf costs 40 bytes, and constructor edges are plain
/// edge words (`SplitEdge`: retained references, or split ones to a published
/// singleton; no array machinery on the resolve and release paths).
/// `header.edges` is 0 (no edges), one ordinary reference tagged `singleTag`, a count
/// tagged `tailTag` whose edge words follow the header in the allocation, a
/// count of words tagged `blockTag` that hold a whole graph's other nodes
/// (`InstanceBlock`), or (tag `sideTag`) the instance's retained `WeakRef`, made
/// when something first takes a weak reference or the instance gains late edges
/// or lazy cells; its `dependencies` word then holds one of the others.
public final class Instance: ManagedBuffer<InstanceHeader, Ref<Instance>> {
    private static var tagMask: UInt { 7 }
    private static var sideTag: UInt { 1 }
    private static var singleTag: UInt { 2 }
    private static var tailTag: UInt { 3 }
    private static var blockTag: UInt { 4 }
    private static var countShift: UInt { 3 }

    /// A new instance taking over the reference `spec` carries (see `ThreadSpecs.retainedCopy`), the
    /// reference of each of its `count` dependencies' edge words (`edge(n)`, asked once each, in
    /// order: `SplitEdge`) and the edges in `late`; the caller owns the reference returned.
    static func make(pointer: UnsafeMutableRawPointer, spec: Ref<InstanceSpec>, dependencies count: Int,
                     edge: (Int) -> UInt, late: LateEdges? = nil) -> Ref<Instance> {
        var edges: UInt = 0
        var first: UInt = 0
        if count == 1 {
            first = edge(0)
            // A split edge keeps its tag: it goes in the tail (a single word's low bits are the tag).
            edges = first & SplitEdge.bit == 0 ? first | singleTag : 1 << countShift | tailTag
        } else if count > 1 {
            edges = UInt(count) << countShift | tailTag
        }
        // Made and cast in one expression, as `makeBlock`: a `buffer` bound apart was released at the
        // end and `instance` retained for it (a pair per instance with a tail).
        let instance = unsafeDowncast(create(minimumCapacity: edges & tagMask == tailTag ? count : 0) { _ in
            InstanceHeader(pointer: pointer, spec: spec.take(), edges: edges)
        }, to: Instance.self)
        if edges & tagMask == tailTag {
            instance.withTail { tail in
                for i in 0..<count { tail[i] = count == 1 ? first : edge(i) }
            }
        }
        if let late { instance.sideForWriting().late = late }
        return .init(retaining: consume instance)  // consumed: the reference `create` made, with no retain and release
    }

    /// `make` with ordinary references only (`reference(n)`, each handed over).
    static func make(pointer: UnsafeMutableRawPointer, spec: Ref<InstanceSpec>, dependencies count: Int,
                     reference: (Int) -> Ref<Instance>, late: LateEdges? = nil) -> Ref<Instance> {
        make(pointer: pointer, spec: spec, dependencies: count, edge: { reference($0).word }, late: late)
    }

    /// The root of a block (`InstanceBlock`) of `words` words, which `fill`
    /// writes; `spec` as in `make`, a copy that keeps the block's plan alive.
    static func makeBlock(pointer: UnsafeMutableRawPointer, spec: Ref<InstanceSpec>, words: Int,
                          fill: (InstanceBlock) -> Void) -> Ref<Instance> {
        let instance = unsafeDowncast(create(minimumCapacity: words) { _ in
            InstanceHeader(pointer: pointer, spec: spec.take(), edges: UInt(words) << countShift | blockTag)
        }, to: Instance.self)
        instance.withBlock(fill)
        return .init(retaining: consume instance)  // as in `make`
    }

    private func withBlock<R>(_ body: (InstanceBlock) -> R) -> R {
        withTail { body(InstanceBlock(words: $0)) }
    }

    /// The tail as words: a block's, or edge words (`SplitEdge`) in place of the tail's references.
    private func withTail<R>(_ body: (UnsafeMutablePointer<UInt>) -> R) -> R {
        withUnsafeMutablePointerToElements { tail in
            UnsafeMutableRawPointer(tail).withMemoryRebound(to: UInt.self, capacity: 1, body)
        }
    }

    public var pointer: UnsafeMutableRawPointer { header.pointer }
    public var spec: InstanceSpec { header.spec }
    public var key: Key { header.spec.key }

    deinit {
        let word = header.edges
        // The rare instance with a side object (weak references, late edges) out of line: the
        // common one reads no optional tuple.
        if word & Self.tagMask == Self.sideTag { return deinitWithSide(word) }
        let pointer = header.pointer
        let spec = Borrowed(header.spec)
        ThreadState.currentReference.borrow { state in
            ReleaseQueue.destroy(state) { spec.borrow { $0.destroy(pointer) } }
            // Released without recursing once per level, so a 10,000-deep chain
            // cannot overflow the stack (see ReleaseQueue). The header (the spec) goes after this.
            if word != 0 { release(word, nil, state) }
        }
    }

    /// `deinit` of an instance with a side object: detached first, so from here on no weak
    /// reference upgrades to this instance.
    @inline(never)
    private func deinitWithSide(_ word: UInt) {
        var side = OwnedWord<WeakRef>.take(word & ~Self.tagMask)!.detach()
        let pointer = header.pointer
        let spec = Borrowed(header.spec)
        ThreadState.currentReference.borrow { state in
            ReleaseQueue.destroy(state) { spec.borrow { $0.destroy(pointer) } }
            release(side.dependencies, side.late.take(), state)  // moved: see `ReleaseQueue.queue`
        }
    }

    /// Releases what the edge word `word` holds, then `late`.
    @inline(__always)
    private func release(_ word: UInt, _ late: consuming LateEdges?, _ state: ThreadState) {
        var late = late
        if word & Self.tagMask == Self.blockTag {
            withBlock { $0.release(late.take(), state) }
        } else {
            withTargets(word) { ReleaseQueue.release($0, late.take(), state) }
        }
    }

    /// The edge words (`SplitEdge`) of the constructor edge word `word` (this instance's), without consuming them.
    @inline(__always)
    private func withTargets<R>(_ word: UInt, _ body: (UnsafeBufferPointer<UInt>) -> R) -> R {
        switch word & Self.tagMask {
        case Self.singleTag:
            var single = word & ~Self.tagMask
            return withUnsafePointer(to: &single) { body(UnsafeBufferPointer(start: $0, count: 1)) }
        case Self.tailTag:
            return withTail { body(UnsafeBufferPointer(start: $0, count: Int(word >> Self.countShift))) }
        default:
            return body(UnsafeBufferPointer(start: nil, count: 0))
        }
    }

    /// `header.edges` as an atomic, for the one change made to it once the
    /// instance may be shared: installing the side object.
    private var edgeWord: UnsafeMutablePointer<Atomic<UInt>> {
        withUnsafeMutablePointerToHeader { header in
            (UnsafeMutableRawPointer(header) + MemoryLayout<InstanceHeader>.offset(of: \.edges)!).assumingMemoryBound(to: Atomic<UInt>.self)
        }
    }

    private static func side(_ word: UInt) -> WeakRef? {
        guard word & tagMask == sideTag else { return nil }
        return Borrowed<WeakRef>(word: word & ~tagMask)!.object
    }

    /// The side object, if the instance has one.
    private var side: WeakRef? { Self.side(edgeWord.pointee.load(ordering: .acquiring)) }

    /// The side object, made on first use: it takes over the constructor edge
    /// word. Lock-free (weak references to one instance are taken from many
    /// threads): of two threads installing one, the second uses the first's.
    private func sideForWriting() -> WeakRef {
        var word = edgeWord.pointee.load(ordering: .acquiring)
        while true {
            if let side = Self.side(word) { return side }
            let side = WeakRef(Borrowed(self), key: header.spec.key)
            side.dependencies = word
            let installed = OwnedWord.make(side)  // the edge word's reference to its side object
            let (exchanged, found) = edgeWord.pointee.compareExchange(
                expected: word, desired: installed | Self.sideTag, ordering: .acquiringAndReleasing)
            if exchanged { return side }
            OwnedWord<WeakRef>.release(installed)
            word = found
        }
    }

    /// The weak reference every weak edge to this instance shares.
    public var weakRef: WeakRef { sideForWriting() }

    /// The split count of a published singleton's edges (`SingletonSlot.splitReference`),
    /// for a holder of a split reference (so the side object has one). Unretained: the
    /// instance keeps its side object (a retain would write a shared line).
    var splitCount: SplitCount {
        let word = edgeWord.pointee.load(ordering: .acquiring)
        return Borrowed<WeakRef>(word: word & ~Self.tagMask)!.borrow { $0.splitCount }
    }

    /// Visits every strong edge target. Caller holds `EdgeLock`.
    func forEachStrongEdge(_ body: (Instance) -> Bool) -> Bool {
        let side = self.side
        let word = side?.dependencies ?? header.edges
        let constructorEdges = word & Self.tagMask == Self.blockTag
            ? withBlock { $0.forEachExternal(body) }
            : withTargets(word) { targets in targets.allSatisfy { SplitEdge.target($0).borrow(body) } }
        guard constructorEdges, let side else { return constructorEdges }
        return side.late?.strong.allSatisfy(body) ?? true
    }

    /// Adds a strong edge made after construction (resolver or lazy), refusing one
    /// that would close a cycle of strong edges.
    func addLateStrongEdge(to target: Instance, backEdge: String = "use tether_resolver_get_weak for the back edge",
                           fix: ErrorParts.Fix = .weakEdge) throws(TetherError) {
        let path: [Key]? = EdgeLock.withLock {
            if let path = StrongPath.find(from: target, to: self) { return path }
            let side = sideForWriting()
            if side.late == nil { side.late = LateEdges() }
            side.late!.strong.append(target)
            return nil
        }
        if let path { throw TetherError.retainCycle(from: key, to: target.key, path: path, backEdge: backEdge, fix: fix) }
    }

}

/// Guards late edges (they can be added after an instance is published) and
/// keeps the graph of strong edges still while `StrongPath.find` walks it. A
/// mutex: those walks can be long, and late edges are rare (weak references
/// take no lock, see `Instance.sideForWriting`).
private let edgeMutex = Lock(())

enum EdgeLock {
    static func withLock<R>(_ body: () -> R) -> R { edgeMutex.withLock { _ in body() } }
}
