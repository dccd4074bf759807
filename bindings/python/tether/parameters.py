"""A factory's declared parameter list: from ``deps=[...]`` or autowired from type hints.

Rules (also in the README):

- A ``deps`` entry is a key (str or class: a strong dependency), a marker (``weak``/``lazy``/
  ``weak_lazy``/``dep``/``all``/``factory``), or one of the runtime-argument types below.
- Runtime argument types map to C slots: ``int``/``bool`` -> I64, ``float`` -> F64, ``str`` -> STR
  (the factory gets a str; UTF-8), ``bytes`` -> STR (gets bytes), ``tether.Pointer``
  (``ctypes.c_void_p``) -> PTR (gets an int address or None), ``object`` -> PTR carrying any Python
  object (gets the object itself).
- Autowiring (when ``deps`` is empty) reads the parameters of the class's ``__init__`` or of the
  factory: ``Annotated[T, "key"]`` or ``Annotated[T, tether.weak(K)]`` says exactly what to inject;
  ``Annotated[int, tether.arg]`` a runtime argument; otherwise a parameter with a default keeps its
  default; otherwise its annotation decides: any class = a strong dependency on that class's key,
  except a runtime-argument type above, which is a TypeError naming the parameter (it would
  silently become a runtime argument: say so with ``tether.arg``, or declare ``deps=[...]``).
  ``*args``/``**kwargs`` are ignored. Anything else (no annotation, ``Optional[...]``, a forward
  reference that does not resolve) is a TypeError naming the parameter.
"""

from __future__ import annotations

import ctypes
import inspect
import typing
from types import FunctionType
from typing import Any, Callable, NamedTuple, Sequence

from ._cabi import PARAM_DEP, PARAM_F64, PARAM_I64, PARAM_PTR, PARAM_STR
from .markers import Dependency, arg, key_name

ARG_TYPES: dict[Any, tuple[int, str]] = {
    int: (PARAM_I64, "int"),
    bool: (PARAM_I64, "bool"),
    float: (PARAM_F64, "float"),
    str: (PARAM_STR, "str"),
    bytes: (PARAM_STR, "bytes"),
    object: (PARAM_PTR, "object"),
    ctypes.c_void_p: (PARAM_PTR, "pointer"),
}


class Slot(NamedTuple):
    """One C parameter: a dependency (``key`` set) or a runtime argument (``arg`` set)."""

    kind: int
    key: str | None = None
    arg: str | None = None


class Parameters(NamedTuple):
    """How to call the factory: the slots in C order; the first ``npos`` go positionally,
    the rest by the keyword names in ``names``."""

    slots: list[Slot]
    npos: int
    names: list[str]


def slot_for(entry: object, where: str) -> Slot:
    """The slot a ``deps`` entry or an annotation stands for."""
    if isinstance(entry, Dependency):
        return Slot(entry.kind, entry.name)
    if isinstance(entry, str):
        return Slot(PARAM_DEP, key_name(entry))
    if isinstance(entry, type):
        if entry in ARG_TYPES:
            kind, arg = ARG_TYPES[entry]
            return Slot(kind, arg=arg)
        return Slot(PARAM_DEP, key_name(entry))
    raise TypeError(
        f"{where}: {entry!r} is not a dependency: use a key (str or class), tether.weak/lazy/weak_lazy/all/factory(key), "
        f"or a runtime-argument type (int, float, str, bytes, object, tether.Pointer)"
    )


#: The code flags of a function taking *args or **kwargs
_VARIADIC = inspect.CO_VARARGS | inspect.CO_VARKEYWORDS


def code_flags(fn: Any) -> int | None:
    """The code flags of a plain function with nothing set on it (no ``__wrapped__`` or
    ``__signature__``, no marker): all that ``inspect``'s predicates and ``signature`` read of it
    besides its code, so its code answers them directly; None for anything else."""
    if type(fn) is FunctionType and not fn.__dict__:
        return fn.__code__.co_flags
    return None


def _signature(factory: Callable[..., Any]) -> inspect.Signature | None:
    try:
        return inspect.signature(factory)
    except (TypeError, ValueError):  # builtins without a signature
        return None


def from_deps(deps: Sequence[object], factory: Callable[..., Any], what: str) -> Parameters:
    """The plan for explicit ``deps``: every slot passed positionally, arity checked now."""
    if isinstance(deps, (str, bytes)) or not isinstance(deps, Sequence):
        raise TypeError(f"{what}: deps must be a list or tuple of keys/markers, not {type(deps).__name__}")
    slots = [slot_for(entry, f"{what}: deps[{i}]") for i, entry in enumerate(deps)]
    sig = _signature(factory)
    if sig is not None:
        try:
            sig.bind(*range(len(slots)))
        except TypeError as exc:
            raise TypeError(
                f"{what}: the factory cannot take the {len(slots)} declared dependencies positionally ({exc})"
            ) from None
    return Parameters(slots, len(slots), [])


