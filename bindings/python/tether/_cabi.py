"""The C side of the binding: every type and function of include/tether.h, declared for ctypes.

Nothing here is Pythonic; the rest of the package builds on it. Every function gets its
``argtypes`` and ``restype`` (a missing ``restype = c_void_p`` truncates handles to 32 bits),
and every call through these objects releases the GIL while the library runs.

The resolve hot path also gets the few functions of ``HOT`` a second time, without
``argtypes``: ctypes then skips its per-argument ``from_param`` converters, about 100 ns of a
~300 ns call. Such a function must only be given ctypes objects the caller built (``c_void_p``
for handles, ``byref(...)`` or a ``PointerOut`` for out-parameters) or a key id: a plain int is
passed as a 32-bit C int, which is right for a ``uint32_t`` id below 2**31 (larger ones as
``c_uint32``) and wrong for anything pointer-sized.
"""

from __future__ import annotations

import ctypes
from ctypes import (
    CFUNCTYPE,
    POINTER,
    Structure,
    Union,
    c_char_p,
    c_double,
    c_int,
    c_int64,
    c_size_t,
    c_uint32,
    c_void_p,
)
from typing import Any

# tether_param_kind
# TETHER_BINDING_API_VERSION of the tether_binding.h these declarations mirror.
BINDING_API_VERSION = 18

# scope_traits bits (tether_binding.h's TETHER_SCOPE_TRAIT_*): what the library decides for a scope
SCOPE_TRAIT_SHARED = 0x1
SCOPE_TRAIT_KEPT_STRONGLY = 0x2
SCOPE_TRAIT_KEPT_WEAKLY = 0x4
SCOPE_TRAIT_PER_CONTAINER = 0x8
SCOPE_TRAIT_KEYED_IN_GRAPH = 0x10
SCOPE_TRAIT_OWN_CONTAINER = 0x20

PARAM_DEP = 0
PARAM_WEAK = 1
PARAM_LAZY = 2
PARAM_WEAK_LAZY = 3
PARAM_CONTEXT = 4
PARAM_RESOLVER = 5
PARAM_I64 = 6
PARAM_F64 = 7
PARAM_STR = 8
PARAM_PTR = 9
PARAM_ALL = 10
PARAM_FACTORY = 11

# tether_status (the Python mirror with names is errors.Status)
OK = 0
E_RETAIN_CYCLE = 5
E_FACTORY_FAILED = 6
E_EXPIRED = 8
E_WOULD_BLOCK = 11
E_BUFFER_TOO_SMALL = 12

#: tether_plan_describe inputs that are not a step's index
PLAN_INPUT_CONTEXT = -1
PLAN_INPUT_RESOLVER = -2


def plan_argument(n: int) -> int:
    """TETHER_PLAN_INPUT_ARGUMENT(n): the input of the root's runtime argument ``n``, and back."""
    return -3 - n


#: tether_plan_step.flags: a cached (singleton- or weak-scoped) instance, not a factory call
PLAN_STEP_CACHED = 1
#: ...: the resolving container's value of the step's key (a declared value key), no factory call
PLAN_STEP_VALUE = 2
#: ...: a container-scoped registration, made at most once per resolving container (see executor.ContainerStep)
PLAN_STEP_CONTAINER = 4

#: tether_plan_completion.flags: a resolver-form callback (its resolver answered by tether_plan_keys/_resolver)
PLAN_COMPLETION_RESOLVER = 1
#: tether_plan_resolver flags: a weak edge
PLAN_RESOLVER_WEAK = 1

#: tether_registration_options.flags: drops handed back by tether_resolve_key_collect
DEFER_DROP = 1
#: ...and: its callbacks / callback_count fields are set
OPTIONS_CALLBACKS = 2
OVERRIDE = 4  # tether.h's TETHER_OVERRIDE: the registration overrides its key (tether_override_clear ends it)
DECORATE = 8  # tether.h's TETHER_DECORATE: the registration decorates its key
#: tether_resolve_key_collect flags: fail with E_WOULD_BLOCK instead of waiting for a lock
RESOLVE_NO_WAIT = 1
#: ...and: the tether_collect's instance is one the caller keeps alive (no handle if it is the result)
RESOLVE_HELD = 2
#: ...and: drops past the buffer are kept, in order, for the tether_collect's ``more`` (none run in place)
RESOLVE_MORE_DROPS = 4


