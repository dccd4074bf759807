"""Native (C-made) instances seen from Python: ``NativeRef`` owns a strong handle, ``NativeWeak`` a weak one.

Python objects made by Python factories come back as themselves; only instances made by C
factories (registered through ``Container.handle`` by a C library) are wrapped. While a
``NativeRef`` for an address is alive, every way of reaching that instance from Python returns
that same ``NativeRef`` object, so ``is`` works across the language boundary.
"""

from __future__ import annotations

import ctypes
import threading
import weakref
from ctypes import c_void_p
from typing import Any, TypeVar

from . import _fork, object_table
from ._cabi import OK, Api
from ._cabi import E_EXPIRED as _EXPIRED
from .errors import InvalidHandleError, error_for
from .messages import last_message

_C = TypeVar("_C")

_identity: weakref.WeakValueDictionary[int, NativeRef] = weakref.WeakValueDictionary()
_identity_lock = _fork.lock()


def _raise_last(api: Api, status: int) -> None:
    raise error_for(status, last_message(api))


class NativeRef(object_table.HasAddress):
    """A strong handle (``tether_ref``) to a native instance; releasing it may destroy the instance.

    ``address`` is the instance pointer as an int; ``cast(ctype)`` gives a ctypes pointer to it;
    passing the object to a ctypes function with a ``c_void_p`` parameter passes the address.
    Released by ``release()``, by leaving a ``with`` block, or when garbage-collected.
    """

    __slots__ = ("_api", "_ref", "address", "__weakref__")
    _api: Api
    _ref: int | None
    address: int

    def __init__(self) -> None:
        raise TypeError("NativeRef objects are made by tether (resolve, weak upgrades), not directly")

    @classmethod
    def _adopt(cls, api: Api, ref: int, address: int) -> NativeRef:
        """Wraps an owned strong handle, or returns the live NativeRef for the same address."""
        with _identity_lock:
            existing = _identity.get(address)
            if existing is None or existing._ref is None:
                self = object.__new__(cls)
                self._api = api
                self._ref = ref
                self.address = address
                _identity[address] = self
                return self
        api.tether_ref_release(ref)  # the live one already holds the instance
        return existing

    @property
    def released(self) -> bool:
        """True once ``release()`` ran."""
        return self._ref is None

    def release(self) -> None:
        """Releases the handle now (idempotent). The instance dies if this was its last holder."""
        ref, self._ref = self._ref, None
        if ref is not None:
            with _identity_lock:
                if _identity.get(self.address) is self:
                    del _identity[self.address]
            self._api.tether_ref_release(ref)

    def downgrade(self) -> NativeWeak:
        """A weak handle to the same instance."""
        weak = c_void_p()
        status = self._api.tether_ref_downgrade(self._handle(), weak)
        if status != OK:
            _raise_last(self._api, status)
        return NativeWeak._adopt(self._api, weak.value or 0)

    def cast(self, ctype: type[_C]) -> Any:
        """``ctypes.cast(address, POINTER(ctype))``: read the instance as a C struct."""
        self._handle()
        return ctypes.cast(ctypes.c_void_p(self.address), ctypes.POINTER(ctype))  # type: ignore[type-var]

    def _handle(self) -> int:
        if self._ref is None:
            raise InvalidHandleError(f"NativeRef 0x{self.address:x} was released")
        return self._ref

    @property
    def _as_parameter_(self) -> c_void_p:
        return c_void_p(self.address)

    def __int__(self) -> int:
        return self.address

    def __eq__(self, other: object) -> bool:
        return isinstance(other, NativeRef) and other.address == self.address

    def __hash__(self) -> int:
        return hash(self.address)

    def __enter__(self) -> NativeRef:
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()

    def __repr__(self) -> str:
        state = " released" if self._ref is None else ""
        return f"<tether.NativeRef 0x{self.address:x}{state}>"

    def __del__(self) -> None:
        try:
            self.release()
        except Exception:  # interpreter shutdown
            pass


class NativeWeak:
    """A weak handle (``tether_weak``) to a native instance, ``weakref.ref``-style.

    Calling it returns the ``NativeRef`` while the instance lives, ``None`` once it is gone.
    """

    __slots__ = ("_api", "_weak", "__weakref__")
    _api: Api
    _weak: int | None

    def __init__(self) -> None:
        raise TypeError("NativeWeak objects are made by tether, not directly")

    @classmethod
    def _adopt(cls, api: Api, weak: int) -> NativeWeak:
        self = object.__new__(cls)
        self._api = api
        self._weak = weak
        return self

    def __call__(self) -> Any:
        if self._weak is None:
            return None
        ref = c_void_p()
        status = self._api.tether_weak_upgrade(self._weak, ref)
        if status == _EXPIRED:
            return None
        if status != OK:
            _raise_last(self._api, status)
        return adopt(self._api, ref)

    def release(self) -> None:
        """Releases the weak handle now (idempotent); calling afterwards returns None."""
        weak, self._weak = self._weak, None
        if weak is not None:
            self._api.tether_weak_release(weak)

    def __repr__(self) -> str:
        return "<tether.NativeWeak released>" if self._weak is None else "<tether.NativeWeak>"

    def __del__(self) -> None:
        try:
            self.release()
        except Exception:
            pass


def adopt(api: Api, ref: c_void_p) -> Any:
    """Turns an owned strong handle into the Python view of its instance.

    A Python object comes back as itself (and the handle is released: Python's own references
    keep it alive from now on); a native instance becomes a ``NativeRef`` owning the handle.
    """
    address = api.tether_ref_get(ref) or 0
    obj = object_table.lookup(address, object_table.MISSING)
    if obj is object_table.MISSING:
        return NativeRef._adopt(api, ref.value or 0, address)
    api.tether_ref_release(ref)
    return obj


def weak_callable(api: Api, weak: int) -> Any:
    """Turns an owned weak handle into a ``weakref.ref``-style callable (takes ownership).

    For a Python object that is ``weakref.ref(obj)`` (the handle is released: Python's own
    references decide). For a native instance it is a ``NativeWeak`` keeping the handle.
    Raises TypeError for Python objects that cannot be weakly referenced.
    """
    ref = c_void_p()
    status = api.tether_weak_upgrade(weak, ref)
    if status == _EXPIRED:
        return NativeWeak._adopt(api, weak)
    if status != OK:
        message = last_message(api)
        api.tether_weak_release(weak)
        raise error_for(status, message)
    address = api.hot_ref_get(ref) or 0
    obj = object_table.lookup(address, object_table.MISSING)
    if obj is object_table.MISSING:
        api.hot_ref_release(ref)
        return NativeWeak._adopt(api, weak)
    try:
        return python_weak(obj)
    finally:
        api.hot_ref_release(ref)
        api.tether_weak_release(weak)


def python_weak(obj: Any) -> weakref.ref[Any]:
    """``weakref.ref(obj)`` for a weak edge to a Python-made instance; a TypeError that says what
    to do if its class does not support weak references."""
    try:
        return weakref.ref(obj)
    except TypeError:
        raise TypeError(
            f"a weak dependency needs an object that supports weak references, and "
            f"{type(obj).__name__!r} objects do not: give the class a __weakref__ slot (or drop "
            f"__slots__), or depend on it strongly"
        ) from None
