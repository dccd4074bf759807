/// A container's container-scoped instances, by registration (`Container.State.scoped`).
/// A request's child holds a few: a list searched in order costs no hashing and one
/// allocation, where a dictionary hashed every lookup and was copied on close. Past
/// `indexedPast` entries (a root caching many) an index by registration keeps lookups flat.
struct ScopedEntries {
    private(set) var entries: [Container.ScopedEntry] = []
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
        entries.append(entry)
        if index != nil { index![id] = entries.count - 1 } else if entries.count > Self.indexedPast { reindex() }
        return nil
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
