"""Python async concurrency (issue 27): how long N concurrent requests take when each awaits a 50 ms
async factory, and how many factories awaited at once.

  container  each request a child container (``values={Request: ...}``) resolving Handler(Session),
             Session CONTAINER-scoped, an async generator sleeping 50 ms before it yields
  graph      the same with Session GRAPH-scoped
  nested     an async factory awaiting ``container.aresolve`` of another that sleeps 50 ms

    PYTHONPATH=bindings/python TETHER_LIBRARY=build/lib/libtether.so \\
        python3 benchmarks/python/async_concurrency.py [--requests 32] [--sleep 0.05]
"""

from __future__ import annotations

import argparse
import asyncio
import time
from typing import AsyncIterator

import tether
from tether import Scope


class Request:
    pass


class Session:
    def __init__(self, request: Request) -> None:
        self.request = request


class Handler:
    def __init__(self, session: Session) -> None:
        self.session = session


class Inner:
    pass


class Outer:
    def __init__(self, inner: Inner) -> None:
        self.inner = inner


class Gauge:
    """How many factories await at once, at most."""

    def __init__(self) -> None:
        self.now = self.most = 0

    async def hold(self, seconds: float) -> None:
        self.now += 1
        self.most = max(self.most, self.now)
        try:
            await asyncio.sleep(seconds)
        finally:
            self.now -= 1


async def requests(n: int, seconds: float, scope: Scope) -> tuple[float, int]:
    gauge = Gauge()

    async def session(request: Request) -> AsyncIterator[Session]:
        await gauge.hold(seconds)
        yield Session(request)

    root = tether.Container()
    root.register_value(Request)
    root.register(Session, session, scope=scope)
    root.register(Handler)

    async def serve() -> None:
        async with tether.Container(parent=root, values={Request: Request()}) as child:
            await child.aresolve(Handler)

    start = time.perf_counter()
    await asyncio.gather(*(serve() for _ in range(n)))
    elapsed = time.perf_counter() - start
    await root.aclose()
    return elapsed, gauge.most


async def nested(n: int, seconds: float) -> tuple[float, int]:
    gauge = Gauge()
    c = tether.Container()

    async def inner() -> Inner:
        await gauge.hold(seconds)
        return Inner()

    async def outer() -> Outer:
        return Outer(await c.aresolve(Inner))

    c.register(Inner, inner)
    c.register(Outer, outer)
    start = time.perf_counter()
    await asyncio.wait_for(asyncio.gather(*(c.aresolve(Outer) for _ in range(n))), 60)
    elapsed = time.perf_counter() - start
    await c.aclose()
    return elapsed, gauge.most


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=32)
    parser.add_argument("--sleep", type=float, default=0.05)
    options = parser.parse_args()
    n, seconds = options.requests, options.sleep
    rows = [
        ("CONTAINER-scoped async factory, a child per request", asyncio.run(requests(n, seconds, Scope.CONTAINER))),
        ("GRAPH-scoped async factory, a child per request", asyncio.run(requests(n, seconds, Scope.GRAPH))),
        ("async factory awaiting a nested aresolve", asyncio.run(nested(n, seconds))),
    ]
    print(f"{n} concurrent aresolves, each awaiting a {seconds * 1000:.0f} ms async factory\n")
    print("| shape | all done in | factories awaiting at once (most) |\n|---|---:|---:|")
    for name, (elapsed, most) in rows:
        print(f"| {name} | {elapsed:.3f} s | {most} |")


if __name__ == "__main__":
    main()
