"""Async factories, async generator factories and async completion callbacks, on the caller's loop.

The library resolves synchronously and calls factories as C callbacks, which cannot suspend. So
``Container.aresolve`` calls the library's resolve right on the loop's thread, in *attempts*:

* An async factory the library calls is stepped there (``_steps.step``). Most finish without
  suspending (an async factory that makes an object) and return like a synchronous one: one
  attempt, no thread, no hop.
* One that suspends raises ``Suspended`` through the library, which aborts that resolve as it
  aborts any failed one (nothing cached). ``aresolve`` then awaits the rest of it on its own task,
  holding no lock of the library's, and resolves again. Every factory result and completion call of
  an attempt is remembered (``Session``), so the next attempt gets the very same objects for the
  same calls (the library decides the same graph: the same calls in the same order) and no factory
  or callback runs twice; the teardowns the abort would have run are kept for those objects
  (``stash``), and those of objects no later attempt took run when ``aresolve`` ends (also when it
  fails or is cancelled: what a resolve made is torn down).
* A SINGLETON or CONTAINER-scoped async factory under way is known by its cell (the registration,
  and the container caching it): another ``aresolve`` needing it awaits that (``InFlight``)
  instead of starting it again, and takes its result if its own call is the same one, else
  resolves again once the first publishes it. The library's cache stays the only cache.

* A factory awaited outside the library's resolve that resolves its own key, or one further out on
  the path to it, is the library's constructor cycle, as when nothing suspends: each library call an
  ``aresolve`` makes meanwhile first tells the library what its task constructs
  (``tether_construct_enter``, read from the task's own stack: ``marks``), so no factory runs twice.

* A resolve that would wait for another thread creating a shared instance it needs (the library's
  ``TETHER_E_WOULD_BLOCK`` in no-wait mode) does not block the loop: ``aresolve`` sleeps a little
  and tries again.

Where nothing can await (a plain ``resolve``, or a nested one inside a synchronous factory), an
async factory fails the resolve with ``AsyncResolveError`` (a ``TypeError``) naming ``aresolve``.
Async teardown: see ``teardown`` (stepped where the library drops the instance; under ``aclose``
what suspends is awaited on the loop in the library's order).
"""

from __future__ import annotations

import asyncio
import functools
import inspect
import itertools
import sys
import threading
from typing import Any, Callable

from . import _fork, _state, object_table, teardown
from ._cabi import FIX_FACTORY, OK
from ._steps import Continuation, step
from .completion import Completion
from .errors import NeedsAwait
from .parameters import code_flags
from .scope import Scope

_tls = threading.local()
_ASYNC_FLAGS = inspect.CO_COROUTINE | inspect.CO_ASYNC_GENERATOR
#: Non-empty while an attempt's library call runs on some thread: trampolines ask ``call`` then.
attempting = _state.attempting
_order = itertools.count()  # the order the library let go of attempts' instances (see Session.end)


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


class Suspended(BaseException):
    """Raised through the library's frames by an async factory or callback that suspended in an
    attempt (``rest``: the coroutine finishing it, giving ``(object, teardowns)``), or by one that
    must wait for another's (``waits``: an ``InFlight``), or by a resolve that would wait for
    another thread creating a shared instance (``poll``). A ``BaseException``: a factory's
    ``except Exception`` does not swallow it; the library aborts the attempt and ``aresolve`` gets it."""

    #: the failure's parts are kept (``_state.raise_caused``): a factory's path, for ``marks``
    takes_parts = True

    def __init__(self, rest: Callable[[], Any] | None = None, waits: InFlight | None = None,
                 poll: bool = False) -> None:
        super().__init__("an async factory suspended inside the library's resolve")
        self.rest = rest
        self.waits = waits
        self.poll = poll  # another thread creates a shared instance it needs: try again shortly
        self.key: tuple[Any, ...] | None = None  # the call it stands for (set by ``call``)
        self.callback = False  # a completion callback's call
        self.cell: InFlight | None = None  # the shared cell it started
        self.parts: Any = None  # the library's parts of the aborted attempt (a factory's: its path)


class _Made:
    """What one call of an attempt gave: its object or exception, and the teardowns the library's
    abort let go of (``(order, teardown, owner)``), to be noted again when a later attempt takes it."""

    __slots__ = ("key", "obj", "exc", "stash")

    def __init__(self, key: Any, obj: Any, exc: BaseException | None, stash: list[Any]) -> None:
        # key: the call's key, or the call itself (factory, args, kwargs) until a retry needs its key
        self.key, self.obj, self.exc, self.stash = key, obj, exc, stash


