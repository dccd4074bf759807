"""Container.resolve's hot path (tether_resolve_key_collect): Python runs the collected drops
itself, nested resolves use buffers of their own, and a resolve that would wait for the creation
lock while keeping the GIL is retried the ordinary way."""

import threading
import weakref

import pytest
from conftest import container

import tether
from tether import Scope, object_table


class Leaf:
    pass


class Mid:
    def __init__(self, leaf: Leaf) -> None:
        self.leaf = leaf


class Top:
    def __init__(self, mid: Mid) -> None:
        self.mid = mid


def test_drops_are_run_by_python_once_each(c):
    for cls in (Leaf, Mid, Top):
        c.register(cls, scope=Scope.TRANSIENT)
    top = c.resolve(Top)
    assert isinstance(top.mid.leaf, Leaf)
    assert object_table.live_count() == 0  # every C box let go of its object
    leaf = weakref.ref(top.mid.leaf)
    del top
    assert leaf() is None  # Python's references alone decided


@pytest.mark.parametrize("plans", [True, False], ids=["plans", "noplans"])
def test_many_drops_beyond_the_buffer_are_run_by_python(plans):
    c = container(plans=plans)  # without plans, through the library: more drops than its buffer holds
    width = tether._cabi.DROP_CAPACITY + 10
    keys = [f"L{i}" for i in range(width)]
    for key in keys:
        c.register(key, Leaf, deps=[], scope=Scope.TRANSIENT)
    made = []
    c.register("Wide", lambda *leaves: made.append(leaves) or object.__new__(Leaf), deps=keys, scope=Scope.TRANSIENT)
    assert isinstance(c.resolve("Wide"), Leaf)
    assert len(made[0]) == width and object_table.live_count() == 0
    c.close()


class Named:
    """Logs its name when it dies, then lets go of what it holds, last first."""

    def __init__(self, name: str, log: list[str], *held: object) -> None:
        self.name, self.log, self.held = name, log, list(held)

    def __del__(self) -> None:
        self.log.append(self.name)
        held, self.held = self.held, []
        while held:
            held.pop()


@pytest.mark.parametrize("plans", [True, False], ids=["plans", "noplans"])
def test_a_failure_letting_go_of_more_than_the_buffer_tears_down_in_the_models_order(plans):
    """The corpus's a_failure_after_a_container_step_past_the_64th_step_publishes_nothing in small:
    through the library (no plans), the drops past the buffer come after the call in the order they
    came due (the library keeps them, RESOLVE_MORE_DROPS), so the leaves Wide holds die as the
    library lets go of them, last made first, not those past the buffer first."""
    c = container(plans=plans)
    width = tether._cabi.DROP_CAPACITY + 10
    log: list[str] = []
    keys = [f"L{i}" for i in range(width)]
    def leaf(key: str) -> object:
        return lambda: Named(key, log)

    for key in keys:
        c.register(key, leaf(key), deps=[], scope=Scope.TRANSIENT)
    c.register("Wide", lambda *leaves: Named("Wide", log, *leaves), deps=keys, scope=Scope.TRANSIENT)

    def broken():
        raise RuntimeError("no")

    c.register("Broken", broken, deps=[])
    c.register("Top", lambda wide, broken: Named("Top", log, wide), deps=["Wide", "Broken"])
    with pytest.raises(tether.FactoryError) as info:
        c.resolve("Top")
    assert isinstance(info.value.__cause__, RuntimeError)
    assert log == ["Wide", *reversed(keys)]  # dependents first, then last made first, across the buffer
    assert object_table.live_count() == 0
    c.close()


def test_nested_resolve_collects_into_its_own_buffer(c):
    seen = []

    def outer(leaf):
        seen.append(c.resolve(Top))  # inside the outer C call: a buffer of its own
        return Mid(leaf)

    for cls in (Leaf, Mid, Top):
        c.register(cls, scope=Scope.TRANSIENT)
    c.register("Outer", outer, deps=[Leaf], scope=Scope.TRANSIENT)
    mid = c.resolve("Outer")
    assert isinstance(mid, Mid) and isinstance(seen[0].mid.leaf, Leaf)
    assert object_table.live_count() == 0


def test_failed_resolve_runs_what_it_made(c):
    def broken(leaf):
        raise RuntimeError("no")

    c.register(Leaf, scope=Scope.TRANSIENT)
    c.register("Broken", broken, deps=[Leaf])
    with pytest.raises(tether.FactoryError) as info:
        c.resolve("Broken")
    assert isinstance(info.value.__cause__, RuntimeError)
    assert object_table.live_count() == 0


def test_resolve_that_would_block_is_retried_waiting(c):
    holding, release = threading.Event(), threading.Event()
    made = {"Slow": 0, "Other": 0, "Leaf": 0}

    def slow():
        made["Slow"] += 1
        holding.set()
        release.wait(30)  # the GIL is free here, the key's creation cell is not
        return Leaf()

    def leaf():
        made["Leaf"] += 1
        return Leaf()

    def other():
        made["Other"] += 1
        return Leaf()

    c.register("Slow", slow, deps=[], scope=Scope.SINGLETON)
    c.register("Other", other, deps=[], scope=Scope.SINGLETON)
    c.register("Leaf", leaf, deps=[], scope=Scope.TRANSIENT)
    c.register("Both", lambda a, b: Mid(a), deps=["Leaf", "Other"], scope=Scope.TRANSIENT)
    holder = threading.Thread(target=lambda: c.resolve("Slow"), daemon=True)
    holder.start()
    assert holding.wait(30)
    timer = threading.Timer(0.2, release.set)  # while this thread waits for the lock, GIL released
    timer.start()
    both = c.resolve("Both")
    holder.join(30)
    assert isinstance(both, Mid) and made == {"Slow": 1, "Other": 1, "Leaf": 1}  # the try that met the lock ran none
    assert c.resolve("Other") is c.resolve("Other")
    del both
    assert object_table.live_count() == 2  # the two singletons' boxes, nothing of the failed try
