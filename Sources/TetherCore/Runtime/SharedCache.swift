#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import Synchronization

/// The one home of shared-instance creation (singleton, weak and container
/// scope): where a resolve looks for the cached instance, claims the right to
/// create a missing one, publishes it and lets go.
///
/// Creation is serialized per (registration, caching container), not per
/// process (Dagger's `DoubleCheck`, Guice's `CycleDetectingLock`): a graph that
/// must create a shared instance claims that key's `Cell` and holds it until
/// the graph is published (after its completion callbacks) or fails; another
/// thread wanting the same key waits for the cell and then takes the published
/// instance (one instance however many threads race), or claims the cell
/// itself when the creator failed (nothing half-built is ever handed out).
/// Other keys and other containers go on meanwhile.
///
/// A thread about to wait for a cell whose holder waits, directly or through
/// other threads, for a cell this thread holds would wait forever (`waitingOn`,
/// read under `waitLock`, which only threads about to wait or done waiting
/// take). Graphs make such cycles without any cyclic dependency: one holds X
/// (made, not yet published) and needs Y, another holds Y and needs X. So a
/// graph claims the cells its constructor edges reach in one order (by key)
/// before creating anything (`Graph.claimInOrder`), and a cycle that remains
/// (a cache reset meanwhile, a key reached from a callback) is broken by a
/// resolve that can start over (no factory or callback of it under way: its
/// `canBackOff`): it gives up its cells, destroys what it made, waits, and runs
/// again (wound-wait: one that cannot start over makes one that can). Only
/// when none in the cycle can (each waits from inside a factory or callback:
/// a cycle through providers across threads) does the finder fail with `.cycle`
/// naming both threads' paths.
///
/// Singleton and weak cells live in striped tables (a mutex and a condition per
/// stripe, held for a few loads and stores, never across user code; 64 stripes,
/// each on cache lines of its own): claiming takes no process-wide lock, and two
/// claims meet in one stripe only by chance. Waiters of any cell wait on its stripe's condition.
///
/// A container-scoped instance's cell is its container's (`Container.claimScoped`: a request's
/// child claims under its own lock, with no allocation), made a `Cell` only when someone waits
/// for it; waiting and cycle detection are the same for both.
///
/// fork(): the child has only the forking thread. Every lock is taken around
/// the fork (`prepare`), so the tables are consistent in the child, which
/// forgets the cells other threads held (they never finish there; the child
/// makes its own instances) and keeps the forking thread's; a container's cells of
/// other threads are forgotten when next looked at (`forkEpoch`).
final class SharedCache: @unchecked Sendable {
    static let shared = SharedCache()

    struct CellKey: Hashable {
        let registration: ObjectIdentifier
        let container: ObjectIdentifier?
    }

    /// One shared instance under creation. `key` never changes; `owner` changes only between a
    /// thread and a token (`CellToken`: `handOver`, a token's resolve taking it back);
    /// `released` is set once, under its stripe's lock.
    final class Cell {
        let key: CellKey
        /// The holder: a thread's `ThreadState` or a `CellToken` (address, a `CellOwner`).
        private let ownerWord: Atomic<UInt>
        /// The holding thread's pthread id (for fork; a token's: the thread that handed it over).
        var ownerThread: pthread_t
        /// The key's name, for messages.
        let name: Key
        let released = Atomic<Bool>(false)
        /// Threads waiting for it (under the stripe's lock): the release broadcasts only then.
        var waiters = 0
        /// Tokens waiting for it (`tether_token_wait`, under the stripe's lock): called once it is released.
        var wakeups: [(fn: @convention(c) (UnsafeMutableRawPointer?) -> Void, context: UnsafeMutableRawPointer?)] = []
        /// Whether the holder's graph made the instance (written and read on the owner's thread
        /// only). A cell claimed ahead (`Graph.claimInOrder`) and not made yet lets a resolve
        /// nested on that thread make and publish the instance itself.
        var made = false
        /// Resolves nested on the holding thread that made the instance under this cell (`Claim.createUnderOuter`)
        /// and have not finished (owner's thread only, `Graph.releaseCells`): one asking for it then is refused
        /// as unfinished, as when the holder made it, never handed a second instance.
        var madeBelow = 0
        /// The token its creation goes on under when the holding thread's resolve fails
        /// (`tether_token_hold`: a factory that suspended); owner's thread only.
        var holder: CellToken?

        init(key: CellKey, owner: UnsafeMutableRawPointer, ownerThread: pthread_t = pthread_self(), name: Key) {
            self.key = key
            self.ownerWord = Atomic(UInt(bitPattern: owner))
            self.ownerThread = ownerThread
            self.name = name
        }

        var owner: UnsafeMutableRawPointer { UnsafeMutableRawPointer(bitPattern: ownerWord.load(ordering: .sequentiallyConsistent))! }

        /// Gives the cell to `owner` (a thread taking back its token's, or a token taking a thread's).
        func give(to owner: UnsafeMutableRawPointer) {
            ownerWord.store(UInt(bitPattern: owner), ordering: .sequentiallyConsistent)
            ownerThread = pthread_self()
            made = false
        }

