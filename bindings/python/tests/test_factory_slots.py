"""Factories with runtime arguments as dependencies: ``tether.factory(K)`` gives the factory a
callable ``make(*args)`` that builds a new K with those runtime arguments (its other dependencies
injected as usual, from the container the dependent was resolved from). Validate accepts such a
slot on a key taking runtime arguments, and its advice for a plain dependency on one works."""

import gc
from typing import Annotated

import pytest

import tether
from tether import Scope


class Pool:
    pass


class Greeter:
    def __init__(self, name, pool):
        self.name, self.pool = name, pool


class Greetings:
    def __init__(self, make):
        self.make = make


def setup(c, greetings_scope=Scope.GRAPH):
    c.register(Pool, Pool, scope=Scope.SINGLETON)
    c.register(Greeter, Greeter, deps=[str, Pool])
    c.register(Greetings, Greetings, deps=[tether.factory(Greeter)], scope=greetings_scope)


def test_make_builds_a_new_instance_per_call_with_its_arguments_and_dependencies(c):
    setup(c)
    c.validate()
    greetings = c.resolve(Greetings)
    ada, bob = greetings.make("ada"), greetings.make("bob")
    assert (ada.name, bob.name) == ("ada", "bob")
    assert ada is not bob and ada.pool is bob.pool is c.resolve(Pool)
    assert repr(greetings.make) == f"<tether.factory {tether.key_name(Greeter)!r}>"


def test_wrong_arguments_raise_and_build_nothing(c):
    made = []
    c.register(Pool, Pool)
    c.register(Greeter, lambda name, pool: made.append(name) or Greeter(name, pool), deps=[str, Pool])
    c.register(Greetings, Greetings, deps=[tether.factory(Greeter)])
    make = c.resolve(Greetings).make
    with pytest.raises(tether.ArgumentMismatchError):
        make(7)
    with pytest.raises(tether.ArgumentMismatchError):
        make()
    with pytest.raises(tether.ArgumentMismatchError):
        make("a", "b")
    assert made == []


def test_make_builds_from_the_container_the_dependent_came_from_and_not_after_it_closed():
    with tether.Container() as root:
        setup(root)
        child = tether.Container(root)

        class ChildPool(Pool):
            pass

        child.register(Pool, ChildPool)
        make = child.resolve(Greetings).make
        assert isinstance(make("x").pool, ChildPool)
        child.close()
        with pytest.raises(tether.InvalidHandleError, match="closed"):
            make("y")


def test_a_singleton_dependent_keeps_its_factory_and_teardown_runs_once():
    log = []

    def greeter(name, pool):
        yield Greeter(name, pool)
        log.append(name)

    with tether.Container() as c:
        c.register(Pool, Pool, scope=Scope.SINGLETON)
        c.register(Greeter, greeter, deps=[str, Pool])
        c.register(Greetings, Greetings, deps=[tether.factory(Greeter)], scope=Scope.SINGLETON)
        greetings = c.resolve(Greetings)
        assert c.resolve(Greetings) is greetings
        made = greetings.make("ada")
        assert made.name == "ada"
        del made
        gc.collect()
    gc.collect()
    assert log == ["ada"]


def test_validates_advice_for_a_plain_dependency_on_an_arguments_key_works(c):
    setup(c)
    c.register("Hello", lambda greeter: greeter, deps=[Greeter])
    with pytest.raises(tether.ArgumentMismatchError) as validated:
        c.validate()
    assert "tether.factory" in str(validated.value)
    with pytest.raises(tether.ArgumentMismatchError, match="tether.factory"):
        c.resolve("Hello")
    c.register("Hello", lambda make: make("hi"), deps=[tether.factory(Greeter)])  # the advice
    c.validate()
    assert c.resolve("Hello").name == "hi"


def test_validate_and_dot_see_a_factory_slot(c):
    c.register(Greetings, Greetings, deps=[tether.factory("Nope")])
    with pytest.raises(tether.NotFoundError, match="Nope"):
        c.validate()
    assert f'"{tether.key_name(Greetings)}" -> "Nope" [style=dotted, arrowhead=diamond, label="factory"]' in c.to_dot()


def test_autowired_from_an_annotation(c):
    c.register(Pool, Pool)
    c.register(Greeter, Greeter, deps=[str, Pool])

    class Hall:
        def __init__(self, make: Annotated[object, tether.factory(Greeter)]):
            self.make = make

    c.register(Hall)
    assert c.resolve(Hall).make("z").name == "z"
