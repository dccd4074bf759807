"""Teardown of Python-made instances: a generator factory's code after ``yield``, or ``close=``.

The library decides when an instance goes and in what order (its destructor, ``drop``): dependents
before their dependencies, what a container caches last made first, a failed resolve's instances
once each. The binding only notes, per instance box, the teardown its factory call left
(``note``), and runs it when the library drops that box (``DROP``), before taking the box back.

While ``gather()`` runs (``Container.close``/``aclose``/``reset``, ``with`` and ``async with``) the
teardowns share a ``Gathering``: failures are collected for one ``TeardownError``, and the
exception leaving a ``with`` block is thrown into generator teardowns (``gen.throw`` /
``agen.athrow``) as ``contextlib.ExitStack`` throws it into its context managers: one that swallows
it suppresses it (later teardowns see none), one that raises another passes that on. An async
teardown is stepped where it is dropped (``_steps.step``); under ``aclose`` one that suspends, and
every teardown after it, is queued in order and awaited on the caller's loop (``run_queued``).
Elsewhere failures never propagate into the library: ctypes hands them to
``sys.unraisablehook``, as exceptions in ``__del__`` go.
"""

from __future__ import annotations

import asyncio
import functools
import inspect
import sys
import threading
import weakref
from typing import Any, Callable

from . import _fork, object_table
from ._cabi import DROP_FN
from ._steps import Continuation, step
from .errors import NeedsAwait
from .parameters import code_flags

#: instance pointer -> (teardown, owner) of its boxes, newest last; owner: for an async teardown,
#: the container whose close lets go of it (``close()`` then says to use ``aclose()``), else None.
#: A teardown is called with the ``Gathering`` it runs under (or None) and returns None, or an
#: awaitable for an async one
_pending: dict[int, list[tuple[Callable[[Any], Any], Any]]] = {}
_lock = _fork.lock()
#: How many noted teardowns are async (have an owner): ``close()`` looks for them only then.
async_owned = [0]
_tls = threading.local()


#: The attribute of a factory wrapper with a teardown: ``made(args) -> (obj, [(teardown, owner)])``, the
#: call without noting the teardowns, for a plan's runner that keeps them itself (``executor.make_containers``);
#: an async factory's wrapper has ``aio.BEGIN`` instead
MADE = "tether_made"


def wrap(name: str, factory: Callable[..., Any], close: Callable[[Any], Any] | None) -> Callable[..., Any] | None:
    """The factory to call for a registration of ``name``: ``factory`` itself when it has no
    teardown (None is returned), else a function noting the teardown of each instance it makes."""
    flags = code_flags(factory)
    if flags is not None:  # (a function's __call__ is a method-wrapper: not a generator function)
        generator = bool(flags & inspect.CO_GENERATOR)
    else:
        generator = inspect.isgeneratorfunction(factory) or (
            not inspect.isclass(factory) and inspect.isgeneratorfunction(getattr(factory, "__call__", None)))
    if generator:
        if close is not None:
            raise TypeError(f"register({name!r}): a generator factory's teardown is its code after yield; close= is for other factories")

        def made(args: Any, kwargs: Any = None) -> tuple[Any, list[Any]]:
            gen = factory(*args, **kwargs) if kwargs else factory(*args)
            try:
                obj = next(gen)
            except StopIteration:
                raise TypeError(f"the generator factory for {name!r} returned without yielding an instance") from None
            if obj is None:  # fails the resolve (a factory returning None): nothing to tear down later
                gen.close()
                return obj, []
            return obj, [(functools.partial(_finish, name, gen), None)]

        @functools.wraps(factory)
        def from_generator(*args: Any, **kwargs: Any) -> Any:
            obj, teardowns = made(args, kwargs)
            if teardowns:
                note(obj, teardowns[0][0])
            return obj

        from_generator.tether_made = made  # type: ignore[attr-defined]  # (see MADE)
        return from_generator
    if close is None:
        return None
    if not callable(close):
        raise TypeError(f"register({name!r}): close= must be callable (instance) -> None, not {type(close).__name__}")

    def made(args: Any, kwargs: Any = None) -> tuple[Any, list[Any]]:
        obj = factory(*args, **kwargs) if kwargs else factory(*args)
        return obj, [] if obj is None else [(functools.partial(call_close, close, obj), None)]

    @functools.wraps(factory)
    def with_close(*args: Any, **kwargs: Any) -> Any:
        obj = factory(*args, **kwargs)
        if obj is not None:
            note(obj, functools.partial(call_close, close, obj))
        return obj

    with_close.tether_made = made  # type: ignore[attr-defined]  # (see MADE)
    return with_close


