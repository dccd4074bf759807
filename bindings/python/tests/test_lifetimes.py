"""Python objects live by Python's rules: no leaks through C, weak scope follows Python references."""

import gc
import weakref
from typing import Any

import pytest

import tether
from tether import Scope, object_table


class Node:
    """A weakly referenceable object that records its death."""

    deaths: list[str] = []

    def __init__(self, name: str = "") -> None:
        self.name = name

    def __del__(self) -> None:
        Node.deaths.append(self.name)


@pytest.fixture(autouse=True)
def _reset_deaths():
    Node.deaths = []


def test_everything_dies_after_the_container_and_user_refs_are_gone():
    before = object_table.live_count()
    refs: list[weakref.ref] = []

    def track(obj):
        refs.append(weakref.ref(obj))
        return obj

    c = tether.Container()
    c.register("Single", lambda: track(Node("Single")), scope=Scope.SINGLETON)
    c.register("Weak", lambda: track(Node("Weak")), scope=Scope.WEAK)
    c.register("Trans", lambda: track(Node("Trans")), scope=Scope.TRANSIENT)
    def make_parent(single, weak_scoped, transient, child):
        parent = track(Node("Parent"))
        parent.single, parent.weak_scoped, parent.transient, parent.child = single, weak_scoped, transient, child
        return parent

    c.register("Parent", make_parent, deps=["Single", "Weak", "Trans", "Child"])
    c.register("Child", lambda: track(Node("Child")), on_complete=lambda r, ch: setattr(ch, "parent", r.weak("Parent")))
    p = c.resolve("Parent")
    assert p.child.parent() is p
    assert object_table.live_count() == before + 1  # only the singleton cache holds a Python object now
    c_ref = weakref.ref(c)
    del p
    gc.collect()
    assert sorted(Node.deaths) == ["Child", "Parent", "Trans", "Weak"]  # the singleton lives in the cache
    del c
    gc.collect()
    assert c_ref() is None  # the container was collected, and closed
    assert all(ref() is None for ref in refs)
    assert sorted(Node.deaths) == ["Child", "Parent", "Single", "Trans", "Weak"]  # each once
    assert object_table.live_count() == before


def test_container_referenced_by_its_factories_is_still_collected():
    before = object_table.live_count()
    c = tether.Container()
    c.register("Self", lambda: {"container": c})
    c.register("S", lambda: Node("S"), scope=Scope.SINGLETON)
    c.resolve("S")
    c_ref = weakref.ref(c)
    del c
    gc.collect()
    assert c_ref() is None
    assert Node.deaths == ["S"]
    assert object_table.live_count() == before


def test_instances_outlive_their_container():
    with tether.Container() as c:
        c.register("S", lambda: Node("S"), scope=Scope.SINGLETON)
        s = c.resolve("S")
    gc.collect()
    assert Node.deaths == [] and s.name == "S"
    del s
    assert Node.deaths == ["S"]


def test_trampolines_are_released_with_their_registration(c):
    def factory():
        return Node("x")

    def complete(r, obj):
        pass

    c.register("K", factory, on_complete=complete)
    c.resolve("K")
    reg = c._regs[b"K"]
    trampolines = [weakref.ref(t) for t in reg.callables]
    factory_ref, complete_ref = weakref.ref(factory), weakref.ref(complete)
    del factory, complete, reg
    c.register("K", Node)  # replacing the key frees the old trampolines and callables
    gc.collect()
    assert [t() for t in trampolines] == [None, None]
    assert factory_ref() is None and complete_ref() is None
    assert c.resolve("K").name == ""


def test_trampolines_are_released_when_the_container_closes():
    def factory():
        return Node()

    c = tether.Container()
    c.register("K", factory)
    trampoline = weakref.ref(c._regs[b"K"].callables[0])
    factory_ref = weakref.ref(factory)
    del factory
    c.close()
    gc.collect()
    assert trampoline() is None and factory_ref() is None


def test_reregistering_a_key_from_its_own_factory_is_safe(c):
    def first():
        c.register("K", lambda: Node("second"))  # the running trampoline must survive its own retirement
        return Node("first")

    c.register("K", first)
    assert c.resolve("K").name == "first"
    assert c.resolve("K").name == "second"
    assert tether._state.retired == []  # freed once no resolve was running