def _key(factory: Callable[..., Any], args: Any, kwargs: dict[str, Any] | None) -> tuple[Any, ...]:
    """What identifies a call across attempts: the factory and its arguments' identities."""
    if kwargs:
        return (factory, *map(id, args), *kwargs.keys(), *map(id, kwargs.values()))
    return (factory, *map(id, args))


class Session:
    """One ``aresolve``: its attempts' calls, by call (the factory and its arguments' identities)."""

    __slots__ = ("container", "depth", "made", "available", "by_ptr", "indexed", "stashed", "calls", "cells", "taken")

    def __init__(self, container: Any, depth: int) -> None:
        self.container = container
        self.depth = depth  # the frames of this thread while its library call runs (see here())
        self.made: list[_Made] = []
        self.available: dict[tuple[Any, ...], list[_Made]] = {}
        self.by_ptr: dict[int, _Made] = {}  # made[:indexed] by pointer: built when the library first lets go of one
        self.indexed = 0
        self.stashed = False  # a teardown waits in a stash: end() runs what no attempt took
        self.calls: dict[tuple[Any, ...], BaseException | None] = {}  # completion calls done (or failed)
        self.cells: list[InFlight] = []  # shared cells it started
        self.taken: list[InFlight] = []  # shared cells whose instance this attempt took

    def attempt(self) -> None:
        """Before each attempt: every call made so far may be taken once, in the order made."""
        self.taken = []
        available: dict[tuple[Any, ...], list[_Made]] = {}
        for made in reversed(self.made):
            if type(made.key) is list:  # (see _Made)
                made.key = _key(*made.key)
            available.setdefault(made.key, []).append(made)
        self.available = available

    def add(self, key: tuple[Any, ...], obj: Any, exc: BaseException | None, stash: list[Any]) -> _Made:
        made = _Made(key, obj, exc, stash)
        self.made.append(made)
        if stash:
            self.stashed = True
        return made

    def find(self, ptr: int | None) -> _Made | None:
        """What an attempt made whose instance pointer is ``ptr``, if any."""
        made, by_ptr = self.made, self.by_ptr
        while self.indexed < len(made):
            entry = made[self.indexed]
            self.indexed += 1
            if entry.obj is not None:
                try:
                    by_ptr[object_table.pointer_of(entry.obj)] = entry
                except Exception:
                    pass
        return by_ptr.get(ptr)  # type: ignore[arg-type]

    async def end(self) -> None:
        """Tears down what the attempts made and no attempt kept, in the order the library let go of
        it (dependents first), and lets go of the shared cells it started and nobody took."""
        for cell in self.cells:
            cell.abandon(self)
        self.cells.clear()
        stashed = sorted((entry for made in self.made for entry in made.stash), key=lambda e: e[0])
        for made in self.made:
            made.stash = []
        self.made.clear()
        self.by_ptr.clear()
        self.indexed = 0
        self.stashed = False
        self.available = {}
        for _, fn, _ in stashed:
            try:
                result = fn(None)
                if result is not None:
                    await result
            except Exception as exc:
                teardown.unraisable(exc, "tether: tearing down what an unfinished aresolve made failed")


def _frames() -> list[Any]:
    return _state.tls.frames


def here() -> Session | None:
    """The session whose library call runs factories on this thread right now, if any: not one
    further out (a nested resolve inside a synchronous factory cannot await)."""
    session = getattr(_tls, "session", None)
    if session is not None and len(_state.tls.frames) == session.depth:
        return session
    return None


def call(factory: Callable[..., Any], args: Any, kwargs: dict[str, Any] | None = None) -> Any:
    """``factory(*args, **kwargs)`` for a trampoline while ``attempting``: within an attempt, the
    object an earlier attempt got for the same call, else the call, remembered."""
    session = getattr(_tls, "session", None)
    if session is None or len(_frames()) != session.depth:  # (here(), inlined)
        return factory(*args, **kwargs) if kwargs else factory(*args)
    if session.available:  # a retry: what an earlier attempt got for this call
        waiting = session.available.get(_key(factory, args, kwargs))
        if waiting:
            made = waiting.pop()
            if made.exc is not None:
                raise made.exc
            for _, fn, owner in made.stash:
                teardown.note(made.obj, fn, owner)
            made.stash = []
            return made.obj
    taken = len(session.taken)
    try:
        obj = factory(*args, **kwargs) if kwargs else factory(*args)
    except Suspended as suspended:
        if suspended.key is None:
            suspended.key = _key(factory, args, kwargs)
        raise
    if len(session.taken) == taken:  # (a shared cell's instance stays the cell's: see InFlight)
        session.made.append(_Made([factory, args, kwargs], obj, None, []))
    return obj


