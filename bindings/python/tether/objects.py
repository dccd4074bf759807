"""Which Python object a C instance pointer stands for.

A Python factory's result is handed to the library as a pointer, and the binding keeps the
object alive in a table from that pointer to the object, counted once per C instance box
(the same object can be boxed more than once, e.g. a weak-scoped service reused by a later
resolve). The box's destructor, the process-wide ``DROP`` callback, takes one count back;
at zero the table forgets the object and Python's reference counting takes over.

Singletons are the exception to "held by the table": their owner is the container's cache, so
the table only refers to them weakly (in ``_owned``, apart from the strong ``_objects`` that the
hot path reads), through an ``Owned`` cell that the registration holds.
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
from typing import Any, Callable, cast

from ._native import DROP_FN

#: Returned by ``lookup`` for a pointer that is not a Python object (a native instance).
MISSING: Any = object()
_ABSENT: Any = object()

_objects: dict[int, Any] = {}  # pointer -> object, held strongly
_owned: dict[int, weakref.ref[Owned]] = {}  # pointer -> cell of a container-owned object, held weakly
_counts: dict[int, list[int]] = {}  # pointer -> [how many C boxes hold it] (a key of one of the two above)
_lock = threading.Lock()
_C_DATA = (ctypes.Structure, ctypes.Union, ctypes.Array)


class HasAddress:
    """Base of Python objects that stand for a native address (``NativeRef``): C gets that address."""

    __slots__ = ()
    address: int


#: ``held(ptr)``: the object if the table holds it strongly, else None (then ask ``lookup``: a
#: container-owned or native instance, or NULL). The hot paths' ``lookup`` for the usual case.
held = cast("Callable[[int | None], Any]", _objects.get)


class Owned:
    """A Python object held for C by its container (a singleton cache) rather than by the table."""

    __slots__ = ("obj", "ptr", "__weakref__")

    def __init__(self, obj: Any, ptr: int) -> None:
        self.obj = obj
        self.ptr = ptr


def lookup(ptr: int | None, default: Any = MISSING) -> Any:
    """The Python object for an instance pointer, or ``default`` (a native instance)."""
    obj = _objects.get(ptr, _ABSENT)  # type: ignore[arg-type]
    if obj is _ABSENT:
        ref = _owned.get(ptr)  # type: ignore[arg-type]
        cell = ref() if ref is not None else None
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
    first = [1]
    if _counts.setdefault(ptr, first) is first:
        # The first box, the usual case, takes no lock: setdefault is atomic, a release needs a
        # box (and waits for ``_count``'s lock), and a concurrent retain of the same object
        # completes the entry itself in ``_count``.
        _objects[ptr] = obj
        return ptr
    _acquire()
    _count(obj, ptr, owned=False)
    _release()
    return ptr


def retain_owned(obj: Any) -> tuple[int, Owned | None]:
    """``retain`` for a container-owned object: returns the cell to hold, or None when the table
    already holds the object (another box counts it)."""
    ptr = pointer_of(obj)
    _acquire()
    cell = _count(obj, ptr, owned=True)
    _release()
    return ptr, cell


def _count(obj: Any, ptr: int, owned: bool) -> Owned | None:
    """Under the lock: one more box for ``ptr``; a new cell if it is the first and ``owned``."""
    first = [1]
    count = _counts.setdefault(ptr, first)  # never a plain insert: see retain
    if count is not first:
        count[0] += 1
    elif owned:
        cell = Owned(obj, ptr)
        _owned[ptr] = weakref.ref(cell)
        return cell
    if ptr not in _owned:
        _objects[ptr] = obj  # new, or the entry of a first box that retain has yet to complete
    return None


def disown(cell: Owned | None) -> None:
    """The container lets go of ``cell``: the table holds the object strongly while C counts it."""
    if cell is None:
        return
    _acquire()
    ref = _owned.get(cell.ptr)
    if ref is not None and ref() is cell:  # still counted by C boxes
        _objects[cell.ptr] = cell.obj  # before it leaves _owned: lookups always find it
        del _owned[cell.ptr]
    _release()


def release(ptr: int | None, _context: int | None = None) -> None:
    """Takes back one count of ``ptr``; the last one forgets the object (outside the lock).

    Also the destructor of every Python-made instance (``DROP``: ``drop(instance, context)``).
    """
    if not ptr:
        return
    try:
        _acquire()
        count = _counts.get(ptr)
        if count is None or count[0] > 1:
            if count is not None:
                count[0] -= 1
            _release()
            return
        obj = _objects.pop(ptr, None)
        ref = _owned.pop(ptr, None)
        del _counts[ptr]  # last: a first retain of the same object must not start before
        _release()
        del obj, ref  # may run the object's __del__, never under the lock
    except BaseException:  # never propagate into C (at interpreter shutdown the module may be gone)
        pass


def live_count() -> int:
    """How many Python objects C boxes hold right now (for tests and leak checks)."""
    return len(_counts)


#: The destructor of every Python-made instance; process-wide, never freed (instances outlive containers).
DROP = DROP_FN(release)
