"""The resolver a completion callback receives: reach other instances of the same graph."""

from __future__ import annotations

import functools
from ctypes import c_void_p
from typing import Any, Callable, ClassVar
from weakref import ref as _weakref

from . import _state, messages, native_refs, object_table
from ._cabi import OK, Api, PointerOut
from .errors import error_for
from .markers import Key, _encoded, encode_key
from .messages import last_message

_fresh_of = object_table.fresh_of


def native_via_resolver(api: Api, resolver: int, instance: int) -> native_refs.NativeRef:
    """An owned ``NativeRef`` to ``instance``, a native instance of the running resolve.

    A pointer handed to Python from C (a dependency, ``tether_resolver_get``) is only kept alive
    by the C box of the Python dependent, which dies when the resolve returns; Python needs a
    handle of its own: ``tether_resolver_ref``.
    """
    ref = c_void_p()
    status = api.tether_resolver_ref(resolver, instance, ref)
    if status != OK:
        raise error_for(status, last_message(api))
    return native_refs.NativeRef._adopt(api, ref.value or 0, instance)


class Resolver:
    """Valid only during the callback that received it (afterwards: ``WrongContextError``).

    ``get(key)`` returns the graph's instance and records a strong edge from the instance being
    completed (``RetainCycleError`` if that edge would close a cycle of strong edges);
    ``weak(key)`` records a weak edge and returns a ``weakref.ref``-style callable.
    """

    __slots__ = ("_handle",)
    _api: ClassVar[Api]  # the loaded library: one per process
    _handle: int

    def __init__(self, api: Api, handle: int) -> None:
        Resolver._api = api
        self._handle = handle

    def get(self, key: Key) -> Any:
        """The instance of ``key`` in this graph, held strongly by the instance being completed."""
        raw = _encoded.get(key) or encode_key(key)
        out = PointerOut()
        status = self._api.tether_resolver_get(self._handle, raw, out)
        if status != OK:
            _state.raise_failure(status, messages.last(self._api))
        address = out[0]
        obj = object_table.lookup(address or 0, object_table.MISSING)
        if obj is object_table.MISSING:
            return native_via_resolver(self._api, self._handle, address or 0)
        return obj

    def weak(self, key: Key) -> Callable[[], Any]:
        """A weak reference to the instance of ``key`` in this graph: call it for the object or None."""
        # Records the weak edge and gives the instance without making a weak handle: a Python
        # object gets Python's own weakref.ref. The pointer is valid here, as every instance of
        # the running resolve is alive until it returns.
        raw = _encoded.get(key) or encode_key(key)
        instance = PointerOut()
        status = self._api.tether_resolver_get_weak_instance(self._handle, raw, instance, None)
        if status != OK:
            _state.raise_failure(status, messages.last(self._api))
        address = instance[0]
        obj = _fresh_of(address)
        if obj is not None:
            try:
                return _weakref(obj)
            except TypeError:
                pass  # python_weak says what to do
        obj = object_table.lookup(address or 0, object_table.MISSING)
        if obj is object_table.MISSING:
            # A native instance: NativeWeak needs a weak handle. Asking the key again would build a
            # second instance of a transient key, so take a handle to this very instance
            # (tether_resolver_ref; the same as get() does) and downgrade it.
            return native_via_resolver(self._api, self._handle, address or 0).downgrade()
        return native_refs.python_weak(obj)

    def __repr__(self) -> str:
        return "<tether.Resolver>"


def resolver_for(api: Api) -> Callable[[], Resolver]:
    """``make()``: a new ``Resolver`` whose ``_handle`` the caller sets, made without running
    ``__init__`` or any Python frame (completion trampolines make one per call)."""
    Resolver._api = api  # one library per process (tether.load refuses a second)
    return functools.partial(object.__new__, Resolver)
