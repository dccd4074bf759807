"""Python benchmarks (issue 5): S1-S4 for tether vs the Python DI containers, one run.

Scenarios (the same as the C and Swift benchmarks, with Python objects):
  S1  transient chain A(B(C)): a new A, B and C per resolve
  S2  singleton hit: the cached instance
  S3  the seed cycle: Parent(child) + Child.parent as a weak back-reference to the same Parent,
      closed by the container (tether: completion callback with r.weak("Parent"))
  S4  a 12-node layered graph with shared leaves: one instance of each node per resolve
      App(Svc1, Svc2, Svc3); Svc1(Repo1, Repo2) Svc2(Repo2, Repo3) Svc3(Repo3, Repo4);
      Repo1(Log, Cfg) Repo2(Log, Pool) Repo3(Cfg, Clock, Log) Repo4(Pool, Clock)

Contenders: tether (bindings/python over libtether.so, found through $TETHER_LIBRARY), the
hand-built Python baseline, dependency-injector, injector, punq, lagom, dishka, wireup.
Peers without cycle support get "n/a (no cycle support)" for S3 and, as a separate labelled
figure, the closest thing they can do: resolve Parent, then set child.parent = weakref.ref(parent)
by hand. Peers without a per-resolve scope build S4 transiently (leaves are not shared: 24
objects instead of 12), labelled as such.

Method: time.perf_counter_ns around a loop of n calls (n calibrated so a repeat lasts >= 0.1 s),
garbage collector off during the loop (as timeit does), median of 5 repeats after a warm-up.
Every contender's result is checked for the right shape before it is timed.

Usage: python bench.py [--quick] [--only tether,baseline,...] [--markdown FILE]
"""


import argparse
import gc
import importlib.metadata
import os
import platform
import statistics
import sys
import time
import traceback
import weakref
from typing import Any, Callable

# -- the object model ------------------------------------------------------------------------
# This module does not use `from __future__ import annotations`: the annotations below are the
# classes themselves, so every autowiring peer reads them the same way.


class C:
    def __init__(self) -> None:
        self.v = 1


class B:
    def __init__(self, c: C) -> None:
        self.c = c


class A:
    def __init__(self, b: B) -> None:
        self.b = b


class Config:
    def __init__(self) -> None:
        self.v = 2


class Child:
    def __init__(self) -> None:
        self.parent: Any = None


class Parent:
    def __init__(self, child: Child) -> None:
        self.child = child


class Log:
    def __init__(self) -> None:
        self.v = 3


class Cfg:
    def __init__(self) -> None:
        self.v = 4


class Pool:
    def __init__(self) -> None:
        self.v = 5


class Clock:
    def __init__(self) -> None:
        self.v = 6


class Repo1:
    def __init__(self, log: Log, cfg: Cfg) -> None:
        self.log, self.cfg = log, cfg


class Repo2:
    def __init__(self, log: Log, pool: Pool) -> None:
        self.log, self.pool = log, pool


class Repo3:
    def __init__(self, cfg: Cfg, clock: Clock, log: Log) -> None:
        self.cfg, self.clock, self.log = cfg, clock, log


class Repo4:
    def __init__(self, pool: Pool, clock: Clock) -> None:
        self.pool, self.clock = pool, clock


class Svc1:
    def __init__(self, r1: Repo1, r2: Repo2) -> None:
        self.r1, self.r2 = r1, r2


class Svc2:
    def __init__(self, r2: Repo2, r3: Repo3) -> None:
        self.r2, self.r3 = r2, r3


class Svc3:
    def __init__(self, r3: Repo3, r4: Repo4) -> None:
        self.r3, self.r4 = r3, r4


class App:
    def __init__(self, s1: Svc1, s2: Svc2, s3: Svc3) -> None:
        self.s1, self.s2, self.s3 = s1, s2, s3


