// Deferred reclamation: a retired object's action runs only once every section
// that was under way at its retirement has left (nested sections count once,
// later sections do not delay it, a thread that exits delays nothing), and
// then without anyone having to ask again. Records stand for threads: most
// tests drive several from one thread, deterministically; the last one races
// real threads against retirements.
import Synchronization
import Testing
import TetherCore

@Suite struct ReclaimerTests {
    @Sendable private static func fence() { atomicMemoryFence(ordering: .sequentiallyConsistent) }

    private func reclaimer() -> Reclaimer { Reclaimer(heavyBarrier: Self.fence) }

    private func enter(_ record: UnsafeMutablePointer<Reclaimer.Record>) -> Bool {
        Reclaimer.enter(record, lightBarrier: Self.fence)
    }

    private func leave(_ record: UnsafeMutablePointer<Reclaimer.Record>) {
        Reclaimer.leave(record, lightBarrier: Self.fence)
    }

    @Test func runsAtOnceWhenNoSectionIsUnderWay() {
        let r = reclaimer()
        let a = r.claim(), b = r.claim()
        #expect(enter(a))
        leave(a)
        let ran = Box(0)
        r.retire(by: b) { ran.value += 1 }
        #expect(ran.value == 1)
        #expect(r.pendingCount == 0)
        r.release(a)
        r.release(b)
    }

    @Test func batchedRetirementsWaitForTheBatchThenShareOneBarrier() {
        let barriers = Box(0)
        let r = Reclaimer(batch: 8) { barriers.value += 1; atomicMemoryFence(ordering: .sequentiallyConsistent) }
        let reader = r.claim(), freer = r.claim()
        let ran = Box(0)
        // Two threads hold records: the batch is 8 x 2 (each core then takes one barrier per 8 of its own frees).
        for _ in 0..<15 { r.retire(by: freer) { ran.value += 1 } }
        #expect(ran.value == 0 && barriers.value == 0, "kept in the freer's batch")
        #expect(r.keptCount(by: freer) == (15, 0))
        #expect(enter(reader))  // a section that began after the removals: the batch must still wait for it
        r.retire(by: freer) { ran.value += 1 }
        #expect(barriers.value == 1, "one barrier for the batch of 16")
        #expect(ran.value == 0 && r.keptCount(by: freer) == (0, 16), "sealed, waiting for the reader")
        #expect(r.pendingCount == 0, "kept by the freer's thread, not on the shared list")
        leave(reader)
        #expect(ran.value == 0, "the reader writes nothing of the freer's and runs none of its frees")
        for _ in 0..<(Reclaimer.pollInterval - 1) { r.retire(by: freer) { ran.value += 1 } }
        #expect(ran.value == 0, "looked at every \(Reclaimer.pollInterval) retirements")
        r.retire(by: freer) { ran.value += 1 }
        #expect(ran.value == 16, "the freer runs its sealed batch once the reader's section moved on")
        #expect(barriers.value == 1 && r.keptCount(by: freer) == (Reclaimer.pollInterval, 0))
        r.release(freer)  // an exiting thread hands what it kept over
        #expect(ran.value == 16 + Reclaimer.pollInterval && r.pendingCount == 0)
        r.release(reader)
    }

    /// An object its remover vouches no other thread reached (the ABI's child container looked
    /// up by its maker only) runs now, whatever other sections are under way, with no barrier and
    /// nothing kept; but not while the caller's own section, which may still be using it, goes on.
    @Test func anObjectNoOtherThreadReachedRunsAtOnceOutsideTheCallersSection() {
        let barriers = Box(0)
        let r = Reclaimer(batch: 8) { barriers.value += 1; atomicMemoryFence(ordering: .sequentiallyConsistent) }
        let reader = r.claim(), freer = r.claim()
        #expect(enter(reader))  // another thread's call under way meanwhile: it never reached the object
        let ran = Box(0)
        #expect(r.reclaimUnreached(by: freer) { ran.value += 1 })
        #expect(ran.value == 1 && barriers.value == 0)
        #expect(r.keptCount(by: freer) == (0, 0) && r.pendingCount == 0)
        #expect(enter(freer))
        #expect(!r.reclaimUnreached(by: freer) { ran.value += 1 }, "the caller's own section may still use it")
        #expect(!r.reclaimUnreached(by: nil) { ran.value += 1 }, "a caller without a record")
        #expect(ran.value == 1)
        leave(freer)
        leave(reader)
        r.release(reader)
        r.release(freer)
    }

