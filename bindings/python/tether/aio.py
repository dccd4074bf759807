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
* A SINGLETON or CONTAINER-scoped async factory that suspends keeps the library's creation cell
  of its instance: the ``aresolve`` gives it to its *token* (``tether_token_hold``; a token stands
  for an awaiting call in the library, ``Session.token``), and its next attempt, acting for the
  token (``tether_token_enter``), takes it back and publishes the instance. Another ``aresolve``
  needing that instance meanwhile is refused by the library (``TETHER_E_WOULD_BLOCK``: a resolve
  acting for a token never blocks the loop) and awaits the library's wake-up
  (``tether_token_wait``) before resolving again; one whose wait would never end (task A's
  factory awaits what task B's makes, and B's awaits A's) gets the library's ``CycleError``.
  The library decides all of it: Python keeps no cell, names no scope's sharing unit.

* A factory awaited outside the library's resolve that resolves its own key, or one further out on
  the path to it, is the library's constructor cycle, as when nothing suspends: each library call an
  ``aresolve`` makes meanwhile first tells the library what its task constructs
  (``tether_construct_enter``, read from the task's own stack: ``marks``), so no factory runs twice.

* A resolve that would wait for another thread creating a shared instance it needs does not block
  the loop either: it is refused the same way (``TETHER_E_WOULD_BLOCK``), and ``aresolve`` awaits
  the wake-up the thread's release sends. A resolve nested in a synchronous factory waits for a
  thread as any resolve does (the factory runs once); one that would wait for a task of this loop
  is refused (it could never end), and ``aresolve`` awaits that task and calls the factory again.

Where nothing can await (a plain ``resolve``, or a nested one inside a synchronous factory), an
async factory fails the resolve with ``AsyncResolveError`` (a ``TypeError``) naming ``aresolve``.
Async teardown: see ``teardown`` (stepped where the library drops the instance; under ``aclose``
what suspends is awaited on the loop in the library's order).
"""

from __future__ import annotations

import asyncio
import ctypes
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
from .errors import NeedsAwait, WouldBlockError, error_for
from .lazy import _Deferred
from .messages import last_message
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
    attempt (``rest``: the coroutine finishing it, giving ``(object, teardowns)``), or by a resolve
    the library refused because another task or thread creates a shared instance it needs (``poll``).
    A ``BaseException``: a factory's ``except Exception`` does not swallow it; the library aborts
    the attempt and ``aresolve`` gets it."""

    #: the failure's parts are kept (``_state.raise_caused``): a factory's path, for ``marks``
    takes_parts = True

    def __init__(self, rest: Callable[[], Any] | None = None, poll: bool = False) -> None:
        super().__init__("an async factory suspended inside the library's resolve")
        self.rest = rest
        self.poll = poll  # refused by the library: await its wake-up (``Session.woken``), then try again
        self.key: tuple[Any, ...] | None = None  # the call it stands for (set by ``call``)
        self.callback = False  # a completion callback's call
        self.parts: Any = None  # the library's parts of the aborted attempt (a factory's path: its path)


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
        return (factory, *map(_identity, args), *kwargs.keys(), *map(_identity, kwargs.values()))
    return (factory, *map(_identity, args))


def _identity(arg: Any) -> Any:
    """An argument's identity across attempts: a lazy or factory dependency (``tether.lazy``,
    ``weak_lazy``, ``factory``) is a new object in each attempt, the same call by what it defers to."""
    if isinstance(arg, _Deferred):
        return (type(arg), arg._key, arg._container)
    return id(arg)


class Session:
    """One ``aresolve``: its attempts' calls, by call (the factory and its arguments' identities)."""

    __slots__ = ("container", "depth", "made", "available", "by_ptr", "indexed", "stashed", "calls", "enclosing", "_token", "ended")

    def __init__(self, container: Any, depth: int) -> None:
        self.container = container
        self.depth = depth  # the frames of this thread while its library call runs (see here())
        self.made: list[_Made] = []
        self.available: dict[tuple[Any, ...], list[_Made]] = {}
        self.by_ptr: dict[int, _Made] = {}  # made[:indexed] by pointer: built when the library first lets go of one
        self.indexed = 0
        self.stashed = False  # a teardown waits in a stash: end() runs what no attempt took
        self.calls: dict[tuple[Any, ...], BaseException | None] = {}  # completion calls done (or failed)
        #: the session further out on the same task whose attempt this one runs in, if any (see ``token``)
        self.enclosing: Session | None = None
        self._token: int | None = None
        self.ended = False

    @property
    def has_token(self) -> bool:
        return self._token is not None

    def token(self) -> int:
        """This session's token in the library (made when first needed: a factory suspended making a
        shared instance, or the library refused a wait), linked to the token of the session further out
        on the same task whose factory awaits this one (``tether_token_new``'s ``parent``): the library
        then sees a wait through this task's calls."""
        if self._token is None:
            enclosing = self.enclosing
            if enclosing is None:
                task = asyncio.current_task()
                enclosing = _awaiting_rest.get(task) if task is not None else None
            parent = enclosing.token() if enclosing is not None and not enclosing.ended else None
            api = self.container._api
            out = ctypes.c_void_p()
            status = api.tether_token_new(parent, ctypes.byref(out))
            if status != OK:
                raise error_for(status, last_message(api))
            self._token = out.value
        return self._token  # type: ignore[return-value]

    async def woken(self) -> None:
        """Returns once the shared instance the library refused this session's last attempt is
        released (published, or given up) by whoever creates it (``tether_token_wait``)."""
        loop = asyncio.get_running_loop()
        future: asyncio.Future[None] = loop.create_future()
        n = next(_wake_ids)
        _wakeups[n] = (loop, future)
        try:
            self.container._api.tether_token_wait(self._token, _WAKE, n)
            await future
        finally:
            _wakeups.pop(n, None)

    def free_token(self) -> None:
        """Its cells released (their waiters go on), its token gone: the session ended."""
        self.ended = True
        token, self._token = self._token, None
        if token is not None:
            self.container._api.tether_token_free(token)

    def attempt(self) -> None:
        """Before each attempt: every call made so far may be taken once, in the order made."""
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
        it (dependents first)."""
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
    try:
        obj = factory(*args, **kwargs) if kwargs else factory(*args)
    except Suspended as suspended:
        if suspended.key is None:
            suspended.key = _key(factory, args, kwargs)
        raise
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


def _wake(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)


#: the futures ``Session.woken`` awaits, by the context number the library calls ``_WAKE`` with
_wakeups: dict[int, tuple[asyncio.AbstractEventLoop, asyncio.Future[None]]] = {}
_wake_ids = itertools.count(1)


def _woken(context: int | None) -> None:
    """The library's wake-up (``tether_token_wait``), on the thread that released the cell."""
    entry = _wakeups.pop(context or 0, None)
    if entry is not None:
        try:
            entry[0].call_soon_threadsafe(_wake, entry[1])
        except RuntimeError:  # its loop is closed: nobody awaits it
            pass


_WAKE = ctypes.CFUNCTYPE(None, ctypes.c_void_p)(_woken)  # (lives as long as the module: the library may call it)


#: the session each task awaits a suspended factory for (``resolve``): a session begun meanwhile on
#: that task is nested in it (its token's parent, ``Session.token``)
_awaiting_rest: dict[Any, Session] = {}
# a forked child has no other thread's loop to wake (the library forgets every token's cells there)
_fork.in_child(_wakeups.clear)
_fork.in_child(_awaiting_rest.clear)


def _hold(session: Session, container: Any, name: str) -> None:
    """The library's creation cell of ``name``'s shared instance, which this thread's resolve from
    ``container`` holds, goes to ``session``'s token when the attempt aborts (``tether_token_hold``)."""
    api = container._api
    # NOT_FOUND: no cell to keep (the library made the instance under a resolve further out)
    api.tether_token_hold(session.token(), container.handle, container._key_id(name.encode("utf-8")))


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

    # a creation cell its token can hold (the library's scope traits; WEAK takes no async factory)
    shared = scope.kept_strongly or scope.per_container

    @functools.wraps(factory)
    def from_async(*args: Any, **kwargs: Any) -> Any:
        session = here()
        if session is None:
            raise _needs_await(what)
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

        if shared:  # its instance stays this session's to make: the library's cell goes to its token
            _hold(session, singleton_owner if scope.kept_strongly else _state.tls.frames[-1][0], name)
        raise Suspended(rest)

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
    # begun inside an attempt of this thread (an async factory stepped there, before it first
    # suspends): nested in that session, and its token linked to that one's before its first library
    # call, which the library then refuses rather than fail the outer resolve (its wait this task's)
    session.enclosing = getattr(_tls, "session", None)
    if session.enclosing is not None:
        session.token()
    api = container._api
    path = None  # what this task constructs while it awaits a suspended factory (see ``marks``)
    try:
        while True:
            outer = getattr(_tls, "session", None)
            _tls.session = session
            # (per attempt: a nested aresolve's later attempts may run outside the resolve it began in)
            session.depth = len(frames) + 1
            session.attempt()
            attempting.append(None)
            acting = session.has_token  # the library: take back this token's cells, never block the loop
            if acting:
                api.tether_token_enter(session.token())
            try:
                marked = marks() if awaiting else None
                return _marked(container, key, args, marked) if marked else container.resolve(key, *args)
            except Suspended as suspended:
                pending = suspended
            except Exception as exc:
                if not _refused(exc):
                    raise
                pending = Suspended(poll=True)  # refused inside a nested call (a synchronous factory's resolve)
            finally:
                if acting:
                    api.tether_token_leave()
                attempting.pop()
                _tls.session = outer
            if pending.poll:  # another task or thread creates what it needs: the loop runs meanwhile
                if acting:
                    await session.woken()
                else:
                    session.token()  # again at once, acting for it: the library notes what it waits for
                continue
            assert pending.rest is not None and pending.key is not None
            path = _path(container, pending)  # (read from this frame by ``marks`` while set)
            if path is not None:
                awaiting.append(None)
            task = asyncio.current_task()
            further = _awaiting_rest.get(task)
            _awaiting_rest[task] = session  # (a session begun meanwhile on this task is nested in this one)
            try:
                obj, stash = await pending.rest()
                outcome: tuple[Any, BaseException | None, list[Any]] = (obj, None, stash)
            except Exception as exc:
                outcome = (None, exc, [])
            finally:
                if further is None:
                    del _awaiting_rest[task]
                else:
                    _awaiting_rest[task] = further
                if path is not None:
                    path = None
                    del awaiting[-1]
            if pending.callback:
                session.calls[pending.key] = outcome[1]
            else:  # taken by the next attempt (a shared instance's: under the cell its token holds)
                session.add(pending.key, *outcome)
    finally:
        session.free_token()  # (first: its cells' waiters go on while this one tears down)
        if session.stashed:
            await session.end()


def _refused(exc: BaseException | None) -> bool:
    """Whether ``exc`` is, or was caused by, the library's refusal to wait (``WouldBlockError``)."""
    for _ in range(16):  # (a chain is short; a cyclic one ends here)
        if exc is None:
            return False
        if isinstance(exc, WouldBlockError):
            return True
        exc = exc.__cause__ or exc.__context__
    return False


_RESOLVE_CODE = resolve.__code__
