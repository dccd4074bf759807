#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import Synchronization

/// Owns registrations and their caches; may fall through to a parent.
public final class Container: @unchecked Sendable {
    /// The parent, unretained: a parent with open children is not freed (`Children` counts them),
    /// so a request's child writes no count of its parent's (a word every thread's requests would write).
    private let parentReference: Borrowed<Container>?
    /// The parent retained, for a child made through `init(parent:bridge:)` (a Swift program's
    /// child may be the last reference to its parent); nil for `init(childOf:)`'s.
    private let parentKeep: Container?
    public var parent: Container? { parentReference?.object }
    /// How slot words (weak handles, lazy providers, resolvers) are made for factories.
    /// Unretained when it is the parent's (the root's keeps it: `bridgeKeep`).
    public unowned(unsafe) let bridge: SlotBridge
    /// The bridge retained, unless it is the parent's.
    private let bridgeKeep: SlotBridge?

    /// Writers (register, close) serialize here; the registrations live in `table`.
    /// What a request's child uses is stored inline; the rest (`Rare`) is made by the first
    /// writer that needs it, so a child's state is made and let go of with no field to release.
    struct State {
        var isClosed = false
        /// Container-scoped instances made by resolves from here, by registration, and the
        /// values provided here for keys a parent declared (`provideValue`).
        var scoped = ScopedEntries()
        private var rare: Rare?

        /// What few containers hold: made by the first write.
        final class Rare {
            var retired: [Registration] = []
            var overrides: [Key: [Registration?]] = [:]
            var decorations: [Key: [Key]] = [:]
            var detached: [Registration] = []
            var tracer: Tracer?
            var lists: [Key: (configuration: UInt, registrations: [Registration])] = [:]
            var superseded: [UnsafeMutableRawPointer: UInt] = [:]
        }

        private mutating func madeRare() -> Rare {
            if let rare { return rare }
            let made = Rare()
            rare = made
            return made
        }

        /// Replaced registrations, kept alive for lock-free readers until `dismantle()`.
        var retired: [Registration] {
            get { rare?.retired ?? [] }
            _modify { yield &madeRare().retired }
        }
        /// Per overridden key, what each override displaced from the table, oldest first
        /// (nil: the key fell through to a parent); `Container+Overrides.swift`.
        var overrides: [Key: [Registration?]] {
            get { rare?.overrides ?? [:] }
            _modify { yield &madeRare().overrides }
        }
        /// Per decorated key, the keys its undecorated registrations moved to, first decorator's first
        /// (`Container+Decorators.swift`).
        var decorations: [Key: [Key]] {
            get { rare?.decorations ?? [:] }
            _modify { yield &madeRare().decorations }
        }
        /// Registrations that left the table with no call of the embedding layer seeing them go
        /// (overrides ended by a close, undecorated ones replaced with their key): `forEachRegistration` visits them.
        var detached: [Registration] {
            get { rare?.detached ?? [] }
            _modify { yield &madeRare().detached }
        }
        /// The tracer, once a trace hook was set (`setTrace`): under this lock, not one of
        /// its own, so a container (one per request, say) makes one lock, not two.
        var tracer: Tracer? {
            get { rare?.tracer }
            _modify { yield &madeRare().tracer }
        }
        /// `allRegistrations` by key, with the configuration each was made under.
        var lists: [Key: (configuration: UInt, registrations: [Registration])] {
            get { rare?.lists ?? [:] }
            _modify { yield &madeRare().lists }
        }
        /// The `SupersedeClock` tick at which `dropBuilt` last found each container-scoped registration
        /// (by address: its container outlives this one, or is this one) built over a changed key here: a
        /// resolve that read the clock before publishes none of its instances here (`publishScoped`).
        func supersededAt(_ registration: UnsafeMutableRawPointer) -> UInt { rare?.superseded[registration] ?? 0 }
        mutating func markSuperseded(_ registration: UnsafeMutableRawPointer, at tick: UInt) { madeRare().superseded[registration] = tick }
        /// Whether any of the above was ever written.
        var hasRare: Bool { rare != nil }
    }
    struct ScopedEntry {
        /// Unretained: its container outlives this one (a parent's), or is this one, which keeps
        /// it until dismantled. A parent's registration is what every request's child caches
        /// under: a count here would be a word every thread's requests write.
        let registration: Borrowed<Registration>
        let instance: Instance
        let sequence: UInt64
    }
    /// `State` and its lock in the container's own allocation (a `Lock` is a second one, and a
    /// mutex initialized and destroyed, per request's child): a spin lock (`withSpinLock`'s),
    /// each hold a few instructions, never across a factory, a destructor or a wait.
    private let stateHeld = Atomic<Bool>(false)
    private var stateValue = State()
    /// `withLock(_:)` runs its body with the state under the lock (not re-entrant), as `Lock`'s.
    var state: StateLock { StateLock(container: Borrowed(self)) }
    struct StateLock {
        /// Borrowed: a strong local would be a retain and a release each time.
        fileprivate let container: Borrowed<Container>
        @inline(__always)
        func withLock<R>(_ body: (inout State) -> R) -> R {
            container.borrow { c in
                c.stateHeld.spinLock()
                defer { c.stateHeld.spinUnlock() }
                return body(&c.stateValue)
            }
        }
    }
    /// The registrations, made (owned, +1) by a root at once and by a child with its first
    /// registration or look at them (`table`): a request's child that registers nothing makes none.
    @usableFromInline let tableSlot = AtomicRef<RegistrationTable>()
    /// The registration table if made (what resolves read: nil, nothing registered here).
    @inlinable var tableIfAny: Borrowed<RegistrationTable>? {
        @inline(__always) get { tableSlot.load() }
    }
    /// The registration table, made now if it was not (writers, and readers off the resolve path).
    var table: RegistrationTable {
        if let made = tableSlot.load() { return made.object }
        return madeTable().object
    }

    @inline(never)
    private func madeTable() -> Borrowed<RegistrationTable> {
        tableSlot.publishOnce(retaining: { RegistrationTable(small: parentReference != nil) })
    }
    private let closed = Atomic<Bool>(false)
    /// The address of this container's version words, or 0 until someone reads them: counts
    /// changes to what resolves here could build (`Plan`), and right after it the cache word
    /// (`cacheVersionAddresses`) and the hit word; never freed (`VersionWords`). A root makes
    /// them at once; a child (one per request) when its configuration, its words' addresses or
    /// a hit token is first asked for (`version`): a change before that had no reader to tell.
    private let versionWord = Atomic<UInt>(0)
    /// The hit words of the containers made from this one, at any depth, that a binding asked
    /// for: `cachesChanged` moves them with its own (see `hitWordAddress`). Made with the first.
    private let descendantHitWords = AtomicRef<HitWordList>()
    /// How many words `descendantHitWords` holds, stored under its lock: while 0 (no binding asked
    /// about a descendant), `cachesChanged` takes no lock (`watchHitWord` says why that is safe).
    private let descendantHitWordCount = Atomic<Int>(0)
    /// This container's hit word is in its ancestors' `descendantHitWords` (`watchHitWord`).
    private let hitWordWatched = Atomic<Bool>(false)
    /// The tracer while a trace hook is set, else 0 (`setTrace`); the tracer, once made, in `State.tracer`.
    let traceWord = Atomic<UInt>(0)

