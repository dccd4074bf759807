"""Cycles from Python: Parent <-> Child built once, closed after construction, drawn as DOT.

    TETHER_LIBRARY=build/lib/libtether.so python3 examples/python/cycles.py

(From a source checkout the package and the library are found without installing anything.)
"""

from __future__ import annotations

import gc
import sys
import weakref
from pathlib import Path
from typing import Any, Callable

try:
    import tether
except ImportError:  # running from a checkout without installing the package
    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bindings" / "python"))
    import tether

calls = {"Parent": 0, "Child": 0}


class Child:
    def __init__(self) -> None:
        calls["Child"] += 1
        self.parent: Callable[[], Parent | None] | None = None  # weak: set after construction


class Parent:
    def __init__(self, child: Child) -> None:  # autowired from the type hint
        calls["Parent"] += 1
        self.child = child


def set_parent(r: tether.Resolver, child: Child) -> None:
    child.parent = r.weak(Parent)  # runs after every factory of the resolve has returned


def main() -> int:
    with tether.Container() as c:
        c.register(Parent)
        c.register(Child, on_complete=set_parent)
        c.validate()

        p = c.resolve(Parent)
        assert p.child.parent is not None and p.child.parent() is p
        print(f"p.child.parent() is p: {p.child.parent() is p}; factory calls: {calls}")

        # A constructor-only cycle is an error that names the path, not a stack overflow.
        c.register("A", lambda b: b, deps=["B"])
        c.register("B", lambda a: a, deps=["A"])
        try:
            c.resolve("A")
        except tether.CycleError as exc:
            print(f"CycleError: {exc}")

        # A strong back edge would leak in C; tether refuses it and says what to do.
        c.register("Holder", lambda child: {"child": child}, deps=["Leaf"])
        c.register("Leaf", dict, on_complete=lambda r, leaf: leaf.update(holder=r.get("Holder")))
        try:
            c.resolve("Holder")
        except tether.RetainCycleError as exc:
            print(f"RetainCycleError caused by {type(exc.__cause__).__name__}: {exc.__cause__}")

        print(c.to_dot())

    child: Any = p.child
    parent_ref = weakref.ref(p)
    del p
    gc.collect()
    assert parent_ref() is None and child.parent() is None  # the weak edge kept nothing alive
    print("cycles ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
