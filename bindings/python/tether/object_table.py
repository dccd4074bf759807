"""Which Python object a C instance pointer stands for.

A Python factory's result is handed to the library as a pointer, and the binding keeps the
object alive in a table from that pointer to the object, once per C instance box (the same
object can be boxed more than once, e.g. a weak-scoped service reused by a later resolve, or a
factory that returns an object it did not make). The box's destructor (``DROP``, or
``DROP_FAST`` for registrations whose factory is a class that always makes a new object) takes
that box back; after the last one the table forgets the object and Python's reference counting
takes over.

The usual boxes cost no lock: a fresh_class factory's new object lives in ``_fresh``, any other
plain object's only box in ``_boxes`` (see the notes at the tables below); other boxes are
counted under a lock.

Singletons are the exception to "held by the table": their owner is the container's cache, so
the table only refers to them weakly (in ``_owned``), through an ``Owned`` cell that the
registration holds.
That way the garbage collector sees container -> singleton, and a singleton that references its
own container is an ordinary, collectable cycle. Whenever the container lets go (reset, close,
re-registration) the cell is ``disown``ed first: the table takes a strong reference for as long
as C boxes still count it. A cell is emptied (``obj`` None) once it owns nothing: when it is
disowned, or when the library lets go of the object's last box without the binding's knowing
(C code reset the singleton), so nothing that still refers to the cell (the registration, the
containers' hits: see ``container.Entry``) keeps the object alive beyond the library.

The pointer is ``id(obj)``, except for objects C must be able to read: a ctypes
``Structure``/``Union``/``Array`` is passed as its buffer address (so a C struct of function
pointers filled from Python is a real C struct to C), and a ``NativeRef`` as the native
address it holds.
"""

from __future__ import annotations

import ctypes
import operator
import threading
import weakref
from typing import Any, Callable, cast

from . import _fork
from ._cabi import DROP_CAPACITY, DROP_FN, FIRST_DROP, MORE_DROPS

#: Returned by ``lookup`` for a pointer that is not a Python object (a native instance).
MISSING: Any = object()
_ABSENT: Any = object()

_fresh: dict[int, Any] = {}  # pointer -> object: the box of a new object from a fresh_class factory
_boxes: dict[int, tuple[Any]] = {}  # pointer -> (object,): one other box of a plain object (the fast path)
_objects: dict[int, Any] = {}  # pointer -> object, held strongly: the other boxes (see below)
_owned: dict[int, weakref.ref[Owned]] = {}  # pointer -> cell of a container-owned object, held weakly
_counts: dict[int, list[int]] = {}  # pointer -> [how many C boxes _objects/_owned count for it]
_lock = _fork.lock()
_C_DATA = (ctypes.Structure, ctypes.Union, ctypes.Array)

# ``_fresh`` holds the box of each new object a ``fresh_class`` factory made: the object is new, so
# nothing else holds a box of it yet, its id cannot be a key already, and ``DROP_FAST`` (its
# ``pop``) takes the box back; other boxes of the same object go to the tables below.
#
# Two tables, so that the usual other box costs no lock. A plain Python object (its pointer is its id)
# boxed once at a time lives in ``_boxes`` under a cell of its own: ``setdefault`` with a new
# cell tells atomically whether this is the first box, and the destructor's ``pop`` takes it
# back atomically. Every other box (a second box of the same object at the same time, ctypes
# data and NativeRefs, container-owned singletons) is counted in ``_objects``/``_owned``/``_counts``
# under ``_lock``. Boxes of one pointer in these tables are interchangeable: ``release`` takes
# back a count if there is one, else the fast box (and a count after all if another thread took
# that meanwhile), so both tables hold the object until its last box is gone.


class HasAddress:
    """Base of Python objects that stand for a native address (``NativeRef``): C gets that address."""

    __slots__ = ()
    address: int


#: ``fresh_of(ptr)``: the object if ``ptr`` is the box of a fresh_class factory's object, else None
#: (then ``box_of``). The hot paths' first lookup.
fresh_of = cast("Callable[[int | None], Any]", _fresh.get)
#: ``box_of(ptr)``: ``(obj,)`` if ``ptr`` is the fast box of a plain object, else None (then ask
#: ``lookup``: a counted, container-owned or native instance, or NULL). For the hot paths.
box_of = cast("Callable[[int | None], tuple[Any] | None]", _boxes.get)


def held(ptr: int | None) -> Any:
    """The object in the lock-free tables for ``ptr``, or None (then ask ``lookup``)."""
    obj = _fresh.get(ptr)  # type: ignore[arg-type]
    if obj is not None:
        return obj
    cell = _boxes.get(ptr)  # type: ignore[arg-type]
    return None if cell is None else cell[0]