    /// The container's tracer, made now if none was (`setTrace`).
    func madeTracer() -> Tracer {
        state.withLock { s in
            if let t = s.tracer { return t }
            let t = Tracer()
            s.tracer = t
            return t
        }
    }
    private let strict = Atomic<Bool>(false)
    /// A registration was detached here once (`State.detached`): closing has more to visit.
    let everDetached = Atomic<Bool>(false)
    /// `State.lists` holds something (`memoizedList`): `dismantle` has it to let go of.
    private let everListed = Atomic<Bool>(false)
    /// Something besides its handle reached this container, which may read its registrations from
    /// any thread: a lazy cell, provider or factory cell made over it (`LazyCell`, `FactoryCell`),
    /// an override's walk of its ancestors' open children (`Children.retainedLive`), a binding's
    /// token holding a creation cell in it (`CellToken.hold`). Never cleared.
    private let reachedBesidesHandle = Atomic<Bool>(false)

    /// Notes that something besides the handle holds this container (`reachedBesidesHandle`):
    /// stored once (a root every resolve makes cells over reads it, and writes it only the first time).
    @inline(__always)
    func noteReachedBesidesHandle() {
        if !reachedBesidesHandle.load(ordering: .relaxed) { reachedBesidesHandle.store(true, ordering: .releasing) }
    }

    /// Lazy cells' holds on this container as split references (`LazyCell`), when its owner says
    /// when it lets go (`splitsCellHolds`, `closeCellHolds`): a root that every thread's resolves
    /// make LAZY slots over would otherwise have its reference count written by every core per
    /// slot per resolve (retained by the cell, released when it goes).
    let cellHolds = SplitCountWord()
    /// Set by an owner that calls `closeCellHolds` before it drops its reference (the ABI, for a
    /// root: `tether_container_free`), before any other thread can see the container. Otherwise
    /// (pure Swift, where nothing says when the last reference goes) cells retain the container.
    public var splitsCellHolds = false

    /// This container's children (`Children`), made with the first, owned (+1); or empty.
    private let childrenSlot = AtomicRef<Children>()
    /// The stripe of the parent's `Children` this container is counted in (the thread that made it).
    private var stripe = 0
    /// This open child's neighbours in its stripe's list of open children (`Children.Stripe`),
    /// written under that stripe's lock only.
    var liveLinks: (previous: Borrowed<Container>?, next: Borrowed<Container>?) = (nil, nil)
    /// Counts this container's cache entries (registrations, published and container-scoped
    /// instances) in the order they came: a container lets go of them last-made first. One
    /// container's, not the process's: a request's child writes no word other requests share.
    private let sequence = Atomic<UInt64>(0)

    /// A root's log of the configuration changes in its tree (`SupersedeClock`), made with the first;
    /// read and written under that clock's lock only. Nil in a child and in a root never changed.
    var treeChanges: SupersedeClock.TreeChanges?

    /// The next number of this container's `sequence`.
    func nextSequence() -> UInt64 { sequence.add(1, ordering: .relaxed).newValue }

    /// A root (`parent` nil) or a child that keeps its parent (and `bridge`) retained.
    public convenience init(parent: Container? = nil, bridge: SlotBridge) throws(TetherError) {
        try self.init(parent: parent.map { Borrowed($0) }, keeping: parent, bridge: bridge)
    }

    /// A child of `parent` that holds it by its count of open children only (the caller keeps
    /// `parent` until this child is closed: the ABI's handle does), with its bridge: a request's
    /// child retains nothing its siblings on other threads would write.
    package convenience init(childOf parent: Borrowed<Container>) throws(TetherError) {
        try self.init(parent: parent, keeping: nil, bridge: nil)
    }

    /// `bridge` nil: the parent's, unretained (read in place: a strong copy was a retain and a release per request's child).
    private init(parent: Borrowed<Container>?, keeping: Container?, bridge: SlotBridge?) throws(TetherError) {
        parentReference = parent
        parentKeep = keeping
        if let bridge {
            self.bridge = bridge
            bridgeKeep = parent.map { $0.borrow { $0.bridge } === bridge } == true ? nil : bridge
        } else {
            self.bridge = parent.unsafelyUnwrapped.unmanaged._withUnsafeGuaranteedRef { $0.bridge }
            bridgeKeep = nil
        }
        if parent == nil {
            versionWord.store(UInt(bitPattern: VersionWords.take()), ordering: .relaxed)
            tableSlot.publish(retaining: RegistrationTable(small: false))
        }
        if let parent {
            let me = Borrowed(self)
            let stripe = Children.currentStripe
            self.stripe = stripe
            let ok = parent.borrow { parent in parent.children.borrow { $0.withStripe(stripe) { s in
                // The parent's close sets the flag holding every stripe: either it counts this child or this sees it.
                if parent.isClosed { return false }
                s.open += 1
                s.add(me)
                return true
            } } }
            guard ok else { throw TetherError.parentFreed }
            strict.store(parent.borrow { $0.refusesCaptives }, ordering: .relaxed)
        }
    }

    /// This container's `Children`, made now if it had none; unretained (it lives as long as this
    /// container): its reference count is a word every thread's requests would write.
    var children: Borrowed<Children> {
        if let made = childrenSlot.load() { return made }
        return madeChildren()
    }

    @inline(never)
    private func madeChildren() -> Borrowed<Children> { childrenSlot.publishOnce(retaining: Children.init) }

    /// The parent, unretained (a parent with open children stays): for what each request's child
    /// does with it, which must not write the parent's reference count.
    @inline(__always)
    package var unretainedParent: Borrowed<Container>? { parentReference }

    /// `children` if it was ever made.
    var childrenIfAny: Children? {
        childrenSlot.load()?.object
    }

    /// Strict mode: resolves refuse to let a singleton registered here hold a
    /// shorter-lived instance strongly (`Scope.captures`) instead of building it.
    /// Containers created from this one later start with the same setting.
    public var refusesCaptives: Bool {
        get { strict.load(ordering: .relaxed) }
        set {
            guard strict.exchange(newValue, ordering: .relaxed) != newValue else { return }
            configurationChanged()  // creation plans check captives (`Plan.Recorder.refuseCaptive`): recorded again
        }
    }

    /// A split reference for a lazy cell (`LazyCell`), if this container takes them and its
    /// owner has not let go; false: the cell retains the container instead.
    @inline(__always)
    func acquireCellHold() -> Bool {
        guard splitsCellHolds, let split = cellHolds.open() else { return false }
        return split.tryAcquire()
    }

    /// Drops a cell's split reference. True: it was the last after the owner let go; the caller
    /// then releases the reference `closeCellHolds` kept for them.
    @inline(__always)
    func releaseCellHold() -> Bool { cellHolds.count.release() }

