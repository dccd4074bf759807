import Synchronization

/// A container's record of its children: how many are open (a container with open children
/// refuses to close), which (what an override must reach: `Container+Overrides`), and freed ones
/// kept for the next (`Container.keepSpareChild`). Split in stripes, one per thread (a thread's
/// stripe is `ThreadState.stripe`, assigned when the thread first uses the core): making and
/// freeing a child, one per request, locks and writes only the calling thread's stripe, so
/// requests on different threads share no lock, count or list of their parent's. Each stripe
/// is its own allocation, padded past a cache line, so two threads' stripes share no line either.
/// Rare whole-record operations (the parent's close, an override) lock every stripe.
/// Made with the first child (most containers, a request's among them, have none).
final class Children: @unchecked Sendable {
    struct Stripe {
        var open = 0
        /// The open children registered here (unretained: each removes itself when it closes).
        var live: [Borrowed<Container>] = []
        /// Freed children kept for the next ones made on this stripe's thread.
        var spares: [Container] = []
        /// Keeps the next stripe's lock and words off this one's cache line.
        private let padding: (UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0, 0, 0, 0, 0)
    }

    /// Stripes: threads beyond this many share them (round robin), correct but contended.
    static var stripeCount: Int { 16 }
    /// Spares a stripe keeps at most: what a thread's frees can have in the reclaimer at once
    /// (a batch filling, up to 32 x 8 (`Reclamation`), and the sealed one before it, run a few
    /// frees later: `Reclaimer`), so that in steady state a request's child is always a reused
    /// one on any number of threads (a new one takes version words under a process-wide lock and
    /// references on the parent and the bridge: `VersionWords`, `init(parent:)`). Only what was
    /// freed is kept (on a thread's stripe, about what its requests had under way at once).
    static var sparesPerStripe: Int { 2 * 256 + 64 }

    private let stripes: UnsafeMutablePointer<Lock<Stripe>>

    init() {
        stripes = .allocate(capacity: Self.stripeCount)
        for i in 0..<Self.stripeCount { (stripes + i).initialize(to: Lock(Stripe())) }
    }

    deinit {
        stripes.deinitialize(count: Self.stripeCount)
        stripes.deallocate()
    }

    /// The calling thread's stripe index.
    static var currentStripe: Int {
        @inline(__always) get { ThreadState.currentReference.borrow { $0.stripe } }
    }

    /// `body` with stripe `index` locked.
    @inline(__always)
    func withStripe<R>(_ index: Int, _ body: (inout Stripe) -> R) -> R {
        stripes[index].withLock(body)
    }

    /// `body` with every stripe locked (in order: no two callers deadlock), for the parent's close.
    func withAllLocked<R>(_ body: ([UnsafeMutablePointer<Stripe>]) -> R) -> R {
        var held: [UnsafeMutablePointer<Stripe>] = []
        held.reserveCapacity(Self.stripeCount)
        func lock(from i: Int) -> R {
            if i == Self.stripeCount { return body(held) }
            return stripes[i].withLock { s in
                withUnsafeMutablePointer(to: &s) { p in
                    held.append(p)
                    return lock(from: i + 1)
                }
            }
        }
        return lock(from: 0)
    }

    /// Every open child (retained under the stripe's lock: a child in the list is alive).
    func retainedLive() -> [Container] {
        var found: [Container] = []
        for i in 0..<Self.stripeCount {
            found += stripes[i].withLock { s in s.live.map { $0.object } }
        }
        return found
    }

    /// Every kept spare, taken out (released by the caller, outside the locks).
    func takeAllSpares() -> [Container] {
        var taken: [Container] = []
        for i in 0..<Self.stripeCount {
            taken += stripes[i].withLock { s in
                defer { s.spares = [] }
                return s.spares
            }
        }
        return taken
    }
}

extension Children.Stripe {
    /// `child` is no longer reached (closed, or let go of without closing).
    mutating func forget(_ child: Container) {
        let address = Borrowed(child).opaque
        if let i = live.lastIndex(where: { $0.opaque == address }) {
            live.swapAt(i, live.count - 1)
            live.removeLast()
        }
    }
}
