"""Threads: the GIL is released in C calls and re-taken in callbacks; no deadlock, singletons once."""

import gc
import sys
import threading
import time
import weakref

import tether
from tether import Scope, object_table

THREADS = 8


def run_threads(target, n=THREADS, timeout=60.0):
    """Runs ``target(i)`` in ``n`` daemon threads; fails instead of hanging on a deadlock."""
    errors: list[BaseException] = []

    def wrapped(i):
        try:
            target(i)
        except BaseException as exc:  # surfaced to the test below
            errors.append(exc)

    threads = [threading.Thread(target=wrapped, args=(i,), daemon=True) for i in range(n)]
    for t in threads:
        t.start()
    deadline = time.monotonic() + timeout
    for t in threads:
        t.join(max(0.0, deadline - time.monotonic()))
    assert not any(t.is_alive() for t in threads), "threads still running: deadlock?"
    if errors:
        raise errors[0]


def test_singleton_is_created_once_under_a_race(c, count):
    lock = threading.Lock()

    def slow():
        with lock:
            count("made")
        time.sleep(0.05)  # widen the race: the others must wait, not build their own
        return object()

    c.register("S", slow, scope=Scope.SINGLETON)
    barrier = threading.Barrier(THREADS)
    results: list[object] = [None] * THREADS

    def resolve(i):
        barrier.wait()
        results[i] = c.resolve("S")

    run_threads(resolve)
    assert count["made"] == 1
    assert all(r is results[0] for r in results)


def test_cyclic_graphs_from_eight_threads(c):
    class Child:
        parent = None

    class Parent:
        def __init__(self, child: Child, log: "object") -> None:
            self.child, self.log = child, log

    c.register("Log", object, scope=Scope.SINGLETON)
    c.register("Parent", Parent, deps=["Child", "Log"])
    c.register("Child", Child, on_complete=lambda r, ch: setattr(ch, "parent", r.weak("Parent")))
    c.register("Shared", object, scope=Scope.WEAK)
    before = object_table.live_count()

    def work(i):
        for _ in range(300):
            p = c.resolve("Parent")
            assert p.child.parent() is p
            assert p.log is c.resolve("Log")
            c.resolve("Shared")

    run_threads(work)
    gc.collect()
    assert object_table.live_count() <= before + 1  # at most the weak-scoped one still cached


def test_factory_waiting_for_another_threads_resolve_does_not_deadlock(c):
    c.register("Inner", object)
    c.register("InnerSingleton", object, scope=Scope.SINGLETON)

    def outer():
        got = []
        t = threading.Thread(target=lambda: got.extend([c.resolve("Inner"), c.resolve("InnerSingleton")]))
        t.start()
        t.join(30)
        assert not t.is_alive(), "deadlock: the inner resolve never finished"
        return got

    c.register("Outer", outer)
    run_threads(lambda i: c.resolve("Outer"), n=4)


def test_singleton_factory_waiting_for_graph_resolve_in_another_thread(c):
    c.register("Plain", object)

    def outer():
        got = []
        t = threading.Thread(target=lambda: got.append(c.resolve("Plain")))
        t.start()
        t.join(30)
        assert not t.is_alive()
        return got

    c.register("Single", outer, scope=Scope.SINGLETON)
    run_threads(lambda i: c.resolve("Single"))


def test_drops_from_other_threads(c):
    """Instances released on other threads run the Python-side destructor there (GIL re-taken)."""
    c.register("S", object, scope=Scope.SINGLETON)
    objs = []
    run_threads(lambda i: objs.append(c.resolve("S")))
    before = object_table.live_count()
    t = threading.Thread(target=lambda: c.reset(Scope.SINGLETON))
    t.start()
    t.join(30)
    assert object_table.live_count() == before - 1