    /// The owner lets go (after closing, before dropping its reference): no split reference is
    /// taken from now on, and those outstanding keep one ordinary reference between them, which
    /// the last of them releases (as `SplitEdge.holdForRemaining`).
    public func closeCellHolds() {
        guard splitsCellHolds else { return }  // (a request's child: no atomic operation at its free)
        if let split = cellHolds.close(), !split.kill() { _ = Ref(retaining: self) }
    }

    deinit {
        cellHolds.deallocate()
        // A child let go of without being closed (the Swift API allows it, its parent retained)
        // leaves the parent's list and its ancestors' hit-word lists (a closed one left them at its close).
        if !isClosed, let parent = parentReference {
            parent.borrow { $0.children.borrow { $0.withStripe(stripe) { $0.forget(self) } } }
            unwatchHitWord()
        }
        childrenSlot.releaseOwned()
        descendantHitWords.releaseOwned()
        tableSlot.releaseOwned()
        if let version = versionIfAny { VersionWords.give(version) }
    }

    /// Takes this container's hit word out of its ancestors' lists (`watchHitWord`), while they are alive.
    private func unwatchHitWord() {
        guard hitWordWatched.load(ordering: .acquiring) else { return }
        let word = hitWord
        forEachAncestor { a in
            a.hitWordList.borrow { $0.words.withLock { words in
                if let i = words.lastIndex(of: word) { words.swapAt(i, words.count - 1); words.removeLast() }
                a.descendantHitWordCount.store(words.count, ordering: .relaxed)
            } }
        }
    }

    /// A child finished closing: it is no longer counted or reached.
    private func childClosed(_ child: Container) {
        children.borrow { $0.withStripe(child.stripe) { s in
            s.open -= 1
            s.forget(child)
        } }
    }

    private func forEachAncestor(_ body: (Container) -> Void) {
        var next = parentReference
        while let c = next {
            c.borrow(body)
            next = c.borrow { $0.parentReference }
        }
    }

    /// This container's version words, made now if nobody read them before.
    @inline(__always)
    private var version: UnsafeMutablePointer<Atomic<UInt>> { versionIfAny ?? madeVersion() }

    /// This container's version words, if made.
    @inline(__always)
    private var versionIfAny: UnsafeMutablePointer<Atomic<UInt>>? {
        UnsafeMutablePointer(bitPattern: versionWord.load(ordering: .acquiring))
    }

    /// Makes the version words on first read. Fenced after, pairing with the fence in
    /// `versionAfterChange`: either a change made meanwhile moves the words, or the reader's later
    /// reads (what the configuration dates) see the change.
    @inline(never)
    private func madeVersion() -> UnsafeMutablePointer<Atomic<UInt>> {
        let made = VersionWords.take()
        let (won, seen) = versionWord.compareExchange(expected: 0, desired: UInt(bitPattern: made), ordering: .sequentiallyConsistent)
        if !won { VersionWords.give(made) }
        atomicMemoryFence(ordering: .sequentiallyConsistent)
        return won ? made : UnsafeMutablePointer(bitPattern: seen)!
    }

    /// The version words for a change (made visible before this call) to move; nil when nobody
    /// read them yet: a reader that makes them later sees the change (`madeVersion`).
    @inline(__always)
    private var versionAfterChange: UnsafeMutablePointer<Atomic<UInt>>? {
        if let version = versionIfAny { return version }
        atomicMemoryFence(ordering: .sequentiallyConsistent)
        return versionIfAny
    }

    private var hitWord: UnsafeMutablePointer<Atomic<UInt>> { version + 2 }

    /// `descendantHitWords`, made now if none was.
    private var hitWordList: Borrowed<HitWordList> { descendantHitWords.publishOnce(retaining: HitWordList.init) }

    /// The address of this container's hit word: one word that moves (release
    /// ordering, only ever growing, never 0) after every change that may make a
    /// resolve from here answer other than it did, whichever container of the
    /// chain it happened in: whenever the cache word of this container or of a
    /// parent moves (`cachesChanged`, every configuration change included). So a
    /// layer that saw a resolve from here answer the published instance of a key
    /// while the word had some value (`hitToken`) may hand the same instance
    /// out again, with no resolve, while the word has that value. Same memory
    /// rules as the version words.
    package var hitWordAddress: UnsafeRawPointer {
        watchHitWord()
        return UnsafeRawPointer(hitWord)
    }

    /// The hit word's value now (acquire: read it before what it dates).
    package var hitToken: UInt {
        watchHitWord()
        return hitWord.pointee.load(ordering: .acquiring)
    }

    /// Puts the hit word in the ancestors' lists the first time anyone asks for it (or a token):
    /// no value of it was handed out before, so no change before can matter, and containers that
    /// nobody asks about (a C program's one per request, say) cost nothing. Complete before the
    /// caller reads the word: an ancestor's change that missed it was visible before that read.
    private func watchHitWord() {
        guard parentReference != nil, !hitWordWatched.load(ordering: .acquiring) else { return }
        state.withLock { s in
            // A closed container's ancestors may go: it left their lists at its close (`unwatchHitWord`).
            guard !hitWordWatched.load(ordering: .relaxed), !s.isClosed else { return }
            forEachAncestor { a in
                a.hitWordList.borrow { $0.words.withLock { words in
                    words.append(self.hitWord)
                    a.descendantHitWordCount.store(words.count, ordering: .relaxed)
                } }
            }
            // Pairs with the fence in `cachesChanged`: an ancestor's change whose count check
            // missed this word was visible (every write before its fence) before the caller reads.
            atomicMemoryFence(ordering: .sequentiallyConsistent)
            hitWordWatched.store(true, ordering: .releasing)
        }
    }

    public var isClosed: Bool { closed.load(ordering: .acquiring) }

    /// How many resolves on the calling thread reached `Graph.build` (no plan, warm or creating,
    /// served them): a diagnostic, so tests tell which executor ran.
    public static var buildsOnThisThread: Int { ThreadState.currentReference.borrow { $0.builds } }

    /// Changes with every registration, scope change, completion callback added
    /// or close here or in a parent (the sum of the versions up the chain, each
    /// only growing): a plan recorded under another value may be wrong.
    public var configuration: UInt {
        @inline(__always) get {
            var sum = version.pointee.load(ordering: .acquiring)
            var next = parentReference
            while let c = next {
                sum &+= c.borrow { $0.version.pointee.load(ordering: .acquiring) }
                next = c.borrow { $0.parentReference }
            }
            return sum
        }
    }

    /// The addresses of the words whose sum is `configuration`: this
    /// container's version first, then its parents' up the chain. Each is an
    /// aligned machine word, written atomically, that only ever grows, and stays
    /// allocated for the life of the process (`VersionWords`).
    public var versionAddresses: [UnsafeRawPointer] {
        var addresses: [UnsafeRawPointer] = []
        var next: Container? = self
        while let c = next {
            addresses.append(UnsafeRawPointer(c.version))
            next = c.parent
        }
        return addresses
    }

