import SwiftRuntime
import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A reference count that costs no shared write while its owner keeps the
/// object, as Linux's `percpu_ref`: references taken and dropped by many
/// threads would all write one counter, one cache line, which then moves
/// between their cores on every count (a singleton every resolve's graph
/// points at, say). So the count is split into stripes, a cache line each,
/// and a reference counts on the stripe of the CPU it runs on: threads on
/// different cores write different lines. A stripe alone means nothing (a
/// reference taken on one CPU may be dropped on another); only their sum does,
/// and nobody needs it until the owner lets go.
///
/// - Live: `tryAcquire` and `retain` add one to the current stripe, `release`
///   takes one from it. The object cannot go: the owner still holds it.
/// - `kill` (the owner lets go, once): each stripe is swapped for a poison
///   value and its count moved into one atomic `total`; from then on every
///   count goes to `total` (an operation that finds its stripe poisoned has
///   its stripe change ignored), `tryAcquire` fails, and whoever brings `total`
///   to zero (`kill` itself, or the last `release`) frees the object.
///
/// No grace period is needed (`percpu_ref` waits one for its mode switch):
/// each count is one atomic operation on its stripe, and a stripe is swapped
/// by one atomic exchange, so every count lands either before its stripe's
/// exchange (in the sum) or after it (seeing the poison). `total` starts at a
/// bias that the sum replaces, so it cannot reach zero while stripes remain.
///
/// Memory: a line of header plus one line per stripe, stripes the CPUs
/// configured rounded up to a power of two, at most `maxStripes`. A value
/// type over manually managed memory: its holder frees it (`deallocate`).
public struct SplitCount: @unchecked Sendable {
    private let base: UnsafeMutableRawPointer

    private static var line: Int { ThreadPrivate.lineBytes }
    private static var maxStripes: Int { 32 }
    /// Where `total` starts; what a stripe is set to when collected. A live
    /// stripe's value stays far below `poisonFloor` (it is a difference of counts),
    /// a collected one far above.
    private static var poison: Int { 1 << (Int.bitWidth - 2) }
    private static var poisonFloor: Int { 1 << (Int.bitWidth - 3) }

    /// A live count with no references; the owner's hold is implied (not counted).
    public init() {
        let stripes = Self.stripes
        base = .allocate(byteCount: Self.line * (1 + stripes), alignment: Self.line)
        base.initializeMemory(as: Int.self, repeating: stripes - 1, count: 1)
        (base + MemoryLayout<Int>.stride).bindMemory(to: Atomic<Int>.self, capacity: 1).initialize(to: Atomic(Self.poison))
        for i in 0..<stripes { (base + Self.line * (1 + i)).bindMemory(to: Atomic<Int>.self, capacity: 1).initialize(to: Atomic(0)) }
    }

    /// The count at `address` (what `address` gave), for holders that keep it in a word.
    public init(address: UnsafeMutableRawPointer) { base = address }
    /// Where the count lives: a word to keep it in (aligned to a cache line: the low bits are free).
    public var address: UnsafeMutableRawPointer { base }

    /// Frees the count: once `kill` or `release` reported the last reference gone,
    /// or if it was never shared.
    public func deallocate() { base.deallocate() }

    /// The CPUs configured, rounded up to a power of two, at most `maxStripes`; asked once
    /// (a statically initialized word: no once-check).
    private static var stripes: Int {
        let known = stripeCount.load(ordering: .relaxed)
        if known != 0 { return known }
        let configured = Int(sysconf(Int32(_SC_NPROCESSORS_CONF)))
        var stripes = 1
        while stripes < min(max(configured, 1), maxStripes) { stripes <<= 1 }
        stripeCount.store(stripes, ordering: .relaxed)
        return stripes
    }

    /// The stripe mask (stripes - 1), written before anyone can see the count.
    private var mask: Int { base.load(as: Int.self) }
    private var total: UnsafeMutablePointer<Atomic<Int>> {
        (base + MemoryLayout<Int>.stride).assumingMemoryBound(to: Atomic<Int>.self)
    }
    private func stripe(_ i: Int) -> UnsafeMutablePointer<Atomic<Int>> {
        (base + Self.line * (1 + i)).assumingMemoryBound(to: Atomic<Int>.self)
    }
    /// The calling CPU's stripe (any stripe is correct; this one is only a guess that keeps lines apart).
    private var current: UnsafeMutablePointer<Atomic<Int>> {
        @inline(__always) get { stripe(Int(tether_current_cpu()) & mask) }
    }