def test_reregistering_while_other_threads_resolve(c):
    """Replaced trampolines are freed only once no Python resolve that may use them runs."""

    class Old:
        pass

    class New:
        pass

    def done(r, obj):
        obj.done = True

    c.register("K", Old, on_complete=done)
    c.register("User", lambda k: k, deps=["K"])
    stop = threading.Event()

    def work(i):
        while not stop.is_set():
            k = c.resolve("User")
            assert isinstance(k, (Old, New))
            assert k.done  # never an instance of a half-configured registration

    errors: list[BaseException] = []

    def registrar():
        try:
            for n in range(300):
                c.register("K", New if n % 2 else Old, on_complete=done)
        except BaseException as exc:
            errors.append(exc)
        finally:
            stop.set()

    t = threading.Thread(target=registrar, daemon=True)
    t.start()
    run_threads(work)
    t.join(30)
    assert not errors
    assert tether._state.retired == []


def test_reregistered_key_is_never_resolved_half_configured(c):
    """tether_register_ex publishes a registration with its scope, destructor and callbacks: while
    a key is re-registered, 4 threads resolving it get only complete instances that are destroyed."""
    lock = threading.Lock()
    counts = {"created": 0, "completed": 0, "destroyed": 0}

    def bump(name):
        with lock:
            counts[name] += 1

    class K:
        completed = False

        def __init__(self) -> None:
            bump("created")
            weakref.finalize(self, bump, "destroyed")

    def complete(r, k):
        assert not k.completed
        k.completed = True
        bump("completed")

    scopes = [Scope.GRAPH, Scope.TRANSIENT, Scope.SINGLETON, Scope.WEAK]
    c.register("K", K, on_complete=complete)
    started = threading.Barrier(5)
    stop = threading.Event()

    def work(i):
        started.wait()
        if i == 4:  # the registrar
            try:
                for n in range(400):
                    c.register("K", K, scope=scopes[n % 4], on_complete=complete)
            finally:
                stop.set()
            return
        while not stop.is_set():
            assert c.resolve("K").completed  # never an instance without its callbacks

    run_threads(work, n=5)
    c.close()
    gc.collect()
    assert counts["created"] > 0
    assert counts["completed"] == counts["created"]
    assert counts["destroyed"] == counts["created"]  # every instance had its destructor


def test_threads_needing_a_childs_c_container_at_once_get_the_same_one():
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # the GIL changes hands as often as it can
    try:
        with tether.Container() as parent:
            for _ in range(50):
                child = tether.Container(parent)  # no C container until one is needed
                start = threading.Barrier(4)
                handles: list[int] = []

                def need() -> None:
                    start.wait()
                    handles.append(child.handle)

                threads = [threading.Thread(target=need) for _ in range(4)]
                for t in threads:
                    t.start()
                for t in threads:
                    t.join()
                assert len(set(handles)) == 1, "two C containers for one child"
                child.close()
            # every child's C container was freed: the parent has none left to refuse its free for
    finally:
        sys.setswitchinterval(interval)


def test_a_resolve_waiting_for_another_threads_singleton_runs_each_factory_once(c):
    """A resolve that needs to create a singleton while another thread holds that singleton's creation cell
    (inside a singleton factory) waits before running any factory of its graph: none runs twice."""
    entered, release = threading.Event(), threading.Event()
    calls = {"Slow": 0, "G": 0, "W": 0, "Top": 0}

    def counted(name, body=lambda *deps: object()):
        def factory(*deps):
            calls[name] += 1
            return body(*deps)
        return factory

    def slow():
        entered.set()
        assert release.wait(30)
        return object()

    c.register("Slow", counted("Slow", lambda: slow()), scope=Scope.SINGLETON)
    c.register("G", counted("G"))
    c.register("W", counted("W"), scope=Scope.SINGLETON)
    c.register("Top", counted("Top"), deps=["G", "W"])
    holder = threading.Thread(target=lambda: c.resolve("Slow"), daemon=True)
    holder.start()
    assert entered.wait(30)
    result: list[object] = []
    resolver = threading.Thread(target=lambda: result.append(c.resolve("Top")), daemon=True)
    resolver.start()
    time.sleep(0.3)  # the resolver meets the held lock (and, before the fix, had run G already)
    release.set()
    holder.join(30)
    resolver.join(30)
    assert result and not holder.is_alive() and not resolver.is_alive()
    assert calls == {"Slow": 1, "G": 1, "W": 1, "Top": 1}
