"""Per-thread and process-wide bookkeeping shared by containers, registrations and trampolines."""

from __future__ import annotations

import itertools
import sys
import threading
import traceback
from typing import Any, NoReturn

from . import _fork
from ._cabi import PointerOut, collect_buffer
from .errors import AsyncResolveError, NeedsAwait, error_for
from .messages import Parts, render

#: Every thread's ``frames`` list, by thread id (a thread's entry is replaced when its id is reused).
all_frames: dict[int, list[list[Any]]] = {}


class _ThreadState(threading.local):
    def __init__(self) -> None:
        #: ``(frame, exception)``: the exception a Python factory/callback raised in the C call now
        #: unwinding, with the innermost frame of ``frames`` at that moment (None if there was none):
        #: a resolve takes it as the cause only if it is its own, so a stale one (left by a failure
        #: that C swallowed, or by a resolve C started) never needs clearing on the hot path.
        self.pending: tuple[list[Any] | None, BaseException] | None = None
        #: One frame per Python-initiated resolve running on this thread, innermost last:
        #: ``[container]``, the container it resolves from.
        self.frames: list[list[Any]] = []
        #: ``(frames, io, words, instance, out)`` for ``Container.resolve``: this thread's frames,
        #: the buffer of tether_resolve_key_collect and the out-parameters of its retry, reused (a
        #: nested resolve on this thread takes a buffer of its own; it is done with ``instance``
        #: and ``out`` before the outer call writes them).
        self.hot: tuple[list[list[Any]], Any, memoryview, Any, Any] = (
            self.frames, *collect_buffer(), PointerOut(), PointerOut())
        all_frames[threading.get_ident()] = self.frames


tls = _ThreadState()

#: One entry per other Python-initiated C call that may run trampolines (providers) on any thread
#: (list append/pop are atomic); resolves are counted by their frames (``all_frames``).
inflight: list[None] = []
#: What is under construction from Python, on any thread: one entry per replay of a described plan
#: (executor) and per library call that may run factories under way (append, `del [-1]`: atomic under the
#: GIL, where ``+= 1`` is not before 3.11; a count, so one thread's replay ending never clears
#: another's mark). A hint, read with no thread-local lookup: only while it is not empty does a
#: replay ask ``here()`` whether its own thread constructs something (then it declines, and its
#: resolve goes to the library), and a library call ask ``executor.enter`` whether a replay runs on
#: its thread (then it tells the library what that replay constructs: a factory resolving a key
#: further out on its thread is a cycle there, before any factory runs twice). Other threads'
#: constructions change nothing but the cost of those questions.
constructing: list[None] = []
#: The code of every function that makes a library call which may run factories (with an entry
#: in ``constructing`` while it runs): one of them on a thread's stack means that thread constructs.
constructing_calls: set[Any] = set()
#: What the compiled replay builders are named (``executor._compile``).
PLAN_FILE = "<tether plan>"


def here(depth: int = 1) -> bool:
    """Whether this thread constructs something: a replay builder or a library call that may run
    factories (``constructing_calls``) on its stack, above the caller ``depth`` frames up. Read
    from the stack, so only the rare call made while ``constructing`` is not empty pays for it."""
    frame: Any = sys._getframe(depth + 1)
    while frame is not None:
        code = frame.f_code
        if code in constructing_calls or code.co_filename == PLAN_FILE:
            return True
        frame = frame.f_back
    return False


#: One entry per ``aresolve`` attempt whose library call runs now, on any thread (see ``aio``).
attempting: list[None] = []


def _forget_other_threads() -> None:
    """In a forked child only this thread exists: other threads' resolves never return there."""
    mine = all_frames.get(threading.get_ident())
    all_frames.clear()
    if mine is not None:
        all_frames[threading.get_ident()] = mine
    inflight.clear()
    # what other threads were constructing never finishes here; this thread's does (each of its
    # library calls on its stack pops its entry, its replay clears the flag)
    entries = 0
    frame: Any = sys._getframe()
    while frame is not None:
        entries += frame.f_code in constructing_calls or frame.f_code.co_filename == PLAN_FILE
        frame = frame.f_back
    constructing[:] = [None] * entries


