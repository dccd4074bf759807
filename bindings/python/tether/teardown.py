"""Teardown of Python-made instances: a generator factory's code after ``yield``, or ``close=``.

The library decides when an instance goes and in what order (its destructor, ``drop``): dependents
before their dependencies, what a container caches last made first, a failed resolve's instances
once each. The binding only notes, per instance box, the teardown its factory call left
(``note``), and runs it when the library drops that box (``DROP``), before taking the box back.

Failures never propagate into the library: while ``gather()`` runs (``Container.close``/``reset``)
they are collected for one ``TeardownError``; elsewhere (a resolve letting go of what it made)
ctypes hands them to ``sys.unraisablehook``, as exceptions in ``__del__`` go.
"""

from __future__ import annotations

import functools
import inspect
import threading
import weakref
from typing import Any, Callable

from . import object_table
from ._cabi import DROP_FN
from .parameters import code_flags

#: instance pointer -> (teardown, owner) of its boxes, newest last; owner: for an async teardown,
#: the container whose close lets go of it (``close()`` then says to use ``aclose()``), else None
_pending: dict[int, list[tuple[Callable[[], Any], Any]]] = {}
_lock = threading.Lock()
#: How many noted teardowns are async (have an owner): ``close()`` looks for them only then.
async_owned = [0]
_tls = threading.local()


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

        @functools.wraps(factory)
        def from_generator(*args: Any, **kwargs: Any) -> Any:
            gen = factory(*args, **kwargs)
            try:
                obj = next(gen)
            except StopIteration:
                raise TypeError(f"the generator factory for {name!r} returned without yielding an instance") from None
            if obj is None:  # fails the resolve (a factory returning None): nothing to tear down later
                gen.close()
                return obj
            note(obj, functools.partial(_finish, name, gen))
            return obj

        return from_generator
    if close is None:
        return None
    if not callable(close):
        raise TypeError(f"register({name!r}): close= must be callable (instance) -> None, not {type(close).__name__}")

    @functools.wraps(factory)
    def with_close(*args: Any, **kwargs: Any) -> Any:
        obj = factory(*args, **kwargs)
        if obj is not None:
            note(obj, functools.partial(close, obj))
        return obj

    return with_close


def _finish(name: str, gen: Any) -> None:
    """Runs a generator factory's code after ``yield``."""
    try:
        next(gen)
    except StopIteration:
        return
    gen.close()
    raise RuntimeError(f"the generator factory for {name!r} yielded more than once (one instance, then teardown)")


def note(obj: Any, teardown: Callable[[], Any], async_owner: Any = None) -> None:
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


def _drop(ptr: int | None, context: int | None) -> None:
    """The destructor of instances whose registration has a teardown: runs it, then takes the box back."""
    teardown = None
    with _lock:
        waiting = _pending.get(ptr)  # type: ignore[arg-type]
        if waiting:
            teardown, owner = waiting.pop()
            if owner is not None:
                async_owned[0] -= 1
            if not waiting:
                del _pending[ptr]  # type: ignore[arg-type]
    try:
        if teardown is not None:
            teardown()
    except Exception as exc:
        gathered = getattr(_tls, "gathered", None)
        if not gathered:
            raise  # ctypes hands it to sys.unraisablehook: never into the library
        gathered[-1].append(exc)
    finally:
        object_table.release(ptr, context)


def gather() -> list[Exception]:
    """Collects the failures of the teardowns run on this thread until ``stop_gathering()`` (in
    the order they ran) into the list returned."""
    stack = getattr(_tls, "gathered", None)
    if stack is None:
        stack = _tls.gathered = []
    errors: list[Exception] = []
    stack.append(errors)
    return errors


def stop_gathering() -> None:
    _tls.gathered.pop()


def pending_count() -> int:
    """How many teardowns wait for their instance to be dropped (for tests)."""
    with _lock:
        return sum(len(waiting) for waiting in _pending.values())


#: The destructor of the instances of registrations with a teardown; process-wide, never freed.
DROP = DROP_FN(_drop)