def _hints(factory: Callable[..., Any], what: str) -> dict[str, Any]:
    target = factory.__init__ if isinstance(factory, type) else factory  # type: ignore[misc]
    try:
        return typing.get_type_hints(target, include_extras=True)
    except NameError as exc:
        raise TypeError(
            f"{what}: cannot autowire: a type hint names something undefined ({exc}). String hints "
            f"(quotes, or `from __future__ import annotations`) are looked up in the module's globals: "
            f"define the class at module level before registering, or use deps=[...]"
        ) from None
    except TypeError:  # partials and other callables get_type_hints refuses
        return {}


def _annotation_slot(annotation: Any, param: str, what: str) -> Slot | None:
    """The slot an annotation asks for; None when it has no explicit Annotated request."""
    if typing.get_origin(annotation) is typing.Annotated:
        for meta in annotation.__metadata__:
            if isinstance(meta, (str, Dependency)):
                return slot_for(meta, f"{what}: parameter {param!r}")
            if meta is arg:
                hinted = typing.get_args(annotation)[0]
                if hinted not in ARG_TYPES:
                    raise TypeError(f"{what}: parameter {param!r}: tether.arg needs a runtime-argument type "
                                    f"(int, bool, float, str, bytes, object, tether.Pointer), not {hinted!r}")
                return slot_for(hinted, f"{what}: parameter {param!r}")
    return None


def infer(factory: Callable[..., Any], what: str, first: Slot | None = None) -> Parameters:
    """The plan autowired from the factory's (or class's ``__init__``'s) parameters; ``first``: the
    slot of the first parameter, whatever its hint (a decorator's instance)."""
    flags = code_flags(factory)
    if (first is None and flags is not None and not flags & _VARIADIC and not factory.__code__.co_argcount
            and not factory.__code__.co_kwonlyargcount and not factory.__annotations__):
        return Parameters([], 0, [])  # no parameters and no hints (a lambda, say): what the walk below gives
    sig = _signature(factory)
    if sig is None:
        return Parameters([] if first is None else [first], 0 if first is None else 1, [])
    hints = _hints(factory, what)
    slots: list[Slot] = []
    names: list[str] = []
    npos = 0
    positional = True  # still filling the positional prefix
    for p in sig.parameters.values():
        if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            continue
        annotation = hints.get(p.name, p.annotation)
        if first is not None:
            if p.kind not in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD):
                raise TypeError(f"{what}: the first parameter receives the instance: it must be positional")
            slots.append(first)
            npos += 1
            first = None
            continue
        slot = _annotation_slot(annotation, p.name, what)
        if slot is None:
            if p.default is not p.empty:
                positional = False  # keeps its default; later ones go by keyword
                continue
            if typing.get_origin(annotation) is typing.Annotated:
                annotation = typing.get_args(annotation)[0]
            if annotation is p.empty:
                raise TypeError(
                    f"{what}: cannot autowire parameter {p.name!r}: it has no type hint; annotate it with a "
                    f"class, Annotated[T, \"key\"], or pass deps=[...] (which also declares runtime arguments)"
                )
            if not isinstance(annotation, type):
                raise TypeError(
                    f"{what}: cannot autowire parameter {p.name!r}: {annotation!r} is not a class; use "
                    f"Annotated[..., \"key\"] or tether.weak/lazy markers, or pass deps=[...]"
                )
            if annotation in ARG_TYPES:
                # A builtin hint would silently make the key take runtime arguments, and such a key
                # cannot be a dependency: say so now rather than at the first resolve that needs it.
                name = ARG_TYPES[annotation][1] if annotation is not ctypes.c_void_p else "tether.Pointer"
                raise TypeError(
                    f"{what}: parameter {p.name!r} is hinted {name}, which autowiring would make a runtime argument "
                    f"of resolve (and the key then can never be a dependency): give it a default "
                    f"({p.name}: {name} = ...), inject a key (Annotated[{name}, \"key\"]), or say it is one "
                    f"({p.name}: Annotated[{name}, tether.arg])"
                )
            slot = slot_for(annotation, f"{what}: parameter {p.name!r}")
        if positional and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD):
            npos += 1
        elif p.kind is p.POSITIONAL_ONLY:
            raise TypeError(f"{what}: cannot autowire positional-only {p.name!r} after a skipped parameter")
        else:
            positional = False
            names.append(p.name)
        slots.append(slot)
    if first is not None:
        raise TypeError(f"{what}: it takes no parameter; its first one receives the instance")
    return Parameters(slots, npos, names)
