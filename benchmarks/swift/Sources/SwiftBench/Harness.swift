// Timing harness and the object model shared by every contender.
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

// MARK: timing

@inline(__always) func nowNs() -> UInt64 {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return UInt64(ts.tv_sec) &* 1_000_000_000 &+ UInt64(ts.tv_nsec)
}

/// Defeats dead-code elimination: every op stores its result here.
nonisolated(unsafe) var sink: AnyObject?
@inline(never) func consume(_ x: AnyObject?) { sink = x }

struct Settings {
    var runs = 7
    var minRunNs: Double = 20e6
    var fixedIters = 0
    /// Profiling (`--only`): run only this scenario's loop, once, with `fixedIters` ops.
    var only: String?
}
nonisolated(unsafe) var settings = Settings()

/// Median ns per op of scenario `id` over `settings.runs` runs of a loop of `iters` ops
/// (calibrated so a run lasts >= minRunNs) after one warm-up run. Profiling
/// (`settings.only`): that scenario's loop runs once, inside `profiledLoop`; the others not at all.
func measure(_ id: String, _ body: (Int) -> Void) -> Double? {
    if let only = settings.only {
        guard only == id else { return nil }
        profiledLoop(settings.fixedIters, body)
        return 0
    }
    var iters = settings.fixedIters
    if iters == 0 {
        iters = 16
        while true {
            let t0 = nowNs()
            body(iters)
            let dt = Double(nowNs() - t0)
            if dt >= settings.minRunNs / 4 || iters > (1 << 30) {
                iters = max(1, Int(settings.minRunNs / max(dt / Double(iters), 0.01)))
                break
            }
            iters *= 4
        }
    }
    body(iters) // warm-up
    var v: [Double] = []
    for _ in 0..<settings.runs {
        let t0 = nowNs()
        body(iters)
        v.append(Double(nowNs() - t0) / Double(iters))
    }
    v.sort()
    return v.count % 2 == 1 ? v[v.count / 2] : (v[v.count / 2 - 1] + v[v.count / 2]) / 2
}

/// The only code a profile counts (benchmarks/c/profile.sh: callgrind's --toggle-collect).
@inline(never) func profiledLoop(_ iters: Int, _ body: (Int) -> Void) { body(iters) }

// MARK: the object model (S1-S4)

final class C { var v = 1 }
final class B { let c: C; init(c: C) { self.c = c } }
final class A { let b: B; init(b: B) { self.b = b } }

final class Config { var v = 2 }

final class Child { weak var parent: Parent?; var v = 5 }
final class Parent { let child: Child; init(child: Child) { self.child = child } }

final class Log { var v = 3 }
final class Cfg { var v = 4 }
final class Pool { var v = 5 }
final class Clock { var v = 6 }
final class Repo1 { let log: Log, cfg: Cfg; init(log: Log, cfg: Cfg) { self.log = log; self.cfg = cfg } }
final class Repo2 { let log: Log, pool: Pool; init(log: Log, pool: Pool) { self.log = log; self.pool = pool } }
final class Repo3 {
    let cfg: Cfg, clock: Clock, log: Log
    init(cfg: Cfg, clock: Clock, log: Log) { self.cfg = cfg; self.clock = clock; self.log = log }
}
final class Repo4 { let pool: Pool, clock: Clock; init(pool: Pool, clock: Clock) { self.pool = pool; self.clock = clock } }
final class Svc1 { let r1: Repo1, r2: Repo2; init(r1: Repo1, r2: Repo2) { self.r1 = r1; self.r2 = r2 } }
final class Svc2 { let r2: Repo2, r3: Repo3; init(r2: Repo2, r3: Repo3) { self.r2 = r2; self.r3 = r3 } }
final class Svc3 { let r3: Repo3, r4: Repo4; init(r3: Repo3, r4: Repo4) { self.r3 = r3; self.r4 = r4 } }
final class App { let s1: Svc1, s2: Svc2, s3: Svc3; init(s1: Svc1, s2: Svc2, s3: Svc3) { self.s1 = s1; self.s2 = s2; self.s3 = s3 } }

/// Factory call counters, to show which container runs a factory more than once per resolve.
nonisolated(unsafe) var parentFactoryCalls = 0
nonisolated(unsafe) var childFactoryCalls = 0

// MARK: shape checks

struct CheckFailure: Error, CustomStringConvertible { let description: String }

func checkS1(_ a: A?) throws {
    guard let a else { throw CheckFailure(description: "S1: nil") }
    _ = a.b.c.v
}

func checkS3(_ p: Parent?) throws {
    guard let p else { throw CheckFailure(description: "S3: nil") }
    guard p.child.parent === p else { throw CheckFailure(description: "S3: the child's back-reference is not the same Parent") }
}

func checkS4(_ app: App?) throws {
    guard let app else { throw CheckFailure(description: "S4: nil") }
    let shared = app.s1.r2 === app.s2.r2 && app.s2.r3 === app.s3.r3 && app.s1.r1.log === app.s1.r2.log
        && app.s1.r2.log === app.s2.r3.log && app.s1.r1.cfg === app.s2.r3.cfg && app.s1.r2.pool === app.s3.r4.pool
        && app.s2.r3.clock === app.s3.r4.clock
    guard shared else { throw CheckFailure(description: "S4: nodes are not shared within one resolve") }
}

// MARK: results

struct Cell { var ns: Double?; var note: String = "" }

struct Contender {
    var name: String
    var cells: [String: Cell] = [:]
}

func fmt(_ ns: Double?) -> String {
    guard let ns else { return "FAIL" }
    if ns >= 10_000 { return String(Int((ns / 1000).rounded())) + " µs" }
    if ns >= 1000 { return String(Int(ns.rounded())) + " ns" }
    return String(Double(Int(ns * 10)) / 10) + " ns"
}