def call_callback(callback: Callable[..., Any], obj: Any, *args: Any) -> None:
    """A completion call while ``attempting``: skipped when an earlier attempt made it on the same
    object (``args[0]`` is the object for the resolver form), else made and remembered."""
    session = here()
    if session is None:
        callback(*args) if args and obj is None else callback(obj, *args)
        return
    key = (callback, id(obj if obj is not None else args[1]))
    if key in session.calls:
        exc = session.calls[key]
        if exc is not None:
            raise exc
        return
    try:
        callback(*args) if args and obj is None else callback(obj, *args)
    except Suspended as suspended:
        suspended.key, suspended.callback = key, True
        raise
    session.calls[key] = None


def _stash(ptr: int | None, fn: Callable[[Any], Any], owner: Any) -> bool:
    cell = _cell_ptrs.get(ptr)  # type: ignore[arg-type]
    if cell is not None and cell.outcome is not None:  # back to its cell, for the next attempt to take
        cell.outcome[2].append((next(_order), fn, owner))
        return True
    session = getattr(_tls, "session", None)
    if session is None:
        return False
    made = session.find(ptr)
    if made is None:
        return False
    made.stash.append((next(_order), fn, owner))
    session.stashed = True
    return True


teardown.stash[0] = _stash


class InFlight:
    """A shared async factory under way (its cell: the registration's wrapper and the container
    caching the instance), started by one session; what it gives, once it did, and who waits.

    Its instance is the cell's until an attempt that took it succeeds (the library published it
    then): an attempt that aborts gives it back (its teardowns, see ``_stash``), and the next
    attempt needing it, of any session, takes it again. A failure is taken once (by the session
    that started it, whose attempt comes first): the others make their own, as after any failed
    creation. A session ending with its cell's instance untaken tears it down."""

    __slots__ = ("cell", "args", "owner", "outcome", "waiters")

    def __init__(self, cell: tuple[Any, int], args: tuple[int, ...], owner: Session) -> None:
        self.cell, self.args, self.owner = cell, args, owner
        self.outcome: tuple[Any, BaseException | None, list[Any]] | None = None
        self.waiters: list[tuple[asyncio.AbstractEventLoop, asyncio.Future[None]]] = []

    def settled(self) -> asyncio.Future[None]:
        """A future of the running loop done once this has an outcome or is gone."""
        loop = asyncio.get_running_loop()
        future: asyncio.Future[None] = loop.create_future()
        with _cells_lock:
            if self.outcome is None and _cells.get(self.cell) is self:
                self.waiters.append((loop, future))
                return future
        future.set_result(None)
        return future

    def _notify(self) -> None:
        waiters, self.waiters = self.waiters, []
        for loop, future in waiters:
            loop.call_soon_threadsafe(_wake, future)

    def finish(self, outcome: tuple[Any, BaseException | None, list[Any]]) -> None:
        with _cells_lock:
            self.outcome = outcome
            self._notify()

    def take(self, session: Session) -> Any:
        """The instance for an attempt of ``session`` (its teardowns noted for the library's box),
        or the failure raised."""
        outcome = self.outcome
        assert outcome is not None
        obj, exc, stash = outcome
        if exc is not None:
            self.remove()
            raise exc
        for _, fn, owner in stash:
            teardown.note(obj, fn, owner)
        stash.clear()
        try:
            _cell_ptrs[object_table.pointer_of(obj)] = self
        except Exception:
            pass
        session.taken.append(self)
        return obj

    def remove(self) -> None:
        """Published (or its failure taken): later resolves find it in the library's cache."""
        with _cells_lock:
            if _cells.get(self.cell) is self:
                del _cells[self.cell]
            self._notify()
        if self.outcome is not None and self.outcome[0] is not None:
            try:
                _cell_ptrs.pop(object_table.pointer_of(self.outcome[0]), None)
            except Exception:
                pass

    def abandon(self, session: Session) -> None:
        """Its session ends: an outcome nobody took is torn down (a later resolve makes its own)."""
        with _cells_lock:
            if _cells.get(self.cell) is not self:
                return
            del _cells[self.cell]
            outcome, self.outcome = self.outcome, None
            self._notify()
        if outcome is not None and outcome[0] is not None:
            try:
                _cell_ptrs.pop(object_table.pointer_of(outcome[0]), None)
            except Exception:
                pass
            if outcome[2]:
                session.add((), outcome[0], None, outcome[2])  # its teardowns run with the session's


