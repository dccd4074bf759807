#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A container's container-scoped instances, by registration (`Container.State.scoped`).
/// A request's child holds a few: a list searched in order costs no hashing and one
/// allocation, where a dictionary hashed every lookup and was copied on close. Past
/// `indexedPast` entries (a root caching many) an index by registration keeps lookups flat.
///
/// Also the container's creation cells (`pending`): a container-scoped instance under
/// creation for this container is claimed here, under the lock its cache lookup takes
/// (`Container.claimScoped`), so a request's child claims and publishes its instances with
/// no allocation and no lock but its own. A `SharedCache.Cell` is made only for a claim
/// someone waits for (or a `Graph`'s, which keeps its cells): the waiting, cross-thread cycle
/// detection and fork rules stay `SharedCache`'s.
struct ScopedEntries {
    /// The first `inlineCapacity` entries, in place: a request's child caches a value and an
    /// instance or two with no allocation (no array made, grown and freed per request); the
    /// rest in `more`. Entries `0..<count`, in the order they came.
    private var first: (Container.ScopedEntry?, Container.ScopedEntry?, Container.ScopedEntry?, Container.ScopedEntry?) = (nil, nil, nil, nil)
    private(set) var count = 0
    /// Claims under way, a few at a time (usually none; a request's one at a time, kept inline).
    var pending = PendingClaims()
    /// The entries past the inline ones and their index, in a box made by the first: a request's
    /// child lets go of one empty reference with its state, not an empty array and an index.
    private final class Spill {
        var more: [Container.ScopedEntry] = []
        var index: [UnsafeMutableRawPointer: Int] = [:]
    }
    private var spill: Spill?
    /// `spill.index` is in use (read inline: a lookup reads no box while there is none).
    private var indexed = false
    /// The entries past the inline ones (only asked for when there are some).
    private var more: [Container.ScopedEntry] {
        get { spill.unsafelyUnwrapped.more }
        _modify { yield &spill.unsafelyUnwrapped.more }
    }
    private var index: [UnsafeMutableRawPointer: Int] {
        get { spill.unsafelyUnwrapped.index }
        _modify { yield &spill.unsafelyUnwrapped.index }
    }

    private mutating func madeSpill() -> Spill {
        if let spill { return spill }
        let made = Spill()
        spill = made
        return made
    }
    static var indexedPast: Int { 16 }
    private static var inlineCapacity: Int { 4 }

    var isEmpty: Bool { count == 0 }

    /// `body` with the inline entries as a buffer of `inlineCapacity` (a homogeneous tuple is laid
    /// out as an array), read and written in place: no copy of the tuple, no retain of an entry.
    @inline(__always)
    private mutating func withFirst<R>(_ body: (UnsafeMutablePointer<Container.ScopedEntry?>) -> R) -> R {
        withUnsafeMutablePointer(to: &first) { body(UnsafeMutableRawPointer($0).assumingMemoryBound(to: Container.ScopedEntry?.self)) }
    }

    /// The registration (its address) of entry `i`.
    @inline(__always)
    private mutating func id(_ i: Int) -> UnsafeMutableRawPointer {
        if i >= Self.inlineCapacity { return more[i - Self.inlineCapacity].registration.opaque }
        return withFirst { $0[i].unsafelyUnwrapped.registration.opaque }
    }

    /// Entry `i`'s instance, unretained (valid while the caller holds the container's lock).
    @inline(__always)
    private mutating func instance(at i: Int) -> Borrowed<Instance> {
        if i >= Self.inlineCapacity { return Borrowed(more[i - Self.inlineCapacity].instance) }
        return withFirst { Borrowed($0[i].unsafelyUnwrapped.instance) }
    }

    /// Replaces entry `i` (`i < count`), handing back the one it held.
    private mutating func exchange(_ i: Int, _ entry: consuming Container.ScopedEntry) -> Container.ScopedEntry {
        if i >= Self.inlineCapacity {
            var entry = entry
            swap(&entry, &more[i - Self.inlineCapacity])
            return entry
        }
        let new = Optional(consume entry)
        return withFirst { first in
            let old = first[i].take().unsafelyUnwrapped
            first[i] = new
            return old
        }
    }

    /// Takes every entry out, in order, leaving none.
    private mutating func takeAll(_ body: (consuming Container.ScopedEntry) -> Void) {
        let n = count
        count = 0
        if indexed { (indexed, index) = (false, [:]) }
        if n > 0 { body(first.0.take().unsafelyUnwrapped) }
        if n > 1 { body(first.1.take().unsafelyUnwrapped) }
        if n > 2 { body(first.2.take().unsafelyUnwrapped) }
        if n > 3 { body(first.3.take().unsafelyUnwrapped) }
        if n > Self.inlineCapacity {
            var rest: [Container.ScopedEntry] = []
            swap(&rest, &more)
            for entry in rest { body(entry) }
        }
    }

    /// Every entry (registration, instance), in order (an override's look at what was built).
    mutating func all() -> [(registration: Borrowed<Registration>, instance: Instance)] {
        (0..<count).map { (Borrowed<Registration>(opaque: id($0)), instance(at: $0).object) }
    }

    /// Where the entry of the registration at `id` (its address) is.
    private mutating func position(_ id: UnsafeMutableRawPointer) -> Int? {
        if indexed { return index[id] }
        let inline = min(count, Self.inlineCapacity)
        let found = withFirst { first -> Int? in
            for i in 0..<inline where first[i].unsafelyUnwrapped.registration.opaque == id { return i }
            return nil
        }
        if found != nil || count <= Self.inlineCapacity { return found }
        for i in Self.inlineCapacity..<count where self.id(i) == id { return i }
        return nil
    }