    @Test func aSealedBatchRunsAtOnceWhenNoSectionIsUnderWay() {
        let r = Reclaimer(batch: 2, heavyBarrier: Self.fence)
        let reader = r.claim(), freer = r.claim()
        #expect(enter(reader))
        leave(reader)  // a section that ended before the batch was sealed
        let ran = Box(0)
        for _ in 0..<4 { r.retire(by: freer) { ran.value += 1 } }
        #expect(ran.value == 4 && r.keptCount(by: freer) == (0, 0))
        r.release(reader)
        r.release(freer)
    }

    /// A section that lasts (a slow factory, a thread descheduled in one) leaves batches sealed on
    /// the freer's thread, merged beyond `maxSealed`: none goes to another thread, and they run
    /// in retirement order once it ends.
    @Test func batchesWaitingForALastingSectionStayWithTheFreer() {
        let r = Reclaimer(batch: 2, heavyBarrier: Self.fence)
        let reader = r.claim(), freer = r.claim()
        #expect(enter(reader))
        let ran = Box<[Int]>([])
        let count = 4 * (Reclaimer.maxSealed + 2)
        for i in 0..<count { r.retire(by: freer) { ran.value.append(i) } }
        #expect(ran.value.isEmpty)
        #expect(r.keptCount(by: freer) == (0, count))
        #expect(r.pendingCount == 0, "nothing on the shared list")
        leave(reader)
        #expect(ran.value.isEmpty, "the reader runs none of them")
        r.retire(by: freer) { ran.value.append(count) }
        #expect(ran.value.isEmpty, "looked at every \(Reclaimer.pollInterval) retirements")
        for i in 1..<4 { r.retire(by: freer) { ran.value.append(count + i) } }
        #expect(ran.value == Array(0..<(count + 4)), "sealed with the fourth: every batch ran, in order")
        r.release(reader)
        r.release(freer)
    }

    /// After fork() the child has only the forking thread: a section another thread was in at
    /// the fork delays nothing there, and that thread's record serves the child's next thread.
    @Test func afterForkTheOtherThreadsDelayNothing() {
        let r = Reclaimer(batch: 2, heavyBarrier: Self.fence)
        let other = r.claim(), forking = r.claim(), exiting = r.claim()
        #expect(enter(other))  // inside a call at the fork
        let ran = Box(0)
        for _ in 0..<6 { r.retire(by: forking) { ran.value += 1 } }  // sealed, waiting for `other`
        #expect(ran.value == 0 && r.keptCount(by: forking) == (0, 6))
        r.retire(by: nil) { ran.value += 100 }  // on the shared list, waiting for `other` too
        r.prepareFork()
        r.childAfterFork(keeping: forking)
        #expect(enter(forking))
        leave(forking)  // flagged: collects the shared list
        #expect(ran.value == 100)
        for _ in 0..<6 { r.retire(by: forking) { ran.value += 1 } }  // alone now: a batch of 2 x 1, run at its seal
        #expect(ran.value == 100 + 12 && r.keptCount(by: forking) == (0, 0))
        let reused = r.claim()
        #expect(reused == other || reused == exiting, "the other threads' records are free again")
        #expect(enter(reused), "and start outside any section")
        leave(reused)
        r.release(reused)
        r.release(forking)
    }

