"""Scopes: how long the instances of a registration live (``tether_scope``)."""

from __future__ import annotations

import enum


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
