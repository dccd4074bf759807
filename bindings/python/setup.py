"""Build step of the Python package: put libtether.so and the C headers inside it.

`pip install ./bindings/python` and `pip wheel ./bindings/python` run this (pyproject.toml holds
the metadata). The built package gets a stripped copy of the shared library, taken from:

1. $TETHER_LIBRARY, if set (a path to a built libtether.so; used as it is);
2. otherwise the checkout's `make build`, run every time: make rebuilds the library when any
   source is newer than it (so a reinstall after `git pull` never ships a stale library) and
   does nothing when it is current. Its output is shown as it happens on the terminal that runs
   pip (and in pip's log with `-v`).

The copy is named by the library's SONAME (libtether.so.MAJOR), which is what a C program linked
against it records, so such a program finds it beside itself (`-Wl,-rpath`). setuptools' own
scratch (build/, tether.egg-info/) goes to a temporary folder: building or installing leaves the
source tree as it was.

No library, no package: when none can be built or found the install fails here with what to do
(unless TETHER_ALLOW_NO_LIBRARY=1, for a system that has the library installed by `make install`).
The package also carries include/tether.h and include/tether_binding.h (`tether.include_dir()`).

The wheel holds no Python extension, only a C library loaded with ctypes, so it is tagged
`py3-none-<platform>`: one wheel serves every Python 3. The platform is manylinux_2_N when the
library needs nothing beyond glibc 2.N and the C++ runtime (N read from its symbol versions;
`auditwheel show` agrees, see Tests/python_packaging), else linux_<arch>.
"""

from __future__ import annotations

import os
import platform
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py
from setuptools.dist import Distribution

try:
    from setuptools.command.bdist_wheel import bdist_wheel
except ImportError:  # setuptools < 70.1
    from wheel.bdist_wheel import bdist_wheel  # type: ignore[no-redef]

HERE = Path(__file__).resolve().parent
CHECKOUT = HERE.parents[1]
BUILT = CHECKOUT / "build" / "lib" / "libtether.so"
HEADERS = ("tether.h", "tether_binding.h")
_MAJOR = re.search(r'^version = "(\d+)\.', (HERE / "pyproject.toml").read_text(), re.M)
SONAME = f"libtether.so.{_MAJOR.group(1) if _MAJOR else 0}"  # = tether._loader.PACKAGED_FILE
ALLOWED_NEEDED = re.compile(r"^(libc\.so\.6|libm\.so\.6|libstdc\+\+\.so\.6|libgcc_s\.so\.1|libpthread\.so\.0|libdl\.so\.2|ld-linux[-\w.]*\.so\.\d+)$")

_HOW = (
    "Build it with `make build` in a checkout of the repository (needs the Swift toolchain and "
    "libffi-dev), or point TETHER_LIBRARY at a built libtether.so, then run pip again. To install "
    "the package without a library (it then loads one installed by `make install`), set "
    "TETHER_ALLOW_NO_LIBRARY=1."
)


def _progress(message: str) -> None:
    """Shown where the person running pip sees it: pip keeps a build's output to itself unless -v."""
    line = f"tether: {message}\n"
    sys.stderr.write(line)
    try:
        with open("/dev/tty", "w") as tty:
            tty.write(line)
    except OSError:
        pass


def _run_make() -> None:
    if not (CHECKOUT / "Makefile").is_file():
        raise SystemExit(f"tether: no TETHER_LIBRARY and no checkout Makefile at {CHECKOUT}. {_HOW}")
    if shutil.which("make") is None:
        raise SystemExit(f"tether: `make` is not installed, so libtether.so cannot be built. {_HOW}")
    _progress(f"building libtether.so: make -C {CHECKOUT} build (rebuilds only what changed)")
    try:
        tty = open("/dev/tty", "w")
    except OSError:
        tty = None
    with subprocess.Popen(["make", "-C", str(CHECKOUT), "build"], stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, text=True) as make:
        assert make.stdout is not None
        tail: list[str] = []
        for line in make.stdout:
            sys.stderr.write(line)
            if tty is not None:
                tty.write("  " + line)
                tty.flush()
            tail = (tail + [line])[-30:]
    if tty is not None:
        tty.close()
    if make.returncode != 0 or not BUILT.is_file():
        raise SystemExit(f"tether: `make build` failed (exit {make.returncode}):\n{''.join(tail)}\n{_HOW}")