    /// Whether `ancestor` is up this container's chain with nothing ever registered
    /// on the way there (this container included): a resolve from here then builds
    /// exactly what one from `ancestor` builds, so `ancestor`'s plans serve it (a
    /// child made per request, say). A registration made here meanwhile is ordered
    /// after the resolve that checked.
    func fallsThroughEmpty(to ancestor: Borrowed<Container>) -> Bool {
        let goal = ancestor.opaque
        var container = Borrowed(self)
        while container.opaque != goal {  // unretained, as `configuration` walks the chain
            guard let parent = container.borrow({ c in
                c.neverRegistered ? c.parentReference : nil
            }) else { return false }
            container = parent
        }
        return true
    }

    /// Nothing was ever registered here (the registration table was never made).
    var neverRegistered: Bool { tableIfAny?.borrow { $0.neverStored } ?? true }

    /// The parent, unretained (a child's plan walks the chain to its owner: `Plan.componentLevels`).
    var parentBorrowed: Borrowed<Container>? { parentReference }

    /// The addresses of the cache words of this container and its parents, in
    /// the order of `versionAddresses`. A cache word grows with every
    /// configuration change of its container and every time the container lets
    /// go of a published singleton or forgets a published weak-scope instance
    /// (`cachesChanged`): a layer that saw a resolve return the published
    /// instance may hand the same instance out again, with no resolve, while the
    /// sum of the words is the one it read before that resolve. Same memory
    /// rules as the version words.
    public var cacheVersionAddresses: [UnsafeRawPointer] {
        versionAddresses.map { $0 + MemoryLayout<Atomic<UInt>>.stride }
    }

    /// After the change is visible to lock-free readers (release: a reader that
    /// sees the new configuration sees the change).
    func configurationChanged() {
        guard let version = versionAfterChange else {
            // No words to move (nobody read them): `versionAfterChange`'s fence is the one
            // `cachesChanged` would take, between the change and the hit-word count's read (a
            // request's child takes one fence, not three).
            return hitWordsChanged()
        }
        version.pointee.add(1, ordering: .releasing)
        cachesChanged()
    }

    /// After a published singleton or weak-scope instance was unpublished
    /// (release, as above); a reader that still sees the old sum read it before the change.
    /// The hit words move with it, this container's and its descendants' (`hitWordAddress`).
    func cachesChanged() {
        guard let version = versionAfterChange else { return hitWordsChanged() }  // (its fence, as above)
        (version + 1).pointee.add(1, ordering: .releasing)
        (version + 2).pointee.add(1, ordering: .releasing)  // the hit word
        // After the adds: a watcher counted after this fence sees them (`watchHitWord`).
        atomicMemoryFence(ordering: .sequentiallyConsistent)
        hitWordsChanged()
    }

    /// Moves the watched descendants' hit words, after a sequentially consistent fence that
    /// follows the change (`cachesChanged`).
    @inline(__always)
    private func hitWordsChanged() {
        guard descendantHitWordCount.load(ordering: .relaxed) != 0 else { return }
        hitWordList.borrow { $0.words.withLock { words in
            for word in words { word.pointee.add(1, ordering: .releasing) }
        } }
    }

    /// Registers `factory` under `key`; a previous registration of the key here is
    /// replaced and returned (retired: its cache is released). `configure` runs
    /// before the registration becomes visible, so no resolve sees it half set up.
    @discardableResult
    public func register(_ key: Key, params: [Param], factory: Factory,
                         configure: (Registration) throws(TetherError) -> Void = { _ in }) throws(TetherError) -> (registration: Registration, replaced: Registration?) {
        try register(Registration(key: key, params: params, factory: factory, container: self), configure)
    }

    /// `register` of a factory of Swift objects: its instances are the objects,
    /// released when the instance goes (see `ObjectFactory`). Its params are `.dependency` ones.
    @discardableResult
    public func register(_ key: Key, params: [Param], factory: ObjectFactory,
                         configure: (Registration) throws(TetherError) -> Void = { _ in }) throws(TetherError) -> (registration: Registration, replaced: Registration?) {
        guard params.allSatisfy({ if case .dependency = $0 { true } else { false } }) else {
            throw TetherError(.invalidArgument, "an ObjectFactory takes .dependency params only (registering \(key.quoted))")
        }
        return try register(Registration(key: key, params: params, factory: factory, container: self, holdsObject: true), configure)
    }

    func register(_ registration: Registration,
                          _ configure: (Registration) throws(TetherError) -> Void) throws(TetherError) -> (registration: Registration, replaced: Registration?) {
        let key = registration.key
        try configure(registration)
        // The scope read unretained: a new registration's spec is its key's default, shared by every request's.
        try Registration.check(registration.params, scope: registration.specReference.borrow { $0.scope }, key: key)
        registration.markVisible()
        var undecorated: [Registration] = []
        var cachesHere = false
        let replaced: Registration?? = state.withLock { s in
            if s.isClosed { return nil }
            cachesHere = !s.scoped.isEmpty
            registration.order = table.lookup(key)?.borrow { $0.order } ?? nextSequence()
            // An overridden key keeps its override: the registration goes under it (`Container+Overrides`).
            let old = !s.hasRare || s.overrides.isEmpty ? table.replace(key, with: registration) : replaceUnderOverride(&s, key, registration)
            if let old { s.retired.append(old) }
            // A decorated key's undecorated registrations go with its decorators (`Container+Decorators`).
            if s.hasRare, !s.decorations.isEmpty { undecorated = takeDecorations(&s, key) }
            configurationChanged()
            return .some(old)
        }
        guard let replaced else { throw TetherError.containerFreed }
        if let replaced { retireAll([replaced]) }  // a new key (a request's registration, say) has nothing to drop
        if !undecorated.isEmpty { retireAll(undecorated) }
        // A value provided here for a parent's declared key (a slot, `provideValue`) goes with the
        // registration that now hides it, as a value registration replaced would.
        if cachesHere { drop(takeScoped { $0.isDeclaredValue && $0.key == key && $0.container !== self }) }
        return (registration, replaced)
    }

    /// The registration for `key` here, or in the nearest parent that has one.
    public func registration(for key: Key) -> Registration? {
        unretainedRegistration(for: key)?.object
    }

    /// The published singleton for `key` (of a registration without runtime
    /// arguments) to hand out as a loan; nil means resolve the ordinary way.
    @inlinable @inline(__always)
    package func singletonLoan(for key: Key) -> SingletonLoan? {
        registrationToResolve(key)?.borrow { $0.loanWithoutArguments() }
    }

    /// The registration a resolve of `key` from here uses, unretained (it lives
    /// as long as this container), for `resolveRetained(_:arguments:)`.
    @inlinable @inline(__always)
    package func registrationToResolve(_ key: Key) -> Borrowed<Registration>? {
        tableIfAny?.borrow { $0.get(key) } ?? inheritedRegistration(for: key)
    }

    /// `registration(for:)` without retains: registrations live as long as their
    /// container, and parents at least as long as their children.
    @inline(__always)
    func unretainedRegistration(for key: Key) -> Borrowed<Registration>? {
        tableIfAny?.borrow { $0.get(key) } ?? inheritedRegistration(for: key)
    }

