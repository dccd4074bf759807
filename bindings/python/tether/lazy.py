"""The callables a Python factory gets for ``tether.lazy``, ``tether.weak_lazy`` and ``tether.factory`` dependencies.

They are Python objects, not the library's C trampolines: a C lazy slot lives only as long as
the dependent's C box, while a Python dependent lives as long as Python holds it. The C slot is
still declared (so ``validate`` and ``to_dot`` see the edge); the binding ignores its pointer.
"""

from __future__ import annotations

import weakref
from typing import Any, Callable

from .errors import InvalidHandleError
from .native_refs import NativeRef

_UNSET: Any = object()


class _Deferred:
    __slots__ = ("_container", "_key")

    def __init__(self, container: Any, key: str) -> None:
        self._container: Callable[[], Any] | None = weakref.ref(container) if container is not None else None
        self._key = key

    def _resolve(self) -> Any:
        container = self._container() if self._container is not None else None
        if container is None or container.closed:
            raise InvalidHandleError(f"lazy dependency on {self._key!r}: its container was closed")
        return container.resolve(self._key)


class Lazy(_Deferred):
    """``tether.lazy(K)``: resolves K on the first call (from the container the dependent was
    resolved from), then holds it strongly and returns the same object on every call."""

    __slots__ = ("_value",)

    def __init__(self, container: Any, key: str) -> None:
        super().__init__(container, key)
        self._value: Any = _UNSET

    def __call__(self) -> Any:
        value = self._value
        if value is _UNSET:
            value = self._resolve()
            if self._value is _UNSET:  # two threads may race the first call: the first result wins
                self._value = value
                self._container = None
            value = self._value
        return value

    def __repr__(self) -> str:
        return f"<tether.lazy {self._key!r}{' resolved' if self._value is not _UNSET else ''}>"


class WeakLazy(_Deferred):
    """``tether.weak_lazy(K)``: resolves K on the first call and holds it weakly; returns None once
    it is gone. The first call returns the object even when nobody else holds it yet."""

    __slots__ = ("_ref",)

    def __init__(self, container: Any, key: str) -> None:
        super().__init__(container, key)
        self._ref: Callable[[], Any] | None = None

    def __call__(self) -> Any:
        ref = self._ref
        if ref is not None:
            return ref()
        value = self._resolve()
        if isinstance(value, NativeRef):
            ref = value.downgrade()
        else:
            try:
                ref = weakref.ref(value)
            except TypeError:
                raise TypeError(
                    f"tether.weak_lazy({self._key!r}): {type(value).__name__!r} objects cannot be weakly "
                    f"referenced; give the class a __weakref__ slot or use tether.lazy"
                ) from None
        if self._ref is None:
            self._ref = ref
            self._container = None
        return value

    def __repr__(self) -> str:
        return f"<tether.weak_lazy {self._key!r}>"


class Factory(_Deferred):
    """``tether.factory(K)``: ``make(*args)`` builds a new K with those runtime arguments (as
    ``container.resolve(K, *args)``, from the container the dependent was resolved from), its
    other dependencies injected; wrong arguments raise ``ArgumentMismatchError``, a call after
    that container closed ``InvalidHandleError``."""

    __slots__ = ()

    def __call__(self, *args: Any) -> Any:
        container = self._container() if self._container is not None else None
        if container is None or container.closed:
            raise InvalidHandleError(f"tether.factory({self._key!r}): its container was closed")
        return container.resolve(self._key, *args)

    def __repr__(self) -> str:
        return f"<tether.factory {self._key!r}>"
