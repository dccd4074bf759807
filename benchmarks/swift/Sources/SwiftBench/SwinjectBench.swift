// S1-S4 with Swinject 2.10.0, written the way its documentation says.
import Swinject

func benchSwinject() -> Contender {
    var out = Contender(name: "Swinject 2.10.0")

    // S1: transient chain
    do {
        let c = Container()
        c.register(C.self) { _ in C() }.inObjectScope(.transient)
        c.register(B.self) { r in B(c: r.resolve(C.self)!) }.inObjectScope(.transient)
        c.register(A.self) { r in A(b: r.resolve(B.self)!) }.inObjectScope(.transient)
        do {
            try checkS1(c.resolve(A.self))
            out.cells["S1"] = Cell(ns: measure("S1") { n in for _ in 0..<n { consume(c.resolve(A.self)) } })
        } catch { out.cells["S1"] = Cell(ns: nil, note: "\(error)") }
    }

    // S2: singleton hit (container scope)
    do {
        let c = Container()
        c.register(Config.self) { _ in Config() }.inObjectScope(.container)
        let first = c.resolve(Config.self)
        if first == nil || first !== c.resolve(Config.self) {
            out.cells["S2"] = Cell(ns: nil, note: "singleton not shared")
        } else {
            out.cells["S2"] = Cell(ns: measure("S2") { n in for _ in 0..<n { consume(c.resolve(Config.self)) } })
        }
    }

    // S3: Parent/Child cycle, graph scope, weak back-reference patched by initCompleted
    // (Swinject's documented circular-dependency recipe).
    do {
        let c = Container()
        c.register(Parent.self) { r in
            parentFactoryCalls += 1
            return Parent(child: r.resolve(Child.self)!)
        }
        c.register(Child.self) { _ in
            childFactoryCalls += 1
            return Child()
        }.initCompleted { r, child in child.parent = r.resolve(Parent.self) }
        parentFactoryCalls = 0; childFactoryCalls = 0
        let p = c.resolve(Parent.self)
        let calls = (parentFactoryCalls, childFactoryCalls)
        do {
            try checkS3(p)
            var cell = Cell(ns: measure("S3") { n in for _ in 0..<n { consume(c.resolve(Parent.self)) } })
            cell.note = "initCompleted; factories per resolve: Parent \(calls.0), Child \(calls.1)"
            out.cells["S3"] = cell
        } catch {
            // Swinject's documented hook on the child side re-enters Parent's factory, so the
            // back-reference may point at a second Parent: measure anyway and say so.
            var cell = Cell(ns: measure("S3") { n in for _ in 0..<n { consume(c.resolve(Parent.self)) } })
            cell.note = "\(error); factories per resolve: Parent \(calls.0), Child \(calls.1)"
            out.cells["S3"] = cell
        }
    }

    // S4: 12-node layered graph, graph scope (Swinject's default: one instance per resolve)
    do {
        let c = Container()
        c.register(Log.self) { _ in Log() }
        c.register(Cfg.self) { _ in Cfg() }
        c.register(Pool.self) { _ in Pool() }
        c.register(Clock.self) { _ in Clock() }
        c.register(Repo1.self) { r in Repo1(log: r.resolve(Log.self)!, cfg: r.resolve(Cfg.self)!) }
        c.register(Repo2.self) { r in Repo2(log: r.resolve(Log.self)!, pool: r.resolve(Pool.self)!) }
        c.register(Repo3.self) { r in Repo3(cfg: r.resolve(Cfg.self)!, clock: r.resolve(Clock.self)!, log: r.resolve(Log.self)!) }
        c.register(Repo4.self) { r in Repo4(pool: r.resolve(Pool.self)!, clock: r.resolve(Clock.self)!) }
        c.register(Svc1.self) { r in Svc1(r1: r.resolve(Repo1.self)!, r2: r.resolve(Repo2.self)!) }
        c.register(Svc2.self) { r in Svc2(r2: r.resolve(Repo2.self)!, r3: r.resolve(Repo3.self)!) }
        c.register(Svc3.self) { r in Svc3(r3: r.resolve(Repo3.self)!, r4: r.resolve(Repo4.self)!) }
        c.register(App.self) { r in App(s1: r.resolve(Svc1.self)!, s2: r.resolve(Svc2.self)!, s3: r.resolve(Svc3.self)!) }
        do {
            try checkS4(c.resolve(App.self))
            out.cells["S4"] = Cell(ns: measure("S4") { n in for _ in 0..<n { consume(c.resolve(App.self)) } })
        } catch { out.cells["S4"] = Cell(ns: nil, note: "\(error)") }
    }
    return out
}

/// The same constructions written by hand in Swift (ARC objects).
func benchHandWritten() -> Contender {
    var out = Contender(name: "hand-written Swift")
    @inline(never) func s1() -> A { A(b: B(c: C())) }
    let config = Config()
    @inline(never) func s2() -> Config { config }
    @inline(never) func s3() -> Parent {
        let p = Parent(child: Child())
        p.child.parent = p
        return p
    }
    @inline(never) func s4() -> App {
        let log = Log(), cfg = Cfg(), pool = Pool(), clock = Clock()
        let r2 = Repo2(log: log, pool: pool), r3 = Repo3(cfg: cfg, clock: clock, log: log)
        return App(s1: Svc1(r1: Repo1(log: log, cfg: cfg), r2: r2), s2: Svc2(r2: r2, r3: r3),
                   s3: Svc3(r3: r3, r4: Repo4(pool: pool, clock: clock)))
    }
    out.cells["S1"] = Cell(ns: measure("S1") { n in for _ in 0..<n { consume(s1()) } })
    out.cells["S2"] = Cell(ns: measure("S2") { n in for _ in 0..<n { consume(s2()) } })
    out.cells["S3"] = Cell(ns: measure("S3") { n in for _ in 0..<n { consume(s3()) } }, note: "weak var back-reference")
    out.cells["S4"] = Cell(ns: measure("S4") { n in for _ in 0..<n { consume(s4()) } })
    return out
}