    mutating func instance(of registration: Registration) -> Instance? {
        position(Borrowed(registration).opaque).map { instance(at: $0).object }
    }

    /// The instance cached for `registration`, retained (one retain: read in place under the lock).
    mutating func retainedInstance(of registration: Registration) -> Ref<Instance>? {
        position(Borrowed(registration).opaque).map { instance(at: $0).retained() }
    }

    /// Indexes the entries (past `indexedPast` of them: the spill exists).
    private mutating func reindex() {
        let built = Dictionary(uniqueKeysWithValues: (0..<count).map { (id($0), $0) })
        index = built
        indexed = true
    }

    /// Caches `entry`, replacing the one of the same registration (returned, so the caller
    /// lets go of it outside its lock).
    mutating func set(_ entry: consuming Container.ScopedEntry) -> Container.ScopedEntry? {
        let id = entry.registration.opaque
        if let i = position(id) { return exchange(i, consume entry) }
        if count < Self.inlineCapacity {
            let new = Optional(consume entry)
            let at = count
            withFirst { ($0 + at).pointee = new }
        } else {
            madeSpill().more.append(consume entry)
        }
        count += 1
        if indexed { index[id] = count - 1 } else if count > Self.indexedPast { reindex() }
        return nil
    }

    /// The claim of the registration at `id`, if one is under way.
    func pendingPosition(_ id: UnsafeMutableRawPointer) -> Int? {
        pending.isEmpty ? nil : pending.firstIndex { $0.registration == id }
    }

    /// Removes the claim at `position`, handing back its cell (to wake its waiters outside the lock).
    mutating func removePending(at position: Int) -> SharedCache.Cell? {
        if position != pending.count - 1 { pending.swapAt(position, pending.count - 1) }
        return pending.removeLast().cell
    }

    /// Moves every entry to `buffer` (room for `count`), sorted by sequence (last cached last),
    /// leaving none; how many were moved.
    mutating func moveAll(to buffer: UnsafeMutablePointer<Container.ScopedEntry>) -> Int {
        var moved = 0
        takeAll { entry in
            (buffer + moved).initialize(to: entry)
            moved += 1
        }
        // Appended in sequence order, but one replaced in place has a newer one: insertion sort, usually no move.
        for i in 1..<max(moved, 1) {
            var j = i
            while j > 0 && buffer[j - 1].sequence > buffer[j].sequence {
                swap(&buffer[j - 1], &buffer[j])
                j -= 1
            }
        }
        return moved
    }

    /// Removes the entries whose registration matches, appended to `taken` as `Dropped`.
    mutating func take(_ matching: (Registration) -> Bool, into taken: inout [Dropped]) {
        guard count > 0 else { return }
        var kept: [Container.ScopedEntry] = []
        takeAll { entry in
            if entry.registration.borrow({ matching($0) }) {
                taken.append(Dropped(instance: entry.instance, slot: nil, sequence: entry.sequence))
            } else {
                kept.append(entry)
            }
        }
        for entry in kept { _ = set(entry) }
    }
}

/// One container-scoped instance under creation in its container (`ScopedEntries.pending`).
struct PendingClaim {
    /// The registration's address (unretained: its container outlives the claim).
    let registration: UnsafeMutableRawPointer
    /// The claiming thread's `ThreadState` (address) or a token (`SharedCache.handOver`), its pthread id and the fork epoch it
    /// claimed in (`SharedCache.forkEpoch`): a claim of a thread that fork() left behind is
    /// forgotten by the next claim in the child process.
    var owner: UnsafeMutableRawPointer
    var ownerThread: pthread_t
    var forkEpoch: UInt
    /// A plan's claim: the word (in the plan's run, on the owner's stack) whose `madeBit` says
    /// the instance was made; read on the owner's thread only (a nested resolve there).
    var madeWord: UnsafeMutablePointer<UInt>?
    var madeBit: UInt
    /// The cell waiters wait on: a `Graph`'s own, or made by the first thread to wait.
    var cell: SharedCache.Cell?

    /// Whether the owner made the instance (asked on the owner's thread only).
    var made: Bool {
        if let cell { return cell.made || madeWord.map { $0.pointee & madeBit != 0 } ?? false }
        return madeWord.map { $0.pointee & madeBit != 0 } ?? false
    }
}

/// A container's claims under way (`ScopedEntries.pending`): the first inline, the rest in an
/// array, so a request's child, claiming one container-scoped instance at a time, allocates nothing
/// for them. The inline one is always the first: removing it moves the last in.
struct PendingClaims: RandomAccessCollection, MutableCollection {
    private var head: PendingClaim?
    private var tail: [PendingClaim] = []

    var startIndex: Int { 0 }
    var endIndex: Int { head == nil ? 0 : 1 + tail.count }
    var isEmpty: Bool { head == nil }

    subscript(position: Int) -> PendingClaim {
        get { position == 0 ? head! : tail[position - 1] }
        set { if position == 0 { head = newValue } else { tail[position - 1] = newValue } }
    }

    mutating func append(_ claim: PendingClaim) {
        if head == nil { head = claim } else { tail.append(claim) }
    }

    mutating func removeLast() -> PendingClaim {
        if !tail.isEmpty { return tail.removeLast() }
        return head.take().unsafelyUnwrapped
    }
}
