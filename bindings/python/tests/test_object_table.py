"""The binding's table of Python objects held by C boxes: fast boxes, counted boxes, DROP_FAST."""

import gc
import threading
import weakref

import pytest

import tether
from tether import Scope, object_table


class Plain:
    pass


class Shared:
    """A class whose __new__ returns one shared instance: calling it is not a fresh object."""

    instance: "Shared | None" = None

    def __new__(cls) -> "Shared":
        if cls.instance is None:
            cls.instance = super().__new__(cls)
        return cls.instance


class Dep:
    def __init__(self, plain: Plain) -> None:
        self.plain = plain


def test_fresh_class_is_only_a_class_that_always_makes_a_new_plain_object():
    import ctypes
    import enum

    class S(ctypes.Structure):
        _fields_ = [("a", ctypes.c_int)]

    class E(enum.Enum):
        X = 1

    assert object_table.fresh_class(Plain)
    assert not object_table.fresh_class(Shared)  # own __new__
    assert not object_table.fresh_class(S)  # ctypes data: C gets the buffer address
    assert not object_table.fresh_class(E)  # metaclass __call__ returns members
    assert not object_table.fresh_class(lambda: Plain())
    assert not object_table.fresh_class(dict)


def test_class_factories_in_transient_and_graph_scope_use_the_fast_destructor(c):
    c.register(Plain, scope=Scope.TRANSIENT)
    c.register(Dep)
    c.register("Lambda", lambda: Plain())
    c.register("Single", Plain, scope=Scope.SINGLETON)
    assert c._regs[tether.markers.encode_key(Plain)].fresh
    assert c._regs[tether.markers.encode_key(Dep)].fresh
    assert not c._regs[b"Lambda"].fresh
    assert not c._regs[b"Single"].fresh
    before = object_table.live_count()
    dep = c.resolve(Dep)
    assert isinstance(dep.plain, Plain)
    assert object_table.live_count() == before  # both boxes gone when resolve returned
    ref = weakref.ref(dep.plain)
    del dep
    gc.collect()
    assert ref() is None


def test_one_object_in_several_boxes_at_once_stays_until_the_last_is_gone(c):
    """A fresh box (DROP_FAST) and counted boxes of the same object, released in either order."""
    c.register(Plain)  # GRAPH, fresh: DROP_FAST
    c.register("Same", lambda plain: plain, deps=[Plain])  # a second box of the very same object
    c.register("Again", lambda same: same, deps=["Same"])  # and a third
    before = object_table.live_count()
    obj = c.resolve("Again")
    assert isinstance(obj, Plain)
    assert object_table.live_count() == before
    ref = weakref.ref(obj)
    del obj
    gc.collect()
    assert ref() is None


def test_a_shared_instance_from_a_class_with_its_own_new_is_counted(c):
    Shared.instance = None
    c.register(Shared, scope=Scope.TRANSIENT)
    c.register("Holder", lambda a, b: (a, b), deps=[Shared, Shared])
    a, b = c.resolve("Holder")
    assert a is b is Shared.instance
    Shared.instance = None


def test_boxes_of_one_object_from_many_threads_balance(c):
    shared = Plain()
    c.register("Shared", lambda: shared, scope=Scope.TRANSIENT)
    c.register(Dep, deps=["Shared"], scope=Scope.TRANSIENT)
    before = object_table.live_count()
    errors: list[BaseException] = []

    def work() -> None:
        try:
            for _ in range(300):
                assert c.resolve(Dep).plain is shared
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert not errors
    assert object_table.live_count() == before


def test_a_stale_cause_is_never_attached_to_a_later_failure(c):
    """A factory exception that C swallowed must not become the cause of an unrelated error."""

    def boom() -> Plain:
        raise KeyError("from an earlier resolve")

    c.register("Boom", boom)
    tether._state.park(KeyError("stale"))  # as if a failure inside some other resolve was swallowed
    with pytest.raises(tether.NotFoundError) as info:
        c.resolve("Missing")
    assert info.value.__cause__ is None
    with pytest.raises(tether.FactoryError) as info2:
        c.resolve("Boom")
    assert isinstance(info2.value.__cause__, KeyError)
    tether._state.tls.pending = None


class WithArgs:
    def __init__(self, plain: Plain, weak_plain: object, n: int) -> None:
        self.plain = plain
        self.weak_plain = weak_plain
        self.n = n


def test_a_class_factory_with_weak_slots_and_arguments_is_fresh_too(c):
    c.register(Plain)
    c.register(WithArgs, deps=[Plain, tether.weak(Plain), int], scope=Scope.TRANSIENT)
    assert c._regs[tether.markers.encode_key(WithArgs)].fresh
    before = object_table.live_count()
    obj = c.resolve(WithArgs, 7)
    assert obj.n == 7 and obj.weak_plain() is obj.plain
    assert object_table.live_count() == before
    ref = weakref.ref(obj)
    del obj
    gc.collect()
    assert ref() is None


def test_a_fresh_object_returned_again_by_a_lambda_factory_meanwhile(c):
    """The fresh box and a fast box of the same object, released in either order."""
    keep: list[Plain] = []
    c.register(Plain, scope=Scope.TRANSIENT)
    c.register("Keep", lambda p: keep.append(p) or p, deps=[Plain], scope=Scope.TRANSIENT)
    c.register("Again", lambda: keep[-1], scope=Scope.TRANSIENT)
    c.register("Both", lambda a, b: (a, b), deps=["Keep", "Again"])
    a, b = c.resolve("Both")
    assert a is b is keep[-1]
    assert object_table.held(id(a)) is None  # every box released
