"""A failed resolve destroys what it made last made first, before its error reaches the caller, as the
library does for C (README, "Per-request containers and teardown"): the exception's traceback keeps
no object alive, so no collector is needed, and the error still carries its message and cause."""

from __future__ import annotations

import gc
import traceback
from typing import Any, Iterator

import pytest
from conftest import container

import tether
from tether import Scope


@pytest.fixture
def no_collector() -> Iterator[None]:
    """The collector off: whatever a reference cycle kept would stay alive and fail the order."""
    gc.collect()
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


def graph(log: list[str], c: tether.Container, fail_in: str) -> None:
    """Root(App(Mid(Leaf), Cache), Broken(Cache)); Broken's factory or App's callback fails."""

    class Obj:
        def __init__(self, name: str, *deps: Any) -> None:
            self.name, self.deps = name, deps

        def __del__(self) -> None:
            log.append(self.name)

    def make(name: str) -> Any:
        def factory(*deps: Any) -> Any:
            if name == fail_in:
                raise RuntimeError(f"{name} gives up")
            return Obj(name, *deps)
        return factory

    def check(r: Any, app: Obj) -> None:
        r.get("Extra")
        if fail_in == "App callback":
            raise RuntimeError("App callback gives up")

    c.register("Leaf", make("Leaf"))
    c.register("Mid", make("Mid"), deps=["Leaf"])
    c.register("Cache", make("Cache"), scope=Scope.SINGLETON)
    c.register("Extra", make("Extra"))
    c.register("App", make("App"), deps=["Mid", "Cache"], on_complete=[check])
    c.register("Broken", make("Broken"), deps=["Cache"])
    c.register("Root", make("Root"), deps=["App", "Broken"])


@pytest.mark.parametrize("plans", [True, False], ids=["plans", "noplans"])
@pytest.mark.parametrize("fail_in, dropped", [
    ("Broken", ["App", "Cache", "Mid", "Leaf"]),
    ("App callback", ["Root", "Broken", "App", "Extra", "Cache", "Mid", "Leaf"]),
])
def test_a_failed_resolve_destroys_what_it_made_last_made_first_before_raising(
        no_collector: None, plans: bool, fail_in: str, dropped: list[str]) -> None:
    log: list[str] = []
    c = container(plans=plans)
    graph(log, c, fail_in)
    for _ in range(2):  # the library's first resolve, then a replay where one is described
        log.clear()
        with pytest.raises(tether.FactoryError) as failed:
            c.resolve("Root")
        assert log == dropped  # already, while the error lives
        cause = failed.value.__cause__
        assert isinstance(cause, RuntimeError) and str(cause) == f"{fail_in} gives up"
        assert "gives up" in str(failed.value)
        # the lines it went through are still there (only the frames' locals were let go of)
        assert "in factory" in "".join(traceback.format_tb(cause.__traceback__)) or fail_in != "Broken"
        del failed, cause
    c.close()