class Param(Structure):
    """``tether_param``: one declared factory slot."""

    _fields_ = [("kind", c_int), ("key", c_char_p)]


class TetherList(Structure):
    """``tether_list``: what an ALL slot receives and ``tether_resolve_all`` gives."""

    _fields_ = [("count", c_size_t), ("items", POINTER(c_void_p))]


def list_items(address: int) -> list[int]:
    """The instance addresses of the ``tether_list`` at ``address``, in order."""
    found = TetherList.from_address(address)
    return [found.items[i] or 0 for i in range(found.count)]


class Scalar(Union):
    """``tether_scalar``: the payload of a ``tether_value``."""

    _fields_ = [("i64", c_int64), ("f64", c_double), ("str", c_char_p), ("ptr", c_void_p)]


class Value(Structure):
    """``tether_value``: one runtime argument."""

    _fields_ = [("kind", c_int), ("u", Scalar)]


#: ``void (*)(void *instance, void *context)``
DROP_FN = CFUNCTYPE(None, c_void_p, c_void_p)
#: ``tether_status (*)(tether_resolver *, void *instance, void *context)``
COMPLETE_FN = CFUNCTYPE(c_int, c_void_p, c_void_p, c_void_p)
#: ``tether_status (*)(void *instance, void *const *args, size_t arg_count, void *context)``
COMPLETE_ARGS_FN = CFUNCTYPE(c_int, c_void_p, POINTER(c_void_p), c_size_t, c_void_p)
#: ``void *(*)(void)``: what lazy slots and tether_make_provider hand out
PROVIDER_FN = CFUNCTYPE(c_void_p)
#: ``void (*)(void *context, tether_status status, void *instance)``: tether_provider_watch's
PROVIDER_WATCH_FN = CFUNCTYPE(None, c_void_p, c_int, c_void_p)
#: tether_revive_fn: the pointer asked for again (owned) if the binding still holds its object, or NULL
REVIVE_FN = CFUNCTYPE(c_void_p, c_void_p, c_void_p)


class CompletionEntry(Structure):
    """``tether_completion``: one completion callback, resolver form (``fn``) or declared (``args_fn``)."""

    _fields_ = [
        ("fn", COMPLETE_FN),
        ("args_fn", COMPLETE_ARGS_FN),
        ("params", POINTER(Param)),
        ("param_count", c_size_t),
        ("context", c_void_p),
    ]


class RegistrationOptions(Structure):
    """``tether_registration_options``: what ``tether_register_ex`` sets before publishing."""

    _fields_ = [
        ("scope", c_int),  # tether_scope
        ("flags", c_uint32),  # DEFER_DROP
        ("context", c_void_p),
        ("drop", DROP_FN),  # nullable
        ("completions", POINTER(COMPLETE_FN)),  # completion_count callbacks, in order
        ("completion_contexts", POINTER(c_void_p)),  # nullable, else one per callback
        ("completion_count", c_size_t),
        ("variadic_fixed", c_size_t),
        ("callbacks", POINTER(CompletionEntry)),  # read with OPTIONS_CALLBACKS: either form, in order
        ("callback_count", c_size_t),
    ]


#: tether_fix: which fix a failure's message proposes (``tether_error_parts.fix``)
FIX_NONE = 0
FIX_REGISTER = 1
FIX_BREAK_CYCLE = 2
FIX_WEAK_EDGE = 3
FIX_WEAK_TARGET = 4
FIX_FACTORY = 5
FIX_CALLBACK = 6
FIX_RECURSION = 7
FIX_PROVIDE_VALUE = 8
FIX_UNFINISHED = 9
FIX_WEAK_LAZY = 10
FIX_RUNTIME_ARGUMENTS = 11
FIX_WAIT_CYCLE = 12
FIX_NESTED_RESOLVE = 13
FIX_CALLBACK_LAP = 14


class ErrorParts(Structure):
    """``tether_error_parts``: what the last error's message is composed of."""

    _fields_ = [("status", c_int), ("fix", c_int), ("key", c_char_p), ("target", c_char_p),
                ("path", POINTER(c_char_p)), ("path_count", c_size_t), ("path_omitted", c_size_t),
                ("reason", c_char_p), ("callback_of", c_char_p), ("callback", c_size_t),
                ("nested", POINTER(c_char_p)), ("nested_count", c_size_t), ("nested_in_callback", ctypes.c_uint64)]