    /// The registration for `key` in the nearest parent that has one.
    /// (and, first, in this container's small table: `RegistrationTable.getSmall`).
    @usableFromInline @inline(never)
    func inheritedRegistration(for key: Key) -> Borrowed<Registration>? {
        if let r = tableIfAny?.borrow({ $0.getSmall(key) }) { return r }
        var next = parentReference
        while let c = next {
            if let r = c.borrow({ $0.tableIfAny?.borrow { $0.lookup(key) } }) { return r }
            next = c.borrow { $0.parentReference }
        }
        return nil
    }

    /// Every registration a resolve through this container can reach, children's
    /// overriding their parents', sorted by key name.
    public func visibleRegistrations() -> [Registration] {
        var byKey: [Key: Registration] = [:]
        var container: Container? = self
        while let c = container {
            for r in c.ownRegistrations() where byKey[r.key] == nil { byKey[r.key] = r }
            container = c.parent
        }
        return byKey.values.sorted { $0.key.name < $1.key.name }
    }

    /// This container's own registrations (not its parents'), read under its lock.
    func ownRegistrations() -> [Registration] { state.withLock { _ in table.all() } }

    /// `make()`'s list for `key`, kept until the configuration here or up the chain changes.
    func memoizedList(_ key: Key, _ make: () -> [Registration]) -> [Registration] {
        let configuration = self.configuration  // read first: a change while `make` runs is seen next time
        if let kept = state.withLock({ $0.lists[key] }), kept.configuration == configuration { return kept.registrations }
        let made = make()
        state.withLock { s in
            s.lists[key] = (configuration, made)
            everListed.store(true, ordering: .releasing)
        }
        return made
    }

    /// Resolves `key` with runtime arguments for the top-level registration.
    public func resolve(_ key: Key, arguments: UnsafeBufferPointer<Argument> = .init(start: nil, count: 0)) throws(TetherError) -> Instance {
        try resolveRetained(key, arguments: arguments).take()
    }

    /// `resolve`, handing over the caller's reference without a retain and release
    /// on the way (an embedding layer stores it as is).
    package func resolveRetained(_ key: Key, arguments: UnsafeBufferPointer<Argument> = .init(start: nil, count: 0)) throws(TetherError) -> Ref<Instance> {
        guard !isClosed else { throw TetherError.containerFreed }
        guard let registration = unretainedRegistration(for: key) else {
            throw TetherError.notRegistered(key)
        }
        return try resolveRetained(registration, arguments: arguments)
    }

    /// `resolveRetained(_:arguments:)` of the registration `registrationToResolve` found.
    package func resolveRetained(_ registration: Borrowed<Registration>,
                                arguments: UnsafeBufferPointer<Argument> = .init(start: nil, count: 0)) throws(TetherError) -> Ref<Instance> {
        guard !isClosed else { throw TetherError.containerFreed }
        if let tracer { return try tracedResolve(registration, arguments: arguments, tracer.object) }
        // Unretained: the container keeps its registrations (retired ones too) until it is dismantled.
        return try registration.borrow { registration throws(TetherError) in
            try Graph.checkArguments(registration, arguments)
            let scope = registration.specReference.borrow { $0.scope }
            if let hit = registration.cachedRetained(scope, in: self) { return hit }
            do throws(TetherError) {
                return try Graph.resolve(registration, from: self, arguments: arguments)
            } catch {
                return try resolveAgain(registration, error, arguments: arguments)
            }
        }
    }

    /// A resolve that failed: of a provided value's registration let go of after the caller looked the key
    /// up (every caller here looked it up by key), the key's resolve now (`startOver`); otherwise `error`.
    @inline(never)
    private func resolveAgain(_ registration: Registration, _ error: TetherError,
                              arguments: UnsafeBufferPointer<Argument>) throws(TetherError) -> Ref<Instance> {
        guard let again = startOver(after: registration, resolving: registration) else { throw error }
        return try resolveRetained(again, arguments: arguments)
    }

    /// `resolveRetained` while a trace hook is set: between a start and an end event, a cache hit or a traced graph
    /// (of the key's registration now, when the one the caller looked up was a value let go of since: `startOver`).
    private func tracedResolve(_ registration: Borrowed<Registration>, arguments: UnsafeBufferPointer<Argument>,
                               _ tracer: Tracer) throws(TetherError) -> Ref<Instance> {
        var registration = registration.object
        tracer.emit(.resolveStart, registration.key)
        while true {
            do throws(TetherError) {
                try Graph.checkArguments(registration, arguments)
                let result: Ref<Instance>
                if let hit = registration.cached(registration.spec.scope) {
                    tracer.emit(.cacheHit, registration.key, hit.pointer)
                    result = .init(retaining: hit)
                } else {
                    result = try Graph.resolve(registration, from: self, arguments: arguments, tracer: tracer)
                }
                tracer.emit(.resolveEnd, registration.key, result.borrow { $0.pointer })
                return result
            } catch {
                if let again = startOver(after: registration, resolving: registration) {
                    registration = again.object
                    continue
                }
                tracer.emit(.resolveEnd, registration.key, status: error.code)
                throw error
            }
        }
    }

    /// Resolves `key`, a registration of an `ObjectFactory`, to its object, owned
    /// by the caller: no instance is kept for it (ARC keeps the object and what it
    /// holds), so a graph of plain objects is made with no `Instance` at all (`Plan.runObjects`: the plan's step loop in object mode).
    @inlinable
    public func resolve<T: AnyObject>(_ key: Key, as type: T.Type = T.self) throws(TetherError) -> T {
        let object = try resolveObject(key)
        // The exact class first (a compare), `is` for subclasses, then a cast without
        // a check: `as?` would retain the result and release the object.
        guard ObjectIdentifier(Swift.type(of: object)) == ObjectIdentifier(T.self) || object is T else {
            throw TetherError(.invalidArgument, "\(key.quoted) made a \(Swift.type(of: object)), not a \(T.self)")
        }
        return unsafeDowncast(object, to: T.self)
    }

    /// `resolve(_:as:)` without the type check.
    public func resolveObject(_ key: Key) throws(TetherError) -> AnyObject {
        guard !isClosed, let registration = unretainedRegistration(for: key) else { throw objectMisuse(key) }
        let spec = registration.borrow { $0.specReference }
        guard spec.borrow({ $0.holdsObject }), !registration.borrow({ $0.hasArguments }) else {
            throw objectMisuse(key)
        }
        let scope = spec.borrow { $0.scope }
        if scope.isShared {
            // The weak scope shares an instance while something holds the instance; a bare object does not.
            guard scope.isKeptStronglyByRegistration else { throw objectMisuse(key) }
            if let hit = registration.borrow({ $0.cached(scope) }) {
                return Borrowed<AnyObject>(opaque: hit.pointer).object
            }
        }
        return try Graph.resolveObject(registration, from: self)
    }

