/// The declared graph of everything resolvable from a container, checked
/// without running a factory: what a resolve of some key would reject (missing
/// keys, constructor cycles, retain cycles closed by declared completion
/// targets or LAZY slots, dependencies on keys that take runtime arguments) and captive
/// dependencies (`Scope.captures`), plus a Graphviz picture. Edges are the
/// factories' slots and the declared targets of completion callbacks
/// (`DeclaredCompletion`); constructor edges are DEP, WEAK and ALL slots (an ALL
/// slot is one strong edge per registration it lists from the lookup container).
public struct GraphCheck {
    public struct Missing {
        public let key: Key
        public let neededBy: [Key]
        /// `neededBy` as messages show them (`"A"`, `"B" (completion callback #1)`).
        let shown: [String]
    }

    /// One declared edge: a factory slot (`completion` nil) or a declared target
    /// of completion callback `completion` (from 0).
    struct Edge {
        let from: Registration
        let param: Param
        let completion: Int?
        /// The key named: the slot's, or for an ALL slot, the listed registration's.
        let target: Key
        /// Its place among its registration's edges (`GraphCheck.edges(of:)`).
        let number: Int
        /// The edge's identity: its registration and place.
        struct ID: Hashable { let from: ObjectIdentifier, number: Int }
        var id: ID { ID(from: ObjectIdentifier(from), number: number) }
        var isStrong: Bool { param.isStrongEdge }
        /// Where it is declared, for messages: "" or " (completion callback #N)".
        var via: String { completion.map { " (completion callback #\($0 + 1))" } ?? "" }
    }

    public let registrations: [Registration]
    public private(set) var missing: [Missing] = []
    /// Each cycle as a path that ends where it starts.
    public private(set) var cycles: [[Key]] = []
    /// Problems other than missing keys and constructor cycles, in the order reported.
    public private(set) var problems: [TetherError] = []
    private var reported = Set<String>()
    private var cycleEdges = Set<[Key]>()
    private var retainCycleEdges = Set<[Key]>()
    private var captiveEdges = Set<[Key]>()
    /// The declared edges of `registrations`, for the picture.
    private let edges: [Edge]

    /// A registration as resolves reach it: with the container its edges are
    /// looked up in (a singleton's own, as `Graph` does, else the one of whoever
    /// reached it). `out`: its edges with their target nodes (nil: missing).
    private struct Node {
        let registration: Registration
        let lookup: Container
        var out: [(edge: Edge, target: Int?)] = []
    }
    private var nodes: [Node] = []

    /// Lines a report shows at most; the rest are counted.
    static var maxReportedProblems: Int { 100 }

    public init(_ container: Container) {
        registrations = container.visibleRegistrations()
        edges = registrations.flatMap { GraphCheck.edges(of: $0, lookup: $0.spec.scope.resolvesFromOwnContainer ? $0.container : container) }
        var index: [[ObjectIdentifier]: Int] = [:]
        func node(_ r: Registration, _ lookup: Container) -> Int {
            let id = [ObjectIdentifier(r), ObjectIdentifier(lookup)]
            if let i = index[id] { return i }
            nodes.append(Node(registration: r, lookup: lookup))
            index[id] = nodes.count - 1
            return nodes.count - 1
        }
        for r in registrations { _ = node(r, container) }
        var next = 0
        while next < nodes.count {  // nodes found on the way are appended, and visited in turn
            let r = nodes[next].registration
            let lookup = r.spec.scope.resolvesFromOwnContainer ? r.container : nodes[next].lookup
            nodes[next].out = GraphCheck.edges(of: r, lookup: lookup).map { e in (e, lookup.registration(for: e.target).map { node($0, lookup) }) }
            next += 1
        }
        var neededBy: [Key: [Edge]] = [:]
        var seen = Set<Edge.ID>()  // an edge reached through several lookup containers counts once
        for n in nodes {
            for (e, target) in n.out where target == nil && e.param.kind.needsRegistration && seen.insert(e.id).inserted {
                neededBy[e.target, default: []].append(e)
            }
        }
        missing = neededBy.map { Missing(key: $0.key, neededBy: $0.value.map(\.from.key), shown: $0.value.map { $0.from.key.quoted + $0.via }) }
            .sorted { $0.key.name < $1.key.name }
        findCycles()
        findRetainCycles()
        findArgumentDependencies()
        findCaptives()
    }

