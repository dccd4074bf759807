// Swift peers benchmark: S1-S4, ns per resolve, Swinject vs Tether's core, same process.
// Usage: swift run -c release SwiftBench [--quick] [--runs N] [--iters N]
//        SwiftBench --only S3 --iters N [--contender tether|swinject|hand]   (for profiling:
//        one contender's loop of N resolves, no timing; benchmarks/c/profile.sh swift_s3_tether)
#if canImport(Glibc)
import Glibc
#endif

let contenders = ["hand": benchHandWritten, "tether": benchTether, "swinject": benchSwinject]
var contender = "tether"
var argv = CommandLine.arguments.dropFirst()
while let a = argv.popFirst() {
    switch a {
    case "--quick": settings.runs = 3; settings.minRunNs = 5e6
    case "--runs": settings.runs = Int(argv.popFirst() ?? "7") ?? 7
    case "--iters", "--iterations": settings.fixedIters = Int(argv.popFirst() ?? "0") ?? 0
    case "--only": settings.only = argv.popFirst()
    case "--contender": contender = argv.popFirst() ?? ""
    default:
        print("usage: SwiftBench [--quick] [--runs N] [--iters N] | --only S1..S4 --iters N [--contender tether|swinject|hand]")
        exit(2)
    }
}

if let only = settings.only {
    guard let bench = contenders[contender], settings.fixedIters > 0 else {
        print("--only needs --iters N > 0 and a contender among \(contenders.keys.sorted())")
        exit(2)
    }
    let result = bench()
    guard let cell = result.cells[only], cell.ns != nil else {
        print("\(result.name) \(only): \(result.cells[only]?.note ?? "no such scenario")")
        exit(1)
    }
    print("\(result.name) \(only): \(settings.fixedIters) resolves in profiledLoop")
    exit(0)
}

// Rounds, not one contender after the other: each round measures every contender once
// (one warm-up, one timed run per scenario), and the ratios are the medians of the
// per-round ratios, so a machine whose speed drifts moves all contenders alike.
let rounds = settings.runs
settings.runs = 1
let byRound = (0..<rounds).map { _ in [benchHandWritten(), benchTether(), benchSwinject()] }
let names = byRound[0].map(\.name)
let scenarios = [
    ("S1", "S1 chain A(B(C)) transient"),
    ("S2", "S2 singleton hit"),
    ("S3", "S3 Parent/Child cycle, weak back-ref"),
    ("S4", "S4 12-node graph, shared leaves"),
]

func median(_ values: [Double]) -> Double? {
    guard !values.isEmpty else { return nil }
    let v = values.sorted()
    return v.count % 2 == 1 ? v[v.count / 2] : (v[v.count / 2 - 1] + v[v.count / 2]) / 2
}
/// Contender `i`'s ns/op of scenario `id` in every round that measured it.
func times(_ i: Int, _ id: String) -> [Double] { byRound.compactMap { $0[i].cells[id]?.ns } }
/// The median over rounds of contender `a`'s time divided by contender `b`'s.
func ratio(_ a: Int, _ b: Int, _ id: String) -> Double? {
    median(byRound.compactMap { round in
        guard let x = round[a].cells[id]?.ns, let y = round[b].cells[id]?.ns, y > 0 else { return nil }
        return x / y
    })
}

print("# Swift benchmarks (release build, one process)\n")
print("CLOCK_MONOTONIC; \(rounds) rounds, each measuring every contender once (1 warm-up + 1 run); ns per resolve = median over rounds, "
      + "ratios = median of the per-round ratios (the result is kept until the next iteration). "
      + "Tether core = the TetherCore module through its Swift API (Container, Key, Param, ObjectFactory / ObjectCompletion subclasses, resolve(_:as:)), no C ABI, no libffi; "
      + "run.sh builds every module with -enforce-exclusivity=unchecked, as the shipped library is built.\n")
print("| scenario | " + names.joined(separator: " | ") + " | Swinject / Tether | Swinject / hand-written (ceiling) | target |")
print("|---|" + names.map { _ in "---:|" }.joined() + "---:|---:|---|")
let hand = names.firstIndex { $0.hasPrefix("hand-written") }!
let tether = names.firstIndex { $0.hasPrefix("Tether") }!
let swinject = names.firstIndex { $0.hasPrefix("Swinject") }!
var notes: [String] = []
for (id, title) in scenarios {
    var line = "| \(title) |"
    for i in names.indices {
        line += " \(median(times(i, id)).map { fmt($0) } ?? "FAIL") |"
        if let n = byRound[0][i].cells[id]?.note, !n.isEmpty { notes.append("\(names[i]) \(id): \(n)") }
    }
    let r = ratio(swinject, tether, id), ceiling = ratio(swinject, hand, id)
    let shown = { (x: Double?) in x.map { String(Double(Int($0 * 10)) / 10) + "x" } ?? "—" }
    let target = (id == "S1" || id == "S3") ? ">= 30x" + ((r ?? 0) >= 30 ? " (met)" : " (**not met**)") : "—"
    line += " \(shown(r)) | \(shown(ceiling)) | \(target) |"
    print(line)
}
print("\nThe ceiling column is how much faster than Swinject hand-written Swift is: no container can exceed it.")
print("\nNotes:")
for n in notes { print("- \(n)") }