class TraceEventC(Structure):
    """``tether_trace_event``: one event a trace hook is told (see ``tracing``)."""

    _fields_ = [("kind", c_int), ("status", c_int), ("key", c_char_p), ("instance", c_void_p), ("target", c_void_p),
                ("target_key", c_char_p)]


class PlanStep(Structure):
    """``tether_plan_step``: one factory call of a described plan."""

    _fields_ = [("registration", c_void_p), ("first_input", c_size_t), ("slot_count", c_size_t), ("parent", ctypes.c_ssize_t),
                ("key", c_uint32), ("flags", c_uint32)]


class PlanCompletion(Structure):
    """``tether_plan_completion``: one completion callback of a described plan."""

    _fields_ = [("step", c_size_t), ("number", c_size_t), ("first_target", c_size_t), ("target_count", c_size_t),
                ("flags", c_size_t)]


class PlanKey(Structure):
    """``tether_plan_key``: a key a described plan's resolver-form callbacks find in the graph."""

    _fields_ = [("key", c_uint32), ("step", c_uint32), ("closes", ctypes.c_uint64)]


_status = c_int
_p = c_void_p
_pp = POINTER(c_void_p)  # pass a c_void_p itself (ctypes passes it by reference): ~170 ns less than byref()

#: name -> (restype, argtypes), in the order of include/tether.h. Handles are c_void_p.
SIGNATURES: dict[str, tuple[Any, list[Any]]] = {
    "tether_version": (c_char_p, []),
    "tether_status_name": (c_char_p, [_status]),
    "tether_last_error": (c_char_p, []),
    "tether_last_status": (_status, []),
    "tether_set_error": (None, [c_char_p]),
    "tether_container_new": (_status, [_p, _pp]),
    "tether_container_free": (_status, [_p]),
    "tether_container_set_strict": (_status, [_p, c_uint32]),
    "tether_register": (_status, [_p, c_char_p, _p, POINTER(Param), c_size_t, _pp]),
    "tether_set_variadic": (_status, [_p, c_size_t]),
    "tether_set_scope": (_status, [_p, c_int]),
    "tether_set_context": (_status, [_p, _p, DROP_FN]),
    "tether_on_complete": (_status, [_p, COMPLETE_FN, _p]),
    "tether_on_complete_params": (_status, [_p, COMPLETE_ARGS_FN, POINTER(Param), c_size_t, _p]),
    "tether_resolve": (_status, [_p, c_char_p, _pp]),
    "tether_resolve_args": (_status, [_p, c_char_p, POINTER(Value), c_size_t, _pp]),
    "tether_intern": (_status, [_p, c_char_p, POINTER(c_uint32)]),
    "tether_resolve_key": (_status, [_p, c_uint32, _pp]),
    "tether_resolve_key_args": (_status, [_p, c_uint32, POINTER(Value), c_size_t, _pp]),
    "tether_ref_get": (c_void_p, [_p]),
    "tether_ref_clone": (_status, [_p, _pp]),
    "tether_ref_release": (_status, [_p]),
    "tether_ref_downgrade": (_status, [_p, _pp]),
    "tether_weak_upgrade": (_status, [_p, _pp]),
    "tether_weak_release": (_status, [_p]),
    "tether_resolver_get": (_status, [_p, c_char_p, _pp]),
    "tether_resolver_get_weak": (_status, [_p, c_char_p, _pp]),
    "tether_factory_call": (_status, [_p, POINTER(Value), c_size_t, _pp]),
    "tether_factory_release": (_status, [_p]),
    "tether_resolve_all": (_status, [_p, c_char_p, _pp, _pp]),
    "tether_make_provider": (_status, [_p, c_char_p, _pp]),
    "tether_provider_free": (_status, [_p]),
    "tether_set_trace": (_status, [_p, c_void_p, _p]),
    "tether_reset": (_status, [_p, c_int]),
    "tether_declare_value": (_status, [_p, c_char_p]),
    "tether_provide_value": (_status, [_p, c_char_p, _p, _p, _p]),
    "tether_override": (_status, [_p, c_char_p, _p, _p, _p]),
    "tether_override_clear": (_status, [_p, c_char_p]),
    "tether_validate": (_status, [_p]),
    "tether_export_dot": (_status, [_p, _pp]),
    "tether_string_free": (None, [_p]),
}