    /// Why `resolveObject(_:)` refuses `key` (out of line: the resolve path stays short).
    @inline(never)
    private func objectMisuse(_ key: Key) -> TetherError {
        if isClosed { return TetherError.containerFreed }
        guard let registration = registration(for: key) else {
            return TetherError.notRegistered(key)
        }
        if !registration.spec.holdsObject {
            return TetherError(.invalidArgument, "\(key.quoted) is not registered with an ObjectFactory: resolve(_:) gives its instance")
        }
        if registration.hasArguments {
            return TetherError(.argumentMismatch, "\(key.quoted) takes runtime arguments: resolve(_:arguments:) gives its instance")
        }
        return TetherError(.invalidArgument, "\(key.quoted) has the \(registration.spec.scope.name) scope, whose cache holds instances, not bare objects: resolve(_:) gives the instance to hold")
    }

    /// Empties this container's cache of `scope` (not its parents').
    public func reset(_ scope: Scope) {
        if scope.isPerResolvingContainer { return drop(takeScoped { !$0.isDeclaredValue }) }  // values stay (`provideValue`)
        let registrations = state.withLock { _ in table.all() }
        drop(registrations.compactMap { $0.reset(scope) })
    }

    /// The container-scoped instance of `registration` resolves from here made, if any.
    func scopedInstance(of registration: Registration) -> Instance? {
        state.withLock { $0.scoped.instance(of: registration) }
    }

    /// The instance cached here for `registration`, retained; nil: none.
    func retainedScoped(of registration: Registration) -> Ref<Instance>? {
        state.withLock { $0.scoped.retainedInstance(of: registration) }
    }

    /// Caches `instance`, made by a graph resolved from here; false (not cached)
    /// once this container is closed or the registration replaced or rescoped.
    @discardableResult
    func publishScoped(_ registration: Registration, _ instance: Instance) -> Bool {
        publishScoped(registration, instance, endingClaimOf: nil)
    }

    /// `publishScoped`, ending the claim `thread` (its `ThreadState`) holds for it
    /// (`claimScoped`) under the same lock; its waiters are woken.
    /// `builtSince`: the `SupersedeClock` the resolve read before it looked anything up (`.max`: nothing
    /// it was built over can be superseded); what a change since superseded is not cached.
    @discardableResult
    func publishScoped(_ registration: Registration, _ instance: Instance, endingClaimOf thread: UnsafeMutableRawPointer?,
                       builtSince tick: UInt = .max) -> Bool {
        var publishes = registration.specReference.borrow({ $0.scope.isPerResolvingContainer })
        // A parent's registration (a request's child caching under the root's) is not asked
        // whether it was retired: that takes its lock, a word every thread's requests would write.
        // A retired one's entry is harmless: resolves find the registration that replaced it,
        // and the entry goes with this container's other caches when it closes.
        if publishes, registration.container === self, !registration.isLive { publishes = false }
        guard publishes || thread != nil else { return false }
        let id = Borrowed(registration).opaque
        // A replaced entry is let go of after the lock is (its instance may be the last reference).
        let (cached, replaced, cell) = SupersedeClock.publishing(instance, of: registration.key, cachedIn: self, builtSince: tick,
                                                                 publishing: publishes) { publishes, checked in
            state.withLock { s -> (Bool, ScopedEntry?, SharedCache.Cell?)? in
                if publishes && SupersedeClock.moved(since: checked) { return nil }
                let cell = thread.flatMap { Self.endClaim(&s, id, $0) }
                cell?.holder = nil  // published: nothing goes on under a token
                guard publishes, !s.isClosed, tick >= s.supersededAt(id) else { return (false, nil, cell) }
                return (true, s.scoped.set(ScopedEntry(registration: .init(registration), instance: instance, sequence: nextSequence())), cell)
            }
        }
        _ = consume replaced
        if let cell { SharedCache.shared.wake(cell) }
        return cached
    }

    /// What `claimScoped` found.
    enum ScopedClaim {
        /// The cached instance, retained.
        case published(Ref<Instance>)
        /// Claimed for the caller, with the cell it asked for: it makes the instance, then
        /// publishes it (`publishScoped(_:_:endingClaimOf:)`) or gives up (`endScopedClaim`).
        case claimed(SharedCache.Cell?)
        /// Claimed by a resolve further out on the calling thread; whether that one made it, and the
        /// claim's cell (made now if it had none) a resolve nested there makes it under (`SharedCache.Claim.createUnderOuter`).
        case heldHere(made: Bool, cell: SharedCache.Cell)
        /// Claimed by another thread: the cell to wait for (`SharedCache.wait`).
        case heldElsewhere(SharedCache.Cell)
    }

    /// The container-scoped instance of `registration` cached here, or the right to create it
    /// claimed for `thread` (its `ThreadState`): this container's creation cell of the key,
    /// taken under the lock its cache lookup takes (`ScopedEntries.pending`). `madeWord` and
    /// `madeBit`: where a plan's run notes that it made the instance; `makeCell`: a cell for the
    /// claim (a `Graph` keeps its cells), else one is made only if another thread waits.
    /// `token`: the token the thread resolves for (`tether_token_enter`), whose claim it takes back.
    func claimScoped(_ registration: Registration, thread: UnsafeMutableRawPointer, token: CellToken? = nil, madeWord: UnsafeMutablePointer<UInt>? = nil,
                     madeBit: UInt = 0, makeCell: (() -> SharedCache.Cell)? = nil) -> ScopedClaim {
        let id = Borrowed(registration).opaque
        var stale: SharedCache.Cell?
        let found = state.withLock { s -> ScopedClaim in
            if let hit = s.scoped.retainedInstance(of: registration) { return .published(hit) }
            if let at = s.scoped.pendingPosition(id) {
                let claim = s.scoped.pending[at]
                if claim.owner == thread {
                    if let cell = claim.cell { return .heldHere(made: claim.made, cell: cell) }
                    let cell = SharedCache.Cell(key: SharedCache.cellKey(registration, .container, in: self), owner: claim.owner,
                                                ownerThread: claim.ownerThread, name: registration.key)
                    s.scoped.pending[at].cell = cell
                    return .heldHere(made: claim.made, cell: cell)
                }
                if claim.forkEpoch == SharedCache.forkEpoch {
                    if let token, claim.owner == Borrowed(token).opaque {
                        // Its token's (a factory of this call suspended making it): taken back.
                        s.scoped.pending[at].owner = thread
                        s.scoped.pending[at].ownerThread = pthread_self()
                        (s.scoped.pending[at].madeWord, s.scoped.pending[at].madeBit) = (madeWord, madeBit)
                        claim.cell?.give(to: thread)
                        return .claimed(claim.cell)
                    }
                    if let cell = claim.cell { return .heldElsewhere(cell) }
                    let cell = SharedCache.Cell(key: SharedCache.cellKey(registration, .container, in: self), owner: claim.owner,
                                                ownerThread: claim.ownerThread, name: registration.key)
                    s.scoped.pending[at].cell = cell
                    return .heldElsewhere(cell)
                }
                // Claimed by a thread fork() left behind (this is the child process): it never finishes here.
                stale = s.scoped.removePending(at: at)
            }
            let cell = makeCell?()
            s.scoped.pending.append(PendingClaim(registration: id, owner: thread, ownerThread: pthread_self(), forkEpoch: SharedCache.forkEpoch,
                                                 madeWord: madeWord, madeBit: madeBit, cell: cell))
            return .claimed(cell)
        }
        stale?.released.store(true, ordering: .relaxed)
        return found
    }