def test_singleton_of_a_registration_replaced_while_it_ran_lives_while_c_holds_it(c):
    def first():
        c.register("K", Node, scope=Scope.SINGLETON)  # the library will not cache what this returns
        return Node("first")

    c.register("K", first, scope=Scope.SINGLETON)
    c.register("Holder", lambda k: Node("holder"), deps=["K"], scope=Scope.SINGLETON)  # a C edge only
    c.resolve("Holder")
    gc.collect()
    assert "first" not in Node.deaths  # held for the edge from the cached Holder
    c.close()
    gc.collect()
    assert "first" in Node.deaths


def test_weak_scope_reuses_exactly_while_python_holds_it(c, count):
    def make():
        count("made")
        return Node("w")

    c.register("W", make, scope=Scope.WEAK)
    c.register("User", lambda w: {"w": w}, deps=["W"])
    w = c.resolve("W")
    assert c.resolve("W") is w  # held by Python: reused
    assert c.resolve("User")["w"] is w  # also as a dependency of a new graph
    assert count["made"] == 1
    del w
    gc.collect()
    w2 = c.resolve("W")  # nobody held it: a new one
    assert count["made"] == 2 and Node.deaths == ["w"]
    c.reset(Scope.WEAK)
    assert c.resolve("W") is not w2  # reset forgets it even while held
    assert count["made"] == 3


def test_weak_scope_reuse_does_not_rerun_completion(c, count):
    c.register("W", Node, scope=Scope.WEAK, on_complete=lambda r, w: count("completed"))
    c.register("User", lambda w: {"w": w}, deps=["W"])
    w = c.resolve("W")
    c.resolve("User")
    c.resolve("W")
    assert count["completed"] == 1
    del w


def test_weak_scope_without_weakref_support_is_reused_only_while_c_holds_it(c, count):
    def make():
        count("made")
        return {"no": "weakref"}  # dicts cannot be weakly referenced

    c.register("W", make, scope=Scope.WEAK)
    c.register("Pair", lambda a, b: (a, b), deps=["W", "W"])
    a, b = c.resolve("Pair")
    assert a is b  # shared within a resolve (the graph holds it)
    held = c.resolve("W")
    assert c.resolve("W") is not held  # Python's reference is invisible: a new one next time
    assert count["made"] == 3


def test_weak_dependency_on_an_object_without_weakref_support_fails_clearly(c):
    c.register("Plain", dict)
    c.register("Holder", lambda w: w, deps=[tether.weak("Plain")])
    with pytest.raises(tether.FactoryError) as info:
        c.resolve("Holder")
    assert isinstance(info.value.__cause__, TypeError)
    assert "__weakref__" in str(info.value.__cause__)


def test_resolver_weak_to_an_object_without_weakref_support_fails_clearly(c):
    c.register("Plain", dict)
    c.register("Holder", Node, on_complete=lambda r, h: setattr(h, "plain", r.weak("Plain")))
    with pytest.raises(tether.FactoryError) as info:
        c.resolve("Holder")
    assert isinstance(info.value.__cause__, TypeError)
    assert "__weakref__" in str(info.value.__cause__)


def test_weak_dependency_is_a_weakref(c):
    class Holder:
        def __init__(self, target: Any) -> None:
            self.target = target

    c.register("T", Node, scope=Scope.SINGLETON)
    c.register("H", Holder, deps=[tether.weak("T")])
    h = c.resolve("H")
    assert isinstance(h.target, weakref.ReferenceType)
    assert h.target() is c.resolve("T")
    c.reset(Scope.SINGLETON)
    gc.collect()
    assert h.target() is None


def test_lazy_after_its_container_closed(count):
    c = tether.Container()
    c.register("Target", Node)
    c.register("Holder", lambda later: {"later": later}, deps=[tether.lazy("Target")])
    h = c.resolve("Holder")
    c.close()
    with pytest.raises(tether.InvalidHandleError, match="freed"):  # the library's word for it
        h["later"]()


