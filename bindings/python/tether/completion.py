"""Completion callbacks that declare their targets, as a factory declares its dependencies.

``tether.complete(fn, deps=[tether.weak("Parent")])`` is run as ``fn(instance, parent_ref)``
after the resolve's factories returned: each target is resolved in the same graph, exactly as
``Resolver.get`` / ``Resolver.weak`` would. Because nothing else is reachable from it, a graph
whose callbacks are all declared can be replayed in Python from the plan the library describes
(see ``plans``), callbacks included.
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

from ._cabi import PARAM_DEP, PARAM_WEAK
from .markers import Dependency, key_name


class Completion:
    """A completion callback with declared targets; made by ``complete``."""

    __slots__ = ("fn", "deps")

    def __init__(self, fn: Callable[..., Any], deps: tuple[Dependency, ...]) -> None:
        self.fn = fn
        self.deps = deps

    def __repr__(self) -> str:
        return f"tether.complete({self.fn!r}, deps={list(self.deps)!r})"


def complete(fn: Callable[..., Any], *, deps: Sequence[object] = ()) -> Completion:
    """A completion callback ``fn(instance, *targets)`` for ``register(..., on_complete=...)``.

    ``deps`` entries are keys (a strong target: the graph's instance, kept alive by the completed
    one; ``RetainCycleError`` if that closes a cycle of strong references) or ``tether.weak(key)``
    (a ``weakref.ref``-style callable, as ``Resolver.weak`` returns). Other markers raise here.
    """
    if not callable(fn):
        raise TypeError(f"complete: the callback must be callable, not {type(fn).__name__}")
    targets: list[Dependency] = []
    for entry in deps:
        if isinstance(entry, Dependency):
            if entry.kind not in (PARAM_DEP, PARAM_WEAK):
                raise ValueError(f"complete: {entry!r} cannot be a completion target; use a key or tether.weak(key)")
            targets.append(entry)
        else:
            key_name(entry)  # TypeError/ValueError for what is not a key
            targets.append(Dependency(entry, PARAM_DEP))  # type: ignore[arg-type]
    return Completion(fn, tuple(targets))