S4_GRAPH = {  # key -> dependencies, in constructor order
    "Log": [], "Cfg": [], "Pool": [], "Clock": [],
    "Repo1": ["Log", "Cfg"], "Repo2": ["Log", "Pool"], "Repo3": ["Cfg", "Clock", "Log"], "Repo4": ["Pool", "Clock"],
    "Svc1": ["Repo1", "Repo2"], "Svc2": ["Repo2", "Repo3"], "Svc3": ["Repo3", "Repo4"],
    "App": ["Svc1", "Svc2", "Svc3"],
}
S4_CLASSES = {cls.__name__: cls for cls in (Log, Cfg, Pool, Clock, Repo1, Repo2, Repo3, Repo4, Svc1, Svc2, Svc3, App)}


# -- shape checks ----------------------------------------------------------------------------


def check_s1(a: Any) -> None:
    assert isinstance(a, A) and isinstance(a.b, B) and isinstance(a.b.c, C), a


def check_s3(p: Any) -> None:
    assert isinstance(p, Parent) and isinstance(p.child, Child), p
    back = p.child.parent
    assert back is not None and back() is p, "back-reference does not lead to the same Parent"


def s4_shared(app: Any) -> bool:
    """True when every node is one instance per resolve (12 objects), False when none is shared."""
    assert isinstance(app, App)
    r2a, r2b = app.s1.r2, app.s2.r2
    r3a, r3b = app.s2.r3, app.s3.r3
    links = [r2a is r2b, r3a is r3b, app.s1.r1.log is r2a.log, r2a.log is r3a.log,
             app.s1.r1.cfg is r3a.cfg, r2a.pool is app.s3.r4.pool, r3a.clock is app.s3.r4.clock]
    assert all(links) or not any(links), f"S4: partly shared graph {links}"
    return all(links)


def s3_patch(p: Parent) -> Parent:
    """The closest thing for containers without cycle support: patch the back-reference by hand."""
    p.child.parent = weakref.ref(p)
    return p


# -- contenders ------------------------------------------------------------------------------
# Each returns {scenario: (op, note)}; op() performs one resolve and returns the result; an
# entry of (None, note) means "not applicable" and is printed as note.

NA_CYCLE = "n/a (no cycle support)"
TRANSIENT_S4 = "transient: no per-resolve scope, leaves not shared (24 objects)"


def contender_baseline() -> dict[str, Any]:
    config = Config()

    def s3() -> Parent:
        p = Parent(Child())
        p.child.parent = weakref.ref(p)
        return p

    def s4() -> App:
        log, cfg, pool, clock = Log(), Cfg(), Pool(), Clock()
        r2, r3 = Repo2(log, pool), Repo3(cfg, clock, log)
        return App(Svc1(Repo1(log, cfg), r2), Svc2(r2, r3), Svc3(r3, Repo4(pool, clock)))

    return {
        "S1": (lambda: A(B(C())), ""),
        "S2": (lambda: config, "module-level object"),
        "S3": (s3, "weakref.ref back-reference"),
        "S4": (s4, ""),
    }


def contender_tether() -> dict[str, Any]:
    import tether
    from tether import Scope

    c1 = tether.Container()
    c1.register("C", C, deps=[], scope=Scope.TRANSIENT)
    c1.register("B", B, deps=["C"], scope=Scope.TRANSIENT)
    c1.register("A", A, deps=["B"], scope=Scope.TRANSIENT)

    c2 = tether.Container()
    c2.register("Config", Config, deps=[], scope=Scope.SINGLETON)

    def link(child: Child, parent: Any) -> None:
        child.parent = parent

    c3 = tether.Container()  # the back-reference declared: a weak target, so the graph is replayed in Python
    c3.register("Child", Child, deps=[], on_complete=tether.complete(link, deps=[tether.weak("Parent")]))
    c3.register("Parent", Parent, deps=["Child"])

    c3r = tether.Container()  # the same through a resolver: every resolve goes through the library
    c3r.register("Child", Child, deps=[], on_complete=lambda r, child: setattr(child, "parent", r.weak("Parent")))
    c3r.register("Parent", Parent, deps=["Child"])

    c4 = tether.Container()
    for key, deps in S4_GRAPH.items():
        c4.register(key, S4_CLASSES[key], deps=deps)  # GRAPH scope: one of each per resolve

    keep = (c1, c2, c3, c3r, c4)  # noqa: F841 (containers live as long as the closures)
    r1, r2, r3, r3r, r4 = c1.resolve, c2.resolve, c3.resolve, c3r.resolve, c4.resolve
    return {
        "S1": (lambda: r1("A"), ""),
        "S2": (lambda: r2("Config"), ""),
        "S3": (lambda: r3("Parent"), "completion callback with a declared weak target (tether.complete), replayed in Python"),
        "S3r": (lambda: r3r("Parent"), "completion callback with a resolver (r.weak), through the library"),
        "S4": (lambda: r4("App"), "graph scope"),
        "_keep": keep,
    }