    /// The factory slots naming a key and the declared completion targets of `r`, an ALL
    /// slot's registrations as `lookup` lists them (`Container.allRegistrations`).
    static func edges(of r: Registration, lookup: Container) -> [Edge] {
        var edges: [Edge] = []
        for p in r.params {
            switch p.targets(from: lookup) {
            case .list(let items):
                for element in items {
                    edges.append(Edge(from: r, param: p, completion: nil, target: element.key, number: edges.count))
                }
            case .key(let key):
                edges.append(Edge(from: r, param: p, completion: nil, target: key, number: edges.count))
            case .none:
                break
            }
        }
        for (n, completion) in r.spec.completions.enumerated() {
            guard let declared = completion as? DeclaredCompletion else { continue }
            for p in declared.params { edges.append(Edge(from: r, param: p, completion: n, target: p.key!, number: edges.count)) }
        }
        return edges
    }

    /// Adds `error` unless the same problem was found through another lookup container.
    private mutating func report(_ error: TetherError) {
        if reported.insert(error.message).inserted { problems.append(error) }
    }

    /// Constructor cycles over the declared edges (factory DEP, WEAK and ALL slots): every back
    /// edge of `GraphWalk.cycles` closes one reported cycle.
    private mutating func findCycles() {
        let nodes = self.nodes
        var found = Set<[Key]>()
        let constructorEdges = GraphWalk.cycles(count: nodes.count) { n in
            nodes[n].out.compactMap { edge, target in edge.completion == nil && edge.param.isConstructorEdge ? target : nil }
        }
        for path in constructorEdges {
            let cycle = path.map { nodes[$0].registration.key }
            guard found.insert(cycle).inserted else { continue }
            cycles.append(cycle)
            for i in 0..<(cycle.count - 1) { cycleEdges.insert([cycle[i], cycle[i + 1]]) }
        }
    }

    /// A declared DEP target that reaches back to the callback's owner through
    /// strong edges (DEP slots, declared DEP targets): the edge the callback
    /// would add closes a retain cycle, which the resolve refuses.
    private mutating func findRetainCycles() {
        for n in nodes.indices {
            for (e, target) in nodes[n].out where e.completion != nil && e.isStrong {
                guard let target, let back = strongPath(from: target, to: n) else { continue }
                let cycle = [e.from.key] + back.map { nodes[$0].registration.key }
                for i in 0..<(cycle.count - 1) { retainCycleEdges.insert([cycle[i], cycle[i + 1]]) }
                var parts = ErrorParts(.weakTarget, key: e.from.key, target: e.target, path: cycle)
                (parts.callback, parts.callbackOf) = (e.completion! + 1, e.from.key)
                report(TetherError(.retainCycle,
                    "retain cycle \(pathText(cycle)): the declared target \(e.target.quoted) of completion callback #\(e.completion! + 1) of \(e.from.key.quoted) is a strong edge that closes it; declare that target TETHER_PARAM_WEAK", parts))
            }
            // A LAZY slot whose key's instance holds the dependent strongly: its call answers
            // the graph's instance, and holding that strongly is refused (`LazyCell.bind`).
            for (e, target) in nodes[n].out where e.completion == nil && e.param == .lazy(e.target) {
                guard let target, let back = strongPath(from: target, to: n) else { continue }
                let keys = back.map { nodes[$0].registration.key }
                let cycle = [e.from.key] + keys
                for i in 0..<(cycle.count - 1) { retainCycleEdges.insert([cycle[i], cycle[i + 1]]) }
                report(TetherError.lazyRetainCycle(owner: e.from.key, key: e.target, path: keys + [e.target]))
            }
        }
    }

    /// The nodes of a shortest strong path `start` ... `goal`, if any (`GraphWalk.path`, breadth first).
    private func strongPath(from start: Int, to goal: Int) -> [Int]? {
        GraphWalk.path(from: start, id: { $0 }, shortest: true, successors: { n in
            nodes[n].out.compactMap { edge, target in edge.isStrong ? target : nil }
        }, isGoal: { $0 == goal })
    }

    /// DEP, WEAK and ALL slots and declared targets naming a key that takes runtime
    /// arguments: only a top-level resolve or a FACTORY slot can pass them.
    private mutating func findArgumentDependencies() {
        for n in nodes {
            for (e, target) in n.out where e.param.isConstructorEdge {
                guard let target, nodes[target].registration.hasArguments else { continue }
                report(Graph.argumentDependency(e.target, neededBy: e.from.key.quoted + e.via, path: e.completion == nil ? [e.from.key] : []))
            }
        }
    }

    /// Strong edges from a cached instance to a shorter-lived one (`Scope.captures`).
    private mutating func findCaptives() {
        for n in nodes {
            for (e, target) in n.out where e.isStrong {
                guard let target else { continue }
                let (holderScope, targetScope) = (e.from.spec.scope, nodes[target].registration.spec.scope)
                guard holderScope.captures(targetScope) else { continue }
                captiveEdges.insert([e.from.key, e.target])
                report(captiveError(holder: e.from.key, holderScope, target: e.target, targetScope, via: e.via))
            }
        }
    }

