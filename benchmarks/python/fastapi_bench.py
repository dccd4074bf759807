"""A FastAPI app wired three ways (tether, dishka, by hand), 1 and 32 concurrent requests, one run.

The app (issue 27): per request an async session whose generator commits after ``yield`` (rolls
back on an exception) and closes, a repository over it, a service over that; the handler awaits the
service. Requests go in-process through httpx's ``ASGITransport`` (no sockets): ``C`` workers on one
``httpx.AsyncClient`` each send their share of ``N`` requests back to back. Wiring:

  tether  ``tether.fastapi.install`` + ``Inject(Service)``; Session CONTAINER-scoped (async generator);
          the app's route: a ``TetherRoute``, its endpoint resolves the ``Inject`` itself
  tether-router   the same handler on a plain ``APIRouter`` the app includes: its routes get the
          ``TetherRoute`` endpoint (not run unless named in ``--only``, as the next)
  tether-depends  the same handler declared before ``install``: the ``Inject`` a FastAPI ``Depends``
  dishka  ``dishka.integrations.fastapi``: ``setup_dishka`` + ``@inject`` + ``FromDishka[Service]``,
          REQUEST scope for all three (``make_async_container``)
  hand    FastAPI's own ``Depends`` chain: ``get_session`` (async generator) -> ``get_repo`` -> ``get_service``

Every run checks that each request's session was committed exactly once and closed exactly once.
Rounds interleave the wirings; the best round of each is reported (requests/s), with ratios.
``--io`` makes commit and close await ``asyncio.sleep(0)`` (a round trip to the loop, as real I/O).

    PYTHONPATH=bindings/python TETHER_LIBRARY=build/lib/libtether.so \\
        benchmarks/python/.venv/bin/python benchmarks/python/fastapi_bench.py [--requests 2000] [--rounds 5] [--io]
"""

# (no `from __future__ import annotations`: dishka and FastAPI read the handlers' annotations as classes)


import argparse
import asyncio
import gc
import time
from typing import Any, AsyncIterator, Callable

import httpx
from fastapi import Depends, FastAPI

IO = [False]


class Session:
    opened = committed = rolled_back = closed = 0

    def __init__(self) -> None:
        Session.opened += 1
        self.commits = self.closes = 0

    async def commit(self) -> None:
        if IO[0]:
            await asyncio.sleep(0)
        self.commits += 1
        Session.committed += 1
        if self.commits != 1:
            raise AssertionError("a session committed twice")

    async def rollback(self) -> None:
        Session.rolled_back += 1

    async def close(self) -> None:
        if IO[0]:
            await asyncio.sleep(0)
        self.closes += 1
        Session.closed += 1
        if self.closes != 1:
            raise AssertionError("a session closed twice")

    def get(self, i: int) -> dict[str, int]:
        return {"id": i}


class Repo:
    def __init__(self, session: Session) -> None:
        self.session = session

    def find(self, i: int) -> dict[str, int]:
        return self.session.get(i)


class Service:
    def __init__(self, repo: Repo) -> None:
        self.repo = repo

    async def item(self, i: int) -> dict[str, int]:
        return self.repo.find(i)


async def session_generator() -> AsyncIterator[Session]:
    session = Session()
    try:
        yield session
    except BaseException:
        await session.rollback()
        raise
    else:
        await session.commit()
    finally:
        await session.close()


def tether_app(route: str = "app") -> tuple[FastAPI, Callable[[], None]]:
    """``route``: where the handler is declared: "app" (after ``install``), "router" (a plain
    ``APIRouter`` included after ``install``), "before" (on the app before ``install``)."""
    import tether
    from fastapi import APIRouter
    from tether.fastapi import Inject, install

    root = tether.Container()
    root.register(Session, session_generator, scope=tether.Scope.CONTAINER)
    root.register(Repo)
    root.register(Service)
    app = FastAPI()
    if route != "before":
        install(app, root)
    router = APIRouter() if route == "router" else app

    @router.get("/items/{i}")
    async def item(i: int, service: Service = Inject(Service)) -> dict[str, int]:
        return await service.item(i)

    if route == "router":
        app.include_router(router)
    if route == "before":
        install(app, root)
    return app, root.close


