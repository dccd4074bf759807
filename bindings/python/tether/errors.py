"""Exceptions: one class per tether_status, plus the two ways loading can fail."""

from __future__ import annotations

import enum
import sys
from typing import Sequence


class Status(enum.IntEnum):
    """``tether_status``, with the C names."""

    OK = 0
    E_INVALID_ARGUMENT = 1
    E_INVALID_HANDLE = 2
    E_NOT_FOUND = 3
    E_CYCLE = 4
    E_RETAIN_CYCLE = 5
    E_FACTORY_FAILED = 6
    E_ARGUMENT_MISMATCH = 7
    E_EXPIRED = 8
    E_WRONG_CONTEXT = 9
    E_NO_MEMORY = 10
    E_WOULD_BLOCK = 11
    E_BUFFER_TOO_SMALL = 12
    E_CAPTIVE_DEPENDENCY = 13

    @property
    def c_name(self) -> str:
        """``"TETHER_E_CYCLE"`` etc., as ``tether_status_name`` spells it."""
        return "TETHER_OK" if self is Status.OK else f"TETHER_{self.name}"


class TetherError(Exception):
    """Base of every error the library reports. ``status`` is the C status, ``message`` its text."""

    status: Status | int | None = None

    def __init__(self, message: str, status: int | None = None) -> None:
        super().__init__(message)
        self.message = message
        if status is not None:
            self.status = Status(status) if status in Status._value2member_map_ else status


class InvalidArgumentError(TetherError, ValueError):
    """TETHER_E_INVALID_ARGUMENT: a bad argument reached the library (e.g. closing a container with children)."""

    status = Status.E_INVALID_ARGUMENT


class InvalidHandleError(TetherError):
    """TETHER_E_INVALID_HANDLE: a closed container, a released reference, a stale registration."""

    status = Status.E_INVALID_HANDLE


class NotFoundError(TetherError, LookupError):
    """TETHER_E_NOT_FOUND: a key is not registered; the message names the path that needed it."""

    status = Status.E_NOT_FOUND


class CycleError(TetherError):
    """TETHER_E_CYCLE: a cycle through constructors; the message draws it and says how to break it."""

    status = Status.E_CYCLE


class RetainCycleError(TetherError):
    """TETHER_E_RETAIN_CYCLE: a strong edge would close a cycle of strong edges (use ``r.weak``)."""

    status = Status.E_RETAIN_CYCLE


class FactoryError(TetherError):
    """TETHER_E_FACTORY_FAILED: a factory or completion callback failed.

    When a Python factory or callback raised, that exception is ``__cause__`` (traceback intact).
    """

    status = Status.E_FACTORY_FAILED


class AsyncResolveError(FactoryError, TypeError):
    """A synchronous ``resolve`` reached an async factory or completion callback: the message
    names ``aresolve`` (``await container.aresolve(key)``)."""


class NeedsAwait(TypeError):
    """An async factory, callback or teardown reached outside ``aresolve``/``aclose`` (the
    ``__cause__`` of ``AsyncResolveError``, or what ``close()`` raises)."""


class ArgumentMismatchError(TetherError, TypeError):
    """TETHER_E_ARGUMENT_MISMATCH: wrong number or kind of runtime arguments."""

    status = Status.E_ARGUMENT_MISMATCH


class ExpiredError(TetherError):
    """TETHER_E_EXPIRED: the instance a weak handle pointed to is gone."""

    status = Status.E_EXPIRED


class WrongContextError(TetherError):
    """TETHER_E_WRONG_CONTEXT: a resolver used after its callback returned."""

    status = Status.E_WRONG_CONTEXT


class NoMemoryError(TetherError, MemoryError):
    """TETHER_E_NO_MEMORY: allocation failed (or the system refused executable closure pages)."""

    status = Status.E_NO_MEMORY


class WouldBlockError(TetherError):
    """TETHER_E_WOULD_BLOCK: a no-wait resolve needed a lock another thread held (``resolve`` retries)."""

    status = Status.E_WOULD_BLOCK


class BufferTooSmallError(TetherError):
    """TETHER_E_BUFFER_TOO_SMALL: a buffer passed to the library was too small (the binding retries)."""

    status = Status.E_BUFFER_TOO_SMALL


class CaptiveDependencyError(TetherError):
    """TETHER_E_CAPTIVE_DEPENDENCY: a singleton would hold a shorter-lived instance (``Container(strict=True)``)."""

    status = Status.E_CAPTIVE_DEPENDENCY


class FactoryReturnedNone(ValueError):
    """What a Python factory that returned None is taken to have raised (the ``__cause__`` of its
    ``FactoryError``): return the instance, or raise to fail."""


def _teardown_message(exceptions: Sequence[BaseException]) -> str:
    count = len(exceptions)
    first = exceptions[0] if exceptions else None
    head = f"{type(first).__name__}: {first}" if first is not None else ""
    return f"{count} teardown{'s' if count != 1 else ''} failed" + (f" (first: {head})" if head else "")


if sys.version_info >= (3, 11):

    class TeardownError(TetherError, ExceptionGroup):  # noqa: F821 (a builtin from 3.11)
        """Teardowns (generator finalizers, ``close=`` functions) that failed while a container let
        go of what it made; every other teardown still ran. ``exceptions``: what they raised, in
        the order they ran. Also an ``ExceptionGroup`` (``except* OSError`` works)."""

        def __new__(cls, exceptions: Sequence[Exception], message: str | None = None) -> TeardownError:
            return super().__new__(cls, message or _teardown_message(exceptions), list(exceptions))

        def __init__(self, exceptions: Sequence[Exception], message: str | None = None) -> None:
            pass  # ExceptionGroup's message and exceptions, set by __new__

        def derive(self, excs: Sequence[Exception]) -> TeardownError:
            return TeardownError(excs, self.message)

else:

    class TeardownError(TetherError):  # type: ignore[no-redef]
        """Teardowns (generator finalizers, ``close=`` functions) that failed while a container let
        go of what it made; every other teardown still ran. ``exceptions``: what they raised, in
        the order they ran."""

        def __init__(self, exceptions: Sequence[Exception], message: str | None = None) -> None:
            super().__init__(message or _teardown_message(exceptions))
            self.exceptions = tuple(exceptions)


class LibraryNotFoundError(ImportError):
    """libtether.so could not be found or loaded; the message lists where the binding looked."""


class VersionMismatchError(ImportError):
    """The loaded libtether.so has another MAJOR.MINOR than this package."""


_BY_STATUS: dict[int, type[TetherError]] = {
    cls.status: cls
    for cls in (
        InvalidArgumentError,
        InvalidHandleError,
        NotFoundError,
        CycleError,
        RetainCycleError,
        FactoryError,
        ArgumentMismatchError,
        ExpiredError,
        WrongContextError,
        NoMemoryError,
        WouldBlockError,
        BufferTooSmallError,
        CaptiveDependencyError,
    )
}


def error_for(status: int, message: str) -> TetherError:
    """The exception for a non-OK status (``TetherError`` itself for a status this package does not know)."""
    cls = _BY_STATUS.get(status, TetherError)
    if not message:
        message = Status(status).c_name if status in Status._value2member_map_ else f"tether status {status}"
    return cls(message, status)
