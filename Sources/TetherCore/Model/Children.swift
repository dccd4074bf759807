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
        /// The first of the open children registered here, the rest linked through their
        /// `liveLinks` (unretained: each unlinks itself when it closes): a request's child links
        /// and unlinks itself with no array to grow or search.
        fileprivate var first: Borrowed<Container>?

        /// Links `child` (not linked yet) in.
        mutating func add(_ child: Borrowed<Container>) {
            child.borrow { $0.liveLinks = (nil, first) }
            first?.borrow { $0.liveLinks.previous = child }
            first = child
        }

        /// The open children, each visited under the stripe's lock.
        func forEach(_ body: (Container) -> Void) {
            var next = first
            while let c = next {
                c.borrow(body)
                next = c.borrow { $0.liveLinks.next }
            }
        }
    }

    /// Stripes: threads beyond this many share them (round robin), correct but contended.
    static var stripeCount: Int { 16 }
    /// Each stripe's memory: its lock word, then its `Stripe`, padded past two cache lines so two
    /// threads' stripes share no line. The lock is a spin lock in place (`withSpinLock`'s): a
    /// request's child holds its thread's stripe for a few instructions at its new and its close,
    /// with no mutex call and no `Lock` storage of its own.
    private static var stride: Int { 128 }
    private static var stripeOffset: Int { 8 }
    private let slots: UnsafeMutableRawPointer

    init() {
        slots = .allocate(byteCount: Self.stripeCount * Self.stride, alignment: 64)
        for i in 0..<Self.stripeCount {
            held(i).initialize(to: Atomic(false))
            stripe(i).initialize(to: Stripe())
        }
    }

    deinit {
        for i in 0..<Self.stripeCount {
            stripe(i).deinitialize(count: 1)
            held(i).deinitialize(count: 1)
        }
        slots.deallocate()
    }

    @inline(__always)
    private func held(_ i: Int) -> UnsafeMutablePointer<Atomic<Bool>> {
        (slots + i &* Self.stride).assumingMemoryBound(to: Atomic<Bool>.self)
    }

    @inline(__always)
    private func stripe(_ i: Int) -> UnsafeMutablePointer<Stripe> {
        (slots + i &* Self.stride + Self.stripeOffset).assumingMemoryBound(to: Stripe.self)
    }

    /// The calling thread's stripe index.
    static var currentStripe: Int {
        @inline(__always) get { ThreadState.currentReference.borrow { $0.stripe } }
    }

    /// `body` with stripe `index` locked.
    @inline(__always)
    func withStripe<R>(_ index: Int, _ body: (inout Stripe) -> R) -> R {
        held(index).pointee.spinLock()
        defer { held(index).pointee.spinUnlock() }
        return body(&stripe(index).pointee)
    }

    /// `body` with every stripe locked (in order: no two callers deadlock), for the parent's close.
    func withAllLocked<R>(_ body: ([UnsafeMutablePointer<Stripe>]) -> R) -> R {
        for i in 0..<Self.stripeCount { held(i).pointee.spinLock() }
        defer { for i in 0..<Self.stripeCount { held(i).pointee.spinUnlock() } }
        return body((0..<Self.stripeCount).map(stripe))
    }

    /// Every open child (retained under the stripe's lock: a child in the list is alive).
    func retainedLive() -> [Container] {
        var found: [Container] = []
        for i in 0..<Self.stripeCount {
            // Noted under the lock its child's close takes: that free then sees the walk (and waits for it).
            withStripe(i) { s in s.forEach { $0.noteReachedBesidesHandle(); found.append($0) } }
        }
        return found
    }
}

extension Children.Stripe {
    /// `child` is no longer reached (closed, or let go of without closing): unlinked, if linked here.
    mutating func forget(_ child: Container) {
        let (previous, next) = child.liveLinks
        if let previous {
            previous.borrow { $0.liveLinks.next = next }
        } else if first?.opaque == Borrowed(child).opaque {
            first = next
        } else {
            return  // not linked (forgotten already)
        }
        next?.borrow { $0.liveLinks.previous = previous }
        child.liveLinks = (nil, nil)
    }
}