class Owned:
    """A Python object held for C by its container (a singleton cache) rather than by the table;
    ``obj`` is None once the cell owns nothing (see the module's docstring)."""

    __slots__ = ("obj", "ptr", "__weakref__")

    def __init__(self, obj: Any, ptr: int) -> None:
        self.obj = obj
        self.ptr = ptr


def lookup(ptr: int | None, default: Any = MISSING) -> Any:
    """The Python object for an instance pointer, or ``default`` (a native instance)."""
    obj = _fresh.get(ptr)  # type: ignore[arg-type]
    if obj is not None:
        return obj
    cell = _boxes.get(ptr)  # type: ignore[arg-type]
    if cell is not None:
        return cell[0]
    obj = _objects.get(ptr, _ABSENT)  # type: ignore[arg-type]
    if obj is _ABSENT:
        ref = _owned.get(ptr)  # type: ignore[arg-type]
        c = ref() if ref is not None else None
        obj = c.obj if c is not None else None
        if obj is None:  # a box just moved between the tables by another thread? look once more
            obj = _objects.get(ptr, _ABSENT)  # type: ignore[arg-type]
            if obj is not _ABSENT:
                return obj
            cell = _boxes.get(ptr)  # type: ignore[arg-type]
            return default if cell is None else cell[0]
    return obj


_ID, _BUFFER, _ADDRESS = 0, 1, 2
_how: dict[type, int] = {}  # per class: which pointer stands for its objects (isinstance on ctypes types is slow)
#: Classes whose objects are passed as their id (no ctypes data, no NativeRef): the hot paths'
#: ``type(obj) in plain`` test. Filled by ``pointer_of``; other classes take ``retain``.
plain: set[type] = set()


def _classify(cls: type) -> int:
    if len(_how) > 4096:
        _how.clear()
        plain.clear()
    how = _BUFFER if issubclass(cls, _C_DATA) else _ADDRESS if issubclass(cls, HasAddress) else _ID
    _how[cls] = how
    if how == _ID and cls is not type(None):  # None is never an instance (factories fail with it)
        plain.add(cls)
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
    """Counts one more C box holding ``obj`` and returns its pointer.

    The hot paths inline the first lines: ``if type(obj) in plain`` and a new cell that
    ``_boxes.setdefault`` takes (else ``retain_counted``).
    """
    if type(obj) in plain:
        cell = (obj,)
        ptr = id(obj)
        if _boxes.setdefault(ptr, cell) is cell:
            return ptr
    return retain_counted(obj)


def retain_counted(obj: Any) -> int:
    """``retain`` past the fast path: the fast box of this object is taken, or it is not plain."""
    ptr = pointer_of(obj)
    if ptr == id(obj):  # plain after all (a class seen for the first time): try the fast box
        cell = (obj,)
        if _boxes.setdefault(ptr, cell) is cell:
            return ptr
    _acquire()
    try:
        _count(obj, ptr, owned=False)
    finally:
        _release()
    return ptr


def retain_owned(obj: Any) -> tuple[int, Owned | None]:
    """``retain`` for a container-owned object: returns the cell to hold, or None when the table
    already holds the object (another box counts it)."""
    ptr = pointer_of(obj)
    _acquire()
    try:
        cell = _count(obj, ptr, owned=True)
    finally:
        _release()
    return ptr, cell


def _count(obj: Any, ptr: int, owned: bool) -> Owned | None:
    """Under the lock: one more counted box for ``ptr``; a new cell if it is the first and ``owned``."""
    count = _counts.get(ptr)
    if count is not None:
        count[0] += 1
    else:
        _counts[ptr] = [1]
        if owned:
            cell = Owned(obj, ptr)
            _owned[ptr] = weakref.ref(cell)
            return cell
    if ptr not in _owned:
        _objects[ptr] = obj
    return None


def disown(cell: Owned | None) -> None:
    """The container lets go of ``cell``: the table holds the object strongly while C counts it,
    and the cell is emptied."""
    if cell is None:
        return
    _acquire()
    ref = _owned.get(cell.ptr)
    if ref is not None and ref() is cell:  # still counted by C boxes
        _objects[cell.ptr] = cell.obj  # before it leaves _owned: lookups always find it
        del _owned[cell.ptr]
    _release()
    cell.obj = None  # outside the lock: this may be the last reference


def release(ptr: int | None, _context: int | None = None, _pop: Any = _boxes.pop, _counted: Any = _counts) -> None:
    """Takes back one box of ``ptr``: a counted one if there is one, else the fast one.

    Also the destructor of every Python-made instance but those of ``DROP_FAST`` (``DROP``:
    ``drop(instance, context)``). The object may die here (its ``__del__`` runs in this call,
    never under the lock).
    """
    if ptr in _counted or (_pop(ptr, None) is None and ptr):
        _release_counted(ptr)  # type: ignore[arg-type]


