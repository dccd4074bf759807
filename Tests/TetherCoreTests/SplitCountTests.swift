// A split count (Runtime/SplitCount.swift) answers "last reference gone" exactly
// once, after its owner let go, however references were taken and dropped on
// which threads, and refuses new references once the owner let go.
import Synchronization
import Testing
@testable import TetherCore

@Suite struct SplitCountTests {
    @Test func killWithNothingOutstandingIsTheLast() {
        let count = SplitCount()
        defer { count.deallocate() }
        #expect(count.tryAcquire())
        count.retain()
        #expect(!count.release())
        #expect(!count.release())
        #expect(count.kill(), "no reference outstanding: the owner frees the object")
        #expect(!count.tryAcquire(), "no new reference once the owner let go")
    }

    @Test func theLastReleaseAfterKillIsTheLast() {
        let count = SplitCount()
        defer { count.deallocate() }
        for _ in 0..<3 { #expect(count.tryAcquire()) }
        #expect(!count.release(), "while live no release is the last")
        #expect(!count.kill(), "two references outstanding")
        #expect(!count.tryAcquire())
        count.retain()  // a holder may still make another
        #expect(!count.release())
        #expect(!count.release())
        #expect(count.release(), "the third of three outstanding")
    }

    @Test func referencesTakenAndDroppedOnManyThreadsAroundAKill() {
        // Threads take and drop references (their own, and ones another thread took)
        // while one of them kills the count midway. The last reference is reported
        // once, by whoever dropped it, and only when none is held any more.
        for round in 0..<40 {
            let count = SplitCount()
            let state = Shared()
            @Sendable func drop() {
                // Counted down first: a release that says "last" must find none held.
                let freed = state.freed.load(ordering: .sequentiallyConsistent)
                #expect(!freed, "the object was freed while a reference was held")
                state.held.subtract(1, ordering: .sequentiallyConsistent)
                if count.release() {
                    state.freed.store(true, ordering: .sequentiallyConsistent)
                    let held = state.held.load(ordering: .sequentiallyConsistent), killed = state.killed.load(ordering: .sequentiallyConsistent)
                    #expect(held == 0, "the last reference reported while one is held")
                    #expect(killed, "the last reference reported before the owner let go")
                    state.lasts.add(1, ordering: .relaxed)
                }
            }
            onThreads(4) { thread in
                var mine = 0
                for i in 0..<3_000 {
                    if thread == round % 4 && i == 1_000 {
                        state.killed.store(true, ordering: .sequentiallyConsistent)
                        if count.kill() {
                            state.freed.store(true, ordering: .sequentiallyConsistent)
                            state.lasts.add(1, ordering: .relaxed)
                        }
                    }
                    switch (i &* 7 &+ thread) % 5 {
                    case 0, 1, 2:
                        if count.tryAcquire() {
                            state.held.add(1, ordering: .sequentiallyConsistent)
                            let freed = state.freed.load(ordering: .sequentiallyConsistent)
                            #expect(!freed, "a reference taken to a freed object")
                            if i % 4 == 0 { state.pool.add(1, ordering: .relaxed) } else { mine += 1 }
                        } else {
                            let killed = state.killed.load(ordering: .sequentiallyConsistent)
                            #expect(killed, "refused while the owner held it")
                        }
                    case 3:
                        if mine > 0 { mine -= 1; drop() }
                    default:
                        if take(from: state.pool) { drop() }
                    }
                }
                while mine > 0 { mine -= 1; drop() }
            }
            while take(from: state.pool) { drop() }
            let lasts = state.lasts.load(ordering: .relaxed), held = state.held.load(ordering: .relaxed)
            #expect(lasts == 1, "exactly one last reference")
            #expect(held == 0)
            count.deallocate()
        }
    }

    final class Shared: Sendable {
        let lasts = Atomic<Int>(0)
        /// References taken and not dropped: the truth.
        let held = Atomic<Int>(0)
        let killed = Atomic<Bool>(false)
        /// Set by whoever was told the last reference went.
        let freed = Atomic<Bool>(false)
        /// References handed from one thread to any other.
        let pool = Atomic<Int>(0)
    }

    /// One reference from `pool`, if it has any.
    private func take(from pool: borrowing Atomic<Int>) -> Bool {
        var seen = pool.load(ordering: .relaxed)
        while seen > 0 {
            let (done, now) = pool.compareExchange(expected: seen, desired: seen - 1, ordering: .relaxed)
            if done { return true }
            seen = now
        }
        return false
    }
}
