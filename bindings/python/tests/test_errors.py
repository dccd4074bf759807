"""Errors: typed exceptions per status, Python exceptions as causes, wrong use caught before C."""

import gc
import re
import types
import traceback
import weakref
from typing import Annotated

import pytest

import tether
from tether import Scope, Status, object_table


def test_status_classes_mirror_the_c_statuses():
    pairs = {
        tether.InvalidArgumentError: Status.E_INVALID_ARGUMENT,
        tether.InvalidHandleError: Status.E_INVALID_HANDLE,
        tether.NotFoundError: Status.E_NOT_FOUND,
        tether.CycleError: Status.E_CYCLE,
        tether.RetainCycleError: Status.E_RETAIN_CYCLE,
        tether.FactoryError: Status.E_FACTORY_FAILED,
        tether.ArgumentMismatchError: Status.E_ARGUMENT_MISMATCH,
        tether.ExpiredError: Status.E_EXPIRED,
        tether.WrongContextError: Status.E_WRONG_CONTEXT,
        tether.NoMemoryError: Status.E_NO_MEMORY,
        tether.BufferTooSmallError: Status.E_BUFFER_TOO_SMALL,
    }
    api = tether._loader.api()
    for cls, status in pairs.items():
        assert issubclass(cls, tether.TetherError)
        assert cls.status == status
        assert api.tether_status_name(status).decode() == status.c_name


def test_not_found_names_the_path(c):
    c.register("Service", lambda repo: object(), deps=["Repository"])
    c.register("Repository", lambda log: object(), deps=["Logger"])
    with pytest.raises(tether.NotFoundError) as info:
        c.resolve("Service")
    assert str(info.value) == ('"Logger" is not registered (needed by "Service" -> "Repository"): '
                               'register it first (container.register("Logger", ...)) or check the spelling')
    assert info.value.status == Status.E_NOT_FOUND
    with pytest.raises(LookupError):  # NotFoundError is a LookupError too
        c.resolve("Nothing")


def test_factory_exception_is_the_cause_with_its_traceback(c):
    def broken_factory():
        raise KeyError("database is down")

    c.register("Db", broken_factory)
    with pytest.raises(tether.FactoryError) as info:
        c.resolve("Db")
    err = info.value
    assert isinstance(err.__cause__, KeyError)
    assert "database is down" in str(err)  # the library's message carries the Python one
    frames = [frame.name for frame in traceback.extract_tb(err.__cause__.__traceback__)]
    assert "broken_factory" in frames  # traceback intact, down to the raising line


def test_callback_exception_is_the_cause(c):
    def complete(r, obj):
        raise RuntimeError("cannot complete")

    c.register("X", dict, on_complete=complete)
    with pytest.raises(tether.FactoryError, match="completion callback #1") as info:
        c.resolve("X")
    assert isinstance(info.value.__cause__, RuntimeError)


def test_factory_returning_none_fails(c):
    c.register("Nothing", lambda: None)
    with pytest.raises(tether.FactoryError, match="returned None") as info:
        c.resolve("Nothing")
    assert isinstance(info.value.__cause__, ValueError)


def test_failure_tears_down_the_partial_graph_once(c):
    made: list[weakref.ref] = []
    drops: list[str] = []

    class Part:
        def __init__(self, name: str) -> None:
            self.name = name
            made.append(weakref.ref(self))

        def __del__(self) -> None:
            drops.append(self.name)

    before = object_table.live_count()
    c.register("Leaf", lambda: Part("Leaf"))
    c.register("Mid", lambda leaf: Part("Mid"), deps=["Leaf"], on_complete=lambda r, m: setattr(m, "back", r.weak("Top")))
    c.register("Top", lambda mid: 1 / 0, deps=["Mid"])
    with pytest.raises(tether.FactoryError) as info:
        c.resolve("Top")
    assert isinstance(info.value.__cause__, ZeroDivisionError)
    del info
    gc.collect()
    assert [ref() for ref in made] == [None, None]
    assert sorted(drops) == ["Leaf", "Mid"]  # each exactly once
    assert object_table.live_count() == before


def test_failed_singleton_is_not_cached(c, count):
    def flaky():
        count("make")
        if count["make"] == 1:
            raise OSError("first time fails")
        return object()

    c.register("S", flaky, scope=Scope.SINGLETON)
    with pytest.raises(tether.FactoryError):
        c.resolve("S")
    s = c.resolve("S")
    assert c.resolve("S") is s and count["make"] == 2


