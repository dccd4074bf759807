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


# the shape matrix (issue 15): a service graph over cached singletons, a request, runtime arguments


class Settings:
    def __init__(self) -> None:
        self.v = 7


class Db:
    def __init__(self) -> None:
        self.v = 8


class Cache:
    def __init__(self) -> None:
        self.v = 9


class Repo:
    def __init__(self, db: Db, cache: Cache) -> None:
        self.db, self.cache = db, cache


class Mailer:
    def __init__(self, settings: Settings) -> None:
        self.settings = settings


class Svc:
    def __init__(self, repo: Repo, mailer: Mailer) -> None:
        self.repo, self.mailer = repo, mailer


class Request:
    def __init__(self) -> None:
        self.v = 10


class Handler:
    def __init__(self, request: Request, svc: Svc) -> None:
        self.request, self.svc = request, svc


class Greeter:
    def __init__(self, n: int, settings: Settings) -> None:
        self.n, self.settings = n, settings


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


def check_svc(a: Any, b: Any) -> None:
    """A new Svc, Repo and Mailer per resolve over the same singletons."""
    assert isinstance(a, Svc) and isinstance(a.repo, Repo) and isinstance(a.mailer, Mailer), a
    assert a is not b and a.repo is not b.repo and a.mailer is not b.mailer, "SG: new objects expected"
    assert isinstance(a.repo.db, Db) and isinstance(a.repo.cache, Cache) and isinstance(a.mailer.settings, Settings)
    assert a.repo.db is b.repo.db and a.repo.cache is b.repo.cache and a.mailer.settings is b.mailer.settings, \
        "SG: singletons not shared"


def check_handler(a: Any, b: Any) -> None:
    assert isinstance(a, Handler) and isinstance(a.request, Request) and a.request is not b.request, a
    check_svc(a.svc, b.svc)