def test_a_lazy_that_resolved_fails_once_its_container_closed():
    """As the library's lazy slot: from the free on, every call fails (conformance:
    lazy_after_container_freed); until then the same object."""
    made: list[Node] = []
    c = tether.Container()
    c.register("Target", lambda: made.append(Node("t")) or made[-1])
    c.register("Holder", lambda later, weak: {"later": later, "weak": weak},
               deps=[tether.lazy("Target"), tether.weak_lazy("Target")])
    h = c.resolve("Holder")
    target = h["later"]()
    assert h["later"]() is target and h["weak"]() is not None and len(made) == 2
    c.register("Other", Node)  # a configuration change: the library confirms, the answer stays
    assert h["later"]() is target
    c.close()
    for call in (h["later"], h["later"], h["weak"]):
        with pytest.raises(tether.InvalidHandleError, match="freed"):
            call()
    del target
    made.clear()


def test_a_weak_lazy_returns_none_when_nothing_holds_what_it_resolved():
    """Conformance weak_lazy_first_call_with_nobody_holding_it: held weakly from the first call."""
    made: list[str] = []
    c = tether.Container()
    c.register("Target", lambda: made.append("t") or Node("t"), scope=tether.Scope.WEAK)
    c.register("Holder", lambda weak: {"weak": weak}, deps=[tether.weak_lazy("Target")])
    h = c.resolve("Holder")
    assert h["weak"]() is None and made == ["t"]
    assert h["weak"]() is None and made == ["t"]  # resolved once: it holds what it got, weakly
    held = c.resolve("Target")  # a new one; the weak-lazy's answer is the first, gone
    assert h["weak"]() is None and held is not None
    c.close()


def test_many_resolves_leave_nothing_behind(c):
    before = object_table.live_count()
    def make_parent(child):
        parent = Node("p")
        parent.child = child
        return parent

    c.register("Parent", make_parent, deps=["Child"])
    c.register("Child", Node, on_complete=lambda r, ch: setattr(ch, "parent", r.weak("Parent")))
    for _ in range(2000):
        c.resolve("Parent")
    gc.collect()
    assert object_table.live_count() == before


def test_parent_and_child_containers_in_a_garbage_cycle_are_both_closed():
    before = object_table.live_count()
    parent = tether.Container()
    child = tether.Container(parent)
    parent.register("S", lambda: Node("parent singleton"), scope=Scope.SINGLETON)
    child.register("T", lambda: Node("child singleton"), scope=Scope.SINGLETON)
    parent.register("cycle", lambda: child)  # parent -> registration -> closure -> child -> parent
    child.resolve("S")
    child.resolve("T")
    refs = weakref.ref(parent), weakref.ref(child)
    del parent, child
    gc.collect()
    assert refs[0]() is None and refs[1]() is None
    assert sorted(Node.deaths) == ["child singleton", "parent singleton"]
    assert object_table.live_count() == before


def test_a_parent_finalized_before_its_child_closes_with_the_child():
    parent = tether.Container()
    child = tether.Container(parent)
    parent.__del__()  # what the collector may do first in a cycle: the child is still open
    assert not parent.closed
    child.close()
    assert parent.closed


def test_a_singleton_referencing_its_container_does_not_keep_it_alive():
    before = object_table.live_count()

    class Service:
        def __init__(self) -> None:
            self.container = c  # container -> singleton cache -> service -> container

    c = tether.Container()
    c.register("S", Service, scope=Scope.SINGLETON)
    service = weakref.ref(c.resolve("S"))
    container = weakref.ref(c)
    del c
    gc.collect()
    assert container() is None and service() is None
    assert object_table.live_count() == before


def test_failed_resolve_does_not_remember_its_singleton(c):
    c.register("S", Node, scope=Scope.SINGLETON)
    c.register("Top", lambda s: 1 / 0, deps=["S"])
    with pytest.raises(tether.FactoryError):
        c.resolve("Top")
    gc.collect()
    cell = c._regs[b"S"].cached  # the library's abort dropped it, which emptied its cell
    assert (cell is None or cell.obj is None) and Node.deaths == [""]
    assert isinstance(c.resolve("S"), Node) and c.resolve("S") is c.resolve("S")  # made anew, once
