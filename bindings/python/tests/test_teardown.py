"""Teardown: generator factories and close=, run when the library lets go of the instance, in the
library's order (dependents first, last made first), exactly once, failures gathered."""

from __future__ import annotations

import sys
from typing import Iterator

import pytest

import tether
from tether import Scope, teardown


class Settings:
    pass


class Db:
    def __init__(self, settings: Settings) -> None:
        self.settings = settings


class Repo:
    def __init__(self, db: Db) -> None:
        self.db = db


class Cache:
    pass


def generator(log: list[str], name: str, cls: type) -> object:
    """A generator factory for ``cls`` (its deps autowired from ``cls.__init__``'s hints) logging its teardown."""

    def make(*args: object) -> Iterator[object]:
        obj = cls(*args)
        yield obj
        log.append(name)

    return make


def test_close_tears_down_dependents_first_exactly_once() -> None:
    log: list[str] = []
    c = tether.Container()
    c.register(Settings, scope=Scope.SINGLETON, close=lambda s: log.append("Settings"))
    c.register(Db, generator(log, "Db", Db), deps=[Settings], scope=Scope.SINGLETON)
    c.register(Repo, generator(log, "Repo", Repo), deps=[Db], scope=Scope.SINGLETON)
    c.register(Cache, generator(log, "Cache", Cache), scope=Scope.SINGLETON)
    c.resolve(Cache)
    repo = c.resolve(Repo)  # made Settings, Db, Repo after Cache
    assert log == []
    c.close()
    assert log == ["Repo", "Db", "Settings", "Cache"]  # last made first: dependents before dependencies
    c.close()  # idempotent: nothing runs twice
    assert log == ["Repo", "Db", "Settings", "Cache"]
    assert repo.db.settings is not None  # the objects themselves live on with Python's references
    assert teardown.pending_count() == 0


def test_every_teardown_runs_and_failures_are_gathered() -> None:
    log: list[str] = []
    c = tether.Container()

    def failing(name: str, exc: Exception):
        def close(_obj: object) -> None:
            log.append(name)
            raise exc

        return close

    first, second = OSError("disk"), ValueError("bad state")
    c.register(Settings, scope=Scope.SINGLETON, close=failing("Settings", first))
    c.register(Db, scope=Scope.SINGLETON, close=lambda _db: log.append("Db"))
    c.register(Repo, scope=Scope.SINGLETON, close=failing("Repo", second))
    c.resolve(Repo)
    with pytest.raises(tether.TeardownError) as caught:
        c.close()
    assert log == ["Repo", "Db", "Settings"]
    assert caught.value.exceptions == (second, first)  # in the order the teardowns ran
    assert isinstance(caught.value, tether.TetherError)
    if sys.version_info >= (3, 11):
        assert isinstance(caught.value, ExceptionGroup)  # noqa: F821
    assert "2 teardowns failed" in str(caught.value)
    assert c.closed
    c.close()  # already closed: nothing again
    assert log == ["Repo", "Db", "Settings"]


def test_a_failed_resolve_tears_down_what_it_made_once() -> None:
    log: list[str] = []
    c = tether.Container()
    c.register(Settings, generator(log, "Settings", Settings), scope=Scope.SINGLETON)
    c.register(Db, generator(log, "Db", Db), deps=[Settings])

    def broken(db: Db) -> Repo:
        raise RuntimeError("no connection")

    c.register(Repo, broken, deps=[Db])
    with pytest.raises(tether.FactoryError):
        c.resolve(Repo)
    assert log == ["Db", "Settings"]  # the singleton was not cached either
    assert teardown.pending_count() == 0
    c.close()
    assert log == ["Db", "Settings"]


def test_graph_scoped_teardown_runs_when_the_library_lets_go() -> None:
    # A GRAPH instance the caller took is no longer held by the library once the resolve returns.
    log: list[str] = []
    with tether.Container() as c:
        c.register(Settings, generator(log, "Settings", Settings))
        c.register(Db, generator(log, "Db", Db), deps=[Settings])
        db = c.resolve(Db)
        assert log == ["Db", "Settings"]
        assert isinstance(db.settings, Settings)
    assert log == ["Db", "Settings"]


def test_reset_and_reregistration_tear_down_what_they_drop() -> None:
    log: list[str] = []
    c = tether.Container()
    c.register(Db, lambda: Db(Settings()), scope=Scope.SINGLETON, close=lambda _db: log.append("old"))
    c.resolve(Db)
    c.reset(Scope.SINGLETON)
    assert log == ["old"]
    c.resolve(Db)
    c.register(Db, lambda: Db(Settings()), scope=Scope.SINGLETON, close=lambda _db: log.append("new"))
    assert log == ["old", "old"]
    c.resolve(Db)
    c.close()
    assert log == ["old", "old", "new"]


def test_a_cycle_tears_down_in_reverse_completion_order() -> None:
    # Parent needs Child; Child takes its Parent weakly when completed: Child completes first.
    log: list[str] = []

    class Child:
        parent = None

    class Parent:
        def __init__(self, child: Child) -> None:
            self.child = child

    root = tether.Container()
    root.register(Child, scope=Scope.CONTAINER, close=lambda _c: log.append("Child"),
                  on_complete=tether.complete(lambda child, parent: setattr(child, "parent", parent), deps=[tether.weak(Parent)]))
    root.register(Parent, scope=Scope.CONTAINER, deps=[Child], close=lambda _p: log.append("Parent"))
    with tether.Container(parent=root) as request:
        parent = request.resolve(Parent)
        assert parent.child.parent() is parent
        assert log == []
    assert log == ["Parent", "Child"]
    root.close()
    assert log == ["Parent", "Child"]


def test_generator_misuse_is_reported() -> None:
    c = tether.Container()

    def no_yield() -> Iterator[Db]:
        return
        yield  # noqa: unreachable: makes it a generator

    def twice() -> Iterator[Db]:
        yield Db(Settings())
        yield Db(Settings())

    c.register("none", no_yield)
    with pytest.raises(tether.FactoryError) as caught:
        c.resolve("none")
    assert "without yielding" in str(caught.value.__cause__)
    with pytest.raises(TypeError, match="close= is for other factories"):
        c.register("both", twice, close=print)
    with pytest.raises(TypeError, match="WEAK"):
        c.register("weak", twice, scope=Scope.WEAK)
    c.register("twice", twice, scope=Scope.SINGLETON)
    c.resolve("twice")
    with pytest.raises(tether.TeardownError) as gathered:
        c.close()
    assert "yielded more than once" in str(gathered.value.exceptions[0])


def test_decorated_generator_is_keyed_by_its_yield_type() -> None:
    log: list[str] = []
    with tether.Container() as c:
        c.register(Settings, scope=Scope.SINGLETON)

        @c.register(scope=Scope.SINGLETON)
        def make_db(settings: Settings) -> Iterator[Db]:
            yield Db(settings)
            log.append("Db")

        assert isinstance(c.resolve(Db), Db)
    assert log == ["Db"]
