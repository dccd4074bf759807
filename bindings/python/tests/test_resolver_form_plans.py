"""Resolver-form completion callbacks (``on_complete=lambda r, obj: ...``) run from the plan the
library describes (tether.plan_resolver): each scenario runs on containers that replay and on
containers with a trace hook set (every resolve through the library: conftest.container), with the same results
(factory and callback calls, identities, errors with their messages and causes), and the replay
path must have run (``both``)."""

from __future__ import annotations

import gc
import threading
import weakref
from typing import Any

import pytest
from test_replay import Made, Node, both, failure

import tether
from tether import Scope, executor
from tether.plan_resolver import PlanResolver


def s3(c: tether.Container, log: list[str], callback: Any) -> None:
    """Parent(Child), Child completed by the resolver-form ``callback``; ``log`` records factories."""
    c.register("Parent", lambda child: log.append("Parent") or Node("Parent", child), deps=["Child"])
    c.register("Child", lambda: log.append("Child") or Node("Child"), on_complete=callback)


def test_s3_weak_back_edge_runs_from_the_plan(monkeypatch):
    seen: list[str] = []

    def scenario(make: Made) -> Any:
        c = make()
        log: list[str] = []

        def link(r: tether.Resolver, child: Node) -> None:
            log.append("link")
            seen.append(type(r).__name__)
            child.parent = r.weak("Parent")  # type: ignore[attr-defined]

        s3(c, log, link)
        first, second = c.resolve("Parent"), c.resolve("Parent")
        kept = weakref.ref(first)
        result = (log, first.deps[0].parent() is first, second.deps[0].parent() is second, first is not second)
        del first
        return (*result, kept() is None)  # the weak back edge keeps nothing alive

    assert both(monkeypatch, scenario) == (["Child", "Parent", "link"] * 2, True, True, True, True)
    # the replay's callbacks got the plan's resolver, the library path's the library's
    assert seen == ["PlanResolver", "PlanResolver", "Resolver", "Resolver"]


def test_get_and_a_refused_strong_back_edge(monkeypatch):
    def scenario(make: Made) -> Any:
        c = make()
        log: list[str] = []
        refused: list[str] = []

        def complete(r: tether.Resolver, child: Node) -> None:
            child.me = r.get("Child")  # type: ignore[attr-defined]  # itself: a cycle of one
        def complete_parent(r: tether.Resolver, parent: Node) -> None:
            parent.child = r.get("Child")  # type: ignore[attr-defined]  # Parent -> Child already: no cycle
        def back(r: tether.Resolver, child: Node) -> None:
            try:
                r.get("Parent")
            except tether.RetainCycleError as e:
                refused.append(str(e))
                child.parent = r.weak("Parent")  # type: ignore[attr-defined]

        c.register("Parent", lambda child: log.append("Parent") or Node("Parent", child), deps=["Child"],
                   on_complete=complete_parent)
        c.register("Child", lambda: log.append("Child") or Node("Child"), on_complete=back)
        p = c.resolve("Parent")
        first = (list(log), refused, p.child is p.deps[0], p.deps[0].parent() is p)
        c.register("Child", lambda: Node("Child"), on_complete=complete)
        return first, failure(c, "Parent")

    first, failed = both(monkeypatch, scenario)
    assert first[0] == ["Child", "Parent"] and first[2:] == (True, True)
    assert '"Child"' in first[1][0] and '"Parent" -> "Child" -> "Parent"' in first[1][0]
    assert failed[0] is tether.RetainCycleError and failed[3] is tether.RetainCycleError
    assert 'completion callback #1 of "Child"' in failed[2] and '"Child" -> "Child"' in failed[2]


def test_strong_edges_of_earlier_callbacks_count(monkeypatch):
    def scenario(make: Made) -> Any:
        c = make()
        for key, deps in {"Both": ["Root", "Top"], "Root": ["A"], "Top": ["B"], "A": [], "B": []}.items():
            c.register(key, lambda *d, key=key: Node(key, *d), deps=deps,
                       on_complete={"A": lambda r, a: setattr(a, "top", r.get("Top")),
                                    "B": lambda r, b: setattr(b, "root", r.get("Root"))}.get(key, ()))
        return failure(c, "Both")

    error, status, message, cause, cause_text = both(monkeypatch, scenario)
    assert cause is tether.RetainCycleError
    assert '"Root" -> "A" -> "Top" -> "B" -> "Root"' in message  # through A's edge, not the factories'


def test_a_failing_callback_destroys_what_the_replay_made(monkeypatch):
    def scenario(make: Made) -> Any:
        c = make()
        log: list[str] = []
        made: list[weakref.ref[Node]] = []
        fail = [True]

        def check(r: tether.Resolver, child: Node) -> None:
            child.parent = r.weak("Parent")  # type: ignore[attr-defined]
            made.append(weakref.ref(child.parent()))  # type: ignore[attr-defined]
            made.append(weakref.ref(child))
            if fail[0]:
                raise ValueError("child check failed")

        s3(c, log, check)
        failed = failure(c, "Parent")
        gc.collect()  # the exception's frames (the callback's among them) hold what they held
        gone = [ref() is None for ref in made]
        fail[0] = False
        p = c.resolve("Parent")
        return failed, gone, log, p.deps[0].parent() is p

    failed, gone, log, linked = both(monkeypatch, scenario)
    assert failed[:2] == (tether.FactoryError, tether.Status.E_FACTORY_FAILED) and failed[3] is ValueError
    assert 'completion callback #1 of "Child"' in failed[2] and "child check failed" in failed[2]
    assert gone == [True, True] and log == ["Child", "Parent"] * 2 and linked  # each factory once per resolve


