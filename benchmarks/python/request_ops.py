"""Runs one operation N times after 200 warm-up runs and prints nothing: under callgrind, a run of N
minus a run of 0 is the operation's instructions (repeatable on a loaded machine, unlike timings).

  <shape>          tether's op of bench.py's shape matrix (SG, RQ0, RQ1, RQV, RA, S1, S2, S3, S3r, S4)
  core-tether      fastapi_bench.py's app without FastAPI: a child with values={Request: r},
                   ``await aresolve(Service)``, ``await service.item(1)``, ``await aclose()``
  core-dishka      the same through dishka's request scope (``async with container(context=...)``, ``get``)
  core-nested      ``await aresolve(Outer)``, Outer's async factory awaiting a nested ``aresolve(Inner)``
                   before it first suspends (it never does)
  app-<wiring>     fastapi_bench.py's app (tether, dishka, hand): N requests from 32 workers
  app1-<wiring>    the same, 1 request at a time

    benchmarks/python/count_ops.sh NAME [N]
"""

from __future__ import annotations

import asyncio
import sys
from typing import Any, AsyncIterator, Awaitable, Callable

import bench
import fastapi_bench as fb


def core_tether() -> Callable[[], Awaitable[Any]]:
    import tether
    from starlette.requests import Request

    root = tether.Container()
    root.register(fb.Session, fb.session_generator, scope=tether.Scope.CONTAINER)
    root.register(fb.Repo)
    root.register(fb.Service)
    root.register_value(Request)
    request = Request({"type": "http", "method": "GET", "path": "/", "headers": []})

    async def one() -> None:
        child = tether.Container(root, values={Request: request})
        service = await child.aresolve(fb.Service)
        await service.item(1)
        await child.aclose()

    return one


def core_dishka() -> Callable[[], Awaitable[Any]]:
    from dishka import Provider, Scope, make_async_container, provide
    from starlette.requests import Request

    class AppProvider(Provider):
        @provide(scope=Scope.REQUEST)
        async def session(self) -> AsyncIterator[fb.Session]:
            async for s in fb.session_generator():
                yield s

        repo = provide(fb.Repo, scope=Scope.REQUEST)
        service = provide(fb.Service, scope=Scope.REQUEST)

    container = make_async_container(AppProvider())
    request = Request({"type": "http", "method": "GET", "path": "/", "headers": []})

    async def one() -> None:
        async with container(context={Request: request}) as scope:
            service = await scope.get(fb.Service)
            await service.item(1)

    return one


class Inner:
    pass


class Outer:
    def __init__(self, inner: Inner) -> None:
        self.inner = inner


def core_nested() -> Callable[[], Awaitable[Any]]:
    import tether

    c = tether.Container()
    c.register(Inner)

    async def outer() -> Outer:
        return Outer(await c.aresolve(Inner))

    c.register(Outer, outer)

    async def one() -> None:
        await c.aresolve(Outer)

    return one


def main() -> None:
    name, n = sys.argv[1], int(sys.argv[2])
    if name.startswith(("app-", "app1-")):
        wiring, workers = (name[4:], 32) if name.startswith("app-") else (name[5:], 1)
        app, close = fb.WIRINGS[wiring]()

        async def serve() -> None:
            await fb.serve(app, 256, workers)
            if n:
                await fb.serve(app, n, workers)

        asyncio.run(serve())
        close()
        return
    if name.startswith("core-"):
        one = {"core-tether": core_tether, "core-dishka": core_dishka, "core-nested": core_nested}[name]()

        async def loop() -> None:
            for _ in range(200 + n):
                await one()

        asyncio.run(loop())
        return
    ops = bench.contender_tether()
    op = ops[name][0]
    for _ in range(200 + n):
        op()


if __name__ == "__main__":
    main()