def test_keyboard_interrupt_is_not_wrapped(c):
    def interrupted():
        raise KeyboardInterrupt

    c.register("K", interrupted)
    with pytest.raises(KeyboardInterrupt):
        c.resolve("K")


def test_nested_resolve_failure_chains_causes(c):
    c.register("Inner", lambda: [][1])
    c.register("Outer", lambda: c.resolve("Inner"))
    with pytest.raises(tether.FactoryError) as info:
        c.resolve("Outer")
    inner = info.value.__cause__
    assert isinstance(inner, tether.FactoryError)
    assert isinstance(inner.__cause__, IndexError)


def test_wrong_use_raises_before_reaching_c(c):
    with pytest.raises(TypeError):
        c.register(42, lambda: 1)
    with pytest.raises(ValueError):
        c.register("", lambda: 1)
    with pytest.raises(TypeError, match="callable"):
        c.register("K", 5)
    with pytest.raises(TypeError, match="scope"):
        c.register("K", dict, scope="singleton")
    with pytest.raises(ValueError, match="scope"):
        c.register("K", dict, scope=9)
    with pytest.raises(TypeError, match="deps"):
        c.register("K", lambda x: x, deps="Logger")
    with pytest.raises(TypeError, match="not a dependency"):
        c.register("K", lambda x: x, deps=[3.5])
    with pytest.raises(TypeError, match="positionally"):
        c.register("K", lambda: 1, deps=["A", "B"])
    with pytest.raises(TypeError, match="on_complete"):
        c.register("K", dict, on_complete=5)
    with pytest.raises(TypeError, match="marker"):
        c.register(tether.weak("A"), dict)
    with pytest.raises(TypeError):
        c.resolve(None)
    with pytest.raises(ValueError):
        c.resolve("")
    with pytest.raises(TypeError):
        c.reset("all")
    with pytest.raises(TypeError):
        tether.Container(parent="nope")
    with pytest.raises(TypeError):
        tether.weak(3)
    assert "K" not in [r.name for r in c._regs.values()]  # nothing half-registered


def test_autowire_errors_name_the_parameter(c):
    class NoHint:
        def __init__(self, thing) -> None:
            pass

    class OptionalHint:
        def __init__(self, thing: "int | None") -> None:
            pass

    with pytest.raises(TypeError, match="'thing'.*no type hint"):
        c.register(NoHint)
    with pytest.raises(TypeError, match="'thing'"):
        c.register(OptionalHint)


def test_closed_container_is_an_invalid_handle():
    c = tether.Container()
    c.close()
    c.close()  # idempotent
    with pytest.raises(tether.InvalidHandleError):
        c.resolve("X")
    with pytest.raises(tether.InvalidHandleError):
        c.register("X", dict)
    with pytest.raises(tether.InvalidHandleError):
        c.handle


def test_closing_a_parent_with_children_is_refused():
    parent = tether.Container()
    child = tether.Container(parent)
    with pytest.raises(tether.InvalidArgumentError, match="child"):
        parent.close()
    child.close()
    parent.close()


def test_resolver_outside_its_callback_is_wrong_context(c):
    kept = []
    c.register("A", dict, on_complete=lambda r, a: kept.append(r))
    c.register("B", dict)
    c.resolve("A")
    with pytest.raises(tether.WrongContextError):
        kept[0].get("B")


def test_validate_reports_every_problem(c):
    c.register("A", lambda b, x: 1, deps=["B", "Missing1"])
    c.register("B", lambda m: 1, deps=["Missing2"])
    with pytest.raises(tether.NotFoundError) as info:
        c.validate()
    text = str(info.value)
    assert "Missing1" in text and "Missing2" in text
    assert len(info.value.problems) >= 2


def _speaks_python(error: BaseException) -> str:
    """The message, checked for C: no tether_* function, TETHER_* macro or NULL."""
    text = str(error)
    assert not re.search(r"tether_\w+|TETHER_\w+|NULL", text), text
    return text


def test_not_found_says_register(c):
    c.register("A", lambda b: object(), deps=["B"])
    with pytest.raises(tether.NotFoundError) as info:
        c.resolve("A")
    assert 'container.register("B", ...)' in _speaks_python(info.value)


def test_cycle_says_lazy_or_on_complete(c):
    c.register("A", lambda b: object(), deps=["B"])
    c.register("B", lambda a: object(), deps=["A"])
    with pytest.raises(tether.CycleError) as info:
        c.resolve("A")
    assert _speaks_python(info.value) == (
        'the constructors of "A" -> "B" -> "A" need each other: set "B"\'s dependency on "A" after construction '
        'in a completion callback of "B" (on_complete=), or make it weak-lazy (deps=[tether.weak_lazy("A")])')