def _wake(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)


_cells: dict[tuple[Any, int], InFlight] = {}
_cells_lock = _fork.lock()
#: the pointers of shared cells' instances while an attempt holds them in a box (see _stash)
_cell_ptrs: dict[int, InFlight] = {}
# a forked child has no other thread's loop to wait for
_fork.in_child(lambda: (_cells.clear(), _cell_ptrs.clear()))


def _claim(cell: tuple[Any, int], args: tuple[int, ...]) -> Any:
    """The cell's found entry, if a factory call for these arguments finished there, None if nobody
    makes it now; raises ``Suspended`` to wait for one under way."""
    with _cells_lock:
        found = _cells.get(cell)
    if found is None:
        return None
    if found.outcome is not None and found.args == args:
        return found
    # (the task making it, resolving it again while it awaits, never gets here: the library was told
    # what that task constructs, ``marks``, and reports the cycle)
    raise Suspended(waits=found)


def owner(singleton_owner: Any) -> Any:
    """The container whose close lets go of an instance being made: a singleton's registering
    container, else the one resolved from."""
    if singleton_owner is not None:
        return singleton_owner
    frames = _state.tls.frames
    return frames[-1][0] if frames else None


def _needs_await(what: str) -> NeedsAwait:
    return NeedsAwait(f"{what}: resolve it with `await container.aresolve(...)` (and close with `await container.aclose()`)")


def wrap_factory(name: str, factory: Callable[..., Any], close: Callable[[Any], Any] | None,
                 singleton_owner: Any, scope: Scope = Scope.GRAPH) -> Callable[..., Any]:
    """A synchronous factory for the library standing for an async one (see the module docstring);
    ``singleton_owner``: the registering container of a SINGLETON, else None."""
    agen_of = None  # (name, factory) of an async generator factory a plan's runner may iterate inline
    if inspect.isasyncgenfunction(factory) or inspect.isasyncgenfunction(getattr(factory, "__call__", None)):
        if close is not None:
            raise TypeError(f"register({name!r}): an async generator factory's teardown is its code after yield; close= is for other factories")
        what = f"{name!r} has an async generator factory"

        def begin(args: Any, kwargs: Any) -> tuple[Any, Callable[[Any], list[Any]]]:
            agen = factory(*args, **kwargs)
            # the container finalizes it (its teardown), not the loop it was first iterated on: no
            # asyncgen hooks, so asyncio.run ending does not close it under the container
            hooks = sys.get_asyncgen_hooks()
            sys.set_asyncgen_hooks(None, None)
            try:
                first = agen.__anext__()
            finally:
                sys.set_asyncgen_hooks(*hooks)
            who = owner(singleton_owner)  # (now, in the library's call: the container resolved from)
            return _first(name, agen, first), lambda obj: [(functools.partial(teardown.finish_async, name, agen), who)]

        if singleton_owner is None:  # (a plan's runner owning its instance: the child; see executor.runner)
            agen_of = (name, factory)
    else:
        what = f"{name!r} has an async factory"
        async_close = close is not None and inspect.iscoroutinefunction(close)

        def begin(args: Any, kwargs: Any) -> tuple[Any, Callable[[Any], list[Any]]]:
            who = owner(singleton_owner) if async_close else None  # (now, in the library's call)
            return factory(*args, **kwargs), lambda obj: [] if close is None else [
                (functools.partial(teardown.call_close, close, obj), who)]

    shared = scope in (Scope.SINGLETON, Scope.CONTAINER)

    @functools.wraps(factory)
    def from_async(*args: Any, **kwargs: Any) -> Any:
        session = here()
        if session is None:
            raise _needs_await(what)
        cell = None
        if shared:
            container = singleton_owner if scope == Scope.SINGLETON else _state.tls.frames[-1][0]
            cell = (from_async, id(container))
            ids = (*map(id, args), *map(id, kwargs.values()))
            found = _claim(cell, ids)
            if found is not None:
                return found.take(session)
        awaitable, teardowns = begin(args, kwargs)
        done, value = step(awaitable)
        if done:
            if value is not None:
                for fn, who in teardowns(value):
                    teardown.note(value, fn, who)
            return value

        async def rest() -> tuple[Any, list[Any]]:
            obj = await value
            return obj, [] if obj is None else [(next(_order), fn, who) for fn, who in teardowns(obj)]

        suspended = Suspended(rest)
        if cell is not None:
            started = InFlight(cell, ids, session)
            with _cells_lock:
                _cells.setdefault(cell, started)
            session.cells.append(started)
            suspended.cell = started
        raise suspended

    # for a plan's runner that awaits it itself (executor.runner): (awaitable, teardowns)
    setattr(from_async, BEGIN, begin)
    if agen_of is not None:  # ...or, an async generator factory, iterates it inline (executor.runner)
        setattr(from_async, AGEN, agen_of)
    return from_async