#: The binding protocol's functions (tether_binding.h's ``tether_binding``), in the struct's order:
#: name -> (restype, argtypes); ``Api`` has each as ``tether_<name>``, from tether_binding_open's table.
BINDING: dict[str, tuple[Any, list[Any]]] = {
    "register_ex": (
        _status,
        [_p, c_char_p, _p, POINTER(Param), c_size_t, POINTER(RegistrationOptions), _pp],
    ),
    "registration_revive": (_status, [_p, REVIVE_FN, _p]),
    "resolve_key_instance": (_status, [_p, c_uint32, _pp, _pp]),
    "resolve_key_collect": (_status, [_p, c_uint32, c_uint32, _p]),
    "resolver_get_weak_instance": (_status, [_p, c_char_p, _pp, _pp]),  # out nullable: None
    "resolver_ref": (_status, [_p, _p, _pp]),
    "list_ref": (_status, [_p, c_size_t, _pp]),
    "provider_watch": (_status, [_p, PROVIDER_WATCH_FN, _p]),
    "last_error_parts": (_status, [POINTER(ErrorParts)]),
    "validate_problem_parts": (_status, [c_size_t, POINTER(ErrorParts), POINTER(c_size_t)]),
    "plan_describe": (
        _status,
        [_p, c_uint32, POINTER(PlanStep), c_size_t, POINTER(ctypes.c_int32), c_size_t, POINTER(PlanCompletion), c_size_t,
         POINTER(c_size_t), POINTER(c_size_t), POINTER(c_size_t)],
    ),
    "plan_failure": (_status, [_p, c_uint32, c_size_t, ctypes.c_ssize_t, ctypes.c_char_p]),
    "plan_keys": (_status, [_p, c_uint32, POINTER(PlanKey), c_size_t, POINTER(c_size_t)]),
    "plan_resolver": (_status, [_p, c_uint32, c_size_t, c_uint32, ctypes.c_uint, POINTER(c_size_t), c_size_t]),
    "replay_enter": (_status, [_p, c_uint32, c_size_t]),
    "replay_leave": (_status, []),
    "construct_enter": (_status, [_p, POINTER(c_uint32), c_size_t]),
    "container_versions": (_status, [_p, POINTER(c_void_p), c_size_t, POINTER(c_size_t)]),
    "container_hit_word": (_status, [_p, POINTER(c_void_p)]),
    "plan_adopt": (_status, [_p, c_uint32, _p]),
    "token_new": (_status, [_p, POINTER(c_void_p)]),
    "token_free": (_status, [_p]),
    "token_enter": (_status, [_p]),
    "token_leave": (_status, []),
    "token_hold": (_status, [_p, _p, c_uint32]),
    "token_wait": (_status, [_p, _p, _p]),
    "scope_traits": (_status, [ctypes.c_int, POINTER(ctypes.c_uint)]),
    "slot_container": (_status, [_p, _p, POINTER(c_void_p), c_size_t, POINTER(c_size_t)]),
    "lazy_hold": (_status, [_p, _pp]),
    "lazy_get": (_status, [_p, _pp, _pp]),
    "lazy_release": (_status, [_p]),
}


#: name -> restype of the functions also declared without argtypes, as ``api.hot_<name>``
#: (``api.hot_resolve_key_instance`` is tether_resolve_key_instance): see the module's docstring.
HOT: dict[str, Any] = {
    "tether_resolve_key_instance": _status,
    "tether_ref_get": c_void_p,
    "tether_ref_release": _status,
}

#: tether_drop entries a resolve's own buffer holds (with RESOLVE_MORE_DROPS the library keeps the
#: rest, in order, for ``more``: no drop runs in place).
DROP_CAPACITY = 64
#: ``more`` in ``collect_buffer()``'s words: the library's array of the drops past the buffer.
MORE_DROPS = 6
#: Where the first ``tether_drop`` starts in ``collect_buffer()`` (fn, instance, context each).
FIRST_DROP = 7