def contender_dependency_injector() -> dict[str, Any]:
    from dependency_injector import providers

    c = providers.Factory(C)
    b = providers.Factory(B, c=c)
    a = providers.Factory(A, b=b)
    config = providers.Singleton(Config)
    child = providers.Factory(Child)
    parent = providers.Factory(Parent, child=child)

    f = {k: None for k in S4_GRAPH}
    for key in ["Log", "Cfg", "Pool", "Clock", "Repo1", "Repo2", "Repo3", "Repo4", "Svc1", "Svc2", "Svc3", "App"]:
        f[key] = providers.Factory(S4_CLASSES[key], *[f[d] for d in S4_GRAPH[key]])
    app = f["App"]
    return {
        "S1": (a, ""),
        "S2": (config, ""),
        "S3": (None, NA_CYCLE),
        "S3~": (lambda: s3_patch(parent()), "manual setattr after resolve"),
        "S4": (app, TRANSIENT_S4),
    }


def contender_injector() -> dict[str, Any]:
    import injector
    from injector import Injector, Module, provider, singleton

    class M(Module):
        @provider
        def c(self) -> C:
            return C()

        @provider
        def b(self, c: C) -> B:
            return B(c)

        @provider
        def a(self, b: B) -> A:
            return A(b)

        @singleton
        @provider
        def config(self) -> Config:
            return Config()

        @provider
        def child(self) -> Child:
            return Child()

        @provider
        def parent(self, child: Child) -> Parent:
            return Parent(child)

    class M4(Module):
        def configure(self, binder: injector.Binder) -> None:
            for key in S4_GRAPH:
                cls = S4_CLASSES[key]
                binder.bind(cls, to=injector.inject(cls))  # autowired from __init__ hints, no scope

    inj = Injector([M()])
    inj4 = Injector([M4()])
    get = inj.get
    return {
        "S1": (lambda: get(A), ""),
        "S2": (lambda: get(Config), ""),
        "S3": (None, NA_CYCLE),
        "S3~": (lambda: s3_patch(get(Parent)), "manual setattr after resolve"),
        "S4": (lambda: inj4.get(App), TRANSIENT_S4),
    }


def contender_punq() -> dict[str, Any]:
    import punq

    c = punq.Container()
    for cls in (A, B, C, Child, Parent):
        c.register(cls)
    c.register(Config, scope=punq.Scope.singleton)
    c4 = punq.Container()
    for key in S4_GRAPH:
        c4.register(S4_CLASSES[key])
    res = c.resolve
    return {
        "S1": (lambda: res(A), ""),
        "S2": (lambda: res(Config), ""),
        "S3": (None, NA_CYCLE),
        "S3~": (lambda: s3_patch(res(Parent)), "manual setattr after resolve"),
        "S4": (lambda: c4.resolve(App), TRANSIENT_S4),
    }


def contender_lagom() -> dict[str, Any]:
    from lagom import Container, Singleton

    c = Container()
    c[Config] = Singleton(Config)
    res = c.resolve
    return {
        "S1": (lambda: res(A), "autowired"),
        "S2": (lambda: res(Config), ""),
        "S3": (None, NA_CYCLE),
        "S3~": (lambda: s3_patch(res(Parent)), "manual setattr after resolve"),
        "S4": (lambda: res(App), TRANSIENT_S4),
    }


