"""Async factories, async generator factories and async completion callbacks, under ``aresolve``.

The library resolves synchronously and calls factories as C callbacks, which cannot suspend. So
``Container.aresolve`` runs the library's resolve on a worker thread (``loop.run_in_executor``)
with this thread marked as serving ``loop``: an async factory called there submits its coroutine
to the loop (``asyncio.run_coroutine_threadsafe``) and waits for its result, while the loop stays
free to run it and anything else. The library still decides everything else: which factories
run, in what order, what is cached (a singleton is created once: concurrent ``aresolve``s wait
on the library's creation lock in their own threads), and when an instance goes (its drop runs
the async teardown through the loop the same way, from ``aclose``'s worker).

Outside such a thread (a plain ``resolve``), an async factory fails the resolve with
``AsyncResolveError`` (a ``TypeError``) naming ``aresolve``.
"""

from __future__ import annotations

import asyncio
import functools
import inspect
import threading
from typing import Any, Awaitable, Callable

from . import teardown
from .completion import Completion
from .errors import NeedsAwait
from .parameters import code_flags

_tls = threading.local()
_ASYNC_FLAGS = inspect.CO_COROUTINE | inspect.CO_ASYNC_GENERATOR
_workers = [0]  # worker threads serving a loop right now (see may_block)
_workers_lock = threading.Lock()


def is_async(fn: Any) -> bool:
    """Whether calling ``fn`` gives a coroutine or an async generator (not for classes)."""
    flags = code_flags(fn)
    if flags is not None:  # (a function's __call__ is a method-wrapper: neither)
        return bool(flags & _ASYNC_FLAGS)
    if inspect.isclass(fn):
        return False
    return (inspect.iscoroutinefunction(fn) or inspect.isasyncgenfunction(fn)
            or inspect.iscoroutinefunction(getattr(fn, "__call__", None))
            or inspect.isasyncgenfunction(getattr(fn, "__call__", None)))


def serving(loop: asyncio.AbstractEventLoop, owner: Any, body: Callable[[], Any]) -> Any:
    """Runs ``body`` on this (worker) thread with async factories and teardowns sent to ``loop``;
    ``owner``: the container resolved from (it keeps what CONTAINER scope makes there)."""
    outer = getattr(_tls, "loop", None), getattr(_tls, "owner", None)
    _tls.loop, _tls.owner = loop, owner
    with _workers_lock:
        _workers[0] += 1
    try:
        return body()
    finally:
        _tls.loop, _tls.owner = outer
        with _workers_lock:
            _workers[0] -= 1


def is_serving() -> bool:
    """Whether this thread serves a loop (inside ``aresolve``/``aclose``'s worker)."""
    return getattr(_tls, "loop", None) is not None


def may_block() -> bool:
    """Whether a worker may hold the library's creation lock while it waits for the loop: then
    the loop's own thread must not resolve synchronously (it could wait for that lock forever)."""
    return _workers[0] > 0


def owner(singleton_owner: Any) -> Any:
    """The container whose close lets go of an instance being made: a singleton's registering
    container, else the one resolved from."""
    return singleton_owner if singleton_owner is not None else getattr(_tls, "owner", None)


def await_on_loop(awaitable: Awaitable[Any], what: str) -> Any:
    """The result of ``awaitable``, awaited on the loop this thread serves; ``NeedsAwait`` (the
    awaitable closed unawaited) on a thread that serves none."""
    loop = getattr(_tls, "loop", None)
    if loop is None:
        close = getattr(awaitable, "close", None)
        if close is not None:
            close()
        raise NeedsAwait(f"{what}: resolve it with `await container.aresolve(...)` (and close with `await container.aclose()`)")

    async def run() -> Any:
        return await awaitable

    return asyncio.run_coroutine_threadsafe(run(), loop).result()


def wrap_factory(name: str, factory: Callable[..., Any], close: Callable[[Any], Any] | None,
                 singleton_owner: Any) -> Callable[..., Any]:
    """A synchronous factory for the library standing for an async one (see the module docstring);
    ``singleton_owner``: the registering container of a SINGLETON, else None."""
    if inspect.isasyncgenfunction(factory) or inspect.isasyncgenfunction(getattr(factory, "__call__", None)):
        if close is not None:
            raise TypeError(f"register({name!r}): an async generator factory's teardown is its code after yield; close= is for other factories")

        @functools.wraps(factory)
        def from_async_generator(*args: Any, **kwargs: Any) -> Any:
            agen = factory(*args, **kwargs)
            try:
                obj = await_on_loop(agen.__anext__(), f"{name!r} has an async generator factory")
            except StopAsyncIteration:
                raise TypeError(f"the async generator factory for {name!r} returned without yielding an instance") from None
            if obj is None:
                await_on_loop(agen.aclose(), name)
                return obj
            teardown.note(obj, functools.partial(_finish, name, agen), owner(singleton_owner))
            return obj

        return from_async_generator

    @functools.wraps(factory)
    def from_coroutine(*args: Any, **kwargs: Any) -> Any:
        obj = await_on_loop(factory(*args, **kwargs), f"{name!r} has an async factory")
        if obj is not None and close is not None:
            teardown.note(obj, functools.partial(_close, close, obj),
                          owner(singleton_owner) if inspect.iscoroutinefunction(close) else None)
        return obj

    return from_coroutine


def wrap_close(name: str, factory: Callable[..., Any], close: Callable[[Any], Any], singleton_owner: Any) -> Callable[..., Any]:
    """A synchronous factory with an ``async def`` ``close=``: awaited on the loop (``aclose``)."""

    @functools.wraps(factory)
    def with_async_close(*args: Any, **kwargs: Any) -> Any:
        obj = factory(*args, **kwargs)
        if obj is not None:
            teardown.note(obj, functools.partial(_close, close, obj), owner(singleton_owner))
        return obj

    return with_async_close


def _close(close: Callable[[Any], Any], obj: Any) -> None:
    result = close(obj)
    if inspect.isawaitable(result):
        await_on_loop(result, "an async close= teardown")


def _finish(name: str, agen: Any) -> None:
    """Runs an async generator factory's code after ``yield``, on the loop."""
    try:
        await_on_loop(agen.__anext__(), f"the async teardown of {name!r}")
    except StopAsyncIteration:
        return
    await_on_loop(agen.aclose(), name)
    raise RuntimeError(f"the async generator factory for {name!r} yielded more than once (one instance, then teardown)")


def wrap_callback(name: str, callback: Any) -> Any:
    """A completion callback for the library: an ``async def`` one (or a ``tether.complete`` of
    one) is awaited on the loop; None when ``callback`` is not async."""
    if isinstance(callback, Completion):
        if not is_async(callback.fn):
            return None
        inner = callback.fn

        def declared(*args: Any) -> None:
            await_on_loop(inner(*args), f"a completion callback of {name!r} is async")

        return Completion(declared, callback.deps)
    if not is_async(callback):
        return None

    def plain(resolver: Any, instance: Any) -> None:
        await_on_loop(callback(resolver, instance), f"a completion callback of {name!r} is async")

    return plain
