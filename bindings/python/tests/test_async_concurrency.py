"""Async factories run on the caller's loop, concurrently: no request's factory waits for another's.

Concurrency is counted, not timed: factories wait at a barrier that opens only once the expected
number of them await at the same time (a serialized resolve would never open it: ``wait_for`` fails
the test instead of hanging it). Also: no factory or callback runs twice when a resolve is retried
around an await, shared instances are made once while others await them, cancellation and failure
tear down what a resolve made, ``aclose`` awaits teardown in the library's order."""

from __future__ import annotations

import asyncio
from typing import AsyncIterator, Iterator

import pytest

import tether
from tether import Scope, teardown

from conftest import Pool, gated_pool

N = 32


class Barrier:
    """Opens once ``n`` callers are inside at the same time; counts the most inside at once."""

    def __init__(self, n: int) -> None:
        self.n, self.inside, self.most = n, 0, 0
        self.open = asyncio.Event()

    async def wait(self) -> None:
        self.inside += 1
        self.most = max(self.most, self.inside)
        if self.inside >= self.n:
            self.open.set()
        try:
            await asyncio.wait_for(self.open.wait(), 10)  # never opens if factories run one at a time
        finally:
            self.inside -= 1


class Request:
    def __init__(self, n: int) -> None:
        self.n = n


class Session:
    def __init__(self, request: Request) -> None:
        self.request = request


class Handler:
    def __init__(self, session: Session) -> None:
        self.session = session


def request_root(barrier: Barrier, scope: Scope, log: list[str]) -> tether.Container:
    async def session(request: Request) -> AsyncIterator[Session]:
        await barrier.wait()
        yield Session(request)
        log.append(f"closed {request.n}")

    root = tether.Container()
    root.register_value(Request)
    root.register(Session, session, scope=scope)
    root.register(Handler)
    return root


@pytest.mark.parametrize("scope", [Scope.CONTAINER, Scope.GRAPH])
def test_concurrent_requests_await_their_factories_at_once(scope: Scope) -> None:
    log: list[str] = []

    async def main() -> None:
        barrier = Barrier(N)
        root = request_root(barrier, scope, log)

        async def serve(n: int) -> int:
            async with tether.Container(parent=root, values={Request: Request(n)}) as request:
                handler = await request.aresolve(Handler)
                return handler.session.request.n

        assert await asyncio.gather(*(serve(n) for n in range(N))) == list(range(N))
        assert barrier.most == N  # every request's factory awaited at the same time
        await root.aclose()

    asyncio.run(main())
    if scope == Scope.CONTAINER:
        assert sorted(log) == sorted(f"closed {n}" for n in range(N))  # each torn down once, with its request


class Inner:
    pass


class Outer:
    def __init__(self, inner: Inner) -> None:
        self.inner = inner


def test_nested_aresolves_complete_concurrently() -> None:
    async def main() -> None:
        barrier = Barrier(N)
        c = tether.Container()

        async def inner() -> Inner:
            await barrier.wait()
            return Inner()

        async def outer() -> Outer:
            return Outer(await c.aresolve(Inner))  # an async factory awaiting a resolve of its own

        c.register(Inner, inner)
        c.register(Outer, outer)
        made = await asyncio.gather(*(c.aresolve(Outer) for _ in range(N)))
        assert len({id(o.inner) for o in made}) == N and barrier.most == N
        await c.aclose()

    asyncio.run(main())


def test_a_shared_instance_is_made_once_while_the_others_await_it() -> None:
    made: list[str] = []

    async def main() -> None:
        c = tether.Container()
        gate = gated_pool(c, made)
        tasks = [asyncio.ensure_future(c.aresolve(Pool)) for _ in range(N)]
        await asyncio.sleep(0.01)
        assert made == ["Pool"] and not any(t.done() for t in tasks)  # one factory under way, the rest await it
        gate.set()
        pools = await asyncio.gather(*tasks)
        assert len({id(p) for p in pools}) == 1 and made == ["Pool"]
        assert await c.aresolve(Pool) is pools[0]
        await c.aclose()

    asyncio.run(main())