def test_keys_outside_the_plan_are_resolved_once_per_get(monkeypatch):
    def scenario(make: Made) -> Any:
        c = make()
        log: list[str] = []
        got: list[Any] = []

        def complete(r: tether.Resolver, child: Node) -> None:
            got.extend([r.get("Helper"), r.get("Helper"), r.get("S"), r.weak("Helper")])  # S: a transient's dependency
            try:
                r.get("Nope")
            except tether.NotFoundError as e:
                got.append(str(e))

        s3(c, log, complete)
        c.register("Helper", lambda: log.append("Helper") or Node("Helper"), scope=Scope.TRANSIENT)
        c.register("S", lambda: log.append("S") or Node("S"), scope=Scope.TRANSIENT)
        p = c.resolve("Parent")
        helper, again, s, weak_helper, missing = got
        return log, helper is not again, s is not c.resolve("S"), weak_helper() is None, missing, p.name

    log, distinct, fresh, expired, missing, _ = both(monkeypatch, scenario)
    assert log == ["Child", "Parent", "Helper", "Helper", "S", "Helper", "S"] and distinct and fresh and expired
    assert '"Nope"' in missing and 'completion callback of "Child"' in missing  # the resolver's parts, not a resolve's


def test_a_resolver_kept_past_its_callback_is_wrong_context(monkeypatch):
    def scenario(make: Made) -> Any:
        c = make()
        kept: list[tether.Resolver] = []
        s3(c, [], lambda r, child: kept.append(r))
        c.resolve("Parent")
        c.resolve("Parent")  # a replay gives a new resolver when the last one is kept
        errors = []
        assert kept[0] is not kept[1]
        for call in (lambda: kept[0].get("Parent"), lambda: kept[0].weak("Child"), lambda: kept[1].get("Child")):
            with pytest.raises(tether.WrongContextError) as info:
                call()
            errors.append(str(info.value))
        other: list[BaseException] = []

        def from_another_thread(r: tether.Resolver, child: Node) -> None:
            r.weak("Child")  # here, on its thread: the key now found the resolver's quick way

            def use() -> None:
                for method in (r.get, r.weak):
                    other.append(pytest.raises(tether.WrongContextError, method, "Child").value)

            t = threading.Thread(target=use)
            t.start()
            t.join()

        c.register("Child", lambda: Node("Child"), on_complete=from_another_thread)
        c.resolve("Parent")
        return errors, [str(e) for e in other]

    errors, other = both(monkeypatch, scenario)
    assert len(errors) == 3 and len(other) == 2 and all("only valid during the callback" in e for e in other)


def test_weak_to_a_step_without_weakref_support_fails_clearly(monkeypatch):
    # asked twice per resolve and resolved twice: the key found in the plan's table, then
    # remembered by the key object (the resolver's quick way), each time the same TypeError
    def scenario(make: Made) -> Any:
        c = make()
        errors: list[str] = []

        def complete(r: tether.Resolver, child: Node) -> None:
            for _ in range(2):
                try:
                    r.weak("Parent")
                except TypeError as e:
                    errors.append(str(e))

        c.register("Parent", lambda child: {"child": child}, deps=["Child"])  # a dict: no weak references
        c.register("Child", lambda: Node("Child"), on_complete=complete)
        parents = [c.resolve("Parent"), c.resolve("Parent")]
        return errors, [p["child"].name for p in parents]

    errors, names = both(monkeypatch, scenario)
    assert len(errors) == 4 and all("__weakref__" in e for e in errors) and names == ["Child", "Child"]


def test_not_described_where_a_resolve_could_not_answer(monkeypatch):
    # another graph-scoped key: a resolver's get of it would share the graph's instances
    def scenario(make: Made) -> Any:
        c = make()
        s3(c, [], lambda r, child: setattr(child, "parent", r.weak("Parent")))
        c.register("Other", lambda: Node("Other"))
        p = c.resolve("Parent")
        return p.deps[0].parent() is p

    assert both(monkeypatch, scenario, replays=False) is True

    # a singleton a callback's get would create: a failing later callback must destroy it with
    # the rest (as the library's resolve does), which a replay could not once it was published
    def with_a_singleton(make: Made) -> Any:
        c = make()
        fail = [True]
        made: list[Any] = []

        def complete(r: tether.Resolver, child: Node) -> None:
            child.parent = r.weak("Parent")
            child.s = r.get("S")

        def check(r: tether.Resolver, child: Node) -> None:
            if fail[0]:
                raise RuntimeError("not yet")

        c.register("Parent", lambda child: Node("Parent", child), deps=["Child"])
        c.register("Child", lambda: Node("Child"), on_complete=[complete, check])
        c.register("S", lambda: made.append(Node("S")) or made[-1], scope=Scope.SINGLETON)
        with pytest.raises(tether.FactoryError):
            c.resolve("Parent")
        first = weakref.ref(made.pop())
        gc.collect()
        fail[0] = False
        s = c.resolve("Parent").deps[0].s
        return first() is None, len(made), s is c.resolve("S")

    assert both(monkeypatch, with_a_singleton, replays=False) == (True, 1, True)
    assert PlanResolver.__mro__[1] is tether.Resolver and executor.describe_keys is not None


def test_threads_replaying_at_once_each_get_their_own_answers(monkeypatch):
    def scenario(make: Made) -> Any:
        c = make()
        s3(c, [], lambda r, child: setattr(child, "parent", r.weak("Parent")))
        wrong: list[str] = []

        def work() -> None:
            for _ in range(300):
                p = c.resolve("Parent")
                if p.deps[0].parent() is not p:
                    wrong.append("back edge to another resolve's Parent")

        threads = [threading.Thread(target=work) for _ in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        return wrong

    assert both(monkeypatch, scenario) == []