    /// A destructor run by a batch may free more: the thread's batch takes it, consistently.
    @Test func anActionMayRetireMore() {
        let r = Reclaimer(batch: 2, heavyBarrier: Self.fence)
        let other = r.claim(), freer = r.claim()
        let ran = Box(0)
        let freerWord = UInt(bitPattern: freer)  // (a pointer is not Sendable)
        for _ in 0..<4 {
            r.retire(by: freer) {
                ran.value += 1
                r.retire(by: UnsafeMutablePointer(bitPattern: freerWord)) { ran.value += 100 }
            }
        }
        #expect(ran.value == 4 + 100 * 4, "the nested retirements filled and sealed a batch of their own")
        #expect(r.keptCount(by: freer) == (0, 0))
        r.release(other)
        r.release(freer)
    }

    @Test func theBatchGrowsWithTheThreadsHoldingRecordsUpToItsBound() {
        let barriers = Box(0)
        let r = Reclaimer(batch: 2) { barriers.value += 1; atomicMemoryFence(ordering: .sequentiallyConsistent) }
        let freer = r.claim()
        let others = (0..<(Reclaimer.maxBatchFactor + 3)).map { _ in r.claim() }  // more threads than the bound
        let ran = Box(0)
        let bound = 2 * Reclaimer.maxBatchFactor
        for _ in 0..<(bound - 1) { r.retire(by: freer) { ran.value += 1 } }
        #expect(barriers.value == 0 && ran.value == 0, "kept: the batch is 2 x the bound, not 2 x the threads")
        r.retire(by: freer) { ran.value += 1 }
        #expect(barriers.value == 1 && ran.value == bound, "one barrier for the lot; no section was under way")
        for other in others { r.release(other) }
        // Alone again: a batch of 2 x 1.
        r.retire(by: freer) { ran.value += 1 }
        #expect(barriers.value == 1 && ran.value == bound)
        r.retire(by: freer) { ran.value += 1 }
        #expect(ran.value == bound + 2)
        r.release(freer)
    }

    @Test func waitsForTheSectionUnderWayAndRunsWhenItLeaves() {
        let r = reclaimer()
        let reader = r.claim(), freer = r.claim()
        #expect(enter(reader))
        let ran = Box(0)
        r.retire(by: freer) { ran.value += 1 }
        #expect(ran.value == 0, "a section under way may still use it")
        #expect(r.pendingCount == 1)
        leave(reader)
        #expect(ran.value == 1, "the last section to leave reclaims it")
        #expect(r.pendingCount == 0)
        r.release(reader)
        r.release(freer)
    }

    @Test func nestedSectionsCountOnce() {
        let r = reclaimer()
        let reader = r.claim(), freer = r.claim()
        #expect(enter(reader))
        #expect(!enter(reader), "a nested section is part of the outermost one (and is not left)")
        let ran = Box(0)
        r.retire(by: freer) { ran.value += 1 }
        #expect(ran.value == 0)
        leave(reader)
        #expect(ran.value == 1)
        r.release(reader)
        r.release(freer)
    }

    @Test func theRetiringSectionItselfDelaysItUntilItLeaves() {
        let r = reclaimer()
        let freer = r.claim()
        #expect(enter(freer))
        let ran = Box(0)
        r.retire(by: freer) { ran.value += 1 }
        #expect(ran.value == 0)
        leave(freer)
        #expect(ran.value == 1)
        r.release(freer)
    }

    @Test func sectionsStartedAfterTheRetirementDoNotDelayIt() {
        let r = reclaimer()
        let early = r.claim(), late = r.claim(), freer = r.claim()
        #expect(enter(early))
        let ran = Box(0)
        r.retire(by: freer) { ran.value += 1 }
        #expect(enter(late))
        leave(early)
        #expect(ran.value == 1, "only the section under way at the retirement was waited for")
        leave(late)
        #expect(ran.value == 1, "each action runs once")
        for record in [early, late, freer] { r.release(record) }
    }

