"""One Python registration: its declared C slots and the ctypes trampolines the library calls.

The factory trampoline turns C arguments into Python ones (instances, weak references, lazy
callables, runtime arguments), calls the Python factory, and hands the result to C as a pointer
(see ``objects``). An exception is parked in the thread state, its text given to
``tether_set_error``, and NULL returned; ``Container.resolve`` raises it as ``FactoryError``'s
``__cause__`` once the library has torn the graph down. Completion trampolines do the same
with a status.

The trampolines live exactly as long as the registration: replacing the key or closing the
container retires them (freed at once, or when the resolves running at that moment return).
"""

from __future__ import annotations

import weakref
from ctypes import CFUNCTYPE, byref, c_char_p, c_double, c_int64, c_size_t, c_void_p
from typing import Any, Callable, Sequence

from . import _state, aio, object_table, teardown
from ._cabi import (
    COMPLETE_ARGS_FN,
    COMPLETE_FN,
    DEFER_DROP,
    E_FACTORY_FAILED,
    E_RETAIN_CYCLE,
    OK,
    OPTIONS_CALLBACKS,
    PARAM_ALL,
    PARAM_DEP,
    PARAM_F64,
    PARAM_FACTORY,
    PARAM_I64,
    PARAM_LAZY,
    PARAM_PTR,
    PARAM_RESOLVER,
    PARAM_STR,
    PARAM_WEAK,
    PARAM_WEAK_LAZY,
    Api,
    CompletionEntry,
    Param,
    REVIVE_FN,
    RegistrationOptions,
    list_items,
)
from .completion import Completion
from .errors import FactoryReturnedNone, RetainCycleError, error_for
from .messages import last_message
from .lazy import Factory, Lazy, WeakLazy
from .lazy import watch as watch_lazy
from .native_refs import weak_callable
from .resolver import native_via_resolver, resolver_for
from .scope import Scope
from .parameters import Parameters

#: Non-empty while an ``aresolve`` attempt runs the library's resolve (see ``aio``): factory and
#: completion calls then go through ``aio.call``/``aio.call_callback``, which remember them
attempting = aio.attempting
call = aio.call

_ARGTYPES = {
    PARAM_DEP: c_void_p,
    PARAM_WEAK: c_void_p,
    PARAM_LAZY: c_void_p,
    PARAM_WEAK_LAZY: c_void_p,
    PARAM_I64: c_int64,
    PARAM_F64: c_double,
    PARAM_STR: c_char_p,
    PARAM_PTR: c_void_p,
    PARAM_ALL: c_void_p,
    PARAM_FACTORY: c_void_p,
}


def reason(exc: BaseException) -> bytes:
    """What a failing factory tells the library (``tether_set_error``): the exception, as text."""
    text = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
    return text.replace("\0", "\\0").encode("utf-8", "replace")


def fail(api: Api, exc: BaseException) -> None:
    """Parks ``exc`` for the resolve that is unwinding and tells the library why; what the
    failing call's frames held is let go of first (``_state.let_go``), before the library destroys
    what the resolve made."""
    _state.let_go(exc)
    _state.park(exc)
    try:
        api.tether_set_error(reason(exc))
    except Exception:
        pass


def failed_status(exc: BaseException) -> int:
    """What a failed completion callback returns: the status of the library's own refusal it let
    through (a retain cycle stays a retain cycle: one status per kind), else FACTORY_FAILED."""
    return E_RETAIN_CYCLE if isinstance(exc, RetainCycleError) else E_FACTORY_FAILED


#: A registration's ``tether_register_ex`` arguments other than its key and functions, by its slots,
#: scope and drop's id (see ``_arguments``): the library only reads them during the call, so registrations
#: of the same declaration without callbacks share them
_static: dict[tuple[Any, ...], tuple[bool, Any, Any, RegistrationOptions]] = {}


