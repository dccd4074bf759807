"""Shared async creation is the library's: a SINGLETON or CONTAINER-scoped async factory that
suspends keeps the library's creation cell (held by its ``aresolve``'s token), so concurrent
``aresolve``s await it instead of starting it again; waits between tasks (and threads) that would
never end are the library's cycle, reported at once, never a hang; a cancelled creator lets a
waiter make it. ``asyncio.wait_for`` only guards against a hang (it fails the test), nothing is timed."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import pytest

import tether
from tether import Scope

from conftest import Pool, causes, gated_pool

N = 32
GUARD = 20  # seconds: a hang fails the test instead of blocking the run


class Conn:
    pass


def _cycle(exc: BaseException | None) -> tether.CycleError | None:
    """The CycleError ``exc`` is or was caused by (through FactoryErrors), if any."""
    return next((e for e in causes(exc) if isinstance(e, tether.CycleError)), None)


def test_32_aresolves_of_an_async_singleton_call_its_factory_once() -> None:
    calls: list[str] = []

    async def main() -> None:
        c = tether.Container()

        async def pool() -> Pool:
            calls.append("Pool")
            for _ in range(3):  # suspends several times: each is another round of the others' retries
                await asyncio.sleep(0)
            return Pool()

        c.register(Pool, pool, scope=Scope.SINGLETON)
        pools = await asyncio.wait_for(asyncio.gather(*(c.aresolve(Pool) for _ in range(N))), GUARD)
        assert calls == ["Pool"]
        assert len({id(p) for p in pools}) == 1
        assert c.resolve(Pool) is pools[0]
        await c.aclose()

    asyncio.run(main())


def test_a_container_scoped_async_factory_runs_once_per_child() -> None:
    made: list[int] = []

    async def main() -> None:
        root = tether.Container()

        async def conn() -> Conn:
            await asyncio.sleep(0)
            made.append(1)
            return Conn()

        root.register(Conn, conn, scope=Scope.CONTAINER)
        children = [tether.Container(parent=root) for _ in range(4)]
        got = await asyncio.wait_for(asyncio.gather(*(child.aresolve(Conn) for child in children for _ in range(8))), GUARD)
        assert len(made) == 4  # one per child
        for n, child in enumerate(children):
            mine = got[8 * n: 8 * n + 8]
            assert len({id(x) for x in mine}) == 1 and await child.aresolve(Conn) is mine[0]
        assert len({id(x) for x in got}) == 4
        for child in children:
            await child.aclose()
        await root.aclose()

    asyncio.run(main())


def _meeting() -> Any:
    """``meet(name)``: returns once both factories are under way (neither resolved anything yet); the
    second to meet goes on without suspending."""
    both = asyncio.Event()
    started: list[str] = []

    async def meet(name: str) -> None:
        started.append(name)
        if len(started) == 2:
            both.set()
        if not both.is_set():  # (``wait_for`` of a set event suspends before 3.12, not from 3.12 on)
            await asyncio.wait_for(both.wait(), GUARD)

    return meet


@pytest.mark.parametrize("suspend_first", [True, False], ids=["suspended-first", "nested-at-once"])
def test_a_cross_task_cycle_is_reported_at_once(suspend_first: bool) -> None:
    """Task A's async singleton X awaits ``aresolve(Y)`` while task B's Y awaits ``aresolve(X)``: with
    each factory suspended before its nested ``aresolve``, or B's calling it before it first suspends
    (its nested ``aresolve`` begun inside its ``aresolve``'s attempt, while this thread holds Y)."""
    calls: list[str] = []

    async def main() -> list[Any]:
        c = tether.Container()
        meet = _meeting()

        async def x() -> Pool:
            calls.append("X")
            await meet("X")
            if suspend_first:
                await asyncio.sleep(0)
            await c.aresolve("Y")
            return Pool()

        async def y() -> Conn:
            calls.append("Y")
            await meet("Y")
            if suspend_first:
                await asyncio.sleep(0)
            await c.aresolve("X")
            return Conn()

        c.register("X", x, scope=Scope.SINGLETON)
        c.register("Y", y, scope=Scope.SINGLETON)
        return await asyncio.wait_for(asyncio.gather(c.aresolve("X"), c.aresolve("Y"), return_exceptions=True), GUARD)

    results = asyncio.run(main())
    cycles = [_cycle(r) for r in results]
    assert all(cycle is not None for cycle in cycles), results
    # The one whose nested aresolve waits second is told at once: the wait cycle, its path each key
    # once, its own edge last, and the fix that breaks it. Its factory failed and let go of its cell,
    # so the other's nested aresolve then made that key itself and found its own task's cycle.
    messages = {key: str(cycle) for key, cycle in zip("XY", cycles)}
    waits = [key for key, text in messages.items() if "would wait for each other forever" in text]
    assert len(waits) == 1, messages
    mine = waits[0]
    other = "Y" if mine == "X" else "X"
    assert (f'the creations of the shared instances "{other}" -> "{mine}" -> "{other}" would wait for each other '
            f'forever') in messages[mine]
    assert (f'break its edge "{mine}" -> "{other}": make "{mine}"\'s dependency on "{other}" weak-lazy '
            f'(deps=[tether.weak_lazy("{other}")]) and call it once "{mine}" is made') in messages[mine]
    assert f'the constructors of "{other}" -> "{mine}" -> "{other}" need each other' in messages[other]
    assert f'deps=[tether.weak_lazy("{other}")]' in messages[other]
    assert not any(f'"{k}" -> "{k}"' in text for k in "XY" for text in messages.values()), messages
    assert calls[:2] == ["X", "Y"] and calls[2] == mine and len(calls) == 3


class Node:
    __slots__ = ("other", "__weakref__")


def test_the_fix_a_cross_task_cycle_proposes_works() -> None:
    """The cycle above with the fix its message proposes (Y takes X weak-lazy, called once Y is made):
    both tasks get their instance, each factory runs once (a weak-lazy argument is the same call in
    every attempt), and Y's lazy answers X."""
    calls: list[str] = []

    async def main() -> tuple[Any, Any]:
        c = tether.Container()
        meet = _meeting()

        async def x() -> Node:
            calls.append("X")
            await meet("X")
            node = Node()
            node.other = await c.aresolve("Y")
            return node

        async def y(x_later: Any) -> Node:
            calls.append("Y")
            await meet("Y")
            await asyncio.sleep(0)  # suspends: its retry is the same call (the lazy argument made again)
            node = Node()
            node.other = x_later
            return node

        c.register("X", x, scope=Scope.SINGLETON)
        c.register("Y", y, scope=Scope.SINGLETON, deps=[tether.weak_lazy("X")])
        got_x, got_y = await asyncio.wait_for(asyncio.gather(c.aresolve("X"), c.aresolve("Y")), GUARD)
        assert got_x.other is got_y and got_y.other() is got_x
        await c.aclose()
        return got_x, got_y

    asyncio.run(main())
    assert sorted(calls) == ["X", "Y"]


def test_a_cancelled_creator_lets_one_waiter_make_it() -> None:
    calls: list[str] = []
    cancelled: list[str] = []

    async def main() -> None:
        c = tether.Container()
        first = asyncio.Event()

        async def pool() -> Pool:
            calls.append("Pool")
            if len(calls) == 1:
                first.set()
                try:
                    await asyncio.Event().wait()  # never finishes: cancelled
                except asyncio.CancelledError:
                    cancelled.append("Pool")
                    raise
            await asyncio.sleep(0)
            return Pool()

        c.register(Pool, pool, scope=Scope.SINGLETON)
        creator = asyncio.ensure_future(c.aresolve(Pool))
        await first.wait()
        waiters = [asyncio.ensure_future(c.aresolve(Pool)) for _ in range(N)]
        for _ in range(5):
            await asyncio.sleep(0)
        assert calls == ["Pool"] and not any(w.done() for w in waiters)  # they await the creator's cell
        creator.cancel()
        pools = await asyncio.wait_for(asyncio.gather(*waiters), GUARD)
        with pytest.raises(asyncio.CancelledError):
            await creator
        assert calls == ["Pool", "Pool"] and cancelled == ["Pool"]  # one waiter made it, once
        assert len({id(p) for p in pools}) == 1 and c.resolve(Pool) is pools[0]
        await c.aclose()

    asyncio.run(main())


def test_a_thread_waits_for_a_tasks_async_singleton() -> None:
    calls: list[str] = []
    got: list[Any] = []

    async def main() -> None:
        c = tether.Container()
        gate = gated_pool(c, calls)
        task = asyncio.ensure_future(c.aresolve(Pool))
        while not calls:
            await asyncio.sleep(0)
        worker = threading.Thread(target=lambda: got.append(c.resolve(Pool)))  # blocks on the task's cell
        worker.start()
        await asyncio.sleep(0.01)
        assert not got  # it waits for the task (which the loop still runs)
        gate.set()
        pool_ = await asyncio.wait_for(task, GUARD)
        await asyncio.get_running_loop().run_in_executor(None, worker.join, GUARD)
        assert got == [pool_] and calls == ["Pool"]
        await c.aclose()

    asyncio.run(main())


def test_a_cycle_through_a_task_and_a_thread_is_reported_not_a_hang() -> None:
    """Task A's async X awaits ``aresolve(Y)``; a thread's sync Y resolves X (held by A)."""
    errors: list[BaseException] = []

    async def main() -> Any:
        c = tether.Container()
        inside_y = threading.Event()

        def y(x: Pool) -> Conn:  # X is a constructor dependency: its resolve waits for A's cell
            return Conn()

        async def x() -> Pool:
            await asyncio.get_running_loop().run_in_executor(None, inside_y.wait, GUARD)
            await c.aresolve("Y")
            return Pool()

        def y_factory() -> Conn:
            inside_y.set()
            try:
                return y(c.resolve("X"))
            except BaseException as exc:
                errors.append(exc)
                raise

        c.register("X", x, scope=Scope.SINGLETON)
        c.register("Y", y_factory, scope=Scope.SINGLETON)
        task = asyncio.ensure_future(c.aresolve("X"))
        await asyncio.sleep(0)  # A's factory is under way (its cell A's) before the thread starts
        thread_result: list[Any] = []

        def in_thread() -> None:
            try:
                thread_result.append(c.resolve("Y"))
            except BaseException as exc:
                thread_result.append(exc)

        worker = threading.Thread(target=in_thread)
        worker.start()
        try:
            result: Any = await asyncio.wait_for(task, GUARD)
        except Exception as exc:
            result = exc
        await asyncio.get_running_loop().run_in_executor(None, worker.join, GUARD)
        return result, thread_result

    result, thread_result = asyncio.run(main())
    outcomes = [result, *thread_result, *errors]
    cycles = [_cycle(r) for r in outcomes if isinstance(r, BaseException)]
    assert any(cycle is not None and '"X"' in str(cycle) and '"Y"' in str(cycle) for cycle in cycles), outcomes


class Handler:
    def __init__(self, pool: Pool) -> None:
        self.pool = pool


def test_a_sync_resolve_of_what_a_task_of_the_loop_makes_is_refused_or_awaited() -> None:
    """On the loop's thread a synchronous resolve would wait for a task that cannot run meanwhile:
    a plain ``resolve`` is refused (``WouldBlockError``); one inside an ``aresolve``'s synchronous
    factory is awaited by that ``aresolve``, which then gets the task's instance."""
    calls: list[str] = []

    async def main() -> None:
        c = tether.Container()
        gate = gated_pool(c, calls)
        c.register(Handler, lambda: Handler(c.resolve(Pool)), deps=[])  # a synchronous factory's nested resolve
        maker = asyncio.ensure_future(c.aresolve(Pool))
        while not calls:
            await asyncio.sleep(0)
        with pytest.raises(tether.WouldBlockError):
            c.resolve(Pool)
        handler = asyncio.ensure_future(c.aresolve(Handler))
        for _ in range(5):
            await asyncio.sleep(0)
        assert not handler.done()  # it awaits the maker, the loop running
        gate.set()
        made = await asyncio.wait_for(maker, GUARD)
        got = await asyncio.wait_for(handler, GUARD)
        assert got.pool is made and calls == ["Pool"]
        await c.aclose()

    asyncio.run(main())
