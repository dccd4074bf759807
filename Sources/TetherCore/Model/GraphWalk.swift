/// The graph searches, one home for each: every walk over instances (strong edges, for the
/// retain-cycle refusal: `StrongPath`, `Instance.stronglyReaches`), over declarations (validate's
/// cycles and retain cycles, `GraphCheck`; what an override rebuilds, `GraphCheck.dependents`) and
/// over a described plan's steps (`Container.resolverAnswer`, `describePlan`'s cycle check) calls
/// one of these with its own successors. Iterative: a 10,000-deep chain does not recurse.
enum GraphWalk {
    /// The nodes of a path `start` ... a node `isGoal` accepts (`start` itself included), if
    /// any: depth first (successors pushed in order, the last explored first: the path a
    /// resolve's refusal names), or `shortest` (breadth first: validate's). `id` tells nodes apart.
    static func path<Node, ID: Hashable>(from start: Node, id: (Node) -> ID, shortest: Bool = false,
                                         successors: (Node) -> [Node], isGoal: (Node) -> Bool) -> [Node]? {
        var parent: [ID: Node] = [:]
        var seen: Set<ID> = [id(start)]
        var pending = [start]
        var head = 0  // breadth first: the queue's front; depth first: unused (a stack)
        while shortest ? head < pending.count : !pending.isEmpty {
            let node: Node
            if shortest { node = pending[head]; head += 1 } else { node = pending.removeLast() }
            if isGoal(node) {
                var path = [node]
                var cur = node
                while let p = parent[id(cur)] { path.append(p); cur = p }
                return path.reversed()
            }
            for next in successors(node) where seen.insert(id(next)).inserted {
                parent[id(next)] = node
                pending.append(next)
            }
        }
        return nil
    }

    /// Every node reachable from `start` (not `start` itself unless a cycle returns to it), in the
    /// order found depth first.
    static func reachable<Node, ID: Hashable>(from start: Node, id: (Node) -> ID, successors: (Node) -> [Node]) -> [Node] {
        var found: [Node] = []
        var seen: Set<ID> = []
        var stack = [start]
        while let node = stack.popLast() {
            for next in successors(node) where seen.insert(id(next)).inserted {
                found.append(next)
                stack.append(next)
            }
        }
        return found
    }

    /// The cycles of the graph of nodes `0..<count`: a depth-first search from each node not yet
    /// seen, in order, successors in order; each edge back to a node on the search's path closes
    /// one, given as its nodes from that node round to it again. `first`: stop at the first.
    static func cycles(count: Int, first: Bool = false, successors: (Int) -> [Int]) -> [[Int]] {
        enum Color { case gray, black }
        var color = [Color?](repeating: nil, count: count)
        var found: [[Int]] = []
        for start in 0..<count where color[start] == nil {
            var stack: [(node: Int, next: [Int], at: Int)] = [(start, successors(start), 0)]
            color[start] = .gray
            while let top = stack.last {
                guard top.at < top.next.count else {
                    color[top.node] = .black
                    stack.removeLast()
                    continue
                }
                stack[stack.count - 1].at += 1
                let target = top.next[top.at]
                switch color[target] {
                case nil:
                    color[target] = .gray
                    stack.append((target, successors(target), 0))
                case .gray:
                    let from = stack.firstIndex { $0.node == target }!
                    found.append(stack[from...].map(\.node) + [target])
                    if first { return found }
                case .black:
                    break
                }
            }
        }
        return found
    }
}

/// Strong-edge reachability for retain-cycle detection.
enum StrongPath {
    /// The keys along a strong path `from` ... `to`, then `from` again, if one exists.
    static func find(from start: Instance, to goal: Instance) -> [Key]? {
        find(from: start, to: goal, id: ObjectIdentifier.init, key: \.key) { node in
            var targets: [Instance] = []
            _ = node.forEachStrongEdge { next in
                targets.append(next)
                return true
            }
            return targets
        }
    }

    /// `find` over any graph: `successors(node)` are the node's strong edges in order.
    /// One search, so a described plan's answer names the path a resolve would (`Container.resolverAnswer`).
    static func find<Node, ID: Hashable>(from start: Node, to goal: Node, id: (Node) -> ID, key: (Node) -> Key,
                                         successors: (Node) -> [Node]) -> [Key]? {
        let goalID = id(goal)
        guard let path = GraphWalk.path(from: start, id: id, successors: successors, isGoal: { id($0) == goalID }) else { return nil }
        // start ... goal, then the new edge goal -> start closes it
        return path.map(key) + [key(start)]
    }
}
