"""Completion callbacks with declared targets: ``tether.complete(fn, deps=[...])``."""

import gc
import weakref
from typing import Any

import pytest

import tether
from tether import Scope


def s3(count):
    class Child:
        def __init__(self) -> None:
            count("Child")
            self.parent: Any = None

    class Parent:
        def __init__(self, child: Child) -> None:
            count("Parent")
            self.child = child

    return Parent, Child


def link(count):
    def linked(child, parent):
        count("link")
        child.parent = parent

    return linked


def test_weak_target_closes_the_cycle(c, count):
    Parent, Child = s3(count)
    c.register(Parent)
    c.register(Child, on_complete=tether.complete(link(count), deps=[tether.weak(Parent)]))
    p = c.resolve(Parent)
    assert isinstance(p.child.parent, weakref.ref) and p.child.parent() is p
    assert (count["Parent"], count["Child"], count["link"]) == (1, 1, 1)
    p2 = c.resolve(Parent)
    assert p2 is not p and p2.child is not p.child and p2.child.parent() is p2
    gone = weakref.ref(p), weakref.ref(p.child)
    del p, p2
    gc.collect()
    assert gone[0]() is None and gone[1]() is None


def test_strong_target_by_key(c, count):
    class Logger:
        pass

    Parent, Child = s3(count)
    c.register(Parent, on_complete=tether.complete(lambda p, log: setattr(p, "log", log), deps=[Logger]))
    c.register(Child)
    c.register(Logger, scope=Scope.SINGLETON)
    p = c.resolve(Parent)
    assert p.log is c.resolve(Logger)


def test_strong_target_closing_a_cycle_is_refused(c, count):
    Parent, Child = s3(count)
    c.register(Parent)
    c.register(Child, on_complete=tether.complete(link(count), deps=[tether.dep(Parent)]))
    with pytest.raises(tether.RetainCycleError, match='a declared target of completion callback #1 of ".*Child"') as info:
        c.resolve(Parent)
    assert "declare it weak (tether.complete(fn, deps=[tether.weak(" in str(info.value)
    assert "tether_" not in str(info.value)
    assert (count["Parent"], count["Child"], count["link"]) == (1, 1, 0)


def test_runs_in_order_beside_resolver_callbacks(c, count):
    Parent, Child = s3(count)
    order = []
    c.register(Parent)
    c.register(Child, on_complete=[
        lambda r, child: order.append(("resolver", child.parent)),
        tether.complete(lambda child, parent: order.append(("declared", parent() is not None)) or setattr(child, "parent", parent),
                        deps=[tether.weak(Parent)]),
        lambda r, child: order.append(("after", child.parent() is not None)),
    ])
    p = c.resolve(Parent)
    assert order == [("resolver", None), ("declared", True), ("after", True)]
    assert p.child.parent() is p


def test_failing_callback(c, count):
    Parent, Child = s3(count)
    boom = ValueError("no parent")

    def fail(child, parent):
        raise boom

    c.register(Parent)
    c.register(Child, on_complete=[lambda r, child: None, tether.complete(fail, deps=[tether.weak(Parent)])])
    with pytest.raises(tether.FactoryError) as info:
        c.resolve(Parent)
    assert 'completion callback #2 of "' in str(info.value) and "raised ValueError: no parent" in str(info.value)
    assert info.value.status == tether.Status.E_FACTORY_FAILED
    assert info.value.__cause__ is boom
    assert (count["Parent"], count["Child"]) == (1, 1)


def test_missing_target(c, count):
    Parent, Child = s3(count)
    c.register(Parent)
    c.register(Child, on_complete=tether.complete(link(count), deps=[tether.weak("Nobody")]))
    with pytest.raises(tether.NotFoundError, match='"Nobody"'):
        c.resolve(Parent)
    assert count["link"] == 0


def test_bad_declarations(c):
    with pytest.raises(TypeError, match="callable"):
        tether.complete(3)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="cannot be a completion target"):
        tether.complete(print, deps=[tether.lazy("K")])
    with pytest.raises(TypeError):
        tether.complete(print, deps=[3])
    with pytest.raises(ValueError):
        tether.complete(print, deps=[""])
    with pytest.raises(TypeError, match="on_complete"):
        c.register("K", object, on_complete=[tether.complete(print), 3])
    assert repr(tether.complete(print, deps=["K", tether.weak("P")])).startswith("tether.complete(")