    /// Ends the claim `thread` holds for `registration`, whose run failed or declined (it made
    /// nothing, or destroyed what it made), and wakes its waiters; or, when its factory suspended
    /// (the cell's `holder`), gives the claim to that token (`SharedCache.release`).
    func endScopedClaim(_ registration: Registration, thread: UnsafeMutableRawPointer) {
        let id = Borrowed(registration).opaque
        let cell = state.withLock { s in s.scoped.pending.first(where: { $0.registration == id && $0.owner == thread })?.cell }
        if let cell, cell.holder != nil { return SharedCache.shared.release(cell, failed: true) }
        if let cell = state.withLock({ Self.endClaim(&$0, id, thread) }) { SharedCache.shared.wake(cell) }
    }

    /// Ends the claim of `cell` (a `Graph`'s), if this container still holds it; the caller wakes its waiters.
    func endScopedClaim(_ cell: SharedCache.Cell) {
        state.withLock { s in
            if let at = s.scoped.pending.firstIndex(where: { $0.cell === cell }) { _ = s.scoped.removePending(at: at) }
        }
    }

    /// `tether_token_hold` of a container-scoped instance: the cell of the claim `thread` holds for
    /// `registration` (made now if it had none), nil when it holds none.
    func holdScopedClaim(_ registration: Registration, thread: UnsafeMutableRawPointer, makeCell: () -> SharedCache.Cell) -> SharedCache.Cell? {
        let id = Borrowed(registration).opaque
        return state.withLock { s in
            guard let at = s.scoped.pending.firstIndex(where: { $0.registration == id && $0.owner == thread }) else { return nil }
            if s.scoped.pending[at].cell == nil { s.scoped.pending[at].cell = makeCell() }
            return s.scoped.pending[at].cell
        }
    }

    /// The claim of `cell` now held by `owner`, a token (`SharedCache.handOver`), as if claimed now.
    func handOverScopedClaim(_ cell: SharedCache.Cell, to owner: UnsafeMutableRawPointer) {
        state.withLock { s in
            guard let at = s.scoped.pending.firstIndex(where: { $0.cell === cell }) else { return }
            s.scoped.pending[at].owner = owner
            s.scoped.pending[at].ownerThread = pthread_self()
            s.scoped.pending[at].forkEpoch = SharedCache.forkEpoch
            (s.scoped.pending[at].madeWord, s.scoped.pending[at].madeBit) = (nil, 0)
            cell.give(to: owner)
        }
    }

    /// Whether another thread than `thread` (or a token `own` does not call the thread's) claimed
    /// `registration`'s instance here (`claimScoped`).
    func scopedClaimHeldElsewhere(_ registration: Registration, thread: UnsafeMutableRawPointer, own: (UnsafeMutableRawPointer) -> Bool) -> Bool {
        let id = Borrowed(registration).opaque
        let owner = state.withLock { s in
            s.scoped.pendingPosition(id).flatMap { s.scoped.pending[$0].forkEpoch == SharedCache.forkEpoch ? s.scoped.pending[$0].owner : nil }
        }
        guard let owner, owner != thread else { return false }
        return !own(owner)
    }

    /// `endScopedClaim` under the lock: the claim's cell, if it had one.
    private static func endClaim(_ s: inout State, _ id: UnsafeMutableRawPointer, _ thread: UnsafeMutableRawPointer) -> SharedCache.Cell? {
        guard let at = s.scoped.pending.firstIndex(where: { $0.registration == id && $0.owner == thread }) else { return nil }
        return s.scoped.removePending(at: at)
    }

    /// Takes `pointer`, made by `key`'s container-scoped registration's factory for this
    /// container by a binding running a described plan (`PlanDescription.Step.container`), as
    /// the instance this container caches for it, as if a resolve from here had made it now:
    /// the registration's destructor runs on it when it is let go of (reset, close), in
    /// creation order with the rest. Throws (and keeps nothing) when the container is closed,
    /// `key`'s visible registration is not container-scoped, or this container holds one already.
    public func adoptScoped(_ key: Key, _ pointer: UnsafeMutableRawPointer) throws(TetherError) {
        guard !isClosed else { throw TetherError.containerFreed }
        guard let registration = unretainedRegistration(for: key)?.object else { throw TetherError.notRegistered(key) }
        guard registration.spec.scope.isPerResolvingContainer else {
            throw TetherError(.invalidArgument, "\(key.quoted) has the \(registration.spec.scope.name) scope: only a container-scoped "
                + "instance a described plan made can be adopted; resolve it instead")
        }
        guard scopedInstance(of: registration) == nil else {
            throw TetherError(.invalidArgument, "the container holds an instance of \(key.quoted) already: adopt one made for it only once, "
                + "before anything resolves it from the container")
        }
        let instance = Instance.make(pointer: pointer, spec: registration.specReference.retained(), dependencies: 0,
                                     reference: { _ in fatalError("an adopted instance has no dependencies") })
        defer { instance.release() }  // the cache keeps it
        guard publishScoped(registration, instance.object) else {
            throw TetherError(.invalidArgument, "\(key.quoted) was registered again or the container closed meanwhile: nothing adopted")
        }
    }

    /// `dropBuilt`'s part here: `registrations` (container-scoped, declaring a path to the changed key)
    /// marked at `tick` (`State.supersededAt`), and the instances of those `matching` picks removed, for
    /// `drop`, under one hold of the lock a publication takes: it is either removed or declined.
    func supersedeScoped(_ registrations: [Registration], at tick: UInt, _ matching: (Registration) -> Bool) -> [Dropped] {
        state.withLock { s in
            for r in registrations { s.markSuperseded(Borrowed(r).opaque, at: tick) }
            return Self.takeScoped(&s, matching)
        }
    }

    /// Removes the container-scoped instances of the registrations `matching` picks, for `drop`.
    func takeScoped(_ matching: (Registration) -> Bool) -> [Dropped] {
        state.withLock { s in Self.takeScoped(&s, matching) }
    }

    /// `takeScoped` under the state lock.
    private static func takeScoped(_ s: inout State, _ matching: (Registration) -> Bool) -> [Dropped] {
        var taken: [Dropped] = []
        s.scoped.take(matching, into: &taken)
        return taken
    }

    /// Frees the container: registrations retired (and returned), caches
    /// released, later resolves and registrations refused. Refused while child
    /// containers exist. The registrations stay in place for resolves already
    /// under way, until `dismantle()` or deinit.
    @discardableResult
    public func close() throws(TetherError) -> [Registration] {
        try closeRetiring()
        return state.withLock { _ in table.all() }
    }

