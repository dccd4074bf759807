"""``Container``: registrations and cached instances, the Python face of ``tether_container``."""

from __future__ import annotations

import asyncio
import collections.abc
import ctypes
import inspect
import operator
import types
import typing
from ctypes import byref, c_size_t, c_uint32, c_void_p
from typing import Any, Callable, Iterable, Mapping, Sequence, TypeVar, Union, overload

from . import _fork, _loader, _state, aio, executor, messages, native_refs, object_table, teardown, tracing
from ._cabi import (E_BUFFER_TOO_SMALL, E_WOULD_BLOCK, OK, RESOLVE_HELD, RESOLVE_MORE_DROPS, RESOLVE_NO_WAIT, collect_buffer,
                    list_items)
from .arguments import to_values
from .completion import Completion
from .errors import InvalidArgumentError, InvalidHandleError, NeedsAwait, TeardownError, TetherError, error_for
from .markers import Key, encode_key, key_name
from .messages import last_message
from .overrides import Override
from .registration import Registration
from .scope import Scope
from ._cabi import DECORATE, OVERRIDE, PARAM_DEP, PLAN_STEP_VALUE
from .parameters import Parameters, Slot, from_deps, infer
from .tracing import TraceEvent

T = TypeVar("T")
F = TypeVar("F", bound=Callable[..., Any])
#: A completion callback: ``(resolver, instance)``, or one with declared targets (``tether.complete``).
Callback = Union[Callable[[Any, Any], Any], Completion]

_UNSET: Any = object()
#: The version and cache word of a child with no C container yet (see Container._materialize)
_ZERO = c_size_t(0)
#: Held while a child's C container is made (see Container._materialize)
_MATERIALIZING = _fork.lock()
_attempting = aio.attempting  # (see _through_library)
_WORDS = c_void_p * 8  # the buffer of a tether_container_versions call
#: A template's read-only empty mapping (see Container._as_template)
_NONE_YET = types.MappingProxyType({})
_key_ids: dict[bytes, int] = {}  # interned ids are process-wide
#: Per key a child per request was given a value for: its encoding and interned id (see __init__)
_value_ids: dict[Any, tuple[bytes, int]] = {}
_fresh_of = object_table.fresh_of
_box_of = object_table.box_of
_owned_get = object_table._owned.get
_tls = _state.tls
run_drops = object_table.run_drops
_drop_views = object_table.DROP_VIEWS
_MORE_DROPS_VIEW = (lambda words: None, None, ())  # never "all fast": run_drops runs them
_results = operator.itemgetter(2, 3, 4, 5)  # tether_collect's count, instance, out, token
_fresh_pop = object_table._fresh.pop
_generation = _state.generation
_retired = _state.retired
_Constructing = executor.Constructing
_NO_WAIT = RESOLVE_NO_WAIT | RESOLVE_MORE_DROPS  # every drop handed back, in the order it came due
_NO_WAIT_HELD = _NO_WAIT | RESOLVE_HELD
_MISS = executor.MISS
_BUSY = executor.BUSY
_SLOW = executor.SLOW
#: The version word of a closed container (or one the library gave none): its value is above
#: any real configuration, so no described plan is valid against it.
_NO_VERSION = c_size_t(2**64 - 1)
_NO_VIEW = memoryview((c_size_t * 1)(2**64 - 1)).cast("B").cast("N")
_DROP_ADDRESS = ctypes.cast(object_table.DROP, c_void_p)


class More:
    """The rest of a container's entry for a key (see ``Entry``): what ``resolve`` reads past a
    singleton hit or a plain builder, and the prepared plan the entry's builders run."""

    __slots__ = ("kid", "reg", "args", "vals", "containers", "prepared", "stamp", "again", "templates")

    def __init__(self, kid: "int | c_uint32", reg: Registration | None, args: Callable[..., Any] | None = None,
                 vals: Callable[[dict[int, Any]], Any] | None = None, containers: executor.Prepared | None = None,
                 prepared: executor.Prepared | None = None, stamp: int = -1, again: bool = False,
                 templates: tuple[int, dict[Any, executor.Prepared]] | None = None) -> None:
        #: the key's interned id (a c_uint32 above 2**31: see _lookup); its WEAK/SINGLETON registration or None
        self.kid, self.reg = kid, reg
        #: the builder of a plan taking the resolve's runtime arguments (``resolve(key, *args)``)
        self.args = args
        #: a child with values and no C container: the builder of a plan with value (or container)
        #: steps, taking its values by key id (``build(vals)``), and the plan when it has container
        #: steps (made first where the child lacks them: see _resolve, aresolve)
        self.vals, self.containers = vals, containers
        #: the plan the library described for the key from here (None: none, or not one Python runs)
        #: and the configuration (sum of the version words) it was described under: the entry's
        #: builders are valid while it is unchanged, and children with nothing registered run it too
        self.prepared, self.stamp = prepared, stamp
        #: look the key up again on the next resolve (its first resolve from a child with
        #: registrations of its own went through the library; or only the plan is kept here, for
        #: children: see _prepared_plan)
        self.again = again
        #: this container's children with registrations of their own: the configuration and the plans
        #: prepared for one of them under it, as templates, by key id and plan identity (see
        #: _prepared_again)
        self.templates = templates

    def but(self, **changes: Any) -> More:
        """A copy with ``changes`` (an entry is replaced as one unit, never changed in place)."""
        more = More(self.kid, self.reg, self.args, self.vals, self.containers, self.prepared, self.stamp, self.again,
                    self.templates)
        for name, value in changes.items():
            setattr(more, name, value)
        return more


#: A container's one map from key to entry: (cell, word, token, builder, More), read and replaced
#: as one unit. With a cell, a singleton the library answered as published (a held resolve): the
#: registration's cell, the container's hit word and the token the library gave
#: (``tether_container_hit_word``), as views compared without making ints; ``resolve`` returns the
#: cell's object while the word equals the token. The library decides what moves the word (resets,
#: reconfiguration, here or up the chain, from Python or C); the binding only compares, and
#: otherwise asks the library again. Else a replay builder of a plan without runtime arguments or
#: values (or a WEAK object's: see ``_resolve_weak``), or None; the rest in ``More``.
Entry = tuple[Any, "memoryview | None", "memoryview | None", "Callable[[], Any] | None", More]


def _check_scope(scope: object) -> Scope:
    if isinstance(scope, Scope):
        return scope
    if isinstance(scope, int) and not isinstance(scope, bool):
        if scope in Scope._value2member_map_:
            return Scope(scope)
        raise ValueError(f"scope {scope} is not a tether.Scope (GRAPH, TRANSIENT, SINGLETON, WEAK, CONTAINER)")
    raise TypeError(f"scope must be a tether.Scope, not {type(scope).__name__}")


def _returned_class(fn: Any) -> type | None:
    """The class a factory function's return annotation names: ``-> Db``, or the item of
    ``-> Iterator[Db]`` / ``AsyncIterator[Db]`` (a generator factory, sync or async)."""
    returns = getattr(fn, "__annotations__", {}).get("return")
    if isinstance(returns, str):
        try:
            returns = typing.get_type_hints(fn).get("return")
        except Exception:
            return None
    if isinstance(returns, type):
        return returns
    origin = typing.get_origin(returns)
    if origin in (collections.abc.Iterator, collections.abc.Generator, collections.abc.Iterable,
                  collections.abc.AsyncIterator, collections.abc.AsyncGenerator, collections.abc.AsyncIterable):
        item = typing.get_args(returns)[0] if typing.get_args(returns) else None
        return item if isinstance(item, type) else None
    return None


def _check_callbacks(on_complete: object, what: str) -> list[Callback]:
    if on_complete is None:
        return []
    if callable(on_complete) or isinstance(on_complete, Completion):
        return [on_complete]
    if isinstance(on_complete, (list, tuple)) and all(callable(fn) or isinstance(fn, Completion) for fn in on_complete):
        return list(on_complete)
    raise TypeError(f"{what}: on_complete must be a callable (resolver, instance), a tether.complete(...), or a list of them")


#: tether_container_set_strict's TETHER_STRICT_CAPTIVE
_STRICT_CAPTIVE = 1


def _view(word: c_size_t) -> memoryview:
    """A view of ``word`` (a ctypes size_t, or one the library gives) that ``==`` compares with a
    token by value, in C: no int is made, unlike ``word.value``."""
    return memoryview((c_size_t * 1).from_address(ctypes.addressof(word))).cast("B").cast("N")


def _token(value: int) -> memoryview:
    """``value`` as a token a hit word's view (``_view``) compares with."""
    return memoryview((c_size_t * 1)(value)).cast("B").cast("N")


def _weak_hit(last: Callable[[], Any], word: memoryview, token: memoryview) -> Callable[[], Any]:
    """The builder serving a WEAK object (``last()``) while ``word`` equals ``token`` (see
    ``Container._resolve_weak``), else MISS."""
    def weak() -> Any:
        obj = last()  # first: the word then says it was still the answer
        if obj is not None and word == token:
            return obj
        return _MISS

    return weak


def _value_key(key: Key, obj: Any) -> bytes:
    """``key`` encoded for ``provide_value``; a TypeError for a None value."""
    if obj is None:
        raise TypeError(f"provide_value({key_name(key)!r}): a value cannot be None")
    return encode_key(key)


