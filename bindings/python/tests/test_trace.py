"""Container.trace: the exact events of a resolve closing a cycle, a cache hit, a failure and
destructions (as the library reports them, also where the binding would otherwise have replayed
a plan or served a hit itself), and Recorder's DOT picture of one resolve."""

from __future__ import annotations  # `int | None` annotations on Python 3.9

import gc

import pytest

import tether
from tether import Scope


def summary(rec: tether.Recorder) -> list[str]:
    """The events as "kind key#n[ -> key#m][ STATUS]", instances numbered by first appearance."""
    ids: dict[int, int] = {}

    def name(key: str, address: int | None) -> str:
        if not address:
            return key
        return f"{key}#{ids.setdefault(address, len(ids) + 1)}"

    lines = []
    for e in rec.events:
        line = f"{e.kind} {name(e.key, e.address)}"
        if e.target_address:
            line += f" -> {name(e.target_key, e.target_address)}"
        if e.status is not None:
            line += f" {e.status.c_name}"
        lines.append(line)
    rec.clear()
    return lines


class Node:
    def __init__(self, *deps):
        self.deps = deps


def test_a_cycle_closed_by_a_callback(c):
    rec = tether.Recorder()
    c.trace(rec)
    c.register("A", Node, deps=["B"])
    c.register("B", Node, on_complete=lambda r, b: setattr(b, "a", r.weak("A")))
    a = c.resolve("A")
    assert a.deps[0].a() is a
    events = list(rec.events)
    # The library lets go of the instances of Python objects when the resolve returns them
    # (Python holds the objects from then on): dependents first.
    assert summary(rec) == ["start A", "call B", "return B#1", "call A", "return A#2", "edge A#2 -> B#1",
                            "weak B#1 -> A#2", "complete B#1", "end A#2", "destroy A#2", "destroy B#1"]
    assert events[8].instance is a and events[1].instance is None and events[2].instance is a.deps[0]


def test_a_cache_hit_also_where_the_binding_would_serve_it(c):
    c.register("S", Node, scope=Scope.SINGLETON)
    c.register("C", Node, deps=["S"])
    s = c.resolve("S")
    assert c.resolve("S") is s and c.resolve("S") is s  # the binding serves it by now (hits)
    c.resolve("C")
    c.resolve("C")  # and replays C's plan
    rec = tether.Recorder()
    c.trace(rec)
    assert c.resolve("S") is s
    assert c.resolve("S") is s
    c.resolve("C")
    assert summary(rec) == ["start S", "hit S#1", "end S#1", "start S", "hit S#1", "end S#1",
                            "start C", "hit S#1", "call C", "return C#2", "edge C#2 -> S#1", "end C#2", "destroy C#2"]
    c.trace(None)  # off again: the fast paths come back, unheard
    c.resolve("C")
    c.resolve("C")
    assert c.resolve("S") is s
    assert rec.events == []


def test_a_failure_destroys_what_was_made_first(c):
    rec = tether.Recorder()
    c.trace(rec)
    c.register("A", Node, deps=["B", "C"])
    c.register("B", Node)
    boom = OSError("disk full")

    def broken():
        raise boom

    c.register("C", broken)
    with pytest.raises(tether.FactoryError) as info:
        c.resolve("A")
    assert info.value.__cause__ is boom
    assert summary(rec) == ["start A", "call B", "return B#1", "call C", "return C TETHER_E_FACTORY_FAILED",
                            "destroy B#1", "end A TETHER_E_FACTORY_FAILED"]


def test_close_reports_the_cached_singletons_destruction_then_nothing(c):
    rec = tether.Recorder()
    c.register("S", Node, scope=Scope.SINGLETON)
    c.trace(rec)
    c.resolve("S")
    gc.collect()
    rec.clear()
    c.close()
    gc.collect()
    assert summary(rec) == ["destroy S#1"]


def test_dot_draws_the_last_resolve(c):
    rec = tether.Recorder()
    c.register("Cfg", Node, scope=Scope.SINGLETON)
    c.register("Parent", Node, deps=["Child", "Cfg"])
    c.register("Child", Node, on_complete=lambda r, ch: setattr(ch, "parent", r.weak("Parent")))
    c.resolve("Cfg")
    c.trace(rec)
    c.resolve("Parent")
    assert rec.dot() == (
        "digraph resolve {\n"
        '  n1 [label="Child"];\n'
        '  n2 [label="Cfg", shape=box, style=dashed];\n'
        '  n3 [label="Parent", penwidth=2];\n'
        "  n3 -> n1;\n"
        "  n3 -> n2;\n"
        "  n1 -> n3 [style=dashed];\n"
        "}\n")
