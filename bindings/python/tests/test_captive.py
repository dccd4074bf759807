"""Captive dependencies (a singleton holding a shorter-lived instance): validate reports them,
a strict container refuses to build them. And runtime arguments on a shared scope are refused."""

import pytest

import tether
from tether import Scope, Status


class Short:
    pass


def register_captive(c, count, scope=Scope.GRAPH, declared=False):
    c.register("Short", lambda: count.append("Short") or Short(), scope=scope)
    if declared:
        c.register("Holder", lambda: count.append("Holder") or object(), scope=Scope.SINGLETON,
                   on_complete=tether.complete(lambda holder, short: None, deps=["Short"]))
    else:
        c.register("Holder", lambda short: count.append("Holder") or object(), deps=["Short"], scope=Scope.SINGLETON)


@pytest.mark.parametrize("declared", [False, True])
@pytest.mark.parametrize("scope", [Scope.GRAPH, Scope.TRANSIENT, Scope.WEAK])
def test_validate_reports_a_captive_dependency(c, scope, declared):
    count = []
    register_captive(c, count, scope, declared)
    with pytest.raises(tether.CaptiveDependencyError) as info:
        c.validate()
    assert info.value.status == Status.E_CAPTIVE_DEPENDENCY
    assert 'captive dependency "Holder" -> "Short"' in info.value.message
    assert 'make "Short" a singleton, or inject it lazily' in info.value.message
    assert count == []
    c.resolve("Holder")  # not strict: built
    assert sorted(count) == ["Holder", "Short"]


def test_strict_container_refuses_a_captive_dependency():
    count = []
    with tether.Container(strict=True) as c:
        register_captive(c, count)
        with pytest.raises(tether.CaptiveDependencyError, match="tether_container_set_strict"):
            c.resolve("Holder")
        assert count == []  # refused before any factory ran
        assert isinstance(c.resolve("Short"), Short)
        with tether.Container(c) as child:  # children start strict
            child.register("Holder", lambda short: object(), deps=["Short"], scope=Scope.SINGLETON)
            with pytest.raises(tether.CaptiveDependencyError):
                child.resolve("Holder")
        with tether.Container(c, strict=False) as lenient:
            lenient.register("Holder", lambda short: object(), deps=["Short"], scope=Scope.SINGLETON)
            lenient.resolve("Holder")


def test_runtime_arguments_on_a_shared_scope_are_refused(c):
    for scope in (Scope.SINGLETON, Scope.WEAK):
        with pytest.raises(tether.InvalidArgumentError, match="takes runtime arguments and cannot have the"):
            c.register(f"Conn{int(scope)}", lambda n: n, deps=[int], scope=scope)
    c.register("Conn", lambda n: [n], deps=[int], scope=Scope.TRANSIENT)
    assert c.resolve("Conn", 1) == [1] and c.resolve("Conn", 2) == [2]
