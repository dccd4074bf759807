import Synchronization

/// A container's record of its children: how many are open (a container with open children
/// refuses to close, and a child holds its parent by this count: `Container.init(childOf:)`) and
/// which (what an override must reach: `Container+Overrides`). Split in stripes, one per thread (a thread's
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
        /// Keeps the next stripe's lock and words off this one's cache line.
        private let padding: (UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0, 0, 0, 0, 0)
    }

    /// Stripes: threads beyond this many share them (round robin), correct but contended.
    static var stripeCount: Int { 16 }
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
