import Synchronization

/// A container's registrations indexed by key id, read without a lock: a
/// two-level array of atomic addresses. Entries are unretained; the container
/// keeps every registration it ever stored alive until it is closed.
final class RegistrationTable: @unchecked Sendable {
    private static var chunkBits: Int { 10 }
    private static var chunkSize: Int { 1 << chunkBits }
    private static var topSize: Int { 1 << 12 }  // 4M keys

    private let top: UnsafeMutablePointer<Atomic<UInt>>

    init() {
        top = .allocate(capacity: Self.topSize)
        for i in 0..<Self.topSize { (top + i).initialize(to: Atomic(0)) }
    }

    deinit {
        for i in 0..<Self.topSize {
            let chunk = top[i].load(ordering: .relaxed)
            if chunk != 0 { UnsafeMutableRawPointer(bitPattern: chunk)!.deallocate() }
        }
        top.deallocate()
    }

    @inline(__always)
    func get(_ key: Key) -> Unmanaged<Registration>? {
        let id = Int(key.id)
        guard id >> Self.chunkBits < Self.topSize else { return nil }
        let chunk = top[id >> Self.chunkBits].load(ordering: .acquiring)
        guard chunk != 0 else { return nil }
        let entry = UnsafeMutablePointer<Atomic<UInt>>(bitPattern: chunk)![id & (Self.chunkSize - 1)].load(ordering: .acquiring)
        guard entry != 0 else { return nil }
        return Unmanaged<Registration>.fromOpaque(UnsafeRawPointer(bitPattern: entry)!)
    }

    /// Stores (or with nil clears) the entry for `key`. Callers serialize writes.
    func set(_ key: Key, _ registration: Registration?) {
        let id = Int(key.id)
        precondition(id >> Self.chunkBits < Self.topSize, "Tether: more than \(Self.topSize * Self.chunkSize) keys")
        var chunk = top[id >> Self.chunkBits].load(ordering: .acquiring)
        if chunk == 0 {
            let fresh = UnsafeMutablePointer<Atomic<UInt>>.allocate(capacity: Self.chunkSize)
            for i in 0..<Self.chunkSize { (fresh + i).initialize(to: Atomic(0)) }
            chunk = UInt(bitPattern: fresh)
            top[id >> Self.chunkBits].store(chunk, ordering: .releasing)
        }
        let address = registration.map { UInt(bitPattern: Unmanaged.passUnretained($0).toOpaque()) } ?? 0
        UnsafeMutablePointer<Atomic<UInt>>(bitPattern: chunk)![id & (Self.chunkSize - 1)].store(address, ordering: .releasing)
    }
}