def _arguments(slots: tuple[Any, ...], scope: Scope, drop: Any, callback_count: int) -> tuple[bool, Any, Any, RegistrationOptions]:
    """Whether a registration of ``slots`` has a hidden resolver slot, the ctypes type of its factory
    trampoline, its ``tether_param`` array and its options (see ``Registration.install``)."""
    # with dependencies, a hidden resolver slot first: to take handles on native ones
    hidden_resolver = any(slot.kind in (PARAM_DEP, PARAM_ALL) for slot in slots)
    params = [Param(PARAM_RESOLVER, None)] if hidden_resolver else []
    params += [Param(slot.kind, slot.key.encode("utf-8") if slot.key else None) for slot in slots]
    argtypes = ([c_void_p] if hidden_resolver else []) + [_ARGTYPES[slot.kind] for slot in slots]
    # DEFER_DROP: Container.resolve runs the drops itself (object_table.run_drops), no callback;
    # the callbacks of both forms in one list, so they run in the order given
    options = RegistrationOptions(scope=int(scope), flags=DEFER_DROP | OPTIONS_CALLBACKS, drop=drop,
                                  callback_count=callback_count)
    return hidden_resolver, CFUNCTYPE(c_void_p, *argtypes), (Param * len(params))(*params), options



#: ``_simple_trampoline``'s code by (dependency count, fresh), generated once per shape.
_trampoline_makers: dict[tuple[int, bool], Callable[..., Callable[..., int | None]]] = {}
TRAMPOLINE_FILE = "<tether simple trampoline>"


def _trampoline_maker(count: int, fresh: bool) -> Callable[..., Callable[..., int | None]]:
    """A function taking ``_simple_trampoline``'s names that returns the trampoline for ``count``
    dependencies: each dependency from ``fresh_of`` (else ``dep``), the factory called with them
    (through ``call`` while ``attempting``), its result boxed (``fresh``: kept in ``object_table._fresh``).
    Generated rather than written out per count: one text, no per-call loop or argument list."""
    maker = _trampoline_makers.get((count, fresh))
    if maker is not None:
        return maker
    ds = [f"d{i}" for i in range(1, count + 1)]
    params = ", ".join(["resolver"] + [f"p{i}" for i in range(1, count + 1)]) if count else ""
    arguments = ", ".join(ds)
    lines = ["def make(api, factory, fresh_of, dep, fail, call, attempting, plain, setdefault, counted,",
             "         returned_none, fresh):",
             f"    def trampoline({params}):",
             "        try:"]
    for i, d in enumerate(ds, 1):
        lines += [f"            {d} = fresh_of(p{i})", f"            if {d} is None:", f"                {d} = dep(p{i}, resolver)"]
    lines.append(f"            obj = call(factory, ({arguments}{',' if count == 1 else ''})) if attempting else factory({arguments})")
    if fresh:
        lines += ["            ptr = id(obj)", "            fresh[ptr] = obj", "            return ptr"]
    else:
        lines += ["            if type(obj) in plain:",
                  "                cell = (obj,)",
                  "                ptr = id(obj)",
                  "                if setdefault(ptr, cell) is cell:",
                  "                    return ptr",
                  "            elif obj is None:",
                  "                raise returned_none()",
                  "            return counted(obj)"]
    held = " = ".join(["obj"] + ([] if fresh else ["cell"]) + ds)
    lines += ["        except BaseException as exc:",
              f"            {held} = None  # held no longer (`_state.let_go`)",
              "            fail(api, exc)",
              "            return None",
              "    return trampoline"]
    namespace: dict[str, Any] = {}
    exec(compile("\n".join(lines), TRAMPOLINE_FILE, "exec"), namespace)
    maker = _trampoline_makers[(count, fresh)] = namespace["make"]
    return maker