        /// The container whose creation cell this is (container scope: `Container.claimScoped`), else nil.
        var container: Borrowed<Container>? {
            key.container.map { Borrowed(opaque: UnsafeRawPointer(bitPattern: UInt(bitPattern: $0))!) }
        }
    }

    /// A stripe's cells: the shared instances under creation whose key falls in the stripe, a few
    /// at a time, so a list searched in order (no hashing; its storage kept between creations).
    struct CellList {
        private var cells: [Cell] = []
        subscript(key: CellKey) -> Cell? { cells.first { $0.key == key } }
        mutating func insert(_ cell: Cell) { cells.append(cell) }
        /// Removes `cell` if the list holds it (not another cell of its key).
        mutating func remove(_ cell: Cell) {
            guard let i = cells.firstIndex(where: { $0 === cell }) else { return }
            cells.swapAt(i, cells.count - 1)
            cells.removeLast()
        }
        /// Removes the cells for which `forget` is true.
        mutating func removeAll(where forget: (Cell) -> Bool) { cells.removeAll(where: forget) }
    }

    /// A slice of the table: its cells, its mutex and the condition waiters wait on.
    /// Each stripe's words stay off other stripes' cache lines: its mutex and condition in one
    /// block of two lines of their own, its object padded past a line (a request's container-scoped
    /// instance is claimed in a stripe picked by address: two requests on two cores share one only
    /// by chance, and must not share a line by placement).
    private final class Stripe {
        private static let lockBlock = UnsafeMutableRawPointer.allocate(byteCount: 128 * SharedCache.stripeCount, alignment: 128)
        private static let blocksUsed = Atomic<Int>(0)
        let mutex: UnsafeMutablePointer<pthread_mutex_t>
        let changed: UnsafeMutablePointer<pthread_cond_t>
        var cells = CellList()
        private let padding: (UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0, 0, 0, 0, 0)

        init() {
            precondition(MemoryLayout<pthread_mutex_t>.size <= 64 && MemoryLayout<pthread_cond_t>.size <= 64)
            let block = Self.lockBlock + 128 * Self.blocksUsed.add(1, ordering: .relaxed).oldValue
            mutex = block.bindMemory(to: pthread_mutex_t.self, capacity: 1)
            changed = (block + 64).bindMemory(to: pthread_cond_t.self, capacity: 1)
            initialize()
        }

        func initialize() {
            pthread_mutex_init(mutex, nil)
            pthread_cond_init(changed, nil)
        }
    }

