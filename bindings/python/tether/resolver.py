"""The resolver a completion callback receives: reach other instances of the same graph."""

from __future__ import annotations

from ctypes import c_void_p
from typing import Any, Callable

from . import _state, native, objects
from ._native import OK, Api
from .errors import error_for
from .markers import Key, encode_key


def native_via_resolver(api: Api, resolver: int, instance: int) -> native.NativeRef:
    """An owned ``NativeRef`` to ``instance``, a native instance of the running resolve.

    A pointer handed to Python from C (a dependency, ``tether_resolver_get``) is only kept alive
    by the C box of the Python dependent, which dies when the resolve returns; Python needs a
    handle of its own: ``tether_resolver_ref``.
    """
    ref = c_void_p()
    status = api.tether_resolver_ref(resolver, instance, ref)
    if status != OK:
        raise error_for(status, api.last_error())
    return native.NativeRef._adopt(api, ref.value or 0, instance)


class Resolver:
    """Valid only during the callback that received it (afterwards: ``WrongContextError``).

    ``get(key)`` returns the graph's instance and records a strong edge from the instance being
    completed (``RetainCycleError`` if that edge would close a cycle of strong edges);
    ``weak(key)`` records a weak edge and returns a ``weakref.ref``-style callable.
    """

    __slots__ = ("_api", "_handle")

    def __init__(self, api: Api, handle: int) -> None:
        self._api = api
        self._handle = handle

    def get(self, key: Key) -> Any:
        """The instance of ``key`` in this graph, held strongly by the instance being completed."""
        raw = encode_key(key)
        out = c_void_p()
        status = self._api.tether_resolver_get(self._handle, raw, out)
        if status != OK:
            _state.raise_failure(status, self._api.last_error())
        obj = objects.lookup(out.value or 0, objects.MISSING)
        if obj is objects.MISSING:
            return native_via_resolver(self._api, self._handle, out.value or 0)
        return obj

    def weak(self, key: Key) -> Callable[[], Any]:
        """A weak reference to the instance of ``key`` in this graph: call it for the object or None."""
        out = c_void_p()
        status = self._api.tether_resolver_get_weak(self._handle, encode_key(key), out)
        if status != OK:
            _state.raise_failure(status, self._api.last_error())
        return native.weak_callable(self._api, out.value or 0)  # type: ignore[no-any-return]

    def __repr__(self) -> str:
        return "<tether.Resolver>"