#: The attribute of an async factory's wrapper: ``begin(args, kwargs) -> (awaitable, teardowns_of(obj))``
#: (the teardowns as ``[(teardown, owner)]``), for a plan's runner that awaits it itself
BEGIN = "tether_begin"
#: The attribute of an async generator factory's wrapper (not a singleton's): ``(name, factory)``,
#: for a plan's runner that makes its first ``__anext__`` and finishes it itself (``executor.runner``)
AGEN = "tether_agen"


async def _first(name: str, agen: Any, first: Any) -> Any:
    """An async generator factory's instance: what it yields first (``first``: its ``__anext__()``)."""
    try:
        obj = await first
    except StopAsyncIteration:
        raise TypeError(f"the async generator factory for {name!r} returned without yielding an instance") from None
    if obj is None:  # fails the resolve (a factory returning None): nothing to tear down later
        await agen.aclose()
    return obj


def wrap_close(name: str, factory: Callable[..., Any], close: Callable[[Any], Any], singleton_owner: Any) -> Callable[..., Any]:
    """A synchronous factory with an ``async def`` ``close=``: awaited where it is torn down."""

    def made(args: Any, kwargs: Any = None) -> tuple[Any, list[Any]]:
        obj = factory(*args, **kwargs) if kwargs else factory(*args)
        return obj, [] if obj is None else [(functools.partial(teardown.call_close, close, obj), owner(singleton_owner))]

    @functools.wraps(factory)
    def with_async_close(*args: Any, **kwargs: Any) -> Any:
        obj, teardowns = made(args, kwargs)
        for fn, who in teardowns:
            teardown.note(obj, fn, who)
        return obj

    setattr(with_async_close, teardown.MADE, made)
    return with_async_close


def wrap_callback(name: str, callback: Any) -> Any:
    """A completion callback for the library: an ``async def`` one (or a ``tether.complete`` of
    one) is stepped in the attempt, and what suspends awaited by ``aresolve`` (see ``call_callback``);
    None when ``callback`` is not async."""
    what = f"a completion callback of {name!r} is async"
    if isinstance(callback, Completion):
        if not is_async(callback.fn):
            return None
        inner = callback.fn

        def declared(*args: Any) -> None:
            _run_callback(inner(*args), what)

        return Completion(declared, callback.deps)
    if not is_async(callback):
        return None

    def plain(resolver: Any, instance: Any) -> None:
        _run_callback(callback(resolver, instance), what)

    return plain


def _run_callback(awaitable: Any, what: str) -> None:
    if here() is None:
        awaitable.close()
        raise _needs_await(what)
    done, value = step(awaitable)
    if done:
        return

    async def rest() -> tuple[Any, list[Any]]:
        await value
        return None, []

    raise Suspended(rest)


#: One entry per factory awaited outside the library's resolve, on any thread: a suspended one's rest
#: awaited by ``resolve`` (its ``path`` local set), or a request's container step awaited by its plan's
#: runner (``executor.runner``: its ``at`` local set). A hint: only while it is not empty does a library
#: call from ``aresolve`` look for them on its own stack (``marks``): each is up the stack of exactly the
#: task that awaits it, so other tasks construct nothing of it.
awaiting: list[None] = []
_fork.in_child(awaiting.clear)
#: What ``executor.runner`` compiles its runners as (their frames are found by it).
RUNNER_FILE = "<tether runner>"