    /// 2^6: `stripe` takes 6 bits (more than the 32 before, so requests on many cores rarely
    /// meet in one; not many more: `fork` holds every one at once, and ThreadSanitizer's
    /// deadlock detector counts at most 128 locks held by one thread).
    fileprivate static let stripeCount = 64
    private let stripes: [Stripe]
    /// Taken to look at or change what threads wait for (`ThreadState.waitingOn`).
    private let waitLock = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)

    private init() {
        stripes = (0..<Self.stripeCount).map { _ in Stripe() }
        pthread_mutex_init(waitLock, nil)
        pthread_atfork({ SharedCache.shared.lockAll() }, { SharedCache.shared.unlockAll() }, { SharedCache.shared.afterForkInChild() })
    }

    /// The stripe of `key`: its addresses mixed (Fibonacci hashing), high bits taken.
    @inline(__always)
    private func stripe(_ key: CellKey) -> Stripe {
        let bits = UInt(bitPattern: key.registration) &* 31 &+ (key.container.map { UInt(bitPattern: $0) } ?? 0)
        return stripes[Int((bits &* 0x9E37_79B9_7F4A_7C15) >> (UInt.bitWidth - 6))]
    }

    // MARK: looking up, claiming, publishing

    /// The cached instance of `registration` (`container`'s, for the container scope), retained.
    @inline(__always)
    static func cached(_ registration: Registration, _ scope: Scope, in container: Container) -> Ref<Instance>? {
        registration.cachedRetained(scope, in: container)
    }

    /// What `claim` found: the published instance (retained), the cell to create
    /// it under, or a wait cycle this resolve must break by starting over once `cell`
    /// is released (`error` if it cannot any more).
    enum Claim {
        case published(Ref<Instance>)
        case create(Cell)
        /// Create it under `cell`, which a resolve further out on this thread claimed ahead and has not made.
        case createUnderOuter(Cell)
        case backOff(Cell, TetherError)
    }

    static func cellKey(_ registration: Registration, _ scope: Scope, in container: Container) -> CellKey {
        CellKey(registration: ObjectIdentifier(registration), container: scope.isPerResolvingContainer ? ObjectIdentifier(container) : nil)
    }

    /// The published instance of `registration`, or its cell claimed for the
    /// calling thread (`thread`, its `ThreadState`): waits while another thread
    /// holds the cell. Fails with `.cycle` when waiting would never end (the cell
    /// is held by this thread further out, or by a thread that waits for this
    /// one), with `.wouldBlock` when this thread resolves in no-wait mode (`WaitMode`)
    /// and another thread holds it. `path`: what this thread is building, for messages.
    func claim(_ registration: Registration, _ scope: Scope, in container: Container, thread: UnsafeMutableRawPointer,
               canBackOff: Bool, path: () -> [Key]) throws(TetherError) -> Claim {
        if scope.isPerResolvingContainer {
            return try claimScoped(registration, in: container, thread: thread, canBackOff: canBackOff, path: path)
        }
        let key = Self.cellKey(registration, scope, in: container)
        let stripe = stripe(key)
        while true {
            if let hit = Self.cached(registration, scope, in: container) { return .published(hit) }
            pthread_mutex_lock(stripe.mutex)
            guard let held = stripe.cells[key] else {
                let cell = Cell(key: key, owner: thread, name: registration.key)
                stripe.cells.insert(cell)
                pthread_mutex_unlock(stripe.mutex)
                // Published and let go of between the look above and the claim.
                if let hit = Self.cached(registration, scope, in: container) {
                    release(cell)
                    return .published(hit)
                }
                return .create(cell)
            }
            let owner = held.owner
            if owner != thread, let token = Self.token(of: thread), owner == Borrowed(token).opaque {
                // Its token's (a factory of this call suspended making it, `hold`): this resolve takes it back.
                held.give(to: thread)
                pthread_mutex_unlock(stripe.mutex)
                return .create(held)
            }
            pthread_mutex_unlock(stripe.mutex)
            // Made by a resolve further out on this thread that has not finished:
            // handing it out could outlive that resolve's failure.
            if owner == thread {
                if !held.made && held.madeBelow == 0 { return .createUnderOuter(held) }
                throw TetherError.unfinished(registration.key, path: path())
            }
            let state = Borrowed<ThreadState>(opaque: thread)
            if let token = Self.refusing(thread) { throw refuse(held, for: token, state) }
            try Self.refuseWaitingIfAsked(registration.key, state)
            if let backOff = try wait(for: held, in: stripe, state, canBackOff: canBackOff) { return backOff }
        }
    }

    /// `claim` of a container-scoped instance: the container's own creation cell of the key
    /// (`Container.claimScoped`), waited for here as any other cell.
    private func claimScoped(_ registration: Registration, in container: Container, thread: UnsafeMutableRawPointer,
                             canBackOff: Bool, path: () -> [Key]) throws(TetherError) -> Claim {
        while true {
            let token = Self.token(of: thread)
            let found = container.claimScoped(registration, thread: thread, token: token) {
                Cell(key: Self.cellKey(registration, .container, in: container), owner: thread, name: registration.key)
            }
            switch found {
            case .published(let hit): return .published(hit)
            case .claimed(let cell): return .create(cell!)
            case .heldHere(let made, let cell):
                // As in `claim`: made by a resolve further out on this thread that has not finished.
                if !made && cell.madeBelow == 0 { return .createUnderOuter(cell) }
                throw TetherError.unfinished(registration.key, path: path())
            case .heldElsewhere(let held):
                let state = Borrowed<ThreadState>(opaque: thread)
                if let token = Self.refusing(thread) { throw refuse(held, for: token, state) }
                try Self.refuseWaitingIfAsked(registration.key, state)
                if let backOff = try wait(for: held, in: stripe(held.key), state, canBackOff: canBackOff) { return backOff }
            }
        }
    }

    /// Waits until `held`, a container-scoped instance's cell another thread claimed (`Container.claimScoped`),
    /// is released, as `claimScoped` waits, for a plan's run that let go of every cell it held
    /// (`Plan.runRequest`: the thread's outermost resolve, acting for no token). False, without waiting, when
    /// the thread must not wait (no-wait mode) or the wait would be refused or fail: the build then claims,
    /// waits or reports as it does.
    func waitReleasedForPlan(_ held: Cell, thread: UnsafeMutableRawPointer) -> Bool {
        let state = Borrowed<ThreadState>(opaque: thread)
        guard Self.refusing(thread) == nil, !state.borrow({ $0.noWait }) else { return false }
        do throws(TetherError) {
            _ = try wait(for: held, in: stripe(held.key), state, canBackOff: true)  // backing off: it holds nothing
        } catch {
            return false
        }
        return true
    }

    /// Fails with `.wouldBlock` when the calling thread (`state`) resolves in no-wait mode (`WaitMode`)
    /// and would wait for another thread's creation of `key`.
    private static func refuseWaitingIfAsked(_ key: Key, _ state: Borrowed<ThreadState>) throws(TetherError) {
        guard state.borrow({ $0.noWait }) else { return }
        state.borrow { $0.blocked = true }
        throw TetherError(.wouldBlock, "creating \(key.quoted) must wait for another thread that is creating it; this resolve was asked not to wait (TETHER_RESOLVE_NO_WAIT): retry without it")
    }

    /// The token the thread at `thread` (its `ThreadState`) resolves for now, if any (`tether_token_enter`).
    static func token(of thread: UnsafeMutableRawPointer) -> CellToken? {
        Borrowed<ThreadState>(opaque: thread).borrow { $0.tokens.last?.token }
    }

    /// The token a resolve on `thread` acting for one is refused for instead of waiting: the
    /// binding's own call, made right inside its `tether_token_enter` (also when that enter is
    /// itself nested in a factory of an outer resolve: an async factory that calls its nested
    /// resolve before it first suspends); not a resolve nested in one of that call's factories,
    /// which waits for a thread as any resolve does, so the factory runs once (one waiting for a
    /// task of its own thread is refused all the same, `wait`).
    static func refusing(_ thread: UnsafeMutableRawPointer) -> CellToken? {
        Borrowed<ThreadState>(opaque: thread).borrow { state in
            state.tokens.last.flatMap { state.nesting <= $0.nesting + 1 ? $0.token : nil }
        }
    }

    /// A resolve acting for `token` never blocks its thread: the error it fails with when it would
    /// wait for `cell`, `.wouldBlock` with `token` now waiting for it (`wakeWhenReleased`), or
    /// `.cycle` when that wait would never end (the holder waits, through other tokens and
    /// threads, for this token or one further out on its task).
    private func refuse(_ cell: Cell, for token: CellToken, _ state: Borrowed<ThreadState>) -> TetherError {
        let myPath = state.borrow { Reentry.constructing($0).map { $0.borrow { $0.key } } } + [cell.name]
        pthread_mutex_lock(waitLock)
        let found = cycle(from: cell) { token.isSelfOrOuter($0) }
        token.waitingOn = found == nil ? cell : nil
        token.waitingPath = found == nil ? myPath : []
        pthread_mutex_unlock(waitLock)
        if let found { return Self.crossThreadCycle(myPath, cell.name, found.chain, task: true) }
        state.borrow { $0.blocked = true }
        return TetherError(.wouldBlock, "creating \(cell.name.quoted) must wait for another task or thread that is creating it; "
            + "a resolve acting for a token (tether_token_enter) does not block its thread: wait with tether_token_wait, then resolve again")
    }

    /// Under `waitLock`: follows the holders `cell` waits on (each holds the cell the one before
    /// waits for; a token through the calls nested in it, which it awaits) until one that
    /// `isMine`: their paths and what each waits for, the threads among them, and whether a
    /// token is; nil when the chain ends first (someone in it runs).
    private func cycle(from cell: Cell, isMine: (UnsafeMutableRawPointer) -> Bool)
        -> (chain: [(path: [Key], waitsFor: Key)], holders: [ThreadState], throughToken: Bool, endsAtToken: Bool)? {
        var chain: [(path: [Key], waitsFor: Key)] = []
        var holders: [ThreadState] = []
        var throughToken = false
        var next = cell
        while !next.released.load(ordering: .sequentiallyConsistent) {
            let owner = next.owner
            if isMine(owner) {
                let isToken = Borrowed<CellOwner>(opaque: owner).borrow { $0.isToken }
                return (chain, holders, throughToken || isToken, isToken)
            }
            var waiter = Borrowed<CellOwner>(opaque: owner).object
            if let token = waiter as? CellToken {
                throughToken = true
                guard let inner = token.waitingDescendant else { return nil }
                waiter = inner
            }
            guard let waited = waiter.waitingOn, chain.count < 64 else { return nil }
            chain.append((waiter.waitingPath, waited.name))
            if let thread = waiter as? ThreadState { holders.append(thread) }
            next = waited
        }
        return nil
    }

    /// Waits until `cell` is released, for a thread that holds no cell (one starting over).
    func waitReleased(_ cell: Cell) {
        let stripe = stripe(cell.key)
        pthread_mutex_lock(stripe.mutex)
        cell.waiters += 1
        while !cell.released.load(ordering: .sequentiallyConsistent) { pthread_cond_wait(stripe.changed, stripe.mutex) }
        cell.waiters -= 1
        pthread_mutex_unlock(stripe.mutex)
    }

    /// Whether another thread than `thread` holds the cell of `registration` now (`Graph.checkBeforeNotWaiting`).
    /// A cell of the thread's token (`tether_token_enter`) or of one further out on its task is not
    /// another's (the build takes it back, or reports a key of its task's as re-entered).
    func heldElsewhere(_ registration: Registration, _ scope: Scope, in container: Container, thread: UnsafeMutableRawPointer) -> Bool {
        let token = Self.token(of: thread)
        let own: (UnsafeMutableRawPointer) -> Bool = { owner in
            guard let token else { return false }
            pthread_mutex_lock(self.waitLock)
            defer { pthread_mutex_unlock(self.waitLock) }
            return token.isSelfOrOuter(owner)
        }
        if scope.isPerResolvingContainer { return container.scopedClaimHeldElsewhere(registration, thread: thread, own: own) }
        let key = Self.cellKey(registration, scope, in: container)
        let stripe = stripe(key)
        pthread_mutex_lock(stripe.mutex)
        let owner = stripe.cells[key]?.owner
        pthread_mutex_unlock(stripe.mutex)
        guard let owner, owner != thread else { return false }
        return !own(owner)
    }

    /// Publishes `instance`, made by a finished graph, into its cache: the
    /// registration's (singleton, weak) or `container`'s (container scope).
    /// Publish before releasing the cell: a waiter woken by the release takes it from there.
    /// `tick`: the `SupersedeClock` the graph read before its build (`Registration.publish(_:builtSince:)`,
    /// `Container.publishScoped(_:_:endingClaimOf:builtSince:)`).
    static func publish(_ registration: Registration, _ instance: Instance, in container: Container?, builtSince tick: UInt = .max) {
        if let container { container.publishScoped(registration, instance, endingClaimOf: nil, builtSince: tick) } else { registration.publish(instance, builtSince: tick) }
    }

    /// Lets go of `cell` (after its instance was published, or the creation failed) and wakes its
    /// waiters; when the creation `failed` and the cell has a `holder` (its factory suspended), the
    /// cell goes to that token instead (`handOver`).
    func release(_ cell: Cell, failed: Bool = false) {
        if let holder = cell.holder {
            cell.holder = nil
            if failed { return handOver(cell, to: holder) }
        }
        if let container = cell.container {
            container.borrow { $0.endScopedClaim(cell) }
            return wake(cell)
        }
        let stripe = stripe(cell.key)
        pthread_mutex_lock(stripe.mutex)
        stripe.cells.remove(cell)
        let wakeups = releaseLocked(cell, stripe)
        pthread_mutex_unlock(stripe.mutex)
        for (fn, context) in wakeups { fn(context) }
    }

    /// Marks `cell`, a container's creation cell no longer held there (`Container.claimScoped`),
    /// released, and wakes its waiters (who wait under its stripe's lock, as for any cell).
    func wake(_ cell: Cell) {
        let stripe = stripe(cell.key)
        pthread_mutex_lock(stripe.mutex)
        let wakeups = releaseLocked(cell, stripe)
        pthread_mutex_unlock(stripe.mutex)
        for (fn, context) in wakeups { fn(context) }  // (no lock held: a binding's callback may take its own)
    }

    private func releaseLocked(_ cell: Cell, _ stripe: Stripe) -> [(fn: @convention(c) (UnsafeMutableRawPointer?) -> Void, context: UnsafeMutableRawPointer?)] {
        cell.released.store(true, ordering: .sequentiallyConsistent)
        if cell.waiters > 0 { pthread_cond_broadcast(stripe.changed) }
        defer { cell.wakeups = [] }
        return cell.wakeups
    }

    // MARK: tokens

    /// `tether_token_hold`: the cell of `registration` (`container`'s, for the container scope)
    /// the calling thread (`thread`) holds goes to `token` if its resolve fails (its factory goes
    /// on outside it). False when this thread holds no such cell.
    func hold(_ registration: Registration, _ scope: Scope, in container: Container, thread: UnsafeMutableRawPointer, for token: CellToken) -> Bool {
        guard scope.isShared else { return false }
        if scope.isPerResolvingContainer {
            token.thread = thread
            return container.holdScopedClaim(registration, thread: thread) {
                Cell(key: Self.cellKey(registration, .container, in: container), owner: thread, name: registration.key)
            }.map { $0.holder = token } != nil
        }
        let key = Self.cellKey(registration, scope, in: container)
        let stripe = stripe(key)
        pthread_mutex_lock(stripe.mutex)
        defer { pthread_mutex_unlock(stripe.mutex) }
        guard let cell = stripe.cells[key], cell.owner == thread else { return false }
        cell.holder = token
        token.thread = thread
        return true
    }

    /// Gives `cell`, held by the calling thread's failed resolve, to `token`: still held (nobody
    /// else creates its instance), until a resolve acting for `token` takes it back or `token` is freed.
    private func handOver(_ cell: Cell, to token: CellToken) {
        let owner = Borrowed(token).opaque
        var container: Container?
        if let scoped = cell.container {
            container = scoped.object
            scoped.borrow { $0.handOverScopedClaim(cell, to: owner) }
        } else {
            let stripe = stripe(cell.key)
            pthread_mutex_lock(stripe.mutex)
            cell.give(to: owner)
            pthread_mutex_unlock(stripe.mutex)
        }
        token.took(cell, container)
    }

    /// Links `token` into its task's chain (`CellToken.parent`).
    func link(_ token: CellToken, to parent: CellToken?) {
        guard let parent else { return }
        pthread_mutex_lock(waitLock)
        token.parent = parent
        parent.children.append(token)
        pthread_mutex_unlock(waitLock)
    }

    /// Before a resolve acting for `token` runs (again): it waits for nothing now.
    func clearWait(_ token: CellToken) {
        pthread_mutex_lock(waitLock)
        token.waitingOn = nil
        token.waitingPath = []
        pthread_mutex_unlock(waitLock)
    }

    /// Calls `fn(context)` once the cell `token` was last refused (`refuse`) is released: at once
    /// when it is, or when `token` waits for none.
    func wakeWhenReleased(_ token: CellToken, _ fn: @convention(c) (UnsafeMutableRawPointer?) -> Void, _ context: UnsafeMutableRawPointer?) {
        pthread_mutex_lock(waitLock)
        let cell = token.waitingOn
        pthread_mutex_unlock(waitLock)
        if let cell {
            let stripe = stripe(cell.key)
            pthread_mutex_lock(stripe.mutex)
            if !cell.released.load(ordering: .sequentiallyConsistent) {
                cell.wakeups.append((fn, context))
                pthread_mutex_unlock(stripe.mutex)
                return
            }
            pthread_mutex_unlock(stripe.mutex)
        }
        fn(context)
    }

    /// Frees `token`: the cells it still holds are released (their waiters go on: one of them
    /// creates the instance), and it leaves its task's chain.
    func free(_ token: CellToken) {
        let me = Borrowed(token).opaque
        pthread_mutex_lock(waitLock)  // (a chain walked meanwhile never reads a freed token)
        token.waitingOn = nil
        token.waitingPath = []
        let held = token.cells.filter { !$0.cell.released.load(ordering: .sequentiallyConsistent) && $0.cell.owner == me }
        token.cells = []
        if let parent = token.parent { parent.children.removeAll { $0 === token } }
        for child in token.children { child.parent = nil }
        token.children = []
        token.parent = nil
        var wakeups: [(fn: @convention(c) (UnsafeMutableRawPointer?) -> Void, context: UnsafeMutableRawPointer?)] = []
        for (cell, container) in held {
            container?.endScopedClaim(cell)
            let stripe = stripe(cell.key)
            pthread_mutex_lock(stripe.mutex)
            if container == nil { stripe.cells.remove(cell) }
            wakeups += releaseLocked(cell, stripe)
            pthread_mutex_unlock(stripe.mutex)
        }
        pthread_mutex_unlock(waitLock)
        for (fn, context) in wakeups { fn(context) }
    }

    /// Grows by one in the child of every fork(): a container's creation cell claimed in an
    /// earlier epoch by another thread than the forking one never finishes (`Container.claimScoped`
    /// forgets it). Written on the forking thread before anything else runs in the child.
    nonisolated(unsafe) static var forkEpoch: UInt = 0

    // MARK: waiting

    /// Waits until `cell` is released (nil), unless its holder (through the threads
    /// it waits for) waits for this thread: then this resolve starts over
    /// (`.backOff`) if it can, else makes one in the cycle that can start over, or
    /// fails with both paths when none can. Also `.backOff` when wounded while waiting.
    private func wait(for cell: Cell, in stripe: Stripe, _ state: Borrowed<ThreadState>, canBackOff: Bool) throws(TetherError) -> Claim? {
        let me = state.opaque
        // Every graph of this thread (the one asking is among them): read before the wait, on this thread.
        let myPath = state.borrow { Reentry.constructing($0).map { $0.borrow { $0.key } } } + [cell.name]
        pthread_mutex_lock(waitLock)
        // Mine: this thread, or a token last acting on it (a task of this thread's loop, which cannot run while it waits).
        if let found = cycle(from: cell, isMine: { owner in
            owner == me || Borrowed<CellOwner>(opaque: owner).borrow { ($0 as? CellToken)?.thread == me }
        }) {
            if found.endsAtToken {
                // A task of this thread's loop, which cannot run while this thread waits: refused, as a
                // no-wait resolve is (the binding's async resolve waits for it without blocking).
                pthread_mutex_unlock(waitLock)
                // Nested in a resolve acting for a token: that token waits for the cell (and is woken).
                if let token = Self.token(of: me) { throw refuse(cell, for: token, state) }
                state.borrow { $0.blocked = true }
                throw TetherError(.wouldBlock, "creating \(cell.name.quoted) must wait for a task that runs on this thread "
                    + "(a binding's awaiting call holds it, tether_token_hold): waiting here would block that task forever; "
                    + "resolve it from the binding's async resolve (which awaits it) or from another thread")
            }
            let error = Self.crossThreadCycle(myPath, cell.name, found.chain, task: found.throughToken)
            // A token never starts over for a thread (its factory goes on outside the library).
            if canBackOff && !found.throughToken {
                pthread_mutex_unlock(waitLock)
                return .backOff(cell, error)
            }
            guard !found.throughToken, let victim = found.holders.first(where: { $0.canBackOff }), let victimCell = victim.waitingOn else {
                pthread_mutex_unlock(waitLock)
                throw error
            }
            let victimStripe = self.stripe(victimCell.key)
            pthread_mutex_lock(victimStripe.mutex)
            victim.wounded = true
            pthread_cond_broadcast(victimStripe.changed)
            pthread_mutex_unlock(victimStripe.mutex)
            // and wait: the victim lets go of its cells
        }
        state.borrow {
            $0.waitingOn = cell
            $0.waitingPath = myPath
            $0.canBackOff = canBackOff
        }
        pthread_mutex_unlock(waitLock)

        pthread_mutex_lock(stripe.mutex)
        cell.waiters += 1
        var wounded = false
        while !cell.released.load(ordering: .sequentiallyConsistent) {
            if state.borrow({ $0.wounded }) { break }
            pthread_cond_wait(stripe.changed, stripe.mutex)
        }
        cell.waiters -= 1
        state.borrow {
            wounded = $0.wounded && !cell.released.load(ordering: .sequentiallyConsistent)
        }
        pthread_mutex_unlock(stripe.mutex)

        pthread_mutex_lock(waitLock)
        state.borrow {
            $0.waitingOn = nil
            $0.waitingPath = []
            $0.canBackOff = false
            $0.wounded = false  // a late wound (the cell came first) is moot: this resolve goes on
        }
        pthread_mutex_unlock(waitLock)
        return wounded ? .backOff(cell, Self.crossThreadCycle(myPath, cell.name, [])) : nil
    }

    /// This thread (building `myPath`, whose last key another thread creates)
    /// would wait for threads that wait, in turn, for it: `chain`, their paths
    /// and what each waits for, the last one a key this thread holds.
    /// `task`: a token is among them (an awaiting call of a binding: a task, for the message).
    /// An empty `chain` with `task`: the holder is a call further out on this task (it awaits this
    /// one). The parts' path is the cycle itself (its first key repeated last), each key once,
    /// ending in this caller's own edge.
    static func crossThreadCycle(_ myPath: [Key], _ waited: Key, _ chain: [(path: [Key], waitsFor: Key)], task: Bool = false) -> TetherError {
        let keys = chain.isEmpty && !task ? myPath : waitCycle(myPath, waited, chain)
        let (this, other) = task ? ("this task or thread", "another task or thread") : ("this thread", "another thread")
        var message: String
        if chain.isEmpty && task {
            message = "dependency cycle through a task's nested calls: this task builds \(pathText(myPath)) and would wait for \(waited.quoted), "
                + "which a call further out on this task is creating while it awaits this one: neither can finish"
        } else {
            message = "cross-\(task ? "task" : "thread") dependency cycle: \(this) builds \(pathText(myPath)) and would wait for \(waited.quoted), which \(other) is creating"
            for (n, step) in chain.enumerated() {
                message += n == 0 ? " while it builds " : "; that one builds "
                message += "\(pathText(step.path)) and waits for \(step.waitsFor.quoted)"
            }
            message += ", which \(this) is creating: each would wait for the other forever"
        }
        let from = keys.count >= 2 ? keys[keys.count - 2] : waited
        message += "; break the cycle's edge \(from.quoted) -> \(waited.quoted): "
            + "declare the slot TETHER_WEAK_LAZY(\(waited.quoted)) in \(from.quoted) and call it once \(from.quoted) is made, instead of resolving "
            + "\(waited.quoted) while \(from.quoted) is being made (a completion callback of \(from.quoted) does not break it: "
            + "\(from.quoted) is published only after its callbacks ran, and the other waits for that)"
        return TetherError(.cycle, message, ErrorParts(.waitCycle, key: waited, path: keys))
    }

    /// The wait cycle `crossThreadCycle` reports, as one path: `waited`, then each holder's keys
    /// after the one the caller before it waits for (a holder's path may begin further out, and
    /// ends in what it waits for), then this caller's keys after the one the last holder waits for
    /// (which this caller holds): `waited` again.
    private static func waitCycle(_ myPath: [Key], _ waited: Key, _ chain: [(path: [Key], waitsFor: Key)]) -> [Key] {
        func after(_ key: Key, in path: [Key]) -> ArraySlice<Key> {
            guard let at = path.dropLast().lastIndex(of: key) else { return path[...] }
            return path[(at + 1)...]
        }
        var keys = [waited]
        var from = waited
        for step in chain {
            keys += after(from, in: step.path)
            from = step.waitsFor
        }
        return keys + after(from, in: myPath)
    }

    // MARK: fork

    private func lockAll() {
        pthread_mutex_lock(waitLock)
        for stripe in stripes { pthread_mutex_lock(stripe.mutex) }
    }

    private func unlockAll() {
        for stripe in stripes.reversed() { pthread_mutex_unlock(stripe.mutex) }
        pthread_mutex_unlock(waitLock)
    }

    /// In the child of fork(), on the forking thread, before anything else runs there.
    private func afterForkInChild() {
        Self.forkEpoch &+= 1
        pthread_mutex_init(waitLock, nil)
        let me = pthread_self()
        for stripe in stripes {
            stripe.initialize()
            stripe.cells.removeAll { cell in
                // (a token's too: the task awaiting it goes on in the parent only)
                guard pthread_equal(cell.ownerThread, me) == 0 || Borrowed<CellOwner>(opaque: cell.owner).borrow({ $0.isToken }) else { return false }
                cell.released.store(true, ordering: .relaxed)
                cell.wakeups = []
                return true
            }
        }
    }
}

