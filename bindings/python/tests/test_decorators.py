"""Decorators (Container.decorate): what resolves and dependents get, the order several apply in,
autowired dependencies after the instance, caching of the decorated result (counts), teardown
order (decorators' before the original's), re-registration, validate/DOT, and the errors."""

from __future__ import annotations

from typing import Iterator

import pytest

import tether
from tether import Scope


class Log:
    def __init__(self) -> None:
        self.lines: list[str] = []


class Db:
    pass


class Audited(Db):
    def __init__(self, inner: Db, log: Log) -> None:
        self.inner, self.log = inner, log


class Cached(Db):
    def __init__(self, inner: Db) -> None:
        self.inner = inner


class Repo:
    def __init__(self, db: Db) -> None:
        self.db = db


def test_decorators_apply_in_order_and_dependents_get_the_result() -> None:
    made: list[str] = []
    with tether.Container() as c:
        c.register(Log, scope=Scope.SINGLETON)
        c.register(Db, lambda: made.append("Db") or Db(), deps=[], scope=Scope.SINGLETON)
        c.register(Repo)

        def audit(db: Db, log: Log) -> Db:  # deps autowired after the instance
            made.append("audit")
            return Audited(db, log)

        c.decorate(Db, audit)
        c.decorate(Db, lambda db: made.append("cache") or Cached(db))
        db = c.resolve(Db)
        assert isinstance(db, Cached) and isinstance(db.inner, Audited) and type(db.inner.inner) is Db
        assert db.inner.log is c.resolve(Log)
        assert c.resolve(Db) is db  # the key's scope: the decorated result, cached once
        assert c.resolve(Repo).db is db and c.resolve(Repo).db is db
        assert made == ["Db", "audit", "cache"]


def test_graph_scope_decorates_every_instance_also_from_plans() -> None:
    with tether.Container() as c:
        c.register(Db)
        c.register(Repo)
        c.decorate(Db, Cached)
        repos = [c.resolve(Repo) for _ in range(4)]  # the first through the library, the rest replayed
        assert all(isinstance(r.db, Cached) and type(r.db.inner) is Db for r in repos)
        assert len({id(r.db) for r in repos}) == 4


def test_teardown_runs_decorators_first_then_the_original() -> None:
    log: list[str] = []

    def make_db() -> Iterator[Db]:
        yield Db()
        log.append("db closed")

    def wrap(db: Db) -> Iterator[Db]:
        yield Cached(db)
        log.append("wrapper closed")

    c = tether.Container()
    c.register(Db, make_db, scope=Scope.SINGLETON)
    c.decorate(Db, wrap)
    c.decorate(Db, Cached, close=lambda obj: log.append("outer closed"))
    c.resolve(Db)
    c.close()
    assert log == ["outer closed", "wrapper closed", "db closed"]


def test_explicit_deps_and_string_keys() -> None:
    with tether.Container() as c:
        c.register("greeting", lambda: "hello", deps=[])
        c.register("name", lambda: "ada", deps=[])
        c.decorate("greeting", lambda text, name: f"{text}, {name}", deps=["name"])
        assert c.resolve("greeting") == "hello, ada"


def test_decorating_drops_what_was_cached_and_registering_again_ends_it() -> None:
    with tether.Container() as c:
        c.register(Db, scope=Scope.SINGLETON)
        c.register(Repo, scope=Scope.SINGLETON)
        before = c.resolve(Repo)
        c.decorate(Db, Cached)
        after = c.resolve(Repo)
        assert after is not before and isinstance(after.db, Cached)
        c.validate()
        assert "Db (before decorator 1)" in c.to_dot()
        c.register(Db, scope=Scope.SINGLETON)
        assert type(c.resolve(Db)) is Db
        assert "before decorator" not in c.to_dot()


def test_errors() -> None:
    with tether.Container() as c:
        with pytest.raises(tether.NotFoundError, match="register"):
            c.decorate(Db, Cached)
        c.register(Db)
        with pytest.raises(TypeError, match="first one receives the instance"):
            c.decorate(Db, lambda: Db())
        with c.override(Db, Db()):
            with pytest.raises(tether.InvalidArgumentError, match="overridden"):
                c.decorate(Db, Cached)
        with tether.Container(parent=c) as child:
            with pytest.raises(tether.NotFoundError):
                child.decorate(Db, Cached)


def test_reset_lets_go_of_the_decorated_singleton_and_its_original() -> None:
    log: list[str] = []
    made: list[str] = []

    def make_db() -> Iterator[Db]:
        made.append("db")
        yield Db()
        log.append("db")

    def wrap(db: Db) -> Iterator[Db]:
        made.append("wrap")
        yield Cached(db)
        log.append("wrap")

    with tether.Container() as c:
        c.register(Db, make_db, scope=Scope.SINGLETON)
        c.decorate(Db, wrap)
        first = c.resolve(Db)
        c.reset(Scope.SINGLETON)
        assert log == ["wrap", "db"]
        second = c.resolve(Db)
        assert second is not first and isinstance(second, Cached) and made == ["db", "wrap", "db", "wrap"]
    assert log == ["wrap", "db", "wrap", "db"]


def test_async_decorator_of_an_async_singleton() -> None:
    import asyncio

    made: list[str] = []

    async def make_db() -> Db:
        await asyncio.sleep(0)
        made.append("db")
        return Db()

    async def wrap(db: Db) -> Db:
        await asyncio.sleep(0)
        made.append("wrap")
        return Cached(db)

    async def main() -> None:
        async with tether.Container() as c:
            c.register(Db, make_db, scope=Scope.SINGLETON)
            c.decorate(Db, wrap)
            a, b = await c.aresolve(Db), await c.aresolve(Db)
            assert isinstance(a, Cached) and type(a.inner) is Db and a is b

    asyncio.run(main())
    assert made == ["db", "wrap"]


def test_an_override_replaces_the_decorated_key_until_it_ends() -> None:
    with tether.Container() as c:
        c.register(Db, scope=Scope.SINGLETON)
        c.decorate(Db, Cached)
        decorated = c.resolve(Db)
        fake = Db()
        with c.override(Db, fake):
            assert c.resolve(Db) is fake  # the override is not decorated
        assert c.resolve(Db) is decorated  # the decorated singleton was not built over the key: kept


class Codec:
    pass


class Gzip(Codec):
    pass


class Zstd(Codec):
    pass


def test_a_decorated_named_variant_is_listed_once_in_its_place() -> None:
    with tether.Container() as c:
        c.register(Codec, Gzip, name="gzip")
        c.register(Codec, Zstd, name="zstd")
        c.decorate(f"{tether.key_name(Codec)}#gzip", lambda codec: ("decorated", codec))
        listed = c.resolve_all(Codec)
        assert len(listed) == 2
        assert listed[0][0] == "decorated" and isinstance(listed[0][1], Gzip)
        assert isinstance(listed[1], Zstd)
        fake = Zstd()
        with c.override(f"{tether.key_name(Codec)}#gzip", fake):  # an override keeps the element's place
            assert c.resolve_all(Codec)[0] is fake
        assert c.resolve_all(Codec)[0][0] == "decorated"