    /// `close()` without the list: `forEachRegistration` visits them (the ABI retires their
    /// handles), so a container made and freed per request makes no array.
    public func closeRetiring() throws(TetherError) {
        // A request's child: its few cached instances go through the stack, not an array made to drop them.
        let refused = withUnsafeTemporaryAllocation(of: ScopedEntry.self, capacity: Self.closesOnStack) { buffer -> TetherError? in
            do throws(TetherError) { try closeRetiring(buffer.baseAddress!) } catch { return error }
            return nil
        }
        if let refused { throw refused }
    }

    /// How many container-scoped entries a close lets go of from the stack (more: an array).
    private static var closesOnStack: Int { 8 }

    private func closeRetiring(_ onStack: UnsafeMutablePointer<ScopedEntry>) throws(TetherError) {
        var tracer: Tracer?
        var dropped: [Dropped] = []
        var stacked = 0
        let refused: TetherError? = state.withLock { s in
            if s.isClosed { return TetherError(.invalidHandle, "the container was already freed") }
            if let children = childrenIfAny {
                // Every stripe held while the flag is set: a child made meanwhile is counted here or refused there.
                let open = children.withAllLocked { stripes in
                    let open = stripes.reduce(0) { $0 + $1.pointee.open }
                    if open == 0 { closed.store(true, ordering: .releasing) }
                    return open
                }
                if open > 0 {
                    return TetherError(.invalidArgument, "the container still has \(open) child container(s); free them first")
                }
            }
            s.isClosed = true
            if s.hasRare { tracer = s.tracer }
            closed.store(true, ordering: .releasing)
            configurationChanged()
            if !s.scoped.isEmpty {
                if s.scoped.count <= Self.closesOnStack && neverRegistered && !everDetached.load(ordering: .relaxed) {
                    stacked = s.scoped.moveAll(to: onStack)
                } else {
                    // One array for the scoped instances and what the registrations let go of (a value each, say).
                    dropped.reserveCapacity(s.scoped.count + (tableIfAny?.borrow { $0.smallKeyCount } ?? 0))
                    s.scoped.take({ _ in true }, into: &dropped)
                }
            }
            if s.hasRare {
                if !s.overrides.isEmpty { unwindOverrides(&s) }
                if !s.decorations.isEmpty { s.decorations = [:] }  // (their registrations are in the table, retired with it)
            }
            return nil
        }
        if let refused { throw refused }
        unwatchHitWord()  // before the parent may go (a binding asks a closed container for no hit)
        unretainedParent?.borrow { $0.childClosed(self) }
        forEachRegistration { if let d = $0.retire() { dropped.append(d) } }
        if stacked > 0 {
            if dropped.isEmpty {
                // Last cached first, as `drop` (a value is never lent: no barrier to take).
                for i in stride(from: stacked - 1, through: 0, by: -1) { (onStack + i).deinitialize(count: 1) }
            } else {  // registered meanwhile (a race with this close): one order for all
                for i in 0..<stacked { dropped.append(Dropped(instance: onStack[i].instance, slot: nil, sequence: onStack[i].sequence)) }
                onStack.deinitialize(count: stacked)
            }
        }
        // Consumed: a copy kept here would release them after the tracer goes, unordered. (A request's
        // child has none: its entries went from the stack, and its empty array goes here, no call.)
        if !dropped.isEmpty { drop(consume dropped) }
        if let tracer {  // the hook is not called once the container is freed
            traceWord.store(0, ordering: .releasing)
            tracer.set(nil)
        }
    }

    /// Calls `body` with every registration of a closed container (in no particular order):
    /// the table no longer changes until `dismantle()`.
    public func forEachRegistration(_ body: (Registration) -> Void) {
        precondition(isClosed, "Tether: forEachRegistration() of a container that is not closed")
        tableIfAny?.borrow { $0.forEach(body) }
        if everDetached.load(ordering: .acquiring) { state.withLock { $0.detached }.forEach(body) }
    }

    /// Whether a closed container is reached only through its handle and its registrations'
    /// handles (and strong references): nothing listed, no child ever made (a child's calls reach
    /// their parent unretained), no hit word in its ancestors' lists; and if it registered (then
    /// `dismantle()` lets go of its table, which a call holding the container may be reading), no
    /// cell, provider or override's walk ever reached it (`reachedBesidesHandle`) and no rare state
    /// (a replaced, retired, decorated, overridden or detached registration, a tracer). Freed by the
    /// only thread that looked those handles up (the caller checks them), it needs no grace period
    /// beyond that thread's calls (`Reclamation.retire`).
    package var reachedOnlyThroughHandle: Bool {
        guard !everListed.load(ordering: .acquiring) && childrenSlot.isEmpty && !hitWordWatched.load(ordering: .acquiring) else { return false }
        if neverRegistered { return true }
        return !reachedBesidesHandle.load(ordering: .acquiring) && !everDetached.load(ordering: .acquiring)
            && !state.withLock { $0.hasRare }
    }

    /// Lets go of the registrations of a closed container, once no resolve can
    /// still be reading them (the ABI: when its reclaimer says so), rather than
    /// when the last reference to the container goes (a lazy provider may hold it long after).
    public func dismantle() {
        precondition(isClosed, "Tether: dismantle() of a container that is not closed")
        // Nothing registered (what is retired or detached was in the table first, which keeps its
        // blocks until it goes) and nothing listed (a request's child): nothing to let go of, no lock.
        if neverRegistered && !everListed.load(ordering: .acquiring) { return }
        // The whole table goes (no later child reuses it): its deinit lets go of its entries and blocks.
        let (table, retired) = state.withLock { s -> (Ref<RegistrationTable>?, [Registration]) in
            defer {
                if s.hasRare { (s.retired, s.lists, s.detached) = ([], [:], []) }
                everListed.store(false, ordering: .relaxed)
            }
            return (tableSlot.take(), s.hasRare ? s.retired : [])
        }
        table?.release()  // outside the lock
        _ = consume retired
    }

    /// Releases what caches let go of, after the bridge took over the loans of
    /// what was lent (`SingletonLoan`), one at a time, last-made first: an
    /// instance made later may depend on one made earlier, never the reverse
    /// (its edges keep its dependencies meanwhile; unrelated ones go in that order too).
    func drop(_ dropped: consuming [Dropped]) {
        guard !dropped.isEmpty else { return }
        var dropped = dropped
        if dropped.contains(where: { $0.slot?.lendable == true }) {  // a request's values never were
            bridge.unpublishBarrier()  // before reading `isLent`
            let lent = dropped.filter { $0.slot?.isLent == true }.map(\.instance)
            if !lent.isEmpty { bridge.recall(lent) }
        }
        if dropped.count > 1 { dropped.sort { $0.sequence < $1.sequence } }
        while let last = dropped.popLast() { _ = consume last }
    }
}

/// The hit words of a container's descendants that a binding watches (`Container.hitWordAddress`):
/// made with the first, so a container nobody watches through (a request's child) makes no lock for it.
final class HitWordList: @unchecked Sendable {
    let words = Lock<[UnsafeMutablePointer<Atomic<UInt>>]>([])
}
