import Synchronization

/// The containers' version words (`Container.configuration`), in memory that is
/// never freed, so an embedding layer may keep reading a word after its
/// container is gone (the ABI hands out their addresses): a freed container's
/// word goes to a later container as it is, and a word only ever grows, so a
/// sum read before never comes back.
enum VersionWords {
    /// Words of deinitialized containers, as addresses.
    private static let unused = Mutex<[UInt]>([])

    static func take() -> UnsafeMutablePointer<Atomic<UInt>> {
        if let address = unused.withLock({ $0.popLast() }) {
            return UnsafeMutablePointer(bitPattern: address)!
        }
        let word = UnsafeMutablePointer<Atomic<UInt>>.allocate(capacity: 1)
        word.initialize(to: Atomic(0))
        return word
    }

    static func give(_ word: UnsafeMutablePointer<Atomic<UInt>>) {
        unused.withLock { $0.append(UInt(bitPattern: word)) }
    }
}