def dishka_app() -> tuple[FastAPI, Callable[[], None]]:
    from dishka import Provider, Scope, make_async_container, provide
    from dishka.integrations.fastapi import FromDishka, inject, setup_dishka

    class AppProvider(Provider):
        @provide(scope=Scope.REQUEST)
        async def session(self) -> AsyncIterator[Session]:
            async for s in session_generator():  # the same generator, commit after yield
                yield s

        repo = provide(Repo, scope=Scope.REQUEST)
        service = provide(Service, scope=Scope.REQUEST)

    container = make_async_container(AppProvider())
    app = FastAPI()
    setup_dishka(container, app)

    @app.get("/items/{i}")
    @inject
    async def item(i: int, service: FromDishka[Service]) -> dict[str, int]:
        return await service.item(i)

    return app, lambda: None


def hand_app() -> tuple[FastAPI, Callable[[], None]]:
    async def get_repo(session: Session = Depends(session_generator)) -> Repo:  # (async: a sync one runs in a thread)
        return Repo(session)

    async def get_service(repo: Repo = Depends(get_repo)) -> Service:
        return Service(repo)

    app = FastAPI()

    @app.get("/items/{i}")
    async def item(i: int, service: Service = Depends(get_service)) -> dict[str, int]:
        return await service.item(i)

    return app, lambda: None


WIRINGS: dict[str, Callable[[], tuple[FastAPI, Callable[[], None]]]] = {
    "tether": tether_app, "dishka": dishka_app, "hand": hand_app, "tether-router": lambda: tether_app("router"),
    "tether-depends": lambda: tether_app("before")}


async def serve(app: FastAPI, requests: int, concurrency: int) -> float:
    """Seconds for ``requests`` requests from ``concurrency`` workers; every answer and session checked."""
    before = (Session.opened, Session.committed, Session.closed)
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://bench") as client:

        async def worker(first: int, count: int) -> None:
            for i in range(first, first + count):
                response = await client.get(f"/items/{i}")
                if response.status_code != 200 or response.json() != {"id": i}:
                    raise AssertionError(f"request {i}: {response.status_code} {response.text}")

        share = requests // concurrency
        gc.collect()
        start = time.perf_counter()
        await asyncio.gather(*(worker(k * share, share) for k in range(concurrency)))
        elapsed = time.perf_counter() - start
    done = share * concurrency
    opened, committed, closed = (Session.opened - before[0], Session.committed - before[1], Session.closed - before[2])
    if not opened == committed == closed == done:
        raise AssertionError(f"{done} requests: {opened} sessions opened, {committed} committed, {closed} closed")
    return elapsed / done


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=2048)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--io", action="store_true", help="commit and close await the loop once each")
    parser.add_argument("--only", default="tether,dishka,hand")
    options = parser.parse_args()
    IO[0] = options.io
    names = options.only.split(",")
    apps = {name: WIRINGS[name]() for name in names}
    best: dict[tuple[str, int], float] = {}

    async def rounds() -> None:
        for name, (app, _) in apps.items():  # warm-up: first requests compile plans, fill caches
            await serve(app, 256, 32)
        for _ in range(options.rounds):
            for concurrency in (1, 32):
                for name, (app, _) in apps.items():
                    seconds = await serve(app, options.requests, concurrency)
                    key = (name, concurrency)
                    best[key] = min(best.get(key, seconds), seconds)

    asyncio.run(rounds())
    for _, close in apps.values():
        close()
    print(f"FastAPI app, {options.requests} requests per run, best of {options.rounds} rounds"
          f"{', commit/close await the loop' if options.io else ''} (requests/s)\n")
    print("| concurrent requests | " + " | ".join(names) + " | " +
          " | ".join(f"tether / {n}" for n in names if n != "tether") + " |")
    print("|---:|" + "---:|" * (len(names) + len([n for n in names if n != "tether"])))
    for concurrency in (1, 32):
        rates = {name: 1 / best[name, concurrency] for name in names}
        ratios = [f"{rates['tether'] / rates[n]:.2f}x" for n in names if n != "tether" and "tether" in rates]
        print(f"| {concurrency} | " + " | ".join(f"{rates[n]:,.0f}" for n in names) + " | " + " | ".join(ratios) + " |")


if __name__ == "__main__":
    main()
