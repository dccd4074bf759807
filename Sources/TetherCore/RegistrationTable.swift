import Synchronization

/// A container's registrations indexed by key id, read without a lock: a
/// two-level array of atomic addresses. Each entry owns a reference; a replaced
/// registration is handed back to the caller, who keeps it alive for readers
/// still holding it.
@usableFromInline
final class RegistrationTable: @unchecked Sendable {
    @usableFromInline static var chunkBits: Int { 10 }
    @usableFromInline static var chunkSize: Int { 1 << chunkBits }
    @usableFromInline static var topSize: Int { 1 << 12 }  // 4M keys

    @usableFromInline let top: UnsafeMutablePointer<Atomic<UInt>>

    init() {
        top = .allocate(capacity: Self.topSize)
        for i in 0..<Self.topSize { (top + i).initialize(to: Atomic(0)) }
    }

    deinit {
        for i in 0..<Self.topSize {
            guard let chunk = chunk(i) else { continue }
            for j in 0..<Self.chunkSize {
                let entry = chunk[j].load(ordering: .relaxed)
                if entry != 0 { Unmanaged<Registration>.fromOpaque(UnsafeRawPointer(bitPattern: entry)!).release() }
            }
            chunk.deallocate()
        }
        top.deallocate()
    }

    private func chunk(_ index: Int) -> UnsafeMutablePointer<Atomic<UInt>>? {
        UnsafeMutablePointer(bitPattern: top[index].load(ordering: .acquiring))
    }

    @inlinable @inline(__always)
    func get(_ key: Key) -> Unmanaged<Registration>? {
        let id = Int(key.id)
        guard id >> Self.chunkBits < Self.topSize else { return nil }
        let chunk = top[id >> Self.chunkBits].load(ordering: .acquiring)
        guard chunk != 0 else { return nil }
        let entry = UnsafeMutablePointer<Atomic<UInt>>(bitPattern: chunk)![id & (Self.chunkSize - 1)].load(ordering: .acquiring)
        guard entry != 0 else { return nil }
        return Unmanaged<Registration>.fromOpaque(UnsafeRawPointer(bitPattern: entry)!)
    }

    /// Stores (or with nil clears) the entry for `key` and returns the one it
    /// replaces. Callers serialize writes.
    func replace(_ key: Key, with registration: Registration?) -> Registration? {
        let id = Int(key.id)
        precondition(id >> Self.chunkBits < Self.topSize, "Tether: more than \(Self.topSize * Self.chunkSize) keys")
        var chunk = chunk(id >> Self.chunkBits)
        if chunk == nil {
            guard registration != nil else { return nil }
            let fresh = UnsafeMutablePointer<Atomic<UInt>>.allocate(capacity: Self.chunkSize)
            for i in 0..<Self.chunkSize { (fresh + i).initialize(to: Atomic(0)) }
            top[id >> Self.chunkBits].store(UInt(bitPattern: fresh), ordering: .releasing)
            chunk = fresh
        }
        let address = registration.map { UInt(bitPattern: Unmanaged.passRetained($0).toOpaque()) } ?? 0
        let old = chunk![id & (Self.chunkSize - 1)].exchange(address, ordering: .acquiringAndReleasing)
        return old == 0 ? nil : Unmanaged<Registration>.fromOpaque(UnsafeRawPointer(bitPattern: old)!).takeRetainedValue()
    }

    /// Every registration stored, in key id order. Callers serialize with writes.
    func all() -> [Registration] {
        var result: [Registration] = []
        for i in 0..<Self.topSize {
            guard let chunk = chunk(i) else { continue }
            for j in 0..<Self.chunkSize {
                let entry = chunk[j].load(ordering: .relaxed)
                if entry != 0 { result.append(Unmanaged<Registration>.fromOpaque(UnsafeRawPointer(bitPattern: entry)!).takeUnretainedValue()) }
            }
        }
        return result
    }
}
