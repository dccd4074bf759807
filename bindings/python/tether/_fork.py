"""The package's own locks in a forked child: made free again there.

A child of ``fork()`` has only the forking thread: a lock another thread held at that moment would
never be released in the child, and the first call needing it would hang (the library rebuilds its
own locks the same way, in a ``pthread_atfork`` handler). So every module-level lock of the package
is made here, and reinitialized in the child before anything else runs there."""

from __future__ import annotations

import os
import threading
from typing import Any, Callable

_locks: list[Any] = []
_also: list[Callable[[], None]] = []


def lock() -> Any:
    """A ``threading.Lock`` that is free again in a forked child."""
    made = threading.Lock()
    _locks.append(made)
    return made


def rlock() -> Any:
    """A ``threading.RLock`` that is free again in a forked child."""
    made = threading.RLock()
    _locks.append(made)
    return made


def in_child(fn: Callable[[], None]) -> None:
    """Runs ``fn`` in a forked child, after the locks are free (forget other threads' state)."""
    _also.append(fn)


def _after_fork_in_child() -> None:
    for held in _locks:
        held._at_fork_reinit()
    for fn in _also:
        fn()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)