/// What holds creation cells and waits for them (`SharedCache`): a thread (`ThreadState`) or a
/// binding's token (`CellToken`). The wait fields are read and written under `waitLock` only.
public class CellOwner {
    /// The creation cell it waits for, and what it builds meanwhile.
    var waitingOn: SharedCache.Cell?
    var waitingPath: [Key] = []
    /// Whether the resolve that waits can start over (`SharedCache.claim`'s `canBackOff`; never a token).
    var canBackOff = false
    /// Set by a thread that found this one in a wait cycle and cannot start over
    /// itself: this one gives up its cells and starts over (under its cell's stripe lock).
    var wounded = false
    let isToken: Bool

    init(isToken: Bool) { self.isToken = isToken }
}

/// A holder of creation cells that is not a thread: a binding's call that awaits (an asyncio
/// task's `aresolve`), so a shared instance whose factory suspended stays claimed while it is
/// awaited outside the library, and a resolve acting for it never blocks its thread
/// (`tether_token_*` in tether_binding.h). Waits between tokens and threads are one graph: a
/// token waits for the cell it was refused (`waitingOn`), and for its nested calls (`children`:
/// the calls its suspended factory awaits, on the same task).
public final class CellToken: CellOwner {
    /// The token of the call further out on the same task, which waits for this one (unretained:
    /// a binding frees a nested token first; `free` detaches what is left). Under `waitLock`.
    fileprivate(set) var parent: CellToken?
    fileprivate var children: [CellToken] = []
    /// The cells handed to it (`handOver`), with the container of a container-scoped one (kept alive
    /// while it holds the claim); some may have been taken back or released since. Its thread only.
    var cells: [(cell: SharedCache.Cell, container: Container?)] = []
    /// The thread it last acted on (`ThreadState`): a thread that would wait for it there waits for
    /// itself. Read by other threads' wait walks.
    private let threadWord = Atomic<UInt>(0)
    var thread: UnsafeMutableRawPointer? {
        get { UnsafeMutableRawPointer(bitPattern: threadWord.load(ordering: .relaxed)) }
        set { threadWord.store(UInt(bitPattern: newValue), ordering: .relaxed) }
    }
    /// How many times a thread entered it now.
    public internal(set) var entered = 0