def test_retain_cycle_says_r_weak_and_keeps_its_cause(c):
    c.register("Parent", lambda child: types.SimpleNamespace(child=child), deps=["Child"])
    c.register("Child", types.SimpleNamespace, on_complete=lambda r, ch: setattr(ch, "parent", r.get("Parent")))
    with pytest.raises(tether.RetainCycleError) as info:  # one status per kind of failure
        c.resolve("Parent")
    cause = info.value.__cause__
    assert isinstance(cause, tether.RetainCycleError)
    assert _speaks_python(cause) == ('r.get("Parent") from "Child" makes a strong reference that closes the retain '
                                     'cycle "Parent" -> "Child" -> "Parent": take it with r.weak("Parent") instead')
    assert _speaks_python(info.value).startswith('completion callback #1 of "Child" raised RetainCycleError: ')


def test_factory_failure_says_it_raised_and_chains_the_original(c):
    boom = ConnectionError("db unreachable")

    def creds():
        raise boom

    c.register("App", lambda creds: object(), deps=["Creds"])
    c.register("Creds", creds)
    with pytest.raises(tether.FactoryError) as info:
        c.resolve("App")
    assert info.value.__cause__ is boom
    assert _speaks_python(info.value) == (
        'the factory for "Creds" raised ConnectionError: db unreachable (while resolving "App" -> "Creds")')


def test_long_keys_and_paths_are_cut_short(c):
    keys = [f"K{i}" for i in range(12)]
    for key, dep in zip(keys, keys[1:] + ["x" * 500]):
        c.register(key, lambda d: object(), deps=[dep])
    with pytest.raises(tether.NotFoundError) as info:
        c.resolve("K0")
    text = _speaks_python(info.value)
    assert '(needed by "K0" -> "K1" -> "K2" -> ... (6 more) -> "K9" -> "K10" -> "K11")' in text
    assert '"' + "x" * 40 + "..." + "x" * 40 + '"' in text and len(text) < 400


class Repo:
    pass


class UsesRepo:
    def __init__(self, repo: Repo) -> None:
        self.repo = repo


def test_a_missing_class_key_suggests_registering_the_class(c):
    c.register(UsesRepo)
    with pytest.raises(tether.NotFoundError) as info:
        c.resolve(UsesRepo)
    assert "container.register(Repo)" in str(info.value)
    assert '"' + Repo.__module__ + '.Repo", ...' not in str(info.value)
    c.register(Repo)  # the fix, as suggested
    assert isinstance(c.resolve(UsesRepo).repo, Repo)


def test_an_error_is_not_chained_to_an_internal_lookup(c):
    import traceback

    with pytest.raises(tether.NotFoundError) as info:
        c.resolve("Nowhere")
    text = "".join(traceback.format_exception(info.type, info.value, info.value.__traceback__))
    assert text.count("Traceback") == 1 and "During handling" not in text
    assert info.value.__cause__ is None and info.value.__suppress_context__


def test_validate_speaks_python_for_cycles(c):
    c.register("A", lambda b: object(), deps=["B"])
    c.register("B", lambda a: object(), deps=["A"])
    c.register("X", lambda y: object(), deps=["Y"])
    c.register("Y", lambda x: object(), deps=[tether.lazy("X")])
    with pytest.raises(tether.CycleError) as info:
        c.validate()
    text = str(info.value)
    assert 'deps=[tether.weak_lazy("A")]' in text and 'deps=[tether.weak_lazy("X")]' in text
    assert "TETHER_" not in text and "tether_on_complete" not in text
    assert len(info.value.problems) == 3  # type: ignore[attr-defined]  (the count, then one line each)


def test_runtime_argument_advice_speaks_python_and_works_when_applied(c):
    class Clock:
        def __init__(self, tick: Annotated[int, tether.arg]) -> None:
            self.tick = tick

    c.register("Clock", Clock)
    c.register("Report", lambda clock: clock, deps=["Clock"])
    with pytest.raises(tether.ArgumentMismatchError) as info:
        c.validate()
    assert 'declare the parameter tether.factory("Clock")' in str(info.value)
    assert 'or resolve it with container.resolve("Clock", ...)' in str(info.value)
    with pytest.raises(tether.ArgumentMismatchError) as info:
        c.resolve("Report")
    assert "container.resolve(" in str(info.value) and 'needed by "Report"' in str(info.value)
    c.register("Report", lambda clock: clock, deps=[object])  # applied: the caller hands it over
    c.validate()
    clock = c.resolve("Clock", 7)
    assert c.resolve("Report", clock) is clock
