"""``Container``: registrations and cached instances, the Python face of ``tether_container``."""

from __future__ import annotations

import ctypes
import operator
import os
from ctypes import byref, c_size_t, c_uint32, c_void_p
from typing import Any, Callable, Sequence, TypeVar, Union, overload

from . import _loader, _state, hits, messages, native, objects, plans, tracing
from ._native import E_BUFFER_TOO_SMALL, E_WOULD_BLOCK, OK, RESOLVE_HELD, RESOLVE_NO_WAIT, collect_buffer
from .arguments import to_values
from .completion import Completion
from .errors import InvalidArgumentError, InvalidHandleError, error_for
from .markers import Key, encode_key, key_name
from .messages import last_message
from .registration import Registration
from .scope import Scope
from .slots import from_deps, infer
from .tracing import TraceEvent

T = TypeVar("T")
F = TypeVar("F", bound=Callable[..., Any])
#: A completion callback: ``(resolver, instance)``, or one with declared targets (``tether.complete``).
Callback = Union[Callable[[Any, Any], Any], Completion]

_UNSET: Any = object()
_key_ids: dict[bytes, int] = {}  # interned ids are process-wide
_fresh_of = objects.fresh_of
_box_of = objects.box_of
_owned_get = objects._owned.get
_tls = _state.tls
run_drops = objects.run_drops
_drop_views = objects.DROP_VIEWS
_results = operator.itemgetter(2, 3, 4)  # tether_collect's count, instance, out
_fresh_pop = objects._fresh.pop
_generation = _state.generation
_retired = _state.retired
_NO_WAIT_HELD = RESOLVE_NO_WAIT | RESOLVE_HELD
_MISS = plans.MISS
_BUSY = plans.BUSY
#: The version word of a closed container (or one the library gave none): its value is above
#: any real configuration, so no described plan is valid against it.
_NO_VERSION = c_size_t(2**64 - 1)
#: A lookup entry: (interned id, WEAK/SINGLETON registration or None, replay builder or singleton
#: hit (see hits) or None).
Entry = tuple["int | c_uint32", "Registration | None", "Callable[[], Any] | None"]


def _check_scope(scope: object) -> Scope:
    if isinstance(scope, Scope):
        return scope
    if isinstance(scope, int) and not isinstance(scope, bool):
        if scope in Scope._value2member_map_:
            return Scope(scope)
        raise ValueError(f"scope {scope} is not a tether.Scope (GRAPH, TRANSIENT, SINGLETON, WEAK)")
    raise TypeError(f"scope must be a tether.Scope, not {type(scope).__name__}")


def _check_callbacks(on_complete: object, what: str) -> list[Callback]:
    if on_complete is None:
        return []
    if callable(on_complete) or isinstance(on_complete, Completion):
        return [on_complete]
    if isinstance(on_complete, (list, tuple)) and all(callable(fn) or isinstance(fn, Completion) for fn in on_complete):
        return list(on_complete)
    raise TypeError(f"{what}: on_complete must be a callable (resolver, instance), a tether.complete(...), or a list of them")