def find_library() -> Path | None:
    env = os.environ.get("TETHER_LIBRARY")
    if env:
        path = Path(env)
        if not path.is_file():
            raise SystemExit(f"tether: TETHER_LIBRARY={env} does not exist. {_HOW}")
        return path
    if os.environ.get("TETHER_ALLOW_NO_LIBRARY") == "1" and not BUILT.is_file():
        return None
    _run_make()
    return BUILT


def _elf_needs(library: Path) -> tuple[list[str], list[tuple[int, int]]] | None:
    """NEEDED entries and GLIBC_x.y versions the library asks for, or None without readelf."""
    readelf = shutil.which("readelf")
    if readelf is None:
        return None
    dynamic = subprocess.run([readelf, "-d", str(library)], capture_output=True, text=True).stdout
    versions = subprocess.run([readelf, "-V", str(library)], capture_output=True, text=True).stdout
    needed = re.findall(r"\(NEEDED\).*\[(.*)\]", dynamic)
    glibc = sorted({(int(a), int(b)) for a, b in re.findall(r"GLIBC_(\d+)\.(\d+)", versions)})
    return needed, glibc


def platform_tag(library: Path | None) -> str:
    """manylinux_2_N_<arch> for a library needing only glibc 2.N and the C++ runtime, else linux_<arch>."""
    arch = platform.machine()
    fallback = f"linux_{arch}"
    if library is None or sys.platform != "linux":
        return fallback
    needs = _elf_needs(library)
    if needs is None:
        return fallback
    needed, glibc = needs
    if not glibc or not all(ALLOWED_NEEDED.match(name) for name in needed):
        return fallback
    major, minor = glibc[-1]
    return f"manylinux_{major}_{max(minor, 17)}_{arch}"


class BuildWithLibrary(build_py):
    """build_py, then the stripped library and the headers into the built `tether` package."""

    def run(self) -> None:
        super().run()
        package = Path(self.build_lib) / "tether"
        library = find_library()
        if library is None:
            _progress("WARNING: installing without libtether.so (TETHER_ALLOW_NO_LIBRARY=1); "
                      "the package will look for one at run time")
        else:
            target = package / SONAME
            target.parent.mkdir(parents=True, exist_ok=True)
            strip = shutil.which("strip")
            if strip and os.environ.get("TETHER_KEEP_SYMBOLS") != "1":
                subprocess.run([strip, "--strip-unneeded", "-o", str(target), str(library)], check=True)
            else:
                shutil.copy2(library, target)
            _progress(f"packaged {library} ({target.stat().st_size / 1e6:.1f} MB)")
            self.distribution.tether_library = target  # type: ignore[attr-defined]
        include = package / "include"
        include.mkdir(parents=True, exist_ok=True)
        for header in HEADERS:
            source = next((p for p in (CHECKOUT / "include" / header, HERE / "tether" / "include" / header)
                           if p.is_file()), None)  # a checkout's, or an sdist's copy
            if source is None:
                _progress(f"WARNING: no {header} to package (not built from a checkout); tether.include_dir() will fail")
                continue
            shutil.copy2(source, include / header)


class PlatformWheel(bdist_wheel):
    """Not tied to a Python version or ABI (ctypes only): py3-none-<platform>."""

    def get_tag(self) -> tuple[str, str, str]:
        self.run_command("build_py")
        library = getattr(self.distribution, "tether_library", None)
        return "py3", "none", platform_tag(library)


class NativeDistribution(Distribution):
    """The package carries a native library: not a pure-Python wheel."""

    def has_ext_modules(self) -> bool:
        return True


# Not the source tree: a folder of its own per run (pip builds in the tree it is given).
_SCRATCH = tempfile.TemporaryDirectory(prefix="tether-build-")
setup(cmdclass={"build_py": BuildWithLibrary, "bdist_wheel": PlatformWheel}, distclass=NativeDistribution,
      options={"build": {"build_base": f"{_SCRATCH.name}/build"}, "egg_info": {"egg_base": _SCRATCH.name}})
