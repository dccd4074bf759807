"""Build step of the Python package: put libtether.so inside it.

`pip install ./bindings/python` runs this (pyproject.toml holds the metadata). The built package
gets a copy of the shared library, taken from the first of:

1. $TETHER_LIBRARY, if set (a path to libtether.so);
2. ../../build/lib/libtether.so, i.e. the checkout's `make build` output;
3. `make -C ../.. build`, run now, when the checkout's Makefile is there (set TETHER_NO_MAKE=1
   to skip it), then 2 again.

If none works the package is installed without a library, with a warning; it then finds one at
run time through tether.load(path), $TETHER_LIBRARY or the system path (`make install`).
Because the copy is a native binary, the wheel is tagged for this platform.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py
from setuptools.dist import Distribution

HERE = Path(__file__).resolve().parent
CHECKOUT = HERE.parents[1]
BUILT = CHECKOUT / "build" / "lib" / "libtether.so"


def _find_library() -> Path | None:
    env = os.environ.get("TETHER_LIBRARY")
    if env:
        path = Path(env)
        if not path.is_file():
            raise SystemExit(f"TETHER_LIBRARY={env} does not exist")
        return path
    if BUILT.is_file():
        return BUILT
    if (CHECKOUT / "Makefile").is_file() and os.environ.get("TETHER_NO_MAKE") != "1":
        print(f"tether: {BUILT} is missing; running `make -C {CHECKOUT} build`", file=sys.stderr)
        if subprocess.call(["make", "-C", str(CHECKOUT), "build"]) == 0 and BUILT.is_file():
            return BUILT
    return None


class BuildWithLibrary(build_py):
    """build_py, then copy libtether.so into the built `tether` package."""

    def run(self) -> None:
        super().run()
        library = _find_library()
        target = Path(self.build_lib) / "tether" / "libtether.so"
        if library is None:
            print(
                "WARNING tether: no libtether.so found (run `make build` first, or set TETHER_LIBRARY); "
                "installing without it: the package will look for one at run time",
                file=sys.stderr,
            )
            return
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(library, target)
        print(f"tether: copied {library} into the package", file=sys.stderr)


class NativeDistribution(Distribution):
    """The package carries a native library: not a pure-Python wheel."""

    def has_ext_modules(self) -> bool:
        return True


setup(cmdclass={"build_py": BuildWithLibrary}, distclass=NativeDistribution)
