// Creation order (`CreationOrder.walk`), the rule `Graph.build` and the plan recorder both
// follow: which slot is filled next, when a dependency's frame opens, when an instance is made
// and who takes it; an ALL slot's items one per pass; a failure closing only the walk's frames.
// Driven here by a walker over declarations given as lists, recording what the walk asked.
import Testing
@testable import TetherCore

@Suite struct CreationOrderTests {
    /// A walker over `declared` (key -> slots): a key already made is found, not made again;
    /// an ALL slot lists `lists[key]`; making `failing` fails.
    private final class Walker: CreationWalk {
        struct Failed: Error, Equatable { let key: String }
        struct Frame {
            let key: String
            let params: UnsafeBufferPointer<Param>
            var slot = 0
            var items = 0
        }
        private var declared: [String: UnsafeMutableBufferPointer<Param>] = [:]
        let lists: [String: [String]]
        var failing: String?
        var made: Set<String> = []
        var frames: [Frame] = []
        var events: [String] = []

        init(_ declared: [String: [Param]], lists: [String: [String]] = [:]) {
            for (key, params) in declared {
                let buffer = UnsafeMutableBufferPointer<Param>.allocate(capacity: params.count)
                _ = buffer.initialize(from: params)
                self.declared[key] = buffer
            }
            self.lists = lists
        }

        deinit { for buffer in declared.values { buffer.deinitialize().deallocate() } }

        var depth: Int { frames.count }
        var topParams: UnsafeBufferPointer<Param> { frames[frames.count - 1].params }
        var topSlot: Int { frames[frames.count - 1].slot }
        func advance() { frames[frames.count - 1].slot += 1 }
        func open(_ key: String) {
            events.append("open \(key)")
            frames.append(Frame(key: key, params: UnsafeBufferPointer(declared[key]!)))
        }
        func close() { events.append("close \(frames.removeLast().key)") }

        func fill(_ param: Param, at slot: Int) throws(Failed) -> CreationOrder.Fill<String, String> {
            let top = frames.count - 1
            switch param {
            case .dependency(let key):
                return made.contains(key.name) ? .found(key.name) : .enter(key.name)
            case .all(let key):
                let items = lists[key.name] ?? []
                guard frames[top].items < items.count else { return .filled }
                let item = items[frames[top].items]
                return made.contains(item) ? .found(item) : .enter(item)
            default:
                events.append("\(frames[top].key) word \(slot)")
                return .filled
            }
        }

        func make() throws(Failed) -> String {
            let key = frames[frames.count - 1].key
            if key == failing { throw Failed(key: key) }
            made.insert(key)
            events.append("make \(key)")
            return key
        }

        func take(_ made: String, _ param: Param, at slot: Int) throws(Failed) {
            let top = frames.count - 1
            events.append("\(frames[top].key)[\(slot)] <- \(made)")
            if case .all = param { frames[top].items += 1 }
        }

        var makes: [String] { events.filter { $0.hasPrefix("make ") }.map { String($0.dropFirst(5)) } }
    }

    @Test func dependenciesAreMadeDepthFirstInSlotOrderEachWhenItsSlotsAreFilled() throws {
        // A(B, context, C), B(D), C(D), D: D made once, under B (asked first), found by C.
        let walker = Walker(["A": [dep("B"), .context, dep("C")], "B": [dep("D")], "C": [dep("D")], "D": []])
        let root = try CreationOrder.walk(walker, entering: "A")
        #expect(root == "A")
        #expect(walker.depth == 0)
        #expect(walker.events == [
            "open A", "open B", "open D", "make D", "close D", "B[0] <- D", "make B", "close B", "A[0] <- B",
            "A word 1", "open C", "C[0] <- D", "make C", "close C", "A[2] <- C", "make A", "close A",
        ])
    }

    @Test func anAllSlotTakesOneItemPerPassAndIsFilledWhenItsListIs() throws {
        // A(all X, context), X lists P, Q, P again (found: made on the first pass).
        let walker = Walker(["A": [.all(Key("X")), .context], "P": [], "Q": [dep("P")]], lists: ["X": ["P", "Q", "P"]])
        _ = try CreationOrder.walk(walker, entering: "A")
        #expect(walker.makes == ["P", "Q", "A"])
        #expect(walker.events.filter { $0.hasPrefix("A") } == ["A[0] <- P", "A[0] <- Q", "A[0] <- P", "A word 1"])
    }

    @Test func aFailureClosesTheFramesOfItsWalkNewestFirstAndLeavesOuterOnes() throws {
        // An outer frame open (a build under way when a factory's resolver builds again).
        let walker = Walker(["Outer": [dep("A")], "A": [dep("B"), dep("C")], "B": [], "C": [dep("D")], "D": []])
        walker.failing = "D"
        walker.open("Outer")
        walker.events.removeAll()
        #expect(throws: Walker.Failed(key: "D")) { try CreationOrder.walk(walker, entering: "A") }
        #expect(walker.depth == 1 && walker.frames[0].key == "Outer")
        #expect(walker.makes == ["B"])
        #expect(walker.events.suffix(3) == ["close D", "close C", "close A"])
    }

    @Test func aRootWithoutSlotsIsMadeAtOnce() throws {
        let walker = Walker(["A": []])
        #expect(try CreationOrder.walk(walker, entering: "A") == "A")
        #expect(walker.events == ["open A", "make A", "close A"])
    }
}