def call_close(close: Callable[[Any], Any], obj: Any, _gathering: Any) -> Any:
    """A ``close=`` teardown: called as ``ExitStack.callback`` calls, blind to any exception."""
    return close(obj)


class Gathering:
    """What the teardowns run on one thread between ``gather()`` and ``stop_gathering()`` share."""

    __slots__ = ("errors", "failure", "suppressed", "queue", "queuing")

    def __init__(self, failure: BaseException | None, can_await: bool) -> None:
        self.errors: list[Exception] = []  # failures, in the order the teardowns ran
        self.failure = failure  # thrown into generator teardowns; None once one swallowed it
        self.suppressed = False  # a generator teardown swallowed ``failure``
        # (teardown or continuation, pointer, context) to run after the library call, in order (aclose)
        self.queue: list[tuple[Any, int | None, int | None]] | None = [] if can_await else None
        self.queuing = False  # an async teardown suspended: every later one queues behind it


def _thrown(gathering: Any) -> BaseException | None:
    return gathering.failure if gathering is not None else None


def _after_throw(gathering: Any, exc: BaseException, raised: BaseException | None) -> None:
    """ExitStack's rule for a generator ``exc`` was thrown into: it swallowed it (``raised`` None),
    re-raised it (no failure of its own), or raised another (passed on to later teardowns)."""
    if raised is None:
        gathering.failure = None
        gathering.suppressed = True
    elif raised is not exc:
        gathering.failure = raised
        raise raised


def _finish(name: str, gen: Any, gathering: Any) -> None:
    """Runs a generator factory's code after ``yield``, the exception leaving the block thrown in."""
    exc = _thrown(gathering)
    try:
        if exc is None:
            next(gen)
        else:
            gen.throw(exc)
    except StopIteration:
        if exc is not None:
            _after_throw(gathering, exc, None)
        return
    except BaseException as raised:
        if exc is None:
            raise
        _after_throw(gathering, exc, raised)
        return
    gen.close()
    raise RuntimeError(f"the generator factory for {name!r} yielded more than once (one instance, then teardown)")


async def finish_async(name: str, agen: Any, gathering: Any) -> None:
    """``_finish`` for an async generator factory."""
    exc = gathering.failure if gathering is not None else None  # (_thrown, inline: once per request's session)
    try:
        if exc is None:
            await agen.__anext__()
        else:
            await agen.athrow(exc)
    except StopAsyncIteration:
        if exc is not None:
            _after_throw(gathering, exc, None)
        return
    except BaseException as raised:
        if exc is None:
            raise
        _after_throw(gathering, exc, raised)
        return
    await agen.aclose()
    raise RuntimeError(f"the async generator factory for {name!r} yielded more than once (one instance, then teardown)")


def note(obj: Any, teardown: Callable[[Any], Any], async_owner: Any = None) -> None:
    """Remembers ``teardown`` for the box the library is about to make for ``obj``."""
    ptr = object_table.pointer_of(obj)
    with _lock:
        _pending.setdefault(ptr, []).append((teardown, None if async_owner is None else weakref.ref(async_owner)))
        if async_owner is not None:
            async_owned[0] += 1


def async_pending(owner: Any) -> int:
    """How many async teardowns wait for ``owner``'s close (``aclose`` must run them)."""
    with _lock:
        return sum(1 for waiting in _pending.values() for _, o in waiting if o is not None and o() is owner)


#: Set by ``aio``: ``stash(ptr, teardown, owner)`` keeps the teardown of an instance an ``aresolve``
#: attempt made and the library let go of (the attempt is retried with it), True if it did
stash: list[Callable[[int | None, Callable[[Any], Any], Any], bool] | None] = [None]


