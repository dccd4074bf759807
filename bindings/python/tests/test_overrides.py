"""Overrides (Container.override, clear_override): who gets the override, which cached objects are
rebuilt when it starts and when it ends (identities, factory counts), teardown of the fake and of
what was built over it, stacking, children, and the errors."""

from __future__ import annotations

from typing import Iterator

import pytest

import tether
from tether import Scope


class Pool:
    pass


class FakePool(Pool):
    pass


class Repo:
    def __init__(self, pool: Pool) -> None:
        self.pool = pool


class Service:
    def __init__(self, repo: Repo) -> None:
        self.repo = repo


class Clock:
    pass


def app(made: dict[str, int], log: list[str] | None = None) -> tether.Container:
    c = tether.Container()

    def counted(cls: type) -> object:
        def make(*args: object) -> Iterator[object]:
            made[cls.__name__] = made.get(cls.__name__, 0) + 1
            obj = cls(*args)
            yield obj
            if log is not None:
                log.append(cls.__name__)

        return make

    c.register(Pool, counted(Pool), deps=[], scope=Scope.SINGLETON)
    c.register(Repo, counted(Repo), deps=[Pool], scope=Scope.SINGLETON)
    c.register(Service, counted(Service), deps=[Repo], scope=Scope.SINGLETON)
    c.register(Clock, counted(Clock), deps=[], scope=Scope.SINGLETON)
    return c


def test_with_override_rebuilds_dependents_over_the_fake_then_over_the_original() -> None:
    made: dict[str, int] = {}
    c = app(made)
    svc1, clock1, pool1 = c.resolve(Service), c.resolve(Clock), c.resolve(Pool)
    fake = FakePool()
    with c.override(Pool, fake) as o:
        assert isinstance(o, tether.Override)
        svc2 = c.resolve(Service)
        assert svc2 is not svc1 and svc2.repo.pool is fake
        assert c.resolve(Pool) is fake
        assert c.resolve(Service) is svc2  # cached again, over the fake
        assert c.resolve(Clock) is clock1  # not built over Pool: kept
    svc3 = c.resolve(Service)
    assert svc3 is not svc2 and svc3.repo.pool is pool1
    assert c.resolve(Pool) is pool1
    assert svc1.repo.pool is pool1  # what was resolved before keeps what it had
    assert made == {"Pool": 1, "Repo": 3, "Service": 3, "Clock": 1}
    c.close()


def test_plain_call_and_clear_override_teardown_order() -> None:
    made: dict[str, int] = {}
    log: list[str] = []
    c = app(made, log)
    c.resolve(Service)
    c.override(Pool, FakePool())
    assert log == ["Service", "Repo"]  # let go of when the override started, dependents first
    assert isinstance(c.resolve(Service).repo.pool, FakePool)
    c.clear_override(Pool)
    assert log == ["Service", "Repo", "Service", "Repo"]
    assert type(c.resolve(Service).repo.pool) is Pool
    c.close()
    assert log == ["Service", "Repo", "Service", "Repo", "Service", "Repo", "Pool"]


def test_factory_override_runs_its_teardown_and_stacks() -> None:
    made: dict[str, int] = {}
    c = app(made)
    closed: list[str] = []

    def fake_pool() -> Iterator[Pool]:
        yield FakePool()
        closed.append("fake")

    with c.override(Pool, factory=fake_pool, scope=Scope.SINGLETON):
        inner = FakePool()
        with c.override(Pool, inner):
            assert c.resolve(Service).repo.pool is inner
        first = c.resolve(Service).repo.pool
        assert isinstance(first, FakePool) and first is not inner
        assert c.resolve(Pool) is first
        assert closed == []
    assert closed == ["fake"]  # the fake singleton and what was built over it are gone
    assert type(c.resolve(Service).repo.pool) is Pool
    c.close()


def test_override_reaches_children_and_a_child_clear_does_not_end_it() -> None:
    made: dict[str, int] = {}
    c = app(made)
    fake = FakePool()
    with c.override(Pool, fake):
        with tether.Container(parent=c) as child:
            assert child.resolve(Service).repo.pool is fake
            with pytest.raises(tether.InvalidArgumentError, match="not overridden in this container"):
                child.clear_override(Pool)
            assert child.resolve(Pool) is fake
    assert type(c.resolve(Pool)) is Pool
    c.close()


def test_override_in_a_child_leaves_the_parent() -> None:
    made: dict[str, int] = {}
    c = app(made)
    child = tether.Container(parent=c)
    fake = FakePool()
    with child.override(Pool, fake):
        assert child.resolve(Pool) is fake
        assert c.resolve(Pool) is not fake
    assert child.resolve(Pool) is c.resolve(Pool)
    child.close()
    c.close()


def test_register_while_overridden_goes_under_the_override() -> None:
    made: dict[str, int] = {}
    c = app(made)
    fake = FakePool()
    o = c.override(Pool, fake)

    class Other(Pool):
        pass

    c.register(Pool, Other, deps=[], scope=Scope.SINGLETON)
    assert c.resolve(Pool) is fake
    o.clear()
    o.clear()  # once
    assert type(c.resolve(Pool)) is Other
    c.close()


def test_clear_without_override_and_wrong_use() -> None:
    c = tether.Container()
    c.register(Pool, scope=Scope.SINGLETON)
    with pytest.raises(tether.InvalidArgumentError, match="not overridden in this container"):
        c.clear_override(Pool)
    with pytest.raises(TypeError, match="exactly one"):
        c.override(Pool)
    with pytest.raises(TypeError, match="exactly one"):
        c.override(Pool, FakePool(), factory=FakePool)
    c.close()


def test_closing_while_overridden_lets_go_of_the_fake() -> None:
    import weakref

    c = app({})
    fake = FakePool()
    ref = weakref.ref(fake)
    c.override(Pool, fake)
    c.resolve(Service)
    del fake
    assert ref() is not None
    c.close()
    assert ref() is None
