"""Finding and loading libtether.so, once per process.

Search order (the first that applies wins):

1. ``tether.load(path)`` called before the first use;
2. the ``TETHER_LIBRARY`` environment variable (authoritative when set: no fallback);
3. the copy inside the installed package (``tether/libtether.so.0``, put there by
   ``pip install ./bindings/python``);
4. the source checkout's ``build/lib/libtether.so`` (this file is
   ``bindings/python/tether/_loader.py`` in the repository);
5. the system library path (``ctypes.util.find_library("tether")``, after ``make install``).

The loaded library's ``tether_version()`` must have the package's MAJOR.MINOR.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import threading
from pathlib import Path

from . import _fork
from ._cabi import BINDING_API_VERSION, Api, BindingTable
from .errors import LibraryNotFoundError, VersionMismatchError

#: The package version; the library's MAJOR.MINOR must match it.
PACKAGE_VERSION = "0.1.0"
LIBRARY_ENV = "TETHER_LIBRARY"
LIBRARY_FILE = "libtether.so"
#: The package's own copy is named by the library's SONAME (setup.py), so that a C part linked
#: against ``library_path()`` finds it by that name.
PACKAGED_FILE = f"{LIBRARY_FILE}.{PACKAGE_VERSION.split('.')[0]}"

_HERE = Path(__file__).resolve().parent
_lock = _fork.rlock()
_api: Api | None = None

_HOW_TO_BUILD = (
    "Build it with `make build` at the repository root (it writes build/lib/libtether.so), then either "
    f"set {LIBRARY_ENV}=/path/to/build/lib/libtether.so, call tether.load(path) before using tether, "
    "or reinstall the package with `pip install ./bindings/python` (which copies the library into it)."
)


def _candidates() -> list[tuple[str, str | None]]:
    """(where, path or None) in search order, after an explicit load()."""
    env = os.environ.get(LIBRARY_ENV)
    if env:
        return [(f"{LIBRARY_ENV}={env}", env)]
    found: list[tuple[str, str | None]] = [
        (f"{LIBRARY_ENV} (not set)", None),
        ("the package's own copy", str(_HERE / PACKAGED_FILE)),
        ("the source checkout's build folder", str(_HERE.parents[2] / "build" / "lib" / LIBRARY_FILE)),
    ]
    system = ctypes.util.find_library("tether")
    found.append(("the system library path (ctypes.util.find_library)", system))
    return found


def _check_version(version: str, path: str) -> None:
    if version.split(".")[:2] != PACKAGE_VERSION.split(".")[:2]:
        raise VersionMismatchError(
            f"tether: {path} is libtether {version}, but this Python package is {PACKAGE_VERSION}; "
            f"MAJOR.MINOR must match. Rebuild the library (`make build`) or install the matching "
            f"package (`pip install ./bindings/python`).",
            path=path,
        )


def _open_binding(cdll: ctypes.CDLL, path: str) -> BindingTable:
    """The binding protocol's table (tether_binding.h): the protocol may change between minor
    versions, and this package speaks exactly the one ``_cabi`` declares."""
    try:
        open_binding = cdll.tether_binding_open
    except AttributeError:
        raise LibraryNotFoundError(
            f"tether: {path} is not a complete libtether (no tether_binding_open); is it an older build? {_HOW_TO_BUILD}",
            path=path,
        ) from None
    open_binding.restype, open_binding.argtypes = ctypes.c_int, [ctypes.POINTER(BindingTable)]
    table = BindingTable(version=BINDING_API_VERSION)
    if open_binding(ctypes.byref(table)) != 0:
        last = cdll.tether_last_error
        last.restype, last.argtypes = ctypes.c_char_p, []
        said = (last() or b"").decode("utf-8", "replace")
        raise VersionMismatchError(
            f"tether: {path} does not speak binding protocol {BINDING_API_VERSION} (TETHER_BINDING_API_VERSION), "
            f"the one this Python package speaks ({said}). Rebuild the library (`make build`) or install the "
            f"matching package (`pip install ./bindings/python`).",
            path=path,
        )
    return table


def _open(path: str) -> Api:
    if os.sep in path:
        path = os.path.abspath(path)
    cdll = ctypes.CDLL(path)
    try:
        version = cdll.tether_version
    except AttributeError:
        raise LibraryNotFoundError(f"tether: {path} is not libtether (no tether_version)", path=path) from None
    version.restype, version.argtypes = ctypes.c_char_p, []
    raw = version()
    _check_version(raw.decode("utf-8", "replace") if raw else "?", path)
    table = _open_binding(cdll, path)
    try:
        api = Api(cdll, path, table)
    except AttributeError as exc:
        raise LibraryNotFoundError(
            f"tether: {path} is not a complete libtether ({exc}); is it an older build? {_HOW_TO_BUILD}",
            path=path,
        ) from None
    return api


def load(path: str | os.PathLike[str] | None = None) -> str:
    """Loads libtether now and returns the path it was loaded from.

    With ``path``, exactly that file is loaded (an error if another library is already loaded).
    Without, the search order of this module applies. Raises ``LibraryNotFoundError`` (an
    ``ImportError``) listing where it looked, or ``VersionMismatchError`` on a version mismatch.
    """
    global _api
    with _lock:
        if path is not None:
            wanted = os.fspath(path)
            if _api is not None:
                if os.path.realpath(_api.path) == os.path.realpath(wanted):
                    return _api.path
                raise RuntimeError(
                    f"tether: the library is already loaded from {_api.path}; "
                    f"call tether.load({wanted!r}) before anything else uses tether"
                )
            try:
                _api = _open(wanted)
            except OSError as exc:
                raise LibraryNotFoundError(
                    f"tether: cannot load the library given to tether.load(): {exc}. {_HOW_TO_BUILD}", path=wanted
                ) from None
            return _api.path
        if _api is not None:
            return _api.path
        looked: list[str] = []
        for where, candidate in _candidates():
            if candidate is None:
                looked.append(f"{where}: not found" if "not set" not in where else where)
                continue
            if not os.path.exists(candidate) and os.sep in candidate:
                looked.append(f"{where}: {candidate} (missing)")
                continue
            try:
                _api = _open(candidate)
            except OSError as exc:
                looked.append(f"{where}: {candidate} ({exc})")
                continue
            return _api.path
        lines = "\n".join(f"  - {line}" for line in looked)
        raise LibraryNotFoundError(f"tether: cannot find {LIBRARY_FILE}. Looked in:\n{lines}\n{_HOW_TO_BUILD}")


def api() -> Api:
    """The loaded library, loading it on first use."""
    if _api is None:
        load()
    assert _api is not None
    return _api


def library_path() -> str:
    """The path of the loaded library (loads it if needed): link C extensions against this file."""
    return api().path