def marks(depth: int = 1) -> tuple[tuple[Any, Any], ...]:
    """What this task constructs outside the library's resolve, outermost first, as
    ``tether_construct_enter`` takes it: ``(container, key ids root first)`` for each factory awaited
    further up this stack (see ``awaiting``). Read from the frames: only asked while one awaits."""
    found = []
    frame: Any = sys._getframe(depth + 1)
    while frame is not None:
        code = frame.f_code
        if code is _RESOLVE_CODE:
            path = frame.f_locals.get("path")
            if path is not None:
                found.append(path)
        elif code.co_filename == RUNNER_FILE:
            local = frame.f_locals
            if local.get("at") is not None:
                found.append((local["child"], local["at"]))
        frame = frame.f_back
    return tuple(reversed(found))


def own_run(waiters: list[Any]) -> bool:
    """Whether the run of a request's plan whose claims are ``waiters`` (``executor.Contended``) is
    up this stack, awaiting a factory that asks again for what it makes (then the library decides:
    a cycle), rather than another task's (then this one waits for it)."""
    frame: Any = sys._getframe(1)
    while frame is not None:
        if frame.f_code.co_filename == RUNNER_FILE and frame.f_locals.get("waiters") is waiters:
            return True
        frame = frame.f_back
    return False


def _path(container: Any, pending: Suspended) -> tuple[Any, Any] | None:
    """The path of a suspended factory's key (the library's failure parts of the aborted attempt:
    root first, that key last) as ``tether_construct_enter`` takes it, or None."""
    parts = pending.parts
    if pending.callback or parts is None or parts.fix != FIX_FACTORY or not parts.path:
        return None
    from ctypes import c_uint32  # (rare: only an async factory that suspended)

    ids = [container._key_id(name.encode("utf-8")) for name in parts.path]
    return container, (c_uint32 * len(ids))(*ids)


def _marked(container: Any, key: Any, args: tuple[Any, ...], marks: tuple[tuple[Any, Any], ...]) -> Any:
    """``container.resolve(key, *args)`` from a task awaiting a suspended factory: the library is told
    what that task constructs (``tether_construct_enter``), so it reports a key of it as a cycle, as
    for a factory that did not suspend; no replay runs meanwhile (``_state.here`` sees this call)."""
    api = container._api
    entered = 0
    _state.constructing.append(None)
    try:
        for constructing_in, ids in marks:  # (a request's child gets its C container here, if it had none)
            if not constructing_in.closed and api.tether_construct_enter(constructing_in.handle, ids, len(ids)) == OK:
                entered += 1
        return container.resolve(key, *args)
    finally:
        for _ in range(entered):
            api.tether_replay_leave()
        del _state.constructing[-1]


_state.constructing_calls.add(_marked.__code__)


async def resolve(container: Any, key: Any, args: tuple[Any, ...]) -> Any:
    """``container.aresolve(key, *args)``: attempts until one completes (see the module docstring)."""
    frames = _state.tls.frames
    session = Session(container, 0)
    pause = 0.0005
    path = None  # what this task constructs while it awaits a suspended factory (see ``marks``)
    try:
        while True:
            outer = getattr(_tls, "session", None)
            _tls.session = session
            # (per attempt: a nested aresolve's later attempts may run outside the resolve it began in)
            session.depth = len(frames) + 1
            session.attempt()
            attempting.append(None)
            try:
                marked = marks() if awaiting else None
                result = _marked(container, key, args, marked) if marked else container.resolve(key, *args)
                for cell in session.taken:  # published by this resolve
                    cell.remove()
                return result
            except Suspended as suspended:
                pending = suspended
            finally:
                attempting.pop()
                _tls.session = outer
            if pending.waits is not None:  # another session's factory makes it: resolve again once it did
                await pending.waits.settled()
                continue
            if pending.poll:  # another thread creates what it needs (the library's cell): the loop runs meanwhile
                await asyncio.sleep(pause)
                pause = min(pause * 2, 0.02)
                continue
            assert pending.rest is not None and pending.key is not None
            path = _path(container, pending)  # (read from this frame by ``marks`` while set)
            if path is not None:
                awaiting.append(None)
            try:
                obj, stash = await pending.rest()
                outcome: tuple[Any, BaseException | None, list[Any]] = (obj, None, stash)
            except Exception as exc:
                outcome = (None, exc, [])
            finally:
                if path is not None:
                    path = None
                    del awaiting[-1]
            if pending.callback:
                session.calls[pending.key] = outcome[1]
            elif pending.cell is not None:
                pending.cell.finish(outcome)  # taken by the next attempt (this one's, or another's)
            else:
                session.add(pending.key, *outcome)
    finally:
        if session.stashed or session.cells:
            await session.end()


_RESOLVE_CODE = resolve.__code__