    @Test func waitsForEverySectionUnderWay() {
        let r = reclaimer()
        let first = r.claim(), second = r.claim(), freer = r.claim()
        #expect(enter(first))
        #expect(enter(second))
        let ran = Box<[String]>([])
        r.retire(by: freer) { ran.value.append("one") }
        leave(first)
        #expect(ran.value.isEmpty)
        #expect(enter(first))  // a new section: not waited for
        r.retire(by: freer) { ran.value.append("two") }
        leave(second)
        #expect(ran.value == ["one"], "the second retirement also waits for the new section")
        leave(first)
        #expect(ran.value == ["one", "two"])
        for record in [first, second, freer] { r.release(record) }
    }

    @Test func aThreadThatExitsDelaysNothing() {
        let r = reclaimer()
        let exiting = r.claim(), freer = r.claim()
        #expect(enter(exiting))
        let ran = Box(0)
        r.retire(by: freer) { ran.value += 1 }
        r.release(exiting)  // exits in the middle of its section
        #expect(ran.value == 1)
        let reused = r.claim()
        #expect(reused == exiting, "records are reused")
        #expect(enter(reused), "a reused record starts outside any section")
        leave(reused)
        r.release(reused)
        r.release(freer)
    }

    @Test func retiringWithoutARecordWaitsForTheOthers() {
        let r = reclaimer()
        let reader = r.claim()
        #expect(enter(reader))
        let ran = Box(0)
        r.retire(by: nil) { ran.value += 1 }
        #expect(ran.value == 0)
        leave(reader)
        #expect(ran.value == 1)
        r.release(reader)
    }

    /// Readers on several threads follow a shared pointer inside sections while
    /// a writer keeps replacing its target and retiring the old one, whose action
    /// marks it dead: no reader may ever see a dead one, and every action runs.
    /// Batched too: the writer seals and runs its own batches.
    @Test(arguments: [1, 4]) func readersNeverSeeAReclaimedObject(batch: Int) {
        final class Node: @unchecked Sendable {
            let alive = Atomic<Bool>(true)
        }
        let r = Reclaimer(batch: batch, heavyBarrier: Self.fence)
        let replacements = 2000
        let nodes = Box<[Node]>([Node()])  // all kept: "dead" is only a flag, so a bug fails instead of crashing
        let current = Atomic<UInt>(Ref(unretained: nodes.value[0]).word)
        let done = Atomic<Bool>(false)
        let deadSeen = Atomic<Int>(0), reclaimed = Atomic<Int>(0)
        onThreads(4) { i in
            let record = r.claim()
            defer { r.release(record) }
            if i == 0 {
                for _ in 0..<replacements {
                    let node = Node()
                    nodes.value.append(node)
                    let old = current.exchange(Ref(unretained: node).word, ordering: .acquiringAndReleasing)
                    r.retire(by: record) {
                        Ref<Node>(word: old)!.object.alive.store(false, ordering: .relaxed)
                        reclaimed.add(1, ordering: .relaxed)
                    }
                }
                done.store(true, ordering: .releasing)
                return
            }
            while !done.load(ordering: .acquiring) {
                let outermost = Reclaimer.enter(record, lightBarrier: Self.fence)
                let node = Ref<Node>(word: current.load(ordering: .acquiring))!
                for _ in 0..<8 where !node.borrow({ $0.alive.load(ordering: .relaxed) }) {
                    deadSeen.add(1, ordering: .relaxed)
                }
                if outermost { Reclaimer.leave(record, lightBarrier: Self.fence) }
            }
        }
        #expect(deadSeen.load(ordering: .relaxed) == 0)
        #expect(reclaimed.load(ordering: .relaxed) == replacements, "every retired object is reclaimed once the readers are gone")
        #expect(r.pendingCount == 0)
    }
}