_fork.in_child(_forget_other_threads)


def busy() -> bool:
    """True while a Python-initiated resolve or provider call runs on any thread."""
    if len(all_frames) > 256:  # forget finished threads (an idle thread's list is empty)
        alive = sys._current_frames()
        for ident, frames in list(all_frames.items()):
            if ident not in alive and not frames:
                all_frames.pop(ident, None)
    return bool(inflight) or any(list(all_frames.values()))
#: Changed whenever a Python registration is added, replaced or closed (invalidates lookup caches).
generation = [0]
_generations = itertools.count(1)
_retire_lock = _fork.lock()


def bump_generation() -> None:
    generation[0] = next(_generations)  # next() is atomic: no lost update between threads
#: Trampolines of replaced registrations and closed containers, kept until no resolve runs.
retired: list[Any] = []


def retire(things: list[Any]) -> None:
    """Frees ``things`` (ctypes callbacks) now, or when the resolves running now have returned."""
    with _retire_lock:
        if busy():
            retired.extend(things)
    things.clear()


def resolve_finished() -> None:
    inflight.pop()
    if retired:
        free_retired()


def free_retired() -> None:
    """Frees the retired trampolines once no resolve runs (call it after popping one's frame or
    ``inflight`` entry)."""
    freed: list[Any] = []
    with _retire_lock:
        if not busy():  # every resolve that could use them has returned
            freed[:] = retired
            retired.clear()
    del freed  # outside the lock


def let_go(exc: BaseException) -> None:
    """Before a failed resolve lets go of what it made: ``exc`` (a factory's or callback's, caught
    in a frame of the package's that still runs) keeps, through its traceback, the frames it went
    through and their locals, the dependencies a factory was given among them, and those would
    outlive the resolve and die in whatever order the exception's end or the collector chose. The
    catching frame is cut off the traceback and the others' locals are cleared, so what the resolve
    made dies as the library orders it, last made first; the exception keeps its message, cause
    and the lines it went through."""
    tb = exc.__traceback__
    if tb is not None:
        exc.__traceback__ = tb.tb_next
        traceback.clear_frames(tb.tb_next)


def park(exc: BaseException) -> None:
    """Remembers ``exc`` as the cause of the failure now unwinding (see ``pending``)."""
    frames = tls.frames
    tls.pending = (frames[-1] if frames else None, exc)


_CURRENT: Any = object()


def raise_failure(status: int, message: str | Parts, frame: Any = _CURRENT) -> NoReturn:
    """Raises the error for a failed call, chained to the Python exception that caused it, if any.

    ``frame``: the resolve's own frame (default: the innermost one running on this thread).
    """
    if frame is _CURRENT:
        frames = tls.frames
        frame = frames[-1] if frames else None
    pending, cause = tls.pending, None
    if pending is not None and pending[0] is frame:
        cause = pending[1]
        tls.pending = None
    raise_caused(status, message, cause)


def raise_caused(status: int, message: str | Parts, cause: BaseException | None) -> NoReturn:
    """Raises the error for ``status``, chained to the Python exception that caused it, if any
    (``message``: as text, or the failure's parts, rendered knowing the cause)."""
    if isinstance(message, Parts):
        if cause is not None and getattr(type(cause), "takes_parts", False):  # (aio.Suspended: where it suspended)
            cause.parts = message  # type: ignore[union-attr]
        message = render(message, cause if isinstance(cause, Exception) else None)
    error = error_for(status, message)
    try:
        if cause is None:
            raise error from None  # not chained to an internal exception being handled (a cache miss)
        if not isinstance(cause, Exception):
            raise cause  # KeyboardInterrupt, SystemExit: not ours to wrap
        if isinstance(cause, NeedsAwait):  # an async factory or callback: a TypeError naming aresolve
            raise AsyncResolveError(message, status) from cause
        raise error from cause
    finally:
        # this frame holding what it raises is a cycle with its traceback: the frames under way
        # (a callback's, holding what a failed resolve made) would wait for the collector
        error = cause = None
