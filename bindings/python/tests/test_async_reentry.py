"""An async factory that suspended goes on outside the library's resolve (``aresolve`` awaits the
rest of it between attempts); a resolve it makes meanwhile of its own key, or of a key further out
on the path to it, is the library's constructor cycle, as for a factory that did not suspend: the
factory runs once, and ``aresolve`` raises ``FactoryError`` whose ``__cause__`` is the library's
``CycleError`` naming the path. The library is told what the awaiting task constructs
(``tether_construct_enter``); Python keeps no cycle check of its own. Other tasks, and other keys,
are not under construction."""

from __future__ import annotations

import asyncio
from typing import Any, AsyncIterator

import pytest

import tether
from tether import Scope

SCOPES = [Scope.GRAPH, Scope.TRANSIENT, Scope.SINGLETON, Scope.CONTAINER]


class Made:
    def __init__(self, *deps: Any) -> None:
        self.deps = deps


def _cycle(caught: pytest.ExceptionInfo[tether.FactoryError]) -> tether.CycleError:
    cause = caught.value.__cause__
    assert isinstance(cause, tether.CycleError), repr(caught.value)
    return cause


@pytest.mark.parametrize("suspend", [True, False])
@pytest.mark.parametrize("scope", SCOPES)
def test_an_async_factory_resolving_its_own_key_runs_once_and_is_a_cycle(scope: Scope, suspend: bool) -> None:
    c = tether.Container()
    runs = []

    async def make_a() -> Made:
        runs.append("A")
        if suspend:
            await asyncio.sleep(0)
        await c.aresolve("A")
        return Made()

    c.register("A", make_a, deps=[], scope=scope)
    with pytest.raises(tether.FactoryError) as caught:
        asyncio.run(c.aresolve("A"))
    assert '"A" -> "A"' in str(_cycle(caught))
    assert runs == ["A"]
    c.close()


@pytest.mark.parametrize("x_scope", [Scope.GRAPH, Scope.SINGLETON])
def test_an_async_factory_resolving_a_key_further_out_runs_once_and_is_a_cycle(x_scope: Scope) -> None:
    c = tether.Container()
    runs = []

    async def make_x() -> Made:
        runs.append("X")
        await asyncio.sleep(0)
        await c.aresolve("R")
        return Made()

    def make_r(x: Made) -> Made:
        runs.append("R")
        return Made(x)

    c.register("R", make_r, deps=["X"])
    c.register("X", make_x, deps=[], scope=x_scope)
    with pytest.raises(tether.FactoryError) as caught:
        asyncio.run(c.aresolve("R"))
    assert '"R" -> "X" -> "R"' in str(_cycle(caught))
    assert runs == ["X"]
    c.close()


def test_other_tasks_and_other_keys_are_not_under_construction() -> None:
    """While one task's X awaits (marked as constructing R -> X), its nested resolve of another key
    succeeds, and another task resolving R builds a graph of its own: no cycle, each X once per graph."""
    c = tether.Container()
    runs = []
    gate: list[asyncio.Event] = []

    async def make_x() -> Made:
        runs.append("X")
        await gate[0].wait()
        return Made(await c.aresolve("Other"))

    c.register("R", Made, deps=["X"])
    c.register("X", make_x, deps=[])
    c.register("Other", Made, deps=[])

    async def run() -> tuple[Made, Made]:
        gate.append(asyncio.Event())
        first = asyncio.ensure_future(c.aresolve("R"))
        second = asyncio.ensure_future(c.aresolve("R"))
        while len(runs) < 2:
            await asyncio.sleep(0)
        gate[0].set()
        return await asyncio.gather(first, second)

    one, two = asyncio.run(run())
    assert one is not two and one.deps[0] is not two.deps[0]
    assert isinstance(one.deps[0].deps[0], Made) and runs == ["X", "X"]
    c.close()


class Request:
    pass


class Session:
    pass


def test_a_requests_async_container_step_resolving_itself_is_a_cycle() -> None:
    """A request's child with no C container runs its parent's plan, awaiting the async generator
    session itself (``executor.runner``): the session resolving its own key meanwhile is the
    library's cycle too (the child gets its C container for that call), not a wait for itself."""
    root = tether.Container()
    root.register_value(Request)
    runs = []
    children: list[tether.Container] = []

    async def session(request: Request) -> AsyncIterator[Session]:
        runs.append("session")
        await asyncio.sleep(0)
        await children[0].aresolve(Session)
        yield Session()

    root.register(Session, session, deps=[Request], scope=Scope.CONTAINER)

    async def run() -> None:
        async with tether.Container(parent=root, values={Request: Request()}) as child:
            children.append(child)
            with pytest.raises(tether.FactoryError) as caught:
                # (a bound: were this a wait for itself, the test fails instead of hanging)
                await asyncio.wait_for(child.aresolve(Session), 30)
            assert "Session" in str(_cycle(caught))

    asyncio.run(run())
    assert runs == ["session"]
    root.close()
