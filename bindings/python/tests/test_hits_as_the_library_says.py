"""What Python hands out without a call is what the library answers: after every change, from
Python or from C code sharing the containers, each container of a chain (root, child, grandchild)
resolves every SINGLETON, WEAK and CONTAINER key to the instance a C client resolving the same key
from the same container gets (``tether_resolve``), and a singleton or weak hit goes back to the
library exactly when the library's hit word of that container moved (``tether_container_hit_word``).
Every test runs on containers that replay plans (``make``; on containers made with TETHER_NO_PLANS=1
too until branch noplansoff)."""

from __future__ import annotations

from typing import Any

from test_native_refs import lib, register_native  # noqa: F401 (lib: the fixture)
from test_singleton_hits import c_reset, c_resolve, make, served  # noqa: F401 (make: the fixture)

import tether
from tether import Scope

api = tether._loader.api()
KEYS = ("S", "W", "K")  # SINGLETON, WEAK, CONTAINER


def address(obj: Any) -> int:
    return obj.address if isinstance(obj, tether.NativeRef) else id(obj)


def agree(containers: list[tether.Container], keys: tuple[str, ...] = KEYS) -> list[Any]:
    """Resolves every key from every container in Python, twice (the second may be a hit), and checks
    that a C client resolving it from the same container gets the same instance; returns what Python
    got (held, so a WEAK instance stays the library's answer)."""
    got = []
    for c in containers:
        for key in keys:
            obj = c.resolve(key)
            assert c.resolve(key) is obj, f"{key}: two resolves, two instances"
            assert c_resolve(c, key) == address(obj), f"{key}: Python and the library disagree"
            got.append(obj)
    return got


def chain(make: Any) -> list[tether.Container]:
    root = make()
    child = make(root)
    grandchild = make(child)
    root.register("S", make.factory("S"), scope=Scope.SINGLETON)
    root.register("W", make.factory("W"), scope=Scope.WEAK)
    root.register("K", make.factory("K"), scope=Scope.CONTAINER)
    child.register("Other", make.factory("Other"))  # a C container of its own
    return [root, child, grandchild]


def test_resets_from_python_and_from_c_through_the_same_containers(make):
    containers = chain(make)
    root, child, grandchild = containers
    before = agree(containers)
    assert all(served(c, "S") is before[0] for c in containers)  # one root singleton, served in Python
    c_reset(root)
    after = agree(containers)
    assert after[0] is not before[0] and after[3] is after[0] and after[6] is after[0]
    assert after[1] is before[1] and after[2] is before[2]  # the weak one still held, container scope kept
    root.reset(Scope.WEAK)
    again = agree(containers)
    assert again[1] is not before[1] and again[0] is after[0]
    assert api.tether_reset(child.handle, int(Scope.CONTAINER)) == 0, api.last_error()
    last = agree(containers)
    assert last[5] is not again[5] and last[2] is again[2] and last[0] is again[0]
    root.reset(Scope.SINGLETON)
    assert agree(containers)[0] is not last[0]


def test_a_key_hidden_by_c_in_a_child_is_the_childs_from_then_on(make, lib):
    containers = chain(make)
    root, child, grandchild = containers
    before = agree(containers)
    register_native(lib, child, "W", Scope.WEAK)  # C code hides the root's weak key below the root
    register_native(lib, child, "S", Scope.SINGLETON)  # ...and its singleton
    got = agree(containers, ("S", "W"))
    assert got[0] is before[0] and got[1] is before[1]  # the root is unchanged
    assert all(isinstance(obj, tether.NativeRef) for obj in got[2:])
    assert address(got[2]) == address(got[4]) and address(got[3]) == address(got[5])
    for obj in got[2:]:
        obj.release()


def test_changes_in_a_child_or_a_sibling_keep_the_hits_above(make, lib):
    containers = chain(make)
    root, child, grandchild = containers
    sibling = make(root)
    before = agree(containers)
    seen = [root._hit_word.value, child._hit_word.value]
    register_native(lib, grandchild, "Native")
    c_reset(grandchild)
    sibling.register("S", make.factory("S in the sibling"), scope=Scope.SINGLETON)
    sibling.resolve("S")
    sibling.close()
    assert [root._hit_word.value, child._hit_word.value] == seen  # the library moved neither word
    assert served(root, "S") is before[0] and served(child, "S") is before[0]
    assert served(root, "W") is before[1] and served(child, "W") is before[1]
    assert agree(containers) == before


def test_container_scope_is_per_container_and_goes_with_it(make):
    containers = chain(make)
    root, child, grandchild = containers
    got = agree(containers, ("K",))
    assert len({id(obj) for obj in got}) == 3  # one per container
    other = make(root)
    assert other.resolve("K") is not got[0] and c_resolve(other, "K") == id(other.resolve("K"))
    grandchild.close()
    child.close()
    assert make.alive() >= 2  # root's and other's still held by them; the closed ones' by `got` only
    assert agree([root, other], ("K", "S"))[0] is got[0]


def test_a_replayed_graph_takes_the_singletons_the_library_answers(make):
    root = make()
    root.register("Db", make.factory("Db"), scope=Scope.SINGLETON)

    class Repo:
        def __init__(self, db: Any) -> None:
            self.db = db

    root.register("Repo", Repo, deps=["Db"])
    request = make(root)
    request.register("Request", make.factory("Request"))  # a plan of its own, over the root's singleton
    for reset in (lambda: None, lambda: c_reset(root), lambda: root.reset(Scope.SINGLETON), lambda: c_reset(root)):
        reset()
        for c in (request, root, request):
            repo = c.resolve("Repo")
            assert repo.db is c.resolve("Db") and c_resolve(c, "Db") == id(repo.db)
    assert len([ref for ref in make.made if ref() is not None]) == 1  # each reset let the old Db go
