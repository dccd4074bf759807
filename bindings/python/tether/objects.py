"""Which Python object a C instance pointer stands for.

A Python factory's result is handed to the library as a pointer, and the binding keeps the
object alive in a table from that pointer to the object, counted once per C instance box
(the same object can be boxed more than once, e.g. a weak-scoped service reused by a later
resolve). The box's destructor, the process-wide ``DROP`` callback, takes one count back;
at zero the table forgets the object and Python's reference counting takes over.

Singletons are the exception to "held by the table": their owner is the container's cache, so
the table only refers to them weakly, through an ``Owned`` cell that the registration holds.
That way the garbage collector sees container -> singleton, and a singleton that references its
own container is an ordinary, collectable cycle. Whenever the container lets go (reset, close,
re-registration) the cell is ``disown``ed first: the table takes a strong reference for as long
as C boxes still count it.

The pointer is ``id(obj)``, except for objects C must be able to read: a ctypes
``Structure``/``Union``/``Array`` is passed as its buffer address (so a C struct of function
pointers filled from Python is a real C struct to C), and a ``NativeRef`` as the native
address it holds.
"""

from __future__ import annotations

import ctypes
import threading
import weakref
from typing import Any

from ._native import DROP_FN

#: Returned by ``lookup`` for a pointer that is not a Python object (a native instance).
MISSING: Any = object()

_objects: dict[int, Any] = {}
_counts: dict[int, int] = {}
_lock = threading.Lock()
_C_DATA = (ctypes.Structure, ctypes.Union, ctypes.Array)


class HasAddress:
    """Base of Python objects that stand for a native address (``NativeRef``): C gets that address."""

    __slots__ = ()
    address: int

_get = _objects.get


class Owned:
    """A Python object held for C by its container (a singleton cache) rather than by the table."""

    __slots__ = ("obj", "ptr", "__weakref__")

    def __init__(self, obj: Any, ptr: int) -> None:
        self.obj = obj
        self.ptr = ptr


class _OwnedRef(weakref.ref):  # type: ignore[type-arg]
    __slots__ = ()


def lookup(ptr: int | None, default: Any = MISSING) -> Any:
    """The Python object for an instance pointer, or ``default`` (a native instance)."""
    obj = _get(ptr, default)  # type: ignore[arg-type]
    if type(obj) is _OwnedRef:
        cell = obj()
        return default if cell is None else cell.obj
    return obj


_ID, _BUFFER, _ADDRESS = 0, 1, 2
_how: dict[type, int] = {}  # per class: which pointer stands for its objects (isinstance on ctypes types is slow)


def _classify(cls: type) -> int:
    if len(_how) > 4096:
        _how.clear()
    how = _BUFFER if issubclass(cls, _C_DATA) else _ADDRESS if issubclass(cls, HasAddress) else _ID
    _how[cls] = how
    return how


def pointer_of(obj: Any) -> int:
    """The pointer that stands for ``obj`` on the C side."""
    how = _how.get(type(obj))
    if how is None:
        how = _classify(type(obj))
    if how == _ID:
        return id(obj)
    if how == _BUFFER:
        return ctypes.addressof(obj)
    return int(obj.address)


_acquire = _lock.acquire
_release = _lock.release


def retain(obj: Any) -> int:
    """Counts one more C box holding ``obj`` and returns its pointer."""
    ptr = id(obj) if _how.get(type(obj)) == _ID else pointer_of(obj)
    _acquire()
    count = _counts.get(ptr)
    if count is None:
        _objects[ptr] = obj
        _counts[ptr] = 1
    else:
        _counts[ptr] = count + 1
    _release()
    return ptr


def retain_owned(obj: Any) -> tuple[int, Owned | None]:
    """``retain`` for a container-owned object: returns the cell to hold, or None when the table
    already holds the object (another box counts it)."""
    ptr = pointer_of(obj)
    cell = None
    _acquire()
    count = _counts.get(ptr)
    if count is None:
        cell = Owned(obj, ptr)
        _objects[ptr] = _OwnedRef(cell)
        _counts[ptr] = 1
    else:
        _counts[ptr] = count + 1
    _release()
    return ptr, cell


def disown(cell: Owned | None) -> None:
    """The container lets go of ``cell``: the table holds the object strongly while C counts it."""
    if cell is None:
        return
    _acquire()
    if cell.ptr in _counts:
        _objects[cell.ptr] = cell.obj
    _release()


def release(ptr: int | None) -> None:
    """Takes back one count of ``ptr``; the last one forgets the object (outside the lock)."""
    if not ptr:
        return
    _acquire()
    count = _counts.get(ptr)
    if count is None:
        _release()
        return
    if count > 1:
        _counts[ptr] = count - 1
        _release()
        return
    del _counts[ptr]
    obj = _objects.pop(ptr)
    _release()
    del obj  # may run the object's __del__, never under the lock


def live_count() -> int:
    """How many Python objects C boxes hold right now (for tests and leak checks)."""
    return len(_objects)


def _drop(instance: int | None, _context: int | None) -> None:
    try:
        release(instance)
    except BaseException:  # never propagate into C (at interpreter shutdown the module may be gone)
        pass


#: The destructor of every Python-made instance; process-wide, never freed (instances outlive containers).
DROP = DROP_FN(_drop)
