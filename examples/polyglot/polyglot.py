"""Polyglot: Python and C components in ONE container, with a cycle across the boundary.

    python3 examples/polyglot/polyglot.py [path/to/libparts.so]

Without a path it compiles parts.c (beside this file) with `cc` against include/ and the
libtether.so that Python loaded. What happens:

- Python makes the container and registers Logger (a C interface, `parts_logger`, implemented
  in Python: a ctypes struct of function pointers) and Handler (a Python class).
- The C library registers Config and Server into the same container through `container.handle`.
- Server (C) depends on Logger (Python, called from C), on Handler (Python) and on Config (C);
  Handler depends on Config (it gets a NativeRef) and, in its completion callback, takes a weak
  back-reference to Server: C parent -> Python child -> (weak) C parent.
- Identities are checked from both sides, C resolves the same container, and after the last
  references go every component has been destroyed exactly once.
"""

from __future__ import annotations

import ctypes
import gc
import os
import subprocess
import sys
import tempfile
import weakref
from ctypes import CFUNCTYPE, POINTER, Structure, c_char, c_char_p, c_int, c_int64, c_void_p
from pathlib import Path
from typing import Annotated, Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
try:
    import tether
except ImportError:  # running from a checkout without installing the package
    sys.path.insert(0, str(REPO / "bindings" / "python"))
    import tether

LOG_FN = CFUNCTYPE(None, c_void_p, c_char_p)
LINES_FN = CFUNCTYPE(c_int64, c_void_p)


class LoggerInterface(Structure):
    """`struct parts_logger`: what the C Server calls."""

    _fields_ = [("log", LOG_FN), ("lines", LINES_FN), ("self", c_void_p)]


class Config(Structure):
    """`struct parts_config`, read from Python through a NativeRef."""

    _fields_ = [("port", c_int64), ("name", c_char * 32)]


class PyLogger:
    """The Python implementation behind LoggerInterface."""

    made: list[weakref.ref[PyLogger]] = []
    destroyed = 0

    def __init__(self) -> None:
        self.lines: list[str] = []
        PyLogger.made.append(weakref.ref(self))

    def interface(self) -> LoggerInterface:
        iface = LoggerInterface(LOG_FN(self._log), LINES_FN(self._count), None)
        self.iface = weakref.ref(iface)  # the struct (held by C) keeps self alive, not the reverse
        return iface

    def _log(self, _self: int | None, line: bytes) -> None:
        self.lines.append(line.decode())

    def _count(self, _self: int | None) -> int:
        return len(self.lines)

    def __del__(self) -> None:
        PyLogger.destroyed += 1


class Handler:
    """A Python component: child of the C Server, weak back-reference to it."""

    __tether_key__ = "Handler"  # the key C code names in TETHER_DEP("Handler")
    made: list[weakref.ref[Handler]] = []
    destroyed = 0

    def __init__(self, config: Annotated[tether.NativeRef, "Config"]) -> None:
        self.config = config  # a NativeRef: keeps the C Config alive as long as this handler
        self.server: Any = None  # set by the completion callback, weakly
        Handler.made.append(weakref.ref(self))

    def port(self) -> int:
        return int(self.config.cast(Config).contents.port)

    def __del__(self) -> None:
        Handler.destroyed += 1


def logger_interface_of(logger: PyLogger) -> LoggerInterface:
    iface = logger.iface()
    assert iface is not None
    return iface


def build_parts(out_dir: str | os.PathLike[str]) -> Path:
    """Compiles parts.c into a shared library linked against the libtether.so Python uses."""
    libdir = os.path.dirname(tether.library_path())
    out = Path(out_dir) / "libparts.so"
    cc = os.environ.get("CC", "cc")
    subprocess.run(
        [cc, "-shared", "-fPIC", "-std=c11", "-Wall", "-Wextra", "-Werror", f"-I{REPO / 'include'}",
         str(HERE / "parts.c"), "-o", str(out), f"-L{libdir}", "-ltether", f"-Wl,-rpath,{libdir}"],
        check=True,
    )
    return out


