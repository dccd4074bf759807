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
    private(set) var entries: [Container.ScopedEntry] = []
    /// Claims under way, a few at a time (usually none; a request's one at a time, kept inline).
    var pending = PendingClaims()
    private var index: [UnsafeMutableRawPointer: Int]?
    static var indexedPast: Int { 16 }

    var isEmpty: Bool { entries.isEmpty }

    /// Where the entry of the registration at `id` (its address) is.
    private func position(_ id: UnsafeMutableRawPointer) -> Int? {
        if let index { return index[id] }
        return entries.firstIndex { $0.registration.opaque == id }
    }

    func instance(of registration: Registration) -> Instance? {
        position(Borrowed(registration).opaque).map { entries[$0].instance }
    }

    private mutating func reindex() {
        index = entries.count > Self.indexedPast
            ? Dictionary(uniqueKeysWithValues: entries.indices.map { (entries[$0].registration.opaque, $0) }) : nil
    }

    /// Caches `entry`, replacing the one of the same registration (returned, so the caller
    /// lets go of it outside its lock).
    mutating func set(_ entry: Container.ScopedEntry) -> Container.ScopedEntry? {
        let id = entry.registration.opaque
        if let i = position(id) {
            let old = entries[i]
            entries[i] = entry
            return old
        }
        // A request's child caches a value and an instance or two: room for them in one allocation.
        if entries.capacity == 0 { entries.reserveCapacity(4) }
        entries.append(entry)
        if index != nil { index![id] = entries.count - 1 } else if entries.count > Self.indexedPast { reindex() }
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

    /// Moves every entry to `buffer` (room for `entries.count`), sorted by sequence (last cached last),
    /// keeping the storage for the container's next entries; how many were moved.
    mutating func moveAll(to buffer: UnsafeMutablePointer<Container.ScopedEntry>) -> Int {
        let count = entries.count
        entries.withUnsafeBufferPointer { for i in 0..<count { (buffer + i).initialize(to: $0[i]) } }
        entries.removeAll(keepingCapacity: true)
        if index != nil { index = nil }
        // Appended in sequence order, but one replaced in place has a newer one: insertion sort, usually no move.
        for i in 1..<max(count, 1) {
            var j = i
            while j > 0 && buffer[j - 1].sequence > buffer[j].sequence {
                swap(&buffer[j - 1], &buffer[j])
                j -= 1
            }
        }
        return count
    }

    /// Removes the entries whose registration matches, appended to `taken` as `Dropped`.
    mutating func take(_ matching: (Registration) -> Bool, into taken: inout [Dropped]) {
        let before = taken.count
        var kept: [Container.ScopedEntry] = []
        for entry in entries {
            if entry.registration.borrow({ matching($0) }) {
                taken.append(Dropped(instance: entry.instance, slot: nil, sequence: entry.sequence))
            } else {
                kept.append(entry)
            }
        }
        guard taken.count > before else { return }
        // All taken (a close): the storage stays for the child's next request (a reused child).
        if kept.isEmpty { entries.removeAll(keepingCapacity: true) } else { entries = kept }
        reindex()
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
        if let last = tail.popLast() { return last }
        defer { head = nil }
        return head!
    }
}