class Db:
    pass


class Conn:
    def __init__(self, db: Db) -> None:
        self.db = db


class Repo:
    def __init__(self, db: Db, conn: Conn) -> None:
        self.db, self.conn = db, conn


def test_a_resolve_retried_around_an_await_runs_no_factory_twice() -> None:
    """Db (a sync generator factory) is made before the async Conn suspends: the retry reuses it."""
    log: list[str] = []

    def db() -> Iterator[Db]:
        log.append("make Db")
        yield Db()
        log.append("close Db")

    async def conn(db: Db) -> Conn:
        await asyncio.sleep(0)
        log.append("make Conn")
        return Conn(db)

    def completed(repo: Repo) -> None:
        log.append("complete Repo")

    async def note(_r: object, repo: Repo) -> None:
        await asyncio.sleep(0)  # an async callback suspending after a sync one ran
        log.append("noted Repo")

    async def main() -> None:
        c = tether.Container()
        c.register(Db, db, scope=Scope.CONTAINER)
        c.register(Conn, conn, deps=[Db])
        c.register(Repo, deps=[Db, Conn], on_complete=[tether.complete(completed), note])
        repo = await c.aresolve(Repo)
        assert repo.db is repo.conn.db  # one graph: the Db the Conn got is the Repo's
        assert log == ["make Db", "make Conn", "complete Repo", "noted Repo"]
        await c.aclose()
        assert log[-1] == "close Db"

    asyncio.run(main())
    assert teardown.pending_count() == 0


def test_cancelling_an_aresolve_cancels_its_factory_and_tears_down_what_it_made() -> None:
    log: list[str] = []

    def db() -> Iterator[Db]:
        log.append("make Db")
        yield Db()
        log.append("close Db")

    async def main() -> None:
        started = asyncio.Event()
        c = tether.Container()

        async def conn(db: Db) -> Conn:
            started.set()
            try:
                await asyncio.Event().wait()  # never set
            except asyncio.CancelledError:
                log.append("Conn cancelled")
                raise
            return Conn(db)

        c.register(Db, db)
        c.register(Conn, conn, deps=[Db])
        task = asyncio.ensure_future(c.aresolve(Conn))
        await started.wait()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert log == ["make Db", "Conn cancelled", "close Db"]  # its Db torn down, once
        await c.aclose()

    asyncio.run(main())
    assert teardown.pending_count() == 0


def test_a_cancelled_or_failed_shared_factory_lets_a_waiter_make_its_own() -> None:
    async def main() -> None:
        calls: list[str] = []
        first = asyncio.Event()
        c = tether.Container()

        async def pool() -> Pool:
            calls.append("Pool")
            if len(calls) == 1:
                first.set()
                await asyncio.Event().wait()  # the first never finishes: cancelled
            if len(calls) == 2:
                await asyncio.sleep(0)
                raise OSError("no connection")  # the second fails
            return Pool()

        c.register(Pool, pool, scope=Scope.SINGLETON)
        owner = asyncio.ensure_future(c.aresolve(Pool))
        await first.wait()
        waiters = [asyncio.ensure_future(c.aresolve(Pool)) for _ in range(2)]
        await asyncio.sleep(0)
        owner.cancel()
        results = await asyncio.gather(*waiters, return_exceptions=True)
        assert calls == ["Pool", "Pool", "Pool"]  # after the cancel one waiter made it and failed, the other made it
        failed = [r for r in results if isinstance(r, BaseException)]
        assert len(failed) == 1 and isinstance(failed[0], tether.FactoryError)
        assert isinstance(failed[0].__cause__, OSError)
        made = [r for r in results if isinstance(r, Pool)]
        assert len(made) == 1 and await c.aresolve(Pool) is made[0]
        await c.aclose()

    asyncio.run(main())