    public init(parent: CellToken?) {
        super.init(isToken: true)
        SharedCache.shared.link(self, to: parent)
    }

    func took(_ cell: SharedCache.Cell, _ container: Container?) {
        if !cells.contains(where: { $0.cell === cell }) { cells.append((cell, container)) }
    }

    /// This token and the ones further out on its task (each waits for the next inner one).
    fileprivate func isSelfOrOuter(_ owner: UnsafeMutableRawPointer) -> Bool {
        var next: CellToken? = self
        while let token = next {
            if Borrowed(token).opaque == owner { return true }
            next = token.parent
        }
        return false
    }

    /// The innermost token nested in this one that waits for a cell, if any (a task's calls are sequential).
    fileprivate var waitingDescendant: CellToken? {
        if waitingOn != nil { return self }
        for child in children { if let found = child.waitingDescendant { return found } }
        return nil
    }
}

/// The binding's calls on tokens (`tether_token_*`).
extension CellToken {
    /// Until `leave`, the calling thread's resolves act for this token.
    /// A refusal inside (`.wouldBlock`, its wait this token's) is not a resolve further out on the
    /// thread failing rather than wait (`ThreadState.blocked`, `WaitMode`): the binding awaits it, and
    /// an outer factory that suspends for it fails the outer resolve as a suspension, to be awaited too.
    public func enter() {
        SharedCache.shared.clearWait(self)
        ThreadState.currentReference.borrow { state in
            state.tokens.append(.init(token: self, nesting: state.nesting, blocked: state.blocked))
            state.blocked = false
            thread = Borrowed(state).opaque
        }
        entered += 1
    }

