"""A WEAK-scoped Python object is reused while Python holds it, until the library forgets it for
another reason than its box dying: a reset of the weak scope, a re-registration or a scope change,
from Python or from C code sharing the container (``tether_reset(c.handle, TETHER_SCOPE_WEAK)``),
here or in a parent. After one, the next resolve, from Python or C, makes a new object; changes
that forget nothing of it (a singleton reset, another key registered) never do. Every test runs
on containers that replay plans (``make``; on containers made with TETHER_NO_PLANS=1 too until
branch noplansoff)."""

from __future__ import annotations

import threading
import time
from ctypes import byref, c_void_p
from typing import Any

from test_native_refs import lib, register_native  # noqa: F401 (lib: the fixture)
from test_singleton_hits import c_resolve, make, served  # noqa: F401 (make: the fixture)

import pytest

import tether
from tether import Scope

api = tether._loader.api()


def c_reset_weak(c: tether.Container) -> None:
    """What C code sharing the container does: a weak-scope reset on its handle, unknown to the binding."""
    assert api.tether_reset(c.handle, int(Scope.WEAK)) == 0, api.last_error()


def held(c: tether.Container, key: str) -> Any:
    """Resolves ``key``, checks that the next resolve is served without a call, and returns it."""
    obj = c.resolve(key)
    assert served(c, key) is obj
    return obj


def test_a_reset_from_c_while_python_holds_the_object_makes_a_new_one(make):
    c = make()
    c.register("W", make.factory(), scope=Scope.WEAK)
    w = held(c, "W")
    c_reset_weak(c)
    w2 = c.resolve("W")
    assert w2 is not w and len(make.made) == 2
    assert c_resolve(c, "W") == id(w2)  # what a C client gets: the new one too
    assert held(c, "W") is w2 and len(make.made) == 2 and w is not w2  # w held throughout


def test_a_c_client_resolving_after_a_reset_from_c_gets_a_new_one(make):
    c = make()
    c.register("W", make.factory(), scope=Scope.WEAK)
    w = held(c, "W")
    c_reset_weak(c)
    assert c_resolve(c, "W") != id(w) and len(make.made) == 2
    assert c.resolve("W") is not w


def test_a_reset_from_c_of_the_parent_reaches_the_child(make):
    parent = make()
    child = make(parent)
    parent.register("W", make.factory(), scope=Scope.WEAK)
    w = held(child, "W")
    assert held(parent, "W") is w
    c_reset_weak(child)  # the registration is the parent's: nothing forgotten
    assert child.resolve("W") is w and len(make.made) == 1
    c_reset_weak(parent)
    w2 = child.resolve("W")
    assert w2 is not w and len(make.made) == 2
    assert held(parent, "W") is w2 and c_resolve(child, "W") == id(w2)


def test_a_singleton_reset_or_another_key_from_c_keeps_the_held_object(make, lib):
    c = make()
    c.register("W", make.factory(), scope=Scope.WEAK)
    c.register("S", make.factory("S"), scope=Scope.SINGLETON)
    c.register("User", lambda w: [w], deps=["W"])
    w = held(c, "W")
    c.resolve("S")
    assert api.tether_reset(c.handle, int(Scope.SINGLETON)) == 0  # the cache word moves
    assert c.resolve("W") is w
    register_native(lib, c, "Other")  # a configuration change: the word moves again
    assert c.resolve("W") is w and c.resolve("User")[0] is w and c_resolve(c, "W") == id(w)
    assert held(c, "W") is w
    c_reset_weak(c)
    c_reset_weak(c)  # nothing cached the second time
    w2 = c.resolve("W")
    assert w2 is not w and held(c, "W") is w2
    assert len([ref for ref in make.made if type(ref()).__qualname__ == "Service"]) == 2


def test_a_reset_from_python_still_makes_a_new_one(make):
    c = make()
    c.register("W", make.factory(), scope=Scope.WEAK)
    w = held(c, "W")
    c.reset(Scope.WEAK)
    w2 = c.resolve("W")
    assert w2 is not w and held(c, "W") is w2 and c_resolve(c, "W") == id(w2)