    /// One reference, if the owner has not let go (`kill`); false: none taken, the
    /// caller takes its reference another way (the object may be gone already).
    @inline(__always)
    public func tryAcquire() -> Bool {
        current.pointee.wrappingAdd(1, ordering: .relaxed).oldValue < Self.poisonFloor
    }

    /// One more reference, for a caller that holds one (so the count cannot be at zero).
    @inline(__always)
    public func retain() {
        if current.pointee.wrappingAdd(1, ordering: .relaxed).oldValue < Self.poisonFloor { return }
        total.pointee.wrappingAdd(1, ordering: .relaxed)
    }

    /// Drops one reference. True: it was the last and the owner has let go:
    /// the caller frees the object (and then this count).
    @inline(__always)
    public func release() -> Bool {
        if current.pointee.wrappingSubtract(1, ordering: .releasing).oldValue < Self.poisonFloor { return false }
        return releaseCollected()
    }

    @inline(never)
    private func releaseCollected() -> Bool {
        total.pointee.wrappingSubtract(1, ordering: .acquiringAndReleasing).newValue == 0
    }

    /// The owner lets go (call once): the stripes are summed into `total`. True:
    /// no reference is outstanding, the caller frees the object now; false: the
    /// last `release` will say so. `tryAcquire` fails from here on.
    public func kill() -> Bool {
        var sum = 0
        for i in 0...mask { sum &+= stripe(i).pointee.exchange(Self.poison, ordering: .acquiringAndReleasing) }
        return total.pointee.wrappingAdd(sum &- Self.poison, ordering: .acquiringAndReleasing).newValue == 0
    }
}

/// `SplitCount.stripes` once known, else 0.
private let stripeCount = Atomic<Int>(0)

/// Where an object keeps the `SplitCount` of the split references to it, made on first use:
/// 0 none yet, else its address, with `closedBit` once the owner let go (no count is made or
/// used after that). Of two threads making one, the second uses the first's.
struct SplitCountWord: ~Copyable {
    private let word = Atomic<UInt>(0)
    private static var closedBit: UInt { 1 }

    init() {}

    /// The count, made now if there is none; nil once closed.
    @inline(__always)
    func open() -> SplitCount? {
        let word = word.load(ordering: .acquiring)
        if word & Self.closedBit != 0 { return nil }
        if word != 0 { return SplitCount(address: UnsafeMutableRawPointer(bitPattern: word)!) }
        return make()
    }

    @inline(never)
    private func make() -> SplitCount? {
        let made = SplitCount()
        let (done, found) = word.compareExchange(expected: 0, desired: UInt(bitPattern: made.address), ordering: .acquiringAndReleasing)
        if done { return made }
        made.deallocate()
        return found & Self.closedBit != 0 ? nil : SplitCount(address: UnsafeMutableRawPointer(bitPattern: found)!)
    }

    /// No count is made or used from now on; the one made, for the first caller only, to kill
    /// (`SplitCount.kill`).
    func close() -> SplitCount? {
        let word = word.bitwiseOr(Self.closedBit, ordering: .acquiringAndReleasing).oldValue
        guard word & Self.closedBit == 0, word != 0 else { return nil }
        return SplitCount(address: UnsafeMutableRawPointer(bitPattern: word)!)
    }

    /// The count a split reference holds (so it was made).
    var count: SplitCount {
        SplitCount(address: UnsafeMutableRawPointer(bitPattern: word.load(ordering: .relaxed) & ~Self.closedBit).unsafelyUnwrapped)
    }

    /// Frees the count, if one was made (the holder's deinit).
    func deallocate() {
        let address = word.load(ordering: .acquiring) & ~Self.closedBit
        if address != 0 { SplitCount(address: UnsafeMutableRawPointer(bitPattern: address)!).deallocate() }
    }
}
