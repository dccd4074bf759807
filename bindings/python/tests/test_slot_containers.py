"""A singleton registered further up, made by a child's resolve, resolves its ``tether.lazy``,
``tether.weak_lazy`` and ``tether.factory`` slots in its own container, as the library binds the
slots (``slot_container``), not in the child the resolve came from."""

import tether
from tether import Scope


class Pool:
    pass


class Leaf:
    pass


class ChildLeaf(Leaf):
    pass


class Made:
    def __init__(self, name, pool):
        self.name, self.pool = name, pool


class ChildMade(Made):
    pass


class Holder:
    def __init__(self, lazy, weak, make):
        self.lazy, self.weak, self.make = lazy, weak, make


class Request:
    def __init__(self, holder):
        self.holder = holder


def test_a_roots_singleton_made_by_a_child_resolve_resolves_its_slots_in_the_root():
    child_made = []
    with tether.Container() as root:
        root.register(Pool, Pool, scope=Scope.SINGLETON)
        root.register(Leaf, Leaf, scope=Scope.SINGLETON)
        root.register(Made, Made, deps=[str, Pool])
        root.register(Holder, Holder, deps=[tether.lazy(Leaf), tether.weak_lazy(Leaf), tether.factory(Made)],
                      scope=Scope.SINGLETON)
        with tether.Container(root) as child:
            child.register(Pool, Pool, scope=Scope.SINGLETON)
            child.register(Leaf, lambda: child_made.append("leaf") or ChildLeaf())
            child.register(Made, lambda name, pool: child_made.append(name) or ChildMade(name, pool), deps=[str, Pool])
            child.register(Request, Request, deps=[Holder])
            holder = child.resolve(Request).holder
            assert holder is root.resolve(Holder)
            leaf = holder.lazy()
            assert leaf is root.resolve(Leaf) and type(leaf) is Leaf
            assert holder.weak() is leaf
            made = holder.make("ada")
            assert type(made) is Made and made.name == "ada" and made.pool is root.resolve(Pool)
            assert child_made == []
            # the child's own resolves still use its registrations
            assert type(child.resolve(Leaf)) is ChildLeaf and child_made == ["leaf"]


def test_a_transient_dependent_made_by_a_child_resolve_resolves_its_slots_in_the_child():
    with tether.Container() as root:
        root.register(Pool, Pool, scope=Scope.SINGLETON)
        root.register(Leaf, Leaf, scope=Scope.SINGLETON)
        root.register(Made, Made, deps=[str, Pool])
        root.register(Holder, Holder, deps=[tether.lazy(Leaf), tether.weak_lazy(Leaf), tether.factory(Made)])
        with tether.Container(root) as child:
            child.register(Leaf, ChildLeaf, scope=Scope.SINGLETON)
            child.register(Made, ChildMade, deps=[str, Pool])
            holder = child.resolve(Holder)
            leaf = holder.lazy()
            assert type(leaf) is ChildLeaf and leaf is child.resolve(Leaf) and holder.weak() is leaf
            assert type(holder.make("bob")) is ChildMade