def _release_counted(ptr: int) -> None:
    try:
        _acquire()
        count = _counts.get(ptr)
        if count is None:  # another thread's release took the last count: the fast box is ours
            _release()
            _boxes.pop(ptr, None)
            return
        if count[0] > 1:
            count[0] -= 1
            _release()
            return
        obj = _objects.pop(ptr, None)
        ref = _owned.pop(ptr, None)
        del _counts[ptr]
        _release()
        cell = ref() if ref is not None else None
        if cell is not None:  # the library let go of a container-owned object: so does its cell
            cell.obj = None
        del obj, ref, cell  # may run the object's __del__, never under the lock
    except BaseException:  # never propagate into C (at interpreter shutdown the module may be gone)
        pass


def live_count() -> int:
    """How many Python objects C boxes hold right now (for tests and leak checks)."""
    return len(_fresh) + len(_boxes) + len(_counts)


def fresh_class(factory: Any) -> bool:
    """True if calling ``factory`` always makes a new plain object: a class with the default
    ``__new__`` and metaclass ``__call__``, whose instances are passed to C as their id (not ctypes
    data, not a NativeRef). Its instances never share a box, so their destructor can be ``DROP_FAST``
    (assuming ``__init__`` does not hand ``self`` to another thread that returns it from a factory
    before ``__init__`` has returned)."""
    return (
        isinstance(factory, type)
        and getattr(type(factory), "__call__") is getattr(type, "__call__")
        and getattr(factory, "__new__") is object.__new__
        and not issubclass(factory, (HasAddress, *_C_DATA))
    )


#: The destructor of every Python-made instance; process-wide, never freed (instances outlive containers).
DROP = DROP_FN(release)
#: The destructor of the instances of registrations whose factory is a ``fresh_class`` in TRANSIENT or
#: GRAPH scope: each such instance is the ``_fresh`` box of a new object, so taking it back is one
#: ``_fresh.pop(instance, context)``, and C calls that dict method directly (no Python frame).
DROP_FAST = DROP_FN(_fresh.pop)


FAST_DROP = ctypes.cast(DROP_FAST, ctypes.c_void_p).value
_DROP = ctypes.cast(DROP, ctypes.c_void_p).value
_fresh_pop = _fresh.pop


def _views(count: int) -> tuple[Callable[[Any], Any], Callable[[Any], Any], tuple[int, ...]]:
    fns = range(FIRST_DROP, FIRST_DROP + 3 * count, 3)
    instances = operator.itemgetter(*(i + 1 for i in fns)) if count > 1 else operator.itemgetter(slice(FIRST_DROP + 1, FIRST_DROP + 2))
    return operator.itemgetter(*fns, 2), instances, (*(FAST_DROP,) * count, count)


#: ``DROP_VIEWS[n - 1]``, for n drops in the ``words`` of ``_cabi.collect_buffer()``: ``fns(words)``
#: (with the count, so that one drop is a tuple too), ``instances(words)`` (iterable), and what
#: ``fns(words)`` is when every drop is DROP_FAST's (the usual case: pop them from ``_fresh``).
DROP_VIEWS = [_views(n) for n in range(1, DROP_CAPACITY + 1)]


def run_drops(words: Any, count: int, first: int = FIRST_DROP) -> None:
    """Runs the ``count`` drops a resolve collected (see ``DROP_VIEWS``), in order: ``DROP_FAST``'s
    and ``DROP``'s in Python, any other through C. Those past the buffer's ``DROP_CAPACITY`` are
    in the library's array ``words[MORE_DROPS]`` (RESOLVE_MORE_DROPS), valid until this thread
    calls the library again: they are copied before any drop runs. (``first``: where the drops
    start in ``words``; 0 for such a copy.)"""
    if count > DROP_CAPACITY and first == FIRST_DROP:
        rest = (ctypes.c_uint64 * (3 * (count - DROP_CAPACITY))).from_address(words[MORE_DROPS])[:]
        run_drops(words, DROP_CAPACITY)
        run_drops(rest, count - DROP_CAPACITY, 0)
        return
    for i in range(first, first + 3 * count, 3):
        fn, ptr = words[i], words[i + 1]
        if fn == FAST_DROP:
            _fresh_pop(ptr, None)
        elif fn == _DROP:
            release(ptr)
        else:  # a C registration's deferred drop
            DROP_FN(fn)(ptr, words[i + 2])
