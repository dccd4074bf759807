"""The cycles of the libraries Tether started from, done Tether's way, in Python.

    TETHER_LIBRARY=build/lib/libtether.so python3 examples/python/seeds.py

- Resolver: A(B) -> B(C) -> C{weak a}, set by A's completion (``resolveProperties``)
- Resolver: A(B) -> B(C) -> C(``tether.weak_lazy(A)``) (``@WeakLazyInjected``): the callable answers
  the A of the graph C was made in, without a shared scope
- Swinject: Parent(Child), Child{weak parent} set in Child's ``initCompleted`` (``on_complete=``)
- Swinject: Parent{child}, Child{weak parent}: property/property, both set in completions
- Dip: Client(Server), Server{weak client} set in Server's ``resolvingProperties``

Each scenario checks that every factory ran once and every teardown ran once.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any, Callable, Iterator

try:
    import tether
except ImportError:  # running from a checkout without installing the package
    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bindings" / "python"))
    import tether

made: dict[str, int] = {}
torn_down: dict[str, int] = {}


def counted(cls: type) -> Callable[..., Iterator[Any]]:
    """A generator factory for ``cls``: counts the construction and the teardown."""

    def factory(*args: Any) -> Iterator[Any]:
        made[cls.__name__] = made.get(cls.__name__, 0) + 1
        yield cls(*args)
        torn_down[cls.__name__] = torn_down.get(cls.__name__, 0) + 1

    return factory


def check(scenario: str, names: list[str]) -> None:
    counts = {name: (made.get(name, 0), torn_down.get(name, 0)) for name in names}
    assert all(c == (1, 1) for c in counts.values()), f"{scenario}: made, torn down: {counts}"
    print(f"{scenario}: ok (each factory once, each teardown once)")
    made.clear()
    torn_down.clear()


# -- Resolver ------------------------------------------------------------------------------------


class C:
    a: Callable[[], Any] | None = None


class B:
    def __init__(self, c: C) -> None:
        self.c = c


class A:
    def __init__(self, b: B) -> None:
        self.b = b


def resolver_resolve_properties() -> None:
    with tether.Container() as c:
        c.register(A, counted(A), deps=[B], on_complete=lambda r, a: setattr(r.get(C), "a", r.weak(A)))
        c.register(B, counted(B), deps=[C])
        c.register(C, counted(C))
        c.validate()
        a = c.resolve(A)
        assert a.b.c.a is not None and a.b.c.a() is a
        del a
    check("Resolver A(B) B(C) C{weak a}, resolveProperties", ["A", "B", "C"])


class LazyC:
    def __init__(self, a: Callable[[], Any]) -> None:
        self.a = a  # tether.weak_lazy(A): a callable


def resolver_weak_lazy_injected() -> None:
    with tether.Container() as c:
        c.register(A, counted(A), deps=[B])
        c.register(B, counted(B), deps=["LazyC"])
        c.register("LazyC", counted(LazyC), deps=[tether.weak_lazy(A)])
        c.validate()
        a = c.resolve(A)
        assert a.b.c.a() is a  # the A that holds this C, not a new one
        del a
    check("Resolver A(B) B(C) C(weak-lazy a), WeakLazyInjected", ["A", "B", "LazyC"])


# -- Swinject ------------------------------------------------------------------------------------


class Child:
    parent: Callable[[], Any] | None = None


class Parent:
    child: Child | None = None

    def __init__(self, child: Child | None = None) -> None:  # property/property: set in a completion
        self.child = child


def swinject_init_completed() -> None:
    with tether.Container() as c:
        c.register(Parent, counted(Parent), deps=[Child])
        c.register(Child, counted(Child), on_complete=lambda r, child: setattr(child, "parent", r.weak(Parent)))
        p = c.resolve(Parent)
        assert p.child is not None and p.child.parent is not None and p.child.parent() is p
        del p
    check("Swinject Parent(Child) Child{weak parent}, initCompleted", ["Parent", "Child"])


def swinject_property_property() -> None:
    with tether.Container() as c:
        c.register(Parent, counted(Parent), on_complete=lambda r, p: setattr(p, "child", r.get(Child)))
        c.register(Child, counted(Child), on_complete=lambda r, child: setattr(child, "parent", r.weak(Parent)))
        p = c.resolve(Parent)
        assert p.child is not None and p.child.parent is not None and p.child.parent() is p
        del p
    check("Swinject Parent{child} Child{weak parent}, property/property", ["Parent", "Child"])


# -- Dip -----------------------------------------------------------------------------------------


class Server:
    client: Callable[[], Any] | None = None


class Client:
    def __init__(self, server: Server) -> None:
        self.server = server


def dip_client_server() -> None:
    with tether.Container() as c:
        c.register(Client, counted(Client), deps=[Server])
        c.register(Server, counted(Server), on_complete=lambda r, server: setattr(server, "client", r.weak(Client)))
        client = c.resolve(Client)
        assert client.server.client is not None and client.server.client() is client
        del client
    check("Dip Client(Server) Server{weak client}, resolvingProperties", ["Client", "Server"])


def main() -> int:
    resolver_resolve_properties()
    resolver_weak_lazy_injected()
    swinject_init_completed()
    swinject_property_property()
    dip_client_server()
    print("seeds ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