def contender_dishka() -> dict[str, Any]:
    from dishka import Provider, Scope, make_container, provide

    class P(Provider):
        c = provide(C, scope=Scope.APP, cache=False)
        b = provide(B, scope=Scope.APP, cache=False)
        a = provide(A, scope=Scope.APP, cache=False)
        config = provide(Config, scope=Scope.APP)
        child = provide(Child, scope=Scope.APP, cache=False)
        parent = provide(Parent, scope=Scope.APP, cache=False)

    p4 = Provider(scope=Scope.REQUEST)
    for key in S4_GRAPH:
        p4.provide(S4_CLASSES[key])  # REQUEST scope, cached per request: one of each per scope

    container = make_container(P())
    container4 = make_container(p4)
    get = container.get

    def s4() -> App:
        with container4() as request:
            return request.get(App)

    return {
        "S1": (lambda: get(A), "APP scope, cache=False"),
        "S2": (lambda: get(Config), ""),
        "S3": (None, NA_CYCLE),
        "S3~": (lambda: s3_patch(get(Parent)), "manual setattr after resolve"),
        "S4": (s4, "REQUEST scope entered per resolve"),
        "_keep": (container, container4),
    }


def contender_wireup() -> dict[str, Any]:
    import wireup
    from wireup import injectable

    # Factories (not the shared classes) carry wireup's registration, one set per lifetime.
    @injectable(lifetime="transient")
    def make_c() -> C:
        return C()

    @injectable(lifetime="transient")
    def make_b(c: C) -> B:
        return B(c)

    @injectable(lifetime="transient")
    def make_a(b: B) -> A:
        return A(b)

    @injectable(lifetime="singleton")
    def make_config() -> Config:
        return Config()

    @injectable(lifetime="transient")
    def make_child() -> Child:
        return Child()

    @injectable(lifetime="transient")
    def make_parent(child: Child) -> Parent:
        return Parent(child)

    container = wireup.create_sync_container(
        injectables=[make_c, make_b, make_a, make_config, make_child, make_parent])
    # wireup resolves transient injectables only inside a scope: enter one, once, and resolve
    # from it (its cheapest path; a transient is new on every get all the same).
    scope_cm = container.enter_scope()
    scope = scope_cm.__enter__()

    s4_factories = []
    for key in S4_GRAPH:
        cls = S4_CLASSES[key]

        def factory(*args: Any, _cls: type = cls, **kwargs: Any) -> Any:
            return _cls(*args, **kwargs)

        # wireup reads the factory's signature: give it the class's parameters and return type
        import inspect
        sig = inspect.signature(cls.__init__)
        params = [p.replace(kind=inspect.Parameter.POSITIONAL_OR_KEYWORD) for p in list(sig.parameters.values())[1:]]
        factory.__signature__ = inspect.Signature(params, return_annotation=cls)  # type: ignore[attr-defined]
        factory.__annotations__ = {p.name: p.annotation for p in params} | {"return": cls}
        s4_factories.append(injectable(lifetime="scoped")(factory))
    container4 = wireup.create_sync_container(injectables=s4_factories)
    get, get_root = scope.get, container.get

    def s4() -> App:
        with container4.enter_scope() as scoped:
            return scoped.get(App)

    return {
        "S1": (lambda: get(A), "transient, from one long-lived scope"),
        "S2": (lambda: get_root(Config), ""),
        "S3": (None, NA_CYCLE),
        "S3~": (lambda: s3_patch(get(Parent)), "manual setattr after resolve"),
        "S4": (s4, "scoped lifetime, scope entered per resolve"),
        "_keep": (container, container4, scope_cm),
    }


CONTENDERS: list[tuple[str, str | None, Callable[[], dict[str, Any]]]] = [
    ("tether", None, contender_tether),
    ("hand-built Python", None, contender_baseline),
    ("dependency-injector", "dependency-injector", contender_dependency_injector),
    ("injector", "injector", contender_injector),
    ("punq", "punq", contender_punq),
    ("lagom", "lagom", contender_lagom),
    ("dishka", "dishka", contender_dishka),
    ("wireup", "wireup", contender_wireup),
]

# -- timing ----------------------------------------------------------------------------------

MIN_REPEAT_NS = 100_000_000
REPEATS = 5


def _run(op: Callable[[], Any], n: int) -> int:
    """ns for n calls of op(), gc off."""
    gc_was = gc.isenabled()
    gc.disable()
    try:
        t0 = time.perf_counter_ns()
        for _ in range(n):
            op()
        return time.perf_counter_ns() - t0
    finally:
        if gc_was:
            gc.enable()


