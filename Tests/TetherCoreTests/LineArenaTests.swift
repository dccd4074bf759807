// Memory every thread reads per resolve (a plan's buffers) shares no cache line pair with
// allocations made after it: a worker that planned first would otherwise write that line with
// its next request's small objects, and every other core miss on the plan per request
// (`LineArena`; benchmarks/README, "Lines shared per resolve, shape by shape").
import Foundation
import Testing
@testable import TetherCore

@Suite struct LineArenaTests {
    private static let line = ThreadPrivate.lineBytes

    /// The line pairs `bytes` bytes at `base` touch.
    private static func pairs(_ base: UnsafeRawPointer?, _ bytes: Int) -> Set<Int> {
        guard let base, bytes > 0 else { return [] }
        let first = Int(bitPattern: base) / line, last = (Int(bitPattern: base) + bytes - 1) / line
        return Set(first...last)
    }

    /// The line pairs of small allocations made now (what a request's objects take), freed after.
    private static func laterAllocations() -> Set<Int> {
        var taken: [UnsafeMutableRawPointer] = []
        var lines = Set<Int>()
        for size in [16, 24, 32, 48, 64] {
            for _ in 0..<64 {
                let p = malloc(size)!
                taken.append(p)
                lines.formUnion(pairs(p, size))
            }
        }
        for p in taken { free(p) }
        return lines
    }

    @Test func buffersPackInLinesOfTheirOwn() {
        var arena = LineArena()
        let a = arena.allocate(UInt8.self, capacity: 3)!
        let b = arena.allocate(UInt64.self, capacity: 2)!
        let big = arena.allocate(Int.self, capacity: 1000)!
        let c = arena.allocate(UInt32.self, capacity: 5)!
        #expect(arena.allocate(Int.self, capacity: 0) == nil)
        // Small ones packed in one block, each at its type's alignment; the large one a block of its own.
        #expect(Int(bitPattern: a) % Self.line == 0 && Int(bitPattern: big) % Self.line == 0)
        #expect(Int(bitPattern: b) == Int(bitPattern: a) + 8)
        #expect(Int(bitPattern: c) == Int(bitPattern: b) + 16)
        let copied = arena.copy([7, 8, 9])
        #expect(Array(copied) == [7, 8, 9])
        var mine = Self.pairs(a, 3).union(Self.pairs(b, 16)).union(Self.pairs(big, 8000)).union(Self.pairs(c, 20))
        mine.formUnion(Self.pairs(copied.baseAddress, 24))
        #expect(mine.isDisjoint(with: Self.laterAllocations()))
        arena.deallocate()
    }

    @Test func aPlansBuffersShareNoLineWithLaterAllocations() throws {
        let fx = try Fixture()
        try fx.register("A", [dep("B"), dep("C")])
        try fx.register("B", [dep("C")])
        try fx.register("C", scope: .singleton)
        _ = try fx.resolve("C")
        let registration = fx.container.registration(for: Key("A"))!
        let plan = try Plan.record(registration, configuration: fx.container.configuration)
        #expect(plan.blockWords > 0 && plan.template.pointers.count == 1 && !plan.sharedSteps.isEmpty)
        var mine = Set<Int>()
        func add<T>(_ buffer: UnsafeBufferPointer<T>) { mine.formUnion(Self.pairs(buffer.baseAddress, buffer.count * MemoryLayout<T>.stride)) }
        add(plan.steps)
        add(plan.inputs)
        add(plan.madeSteps)
        add(plan.sharedSteps)
        add(plan.template.words)
        add(plan.template.pointers)
        add(plan.template.shared)
        #expect(!mine.isEmpty)
        #expect(mine.isDisjoint(with: Self.laterAllocations()))
        withExtendedLifetime(plan) {}
    }
}
