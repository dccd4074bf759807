"""Async factories, async generator factories and async completion callbacks under aresolve;
aclose awaits async teardown in the library's order."""

from __future__ import annotations

import asyncio
import threading
from typing import AsyncIterator

import pytest

import tether
from tether import Scope


class Config:
    pass


class Pool:
    def __init__(self, config: Config) -> None:
        self.config = config


class Conn:
    def __init__(self, pool: Pool) -> None:
        self.pool = pool


class Service:
    def __init__(self, conn: Conn) -> None:
        self.conn = conn


def app(log: list[str], made: list[str]) -> tether.Container:
    c = tether.Container()

    async def config() -> Config:
        await asyncio.sleep(0)
        made.append("Config")
        return Config()

    async def pool(config: Config) -> AsyncIterator[Pool]:
        await asyncio.sleep(0.01)  # long enough for concurrent resolves to meet
        made.append("Pool")
        yield Pool(config)
        await asyncio.sleep(0)
        log.append("Pool")

    async def close_conn(conn: Conn) -> None:
        await asyncio.sleep(0)
        log.append("Conn")

    c.register(Config, config, scope=Scope.SINGLETON)
    c.register(Pool, pool, scope=Scope.SINGLETON)
    c.register(Conn, scope=Scope.CONTAINER, close=close_conn)
    c.register(Service)
    return c


def test_aresolve_and_aclose_from_asyncio_run() -> None:
    log: list[str] = []
    made: list[str] = []

    async def main() -> None:
        c = app(log, made)
        service = await c.aresolve(Service)
        assert isinstance(service.conn.pool.config, Config)
        assert await c.aresolve(Conn) is service.conn  # CONTAINER scope, resolved from c
        assert made == ["Config", "Pool"]
        await c.aclose()
        assert log == ["Conn", "Pool"]  # last made first
        await c.aclose()
        assert log == ["Conn", "Pool"]

    asyncio.run(main())


def test_sync_resolve_of_an_async_graph_names_aresolve() -> None:
    c = app([], [])
    with pytest.raises(TypeError, match="aresolve") as caught:
        c.resolve(Service)
    assert isinstance(caught.value, tether.AsyncResolveError)
    assert isinstance(caught.value, tether.FactoryError)
    c.close()  # nothing async was made


def test_close_with_async_teardown_pending_says_aclose() -> None:
    log: list[str] = []

    async def main() -> tether.Container:
        c = app(log, [])
        await c.aresolve(Service)
        return c

    c = asyncio.run(main())
    with pytest.raises(TypeError, match=r"await container\.aclose\(\)"):
        c.close()
    assert not c.closed and log == []

    async def finish() -> None:
        await c.aclose()

    asyncio.run(finish())
    assert c.closed and log == ["Conn", "Pool"]


def test_concurrent_aresolves_create_a_singleton_once() -> None:
    made: list[str] = []

    async def main() -> None:
        c = app([], made)
        children = [tether.Container(parent=c) for _ in range(6)]
        services = await asyncio.gather(*(child.aresolve(Service) for child in children))
        assert made == ["Config", "Pool"]
        assert len({id(s.conn.pool) for s in services}) == 1
        assert len({id(s.conn) for s in services}) == 6  # one Conn per child
        for child in children:
            await child.aclose()
        await c.aclose()

    asyncio.run(main())


def test_async_teardown_failures_are_gathered() -> None:
    async def main() -> None:
        c = tether.Container()

        async def broken(_obj: object) -> None:
            raise OSError("flush failed")

        async def fine_gen() -> AsyncIterator[Config]:
            yield Config()
            raise ValueError("teardown failed")

        c.register(Pool, lambda: Pool(Config()), scope=Scope.SINGLETON, close=broken)
        c.register(Config, fine_gen, scope=Scope.SINGLETON)
        await c.aresolve(Pool)
        await c.aresolve(Config)
        with pytest.raises(tether.TeardownError) as caught:
            await c.aclose()
        assert [type(e) for e in caught.value.exceptions] == [ValueError, OSError]
        assert c.closed

    asyncio.run(main())


def test_async_completion_callbacks_under_aresolve() -> None:
    class Child:
        parent = None
        seen = None

    class Parent:
        def __init__(self, child: Child) -> None:
            self.child = child

    async def link(child: Child, parent: object) -> None:
        await asyncio.sleep(0)
        child.parent = parent

    async def note(_resolver: object, child: Child) -> None:
        await asyncio.sleep(0)
        child.seen = threading.get_ident()

    async def main() -> None:
        with tether.Container() as c:
            c.register(Child, on_complete=[tether.complete(link, deps=[tether.weak(Parent)]), note])
            c.register(Parent, deps=[Child])
            parent = await c.aresolve(Parent)
            assert parent.child.parent() is parent
            assert parent.child.seen == threading.get_ident()  # awaited on the loop's thread
            with pytest.raises(TypeError, match="aresolve"):
                c.resolve(Parent)

    asyncio.run(main())


def test_values_and_container_scope_across_concurrent_async_requests() -> None:
    class Request:
        def __init__(self, path: str) -> None:
            self.path = path

    class Session:
        def __init__(self, request: Request) -> None:
            self.request = request

    class Handler:
        def __init__(self, a: Session, b: Session, request: Request) -> None:
            self.a, self.b, self.request = a, b, request

    log: list[str] = []

    async def session(request: Request) -> AsyncIterator[Session]:
        await asyncio.sleep(0.005)
        yield Session(request)
        log.append(request.path)

    async def main() -> None:
        root = tether.Container()
        root.register_value(Request)
        root.register(Session, session, deps=[Request], scope=Scope.CONTAINER)
        root.register(Handler, deps=[Session, Session, Request])
        root.validate()

        async def serve(path: str) -> tuple[str, str]:
            async with tether.Container(parent=root, values={Request: Request(path)}) as r:
                h = await r.aresolve(Handler)
                assert h.a is h.b and h.a is await r.aresolve(Session)
                return h.request.path, h.a.request.path

        assert await asyncio.gather(serve("/1"), serve("/2")) == [("/1", "/1"), ("/2", "/2")]
        assert sorted(log) == ["/1", "/2"]
        await root.aclose()

    asyncio.run(main())


def test_a_sync_graph_resolves_on_the_loop_thread() -> None:
    seen: list[int] = []

    def make() -> Config:
        seen.append(threading.get_ident())
        return Config()

    async def main() -> None:
        with tether.Container() as c:
            c.register(Config, make)
            await c.aresolve(Config)
            assert seen == [threading.get_ident()]

    asyncio.run(main())