def _calibrate(op: Callable[[], Any]) -> int:
    """Calls of op() that last >= MIN_REPEAT_NS."""
    n = 1
    while True:
        dt = _run(op, n)
        if dt >= MIN_REPEAT_NS // 5 or n >= 1 << 24:
            break
        n *= 4
    return max(1, int(n * MIN_REPEAT_NS / max(dt, 1)))


def time_ops(ops: dict[tuple[str, str], Callable[[], Any]]) -> tuple[dict[tuple[str, str], list[float]], dict[tuple[str, str], str]]:
    """REPEATS samples (ns per call) of every op: each calibrated and warmed up, then repeat r of
    every op in turn, so a machine whose speed drifts during the run moves every contender alike.
    Also the ops that raised, with the error."""
    counts: dict[tuple[str, str], int] = {}
    failed: dict[tuple[str, str], str] = {}
    for key, op in ops.items():
        try:
            counts[key] = _calibrate(op)
            _run(op, counts[key])  # warm-up
        except Exception as e:  # noqa: BLE001
            traceback.print_exc()
            failed[key] = f"FAIL ({type(e).__name__})"
    samples: dict[tuple[str, str], list[float]] = {key: [] for key in counts}
    for _ in range(REPEATS):
        for key, n in counts.items():
            if key in failed:
                continue
            try:
                samples[key].append(_run(ops[key], n) / n)
            except Exception as e:  # noqa: BLE001
                traceback.print_exc()
                failed[key] = f"FAIL ({type(e).__name__})"
            gc.collect()
    return {key: v for key, v in samples.items() if key not in failed}, failed


def ratio(samples: dict[tuple[str, str], list[float]], peer: tuple[str, str], ours: tuple[str, str]) -> float | None:
    """The median of the per-repeat ratios peer / ours (the repeats were interleaved)."""
    if peer not in samples or ours not in samples:
        return None
    return statistics.median(p / o for p, o in zip(samples[peer], samples[ours]))


def fmt(ns: float) -> str:
    if ns >= 10_000:
        return f"{ns / 1000:,.0f} µs"
    if ns >= 1000:
        return f"{ns / 1000:.2f} µs"
    return f"{ns:.0f} ns"


CHECKS = {
    "S1": check_s1,
    "S2": lambda x: isinstance(x, Config),
    "S3": check_s3,
    "S3r": check_s3,
    "S3~": check_s3,
}


def check(name: str, scen: str, op: Callable[[], Any], note: str) -> str:
    """Checks the result's shape; returns the note (S4: says whether nodes were shared)."""
    r1, r2 = op(), op()
    if scen == "S4":
        shared = s4_shared(r1)
        assert r1 is not r2
        if note.startswith("transient") and shared:
            return "shared per resolve (the container's own resolution context)"
        if not note.startswith("transient") and not shared:
            raise AssertionError(f"{name}: S4 nodes not shared although the scope should share them")
    elif scen == "S2":
        assert isinstance(r1, Config) and r1 is r2, f"{name}: singleton not shared"
    else:
        CHECKS[scen](r1)
        assert r1 is not r2, f"{name}: {scen} returned the same instance twice"
    return note


