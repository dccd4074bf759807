import Synchronization

/// The containers' version words, in memory that is never freed, so an
/// embedding layer may keep reading a word after its container is gone (the
/// ABI hands out their addresses): a freed container's words go to a later
/// container as they are, and a word only ever grows, so a sum read before
/// never comes back. A container takes three: its configuration word
/// (`Container.configuration`), its cache word (`Container.cacheVersionAddresses`)
/// and its hit word (`Container.hitWordAddress`, which starts at 1: a hit token
/// is never 0). They pass from container to container under `unused`'s lock,
/// and the words are only ever accessed as atomics, so a late reader races with nothing.
/// Each container's three share a cache line with nothing else (`ThreadPrivate.allocate`).
enum VersionWords {
    /// The words of deinitialized containers, as addresses.
    private static let unused = Lock<[UInt]>([])

    static func take() -> UnsafeMutablePointer<Atomic<UInt>> {
        if let address = unused.withLock({ $0.popLast() }) {
            return UnsafeMutablePointer(bitPattern: address)!
        }
        // A cache line of their own: a request's child writes them on every new and free, and two
        // threads' children's words side by side would make their requests write one line.
        let words = ThreadPrivate.allocate(Atomic<UInt>.self, capacity: 3)
        words.initialize(to: Atomic(0))
        (words + 1).initialize(to: Atomic(0))
        (words + 2).initialize(to: Atomic(1))
        return words
    }

    static func give(_ words: UnsafeMutablePointer<Atomic<UInt>>) {
        unused.withLock { $0.append(UInt(bitPattern: words)) }
    }
}
