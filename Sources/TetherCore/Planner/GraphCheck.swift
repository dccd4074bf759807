/// The declared graph of everything resolvable from a container, checked
/// without running a factory: what a resolve of some key would reject (missing
/// keys, constructor cycles, retain cycles closed by declared completion
/// targets, dependencies on keys that take runtime arguments) and captive
/// dependencies (`Scope.captures`), plus a Graphviz picture. Edges are the
/// factories' slots and the declared targets of completion callbacks
/// (`DeclaredCompletion`); constructor edges are DEP and WEAK slots.
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

        var target: Key { param.key! }
        var isStrong: Bool { if case .dependency = param { true } else { false } }
        /// Where it is declared, for messages: "" or " (completion callback #N)".
        var via: String { completion.map { " (completion callback #\($0 + 1))" } ?? "" }
    }

    public let registrations: [Registration]
    public private(set) var missing: [Missing] = []
    /// Each cycle as a path that ends where it starts.
    public private(set) var cycles: [[Key]] = []
    /// Problems other than missing keys and constructor cycles, in the order reported.
    public private(set) var problems: [TetherError] = []
    private var cycleEdges = Set<[Key]>()
    private var retainCycleEdges = Set<[Key]>()
    private var captiveEdges = Set<[Key]>()
    private let edges: [Edge]
    private let byKey: [Key: Registration]

    /// Lines a report shows at most; the rest are counted.
    static var maxReportedProblems: Int { 100 }

    public init(_ container: Container) {
        registrations = container.visibleRegistrations()
        let byKey = Dictionary(registrations.map { ($0.key, $0) }, uniquingKeysWith: { first, _ in first })
        self.byKey = byKey
        var edges: [Edge] = []
        for r in registrations {
            for p in r.params where p.key != nil { edges.append(Edge(from: r, param: p, completion: nil)) }
            for (n, completion) in r.spec.completions.enumerated() {
                guard let declared = completion as? DeclaredCompletion else { continue }
                for p in declared.params { edges.append(Edge(from: r, param: p, completion: n)) }
            }
        }
        self.edges = edges
        var neededBy: [Key: [Edge]] = [:]
        for e in edges where byKey[e.target] == nil { neededBy[e.target, default: []].append(e) }
        missing = neededBy.map { Missing(key: $0.key, neededBy: $0.value.map(\.from.key), shown: $0.value.map { $0.from.key.quoted + $0.via }) }
            .sorted { $0.key.name < $1.key.name }
        findCycles(byKey)
        findRetainCycles()
        findArgumentDependencies()
        findCaptives()
    }

    /// Iterative depth-first search; every back edge closes one reported cycle.
    private mutating func findCycles(_ byKey: [Key: Registration]) {
        enum Color { case gray, black }
        var color: [Key: Color] = [:]
        for start in registrations where color[start.key] == nil {
            var stack: [(key: Key, next: Int)] = [(start.key, 0)]
            color[start.key] = .gray
            while !stack.isEmpty {
                let (key, next) = stack[stack.count - 1]
                let params = byKey[key]?.params ?? UnsafeBufferPointer(start: nil, count: 0)
                guard next < params.count else {
                    color[key] = .black
                    stack.removeLast()
                    continue
                }
                stack[stack.count - 1].next += 1
                guard params[next].isConstructorEdge, let target = params[next].key, byKey[target] != nil else { continue }
                switch color[target] {
                case nil:
                    color[target] = .gray
                    stack.append((target, 0))
                case .gray:
                    let from = stack.firstIndex { $0.key == target }!
                    let cycle = stack[from...].map(\.key) + [target]
                    cycles.append(cycle)
                    for i in 0..<(cycle.count - 1) { cycleEdges.insert([cycle[i], cycle[i + 1]]) }
                case .black:
                    break
                }
            }
        }
    }

    /// A declared DEP target whose key reaches back to the callback's owner
    /// through strong edges (DEP slots, declared DEP targets): the edge the
    /// callback would add closes a retain cycle, which the resolve refuses.
    private mutating func findRetainCycles() {
        var strong: [Key: [Key]] = [:]
        for e in edges where e.isStrong && byKey[e.target] != nil { strong[e.from.key, default: []].append(e.target) }
        for e in edges where e.completion != nil && e.isStrong && byKey[e.target] != nil {
            guard let back = strongPath(from: e.target, to: e.from.key, strong) else { continue }
            let cycle = [e.from.key] + back
            for i in 0..<(cycle.count - 1) { retainCycleEdges.insert([cycle[i], cycle[i + 1]]) }
            problems.append(TetherError(.retainCycle,
                "retain cycle \(pathText(cycle)): the declared target \(e.target.quoted) of completion callback #\(e.completion! + 1) of \(e.from.key.quoted) is a strong edge that closes it; declare that target TETHER_PARAM_WEAK"))
        }
    }

    /// The keys of a shortest path `from` ... `to` over `strong`, if any (breadth first).
    private func strongPath(from start: Key, to goal: Key, _ strong: [Key: [Key]]) -> [Key]? {
        var parent: [Key: Key] = [start: start]
        var queue = [start]
        var head = 0
        while head < queue.count {
            let key = queue[head]
            head += 1
            if key == goal {
                var path = [key]
                var cur = key
                while cur != start { cur = parent[cur]!; path.append(cur) }
                return path.reversed()
            }
            for next in strong[key] ?? [] where parent[next] == nil {
                parent[next] = key
                queue.append(next)
            }
        }
        return nil
    }

    /// DEP and WEAK slots and declared targets naming a key that takes runtime
    /// arguments: only a top-level resolve can pass them.
    private mutating func findArgumentDependencies() {
        for e in edges where e.param.isConstructorEdge {
            guard let target = byKey[e.target], target.hasArguments else { continue }
            problems.append(TetherError(.argumentMismatch,
                "\(e.target.quoted) takes runtime arguments and cannot be a dependency (needed by \(e.from.key.quoted)\(e.via)); resolve it at the top level with tether_resolve_args, or pass it a LAZY slot's provider"))
        }
    }

    /// Strong edges from a cached instance to a shorter-lived one (`Scope.captures`).
    private mutating func findCaptives() {
        for e in edges where e.isStrong {
            guard let target = byKey[e.target] else { continue }
            let (holderScope, targetScope) = (e.from.spec.scope, target.spec.scope)
            guard holderScope.captures(targetScope) else { continue }
            captiveEdges.insert([e.from.key, e.target])
            problems.append(captiveError(holder: e.from.key, holderScope, target: e.target, targetScope, via: e.via))
        }
    }

    /// The report as an error (nil when the graph is sound), one problem per
    /// line. Its status is the first kind found in this order: NOT_FOUND, CYCLE,
    /// RETAIN_CYCLE, ARGUMENT_MISMATCH, CAPTIVE_DEPENDENCY.
    public var error: TetherError? {
        var found: [TetherError] = []
        for m in missing {
            found.append(TetherError(.notFound, "no registration for \(m.key.quoted) (needed by \(cappedList(m.shown, separator: ", ") { $0 }))"))
        }
        for c in cycles {
            found.append(TetherError(.cycle, "dependency cycle through constructors: \(pathText(c)); break one edge with a completion callback (tether_on_complete) or a lazy dependency (TETHER_LAZY)"))
        }
        found += problems
        guard !found.isEmpty else { return nil }
        let order: [ErrorCode] = [.notFound, .cycle, .retainCycle, .argumentMismatch, .captiveDependency]
        let code = order.first { code in found.contains { $0.code == code } }!
        var lines = ["tether_validate: \(found.count) problem(s) in the declared graph"]
        lines += found.prefix(Self.maxReportedProblems).map(\.message)
        if found.count > Self.maxReportedProblems { lines.append("… and \(found.count - Self.maxReportedProblems) more") }
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
            var attributes: [String] = []
            switch e.param {
            case .weak: attributes.append("style=dashed")
            case .lazy: attributes.append("style=dotted")
            case .weakLazy: attributes += ["style=dotted", "arrowhead=odot"]
            default: break
            }
            if e.completion != nil {
                attributes.append("label=\"completion\"")
                declared.insert([e.from.key.id, e.target.id, e.isStrong ? 0 : 1])
            }
            let pair = [e.from.key, e.target]
            if e.param.isConstructorEdge && e.completion == nil && cycleEdges.contains(pair)
                || e.isStrong && retainCycleEdges.contains(pair) {
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