def load_parts(path: str | os.PathLike[str]) -> ctypes.CDLL:
    parts = ctypes.CDLL(str(path))
    parts.parts_register.argtypes, parts.parts_register.restype = [c_void_p], c_int
    for name in ("parts_server_handler", "parts_server_config", "parts_server_logger"):
        getattr(parts, name).argtypes, getattr(parts, name).restype = [c_void_p], c_void_p
    parts.parts_server_log.argtypes, parts.parts_server_log.restype = [c_void_p, c_char_p], c_int64
    parts.parts_resolve_and_log.argtypes, parts.parts_resolve_and_log.restype = [c_void_p, c_char_p], c_int
    parts.parts_count.argtypes, parts.parts_count.restype = [c_char_p], c_int
    return parts


def run(parts_path: str | os.PathLike[str]) -> dict[str, Any]:
    """Runs the whole scenario, asserting as it goes; returns what it observed."""
    parts = load_parts(parts_path)
    count = lambda what: parts.parts_count(what.encode())  # noqa: E731
    report: dict[str, Any] = {}
    baseline = tether.object_table.live_count()  # Python objects held by C boxes before we start

    container = tether.Container()
    container.register("Logger", lambda: PyLogger().interface())  # Python implements a C interface
    container.register(Handler, on_complete=lambda r, h: setattr(h, "server", r.weak("Server")))
    assert parts.parts_register(container.handle) == 0  # C registers into the same container
    container.validate()
    report["dot"] = container.to_dot()

    server = container.resolve("Server")  # a C object: a NativeRef
    assert isinstance(server, tether.NativeRef)
    handler = Handler.made[-1]()
    assert handler is not None
    # identities, from both sides
    assert parts.parts_server_handler(server) == id(handler)  # C holds the very Python object
    assert handler.server() is server  # the weak back-reference crosses back to the same NativeRef
    assert handler.config.address == parts.parts_server_config(server)  # one Config in the graph
    assert handler.port() == 8080
    logger = PyLogger.made[-1]()
    assert logger is not None
    assert ctypes.addressof(logger_interface_of(logger)) == parts.parts_server_logger(server)
    assert parts.parts_server_log(server, b"ping from python") == 2  # Python -> C -> Python
    assert logger.lines == ["server constructed", "ping from python"]
    assert parts.parts_resolve_and_log(container.handle, b"resolved from C") == 0  # C -> container -> Python
    assert PyLogger.made[-1]() is not logger  # C's resolve was a new graph with its own Logger
    report["made"] = {k: count(k) for k in ("configs_made", "servers_made")}
    assert report["made"] == {"configs_made": 2, "servers_made": 2}  # two resolves, two graphs
    del logger

    # teardown: once the container and the last references are gone, everything is destroyed once
    server_weak = server.downgrade()
    handler_ref = weakref.ref(handler)
    del handler
    container.close()
    assert server_weak() is server  # the handle still holds it after the container is gone
    server.release()
    del server
    gc.collect()
    assert server_weak() is None
    server_weak.release()
    assert handler_ref() is None
    report["dropped"] = {k: count(k) for k in ("configs_dropped", "servers_dropped")}
    assert report["dropped"] == {"configs_dropped": 2, "servers_dropped": 2}
    assert Handler.destroyed == 2 and PyLogger.destroyed == 2
    assert tether.object_table.live_count() == baseline
    report["python_destroyed"] = {"Handler": Handler.destroyed, "PyLogger": PyLogger.destroyed}
    return report


def main(argv: list[str]) -> int:
    with tempfile.TemporaryDirectory() as tmp:
        path = argv[1] if len(argv) > 1 else build_parts(tmp)
        report = run(path)
    print(report["dot"])
    print(f"built:     {report['made']}")
    print(f"destroyed: {report['dropped']} + Python {report['python_destroyed']}")
    print("polyglot ok")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