def test_aclose_awaits_teardown_in_the_librarys_order() -> None:
    """An async teardown that suspends is awaited before its dependency's synchronous one runs."""
    log: list[str] = []

    def db() -> Iterator[Db]:
        yield Db()
        log.append("close Db")

    async def conn(db: Db) -> AsyncIterator[Conn]:
        yield Conn(db)
        await asyncio.sleep(0.01)
        log.append("close Conn")

    async def main() -> None:
        c = tether.Container()
        c.register(Db, db, scope=Scope.SINGLETON)
        c.register(Conn, conn, deps=[Db], scope=Scope.SINGLETON)
        await c.aresolve(Conn)
        await c.aclose()
        assert log == ["close Conn", "close Db"]  # aclose returned after both ran, dependents first

    asyncio.run(main())


def test_aclose_with_only_sync_teardown_stays_on_the_loop() -> None:
    import threading

    seen: list[int] = []

    def db() -> Iterator[Db]:
        yield Db()
        seen.append(threading.get_ident())

    async def main() -> None:
        async with tether.Container() as c:
            c.register(Db, db, scope=Scope.SINGLETON)
            await c.aresolve(Db)
        assert seen == [threading.get_ident()]

    asyncio.run(main())


def test_an_aresolve_waiting_for_another_threads_singleton_does_not_block_the_loop() -> None:
    import threading

    made: list[str] = []
    inside, release = threading.Event(), threading.Event()

    def pool() -> Pool:
        made.append("Pool")
        inside.set()
        release.wait(10)
        return Pool()

    c = tether.Container()
    c.register(Pool, pool, scope=Scope.SINGLETON)
    c.register(Db, lambda: Db(), scope=Scope.SINGLETON)

    async def ticker() -> int:
        ticks = 0
        while not release.is_set():
            ticks += 1
            await asyncio.sleep(0.001)
        return ticks

    async def slow_close() -> None:
        async def close(_db: Db) -> None:
            await asyncio.sleep(0)

        c.register(Db, lambda: Db(), scope=Scope.SINGLETON, close=close)  # something async: aresolve attempts
        await c.aresolve(Db)

    async def main() -> tuple[Pool, int]:
        await slow_close()
        threading.Thread(target=c.resolve, args=(Pool,)).start()  # another thread creates Pool
        inside.wait(10)
        waiting = asyncio.ensure_future(c.aresolve(Pool))
        ticks = asyncio.ensure_future(ticker())
        await asyncio.sleep(0.05)
        assert not waiting.done()  # it awaits the other thread's creation...
        release.set()
        got = await waiting
        return got, await ticks  # ...while the loop ran the ticker

    got, ticks = asyncio.run(main())
    assert ticks > 1 and made == ["Pool"] and c.resolve(Pool) is got

    async def close() -> None:
        await c.aclose()

    asyncio.run(close())


def test_close_says_aclose_for_a_suspended_factorys_async_teardown() -> None:
    """The container owning an async teardown is the one resolved from, also when the factory
    suspended before yielding (its teardown noted after the await)."""
    log: list[str] = []

    async def conn(db: Db) -> AsyncIterator[Conn]:
        await asyncio.sleep(0)  # suspends: the rest runs outside the library's call
        yield Conn(db)
        await asyncio.sleep(0)
        log.append("close Conn")

    root = tether.Container()
    root.register(Db, scope=Scope.SINGLETON)
    root.register(Conn, conn, deps=[Db], scope=Scope.CONTAINER)

    async def main() -> tether.Container:
        request = tether.Container(parent=root)
        await request.aresolve(Conn)
        return request

    request = asyncio.run(main())
    with pytest.raises(TypeError, match=r"await container\.aclose\(\)"):
        request.close()
    assert log == []

    async def finish() -> None:
        await request.aclose()
        await root.aclose()

    asyncio.run(finish())
    assert log == ["close Conn"]