def main() -> int:
    global MIN_REPEAT_NS, REPEATS
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="0.02 s repeats, 3 repeats")
    ap.add_argument("--only", help="comma-separated contender names")
    ap.add_argument("--markdown", help="also write the table to this file")
    args = ap.parse_args()
    if args.quick:
        MIN_REPEAT_NS, REPEATS = 20_000_000, 3

    results: dict[str, dict[str, str]] = {}
    numbers: dict[str, dict[str, float]] = {}
    notes: list[str] = []
    versions: list[str] = []
    ops: dict[tuple[str, str], Callable[[], Any]] = {}
    notes_of: dict[tuple[str, str], str] = {}
    keep: list[Any] = []
    for name, dist, make in CONTENDERS:
        if args.only and name.split()[0] not in args.only.split(","):
            continue
        row: dict[str, str] = {}
        nums: dict[str, float] = {}
        results[name], numbers[name] = row, nums
        try:
            if dist:
                versions.append(f"{name} {importlib.metadata.version(dist)}")
            elif name == "tether":
                import tether
                versions.append(f"tether {tether.library_version()} ({tether.library_path()})")
            scenarios = make()
        except Exception as e:  # noqa: BLE001
            traceback.print_exc()
            for s in ("S1", "S2", "S3", "S4"):
                row[s] = f"FAIL ({type(e).__name__})"
            continue
        for scen in ("S1", "S2", "S3", "S3r", "S3~", "S4"):
            if scen not in scenarios:
                continue
            op, note = scenarios[scen]
            if op is None:
                row[scen] = note
                continue
            try:
                notes_of[(name, scen)] = check(name, scen, op, note)
            except Exception as e:  # noqa: BLE001
                print(f"{name} {scen}: {type(e).__name__}: {e}", file=sys.stderr)
                traceback.print_exc()
                row[scen] = f"FAIL ({type(e).__name__})"
                continue
            ops[(name, scen)] = op
        keep.append(scenarios)  # the contender's objects live until every op is timed

    samples, failed = time_ops(ops)
    for (name, scen), error in failed.items():
        results[name][scen] = error
    for (name, scen), values in samples.items():
        ns = statistics.median(values)
        note = notes_of[(name, scen)]
        numbers[name][scen] = ns
        results[name][scen] = fmt(ns)
        if note and scen != "S3~":
            notes.append(f"{name} {scen}: {note}")
        print(f"  {name:20s} {scen:4s} {fmt(ns):>10s}  {note}", file=sys.stderr, flush=True)

    # merge the resolver-form and closest-thing S3 figures into the S3 cell
    for name, row in results.items():
        if "S3r" in row:
            row["S3"] = f"{row.get('S3', '—')}; resolver form: {row['S3r']}"
        if "S3~" in row:
            row["S3"] = f"{row.get('S3', NA_CYCLE)}; closest: {row['S3~']} (manual setattr after resolve)"

    lines = []
    lines.append(f"Python {platform.python_version()} ({sys.executable}); {', '.join(versions)}")
    lines.append("")
    lines.append(f"Per resolve, median of {REPEATS} repeats of >= {MIN_REPEAT_NS / 1e9:.2f} s each, gc off during loops "
                 "(one process, one run; repeat r of every contender's every scenario in turn). Lower is better.")
    lines.append("")
    lines.append("| contender | S1 chain A(B(C)) transient | S2 singleton hit | S3 Parent/Child cycle, weak back-ref | S4 12-node graph, shared leaves |")
    lines.append("|---|---:|---:|---|---:|")
    for name, row in results.items():
        lines.append(f"| {name} | {row.get('S1', '—')} | {row.get('S2', '—')} | {row.get('S3', '—')} | {row.get('S4', '—')} |")
    lines.append("")
    lines.append("Notes: " + "; ".join(notes) + ".")

    t = numbers.get("tether", {})
    if t:
        lines.append("")
        lines.append("Targets (issue 5): tether S1 and S3 faster than dependency-injector, dishka and wireup; "
                     ">= 20x faster than injector and punq. For peers without cycle support S3 compares with their "
                     "closest thing (resolve + manual setattr).")
        lines.append("")
        lines.append("Ratios: the median of the per-repeat ratios.")
        lines.append("")
        lines.append("| peer | S1 peer/tether | S3 peer/tether | target | met |")
        lines.append("|---|---:|---:|---|---|")
        for peer, need in (("dependency-injector", 1.0), ("dishka", 1.0), ("wireup", 1.0),
                           ("injector", 20.0), ("punq", 20.0), ("lagom", None)):
            p = numbers.get(peer)
            if not p:
                continue
            r1 = ratio(samples, (peer, "S1"), ("tether", "S1"))
            r3 = ratio(samples, (peer, "S3~"), ("tether", "S3"))
            fr = lambda r: f"{r:.2f}x" if r is not None else "—"  # noqa: E731
            if need is None:
                target, met = "—", "—"
            else:
                target = "tether faster" if need == 1.0 else ">= 20x"
                ok = r1 is not None and r3 is not None and r1 > need and r3 > need
                met = "yes" if ok else "**no**"
            lines.append(f"| {peer} | {fr(r1)} | {fr(r3)} | {target} | {met} |")

    text = "\n".join(lines)
    print(text)
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