def _drop(ptr: int | None, context: int | None) -> None:
    """The destructor of instances whose registration has a teardown: runs it, then takes the box back."""
    teardown = owner = None
    with _lock:
        waiting = _pending.get(ptr)  # type: ignore[arg-type]
        if waiting:
            teardown, owner = waiting.pop()
            if owner is not None:
                async_owned[0] -= 1
            if not waiting:
                del _pending[ptr]  # type: ignore[arg-type]
    stack = getattr(_tls, "gathered", None)
    gathering = stack[-1] if stack else None
    if teardown is not None:
        keep = stash[0]
        if keep is not None and keep(ptr, teardown, owner):
            object_table.release(ptr, context)
            return
        if gathering is not None and gathering.queuing:
            gathering.queue.append((teardown, ptr, context))  # released once it ran
            return
    queued = False
    try:
        if teardown is not None:
            result = teardown(gathering)
            if result is not None:  # an async teardown: as far as it goes without the loop
                done, rest = step(result)
                if not done:
                    if gathering is not None and gathering.queue is not None:
                        gathering.queuing = queued = True
                        gathering.queue.append((rest, ptr, context))  # released once it ran
                    else:
                        _later(rest)
    except Exception as exc:
        if gathering is None:
            raise  # ctypes hands it to sys.unraisablehook: never into the library
        gathering.errors.append(exc)
    finally:
        if not queued:
            object_table.release(ptr, context)


def run(teardowns: list[Callable[[Any], Any]], gathering: Gathering | None) -> None:
    """Runs ``teardowns`` in that order as ``_drop`` runs a noted one, under ``gathering`` (whose
    queue takes what suspends, and everything after it), for instances no library box holds: a
    container step's that a child with no C container made (``executor.make_containers``)."""
    for fn in teardowns:
        if gathering is not None and gathering.queuing:
            gathering.queue.append((fn, None, None))  # type: ignore[union-attr]
            continue
        try:
            result = fn(gathering)
            if result is not None:  # an async teardown: as far as it goes without the loop
                done, rest = step(result)
                if not done:
                    if gathering is not None and gathering.queue is not None:
                        gathering.queuing = True
                        gathering.queue.append((rest, None, None))
                    else:
                        _later(rest)
        except Exception as exc:
            if gathering is None:
                unraisable(exc, "tether: a teardown failed")
            else:
                gathering.errors.append(exc)


def _later(rest: Continuation) -> None:
    """An async teardown suspended where nothing awaits it (the last reference to a graph-scoped
    instance let go outside ``aclose``): finished by a task of the loop running here, if any."""
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:
        rest.close()
        raise NeedsAwait("an async teardown needs the event loop: let go of the instance under "
                         "`await container.aclose()` (or inside a coroutine)") from None
    loop.create_task(_report(rest))


async def _report(rest: Continuation) -> None:
    try:
        await rest
    except Exception as exc:
        unraisable(exc, "tether: an async teardown failed")


def unraisable(exc: BaseException, message: str) -> None:
    """Hands ``exc`` to ``sys.unraisablehook``, as ctypes does with a failing destructor."""
    args = type("UnraisableHookArgs", (), {})()
    args.exc_type, args.exc_value, args.exc_traceback = type(exc), exc, exc.__traceback__
    args.err_msg, args.object = message, None
    sys.unraisablehook(args)  # type: ignore[arg-type]


async def run_queued(gathering: Gathering) -> None:
    """Runs what ``gathering`` queued (``aclose``), in order, awaiting each on this loop; failures
    gathered. Each box is taken back once its teardown ran (also when this is cancelled)."""
    queue = gathering.queue or []
    for number, (item, ptr, context) in enumerate(queue):
        try:
            if isinstance(item, Continuation):
                await item
            else:
                result = item(gathering)
                if result is not None:
                    await result
        except Exception as exc:
            gathering.errors.append(exc)
        except BaseException:  # cancelled: the rest are abandoned, their boxes taken back
            for rest, later_ptr, later_context in queue[number + 1:]:
                if isinstance(rest, Continuation):
                    rest.close()
                object_table.release(later_ptr, later_context)
            raise
        finally:
            object_table.release(ptr, context)
    queue.clear()


def gather(failure: BaseException | None = None, can_await: bool = False) -> Gathering:
    """What the teardowns run on this thread until ``stop_gathering()`` share (see ``Gathering``):
    ``failure`` is thrown into generator teardowns; ``can_await``: async ones that suspend are
    queued for ``run_queued``."""
    stack = getattr(_tls, "gathered", None)
    if stack is None:
        stack = _tls.gathered = []
    gathering = Gathering(failure, can_await)
    stack.append(gathering)
    return gathering


def stop_gathering() -> None:
    _tls.gathered.pop()


def pending_count() -> int:
    """How many teardowns wait for their instance to be dropped (for tests)."""
    with _lock:
        return sum(len(waiting) for waiting in _pending.values())


#: The destructor of the instances of registrations with a teardown; process-wide, never freed.
DROP = DROP_FN(_drop)
