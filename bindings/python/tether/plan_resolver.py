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
from weakref import ref as _ref

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
    bits of the steps from which a strong edge to it closes a retain cycle)), the same by the key
    objects callbacks asked with (filled as they ask), where a replay's values list keeps the
    strong edges its gets added and what keys outside the table gave (``late``, ``held``: after
    the steps' objects), and how to ask the library about the rest (the plan's key id, the
    describing container and its handle)."""

    __slots__ = ("table", "by_key", "late", "held", "api", "handle", "kid", "container")

    def __init__(self, table: dict[bytes, tuple[int, int]], nsteps: int, api: Api, handle: int, kid: int,
                 container: weakref.ref[Any]) -> None:
        self.table, self.api, self.handle, self.kid, self.container = table, api, handle, kid, container
        self.by_key: dict[Any, tuple[int, int]] = {}
        self.late, self.held = nsteps, nsteps + 1

    def entry(self, key: Key) -> tuple[int, int] | None:
        """The table's entry for ``key`` (remembered by the key object), or None."""
        raw = _encoded.get(key) or encode_key(key)
        entry = self.table.get(raw)
        if entry is not None and len(self.by_key) < 1024:
            self.by_key[key] = entry
        return entry

    def ask(self, k: int, key: Key, flags: int, late: list[tuple[int, int]] | None) -> None:
        """``tether_plan_resolver`` for completion call ``k`` asking for ``key``: returns when the
        library allows it, else raises what the library's resolver raises."""
        raw = _encoded.get(key) or encode_key(key)
        container = self.container()
        if container is None:  # cannot be while a resolve from it runs: as a resolver out of its callback
            flags |= _CLOSED
            target = 0
        else:
            target = container._key_id(raw)
        late = late or []
        edges = (c_size_t * (2 * len(late)))(*(step for edge in late for step in edge))
        status = self.api.tether_plan_resolver(self.handle, self.kid, k, target, flags, edges, len(late))
        if status != OK:
            raise_caused(status, last_parts(self.api), None)


class PlanResolver(Resolver):
    """A ``Resolver`` answered from a plan replay: valid only during the callback that received it,
    on its thread (afterwards ``WrongContextError``, as the library's). A replay makes one per
    callback (``_call``: its plan's answers, its completion call, the step it completes; ``_values``:
    the replay's values list, see ``PlanAnswers``) and closes it (``_values`` None) when it returns;
    it opens the same one again for the next replay while nothing else holds it (``fresh``)."""

    __slots__ = ("_call", "_keys", "_values", "_thread")

    _call: tuple[PlanAnswers, int, int]
    _keys: dict[Any, tuple[int, int]]  # its answers' by_key
    _values: list[Any] | None
    _thread: int

    def get(self, key: Key, _ident: Callable[[], int] = get_ident) -> Any:
        """The graph's instance of ``key``, held strongly by the instance being completed."""
        answers, k, step = self._call
        values = self._values
        if values is None or self._thread != _ident():
            answers.ask(k, key, _CLOSED if values is None else _OTHER_THREAD, None)
        try:
            entry = self._keys[key]
        except (KeyError, TypeError):
            entry = answers.entry(key)
            if entry is None:
                return self._outside(key, 0)
        target, closes = entry
        late = values[answers.late]  # type: ignore[index]
        if late is not None or closes >> step & 1:
            answers.ask(k, key, 0, late)
        if late is None:
            late = values[answers.late] = []  # type: ignore[index]
        late.append((step, target))
        return values[target]  # type: ignore[index]

    def weak(self, key: Key, _ident: Callable[[], int] = get_ident, _ref: Any = _ref) -> Callable[[], Any]:
        """A weak reference to the graph's instance of ``key``: call it for the object or None."""
        if self._thread == _ident():  # closed, its values are None: the subscript raises
            try:
                return _ref(self._values[self._keys[key][0]])  # type: ignore[index]
            except (KeyError, TypeError):
                pass
        return self._weak(key)

    def _weak(self, key: Key) -> Callable[[], Any]:
        """``weak`` beyond a key the callbacks asked for before whose object takes a weakref."""
        answers, k, _ = self._call
        if self._values is None or self._thread != get_ident():
            answers.ask(k, key, (_CLOSED if self._values is None else _OTHER_THREAD) | PLAN_RESOLVER_WEAK, None)
        entry = answers.entry(key)
        if entry is None:
            obj = self._outside(key, PLAN_RESOLVER_WEAK)
            if isinstance(obj, NativeRef):
                return obj.downgrade()
        else:
            obj = self._values[entry[0]]  # type: ignore[index]
        try:
            return _ref(obj)
        except TypeError:
            return python_weak(obj)  # says what to do

    def _outside(self, key: Key, flags: int) -> Any:
        """A key outside the table: resolved from the describing container; a refusal the library's."""
        answers, k, _ = self._call
        container = answers.container()
        if container is None:  # cannot be while a resolve from it runs: the library says what then
            answers.ask(k, key, flags, None)
        try:
            obj = container.resolve(key)
        except (NotFoundError, ArgumentMismatchError):
            answers.ask(k, key, flags, None)  # the resolver's own refusal, naming the callback
            raise
        values = self._values
        held = values[answers.held]  # type: ignore[index]
        if held is None:
            held = values[answers.held] = []  # type: ignore[index]
        held.append(obj)
        return obj

    def __repr__(self) -> str:
        return "<tether.Resolver>"


def fresh(call: tuple[PlanAnswers, int, int]) -> PlanResolver:
    """A closed resolver for completion call ``call`` (a replay opens it: ``_values``, ``_thread``)."""
    r: PlanResolver = object.__new__(PlanResolver)
    r._call, r._keys, r._values, r._thread = call, call[0].by_key, None, 0
    return r
