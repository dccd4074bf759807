/// The declared graph of everything resolvable from a container, checked
/// without running a factory: missing keys, constructor cycles, and a Graphviz
/// picture. Constructor edges are DEP and WEAK slots; lazy slots are not.
public struct GraphCheck {
    public struct Missing {
        public let key: Key
        public let neededBy: [Key]
    }

    public let registrations: [Registration]
    public private(set) var missing: [Missing] = []
    /// Each cycle as a path that ends where it starts.
    public private(set) var cycles: [[Key]] = []
    private var cycleEdges = Set<[Key]>()

    public init(_ container: Container) {
        registrations = container.visibleRegistrations()
        let byKey = Dictionary(registrations.map { ($0.key, $0) }, uniquingKeysWith: { first, _ in first })
        var neededBy: [Key: [Key]] = [:]
        for r in registrations {
            for p in r.params { if let k = p.key, byKey[k] == nil { neededBy[k, default: []].append(r.key) } }
        }
        missing = neededBy.map { Missing(key: $0.key, neededBy: $0.value) }.sorted { $0.key.name < $1.key.name }
        findCycles(byKey)
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

    /// The report as an error (nil when the graph is sound): NOT_FOUND when a key
    /// is missing, else CYCLE. One problem per line.
    public var error: TetherError? {
        guard !missing.isEmpty || !cycles.isEmpty else { return nil }
        var lines = ["tether_validate: \(missing.count + cycles.count) problem(s) in the declared graph"]
        for m in missing {
            lines.append("no registration for \(m.key.quoted) (needed by \(m.neededBy.map(\.quoted).joined(separator: ", ")))")
        }
        for c in cycles {
            lines.append("dependency cycle through constructors: \(pathText(c)); break one edge with a completion callback (tether_on_complete) or a lazy dependency (TETHER_LAZY)")
        }
        return TetherError(missing.isEmpty ? .cycle : .notFound, lines.joined(separator: "\n"))
    }

    /// Graphviz DOT: nodes with key and scope; strong edges solid, weak dashed,
    /// lazy dotted (weak-lazy with a hollow head); edges seen made by completion
    /// callbacks in gray; missing keys and constructor-cycle edges in red.
    public func dot() -> String {
        var out = "digraph tether {\n  rankdir=LR;\n  node [shape=box, style=rounded, fontname=\"Helvetica\"];\n  edge [fontname=\"Helvetica\", fontsize=10];\n"
        for r in registrations {
            out += "  \(dotID(r.key)) [label=\"\(dotEscape(r.key.name))\\n(\(r.spec.scope.name))\"];\n"
        }
        for m in missing {
            out += "  \(dotID(m.key)) [label=\"\(dotEscape(m.key.name))\\n(missing)\", style=dashed, color=red, fontcolor=red];\n"
        }
        for r in registrations {
            for p in r.params {
                guard let target = p.key else { continue }
                var attributes: [String] = []
                switch p {
                case .weak: attributes.append("style=dashed")
                case .lazy: attributes.append("style=dotted")
                case .weakLazy: attributes += ["style=dotted", "arrowhead=odot"]
                default: break
                }
                if cycleEdges.contains([r.key, target]) { attributes += ["color=red", "penwidth=2"] }
                out += "  \(dotID(r.key)) -> \(dotID(target))\(attributes.isEmpty ? "" : " [\(attributes.joined(separator: ", "))]");\n"
            }
            for edge in r.observedEdges {
                let style = edge.isWeak ? "style=dashed, " : ""
                out += "  \(dotID(r.key)) -> \(dotID(edge.target)) [\(style)color=gray40, label=\"completion\"];\n"
            }
        }
        return out + "}\n"
    }

    private func dotID(_ key: Key) -> String { "\"\(dotEscape(key.name))\"" }
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