class Container:
    """Registrations and cached instances; optionally the child of ``parent``.

    ``strict=True``: resolving a singleton registered here that would hold a graph-, transient-
    or weak-scoped instance strongly (a captive dependency) raises ``CaptiveDependencyError``
    instead of keeping that instance alive with it; ``None`` (default) takes the parent's setting.

    Use as a context manager (``with tether.Container() as c:``) or call ``close()``; a container
    that is garbage-collected is closed then. ``handle`` is the ``tether_container *`` as an int,
    for C code that registers into or resolves from the same container.
    """

    # Every attribute a slot: CPython keeps the names of a class's instances in keys they share only
    # up to about 30 names, and an instance past them (or whose __dict__ was read) takes the generic
    # attribute paths for every read and write after (a child per request: 1.5x its cost). Set in
    # __init__; what each holds:
    __slots__ = (
        "__weakref__",  # (plans hold their container weakly: see executor)
        "_api", "_parent", "_regs", "_trace_hooks", "_closed", "_strict",
        # Values provided here that the library has not been given yet (see _resolve): by key id, and
        # as (key, object) pairs for when this child gets a C container; None / () once it has one
        "_vals", "_pending_values",
        # The C container (None: a child's, none yet: see _materialize), as an int and a ctypes argument
        "_handle", "_handle_arg",
        # The one map from key to entry that resolve reads (see Entry; a child with no C container
        # reads its parent's children's map), and the generation it was looked up in
        "_lookups", "_lookups_generation",
        # Open children; whether the last one to close closes this; a trace hook set
        "_children", "_close_when_childless", "_traced",
        # The version words replays check (see _materialize), the hit word, what was created here
        "_word", "_parent_words", "_hit_word", "_hit_view", "_created_word",
        # The library's calls resolve makes (bound once)
        "_hot_resolve", "_gil_collect", "_ref_release",
        # For its children with no C container: see _own_state
        "_child_map", "_child_generation",
        # A child with no C container: the configuration its map (its parent's children's map) and
        # its values' slots were answered under (see _own_state)
        "_vals_stamp",
        # What its children with values and no C container start as (see __init__); None until the
        # first one was made the long way, and again once this container closes
        "_child_template",
        # A child with values and no C container: the container-scoped instances plans made for it, as
        # (key id, object, teardowns) in the order runs kept them (each run's in creation order, when it
        # succeeded; also in _vals, by key id, for the builders); its close runs the teardowns, last kept
        # first (the library's order for what a container caches); its C container adopts them when made (_publish,
        # _materialize); the key ids whose instance an aresolve of it is making now, and who waits (see
        # executor.runner); instances its C container refused to adopt (re-registered meanwhile): torn down at its close
        "_scoped", "_making", "_unadopted",
        # Per overridden key, the Python registrations its overrides displaced (see override); per
        # decorated key, its Python registrations the library moved under decorators (see decorate)
        "_overrides", "_decorated",
    )

    def __init__(self, parent: Container | None = None, *, values: Mapping[Key, Any] | None = None,
                 strict: bool | None = None) -> None:
        # what most containers keep as it starts
        self._closed = True  # (until __init__ got far enough for close to make sense)
        self._vals = self._handle = self._handle_arg = self._child_template = None
        self._scoped = self._making = self._unadopted = self._overrides = self._decorated = None
        self._pending_values = ()
        self._children = 0
        self._lookups_generation = self._vals_stamp = -1
        self._close_when_childless = self._traced = False
        if type(values) is dict and values and type(parent) is Container and strict is None:
            template = parent._child_template
            if template is not None:  # a child per request: its parent's template, its values kept here
                (self._api, self._parent, self._closed, self._strict, self._word, self._parent_words, self._hit_word,
                 self._hit_view, self._created_word, self._hot_resolve, self._gil_collect, self._ref_release,
                 self._regs, self._trace_hooks, self._child_map, self._child_generation) = template
                vals: dict[int, Any] = {}
                pending = []
                state = parent._child_map
                answers, slots = state[2], True
                for key, obj in values.items():
                    known = _value_ids.get(key)
                    if known is None or obj is None:
                        raw = _value_key(key, obj)
                        known = (raw, self._key_id(raw))
                        if len(_value_ids) < 1024:
                            _value_ids[key] = known
                    vals[known[1]] = obj
                    pending.append((known[0], obj))
                    if answers.get(known[1]) is not True:  # (the library's answer kept: see _slots_for)
                        slots = False
                self._vals, self._pending_values = vals, pending
                self._lookups_generation = parent._child_generation[0]
                parent._children += 1
                if not slots:
                    state = parent._slots_for(vals)
                if state is not None:  # the library's answer: its parent's plans serve it
                    self._vals_stamp, self._lookups = state[0], state[1]
                    return
                self._lookups = _NONE_YET
                try:  # a value the library makes this child's own registration: the library decides for it
                    self._materialize()
                except BaseException:
                    self._close_quietly()
                    raise
                return
        if parent is not None and not isinstance(parent, Container):
            raise TypeError(f"parent must be a tether.Container, not {type(parent).__name__}")
        if values is not None and type(values) is not dict and not isinstance(values, Mapping):
            raise TypeError(f"values must be a mapping of keys to instances, not {type(values).__name__}")
        # (what is not set here: as set above)
        self._api = _loader.api()
        self._parent = parent
        self._regs: dict[bytes, Registration] = {}
        self._trace_hooks: list[Any] = []
        self._closed = False
        self._strict = strict  # None: as the parent (the library's children start with its setting)
        self._own_state()
        if parent is None:
            self._lookups: dict[object, Entry] = {}
            self._materialize()
        else:
            if parent._handle is None:
                parent._materialize()  # its words must be real ones before a child reads them
            # A child's C container is made when first needed (see _materialize): a child per
            # request that only runs plans its parent described needs none. Until then nothing can
            # change its configuration, so its own words are a constant zero word.
            self._word, self._parent_words = _ZERO, (parent._word, *parent._parent_words)
            self._hit_word, self._hit_view = parent._hit_word, parent._hit_view  # what it answers is its parent's
            self._created_word = 0
            # ...the same words for all such children of a parent, so they share their map (replay
            # builders checking those words): a child per request looks nothing up again
            self._vals_stamp, self._lookups, _ = parent._child_map
            self._lookups_generation = parent._child_generation[0]
        if strict is not None:
            self._materialize()  # its own setting: every resolve through it goes through its C container
        self._hot_resolve = self._api.hot_resolve_key_instance
        self._gil_collect = self._api.gil_resolve_key_collect
        self._ref_release = self._api.tether_ref_release  # with argtypes: takes the handle as an int
        if parent is not None:
            parent._children += 1
        if values:
            try:
                vals: dict[int, Any] = {}
                pending = self._pending_values = []
                for key, obj in values.items():
                    raw = _value_key(key, obj)
                    vals[self._key_id(raw)] = obj
                    pending.append((raw, obj))
                if self._handle is None:
                    # kept here: plans described from the parent take them by key (value steps) until
                    # something needs the library, which then gets them (see _materialize); unless
                    # the library says a value is this child's own registration (see _slots_for)
                    assert parent is not None
                    self._vals = vals
                    state = parent._slots_for(vals)
                    if state is not None:
                        self._vals_stamp, self._lookups = state[0], state[1]
                        if parent._child_template is None and type(parent) is Container:
                            parent._child_template = self._as_template()
                    else:
                        self._materialize()
                else:
                    self._provide_pending(self._handle_arg)
            except BaseException:
                self._close_quietly()
                raise

    def _own_state(self) -> None:
        """The state of a container that may have children (or registrations) of its own."""
        # The one map of this container's children that have no C container yet (see __init__), as
        # (the configuration its builders are bound to, the map, per key id whether a value of it
        # provided in such a child takes a slot there, as the library answered: see _slots_for),
        # read and replaced as one unit; and the generation the map was looked up in
        self._child_map: tuple[int, dict[object, Entry], dict[int, bool]] = (-1, {}, {})
        self._child_generation = [-1]

    def _slots_for(self, vals: Iterable[int]) -> tuple[int, dict[object, Entry], dict[int, bool]] | None:
        """This container's children's map (see _own_state) under which a value of each key id of
        ``vals`` provided in a child of this container takes a slot there (the child keeps falling
        through to this container: its plans serve the child, their value steps reading the slot),
        or None when one is the child's own registration (which hides this container's key: the
        child then needs its C container, and the library decides everything for it). The library
        decides which: a value of a key it declared (``register_value``) nearest on the way is a
        slot; Python asks (``_value_slot``) and keeps the answer with the map."""
        state = self._child_map
        answers = state[2]
        for kid in vals:
            slot = answers.get(kid)
            if slot is None:
                return self._ask_slots(vals)
            if not slot:
                return None
        return state

    def _ask_slots(self, vals: Iterable[int]) -> tuple[int, dict[object, Entry], dict[int, bool]] | None:
        """``_slots_for`` asking the library, under the configuration now: a new map for the
        children if the configuration is another's (children made before keep theirs: its
        builders, bound to the configuration it was made under, decline now, and they come here
        for this one: see ``_at``)."""
        stamp = self._configuration()  # before asking: a change meanwhile makes the answers stale
        state = self._child_map
        if state[0] != stamp:
            state = self._child_map = (stamp, {}, {})
        answers = state[2]
        for kid in vals:
            slot = answers.get(kid)
            if slot is None:
                slot = self._value_slot(kid)
                if len(answers) < 1024:
                    answers[kid] = slot
            if not slot:
                return None
        return state

    def _value_slot(self, kid: int) -> bool:
        """The library's answer: the plan of ``kid`` from here is the resolving child's value (one
        value step, ``TETHER_PLAN_STEP_VALUE``: the key is a declared value nearest on the way),
        which is what a value of it provided in a child takes. Anything else (registered here, not
        registered, no plan to describe: a trace hook) says the child's own registration."""
        described = executor.describe(self._api, self._materialize(), kid)
        return described is not None and len(described[0]) == 1 and bool(described[0][0].flags & PLAN_STEP_VALUE)

    def _as_template(self) -> tuple[Any, ...]:
        """What the next child with values of this one's parent starts as (see __init__'s first
        lines, which take it in this order): this child's state but its values; what it would only
        change once it has a C container (which gives it its own: ``_materialize``) read-only, so no
        write goes unnoticed."""
        return (self._api, self._parent, self._closed, self._strict, self._word, self._parent_words, self._hit_word,
                self._hit_view, self._created_word, self._hot_resolve, self._gil_collect, self._ref_release,
                _NONE_YET, (), (-1, _NONE_YET, _NONE_YET), (-1,))

    def _materialize(self) -> c_void_p:
        """This container's ``tether_container *`` (as a ctypes argument), making the C container
        of a child first if it has none yet; InvalidHandleError once closed."""
        handle = self._handle_arg
        if handle is not None:
            return handle
        with _MATERIALIZING:  # one C container, whichever threads need it at once
            return self._materialize_locked()

    def _materialize_locked(self) -> c_void_p:
        if self._closed:
            raise InvalidHandleError("the container is closed")
        handle = self._handle_arg
        if handle is not None:
            return handle
        parent = self._parent
        if self._regs is _NONE_YET:  # made from a template: its own state from now on
            self._regs, self._trace_hooks = {}, []
            self._own_state()
        out = c_void_p()
        status = self._api.tether_container_new(parent.handle if parent is not None else None, byref(out))
        if status != OK:
            raise error_for(status, last_message(self._api))
        handle = c_void_p(out.value)
        if self._strict is not None:
            status = self._api.tether_container_set_strict(handle, _STRICT_CAPTIVE if self._strict else 0)
            if status != OK:
                error = error_for(status, last_message(self._api))
                self._api.tether_container_free(handle)  # not kept: nothing was registered in it yet
                raise error
        # Read per replayed resolve (see executor): this container's version word, then its parents'
        words = self._version_words(self._api.gil_container_versions, handle)
        # Read per singleton hit served here (see Entry), and by replays with cached steps (see _bind)
        hit_word = self._hit_word_of(handle)
        # With nothing registered here, resolves build what the parent's build (the library replays
        # the parent's plans for them): the parent's prepared plans serve (see _prepared_plan)
        self._created_word = words[0].value
        # its own map from now on: the shared one's builders watch the zero word, and C code may
        # register here now
        self._lookups = {}
        self._word, self._parent_words, self._hit_word, self._hit_view = words[0], words[1:], hit_word, _view(hit_word)
        if self._vals is not None:  # the values this child kept, given to the library now
            try:
                self._provide_pending(handle)
            except BaseException:
                self._api.tether_container_free(out.value)
                raise
            self._vals = None
            scoped, self._scoped = self._scoped, None
            for kid, obj, teardowns in scoped or ():  # ...and the container-scoped instances plans made for it, in order
                self._adopt_scoped(handle, kid, obj, teardowns)
        self._handle = out.value  # last: other threads take the handle as saying all of this is done
        self._handle_arg = handle
        return handle

    def _adopt_scoped(self, handle: c_void_p, kid: int, obj: Any, teardowns: list[Any]) -> None:
        """Hands the C container ``obj``, the container-scoped instance of ``kid`` a plan made for this
        child, and its teardowns (noted: they run when the library drops it), ``tether_plan_adopt``;
        refused (re-registered meanwhile), they run at this container's close."""
        for fn, who in teardowns:
            teardown.note(obj, fn, who)
        ptr = object_table.retain_counted(obj)  # the library's box; the registration's drop takes it back
        if self._api.tether_plan_adopt(handle, kid, ptr) != OK:
            object_table.release(ptr)
            if self._unadopted is None:
                self._unadopted = []
            self._unadopted.append(obj)

    def _publish(self, made: executor.Made) -> None:
        """Keeps the container-scoped instances a successful run of a plan made for this child, in
        creation order; given to its C container if it has one by now, torn down if it is closed."""
        if not made:
            return
        vals = self._vals
        if vals is not None:
            scoped = self._scoped
            if scoped is None:
                scoped = self._scoped = []
            for entry in made:
                if entry[0] not in vals:
                    vals[entry[0]] = entry[1]
                    scoped.append(entry)
                    continue
                executor.discard([entry])  # (a synchronous resolve on another thread published one first)
            return
        if self._closed:
            executor.discard(made)
            return
        handle = self._materialize()
        for kid, obj, teardowns in made:
            self._adopt_scoped(handle, kid, obj, teardowns)

    async def _wait_for(self, contended: executor.Contended) -> None:
        """Waits until the run of this child that made ``contended.kid`` when a runner found it
        claimed has ended (no lock: a waiter checks after adding itself that the claim still stands)."""
        loop = asyncio.get_running_loop()
        future = loop.create_future()
        contended.waiters.append((loop, future))
        making = self._making
        if making is not None and making.get(contended.kid) is contended.waiters:
            await future  # (else it ended meanwhile, maybe without seeing us)

    def _provide_pending(self, handle: c_void_p | None) -> None:
        """Gives the library the values this container was made with (``tether_provide_value``)."""
        pending, self._pending_values = self._pending_values, ()
        for raw, obj in pending:
            ptr = object_table.retain_counted(obj)  # the library's box; DROP takes it back
            status = self._api.tether_provide_value(handle, raw, ptr, _DROP_ADDRESS, None)
            if status != OK:
                object_table.release(ptr)
                raise error_for(status, last_message(self._api))

    def _hit_word_of(self, handle: c_void_p) -> c_size_t:
        """The hit word of ``handle`` (``tether_container_hit_word``) as a ctypes view read without a
        call; ``_NO_VERSION`` if the library gives none."""
        address = c_void_p()
        if self._api.tether_container_hit_word(handle, byref(address)) != OK or not address.value:
            return _NO_VERSION
        return c_size_t.from_address(address.value)

    def _version_words(self, which: Callable[..., int], handle: c_void_p) -> tuple[c_size_t, ...]:
        """The words ``which`` gives for this container and its parents (``tether_container_versions``),
        as ctypes views read without a call;
        ``(_NO_VERSION,)`` if the library has none to give."""
        cap = 8
        for _ in range(4):
            words = (_WORDS if cap == 8 else c_void_p * cap)()
            count = c_size_t()
            status = which(handle, words, cap, byref(count))
            if status == E_BUFFER_TOO_SMALL:
                cap = count.value
                continue
            if status != OK:
                break
            return tuple(c_size_t.from_address(address or 0) for address in words[: count.value])
        return (_NO_VERSION,)

    def _configuration(self) -> int:
        """The sum of the version words: a described plan is valid while it is unchanged."""
        return sum([word.value for word in self._parent_words]) + self._word.value

    # -- lifetime -----------------------------------------------------------------------

    @property
    def handle(self) -> int:
        """The ``tether_container *`` as an int (pass it to C as ``c_void_p``)."""
        handle = self._handle
        return handle if handle is not None else self._materialize().value or 0

    @property
    def _as_parameter_(self) -> c_void_p:
        return c_void_p(self.handle)

    @property
    def parent(self) -> Container | None:
        return self._parent

    def trace(self, hook: Callable[[TraceEvent], Any] | None) -> None:
        """Calls ``hook(event)`` for what resolves from this container do, until ``trace(None)`` or
        ``close()``: each resolve's ``start`` and ``end``, every factory ``call`` and ``return``
        (then the new instance's ``edge``s), cache ``hit``, completion callback (``complete``),
        the ``edge``/``weak`` edges callbacks take, and the ``destroy`` of instances made
        meanwhile; see ``tether.tracing.TraceEvent``. ``tether.Recorder()`` keeps them and draws
        the last resolve as DOT (``.dot()``). While a hook is set, resolves from here skip the
        binding's fast paths and take the library's step-by-step one (slower).
        """
        fn = tracing.trampoline(hook) if hook is not None else None
        status = self._api.tether_set_trace(self.handle, ctypes.cast(fn, c_void_p) if fn is not None else None, None)
        if status != OK:
            raise error_for(status, last_message(self._api))
        if fn is not None:  # kept for good: instances made while tracing may report their destruction later
            self._trace_hooks.append(fn)
        self._traced = fn is not None
        self._lookups.clear()
        self._child_map[1].clear()

    @property
    def closed(self) -> bool:
        return self._closed

    def close(self) -> None:
        """Frees the container: what it caches (singletons, values, CONTAINER-scoped instances) is
        released, registrations forgotten, and the teardowns of what the library lets go of run.

        The library decides the order: last made first, so dependents before their dependencies
        (within a graph, the reverse of creation order; a cycle's members in the reverse order of
        their completion). Each teardown runs exactly once, every one even if some fail; their
        failures come out together as ``TeardownError`` (``.exceptions``), once the container is
        closed. Instances still held (by Python, handles or edges) live on, and are torn down when
        the library lets go of them. Idempotent. Raises ``InvalidArgumentError`` while child
        containers are open (close them first).
        """
        gathering = self._close(None, False)
        if gathering is not None and gathering.errors:
            raise TeardownError(gathering.errors)

    def _close(self, failure: BaseException | None, can_await: bool) -> teardown.Gathering | None:
        """``close()`` up to raising its failures: what the teardowns gathered (None if nothing was
        freed); ``failure`` is thrown into generator teardowns (``with``); ``can_await``: async
        teardowns that suspend are queued for ``aclose`` (else pending ones make this raise)."""
        if self._closed:
            return None
        if self._vals is not None and not self._children:  # values, no C container: only what plans made for it
            scoped = self._end_values_child(can_await)
            if not scoped:
                return None
            gathering = teardown.gather(failure, can_await)
            try:  # last kept first, as the library tears down what a container caches (last cached first)
                teardown.run(executor.in_teardown_order(scoped), gathering)
            finally:
                teardown.stop_gathering()
            return gathering
        if self._children:  # the library would refuse: keep the singletons where they are
            raise InvalidArgumentError(
                f"close: the container still has {self._children} open child container(s); close them first"
            )
        if teardown.async_owned[0] and not can_await:
            waiting = teardown.async_pending(self)
            if waiting:
                raise NeedsAwait(f"the container has {waiting} async teardown(s) pending: close it with `await container.aclose()`")
        for reg in self._own_registrations():
            reg.drop_cached()  # before the library releases them (and this may run inside the GC)
        # no replay, and no singleton hit kept, from a closed container
        self._word, self._parent_words, self._hit_word, self._hit_view = _NO_VERSION, (), _NO_VERSION, _NO_VIEW
        self._lookups = {}  # (a child's may be shared with its siblings)
        self._child_map[1].clear()
        self._child_map[2].clear()
        self._child_template = None
        if self._vals is not None:
            self._vals, self._pending_values = None, ()
        gathering = None
        if self._handle is not None:  # a child that never needed one has no C container
            gathering = teardown.gather(failure, can_await)
            try:
                status = self._api.tether_container_free(self._handle)
                unadopted, self._unadopted = self._unadopted, None
                for obj in reversed(unadopted or ()):  # made before its C container, which refused them: after what it made
                    teardown._drop(object_table.retain_counted(obj), None)  # (their noted teardowns)
            finally:
                teardown.stop_gathering()
            if status != OK:
                raise error_for(status, last_message(self._api))
        self._handle = self._handle_arg = None
        self._closed = True
        # no other container's lookups name these registrations: only this container's and its
        # children's may (a lookup walks up the chain), and it has none open
        for reg in list(self._regs.values()):
            reg.retire()
        self._regs.clear()
        for displaced in (*(self._overrides or {}).values(), *(self._decorated or {}).values()):
            for kept in displaced:
                if kept is not None:
                    kept.retire()
        self._overrides = self._decorated = None
        parent = self._parent
        if parent is not None:
            parent._children -= 1
            if parent._close_when_childless and parent._children == 0:
                parent._close_quietly()
        return gathering

    def _end_values_child(self, can_await: bool) -> executor.Made | None:
        """Closes a child with values and no C container (and no open children), but for the
        teardowns of the container-scoped instances plans made for it: those, in the order it kept them."""
        scoped = self._scoped
        if scoped and not can_await:
            waiting = sum(who is not None for _, _, teardowns in scoped for _, who in teardowns)
            if waiting:
                raise NeedsAwait(f"the container has {waiting} async teardown(s) pending: close it with `await container.aclose()`")
        # no replay, and no singleton hit, from a closed container
        self._vals = self._scoped = None
        self._closed = True
        self._word, self._parent_words, self._hit_word, self._hit_view = _NO_VERSION, (), _NO_VERSION, _NO_VIEW
        self._lookups = _NONE_YET  # (read-only: nothing looks up from a closed container)
        parent = self._parent
        assert parent is not None
        parent._children -= 1
        if parent._close_when_childless and parent._children == 0:
            parent._close_quietly()
        return scoped

    async def aclose(self) -> None:
        """``close()`` awaiting async teardowns (async generator factories, ``async def`` ``close=``)
        on the running loop, in the library's order; failures gathered as ``close()`` gathers them.
        Returns once every teardown ran. Teardowns that finish without suspending (all synchronous
        ones) run right in the library's call, on this thread."""
        await self._aclose(None)

    async def _aclose(self, failure: BaseException | None) -> bool:
        """``aclose()`` with ``failure`` thrown into generator teardowns; whether one swallowed it."""
        if self._vals is not None and not self._children and not self._closed:
            # a request's child: the teardowns of what its plans made, last kept first (as the
            # library lets go of its cache), each awaited right here on this task (nothing queued)
            scoped = self._end_values_child(True)
            if not scoped:
                return False
            # (no failure: nothing for the generator teardowns to share; they take None as no Gathering)
            gathering = teardown.Gathering(failure, True) if failure is not None else None
            errors: list[Exception] = []
            for _, _, teardowns in reversed(scoped):
                for fn, _ in reversed(teardowns):
                    try:
                        result = fn(gathering)
                        if result is not None:
                            await result
                    except Exception as exc:
                        errors.append(exc)
            if errors:
                raise TeardownError(errors)
            return gathering is not None and gathering.suppressed
        gathering = self._close(failure, True)
        if gathering is None:
            return False
        if gathering.queue:
            await teardown.run_queued(gathering)
        if gathering.errors:
            raise TeardownError(gathering.errors)
        return gathering.suppressed

    async def __aenter__(self) -> Container:
        return self

    async def __aexit__(self, typ: object, exc: BaseException | None, tb: object) -> bool:
        # as ExitStack: the block's exception is thrown into generator teardowns; suppressed if one swallowed it
        return await self._aclose(exc)

    def _close_quietly(self) -> None:
        try:
            self.close()
        except InvalidArgumentError:  # children still open: the last one to close closes us
            self._close_when_childless = True
        except Exception:
            pass

    def __enter__(self) -> Container:
        return self

    def __exit__(self, typ: object, exc: BaseException | None, tb: object) -> bool:
        # as ExitStack: the block's exception is thrown into generator teardowns; suppressed if one swallowed it
        gathering = self._close(exc, False)
        if gathering is None:
            return False
        if gathering.errors:
            raise TeardownError(gathering.errors)
        return gathering.suppressed

    def __del__(self) -> None:
        try:
            closed = self._closed
        except AttributeError:  # (a subclass's __init__ that never called ours)
            return
        if not closed:
            self._close_quietly()

    def __repr__(self) -> str:
        state = "closed" if self._closed else "no C container yet" if self._handle is None else f"0x{self._handle:x}"
        return f"<tether.Container {state}, {len(self._regs)} Python registrations>"

    # -- registering ------------------------------------------------------------------

    @overload
    def register(self, key_or_class: type[T], factory: None = None, *, deps: Sequence[object] = (),
                 scope: Scope = Scope.GRAPH, on_complete: Callback | Sequence[Callback] | None = None,
                 close: Callable[[Any], Any] | None = None, name: str | None = None) -> type[T]: ...
    @overload
    def register(self, key_or_class: Key, factory: F, *, deps: Sequence[object] = (),
                 scope: Scope = Scope.GRAPH, on_complete: Callback | Sequence[Callback] | None = None,
                 close: Callable[[Any], Any] | None = None, name: str | None = None) -> F: ...
    @overload
    def register(self, key_or_class: str = ..., *, deps: Sequence[object] = (),
                 scope: Scope = Scope.GRAPH, on_complete: Callback | Sequence[Callback] | None = None,
                 close: Callable[[Any], Any] | None = None, name: str | None = None) -> Callable[[F], F]: ...

    def register(self, key_or_class: Any = _UNSET, factory: Any = _UNSET, *, deps: Sequence[object] = (),
                 scope: Scope = Scope.GRAPH, on_complete: Any = None, close: Any = None, name: str | None = None) -> Any:
        """Registers a factory (or a class, autowired) under a key; also a decorator.

        - ``register("K", factory, deps=[...])``: ``factory(*deps)`` makes K's instances.
        - ``register(Service)``: the class is its own key and factory; ``__init__`` parameters are
          autowired from type hints (see ``tether.parameters``). Returns the class: usable as ``@c.register``.
        - ``@c.register("K", deps=[...])`` / ``@c.register(scope=Scope.SINGLETON)`` decorate a factory
          or a class; a decorated function whose return annotation is a class is registered under
          that class.
        - ``on_complete``: a callable ``(resolver, instance)``, a ``tether.complete(fn, deps=[...])``
          (``fn(instance, *targets)``, targets declared: see ``tether.completion``), or a list of
          them, run in that order after every factory of the resolve returned (where cycles are
          closed: ``r.get(K)``, ``r.weak(K)``, or a declared ``tether.weak(K)``).
        - Teardown: a generator factory yields its instance, and its code after ``yield`` runs when
          the library lets go of that instance; ``close=fn`` runs ``fn(instance)`` then, for any
          factory (see ``close()`` for when and in what order).
        - ``name="gzip"`` registers a named variant, under K's key + ``"#gzip"``: one of the
          registrations ``tether.all(K)`` and ``resolve_all(K)`` list.
        Re-registering a key replaces the registration. Wrong use (an explicit ``factory=None`` too)
        raises TypeError/ValueError here.
        """
        checked_scope = _check_scope(scope)
        if name is not None:
            if not isinstance(name, str) or not name:
                raise TypeError(f"register: name must be a non-empty str, not {name!r}")
            if key_or_class is _UNSET:
                raise TypeError("register: name= needs a key: register(K, factory, name=...) or @register(K, name=...)")
            named = f"{key_name(key_or_class)}#{name}"
            if factory is _UNSET and not isinstance(key_or_class, str):
                factory = key_or_class  # register(Impl, name=...): the class is its own factory
            key_or_class = named
        if key_or_class is _UNSET or (factory is _UNSET and isinstance(key_or_class, str)):
            key = key_or_class

            def decorate(target: Any) -> Any:
                self._register_target(target if key is _UNSET else key, target, deps, checked_scope, on_complete, close)
                return target

            return decorate
        if factory is _UNSET:
            self._register_target(key_or_class, key_or_class, deps, checked_scope, on_complete, close)
            return key_or_class
        self._register(key_or_class, factory, deps, checked_scope, on_complete, close)
        return factory

    def _register_target(self, key: Any, target: Any, deps: Sequence[object], scope: Scope, on_complete: Any,
                         close: Any) -> None:
        if isinstance(key, type) or isinstance(key, str):
            self._register(key, target, deps, scope, on_complete, close)
            return
        if callable(key):  # a decorated function: its return annotation names the key
            returns = _returned_class(key)
            if returns is not None:
                self._register(returns, key, deps, scope, on_complete, close)
                return
            raise TypeError(
                f"register: cannot tell the key of {key!r}; annotate its return type with a class or "
                f"use @container.register(\"Key\")"
            )
        raise TypeError(f"register: a key is a non-empty str or a class, not {type(key).__name__}")

    def _register(self, key: Key, factory: Any, deps: Sequence[object], scope: Scope, on_complete: Any,
                  close: Any = None, mode: int = 0, plan: Parameters | None = None) -> None:
        name = key_name(key)
        what = f"register({name!r})"
        if not callable(factory):
            raise TypeError(f"{what}: the factory must be callable, not {type(factory).__name__}")
        callbacks = _check_callbacks(on_complete, what)
        if plan is None:
            plan = from_deps(deps, factory, what) if deps else infer(factory, what)
        singleton_owner = self if scope.kept_strongly else None
        async_callbacks = [aio.wrap_callback(name, fn) for fn in callbacks]
        is_async = aio.is_async(factory) or any(fn is not None for fn in async_callbacks)
        callbacks = [fn if wrapped is None else wrapped for fn, wrapped in zip(callbacks, async_callbacks)]
        if aio.is_async(factory):
            with_teardown: Any = aio.wrap_factory(name, factory, close, singleton_owner, scope)
        elif close is not None and inspect.iscoroutinefunction(close):
            with_teardown = aio.wrap_close(name, factory, close, singleton_owner)
        else:
            with_teardown = teardown.wrap(name, factory, close)
        if is_async and with_teardown is None:
            with_teardown = factory  # its callbacks are async: the library resolves it (no replay)
        if with_teardown is not None and scope.kept_weakly:
            raise TypeError(f"{what}: a WEAK-scoped instance is shared by boxes that come and go; give teardown or "
                            f"async to a SINGLETON, CONTAINER, GRAPH or TRANSIENT registration")
        # has_teardown: its drop runs what its factory noted, and only the library makes it (see plans)
        reg = Registration(self, name, factory if with_teardown is None else with_teardown, plan, scope,
                           has_teardown=with_teardown is not None)
        reg.install(self.handle, callbacks, mode)
        if mode == OVERRIDE:
            self._push_override(reg.raw, reg)
            return
        if mode == DECORATE:  # the decorated one moved (its handle with it): still run from plans, see decorate
            decorated = self._regs.get(reg.raw)
            if decorated is not None:
                self._decorated = self._decorated or {}
                self._decorated.setdefault(reg.raw, []).append(decorated)
            self._regs[reg.raw] = reg
            self._registered(None)
            return
        if self._decorated and reg.raw in self._decorated:  # the library let go of them with their decorators
            for undecorated in self._decorated.pop(reg.raw):
                undecorated.retire()
        displaced = self._overrides.get(reg.raw) if self._overrides else None
        if displaced:  # the library put it under the override: so does Python
            old, displaced[0] = displaced[0], reg
        else:
            old = self._regs.get(reg.raw)
            self._regs[reg.raw] = reg
        self._registered(old)

    def resolve_all(self, key: Key) -> list[Any]:
        """Every registration of ``key`` and of its named variants (``register(K, f, name=...)``)
        visible from here, resolved in one graph, in registration order: the list a
        ``tether.all(K)`` dependency receives. No registration: an empty list."""
        handle = self._materialize()
        api = self._api
        frame: list[Any] = [self]  # (see _state.tls.frames)
        frames = _tls.frames
        frames.append(frame)
        out, found = c_void_p(), c_void_p()
        try:
            with _Constructing(api):
                status = api.tether_resolve_all(handle, encode_key(key), out, found)
                message = messages.last(api) if status else ""
        finally:
            frames.pop()
            if _retired:
                _state.free_retired()
        if status:
            _state.raise_failure(status, message, frame)
        try:
            items = []
            for index, address in enumerate(list_items(found.value or 0)):
                obj = object_table.lookup(address, object_table.MISSING)
                if obj is object_table.MISSING:  # a C-made instance: a handle of its own
                    ref = c_void_p()
                    if api.tether_list_ref(out, index, ref) != OK:
                        raise error_for(api.tether_last_status(), last_message(api))
                    obj = native_refs.NativeRef._adopt(api, ref.value or 0, address)
                items.append(obj)
        finally:
            self._ref_release(out)
        return items

    # -- decorators ---------------------------------------------------------------------

    def decorate(self, key: Key, fn: Callable[..., Any], *, deps: Sequence[object] | None = None,
                 close: Callable[[Any], Any] | None = None) -> None:
        """Decorates ``key``'s registration in this container: ``fn(instance, *deps)`` returns what
        resolves of ``key`` and its dependents get instead. ``deps`` (after the instance) are
        autowired from ``fn``'s parameters after the first, unless given. Several decorators apply in
        the order added; the result takes the key's scope (a SINGLETON caches it, once); ``fn`` may be
        a generator (or take ``close=``) for a teardown of its own, which runs before the original's.
        Registering ``key`` again here replaces it with its decorators. Raises ``NotFoundError`` if
        ``key`` is not registered in this container itself (see ``TETHER_DECORATE``).
        """
        name = key_name(key)
        what = f"decorate({name!r})"
        if not callable(fn):
            raise TypeError(f"{what}: the decorator must be callable, not {type(fn).__name__}")
        instance = Slot(PARAM_DEP, name)  # the library gives it the instance it decorates
        plan = from_deps([key, *deps], fn, what) if deps is not None else infer(fn, what, first=instance)
        decorated = self._regs.get(encode_key(key))
        scope = decorated.scope if decorated is not None else Scope.GRAPH  # (the library's, whatever this says)
        self._register(key, fn, (), scope, None, close, mode=DECORATE, plan=plan)

    # -- overrides (tests) --------------------------------------------------------------

    @overload
    def override(self, key: type[T], obj: T, *, factory: None = None) -> Override[T]: ...
    @overload
    def override(self, key: Key, obj: Any = ..., *, factory: Callable[..., Any] | None = None,
                 deps: Sequence[object] = (), scope: Scope = Scope.GRAPH,
                 close: Callable[[Any], Any] | None = None) -> Override[Any]: ...

    def override(self, key: Key, obj: Any = _UNSET, *, factory: Any = None, deps: Sequence[object] = (),
                 scope: Scope = Scope.GRAPH, close: Any = None) -> Override[Any]:
        """Overrides ``key`` here with ``obj``, or with ``factory`` (registered as ``register`` would,
        with ``deps``, ``scope`` and ``close``), until the override ends: leaving ``with
        c.override(...)``, its ``clear()``, or ``c.clear_override(key)``.

        Resolves from this container and its children get the override; instances cached here or in
        children that were built over ``key`` (directly or not) are let go of when it starts and when
        it ends, so a singleton is rebuilt over the fake, then over the original. Objects resolved
        before keep what they had. Overrides of one key stack; registering ``key`` here meanwhile
        takes effect once they end (see ``tether_override``).
        """
        if (obj is _UNSET) == (factory is None):
            raise TypeError(f"override({key_name(key)!r}): give the object or factory=, exactly one")
        if factory is not None:
            self._register(key, factory, deps, _check_scope(scope), None, close, mode=OVERRIDE)
            return Override(self, key)
        if obj is None:
            raise TypeError(f"override({key_name(key)!r}): the override cannot be None")
        raw = encode_key(key)
        handle = self._materialize()
        ptr = object_table.retain_counted(obj)  # the library's box; DROP takes it back
        status = self._api.tether_override(handle, raw, ptr, _DROP_ADDRESS, None)
        if status != OK:
            object_table.release(ptr)
            raise error_for(status, last_message(self._api))
        self._push_override(raw, None)
        return Override(self, key)

    def clear_override(self, key: Key) -> None:
        """Ends the newest override of ``key`` made in this container (``override``); what it
        replaced resolves again. Raises ``InvalidArgumentError`` if ``key`` is not overridden here."""
        raw = encode_key(key)
        gathering = teardown.gather()
        try:
            status = self._api.tether_override_clear(self.handle, raw)
        finally:
            teardown.stop_gathering()
        if status != OK:
            raise error_for(status, last_message(self._api))
        stack = self._overrides.get(raw) if self._overrides else None
        if stack:  # else made by C code on this container: no Python registration was set aside
            ended = self._regs.pop(raw, None)
            displaced = stack.pop()
            if not stack:
                del self._overrides[raw]  # type: ignore[union-attr]
            if displaced is not None:
                self._regs[raw] = displaced
            self._registered(ended)
        else:
            self._registered(None)
        if gathering.errors:
            raise TeardownError(gathering.errors)

    def _push_override(self, raw: bytes, reg: Registration | None) -> None:
        """After the library overrode ``raw`` here: its Python registration (if any) is kept aside."""
        if self._overrides is None:
            self._overrides = {}
        self._overrides.setdefault(raw, []).append(self._regs.pop(raw, None))
        if reg is not None:
            self._regs[raw] = reg
        self._registered(None)

    def register_value(self, key: Key) -> None:
        """Declares ``key`` a value each child container provides (``Container(parent=self,
        values={key: obj})``), a request's say: ``validate()`` counts it as registered, and
        resolving it (or anything needing it) where no container on the way provides it raises
        ``NotFoundError`` naming it. A SINGLETON's dependencies come from its own container, so it
        cannot take a child's value: make what needs the value GRAPH or CONTAINER scoped."""
        raw = encode_key(key)
        status = self._api.tether_declare_value(self.handle, raw)
        if status != OK:
            raise error_for(status, last_message(self._api))
        self._forget(raw)

    def provide_value(self, key: Key, obj: Any) -> None:
        """Provides ``obj`` as the instance of ``key`` here, no factory: resolves from this
        container (and its children) get it, registrations of parents included. Held until the
        container closes or ``key`` is registered again here; ``values=`` calls this."""
        raw = _value_key(key, obj)
        handle = self._materialize()  # (the values it was made with first)
        self._pending_values = [(raw, obj)]
        self._provide_pending(handle)
        self._forget(raw)

    def _forget(self, raw: bytes) -> None:
        """A key was registered here by the library's hand: a Python registration of it is replaced."""
        self._registered(self._regs.pop(raw, None))

    def _registered(self, old: Registration | None) -> None:
        """After a registration here (replacing ``old``, if not None): lookups that may name what it
        replaces or shadows are looked up anew, this container's and its children's (a lookup walks up)."""
        if self._children:
            _state.bump_generation()
        self._lookups.clear()  # replay builders hold factories: let the replaced one go now
        self._child_map[1].clear()
        self._child_map[2].clear()
        if old is not None:
            old.retire()

    # -- resolving --------------------------------------------------------------------

    def _registration(self, raw: bytes) -> Registration | None:
        """The Python registration a resolve of ``raw`` through this container would use."""
        container: Container | None = self
        while container is not None:
            reg = container._regs.get(raw)
            if reg is not None:
                return reg
            container = container._parent
        return None

    def _key_id(self, raw: bytes) -> int:
        kid = _key_ids.get(raw)
        if kid is None:
            out = c_uint32()
            # ids are process-wide: any open container interns (a child may have no C container yet)
            status = self._api.tether_intern(self._handle or (self._parent or self).handle, raw, byref(out))
            if status != OK:
                raise error_for(status, last_message(self._api))
            kid = _key_ids[raw] = out.value
        return kid

    @overload
    def resolve(self, key: type[T], *args: Any) -> T: ...
    @overload
    def resolve(self, key: str, *args: Any) -> Any: ...

    def resolve(self, key: Key, *args: Any) -> Any:
        """The instance of ``key``, with its whole graph built and every completion callback run.

        ``args`` are the runtime arguments of the top-level registration. Python-made instances
        are returned as themselves; native ones as ``NativeRef``. Raises ``NotFoundError``,
        ``CycleError``, ``RetainCycleError``, ``ArgumentMismatchError``, or ``FactoryError``
        (with the Python exception that caused it as ``__cause__``).
        """
        # The common cases in a function of few locals (a call's cost grows with them): a singleton
        # hit, a replayed plan; anything else, and what they decline, in _resolve
        try:
            cell, word, token, build, more = self._lookups[key]
        except (KeyError, TypeError):
            return self._resolve(key, args)
        if cell is not None:  # a published singleton (see Entry)
            obj = cell.obj  # first: the word then says it was still published
            if word == token and obj is not None and not args:
                return obj
        elif not args:
            if build is not None:
                result = build()
                if result is not _MISS and result is not _BUSY:
                    return result
        else:  # runtime arguments: the key's replay builder taking them, if it has one (see _resolve_args)
            build = more.args
            if build is not None:
                result = build(*args)
                if result is not _MISS and result is not _SLOW and result is not _BUSY:
                    return result
        return self._resolve(key, args)

    def _resolve(self, key: Key, args: tuple[Any, ...]) -> Any:
        """``resolve`` beyond its common cases: looks up again, then asks the library."""
        vals = self._vals
        if vals is not None:  # a child with values and no C container: its parent's plan, else the library
            if not args:
                # the builder its parent's children share (see _lookup): a plan without values as it
                # is, one with value steps taking this child's values (container steps made first)
                _, _, _, build, more = self._child_entry(key)
                if build is not None:
                    result = build()
                elif more.vals is None:
                    result = _MISS
                elif more.containers is None:
                    result = more.vals(vals)
                else:
                    result = self._with_containers(more, vals)
                if result is not _MISS and result is not _BUSY:
                    return result
                if result is _MISS:  # stale, a singleton gone, a value it lacks: looked up again next time
                    self._lookups.pop(key, None)
            self._materialize()
        try:
            _, _, _, build, more = self._lookups[key]
            # a builder is valid while its stamp is the configuration, which every registration
            # change in the chain moves: it needs no generation check (see executor)
            if build is None and (self._lookups_generation != _generation[0] or more.again):
                raise KeyError(key)
        except (KeyError, TypeError):
            if self._closed:
                raise InvalidHandleError("the container is closed") from None
            _, _, _, build, more = self._lookup(key)
        if build is not None and not args:  # a replayed plain graph: no call
            result = build()
            if result is not _MISS:
                if result is not _BUSY:
                    return result
            else:
                _, _, _, build, more = self._lookup(key)  # reconfigured or reset: look again
                if build is not None:
                    result = build()
                    if result is not _MISS and result is not _BUSY:
                        return result
        kid, cached_reg = more.kid, more.reg
        handle = self._handle_arg
        if handle is None:
            handle = self._materialize()
        if args:
            return self._resolve_args(key, kid, args)
        kept = kept_obj = None
        if cached_reg is not None:
            if cached_reg.scope.kept_weakly:
                return self._resolve_weak(key, kid, cached_reg, handle)
            # SINGLETON scope: the cached object, held by this local through the call, is passed as
            # RESOLVE_HELD, so a hit on it needs no handle (another thread may reset it meanwhile);
            # the library's answer says whether it is the published singleton, and under which token
            kept = cached_reg.cached
            if kept is not None:
                kept_obj = kept.obj
                if kept_obj is None:  # emptied: the library or the container let go of it
                    kept = None
        return self._through_library(key, kid, cached_reg, handle, kept, kept_obj)

    def _resolve_weak(self, key: Key, kid: int | c_uint32, reg: Registration, handle: c_void_p) -> Any:
        """Resolves a WEAK-scoped Python registration through the library; if the answer is the
        object the registration hands out while Python holds it (``Registration.last``), it
        is served here from now on, with no call, while this container's hit word is the value read
        before the call: any change up the chain that could change the answer (a forget, a key
        registered here by C code, a trace hook) moves it, and the library decides which do."""
        before = self._hit_word.value
        obj = self._through_library(key, kid, reg, handle, None, None)
        last = reg.last
        if last is None or last() is not obj or self._traced:
            return obj
        if key in self._lookups or len(self._lookups) < 1024:
            self._lookups[key] = (None, None, None, _weak_hit(last, self._hit_view, _token(before)), More(kid, reg))
        return obj

    def _through_library(self, key: Key, kid: int | c_uint32, cached_reg: Registration | None, handle: c_void_p,
                         kept: Any, kept_obj: Any) -> Any:
        """The resolve of ``key`` by the library (``tether_resolve_key_collect``), holding ``kept``
        (a SINGLETON's cell, or None) whose object is ``kept_obj``."""
        frames, io, words, instance, out = _tls.hot
        if frames:  # nested in a resolve of this thread, whose buffer is in use
            io, words = collect_buffer()
        if kept is not None:
            words[3] = kept.ptr
        frame: list[Any] = [self]  # (see _state.tls.frames)
        frames.append(frame)
        try:
            with _Constructing(self._api):
                # the GIL kept; if that would mean waiting for a lock, the ordinary call (GIL released)
                status = self._gil_collect(handle, kid, _NO_WAIT if kept is None else _NO_WAIT_HELD, io)
                if status == E_WOULD_BLOCK:
                    run_drops(words, words[2])
                    words[2] = 0
                    if _attempting and aio.here() is not None:  # an aresolve: await the other thread, not block the loop
                        raise aio.Suspended(poll=True)
                    status = self._hot_resolve(handle, kid, instance, out)
                    words[3], words[4] = instance[0] or 0, out[0] or 0
                message = messages.last(self._api) if status else ""
        finally:
            frames.pop()
            if _retired:
                _state.free_retired()
        dropped, address, ref, token = _results(words)  # read before anything can reuse them
        if status:
            run_drops(words, dropped)
            _state.raise_failure(status, message, frame)
        if kept is not None and address == kept.ptr and not ref and not dropped:
            # the library answered: the published singleton (nothing was made), under ``token``.
            # Served here from now on while the hit word says so (see Entry)
            if token and (key in self._lookups or len(self._lookups) < 1024):
                self._lookups[key] = (kept, self._hit_view, _token(token), None, More(kid, cached_reg))
            return kept_obj
        # native_refs.adopt, inlined: a Python object comes back as itself, its handle (if the call did
        # not release it) released only after the lookup, which it protects from a concurrent reset
        obj = _fresh_of(address)
        if obj is None and kept is not None and address == kept.ptr:
            obj = kept_obj  # held, but with a handle: not the published singleton, or the retry
        if dropped:  # after the lookup: the result's own drop may be one of them
            try:
                fns, instances, fast = _drop_views[dropped - 1]
            except IndexError:  # more than the buffer holds: the rest are in the library's array
                fns, instances, fast = _MORE_DROPS_VIEW
            if fns(words) == fast:
                for ptr in instances(words):
                    _fresh_pop(ptr, None)
            elif obj is None and not ref:
                obj = self._released(address)
                run_drops(words, dropped)
            else:
                run_drops(words, dropped)
        if not ref:  # released by the call
            return obj if obj is not None else self._released(address)
        if obj is not None:
            self._ref_release(ref)
            return obj
        cell = _box_of(address)
        if cell is not None:
            self._ref_release(ref)
            return cell[0]
        owned = _owned_get(address)  # a singleton, held by its container
        if owned is not None:
            held = owned()
            obj = held.obj if held is not None else None
            if obj is not None:
                self._ref_release(ref)
                return obj
        return self._adopt(ref, address)

    def _with_containers(self, more: More, vals: dict[int, Any]) -> Any:
        """A child with values and no C container: its parent's plan with container steps (see
        ``_resolve``), those this child lacks made first; MISS when they cannot be made here."""
        prepared, build = more.containers, more.vals
        assert prepared is not None and build is not None
        if self._making:  # an aresolve of this child makes some now: the builder's own check
            return build(vals)
        made = executor.make_containers(prepared, vals)
        if not made:
            return _MISS if made is None else build(vals)
        try:
            result = build(executor.with_made(vals, made))
        except BaseException:
            executor.discard(made)
            raise
        self._publish(made)
        return result

    @overload
    async def aresolve(self, key: type[T], *args: Any) -> T: ...
    @overload
    async def aresolve(self, key: str, *args: Any) -> Any: ...

    async def aresolve(self, key: Key, *args: Any) -> Any:
        """``resolve`` for async code: ``async def`` and async generator factories and ``async def``
        completion callbacks are awaited on the running loop, by this task (see ``tether.aio``); the
        library still decides the graph, its order and caching (a shared instance is made once, also
        when ``aresolve``s race for it: the others await it, as they await another thread creating
        one, without blocking the loop). Cancelling it cancels the factory it awaits and tears down
        what it made."""
        if self._closed:
            raise InvalidHandleError("the container is closed")
        vals = self._vals
        if vals is not None and not args and not _attempting:
            # A request's child: the plan its parent described, its container steps made first where
            # this child lacks them by the plan's runner (async factories awaited here), then its
            # builder; else the library's resolve (through aio) decides
            _, _, _, plain, more = self._child_entry(key)
            build, result = more.vals, None
            if plain is not None:  # a plan without values: what every child of the parent builds
                result = plain()
            elif build is not None:
                prepared = more.containers
                if prepared is None:
                    result = build(vals)
                else:
                    run = prepared.runner or executor.runner(prepared)
                    result = await run(self, vals, build)
                    while type(result) is executor.Contended:  # another run of this child makes one of them
                        if aio.own_run(result.waiters):  # ...up this stack, awaiting what asks for it again
                            return await aio.resolve(self, key, args)  # (the library reports the cycle)
                        await self._wait_for(result)
                        if self._vals is not vals:  # it gained a C container meanwhile: the library decides
                            return await aio.resolve(self, key, args)
                        result = await run(self, vals, build)
            if result is not None and result is not _MISS and result is not _BUSY:
                return result
            if result is _MISS:  # stale, a singleton gone, or a value it lacks: looked up again next time
                self._lookups.pop(key, None)
        return await aio.resolve(self, key, args)

    @staticmethod
    def _released(address: int | None) -> Any:
        """The object of a result the call released (its registration defers drops: a Python one)."""
        obj = object_table.lookup(address, object_table.MISSING)
        if obj is object_table.MISSING:  # another thread upgraded a weak handle to it and dropped it since
            raise InvalidHandleError("the resolved instance was released by another thread before it could be returned")
        return obj

    def _resolve_args(self, key: Key, kid: int | c_uint32, args: tuple[Any, ...]) -> Any:
        """``resolve`` with runtime arguments: the replay builder of the key's plan, if it has one
        and passes these arguments on as they are; otherwise ``tether_resolve_key_args``."""
        entry = self._lookups.get(key)
        build = entry[4].args if entry is not None else None
        if build is not None:
            result = build(*args)
            if result is not _MISS and result is not executor.SLOW and result is not _BUSY:
                return result
            if result is _MISS:  # reconfigured or reset: look again next time
                self._lookups.pop(key, None)
        handle = self._materialize()
        reg = self._registration(encode_key(key))
        api = self._api
        frames = _tls.frames
        frame: list[Any] = [self]
        frames.append(frame)
        out = c_void_p()
        pinned: Sequence[int] = ()
        try:
            with _Constructing(api):
                values, pinned = to_values(key_name(key), args, reg.arg_kinds if reg is not None else None)
                status = api.tether_resolve_key_args(handle, kid, values, len(args), out)
                message = messages.last(api) if status else ""
        finally:
            frames.pop()
            if _retired:
                _state.free_retired()
            for ptr in pinned:
                object_table.release(ptr)
        if status:
            _state.raise_failure(status, message, frame)
        address = api.hot_ref_get(out)
        obj = _fresh_of(address)
        if obj is not None:
            api.hot_ref_release(out)
            return obj
        cell = _box_of(address)
        if cell is not None:
            api.hot_ref_release(out)
            return cell[0]
        return self._adopt(out.value, address)

    def _adopt(self, ref: int | None, address: int | None) -> Any:
        """The rest of native_refs.adopt for an owned handle: a counted or owned Python object comes back
        as itself (the handle released), a native instance as a NativeRef owning the handle."""
        obj = object_table.lookup(address, object_table.MISSING)
        if obj is object_table.MISSING:
            return native_refs.NativeRef._adopt(self._api, ref or 0, address or 0)
        self._ref_release(ref)
        return obj

    def _child_entry(self, key: Key) -> Entry:
        """A child with values and no C container: its entry of ``key`` in the one map its parent's
        children share, else looked up (``_lookup``); one without a plan or value builder kept under
        an older configuration is looked up again."""
        try:
            entry = self._lookups[key]
            if entry[3] is None and entry[4].vals is None and self._lookups_generation != _generation[0]:
                raise KeyError(key)
            return entry
        except (KeyError, TypeError):
            return self._lookup(key)

    def _lookup(self, key: Key) -> Entry:
        """The entry of ``key`` (see ``Entry``), made and kept in this container's map, replacing the
        one there as one unit; kept until any Python registration changes, its builders valid while
        the configuration is their stamp."""
        raw = encode_key(key)
        if self._lookups_generation != _state.generation[0]:
            self._lookups.clear()
            self._lookups_generation = _state.generation[0]
            if self._handle is None and self._parent is not None:  # shared with its siblings
                self._parent._child_generation[0] = self._lookups_generation
        reg = self._registration(raw)
        kid = self._key_id(raw)
        # for the hot call (no argtypes): an int is passed as a C int, the same register as a
        # uint32_t and cheaper to convert than a c_uint32; ids are small, but stay exact above 2**31
        cached = reg is not None and reg.scope.kept_by_registration
        more = More(kid if kid < 2**31 else c_uint32(kid), reg if cached else None)
        build = None
        keep = len(self._lookups) < 1024
        if keep and reg is not None and not cached and self._word is not _NO_VERSION:
            stamp = self._configuration()  # before describing: a change meanwhile makes it stale
            if self._handle is None and stamp != self._vals_stamp and not self._at(stamp):
                return (None, None, None, None, more)  # the library now makes a value its own registration
            prior = self._lookups.get(key)
            if prior is not None:
                more.templates = prior[4].templates
            if self._first_resolve(prior):
                more.again = True  # the library resolves it this time; the next resolve looks it up again
            else:
                prepared, owner = self._prepared_plan(key, kid)
                if owner is self:
                    more.prepared, more.stamp = prepared, stamp
                # a plan with values (or container steps) runs for a child with values and no C
                # container (build(vals)), not with runtime arguments too
                if prepared is not None and (not prepared.takes_values
                                             or (self._handle is None and not prepared.takes_arguments)):
                    build = self._bind(prepared, stamp, owner, kid)
                    keep = build is not None  # else a cached step has no instance yet: look again next time
                    if build is not None and prepared.takes_values:
                        more.vals, more.containers = build, prepared if prepared.containers else None
                        build = None
                    elif build is not None and prepared.takes_arguments:  # resolve(key, *args) runs it
                        more.args, build = build, None
        entry = (None, None, None, build, more)
        if keep:
            self._lookups[key] = entry
        return entry

    def _at(self, stamp: int) -> bool:
        """A child with no C container moves to its parent's children's map for configuration
        ``stamp`` (made now if the parent's is another's); False, and it stays, when a value of it
        would now be its own registration (the library's answer: see ``_slots_for``)."""
        parent = self._parent
        assert parent is not None
        state = parent._child_map
        if state[0] != stamp:
            state = parent._child_map = (stamp, {}, {})
        if self._vals is not None:
            state = parent._slots_for([_key_ids[raw] for raw, _ in self._pending_values])
            if state is None or state[0] != stamp:
                return False
        self._vals_stamp, self._lookups = stamp, state[1]
        return True

    def _first_resolve(self, prior: Entry | None) -> bool:
        """Whether this is the first resolve of a key from this child with registrations of its
        own (a child per request, say), whose entry here was ``prior``: that one the library
        resolves (it replays one plan per child shape), which costs less than having the child's
        plan described for Python to run once; a second resolve of the key has it described (see
        ``_prepared_plan``). A cost policy, not a resolution rule: both give the same graph."""
        if self._parent is None or (prior is not None and prior[4].again) or self._empty():
            return False
        return True

    def _bind(self, prepared: executor.Prepared, stamp: int, owner: Container, kid: int) -> Callable[[], Any] | None:
        """The builder of ``prepared`` (described from ``owner``, this container or the ancestor
        whose plan it runs) for this container (``executor.bind``), or None while one of its cached
        steps is not a singleton hit of its registration's container (the library answered it as
        published, under the token that container's hit word still has): the library's resolve
        makes or confirms it, in its place in the graph. The builder runs while this container's
        hit word has the value read first: every unpublish up the chain after that read moves it."""
        cached = prepared.cached
        if not cached:
            return executor.bind(prepared, self._words(), stamp)
        cache_stamp = self._hit_word.value  # first: whatever is unpublished after this moves it
        for reg in cached:
            kept = reg.cached
            if kept is None or kept.obj is None:
                return None
            # asked of the registration's own container: its hit serves every child (one per request)
            home = reg.container() or owner
            if not home._hits(reg.name, kept):
                try:
                    if home.resolve(reg.name) is not kept.obj or not home._hits(reg.name, kept):
                        return None
                except TetherError:  # closed or replaced meanwhile: the library's resolve says what
                    return None
        return executor.bind(prepared, self._words(), stamp, (self._hit_word,), cache_stamp)

    def _words(self) -> tuple[c_size_t, ...]:
        """The version words a builder bound here checks: this container's and its parents' (a
        child with no C container's own is a constant zero: its parents' only)."""
        return self._parent_words if self._word is _ZERO else (self._word, *self._parent_words)

    def _hits(self, key: Key, kept: object_table.Owned) -> bool:
        """Whether ``key``'s entry here is a hit on the singleton in ``kept`` that the hit word still allows."""
        entry = self._lookups.get(key)
        return entry is not None and entry[0] is kept and entry[1] == entry[2]

    def _prepared_plan(self, key: Key, kid: int) -> tuple[executor.Prepared | None, Container]:
        """The plan of ``kid`` (``key``) from here, prepared (``executor.prepare``): described by the
        library from the nearest container up the chain with anything registered in it, and kept in
        that container's entry for the key, while its configuration is unchanged, for its children
        with nothing registered (one per request, say: they build the same graph, and the library
        replays the same plan for them); and that container."""
        owner = self
        while owner._parent is not None and owner._empty():
            owner = owner._parent
        stamp = owner._configuration()  # before describing: a change meanwhile makes it stale
        kept = owner._lookups.get(key)
        if kept is not None and kept[4].stamp == stamp:
            return kept[4].prepared, owner
        parent = owner._parent
        shared = parent is not None and owner._regs
        if shared:
            parent_stamp = parent._configuration()  # before describing, as ``stamp``
        described = executor.describe(self._api, owner.handle, kid)
        if described is None:
            prepared = None
        elif shared:
            prepared = owner._prepared_again(key, described, kid, parent_stamp)
        else:
            prepared = executor.prepare(owner._python_registrations(), *described, self._api, owner.handle, kid, owner)
        if owner is not self:
            owner._keep(key, kid, prepared=prepared, stamp=stamp)
        return prepared, owner

    def _keep(self, key: Key, kid: int, **changes: Any) -> None:
        """Puts what a child prepared from here (a plan, templates) in this container's entry for
        ``key``, replaced as one unit; with no entry, in a new one that this container's own
        resolve looks up again."""
        kept = self._lookups.get(key)
        if kept is not None:
            self._lookups[key] = (kept[0], kept[1], kept[2], kept[3], kept[4].but(**changes))
        elif len(self._lookups) < 1024:
            self._lookups[key] = (None, None, None, None, More(kid, None, again=True).but(**changes))

    def _prepared_again(self, key: Key, described: executor.Described, kid: int,
                        parent_stamp: int) -> executor.Prepared | None:
        """``described`` (the plan of ``kid`` from this child, with registrations of its own) made
        ready: from the template of an earlier child of the same parent that the library described
        the same plan for (``executor.identity``: a child per request registering its request
        object, say), else prepared and kept as that template in the parent's entry for ``key``
        while the parent's configuration is ``parent_stamp``."""
        parent = self._parent
        assert parent is not None
        own = {reg.handle: reg for reg in self._regs.values()}
        found = executor.identity(described, own)  # type: ignore[arg-type]
        templates = None
        if found is not None:
            shape, handles = found
            kept = parent._lookups.get(key)
            kept_templates = kept[4].templates if kept is not None else None
            if kept_templates is not None and kept_templates[0] == parent_stamp:
                templates = kept_templates[1]
                earlier = templates.get((kid, shape))
                if earlier is not None:
                    prepared = executor.again(earlier, handles, own, self._api, self.handle, kid)  # type: ignore[arg-type]
                    if prepared is not None:
                        return prepared
        prepared = executor.prepare(self._python_registrations(), *described, self._api, self.handle, kid, self)
        if found is not None and prepared is not None and prepared.picks is not None:
            if templates is None:
                templates = {}
                parent._keep(key, kid, templates=(parent_stamp, templates))
            if len(templates) < 256:
                templates[kid, shape] = executor.template(prepared, [i for i, h in enumerate(handles) if h in own])
        return prepared

    def _empty(self) -> bool:
        """Nothing registered here, by Python or C (the version word has not moved since): resolves
        from here build exactly what the parent's build."""
        return not self._regs and self._word.value == self._created_word

    def _own_registrations(self) -> list[Registration]:
        """This container's Python registrations, those moved under decorators (see decorate) too."""
        regs = list(self._regs.values())
        for moved in (self._decorated or {}).values():
            regs += moved
        return regs

    def _python_registrations(self) -> dict[int, Registration]:
        """The Python registrations of this container and its parents, by registration handle."""
        found: dict[int, Registration] = {}
        container: Container | None = self
        while container is not None:
            found.update((reg.handle, reg) for reg in container._regs.values() if reg.handle is not None)
            for moved in (container._decorated or {}).values():
                found.update((reg.handle, reg) for reg in moved if reg.handle is not None)
            container = container._parent
        return found

    # -- caches, checks, pictures -----------------------------------------------------

    def reset(self, scope: Scope) -> None:
        """Empties this container's cache of ``scope`` (SINGLETON, WEAK or CONTAINER; others: nothing
        happens; values stay), tearing down what the library lets go of (see ``close()``).

        After ``reset(Scope.WEAK)`` the next resolve makes new weak-scoped instances even while
        Python still holds the old ones.
        """
        gathering = self._reset(scope, False)
        if gathering.errors:
            raise TeardownError(gathering.errors)

    def _reset(self, scope: Scope, can_await: bool) -> teardown.Gathering:
        """``reset()`` up to raising its teardowns' failures (see ``_close`` for ``can_await``)."""
        checked = _check_scope(scope)
        handle = self.handle
        for reg in self._own_registrations():
            if checked.kept_weakly:
                reg.last = None
            elif checked.kept_strongly:
                reg.drop_cached()  # before the library releases them
        gathering = teardown.gather(None, can_await)
        try:
            status = self._api.tether_reset(handle, int(checked))
        finally:
            teardown.stop_gathering()
        if status != OK:
            raise error_for(status, last_message(self._api))
        return gathering

    async def areset(self, scope: Scope) -> None:
        """``reset(scope)`` awaiting async teardowns (async generator factories, ``async def``
        ``close=``) on the running loop, as ``aclose`` does for ``close``: returns once every
        teardown ran."""
        gathering = self._reset(scope, True)
        if gathering.queue:
            await teardown.run_queued(gathering)
        if gathering.errors:
            raise TeardownError(gathering.errors)

    def validate(self) -> None:
        """Checks the declared graph without running a factory.

        Raises, for the first kind found, ``NotFoundError`` (missing keys), ``CycleError``
        (constructor cycles), ``RetainCycleError`` (a declared strong completion target, or a
        ``tether.lazy`` dependency on what holds the dependent, closing a cycle), ``ArgumentMismatchError`` (a dependency on a key with runtime arguments) or
        ``CaptiveDependencyError`` (a singleton holding a shorter-lived key); the message is the
        report, one problem per line (also as the list ``error.problems``), each fix in Python's terms
        where the library gives its parts.
        """
        status = self._api.tether_validate(self.handle)
        if status != OK:
            error = error_for(status, messages.validate_report(self._api))
            error.problems = [line for line in error.message.splitlines() if line.strip()]  # type: ignore[attr-defined]
            raise error

    def to_dot(self) -> str:
        """The declared graph as Graphviz DOT (render with ``dot -Tsvg``)."""
        out = c_void_p()
        status = self._api.tether_export_dot(self.handle, byref(out))
        if status != OK:
            raise error_for(status, last_message(self._api))
        try:
            return ctypes.string_at(out.value or 0).decode("utf-8")
        finally:
            self._api.tether_string_free(out.value)

    def provider(self, key: Key) -> Any:
        """A C function pointer ``void *(*)(void)`` resolving ``key`` (``tether_make_provider``)."""
        from .provider import Provider

        return Provider._make(self, encode_key(key))


# library calls that may run factories (``_state.here``: one on a thread's stack means it constructs)
_state.constructing_calls.update(
    {Container.resolve_all.__code__, Container._through_library.__code__, Container._resolve_args.__code__})
