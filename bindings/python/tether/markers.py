"""Keys and dependency markers: what a ``deps`` entry or an ``Annotated`` hint can say.

A key is a non-empty string (``"Logger"``, ``"Logger#file"``) or a class. A class's key is its
``__tether_key__`` attribute when the class itself defines one (so C code can name it), else
``"module.QualifiedName"``.
"""

from __future__ import annotations

import ctypes
from typing import Union

from ._cabi import PARAM_ALL, PARAM_DEP, PARAM_FACTORY, PARAM_LAZY, PARAM_WEAK, PARAM_WEAK_LAZY

Key = Union[str, type]
"""A registration key: a string or a class."""


#: Keys that are a class's name, with the class's qualified name: messages suggest ``register(Repo)``.
class_keys: dict[str, str] = {}


def key_name(key: object) -> str:
    """The string key for a string or a class; TypeError/ValueError for anything else."""
    if isinstance(key, str):
        if not key:
            raise ValueError("tether keys must be non-empty strings")
        if "\0" in key:
            raise ValueError(f"tether key {key!r} contains a NUL character")
        return key
    if isinstance(key, type):
        own = key.__dict__.get("__tether_key__")
        if own is not None:
            return key_name(own)
        name = f"{key.__module__}.{key.__qualname__}"
        if len(class_keys) < 4096:
            class_keys[name] = key.__qualname__
        return name
    if isinstance(key, Dependency):
        raise TypeError(f"{key!r} is a dependency marker, not a key: use it in deps=[...] or Annotated[...]")
    raise TypeError(f"a tether key is a non-empty str or a class, not {type(key).__name__}")


class Dependency:
    """A dependency on ``key`` of a given kind; made by ``weak``, ``lazy``, ``weak_lazy``, ``all_of``, ``factory``."""

    __slots__ = ("key", "kind")

    _NAMES = {PARAM_DEP: "dep", PARAM_WEAK: "weak", PARAM_LAZY: "lazy", PARAM_WEAK_LAZY: "weak_lazy",
              PARAM_ALL: "all", PARAM_FACTORY: "factory"}

    def __init__(self, key: Key, kind: int) -> None:
        key_name(key)  # validates early: wrong use raises before reaching C
        self.key = key
        self.kind = kind

    @property
    def name(self) -> str:
        return key_name(self.key)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Dependency) and (other.name, other.kind) == (self.name, self.kind)

    def __hash__(self) -> int:
        return hash((self.name, self.kind))

    def __repr__(self) -> str:
        return f"tether.{self._NAMES[self.kind]}({self.name!r})"


def dep(key: Key) -> Dependency:
    """A strong dependency (the default for a plain key); the factory receives the instance."""
    return Dependency(key, PARAM_DEP)


def weak(key: Key) -> Dependency:
    """A weak dependency: the factory receives a ``weakref.ref``-style callable (object or None)."""
    return Dependency(key, PARAM_WEAK)


def lazy(key: Key) -> Dependency:
    """A lazy dependency: the factory receives a callable that resolves ``key`` on its first call
    (a separate top-level resolve) and returns that same object on every call after."""
    return Dependency(key, PARAM_LAZY)


def weak_lazy(key: Key) -> Dependency:
    """Like ``lazy`` but holds the result weakly: the callable returns None once it is gone."""
    return Dependency(key, PARAM_WEAK_LAZY)


def all_of(key: Key) -> Dependency:
    """Every registration of ``key`` and of its named variants (``register(K, f, name="gzip")``)
    visible from the resolving container, in registration order (a child's variant replaces its
    parent's, a new one is added): the factory receives a list. Exported as ``tether.all``."""
    return Dependency(key, PARAM_ALL)


def factory(key: Key) -> Dependency:
    """A factory of ``key``, which takes runtime arguments: the factory receives a callable
    ``make(*args)`` that builds a new ``key`` with them, its other dependencies injected."""
    return Dependency(key, PARAM_FACTORY)


Pointer = ctypes.c_void_p
"""Declares a raw-pointer runtime argument (``TETHER_PARAM_PTR``): the factory receives an int or None."""


_encoded: dict[object, bytes] = {}


def encode_key(key: object) -> bytes:
    """``key_name(key)`` as UTF-8 bytes for C, cached."""
    try:
        return _encoded[key]
    except KeyError:
        pass
    except TypeError:  # unhashable: key_name says what is wrong
        key_name(key)
    raw = key_name(key).encode("utf-8")
    if len(_encoded) > 4096:
        _encoded.clear()
    _encoded[key] = raw
    return raw


class _RuntimeArgument:
    """``Annotated[int, tether.arg]``: this parameter is a runtime argument of ``resolve`` (its
    hint's type, one of the runtime-argument types). Autowiring refuses a bare ``seconds: int``,
    which would silently make the key take runtime arguments (and never be a dependency)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "tether.arg"


arg = _RuntimeArgument()
