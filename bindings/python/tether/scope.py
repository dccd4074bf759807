"""Scopes: how long the instances of a registration live (``tether_scope``)."""

from __future__ import annotations

import ctypes
import enum

from . import _cabi


class Scope(enum.IntEnum):
    """Lifetime of the instances a registration makes.

    - ``GRAPH`` (default): one instance per top-level ``resolve``; what lets a cycle close.
    - ``TRANSIENT``: a new instance every time one is needed, even within one resolve.
    - ``SINGLETON``: one instance, cached in the registering container until ``reset`` or ``close``.
    - ``WEAK``: shared while anyone holds it: a handle, an edge, or (for Python objects that
      support weak references) any Python reference.
    - ``CONTAINER``: one instance per *resolving* container: every resolve from a request's child
      shares it, another child gets its own, torn down when that child closes.
    """

    GRAPH = 0
    TRANSIENT = 1
    SINGLETON = 2
    WEAK = 3
    CONTAINER = 4

    # What the library decides for the scope (tether_binding.h's scope_traits), read from it: the
    # package acts on these, never on a scope's name, so a scope the library adds needs no decision here.

    @property
    def shared(self) -> bool:
        """A resolve may share an instance it did not make (SINGLETON, WEAK, CONTAINER)."""
        return bool(_traits(self) & _cabi.SCOPE_TRAIT_SHARED)

    @property
    def kept_strongly(self) -> bool:
        """Its registration keeps the instance strongly until reset (SINGLETON): a hit hands it out."""
        return bool(_traits(self) & _cabi.SCOPE_TRAIT_KEPT_STRONGLY)

    @property
    def kept_weakly(self) -> bool:
        """Its registration keeps the instance weakly, shared while held (WEAK): an object may be revived."""
        return bool(_traits(self) & _cabi.SCOPE_TRAIT_KEPT_WEAKLY)

    @property
    def kept_by_registration(self) -> bool:
        """Its registration keeps the instance, strongly or weakly: the registration's cache may answer."""
        return bool(_traits(self) & (_cabi.SCOPE_TRAIT_KEPT_STRONGLY | _cabi.SCOPE_TRAIT_KEPT_WEAKLY))

    @property
    def per_container(self) -> bool:
        """One instance per resolving container, kept until it closes (CONTAINER)."""
        return bool(_traits(self) & _cabi.SCOPE_TRAIT_PER_CONTAINER)


_TRAITS: dict[int, int] = {}  # scope -> the library's TETHER_SCOPE_TRAIT_* bits, read once


def _traits(scope: Scope) -> int:
    bits = _TRAITS.get(scope)
    if bits is None:
        from . import _loader

        out = ctypes.c_uint()
        if _loader.api().tether_scope_traits(int(scope), ctypes.byref(out)) != 0:
            raise ValueError(f"the library does not know scope {scope!r}")
        bits = _TRAITS[scope] = out.value
    return bits

