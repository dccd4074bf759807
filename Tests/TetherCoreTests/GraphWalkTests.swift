// The graph searches every walk calls (`GraphWalk`): which path each finds, what it reaches, which
// cycles it reports, on small graphs given as successor lists.
import Testing
@testable import TetherCore

@Suite struct GraphWalkTests {
    /// 0 -> 1 -> 2 -> 3, 0 -> 3 (a short way round), 3 -> 4.
    private let chain: [[Int]] = [[1, 3], [2], [3], [4], []]

    @Test func depthFirstTakesTheLastSuccessorFirstAndShortestTheFewestEdges() {
        let deep = GraphWalk.path(from: 0, id: { $0 }, successors: { chain[$0] }, isGoal: { $0 == 4 })
        #expect(deep == [0, 3, 4])  // 3 pushed last, explored first
        // 0 -> 1 -> 4, 0 -> 2 -> 3 -> 4: depth first goes down 2 (pushed last), breadth first finds 1's edge first.
        let fork: [[Int]] = [[1, 2], [4], [3], [4], []]
        #expect(GraphWalk.path(from: 0, id: { $0 }, successors: { fork[$0] }, isGoal: { $0 == 4 }) == [0, 2, 3, 4])
        #expect(GraphWalk.path(from: 0, id: { $0 }, shortest: true, successors: { fork[$0] }, isGoal: { $0 == 4 }) == [0, 1, 4])
        #expect(GraphWalk.path(from: 4, id: { $0 }, successors: { chain[$0] }, isGoal: { $0 == 0 }) == nil)
        #expect(GraphWalk.path(from: 2, id: { $0 }, successors: { chain[$0] }, isGoal: { $0 == 2 }) == [2], "the start is a goal too")
    }

    @Test func reachableListsEachNodeOnceAndTheStartOnlyOnACycle() {
        #expect(Set(GraphWalk.reachable(from: 1, id: { $0 }) { chain[$0] }) == [2, 3, 4])
        let loop: [[Int]] = [[1], [2], [0, 1]]
        let found = GraphWalk.reachable(from: 0, id: { $0 }) { loop[$0] }
        #expect(found.count == 3 && Set(found) == [0, 1, 2])
    }

    @Test func everyBackEdgeClosesOneCycleFromWhereItStarts() {
        #expect(GraphWalk.cycles(count: chain.count) { chain[$0] }.isEmpty)
        // 0 -> 1 -> 2 -> 0, 2 -> 2, 3 -> 1 (3 outside both cycles)
        let graph: [[Int]] = [[1], [2], [0, 2], [1]]
        #expect(GraphWalk.cycles(count: graph.count) { graph[$0] } == [[0, 1, 2, 0], [2, 2]])
        #expect(GraphWalk.cycles(count: graph.count, first: true) { graph[$0] } == [[0, 1, 2, 0]])
    }

    @Test func aStrongPathNamesItsKeysThenTheStartAgain() {
        let keys = ["A", "B", "C"].map { Key($0) }
        let edges: [[Int]] = [[1], [2], []]
        let path = StrongPath.find(from: 0, to: 2, id: { $0 }, key: { keys[$0] }) { edges[$0] }
        #expect(path?.map(\.name) == ["A", "B", "C", "A"])
        #expect(StrongPath.find(from: 2, to: 0, id: { $0 }, key: { keys[$0] }) { edges[$0] } == nil)
    }
}
