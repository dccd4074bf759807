// Swift peers benchmark: S1-S4, ns per resolve, Swinject vs Tether's core, same process.
// Usage: swift run -c release SwiftBench [--quick] [--runs N] [--iters N]
#if canImport(Glibc)
import Glibc
#endif

var argv = CommandLine.arguments.dropFirst()
while let a = argv.popFirst() {
    switch a {
    case "--quick": settings.runs = 3; settings.minRunNs = 5e6
    case "--runs": settings.runs = Int(argv.popFirst() ?? "7") ?? 7
    case "--iters": settings.fixedIters = Int(argv.popFirst() ?? "0") ?? 0
    default:
        print("usage: SwiftBench [--quick] [--runs N] [--iters N]")
        exit(2)
    }
}

let contenders = [benchHandWritten(), benchTether(), benchSwinject()]
let scenarios = [
    ("S1", "S1 chain A(B(C)) transient"),
    ("S2", "S2 singleton hit"),
    ("S3", "S3 Parent/Child cycle, weak back-ref"),
    ("S4", "S4 12-node graph, shared leaves"),
]

print("# Swift benchmarks (release build, one process)\n")
print("CLOCK_MONOTONIC, 1 warm-up + median of \(settings.runs) runs; ns per resolve (the instance is kept until the next iteration).\n")
print("| scenario | " + contenders.map(\.name).joined(separator: " | ") + " | Swinject / Tether | target |")
print("|---|" + contenders.map { _ in "---:|" }.joined() + "---:|---|")
var notes: [String] = []
for (id, title) in scenarios {
    var line = "| \(title) |"
    for c in contenders {
        let cell = c.cells[id]
        line += " \(cell.map { fmt($0.ns) } ?? "—") |"
        if let n = cell?.note, !n.isEmpty { notes.append("\(c.name) \(id): \(n)") }
    }
    let t = contenders.first { $0.name.hasPrefix("Tether") }?.cells[id]?.ns
    let s = contenders.first { $0.name.hasPrefix("Swinject") }?.cells[id]?.ns
    var ratio = "—"
    if let t, let s, t > 0 { ratio = String(Double(Int(s / t * 10)) / 10) + "x" }
    let target = (id == "S1" || id == "S3") ? ">= 30x" + ((t != nil && s != nil && s! / t! >= 30) ? " (met)" : " (**not met**)") : "—"
    line += " \(ratio) | \(target) |"
    print(line)
}
print("\nNotes:")
for n in notes { print("- \(n)") }
