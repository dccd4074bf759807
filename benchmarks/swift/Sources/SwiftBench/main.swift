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
print("CLOCK_MONOTONIC, 1 warm-up + median of \(settings.runs) runs; ns per resolve (the result is kept until the next iteration). "
      + "Tether core = the TetherCore module through its Swift API (Container/Key/Param/Factory/Completion), no C ABI, no libffi; "
      + "run.sh builds every module with -enforce-exclusivity=unchecked, as the shipped library is built.\n")
print("| scenario | " + contenders.map(\.name).joined(separator: " | ") + " | Swinject / Tether | Swinject / hand-written (ceiling) | target |")
print("|---|" + contenders.map { _ in "---:|" }.joined() + "---:|---:|---|")
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
    let h = contenders.first { $0.name.hasPrefix("hand-written") }?.cells[id]?.ns
    var ratio = "—", ceiling = "—"
    if let t, let s, t > 0 { ratio = String(Double(Int(s / t * 10)) / 10) + "x" }
    if let h, let s, h > 0 { ceiling = String(Double(Int(s / h * 10)) / 10) + "x" }
    let target = (id == "S1" || id == "S3") ? ">= 30x" + ((t != nil && s != nil && s! / t! >= 30) ? " (met)" : " (**not met**)") : "—"
    line += " \(ratio) | \(ceiling) | \(target) |"
    print(line)
}
print("\nThe ceiling column is how much faster than Swinject hand-written Swift is: no container can exceed it.")
print("\nNotes:")
for n in notes { print("- \(n)") }
