"""``Provider``: a context-free C function pointer resolving a key (``tether_make_provider``)."""

from __future__ import annotations

from ctypes import byref, c_void_p
from typing import Any

from . import _state, executor, messages, object_table
from ._cabi import E_FACTORY_FAILED, OK, PROVIDER_FN, Api
from .errors import error_for
from .messages import last_message


class Provider:
    """For legacy C APIs taking a ``void *(*)(void)`` callback without user data.

    ``address`` is the function pointer to hand to C. The first call resolves the key from the
    container and holds the instance; every call returns the same pointer. Calling it from
    Python returns the Python object, or the native address as an int (valid while the provider
    lives). ``free()`` (or garbage collection) releases it and what it holds.
    """

    __slots__ = ("_api", "address", "_call", "__weakref__")
    _api: Api
    address: int | None
    _call: Any

    def __init__(self) -> None:
        raise TypeError("use Container.provider(key)")

    @classmethod
    def _make(cls, container: Any, raw: bytes) -> Provider:
        api: Api = container._api
        out = c_void_p()
        status = api.tether_make_provider(container.handle, raw, byref(out))
        if status != OK:
            raise error_for(status, last_message(api))
        self = object.__new__(cls)
        self._api = api
        self.address = out.value or 0
        self._call = PROVIDER_FN(self.address)
        return self

    def __call__(self) -> Any:
        if self.address is None:
            raise ValueError("the provider was freed")
        ptr = call(self._api, self._call)
        return object_table.lookup(ptr, ptr)

    @property
    def _as_parameter_(self) -> c_void_p:
        return c_void_p(self.address)

    def free(self) -> None:
        """Frees the provider (idempotent)."""
        address, self.address = self.address, None
        if address is not None:
            self._api.tether_provider_free(address)

    def __enter__(self) -> Provider:
        return self

    def __exit__(self, *exc: object) -> None:
        self.free()

    def __del__(self) -> None:
        try:
            self.free()
        except Exception:
            pass


def call(api: Api, provider: Any) -> int:
    """Calls ``provider`` (a C ``void *(void)``: a provider, or a lazy slot's kept one) as a resolve:
    its instance's address, or raises the library's error (chained to the Python exception of a
    factory it ran)."""
    if not _state.tls.frames:
        _state.tls.pending = None  # no frame of its own: a stale cause would look like ours
    _state.inflight.append(None)
    try:
        with executor.Constructing(api):
            ptr = provider()
            status = api.tether_last_status() if not ptr else OK
            message = messages.last(api) if not ptr else ""
    finally:
        _state.resolve_finished()
    if not ptr:
        _state.raise_failure(status or E_FACTORY_FAILED, message)
    return ptr


_state.constructing_calls.add(call.__code__)  # a library call that may run factories (``_state.here``)
