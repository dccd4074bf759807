"""``Override``: what ``Container.override`` returns, ending the override as a context manager or
with ``clear()``. What an override does (who gets it, which cached instances are rebuilt, when the
library lets go of the fake) is the library's (``tether_override``); this only keeps the Python
registrations of the key aside meanwhile."""

from __future__ import annotations

from typing import Any, Generic, TypeVar

T = TypeVar("T")


class Override(Generic[T]):
    """One override of ``key`` in ``container``; ``clear()`` (or leaving ``with``) ends it, once."""

    __slots__ = ("_container", "_key", "_cleared")

    def __init__(self, container: Any, key: Any) -> None:
        self._container = container
        self._key = key
        self._cleared = False

    def clear(self) -> None:
        """Ends this override (``Container.clear_override``); a second call does nothing."""
        if not self._cleared:
            self._cleared = True
            self._container.clear_override(self._key)

    def __enter__(self) -> Override[T]:
        return self

    def __exit__(self, *exc: object) -> None:
        self.clear()

    def __repr__(self) -> str:
        state = "cleared" if self._cleared else "active"
        return f"<tether.Override of {self._key!r} ({state})>"