def test_reregistering_or_a_scope_change_from_c(make, lib):
    c = make()
    c.register("W", make.factory(), scope=Scope.WEAK)
    w = held(c, "W")
    registration = c._regs[b"W"].handle
    assert api.tether_set_scope(registration, int(Scope.SINGLETON)) == 0, api.last_error()
    s = c.resolve("W")
    assert s is not w and c.resolve("W") is s and c_resolve(c, "W") == id(s)
    register_native(lib, c, "W", Scope.WEAK)  # C code replaces the Python registration
    native = c.resolve("W")
    assert isinstance(native, tether.NativeRef)
    native.release()
    assert api.tether_registration_revive(registration, tether._cabi.REVIVE_FN(), None) == 2  # TETHER_E_INVALID_HANDLE


def test_the_library_hands_a_held_object_out_again_without_running_a_factory(make):
    """It decides (``tether_registration_revive``): asked before any factory of the key or its
    dependencies runs, and only while its instance died as a box (not after a reset)."""
    c = make()
    made: list[str] = []

    class Dep:
        def __init__(self) -> None:
            made.append("Dep")

    class W:
        def __init__(self, dep: Any) -> None:
            made.append("W")
            self.dep = dep

    completed: list[W] = []
    c.register("Dep", Dep)
    c.register("W", W, deps=["Dep"], scope=Scope.WEAK, on_complete=[lambda r, w: completed.append(w)])
    w = c.resolve("W")  # published; its box died when the resolve returned
    assert c.resolve("W") is w and c_resolve(c, "W") == id(w)
    assert made == ["Dep", "W"] and completed == [w]  # no factory, no callback again
    c_reset_weak(c)
    w2 = c.resolve("W")
    assert w2 is not w and made == ["Dep", "W", "Dep", "W"] and completed == [w, w2]


def test_resolves_racing_resets_from_c(make):
    c = make()
    c.register("W", make.factory(), scope=Scope.WEAK)
    stop = threading.Event()
    returned: list[Any] = []
    errors: list[BaseException] = []

    def resolve() -> None:
        try:
            while not stop.is_set():
                returned.append(c.resolve("W"))  # held: reused until a reset
        except BaseException as exc:
            errors.append(exc)

    def reset() -> None:
        try:
            for _ in range(50):
                seen = len(returned)
                deadline = time.monotonic() + 5
                while len(returned) == seen and time.monotonic() < deadline:
                    time.sleep(0)  # a resolve between two resets, however the threads are scheduled
                c_reset_weak(c)
                ref = c_void_p()
                assert api.tether_resolve(c.handle, b"W", byref(ref)) == 0, api.last_error()
                assert api.tether_ref_get(ref) and api.tether_ref_release(ref) == 0
        except BaseException as exc:
            errors.append(exc)
        finally:
            stop.set()

    threads = [threading.Thread(target=resolve) for _ in range(2)] + [threading.Thread(target=reset)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors, errors
    assert returned and all(make.by_id[id(obj)]() is obj for obj in returned)  # each made by the factory
    assert len(set(map(id, returned))) > 1  # resets were seen
    last = c.resolve("W")
    c_reset_weak(c)
    assert c.resolve("W") is not last


def test_an_object_a_failed_resolve_made_is_not_handed_out_again(make):
    """The library asks for the instance it published last, not for what a failed resolve made
    after it: that object's callbacks never finished, so the next resolve builds a new one."""
    c = make()
    made: list[Any] = []
    fail = [False]

    class W:
        def __init__(self) -> None:
            made.append(self)  # every object stays alive: only the library's choice matters

    def check(r: Any, w: W) -> None:
        if fail[0]:
            raise RuntimeError("not ready")
        w.ready = True

    c.register("W", W, scope=Scope.WEAK, on_complete=[check])
    w1 = c.resolve("W")
    del w1  # its box is dead; the object lives on in ``made``
    fail[0] = True
    assert c.resolve("W") is made[0]  # the published one, held: handed out again, nothing run
    made.clear()  # now nothing holds it
    with pytest.raises(tether.FactoryError):
        c.resolve("W")  # builds a new one, whose callback fails
    failed = made[-1]
    fail[0] = False
    w3 = c.resolve("W")
    assert w3 is not failed and getattr(w3, "ready", False)
