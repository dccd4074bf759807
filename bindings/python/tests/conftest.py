"""Test setup: import the package from this checkout (no pip install needed).

The library comes from $TETHER_LIBRARY (``make test-python`` sets it) or, failing that, the
checkout's build/lib/libtether.so, through the package's normal search order.
"""

from __future__ import annotations

import asyncio
import gc
import importlib.util
import os
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

PACKAGE_ROOT = Path(__file__).resolve().parents[1]
REPO_ROOT = PACKAGE_ROOT.parents[1]
sys.path.insert(0, str(PACKAGE_ROOT))

import tether  # noqa: E402
from tether import object_table  # noqa: E402


def subprocess_env(**extra: str) -> dict[str, str]:
    """An environment for child Pythons that import this checkout's package."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(PACKAGE_ROOT), env.get("PYTHONPATH")]))
    env.update(extra)
    return env


def run_python(*args: object) -> subprocess.CompletedProcess[str]:
    """A child Python run with ``args`` (a script and its arguments, or ``"-c", code``) over this checkout's
    package and the library under test, its output captured."""
    env = subprocess_env(TETHER_LIBRARY=tether.library_path())
    return subprocess.run([sys.executable, *map(str, args)], env=env, capture_output=True, text=True, timeout=120)


def run_python_ok(*args: object) -> str:
    """``run_python``, which must exit 0 (else its standard error is the failure): its standard output."""
    result = run_python(*args)
    assert result.returncode == 0, result.stderr
    return result.stdout


def load_script(path: Path, name: str) -> ModuleType:
    """The script at ``path`` run as a new module named ``name`` (its own classes and counters each time)."""
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _no_event(event: object) -> None:
    pass


def container(parent: tether.Container | None = None, *, plans: bool = True) -> tether.Container:
    """A container whose resolves the binding replays where it can (``plans``), or one whose every
    resolve goes through the library: a trace hook that keeps nothing (the binding replays no plan
    and takes no fast path while one is set; the library runs its own plans, traced). Before branch
    noplansoff the latter was a container made with TETHER_NO_PLANS=1: the library's build, no plan."""
    made = tether.Container(parent)
    if not plans:
        made.trace(_no_event)
    return made


@pytest.fixture
def c():
    """A fresh container, closed after the test; the test must leave no Python object in C boxes."""
    before = object_table.live_count()
    container = tether.Container()
    yield container
    container.close()
    gc.collect()
    assert object_table.live_count() == before, "C boxes still hold Python objects after close"


def causes(exc: BaseException | None) -> list[BaseException]:
    """``exc`` and what caused it (``__cause__``), outermost first."""
    chain = []
    while exc is not None:
        chain.append(exc)
        exc = exc.__cause__
    return chain


class Pool:
    """A shared instance the async tests make once (``gated_pool``)."""


def gated_pool(c: tether.Container, calls: list[str]) -> asyncio.Event:
    """Registers an async SINGLETON ``Pool`` in ``c`` whose factory notes "Pool" in ``calls`` and
    waits for the returned event before making it."""
    gate = asyncio.Event()

    async def pool() -> Pool:
        calls.append("Pool")
        await gate.wait()
        return Pool()

    c.register(Pool, pool, scope=tether.Scope.SINGLETON)
    return gate


class Counter:
    """Counts calls per name: ``calls["Parent"]``."""

    def __init__(self) -> None:
        self.calls: dict[str, int] = {}

    def __call__(self, name: str) -> None:
        self.calls[name] = self.calls.get(name, 0) + 1

    def __getitem__(self, name: str) -> int:
        return self.calls.get(name, 0)


@pytest.fixture
def count() -> Counter:
    return Counter()