    /// Ends the calling thread's last `enter`; false when it has none.
    public static func leave() -> Bool {
        ThreadState.currentReference.borrow { state in
            guard let last = state.tokens.popLast() else { return false }
            last.token.entered -= 1
            state.blocked = last.blocked
            return true
        }
    }

    /// The creation cell of `key` (as `container` resolves it) the calling thread holds goes to
    /// this token if its resolve fails; false when it holds none.
    public func hold(_ key: Key, in container: Container) -> Bool {
        guard let registration = container.unretainedRegistration(for: key) else { return false }
        // The token's later calls (any thread's, no container handle) reach the cell of its registration.
        container.noteReachedBesidesHandle()
        return ThreadState.currentReference.borrow { state in
            registration.borrow { r in SharedCache.shared.hold(r, r.spec.scope, in: container, thread: Borrowed(state).opaque, for: self) }
        }
    }

    /// Calls `fn(context)` once the cell a resolve acting for this token was refused is released.
    public func wake(_ fn: @convention(c) (UnsafeMutableRawPointer?) -> Void, _ context: UnsafeMutableRawPointer?) {
        SharedCache.shared.wakeWhenReleased(self, fn, context)
    }

    /// Releases the cells this token holds and unlinks it (before its last reference goes).
    public func free() { SharedCache.shared.free(self) }
}

/// Whether resolves on the calling thread may wait for another thread's
/// creation cell (`SharedCache`). A caller that must not block (one holding an
/// interpreter lock that the cell's holder may need) resolves in no-wait mode and retries the ordinary way on
/// `.wouldBlock`.
public enum WaitMode {
    /// Runs `body` with this thread's resolves (nested ones too) in no-wait mode
    /// or not; `blocked`: whether one of them failed with `.wouldBlock`.
    public static func run<R>(noWait: Bool, _ body: () -> R) -> (result: R, blocked: Bool) {
        ThreadState.currentReference.borrow { state in
            let (outerMode, outerBlocked) = (state.noWait, state.blocked)
            state.noWait = noWait
            state.blocked = false
            let result = body()
            let blocked = state.blocked
            state.noWait = outerMode
            state.blocked = outerBlocked || blocked
            return (result, blocked)
        }
    }
}