def check_greeter(a: Any, b: Any) -> None:
    assert isinstance(a, Greeter) and a.n == 42 and a is not b, a
    assert isinstance(a.settings, Settings) and a.settings is b.settings, "RA: Settings not shared"


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

    settings, db, cache = Settings(), Db(), Cache()

    def sg() -> Svc:
        return Svc(Repo(db, cache), Mailer(settings))

    return {
        "S1": (lambda: A(B(C())), ""),
        "S2": (lambda: config, "module-level object"),
        "S3": (s3, "weakref.ref back-reference"),
        "S4": (s4, ""),
        "SG": (sg, "module-level singletons"),
        "RQ0": (sg, "no container: the same calls"),
        "RQ1": (lambda: Handler(Request(), sg()), ""),
        "RA": (lambda: Greeter(42, settings), ""),
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

    c3r = tether.Container()  # the same through a resolver: replayed in Python, the plan's key table answering r.weak
    c3r.register("Child", Child, deps=[], on_complete=lambda r, child: setattr(child, "parent", r.weak("Parent")))
    c3r.register("Parent", Parent, deps=["Child"])

    c4 = tether.Container()
    for key, deps in S4_GRAPH.items():
        c4.register(key, S4_CLASSES[key], deps=deps)  # GRAPH scope: one of each per resolve

    cg = tether.Container()  # the matrix: singletons under a graph, a request, runtime arguments
    for cls in (Settings, Db, Cache):
        cg.register(cls, cls, deps=[], scope=Scope.SINGLETON)
    cg.register(Repo, Repo, deps=[Db, Cache])
    cg.register(Mailer, Mailer, deps=[Settings])
    cg.register(Svc, Svc, deps=[Repo, Mailer])
    cg.register(Handler, Handler, deps=[Request, Svc])  # Request: provided or registered in each request's child
    cg.register_value(Request)
    cg.register(Greeter, Greeter, deps=[int, Settings])

    def rq0() -> Svc:
        with tether.Container(cg) as child:
            return child.resolve(Svc)

    def rq1() -> Handler:
        request = Request()
        with tether.Container(cg) as child:
            child.register(Request, lambda: request, deps=[])
            return child.resolve(Handler)

    def rqv() -> Handler:
        with tether.Container(cg, values={Request: Request()}) as child:
            return child.resolve(Handler)

    keep = (c1, c2, c3, c3r, c4, cg)  # noqa: F841 (containers live as long as the closures)
    r1, r2, r3, r3r, r4, rg = c1.resolve, c2.resolve, c3.resolve, c3r.resolve, c4.resolve, cg.resolve
    return {
        "SG": (lambda: rg(Svc), ""),
        "RQ0": (rq0, "child container per request"),
        "RQ1": (rq1, "child container per request, Request registered in it"),
        "RQV": (rqv, "child container per request, Request provided as a value (values=)"),
        "RA": (lambda: rg(Greeter, 42), ""),
        "S1": (lambda: r1("A"), ""),
        "S2": (lambda: r2("Config"), ""),
        "S3": (lambda: r3("Parent"), "completion callback with a declared weak target (tether.complete), replayed in Python"),
        "S3r": (lambda: r3r("Parent"), "completion callback with a resolver (r.weak), replayed in Python"),
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
    settings, db, cache = providers.Singleton(Settings), providers.Singleton(Db), providers.Singleton(Cache)
    svc = providers.Factory(Svc, repo=providers.Factory(Repo, db=db, cache=cache),
                            mailer=providers.Factory(Mailer, settings=settings))
    greeter = providers.Factory(Greeter, settings=settings)
    return {
        "SG": (svc, ""),
        "RQ0": (None, "n/a (no request scope)"),
        "RQ1": (None, "n/a (no request scope)"),
        "RA": (lambda: greeter(42), "positional argument to the provider"),
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
    from dishka import Provider, Scope, from_context, make_container, provide

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

    class PG(Provider):  # the service graph: new objects over APP singletons
        settings = provide(Settings, scope=Scope.APP)
        db = provide(Db, scope=Scope.APP)
        cache = provide(Cache, scope=Scope.APP)
        repo = provide(Repo, scope=Scope.APP, cache=False)
        mailer = provide(Mailer, scope=Scope.APP, cache=False)
        svc = provide(Svc, scope=Scope.APP, cache=False)

    class PR(Provider):  # per request: the graph in REQUEST scope, the Request from the context
        settings = provide(Settings, scope=Scope.APP)
        db = provide(Db, scope=Scope.APP)
        cache = provide(Cache, scope=Scope.APP)
        repo = provide(Repo, scope=Scope.REQUEST)
        mailer = provide(Mailer, scope=Scope.REQUEST)
        svc = provide(Svc, scope=Scope.REQUEST)
        handler = provide(Handler, scope=Scope.REQUEST)
        request = from_context(provides=Request, scope=Scope.REQUEST)

    container = make_container(P())
    container4 = make_container(p4)
    containerg = make_container(PG())
    containerr = make_container(PR())

    def rq0() -> Svc:
        with containerr() as request:
            return request.get(Svc)

    def rq1() -> Handler:
        with containerr(context={Request: Request()}) as request:
            return request.get(Handler)

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
        "SG": (lambda: containerg.get(Svc), "APP scope, cache=False over APP singletons"),
        "RQ0": (rq0, "REQUEST scope"),
        "RQ1": (rq1, "REQUEST scope, Request from the context"),
        "RQV": (rq1, "REQUEST scope, Request from the context"),
        "RA": (None, "n/a (no runtime arguments)"),
        "_keep": (container, container4, containerg, containerr),
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

    import inspect

    def made(cls: type, lifetime: str) -> Any:
        """A factory of ``cls`` with its parameters and return type, for wireup to read."""
        def factory(*args: Any, _cls: type = cls, **kwargs: Any) -> Any:
            return _cls(*args, **kwargs)

        sig = inspect.signature(cls.__init__)
        params = [p.replace(kind=inspect.Parameter.POSITIONAL_OR_KEYWORD) for p in list(sig.parameters.values())[1:]]
        factory.__signature__ = inspect.Signature(params, return_annotation=cls)  # type: ignore[attr-defined]
        factory.__annotations__ = {p.name: p.annotation for p in params} | {"return": cls}
        return injectable(lifetime=lifetime)(factory)

    container4 = wireup.create_sync_container(injectables=[made(S4_CLASSES[key], "scoped") for key in S4_GRAPH])
    singletons = [made(cls, "singleton") for cls in (Settings, Db, Cache)]
    containerg = wireup.create_sync_container(
        injectables=singletons + [made(cls, "transient") for cls in (Repo, Mailer, Svc)])
    scopeg_cm = containerg.enter_scope()
    scopeg = scopeg_cm.__enter__()
    containerr = wireup.create_sync_container(
        injectables=[made(cls, "singleton") for cls in (Settings, Db, Cache)] + [made(cls, "scoped") for cls in (Repo, Mailer, Svc)])
    get, get_root = scope.get, container.get

    def rq0() -> Svc:
        with containerr.enter_scope() as scoped:
            return scoped.get(Svc)

    def s4() -> App:
        with container4.enter_scope() as scoped:
            return scoped.get(App)

    return {
        "S1": (lambda: get(A), "transient, from one long-lived scope"),
        "S2": (lambda: get_root(Config), ""),
        "S3": (None, NA_CYCLE),
        "S3~": (lambda: s3_patch(get(Parent)), "manual setattr after resolve"),
        "S4": (s4, "scoped lifetime, scope entered per resolve"),
        "SG": (lambda: scopeg.get(Svc), "transient over singletons, from one long-lived scope"),
        "RQ0": (rq0, "scoped lifetime, scope entered per request"),
        "RQ1": (None, "n/a (no per-scope values)"),
        "RA": (None, "n/a (no runtime arguments)"),
        "_keep": (container, container4, containerg, scopeg_cm, containerr),
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


PAIR_CHECKS = {"SG": check_svc, "RQ0": check_svc, "RQ1": check_handler, "RQV": check_handler, "RA": check_greeter}

#: The shape matrix (issue 15): scenario, label; the peers' S3 is their closest thing (S3~)
MATRIX = [
    ("S1", "S1 chain A(B(C)), new objects"),
    ("S2", "S2 singleton hit"),
    ("S3", "S3 cycle, declared weak target"),
    ("S3r", "S3 cycle, resolver-form callback"),
    ("S4", "S4 12-node graph, shared leaves"),
    ("SG", "Svc(Repo(Db, Cache), Mailer(Settings)) over cached singletons"),
    ("RQ0", "per request: child/scope, resolve Svc, close"),
    ("RQ1", "per request, one request object provided, resolve Handler(Request, Svc)"),
    ("RQV", "per request, the request object as a value (tether values=, dishka context=), resolve Handler(Request, Svc)"),
    ("RA", "runtime argument: Greeter(42, Settings)"),
]
MATRIX_PEERS = ("dependency-injector", "dishka", "wireup")


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
    elif scen in PAIR_CHECKS:
        PAIR_CHECKS[scen](r1, r2)
    elif scen == "S2":
        assert isinstance(r1, Config) and r1 is r2, f"{name}: singleton not shared"
    else:
        CHECKS[scen](r1)
        assert r1 is not r2, f"{name}: {scen} returned the same instance twice"
    return note


def matrix(results: dict[str, dict[str, str]], samples: dict[tuple[str, str], list[float]]) -> list[str]:
    """The shape matrix: a row per shape, tether against the fastest of the peers that express it
    (the median of the per-repeat ratios; for S3 the peers' closest thing, a manual setattr)."""
    names = [n for n in ("tether", "hand-built Python", *MATRIX_PEERS) if n in results]
    out = ["", "Shape matrix (issue 15): tether / fastest of " + ", ".join(MATRIX_PEERS) +
           " that expresses the shape (target <= 1.00x).", "",
           "| shape | " + " | ".join(names) + " | tether / fastest peer |",
           "|---|" + "---:|" * len(names) + "---:|"]
    for scen, label in MATRIX:
        cells = []
        for name in names:
            key = (name, "S3~") if scen in ("S3", "S3r") and name in MATRIX_PEERS else (name, scen)
            if key in samples:
                cells.append(fmt(statistics.median(samples[key])))
            else:
                cells.append(results.get(name, {}).get(scen, "—").split(";")[0])
        best: float | None = None
        for peer in MATRIX_PEERS:
            key = (peer, "S3~") if scen in ("S3", "S3r") else (peer, scen)
            r = ratio(samples, ("tether", scen), key)
            if r is not None and (best is None or r > best):  # the fastest peer gives the largest ratio
                best = r
        verdict = "—" if best is None else (f"{best:.2f}x" if best <= 1.0 else f"**{best:.2f}x**")
        out.append(f"| {label} | " + " | ".join(cells) + f" | {verdict} |")
    return out


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
        for scen in ("S1", "S2", "S3", "S3r", "S3~", "S4", "SG", "RQ0", "RQ1", "RQV", "RA"):
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
        if note and scen not in ("S3~", "SG", "RQ0", "RQ1", "RQV", "RA"):
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

    lines.extend(matrix(results, samples))
    text = "\n".join(lines)
    print(text)
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
