"""Tracing what resolves do: ``Container.trace(hook)`` and ``Recorder``, which keeps the events
and draws one resolve as Graphviz DOT.

The library reports each event (``tether_set_trace``); this module turns it into a ``TraceEvent``
for the hook. While a hook is set on a container, its resolves all go through the library, step by
step (the library stops describing plans and confirming singleton hits for it, and moves its
version words, so the binding's replays and hits stop too): slower, and every step is seen.
"""

from __future__ import annotations

import ctypes
from typing import Any, Callable, NamedTuple

from . import object_table
from ._cabi import TraceEventC
from .errors import Status

#: ``tether_trace_kind`` names, by value.
KINDS = ("start", "end", "call", "return", "hit", "complete", "destroy", "edge", "weak")


class TraceEvent(NamedTuple):
    """One event: ``kind`` (one of ``KINDS``), the ``key``, the instance (``address`` in the
    library; ``instance`` is the Python object for a Python-made one, else None), ``status`` (the
    outcome of ``end``, ``return`` and ``complete``: None for success), and for ``edge`` (strong)
    and ``weak`` edges the instance now held (``target_address``, ``target_key``)."""

    kind: str
    key: str
    address: int | None
    instance: Any
    status: Status | None
    target_address: int | None
    target_key: str | None


def _event(raw: Any) -> TraceEvent:
    e = raw.contents
    address = e.instance or None
    instance = object_table.lookup(address, None) if address else None
    return TraceEvent(KINDS[e.kind], e.key.decode("utf-8", "replace"), address, instance,
                      Status(e.status) if e.status else None, e.target or None,
                      e.target_key.decode("utf-8", "replace") if e.target_key else None)


def trampoline(hook: Callable[[TraceEvent], Any]) -> Any:
    """The C hook calling ``hook`` (an exception it raises is reported as unraisable and ignored:
    a trace cannot fail a resolve)."""

    def call(raw: Any, _context: Any) -> None:
        hook(_event(raw))

    return ctypes.CFUNCTYPE(None, ctypes.POINTER(TraceEventC), ctypes.c_void_p)(call)


class Recorder:
    """A hook that keeps every event (``events``) and draws a resolve: ``c.trace(rec := Recorder())``."""

    def __init__(self) -> None:
        self.events: list[TraceEvent] = []

    def __call__(self, event: TraceEvent) -> None:
        self.events.append(event)

    def clear(self) -> None:
        self.events.clear()

    def last_resolve(self) -> list[TraceEvent]:
        """The events of the last top-level resolve that ended, from its ``start`` to its ``end``."""
        depth, end = 0, None
        for i in range(len(self.events) - 1, -1, -1):
            kind = self.events[i].kind
            if kind == "end":
                if end is None:
                    end = i
                depth += 1
            elif kind == "start":
                depth -= 1
                if depth == 0 and end is not None:
                    return self.events[i : end + 1]
        return []

    def dot(self) -> str:
        """The last resolve as DOT: the instances it made (solid) or found cached (dashed box), a
        factory that failed (red), strong edges solid and weak ones dashed, the result in bold."""
        events = self.last_resolve()
        ids: dict[int, str] = {}
        nodes: list[str] = []
        edges: list[str] = []

        def node(address: int, key: str, style: str) -> str:
            if address not in ids:
                ids[address] = f"n{len(ids) + 1}"
                nodes.append(f'  {ids[address]} [label={_quote(key)}{style}];')
            return ids[address]

        for e in events:
            if e.kind == "return" and e.address:
                node(e.address, e.key, "")
            elif e.kind == "return":
                nodes.append(f'  failed{len(nodes)} [label={_quote(e.key + " (failed)")}, color=red];')
            elif e.kind == "hit" and e.address:
                node(e.address, e.key, ", shape=box, style=dashed")
            elif e.kind in ("edge", "weak") and e.address and e.target_address and e.target_key:
                source = node(e.address, e.key, "")
                target = node(e.target_address, e.target_key, "")
                edges.append(f"  {source} -> {target}{' [style=dashed]' if e.kind == 'weak' else ''};")
        if events and events[-1].address in ids:
            root = ids[events[-1].address]
            nodes = [line.replace("];", ", penwidth=2];") if line.startswith(f"  {root} ") else line for line in nodes]
        return "\n".join(["digraph resolve {", *nodes, *edges, "}"]) + "\n"


def _quote(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'
