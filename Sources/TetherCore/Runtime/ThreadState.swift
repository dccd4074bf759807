import Synchronization
import ThreadWord
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Per-thread bookkeeping of the core: graphs under way on this thread, the
/// iterative release queue and the specs of the instances it makes.
final class ThreadState: CellOwner {
    /// Keeps what malloc put before this object off the lines of the fields below (`LinePad`).
    private let leadingPad = LinePad()
    /// References waiting to be released (see ReleaseQueue).
    /// Instances' addresses (and `InstanceBlock` records, only while their block is released).
    var pendingRelease = PlainStack<UInt>()
    var pendingLate: [LateEdges] = []
    var draining = false
    /// The graph of the outermost resolve on this thread, reused by every one.
    let graph: Graph
    let specs = ThreadSpecs()
    /// This thread's stripe of every container's `Children` (round robin over threads, once per thread).
    let stripe = Int(ThreadState.stripes.add(1, ordering: .relaxed).oldValue % UInt(Children.stripeCount))
    private static let stripes = Atomic<UInt>(0)

    init() {
        graph = Graph(thread: UnsafeMutableRawPointer(bitPattern: 1)!)
        super.init(isToken: false)
        graph.thread = Borrowed(self).opaque
    }
    /// Depth of nested top-level resolves on this thread (a guard against unbounded recursion).
    var nesting = 0
    /// The tokens this thread's resolves act for (`tether_token_enter`), the current one last.
    var tokens: [EnteredToken] = []
    /// Resolves on this thread fail with `.wouldBlock` instead of waiting for another thread's creation cell (`WaitMode`).
    var noWait = false
    /// Set when one did.
    var blocked = false
    /// Resolves on this thread that reached `Graph.build` (no plan served them): a diagnostic.
    var builds = 0
    /// Creation plans' runs on this thread that took steps found published at their claims (`Graph.takesClaimedHits`): a diagnostic.
    var claimedTakes = 0
    /// Graphs of resolves nested on this thread (in a factory, callback or destructor), innermost last (`Reentry`).
    var nestedGraphs: [Borrowed<Graph>] = []
    /// What a binding's replay of a described plan constructs on this thread, outermost first
    /// (`Reentry.enterReplay`), and how many of them each enter added, for its leave.
    var replaying: [Registration] = []
    var replayGroups: [Int] = []
    /// Where a plan notes its progress, at a fixed address (`Reentry`).
    /// Written at every step of a plan: lines of its own (`ThreadPrivate`).
    let planProgress: UnsafeMutablePointer<PlanProgress> = {
        let progress = ThreadPrivate.allocate(PlanProgress.self, capacity: 1)
        progress.initialize(to: PlanProgress())
        return progress
    }()
    /// The spec of the last value this thread provided for a declared key (`Container.provideValue`),
    /// shared by the next one of the same key, context and destructor: a request's value then makes
    /// no spec, and its count is written by this thread's requests only.
    var valueSpec: InstanceSpec?
    /// The spec this thread last gave a registration still on its key's default spec with a
    /// context and C destructor (`Registration.setContext`), shared the same way (`InstanceSpec.plain`).
    var contextSpec: InstanceSpec?
    /// This thread's resolves by path (`PlanStats`), nil unless counting: what a resolve tests.
    var planCounts = PlanStats.forNewThread()
    /// Plans recorded for one run and kept by no registration (`Registration.oneShotPlan`: a bridge that keeps
    /// replaced plans, past `Registration.maxPlans`), innermost last: each resolve that picked them lets go of
    /// its own once its run has ended (`dropOneShots`), so the thread holds those of the resolves under way only.
    var oneShotPlans: [Plan] = []
    /// Keeps what malloc puts after this object off the lines of the fields above.
    private let trailingPad = LinePad()

    /// A `tether_token_enter` of this thread: the token, the resolve nesting it was entered at (a
    /// binding's call nested in a factory of an outer resolve enters deeper), and `blocked` then.
    struct EnteredToken {
        let token: CellToken
        let nesting: Int
        let blocked: Bool
    }

    /// Lets go of the one-shot plans picked since `mark` (`oneShotPlans.count` before the pick): their runs ended.
    @inline(__always)
    func dropOneShots(to mark: Int) {
        if oneShotPlans.count > mark { oneShotPlans.removeLast(oneShotPlans.count - mark) }
    }

    deinit {
        pendingRelease.free()
        specs.free()
        PlanProgress.free(planProgress)
    }

    private static let key: pthread_key_t = {
        var k = pthread_key_t()
        pthread_key_create(&k) { raw in
            tether_thread_word_set(nil)  // (a later destructor's call into the library makes a new state)
            Handoff<ThreadState>.release(raw!)  // the thread's reference (`makeCurrent`)
        }
        return k
    }()

    /// The calling thread's state, unretained (the thread keeps it until it exits): read from
    /// the thread's word of static TLS (`tether_thread_word`, no call), which `makeCurrent` fills.
    static var currentReference: Borrowed<ThreadState> {
        @inline(__always) get {
            if let raw = tether_thread_word_get() { return Borrowed(opaque: raw) }
            return makeCurrent()
        }
    }

    /// The thread's first lookup (or its first after the key's destructor ran): the state the
    /// key holds, else a new one given to the key, noted in the thread's word.
    @inline(never)
    private static func makeCurrent() -> Borrowed<ThreadState> {
        if let raw = pthread_getspecific(key) {
            tether_thread_word_set(raw)
            return Borrowed(opaque: raw)
        }
        let state = Handoff.give(ThreadState())
        pthread_setspecific(key, state)
        tether_thread_word_set(state)
        return Borrowed(opaque: state)
    }
}
