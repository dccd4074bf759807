"""The typed surface, checked by mypy --strict on a small app: ``resolve`` and ``aresolve`` give an
instance of the key's class, ``FromTether[S]`` (FastAPI) is an ``S``, and a mistyped assignment
(``svc: Settings = Inject(ItemService)``, an ``aresolve`` into the wrong type) is flagged."""

from __future__ import annotations

import os
import re
import textwrap
from pathlib import Path

import pytest

mypy_api = pytest.importorskip("mypy.api", reason="mypy is not installed (make test installs it from Tests/requirements.txt)")
pytest.importorskip("fastapi", reason="the app uses tether.fastapi (pip install fastapi)")

import tether  # noqa: E402

APP = '''
from __future__ import annotations

import tether
from fastapi import FastAPI
from tether.fastapi import FromTether, Inject, install


class Settings:
    name = "s"


class ItemService:
    def __init__(self, settings: Settings) -> None:
        self.settings = settings


root = tether.Container()
root.register(Settings, scope=tether.Scope.SINGLETON)
root.register(ItemService)
app = FastAPI()
install(app, root)


@app.get("/items")
async def items(svc: FromTether[ItemService]) -> dict[str, str]:
    settings: Settings = svc.settings
    return {"name": settings.name}


async def uses() -> str:
    a: ItemService = root.resolve(ItemService)
    b: ItemService = await root.aresolve(ItemService)
    c: Settings = Inject(Settings)
    anything = await root.aresolve("some.string.key")
    return a.settings.name + b.settings.name + c.name + str(anything)
'''

MISTAKES = '''

async def mistakes(svc: FromTether[ItemService]) -> None:
    wrong: Settings = Inject(ItemService)  # line A
    also: Settings = await root.aresolve(ItemService)  # line B
    nope: Settings = root.resolve(ItemService)  # line C
    bad: Settings = svc  # line D
'''


def run_mypy(tmp_path: Path, source: str) -> tuple[str, int]:
    app = tmp_path / "app.py"
    app.write_text(textwrap.dedent(source))
    package_root = str(Path(tether.__file__).resolve().parent.parent)
    env_path = os.environ.get("MYPYPATH")
    os.environ["MYPYPATH"] = package_root
    try:
        out, err, status = mypy_api.run(["--strict", "--follow-imports=silent", "--no-incremental",
                                         "--cache-dir", str(tmp_path / "cache"), str(app)])
    finally:
        if env_path is None:
            del os.environ["MYPYPATH"]
        else:
            os.environ["MYPYPATH"] = env_path
    return out + err, status


def test_the_typed_app_passes_mypy_strict(tmp_path: Path) -> None:
    out, status = run_mypy(tmp_path, APP)
    assert status == 0, out


def test_mypy_strict_flags_mistyped_assignments(tmp_path: Path) -> None:
    out, status = run_mypy(tmp_path, APP + MISTAKES)
    assert status == 1, out
    lines = (APP + MISTAKES).splitlines()
    # (an await's mistake is reported on the argument: "expected type[Settings]")
    flagged = {int(n) for n in re.findall(r"app\.py:(\d+): error: ", out)}
    for mark in "ABCD":
        line = next(i for i, text in enumerate(lines, 1) if text.endswith(f"# line {mark}"))
        assert line in flagged, f"line {mark} not flagged:\n{out}"
    assert 'expression has type "ItemService", variable has type "Settings"' in out
    assert len(flagged) == 4, out
