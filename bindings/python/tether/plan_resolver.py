"""The resolver a resolver-form completion callback receives when its graph runs from a described plan.

It answers ``get`` and ``weak`` as the library's resolver would, from what the library described
(see ``executor``): a key of the plan's key table (``tether_plan_keys``) is that step's object; a
strong edge that the table's bits do not clear, or any strong edge once this resolve added one, is
the library's to allow or refuse (``tether_plan_resolver``); a key outside the table is resolved
from the container that described the plan (the library describes such plans only where that gives
what its resolver would), and a refusal of it, or a resolver used out of its callback, is the
library's message. Nothing here decides a rule: it looks up what the library said, or asks.
"""

from __future__ import annotations

import weakref
from ctypes import c_size_t
from threading import get_ident
from typing import Any, Callable

from ._cabi import OK, PLAN_RESOLVER_WEAK, Api
from ._state import raise_caused
from .errors import ArgumentMismatchError, NotFoundError
from .markers import Key, _encoded, encode_key
from .messages import last as last_parts
from .native_refs import NativeRef, python_weak
from .resolver import Resolver

#: tether_plan_resolver flags: the resolver is used after its callback returned; during it, on another thread
_CLOSED = 2
_OTHER_THREAD = 4


class PlanAnswers:
    """What the resolvers of one prepared plan share: its key table (encoded key -> (step, the
    bits of the steps from which a strong edge to it closes a retain cycle)), and how to ask the
    library about the rest (the plan's key id, the describing container and its handle)."""

    __slots__ = ("table", "api", "handle", "kid", "container")

    def __init__(self, table: dict[bytes, tuple[int, int]], api: Api, handle: int, kid: int,
                 container: weakref.ref[Any]) -> None:
        self.table, self.api, self.handle, self.kid, self.container = table, api, handle, kid, container

    def ask(self, k: int, raw: bytes, flags: int, late: list[tuple[int, int]]) -> None:
        """``tether_plan_resolver`` for completion call ``k`` asking for ``raw``: returns when the
        library allows it, else raises what the library's resolver raises."""
        container = self.container()
        if container is None:  # the describing container is gone: no resolve can be running from it
            flags |= _CLOSED
            target = 0
        else:
            target = container._key_id(raw)
        edges = (c_size_t * (2 * len(late)))(*(step for edge in late for step in edge))
        status = self.api.tether_plan_resolver(self.handle, self.kid, k, target, flags, edges, len(late))
        if status != OK:
            raise_caused(status, last_parts(self.api), None)


class PlanResolver(Resolver):
    """A ``Resolver`` answered from a plan replay: valid only during the callback that received it,
    on its thread (afterwards ``WrongContextError``, as the library's)."""

    __slots__ = ("_answers", "_k", "_step", "_values", "_late", "_held", "_thread")

    _answers: PlanAnswers
    _k: int  # its completion call in the plan
    _step: int  # the step it completes
    _values: list[Any] | None  # every step's object, by step (None once closed)
    _late: list[tuple[int, int]]  # the strong edges gets of this resolve added to steps of the table
    _held: list[Any] | None  # what keys outside the table gave: alive until the resolve returns, as in a graph
    _thread: int | None  # its thread while its callback runs, then None

    def get(self, key: Key) -> Any:
        """The graph's instance of ``key``, held strongly by the instance being completed."""
        raw = _encoded.get(key) or encode_key(key)
        if self._thread != get_ident():
            self._answers.ask(self._k, raw, _CLOSED if self._thread is None else _OTHER_THREAD, [])
        entry = self._answers.table.get(raw)
        if entry is None:
            return self._outside(key, raw, 0)
        step, closes = entry
        late = self._late
        if late or closes >> self._step & 1:
            self._answers.ask(self._k, raw, 0, late)
        late.append((self._step, step))
        return self._values[step]  # type: ignore[index]

    def weak(self, key: Key) -> Callable[[], Any]:
        """A weak reference to the graph's instance of ``key``: call it for the object or None."""
        raw = _encoded.get(key) or encode_key(key)
        if self._thread != get_ident():
            self._answers.ask(self._k, raw, (_CLOSED if self._thread is None else _OTHER_THREAD) | PLAN_RESOLVER_WEAK, [])
        entry = self._answers.table.get(raw)
        obj = self._values[entry[0]] if entry is not None else self._outside(key, raw, PLAN_RESOLVER_WEAK)
        if isinstance(obj, NativeRef):
            return obj.downgrade()
        return python_weak(obj)

    def _outside(self, key: Key, raw: bytes, flags: int) -> Any:
        """A key outside the table: resolved from the describing container; a refusal the library's."""
        container = self._answers.container()
        if container is None:  # cannot be while a resolve from it runs: the library says what then
            self._answers.ask(self._k, raw, flags, [])
        try:
            obj = container.resolve(key)
        except (NotFoundError, ArgumentMismatchError):
            self._answers.ask(self._k, raw, flags, [])  # the resolver's own refusal, naming the callback
            raise
        self._held.append(obj)  # type: ignore[union-attr]  # open: checked by the caller
        return obj

    def __repr__(self) -> str:
        return "<tether.Resolver>"


def opener(answers: PlanAnswers) -> Callable[[int, int, list[Any], list[tuple[int, int]], list[Any]], PlanResolver]:
    """``open(k, step, values, late, held)``: a resolver for completion call ``k`` of a replay of the
    plan ``answers`` belongs to, open on this thread (a replay closes it: ``_thread = None``)."""
    new = object.__new__

    def open_resolver(k: int, step: int, values: list[Any], late: list[tuple[int, int]], held: list[Any]) -> PlanResolver:
        r = new(PlanResolver)
        r._answers, r._k, r._step, r._values, r._late, r._held = answers, k, step, values, late, held
        r._thread = get_ident()
        return r

    return open_resolver
