"""Running an awaitable from synchronous code on the event loop's thread, without blocking it.

The library calls factories and destructors as C callbacks, which cannot suspend. ``step`` runs an
awaitable there up to its first suspension: most finish without one (an async factory that makes an
object, a commit that completes at once) and cost nothing more. One that suspends comes back as a
``Continuation``, which the caller awaits later, outside the C call, on the task that started it:
the rest of the awaitable then runs exactly as ``await`` would have run it (the futures it waits
on, cancellation thrown in, the task's context).
"""

from __future__ import annotations

from typing import Any, Awaitable, Generator


class Continuation:
    """The rest of an awaitable that ``step`` started and that suspended; await it once."""

    __slots__ = ("_it", "_pending")

    def __init__(self, it: Any, pending: Any) -> None:
        self._it = it
        self._pending = pending  # what it yielded: the future it waits on (or None: a bare yield)

    def __await__(self) -> Generator[Any, Any, Any]:
        it, pending = self._it, self._pending
        if it is None:
            raise RuntimeError("a tether continuation was awaited twice")
        self._it = None
        while True:  # ``yield from it``, entered after its first step
            try:
                sent = yield pending
            except GeneratorExit:
                it.close()
                raise
            except BaseException as exc:  # cancellation (or another throw) goes on to what waits
                try:
                    pending = it.throw(exc)
                except StopIteration as stop:
                    return stop.value
                continue
            try:
                pending = it.send(sent)
            except StopIteration as stop:
                return stop.value

    def close(self) -> None:
        """Abandons it (its ``finally`` blocks run now, without the loop)."""
        it, self._it = self._it, None
        if it is not None:
            it.close()


def step(awaitable: Awaitable[Any]) -> tuple[bool, Any]:
    """``(True, result)`` when ``awaitable`` finished without suspending, else ``(False,
    Continuation)``; what it raises before suspending is raised here."""
    it = awaitable.__await__()
    try:
        pending = it.send(None)
    except StopIteration as stop:
        return True, stop.value
    return False, Continuation(it, pending)