class Container:
    """Registrations and cached instances; optionally the child of ``parent``.

    Use as a context manager (``with tether.Container() as c:``) or call ``close()``; a container
    that is garbage-collected is closed then. ``handle`` is the ``tether_container *`` as an int,
    for C code that registers into or resolves from the same container.
    """

    def __init__(self, parent: Container | None = None) -> None:
        if parent is not None and not isinstance(parent, Container):
            raise TypeError(f"parent must be a tether.Container, not {type(parent).__name__}")
        self._handle: int | None = None
        self._handle_arg: c_void_p | None = None
        self._lookups: dict[object, Entry] = {}
        self._lookups_generation = -1
        self._api = _loader.api()
        self._parent = parent
        self._regs: dict[bytes, Registration] = {}
        self._children = 0
        self._close_when_childless = False
        self._traced = False
        self._trace_hooks: list[Any] = []
        out = c_void_p()
        status = self._api.tether_container_new(parent.handle if parent is not None else None, byref(out))
        if status != OK:
            raise error_for(status, last_message(self._api))
        self._handle = out.value
        self._handle_arg = c_void_p(out.value)
        # Read per replayed resolve (see plans): this container's version word, then its parents'
        words = self._version_words(self._api.tether_container_versions)
        self._word, self._parent_words = words[0], words[1:]
        # Read per singleton hit served here (see hits): the cache words of the same containers
        self._cache_words = self._version_words(self._api.tether_container_cache_versions)
        # With nothing registered here, resolves build what the parent's build (the library replays
        # the parent's plans for them): the parent's prepared plans serve (see _prepared_plan)
        self._created_word = self._word.value
        self._replays = os.environ.get("TETHER_NO_PLANS") != "1"  # as the library decided, just now
        self._prepared: dict[int, tuple[int, plans.Prepared | None]] = {}
        self._hot_resolve = self._api.hot_resolve_key_instance
        self._gil_collect = self._api.gil_resolve_key_collect
        self._ref_release = self._api.tether_ref_release  # with argtypes: takes the handle as an int
        if parent is not None:
            parent._children += 1

    def _version_words(self, which: Callable[..., int]) -> tuple[c_size_t, ...]:
        """The words ``which`` gives for this container and its parents (``tether_container_versions``
        or ``tether_container_cache_versions``), as ctypes views read without a call;
        ``(_NO_VERSION,)`` if the library has none to give."""
        cap = 8
        for _ in range(4):
            words = (c_void_p * cap)()
            count = c_size_t()
            status = which(self._handle, words, cap, byref(count))
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
        if self._handle is None:
            raise InvalidHandleError("the container is closed")
        return self._handle

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

    @property
    def closed(self) -> bool:
        return self._handle is None

    def close(self) -> None:
        """Frees the container: cached singletons are released, registrations forgotten.

        Instances still held (by Python, handles or edges) live on. Idempotent. Raises
        ``InvalidArgumentError`` while child containers are open (close them first).
        """
        if self._handle is None:
            return
        if self._children:  # the library would refuse: keep the singletons where they are
            raise InvalidArgumentError(
                f"close: the container still has {self._children} open child container(s); close them first"
            )
        for reg in list(self._regs.values()):
            reg.drop_cached()  # before the library releases them (and this may run inside the GC)
        # no replay, and no singleton hit kept, from a closed container
        self._word, self._parent_words, self._cache_words = _NO_VERSION, (), (_NO_VERSION,)
        self._lookups.clear()
        self._prepared.clear()
        status = self._api.tether_container_free(self._handle)
        if status != OK:
            raise error_for(status, last_message(self._api))
        self._handle = self._handle_arg = None
        if self._regs:  # other containers' lookups may name them (a child per request has none)
            _state.bump_generation()
        for reg in list(self._regs.values()):
            reg.retire()
        self._regs.clear()
        parent = self._parent
        if parent is not None:
            parent._children -= 1
            if parent._close_when_childless and parent._children == 0:
                parent._close_quietly()

    def _close_quietly(self) -> None:
        try:
            self.close()
        except InvalidArgumentError:  # children still open: the last one to close closes us
            self._close_when_childless = True
        except Exception:
            pass

    def __enter__(self) -> Container:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __del__(self) -> None:
        if getattr(self, "_handle", None) is not None:
            self._close_quietly()

    def __repr__(self) -> str:
        state = "closed" if self._handle is None else f"0x{self._handle:x}"
        return f"<tether.Container {state}, {len(self._regs)} Python registrations>"

    # -- registering ------------------------------------------------------------------

    @overload
    def register(self, key_or_class: type[T], factory: None = None, *, deps: Sequence[object] = (),
                 scope: Scope = Scope.GRAPH, on_complete: Callback | Sequence[Callback] | None = None) -> type[T]: ...
    @overload
    def register(self, key_or_class: Key, factory: F, *, deps: Sequence[object] = (),
                 scope: Scope = Scope.GRAPH, on_complete: Callback | Sequence[Callback] | None = None) -> F: ...
    @overload
    def register(self, key_or_class: str = ..., factory: None = None, *, deps: Sequence[object] = (),
                 scope: Scope = Scope.GRAPH, on_complete: Callback | Sequence[Callback] | None = None) -> Callable[[F], F]: ...

    def register(self, key_or_class: Any = _UNSET, factory: Any = None, *, deps: Sequence[object] = (),
                 scope: Scope = Scope.GRAPH, on_complete: Any = None) -> Any:
        """Registers a factory (or a class, autowired) under a key; also a decorator.

        - ``register("K", factory, deps=[...])``: ``factory(*deps)`` makes K's instances.
        - ``register(Service)``: the class is its own key and factory; ``__init__`` parameters are
          autowired from type hints (see ``tether.slots``). Returns the class: usable as ``@c.register``.
        - ``@c.register("K", deps=[...])`` / ``@c.register(scope=Scope.SINGLETON)`` decorate a factory
          or a class; a decorated function whose return annotation is a class is registered under
          that class.
        - ``on_complete``: a callable ``(resolver, instance)``, a ``tether.complete(fn, deps=[...])``
          (``fn(instance, *targets)``, targets declared: see ``tether.completion``), or a list of
          them, run in that order after every factory of the resolve returned (where cycles are
          closed: ``r.get(K)``, ``r.weak(K)``, or a declared ``tether.weak(K)``).
        Re-registering a key replaces the registration. Wrong use raises TypeError/ValueError here.
        """
        checked_scope = _check_scope(scope)
        if key_or_class is _UNSET or (factory is None and isinstance(key_or_class, str)):
            key = key_or_class

            def decorate(target: Any) -> Any:
                self._register_target(target if key is _UNSET else key, target, deps, checked_scope, on_complete)
                return target

            return decorate
        if factory is None:
            self._register_target(key_or_class, key_or_class, deps, checked_scope, on_complete)
            return key_or_class
        self._register(key_or_class, factory, deps, checked_scope, on_complete)
        return factory

    def _register_target(self, key: Any, target: Any, deps: Sequence[object], scope: Scope, on_complete: Any) -> None:
        if isinstance(key, type) or isinstance(key, str):
            self._register(key, target, deps, scope, on_complete)
            return
        if callable(key):  # a decorated function: its return annotation names the key
            returns = getattr(key, "__annotations__", {}).get("return")
            if isinstance(returns, type):
                self._register(returns, key, deps, scope, on_complete)
                return
            raise TypeError(
                f"register: cannot tell the key of {key!r}; annotate its return type with a class or "
                f"use @container.register(\"Key\")"
            )
        raise TypeError(f"register: a key is a non-empty str or a class, not {type(key).__name__}")

    def _register(self, key: Key, factory: Any, deps: Sequence[object], scope: Scope, on_complete: Any) -> None:
        name = key_name(key)
        what = f"register({name!r})"
        if not callable(factory):
            raise TypeError(f"{what}: the factory must be callable, not {type(factory).__name__}")
        callbacks = _check_callbacks(on_complete, what)
        plan = from_deps(deps, factory, what) if deps else infer(factory, what)
        reg = Registration(self, name, factory, plan, scope)
        reg.install(self.handle, callbacks)
        old = self._regs.get(reg.raw)
        self._regs[reg.raw] = reg
        _state.bump_generation()
        self._lookups.clear()  # replay builders hold factories: let the replaced one go now
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
            status = self._api.tether_intern(self.handle, raw, byref(out))
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
        try:
            kid, cached_reg, build = self._lookups[key]
            # a builder is valid while its stamp is the configuration, which every registration
            # change in the chain moves: it needs no generation check (see plans; a hit's stamp,
            # the cache words, moves with it: see hits)
            if build is None and self._lookups_generation != _generation[0]:
                raise KeyError(key)
        except (KeyError, TypeError):
            if self._handle_arg is None:
                raise InvalidHandleError("the container is closed") from None
            kid, cached_reg, build = self._lookup(key)
        if build is not None and not args:  # a replayed plain graph or a singleton hit: no call
            result = build()
            if result is not _MISS:
                if result is not _BUSY:
                    return result
            else:
                kid, cached_reg, build = self._lookup(key)  # reconfigured or reset: look again
                if build is not None:
                    result = build()
                    if result is not _MISS and result is not _BUSY:
                        return result
        handle = self._handle_arg
        if handle is None:
            raise InvalidHandleError("the container is closed")
        if args:
            return self._resolve_args(key, kid, args)
        kept = kept_obj = None
        stamp = 0
        if cached_reg is not None:
            published = cached_reg.published
            if published is not None:
                # WEAK scope, still held by Python: the same object, no C call, while the cache word
                # read when it was made (or reused) has not moved: a forget (a reset, from Python or C)
                # moves it; read after the object, as hits do
                obj = published[0]()
                if obj is not None and cached_reg.word.value == published[1] and not self._traced:
                    return obj
            # SINGLETON scope: the cached object, held by this local through the call, is passed as
            # RESOLVE_HELD, so a hit on it needs no handle (another thread may reset it meanwhile);
            # the cache words read before the call date the hit served here from then on (see hits)
            kept = cached_reg.cached
            if kept is not None:
                kept_obj = kept.obj
                if kept_obj is None:  # emptied: the library or the container let go of it
                    kept = None
                else:
                    stamp = hits.stamp(self._cache_words)
        frames, io, words, instance, out = _tls.hot
        if frames:  # nested in a resolve of this thread, whose buffer is in use
            io, words = collect_buffer()
        if kept is not None:
            words[3] = kept.ptr
        frame: list[Any] = [self]  # registrations append what they note (see _state.tls.frames)
        frames.append(frame)
        try:
            # the GIL kept; if that would mean waiting for a lock, the ordinary call (GIL released)
            status = self._gil_collect(handle, kid, RESOLVE_NO_WAIT if kept is None else _NO_WAIT_HELD, io)
            if status == E_WOULD_BLOCK:
                run_drops(words, words[2])
                words[2] = 0
                status = self._hot_resolve(handle, kid, instance, out)
                words[3], words[4] = instance[0] or 0, out[0] or 0
            message = messages.last(self._api) if status else ""
        finally:
            frames.pop()
            if _retired:
                _state.free_retired()
        dropped, address, ref = _results(words)  # read before anything can reuse them
        if status:
            run_drops(words, dropped)
            for made, noted in reversed(frame[1:]):
                made.rollback(noted)
            _state.raise_failure(status, message, frame)
        if len(frame) > 1:
            for made, _noted in frame[1:]:
                made.publish()
        elif kept is not None and address == kept.ptr and not ref and not dropped:
            # the library answered: the published singleton (nothing was made). Served here from
            # now on, while the cache words are the ones read before the call (see hits)
            if self._cache_words[0] is not _NO_VERSION and (key in self._lookups or len(self._lookups) < 1024):
                self._lookups[key] = (kid, cached_reg, hits.hit(kept, self._cache_words, stamp))
            return kept_obj
        # native.adopt, inlined: a Python object comes back as itself, its handle (if the call did
        # not release it) released only after the lookup, which it protects from a concurrent reset
        obj = _fresh_of(address)
        if obj is None and kept is not None and address == kept.ptr:
            obj = kept_obj  # held, but with a handle: not the published singleton, or the retry
        if dropped:  # after the lookup: the result's own drop may be one of them
            fns, instances, fast = _drop_views[dropped - 1]
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

    @staticmethod
    def _released(address: int | None) -> Any:
        """The object of a result the call released (its registration defers drops: a Python one)."""
        obj = objects.lookup(address, objects.MISSING)
        if obj is objects.MISSING:  # another thread upgraded a weak handle to it and dropped it since
            raise InvalidHandleError("the resolved instance was released by another thread before it could be returned")
        return obj

    def _resolve_args(self, key: Key, kid: int | c_uint32, args: tuple[Any, ...]) -> Any:
        """``resolve`` with runtime arguments (``tether_resolve_key_args``)."""
        handle = self._handle_arg
        reg = self._registration(encode_key(key))
        api = self._api
        frames = _tls.frames
        frame: list[Any] = [self]
        frames.append(frame)
        out = c_void_p()
        pinned: Sequence[int] = ()
        try:
            values, pinned = to_values(key_name(key), args, reg.arg_kinds if reg is not None else None)
            status = api.tether_resolve_key_args(handle, kid, values, len(args), out)
            message = messages.last(api) if status else ""
        finally:
            frames.pop()
            if _retired:
                _state.free_retired()
            for ptr in pinned:
                objects.release(ptr)
        if status:
            for made, noted in reversed(frame[1:]):
                made.rollback(noted)
            _state.raise_failure(status, message, frame)
        if len(frame) > 1:
            for made, _noted in frame[1:]:
                made.publish()
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
        """The rest of native.adopt for an owned handle: a counted or owned Python object comes back
        as itself (the handle released), a native instance as a NativeRef owning the handle."""
        obj = objects.lookup(address, objects.MISSING)
        if obj is objects.MISSING:
            return native.NativeRef._adopt(self._api, ref or 0, address or 0)
        self._ref_release(ref)
        return obj

    def _lookup(self, key: Key) -> Entry:
        """The lookup entry of ``key`` (see ``Entry``), cached until any Python registration changes;
        its builder, if any, is valid while the configuration is its stamp."""
        raw = encode_key(key)
        if self._lookups_generation != _state.generation[0]:
            self._lookups.clear()
            self._lookups_generation = _state.generation[0]
        reg = self._registration(raw)
        kid = self._key_id(raw)
        # for the hot call (no argtypes): an int is passed as a C int, the same register as a
        # uint32_t and cheaper to convert than a c_uint32; ids are small, but stay exact above 2**31
        cached = reg is not None and reg.scope in (Scope.WEAK, Scope.SINGLETON)
        build = None
        keep = len(self._lookups) < 1024
        if keep and reg is not None and not cached and self._word is not _NO_VERSION:
            stamp = self._configuration()  # before describing: a change meanwhile makes it stale
            prepared = self._prepared_plan(kid)
            if prepared is not None:
                build = plans.bind(prepared, (self._word, *self._parent_words), stamp)
        entry = (kid if kid < 2**31 else c_uint32(kid), reg if cached else None, build)
        if keep:
            self._lookups[key] = entry
        return entry

    def _prepared_plan(self, kid: int) -> plans.Prepared | None:
        """The plan of ``kid`` from here, prepared (``plans.prepare``): described by the library
        from the nearest container up the chain with anything registered in it, and kept there,
        while its configuration is unchanged, for its children with nothing registered (one per
        request, say: they build the same graph, and the library replays the same plan for them)."""
        owner = self
        while owner._parent is not None and owner._empty():
            owner = owner._parent
        stamp = owner._configuration()  # before describing: a change meanwhile makes it stale
        kept = owner._prepared.get(kid)
        if kept is not None and kept[0] == stamp:
            return kept[1]
        described = plans.describe(self._api, owner.handle, kid)
        prepared = None if described is None else plans.prepare(owner._python_registrations(), *described)
        if owner is not self and len(owner._prepared) < 1024:
            owner._prepared[kid] = (stamp, prepared)
        return prepared

    def _empty(self) -> bool:
        """Nothing registered here, by Python or C (the version word has not moved since), and
        plans on: resolves from here build exactly what the parent's build."""
        return not self._regs and self._replays and self._word.value == self._created_word

    def _python_registrations(self) -> dict[int, Registration]:
        """The Python registrations of this container and its parents, by registration handle."""
        found: dict[int, Registration] = {}
        container: Container | None = self
        while container is not None:
            found.update((reg.handle, reg) for reg in container._regs.values() if reg.handle is not None)
            container = container._parent
        return found

    # -- caches, checks, pictures -----------------------------------------------------

    def reset(self, scope: Scope) -> None:
        """Empties this container's cache of ``scope`` (SINGLETON or WEAK; others: nothing happens).

        After ``reset(Scope.WEAK)`` the next resolve makes new weak-scoped instances even while
        Python still holds the old ones.
        """
        checked = _check_scope(scope)
        handle = self.handle
        for reg in list(self._regs.values()):
            if checked == Scope.WEAK:
                reg.last = reg.published = None
            elif checked == Scope.SINGLETON:
                reg.drop_cached()  # before the library releases them
        status = self._api.tether_reset(handle, int(checked))
        if status != OK:
            raise error_for(status, last_message(self._api))

    def validate(self) -> None:
        """Checks the declared graph without running a factory.

        Raises ``NotFoundError`` (missing keys) or ``CycleError`` (constructor cycles) whose
        message is the report, one problem per line (also as the list ``error.problems``).
        """
        status = self._api.tether_validate(self.handle)
        if status != OK:
            error = error_for(status, last_message(self._api))
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