class Registration:
    """The Python side of one ``tether_register`` in one container."""

    __slots__ = (
        "api",
        "container",
        "name",
        "raw",
        "factory",
        "plan",
        "scope",
        "handle",
        "callables",
        "last",
        "cached",
        "arg_kinds",
        "fresh",
        "completions",
        "callbacks",
        "has_teardown",
        "declaration",
        "__weakref__",
    )

    def __init__(self, container: Any, name: str, factory: Callable[..., Any], plan: Parameters, scope: Scope,
                 has_teardown: bool = False) -> None:
        self.api: Api = container._api
        self.container = weakref.ref(container)
        self.name = name
        self.raw = name.encode("utf-8")
        self.factory: Callable[..., Any] | None = factory
        self.plan = plan
        self.scope = scope
        self.handle: int | None = None
        self.callables: list[Any] = []  # ctypes callbacks C may call: kept exactly while registered
        self.last: Callable[[], Any] | None = None  # WEAK scope: the newest object, weakly (``_revive``)
        # SINGLETON scope: the cached object's cell, held here rather than by the objects table,
        # so the garbage collector sees container -> singleton (see object_table.Owned; emptied once
        # the library drops the object, even when C code reset it)
        self.cached: object_table.Owned | None = None
        self.arg_kinds = [slot.arg for slot in plan.slots if slot.arg is not None]
        # every instance a new plain object, in its own box: the fast destructor, no retain checks
        self.fresh = not scope.shared and object_table.fresh_class(factory) and not has_teardown
        # the factory notes a teardown per instance (see teardown): its drop runs it
        self.has_teardown = has_teardown
        # its completion callbacks when all are declared (a plan replay runs them), else None
        self.completions: tuple[Completion, ...] | None = ()
        # all its completion callbacks, both forms, in order (a plan replay runs resolver-form ones too)
        self.callbacks: tuple[Callable[[Any, Any], Any] | Completion, ...] = ()
        self.declaration: tuple[Any, ...] | None = None  # see declared

    def declared(self) -> tuple[Any, ...]:
        """What a plan replay takes of this registration besides its callables (see ``executor.prepare``):
        another registration with the same declaration runs in the same prepared plan."""
        declaration = self.declaration
        if declaration is None:
            declaration = self.declaration = (
                self.scope, self.has_teardown, self.fresh, tuple(self.plan.slots), tuple(self.plan.names),
                tuple(tuple((dep.kind, dep.name) for dep in fn.deps) if isinstance(fn, Completion) else None
                      for fn in self.callbacks))
        return declaration

    def install(self, handle: int, callbacks: Sequence[Callable[[Any, Any], Any] | Completion],
                mode: int = 0) -> None:
        """Declares the registration to the library in container ``handle``.

        One ``tether_register_ex`` call: scope, destructor and completion callbacks are set before
        the registration becomes visible, so a resolve on another thread sees it whole or not at all.
        """
        api = self.api
        drop = teardown.DROP if self.has_teardown else object_table.DROP_FAST if self.fresh else object_table.DROP
        declared_as = (tuple(self.plan.slots), self.scope, id(drop))  # (the drops are the module's, for good)
        static = None if callbacks else _static.get(declared_as)
        if static is None:
            static = _arguments(declared_as[0], self.scope, drop, len(callbacks))
            if not callbacks and len(_static) < 256:
                _static[declared_as] = static
        hidden_resolver, function_type, array, options = static
        trampoline = function_type(self._factory_trampoline(hidden_resolver))
        if callbacks:
            entries = [self._completion_entry(fn, index) for index, fn in enumerate(callbacks)]
            self.callables += [trampoline, *(entry.fn or entry.args_fn for entry in entries)]
            options.callbacks = (CompletionEntry * len(entries))(*entries)
            declared = [fn for fn in callbacks if isinstance(fn, Completion)]
            self.completions = tuple(declared) if len(declared) == len(callbacks) else None
            self.callbacks = tuple(callbacks)
        else:
            self.callables.append(trampoline)
        if mode:  # OVERRIDE or DECORATE (Container.override, decorate): the shared options stay as they are
            options = RegistrationOptions.from_buffer_copy(options)
            options.flags |= mode
        out = c_void_p()
        # the C function pointer, as tether_fn (a void * argument takes a ctypes function as its address)
        status = api.tether_register_ex(handle, self.raw, trampoline, array, len(array), byref(options), byref(out))
        if status != OK:
            raise error_for(status, last_message(api))
        self.handle = out.value
        if self.scope.kept_weakly:  # the library hands the object out again while Python holds it
            revive = REVIVE_FN(self._revive)
            self.callables.append(revive)
            api.tether_registration_revive(self.handle, revive, None)

    # -- the factory ------------------------------------------------------------------

    def _factory_trampoline(self, hidden_resolver: bool) -> Callable[..., int | None]:
        api = self.api
        slots = self.plan.slots
        npos = self.plan.npos
        names = self.plan.names
        factory = self.factory
        assert factory is not None
        weak_scope = self.scope.kept_weakly
        singleton = self.scope.kept_strongly
        simple = all(slot.kind == PARAM_DEP for slot in slots) and not names
        retain = object_table.retain
        fresh_of = object_table.fresh_of
        fresh = object_table._fresh if self.fresh else None

        if simple and not weak_scope and not singleton:
            return self._simple_trampoline(len(slots))

        def trampoline(*cargs: Any) -> int | None:
            try:
                resolver = cargs[0] if hidden_resolver else None
                if hidden_resolver:
                    cargs = cargs[1:]
                if simple:
                    args = [fresh_of(p) for p in cargs]
                    if None in args:
                        args = [self._dep(p, resolver) if a is None else a for p, a in zip(cargs, args)]
                    obj = call(factory, args) if attempting else factory(*args)
                else:
                    args = self._convert(cargs, resolver)
                    if names:
                        kwargs = dict(zip(names, args[npos:]))
                        obj = call(factory, args[:npos], kwargs) if attempting else factory(*args[:npos], **kwargs)
                    else:
                        obj = call(factory, args) if attempting else factory(*args)
                if obj is None:
                    raise self._returned_none()
                if singleton:
                    ptr, cell = object_table.retain_owned(obj)
                    if cell is not None:
                        # a cell still here is one the library no longer caches (the key was
                        # re-registered or reset meanwhile): the table must hold that object now
                        # (a resolve that fails destroys it: its drop empties the cell, which then
                        # reads as nothing cached; no rollback of Python's own)
                        stale, self.cached = self.cached, cell
                        object_table.disown(stale)
                        if self.handle is None:  # replaced while this resolve ran: not cached in C
                            self.drop_cached()
                    return ptr
                if fresh is not None:  # a fresh_class factory with other slots: DROP_FAST's table
                    ptr = id(obj)
                    fresh[ptr] = obj
                    return ptr
                ptr = retain(obj)
                if weak_scope:  # what the library may ask for again (``_revive``)
                    try:
                        self.last = weakref.ref(obj)
                    except TypeError:  # no weak references: reused only while C holds it
                        self.last = None
                return ptr
            except BaseException as exc:
                args = kwargs = obj = reused = cell = None  # held no longer (`_state.let_go`)
                fail(api, exc)
                return None

        return trampoline

    def _revive(self, _context: int | None, instance: int | None) -> int | None:
        """The library's question for this WEAK-scoped registration (``tether_registration_revive``):
        ``instance`` again (as a factory's result) if it is the object Python still holds, else None.
        The library decides when and which: its last published instance, dead as a box only."""
        obj = self.last() if self.last is not None else None
        if obj is None or object_table.pointer_of(obj) != instance:
            return None
        return object_table.retain(obj)

    def _dep(self, ptr: int | None, resolver: int | None) -> Any:
        """A strong dependency that is not in ``object_table._fresh``: another Python box (fast, counted
        or a container's singleton) or a native instance (a ``NativeRef`` of Python's own)."""
        cell = object_table.box_of(ptr)
        if cell is not None:
            return cell[0]
        obj = object_table.lookup(ptr or 0, object_table.MISSING)
        if obj is object_table.MISSING:
            assert resolver is not None
            obj = native_via_resolver(self.api, resolver, ptr or 0)
        return obj

    def _list_item(self, address: int, resolver: int | None) -> Any:
        """An item of an ALL slot's list, as a DEP slot's instance is converted."""
        obj = object_table.lookup(address, object_table.MISSING)
        if obj is object_table.MISSING:
            assert resolver is not None
            obj = native_via_resolver(self.api, resolver, address)
        return obj

    def _simple_trampoline(self, count: int) -> Callable[..., int | None]:
        """The factory trampoline of the common shape: ``count`` strong dependencies, transient or
        graph scope. It does per call only what the general one would: the dependencies from the
        lock-free tables (else ``_dep``), the factory, then ``object_table.retain`` inlined (a plain
        object's first box: a new cell that ``setdefault`` takes; else ``retain_counted``); for a
        ``fresh_class`` factory (``self.fresh``: its result a new plain object, never None) stored in
        ``object_table._fresh`` without checks (``DROP_FAST`` takes it back). Written out per count
        by ``_trampoline_maker``."""
        factory = self.factory
        assert factory is not None
        return _trampoline_maker(count, self.fresh)(
            api=self.api, factory=factory, fresh_of=object_table.fresh_of, dep=self._dep, fail=fail,
            call=call, attempting=attempting, plain=object_table.plain,
            setdefault=object_table._boxes.setdefault, counted=object_table.retain_counted,
            returned_none=self._returned_none, fresh=object_table._fresh)

    def _returned_none(self) -> ValueError:
        return FactoryReturnedNone(f"the factory for {self.name!r} returned None; return the instance (raise to fail)")

    def _release_weak_slots(self, cargs: Sequence[Any], start: int) -> None:
        """Releases the weak and factory handles of slots ``start``... (the factory owns them, even unused)."""
        for slot, value in zip(self.plan.slots[start:], cargs[start:]):
            if slot.kind == PARAM_WEAK and value:
                self.api.tether_weak_release(value)
            elif slot.kind == PARAM_FACTORY and value:
                self.api.tether_factory_release(value)

    def _slot_container(self, provider: int | None, factory: int | None) -> Any:
        """The container a lazy slot's ``provider`` or a factory slot's handle resolves from, as the
        library binds it (``slot_container``: a singleton from further up resolves its slots in its
        own container): this thread's resolving container or one of its parents."""
        frames = _state.tls.frames
        top = frames[-1][0] if frames else self.container()
        parent = getattr(top, "_parent", None)
        if parent is None:  # a root: nothing further up
            return top
        chain: list[Any] = []
        container = top
        while container is not None:
            if container._handle is not None:  # (a child without a C container answers as its parent)
                chain.append(container)
            container = container._parent
        handles = (c_void_p * len(chain))(*(c._handle for c in chain))
        index = c_size_t(len(chain))
        if self.api.tether_slot_container(provider, factory, handles, len(chain), byref(index)) != OK:
            return top
        found = index.value
        if found >= len(chain) or (found == 0 and top._handle is None):
            return top  # (not in the chain, or the C container the child resolves through)
        return chain[found]

    def _convert(self, cargs: Sequence[Any], resolver: int | None) -> list[Any]:
        api = self.api
        args: list[Any] = []
        index = 0
        try:
            for index, (slot, value) in enumerate(zip(self.plan.slots, cargs)):
                kind = slot.kind
                if kind == PARAM_DEP:
                    obj = object_table.lookup(value or 0, object_table.MISSING)
                    if obj is object_table.MISSING:
                        assert resolver is not None
                        obj = native_via_resolver(api, resolver, value or 0)
                elif kind == PARAM_WEAK:
                    obj = weak_callable(api, value or 0)
                elif kind == PARAM_FACTORY:  # a Python callable instead (see lazy.py); the C handle is let go of
                    assert slot.key is not None
                    try:
                        container = self._slot_container(None, value)
                    finally:
                        api.tether_factory_release(value)
                    obj = Factory(container, slot.key)
                elif kind == PARAM_LAZY or kind == PARAM_WEAK_LAZY:
                    assert slot.key is not None
                    obj = (Lazy if kind == PARAM_LAZY else WeakLazy)(self._slot_container(value, None), slot.key)
                    watch_lazy(api, obj, value)  # the library answers from this graph
                elif kind == PARAM_ALL:
                    obj = [self._list_item(address, resolver) for address in list_items(value)]
                elif kind == PARAM_I64:
                    obj = bool(value) if slot.arg == "bool" else value
                elif kind == PARAM_STR:
                    obj = value.decode("utf-8") if slot.arg == "str" and value is not None else value
                elif kind == PARAM_PTR and slot.arg == "object":
                    obj = object_table.lookup(value or 0, value)
                else:  # F64, raw pointer
                    obj = value
                args.append(obj)
        except BaseException:
            self._release_weak_slots(cargs, index + 1)
            raise
        return args

    # -- completion callbacks ---------------------------------------------------------

    def _completion_entry(self, callback: Callable[[Any, Any], Any] | Completion, index: int) -> CompletionEntry:
        """The ``tether_completion`` of callback ``index``, its trampoline and targets kept by the entry."""
        if not isinstance(callback, Completion):
            return CompletionEntry(fn=COMPLETE_FN(self._complete_trampoline(callback, index)))
        params = (Param * len(callback.deps))(*(Param(dep.kind, dep.name.encode("utf-8")) for dep in callback.deps))
        fn = COMPLETE_ARGS_FN(self._declared_trampoline(callback, index))
        return CompletionEntry(args_fn=fn, params=params, param_count=len(callback.deps))

    def _declared_trampoline(self, completion: Completion, index: int) -> Callable[..., int]:
        """Calls ``completion.fn(instance, *targets)``: a DEP target as its object, a WEAK one (an
        owned weak handle) as ``weak_callable`` makes it, the weak handles released on any path."""
        api = self.api
        fresh_of = object_table.fresh_of
        callback = completion.fn
        weak = [dep.kind == PARAM_WEAK for dep in completion.deps]
        name = self.name

        def release_from(args: Any, start: int) -> None:
            for i in range(start, len(weak)):
                if weak[i] and args[i]:
                    api.tether_weak_release(args[i])

        def complete(instance: int | None, args: Any, _count: int, _context: int | None) -> int:
            converted = 0
            try:
                obj = fresh_of(instance)
                if obj is None:
                    obj = self._completed_object(instance, index)
                targets = []
                for i, is_weak in enumerate(weak):
                    converted = i + 1  # weak_callable owns the handle from here, even when it raises
                    if is_weak:
                        targets.append(weak_callable(api, args[i] or 0))
                    else:
                        target = object_table.lookup(args[i] or 0, object_table.MISSING)
                        if target is object_table.MISSING:
                            raise TypeError(f"completion callback #{index + 1} of {name!r}: its target "
                                            f"{completion.deps[i].name!r} is a native instance; take it with a "
                                            "resolver-form callback (r.get) or declare it tether.weak")
                        targets.append(target)
                if attempting:
                    aio.call_callback(callback, obj, *targets)
                else:
                    callback(obj, *targets)
                return OK
            except BaseException as exc:
                release_from(args, converted)
                obj = targets = target = None  # held no longer (`_state.let_go`)
                fail(api, exc)
                return failed_status(exc)

        return complete

    def _completed_object(self, instance: int | None, index: int) -> Any:
        """The Python object callback ``index`` completes, when it is not in the fresh table."""
        obj = object_table.lookup(instance or 0, object_table.MISSING)
        if obj is object_table.MISSING:
            raise RuntimeError(f"completion callback #{index + 1} of {self.name!r}: unknown instance")
        return obj

    def _complete_trampoline(self, callback: Callable[[Any, Any], Any], index: int) -> Callable[..., int]:
        api = self.api
        fresh_of = object_table.fresh_of
        make_resolver = resolver_for(api)

        def complete(resolver: int | None, instance: int | None, _context: int | None) -> int:
            try:
                obj = fresh_of(instance)
                r = make_resolver()
                r._handle = resolver or 0
                obj = obj if obj is not None else self._completed_object(instance, index)
                if attempting:
                    aio.call_callback(callback, None, r, obj)
                else:
                    callback(r, obj)
                return OK
            except BaseException as exc:
                obj = r = None  # held no longer (`_state.let_go`)
                fail(api, exc)
                return failed_status(exc)

        return complete

    def drop_cached(self) -> None:
        """The container lets go of its singleton (before the library does: see object_table.disown)."""
        cell, self.cached = self.cached, None
        object_table.disown(cell)

    def retire(self) -> None:
        """Forgets the C registration; its trampolines go when no resolve that may use them runs."""
        self.handle = None
        self.drop_cached()
        self.last = None
        self.factory = None  # stale lookups may still point here: hold nothing of the user's
        _state.retire(self.callables)
