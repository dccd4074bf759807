"""Tether for Python: a dependency-injection container that resolves cycles, over libtether.so.

    import tether

    class Child:
        parent = None                      # set after construction, weakly

    class Parent:
        def __init__(self, child: Child):  # autowired from the type hint
            self.child = child

    with tether.Container() as c:
        c.register(Parent)
        c.register(Child, on_complete=lambda r, child: setattr(child, "parent", r.weak(Parent)))
        p = c.resolve(Parent)
        assert p.child.parent() is p       # weak references are weakref.ref-style callables

The library is found by ``tether.load(path)``, ``$TETHER_LIBRARY``, the package's own copy, or a
source checkout's ``build/lib`` (see ``tether._loader``), on first use.
"""

from ._loader import LIBRARY_ENV, PACKAGE_VERSION, library_path, load
from .completion import Completion, complete
from .container import Container
from .errors import (
    ArgumentMismatchError,
    AsyncResolveError,
    BufferTooSmallError,
    CaptiveDependencyError,
    CycleError,
    ExpiredError,
    FactoryError,
    InvalidArgumentError,
    InvalidHandleError,
    LibraryNotFoundError,
    NeedsAwait,
    NoMemoryError,
    NotFoundError,
    RetainCycleError,
    Status,
    TeardownError,
    TetherError,
    VersionMismatchError,
    WouldBlockError,
    WrongContextError,
)
from .lazy import Factory, Lazy, WeakLazy
from .markers import Dependency, Key, Pointer, arg, dep, factory, key_name, lazy, weak, weak_lazy
from .markers import all_of as all  # tether.all(K); not in __all__: `import *` must not shadow the builtin
from .native_refs import NativeRef, NativeWeak
from .overrides import Override
from .provider import Provider
from .resolver import Resolver
from .scope import Scope
from .tracing import Recorder, TraceEvent

__version__ = PACKAGE_VERSION


def include_dir() -> str:
    """The folder holding ``tether.h`` and ``tether_binding.h``, to compile C code that shares a
    container with Python (``cc -I"$(python -c 'import tether; print(tether.include_dir())')"``):
    the installed package's copy, or a source checkout's ``include/``."""
    from pathlib import Path

    here = Path(__file__).resolve().parent
    for folder in (here / "include", here.parents[2] / "include"):
        if (folder / "tether.h").is_file():
            return str(folder)
    raise FileNotFoundError(f"tether: no tether.h in {here / 'include'}; reinstall the package (pip install ./bindings/python)")


def library_version() -> str:
    """``tether_version()`` of the loaded library (loads it if needed)."""
    from ._loader import api

    return str(api().tether_version().decode())


__all__ = [
    "include_dir",
    "ArgumentMismatchError",
    "AsyncResolveError",
    "BufferTooSmallError",
    "CaptiveDependencyError",
    "Completion",
    "Container",
    "CycleError",
    "Dependency",
    "ExpiredError",
    "FactoryError",
    "InvalidArgumentError",
    "InvalidHandleError",
    "Key",
    "LIBRARY_ENV",
    "Lazy",
    "LibraryNotFoundError",
    "NeedsAwait",
    "NativeRef",
    "NativeWeak",
    "NoMemoryError",
    "NotFoundError",
    "Override",
    "Factory",
    "Pointer",
    "Provider",
    "Recorder",
    "Resolver",
    "RetainCycleError",
    "TeardownError",
    "Scope",
    "Status",
    "TetherError",
    "TraceEvent",
    "VersionMismatchError",
    "WouldBlockError",
    "WeakLazy",
    "WrongContextError",
    "__version__",
    "arg",
    "complete",
    "dep",
    "factory",
    "key_name",
    "lazy",
    "library_path",
    "library_version",
    "load",
    "weak",
    "weak_lazy",
]