def collect_buffer() -> tuple[Any, memoryview]:
    """A ``tether_collect`` followed by its ``DROP_CAPACITY`` drops, in one ctypes buffer (pass it
    as ``io``), and a view of its words (``words[i]`` is an int, cheaper than a ctypes item):
    ``[2]`` the count, ``[3]`` the instance, ``[4]`` the handle (0: released), ``[5]`` the hit
    token, ``[6]`` the drops past the buffer (``MORE_DROPS``), then the buffer's drops."""
    buffer = (ctypes.c_uint64 * (FIRST_DROP + 3 * DROP_CAPACITY))()
    buffer[0] = ctypes.addressof(buffer) + 8 * FIRST_DROP
    buffer[1] = DROP_CAPACITY
    return buffer, memoryview(buffer).cast("B").cast("Q")


#: A ``void *`` out-parameter for ``HOT`` functions: an array argument is passed as a pointer to
#: its buffer, so ``PointerOut()`` needs no ``byref()`` (30-40 ns less than ``c_void_p()`` with
#: it). Read it as ``out[0]`` (an int, or None for NULL). Not for a handle that is passed on
#: later: that is passed by value, which an array is not.
PointerOut = c_void_p * 1


class BindingTable(Structure):
    """``tether_binding``: the protocol version asked for, then the functions' addresses (``BINDING``'s order)."""

    _fields_ = [("version", ctypes.c_uint), *((name, c_void_p) for name in BINDING)]


class _Function(ctypes._CFuncPtr):  # type: ignore[name-defined,misc]
    """A C function at an address, called as a CDLL's (the GIL released)."""

    _flags_ = ctypes._FUNCFLAG_CDECL  # type: ignore[attr-defined]
    _restype_ = _status


class _GilFunction(ctypes._CFuncPtr):  # type: ignore[name-defined,misc]
    """A C function at an address, called as a PyDLL's (the GIL kept)."""

    _flags_ = ctypes._FUNCFLAG_CDECL | ctypes._FUNCFLAG_PYTHONAPI  # type: ignore[attr-defined]
    _restype_ = _status


def _function(address: int, restype: Any, argtypes: list[Any] | None, keeps_gil: bool = False) -> Any:
    fn = (_GilFunction if keeps_gil else _Function)(address)
    fn.restype = restype
    if argtypes is not None:
        fn.argtypes = argtypes
    return fn


class Api:
    """The declared functions of one loaded library, as attributes (``api.tether_resolve``); the
    binding protocol's from its table (``table``, filled by ``tether_binding_open``)."""

    def __init__(self, cdll: ctypes.CDLL, path: str, table: BindingTable) -> None:
        self.cdll = cdll
        self.path = path
        for name, (restype, argtypes) in SIGNATURES.items():
            fn = getattr(cdll, name)  # AttributeError: the loader turns it into an ImportError
            fn.restype = restype
            fn.argtypes = argtypes
            setattr(self, name, fn)
        for name, (restype, argtypes) in BINDING.items():
            setattr(self, "tether_" + name, _function(getattr(table, name), restype, argtypes))
        for name, restype in HOT.items():
            address = getattr(table, name.removeprefix("tether_"), None) if name.removeprefix("tether_") in BINDING else None
            # a function object of its own (getattr returns the declared one)
            fn = cdll[name] if address is None else _function(address, restype, None)
            fn.restype = restype
            setattr(self, "hot_" + name.removeprefix("tether_"), fn)
        #: tether_resolve_key_collect called keeping the GIL (cheaper, and no other thread's
        #: callbacks interleave): only with RESOLVE_NO_WAIT, as a wait would hold the GIL.
        self.gil_resolve_key_collect = _function(table.resolve_key_collect, _status, None, keeps_gil=True)
        #: tether_container_versions keeping the GIL, without argtypes (the handle passed as a
        #: c_void_p): a lock-free read, as cheap to call as to convert arguments for
        self.gil_container_versions = _function(table.container_versions, _status, None, keeps_gil=True)

    def last_error(self) -> str:
        """This thread's last error message, decoded."""
        raw = self.tether_last_error()
        return raw.decode("utf-8", "replace") if raw else ""

    def __getattr__(self, name: str) -> Any:  # only reached for undeclared names
        raise AttributeError(f"tether: {name} is not declared in tether._cabi.SIGNATURES")