    /// Every problem in the order the report lists them, each with the parts its
    /// message is made of where a binding says the fix its own way (cycles, retain cycles).
    public var allProblems: [TetherError] {
        var found: [TetherError] = []
        for m in missing {
            found.append(TetherError.notRegistered(m.key, neededBy: cappedList(m.shown, separator: ", ") { $0 }, listed: true))
        }
        for c in cycles {
            found.append(TetherError.constructorCycle(c))
        }
        return found + problems
    }

    /// The report as an error (nil when the graph is sound), one problem per
    /// line. Its status is the first kind found in this order: NOT_FOUND, CYCLE,
    /// RETAIN_CYCLE, ARGUMENT_MISMATCH, CAPTIVE_DEPENDENCY.
    public var error: TetherError? {
        let found = allProblems
        guard !found.isEmpty else { return nil }
        let order: [ErrorCode] = [.notFound, .cycle, .retainCycle, .argumentMismatch, .captiveDependency]
        let code = order.first { code in found.contains { $0.code == code } }!
        var lines = ["tether_validate: \(found.count) problem(s) in the declared graph"]
        lines += found.prefix(Self.maxReportedProblems).map(\.message)
        if found.count > Self.maxReportedProblems { lines.append("... and \(found.count - Self.maxReportedProblems) more") }
        return TetherError(code, lines.joined(separator: "\n"))
    }

    /// Graphviz DOT: nodes with key and scope; strong edges solid, weak dashed,
    /// lazy dotted (weak-lazy with a hollow head); declared completion targets
    /// labelled "completion", other edges seen made by completion callbacks in
    /// gray; missing keys, constructor and retain cycles in red, captive edges orange.
    public func dot() -> String {
        var out = "digraph tether {\n  rankdir=LR;\n  node [shape=box, style=rounded, fontname=\"Helvetica\"];\n  edge [fontname=\"Helvetica\", fontsize=10];\n"
        for r in registrations {
            out += "  \(dotID(r.key)) [label=\"\(dotEscape(shown(r.key)))\\n(\(r.spec.scope.name))\"];\n"
        }
        for m in missing {
            out += "  \(dotID(m.key)) [label=\"\(dotEscape(shown(m.key)))\\n(missing)\", style=dashed, color=red, fontcolor=red];\n"
        }
        // Declared completion targets (from, target, weak): the edges seen made by them are not drawn again.
        var declared = Set<[UInt32]>()
        for e in edges {
            var attributes = e.param.kind.dotAttributes
            if e.completion != nil {
                attributes.append("label=\"completion\"")
                declared.insert([e.from.key.id, e.target.id, e.isStrong ? 0 : 1])
            }
            let pair = [e.from.key, e.target]
            if e.param.isConstructorEdge && e.completion == nil && cycleEdges.contains(pair)
                || (e.isStrong || e.param == .lazy(e.target)) && retainCycleEdges.contains(pair) {
                attributes += ["color=red", "penwidth=2"]
            } else if e.isStrong && captiveEdges.contains(pair) {
                attributes += ["color=orange", "penwidth=2"]
            }
            out += "  \(dotID(e.from.key)) -> \(dotID(e.target))\(attributes.isEmpty ? "" : " [\(attributes.joined(separator: ", "))]");\n"
        }
        for r in registrations {
            for edge in r.observedEdges where !declared.contains([r.key.id, edge.target.id, edge.isWeak ? 1 : 0]) {
                let style = edge.isWeak ? "style=dashed, " : ""
                out += "  \(dotID(r.key)) -> \(dotID(edge.target)) [\(style)color=gray40, label=\"completion\"];\n"
            }
        }
        return out + "}\n"
    }

    /// A node's id: its quoted name, or for a name too long to show whole, the
    /// shortened name with the key's id (so two long keys stay two nodes).
    private func dotID(_ key: Key) -> String {
        let short = shown(key)
        return short.utf8.count == key.name.utf8.count ? "\"\(dotEscape(short))\"" : "\"\(dotEscape(short))#\(key.id)\""
    }
    /// A key's name as messages quote it (`capped`).
    private func shown(_ key: Key) -> String { capped(key.name, ErrorParts.keyCap) }
    private func dotEscape(_ s: String) -> String {
        s.replacingAll("\\", with: "\\\\").replacingAll("\"", with: "\\\"").replacingAll("\n", with: "\\n")
    }
}

extension String {
    /// Replaces every occurrence of `target` (no Foundation in this library).
    func replacingAll(_ target: Character, with replacement: String) -> String {
        var out = ""
        for ch in self { if ch == target { out += replacement } else { out.append(ch) } }
        return out
    }
}
