"""Each container keeps one map from key to entry (the plan the library described, the builders
bound to it, a singleton hit): what changes the configuration, resets or overrides makes the
next resolve from the container and its children look again, and which values shadow which
registrations is the library's answer, not the binding's."""

from __future__ import annotations

import tether
from tether import Scope


class Db:
    pass


class Repo:
    def __init__(self, db: Db) -> None:
        self.db = db


class Request:
    pass


class Handler:
    def __init__(self, repo: Repo, request: Request) -> None:
        self.repo, self.request = repo, request


def root_of(made: list[str], db_scope: Scope = Scope.SINGLETON) -> tether.Container:
    root = tether.Container()

    def db() -> Db:
        made.append("Db")
        return Db()

    def repo(db: Db) -> Repo:
        made.append("Repo")
        return Repo(db)

    root.register(Db, db, scope=db_scope)
    root.register(Repo, repo)
    root.register_value(Request)
    root.register(Handler)
    return root


def test_registering_in_the_parent_after_resolves_is_seen_from_it_and_its_children() -> None:
    made: list[str] = []
    root = root_of(made)
    child = tether.Container(root)
    first = [child.resolve(Repo) for _ in range(3)] + [root.resolve(Repo) for _ in range(3)]
    assert len({id(r.db) for r in first}) == 1 and made == ["Db"] + ["Repo"] * 6
    other = Db()
    root.register(Db, lambda: other, deps=[], scope=Scope.SINGLETON)
    again = [child.resolve(Repo) for _ in range(2)] + [root.resolve(Repo) for _ in range(2)]
    with tether.Container(root) as late:
        again.append(late.resolve(Repo))
    assert all(r.db is other for r in again)
    assert made == ["Db"] + ["Repo"] * 11
    child.close()
    root.close()


def test_registering_in_a_child_after_resolves_hides_the_parents_from_then_on() -> None:
    made: list[str] = []
    root = root_of(made)
    child = tether.Container(root)
    child.register(Request, Request, deps=[])
    before = [child.resolve(Repo) for _ in range(3)]  # the first through the library, then its plan
    assert len({id(r.db) for r in before}) == 1
    mine = Db()
    child.register(Db, lambda: mine, deps=[])
    after = [child.resolve(Repo) for _ in range(3)]
    assert all(r.db is mine for r in after)
    assert root.resolve(Repo).db is before[0].db  # the parent's own is untouched
    assert made == ["Db"] + ["Repo"] * 7
    child.close()
    root.close()


def test_a_reset_makes_the_next_resolve_from_parent_and_child_build_anew() -> None:
    made: list[str] = []
    root = root_of(made)
    child = tether.Container(root)
    old = [root.resolve(Db), child.resolve(Repo).db, root.resolve(Repo).db]
    assert old[0] is old[1] is old[2]
    root.reset(Scope.SINGLETON)
    new = [root.resolve(Db), child.resolve(Repo).db, root.resolve(Repo).db]
    assert new[0] is new[1] is new[2] and new[0] is not old[0]
    assert made.count("Db") == 2 and made.count("Repo") == 4
    child.close()
    root.close()


def test_an_override_set_and_cleared_is_seen_by_plans_and_hits() -> None:
    made: list[str] = []
    root = root_of(made)
    child = tether.Container(root)
    real = root.resolve(Db)
    assert child.resolve(Repo).db is real and root.resolve(Repo).db is real
    fake = Db()
    with root.override(Db, fake):
        assert root.resolve(Db) is fake
        assert child.resolve(Repo).db is fake and root.resolve(Repo).db is fake
        with tether.Container(root, values={Request: Request()}) as request:
            assert request.resolve(Handler).repo.db is fake
    assert root.resolve(Db) is real  # (what was built over the key is let go of, not the key's own)
    assert child.resolve(Repo).db is real and root.resolve(Repo).db is real
    assert made.count("Db") == 1 and made.count("Repo") == 7
    child.close()
    root.close()


def test_a_value_for_a_key_the_parent_registers_hides_it_as_the_library_says() -> None:
    made: list[str] = []
    root = root_of(made, Scope.GRAPH)
    root.resolve(Repo)  # the root's plan described and bound
    mine = Db()
    for _ in range(3):
        # Db is registered, not declared: the library makes the child's value its own registration
        with tether.Container(root, values={Db: mine}) as child:
            assert child.resolve(Repo).db is mine
            assert child.resolve(Db) is mine
    assert root.resolve(Repo).db is not mine
    assert made == ["Db", "Repo", "Repo", "Repo", "Repo", "Db", "Repo"]
    root.close()


def test_a_declared_value_takes_a_slot_and_the_parents_plan_serves_the_child() -> None:
    made: list[str] = []
    root = root_of(made)
    requests = [Request() for _ in range(4)]
    handlers = []
    for n, request in enumerate(requests):
        with tether.Container(root, values={Request: request}) as child:
            handlers.append(child.resolve(Handler))
            assert (child._handle is None) == (n > 0)  # (the first made the root's singleton)
    assert [h.request for h in handlers] == requests
    assert len({id(h.repo.db) for h in handlers}) == 1
    assert made == ["Db"] + ["Repo"] * 4
    root.close()


def test_a_value_key_registered_in_the_parent_later_is_the_childs_own_registration() -> None:
    made: list[str] = []
    root = root_of(made)
    with tether.Container(root, values={Request: Request()}) as child:
        child.resolve(Handler)
    theirs = Request()
    root.register(Request, lambda: theirs, deps=[])  # no longer a declared value
    mine = Request()
    with tether.Container(root, values={Request: mine}) as child:
        # the child's value is now its own registration, hiding the root's
        assert child.resolve(Handler).request is mine
    assert root.resolve(Handler).request is theirs
    root.close()


def test_a_registration_in_a_child_hides_its_value() -> None:
    made: list[str] = []
    root = root_of(made)
    first, second = Request(), Request()
    with tether.Container(root, values={Request: first}) as child:
        assert child.resolve(Handler).request is first
        child.register(Request, lambda: second, deps=[])
        assert child.resolve(Handler).request is second
        assert child.resolve(Request) is second
    with tether.Container(root, values={Request: first}) as child:  # the next child: its value again
        assert child.resolve(Handler).request is first
    assert made == ["Db"] + ["Repo"] * 3
    root.close()


def test_a_child_made_before_the_parent_changed_runs_the_new_plan() -> None:
    made: list[str] = []
    root = root_of(made)
    request = Request()
    with tether.Container(root, values={Request: request}) as warm:
        warm.resolve(Handler)
    child = tether.Container(root, values={Request: request})
    other = Db()
    root.register(Db, lambda: other, deps=[], scope=Scope.SINGLETON)
    handler = child.resolve(Handler)
    assert handler.repo.db is other and handler.request is request
    child.close()
    root.close()


def test_runtime_arguments_and_plain_builders_share_the_entry() -> None:
    root = tether.Container()
    calls: list[int] = []

    def greeter(n: int, db: Db) -> tuple[int, Db]:
        calls.append(n)
        return (n, db)

    root.register(Db, Db, deps=[], scope=Scope.SINGLETON)
    root.register("Greeter", greeter, deps=[int, Db])
    got = [root.resolve("Greeter", n) for n in range(4)]
    assert [g[0] for g in got] == [0, 1, 2, 3] and len({id(g[1]) for g in got}) == 1
    root.register(Db, Db, deps=[], scope=Scope.SINGLETON)  # reconfigured: the entry is looked up again
    after = root.resolve("Greeter", 9)
    assert after[0] == 9 and after[1] is not got[0][1]
    assert calls == [0, 1, 2, 3, 9]
    root.close()


def test_a_value_provided_in_a_child_after_resolves_hides_the_parents_registration() -> None:
    made: list[str] = []
    root = root_of(made, Scope.GRAPH)
    child = tether.Container(root)
    before = [child.resolve(Repo) for _ in range(3)]
    assert len({id(r.db) for r in before}) == 3  # graph scope: the root's factory each time
    mine = Db()
    child.provide_value(Db, mine)
    assert all(child.resolve(Repo).db is mine for _ in range(3))
    assert root.resolve(Repo).db is not mine
    request = Request()
    with tether.Container(root, values={Request: request}) as asked:  # a value first, then another
        assert asked.resolve(Handler).request is request
        asked.provide_value(Db, mine)
        handler = asked.resolve(Handler)
        assert handler.repo.db is mine and handler.request is request
    assert made == ["Db", "Repo"] * 3 + ["Repo"] * 3 + ["Db", "Repo"] + ["Db", "Repo"] + ["Repo"]
    child.close()
    root.close()


def test_a_factory_override_in_a_child_set_and_cleared() -> None:
    made: list[str] = []
    root = root_of(made)
    child = tether.Container(root)
    real = child.resolve(Repo).db
    fakes: list[Db] = []

    def fake() -> Db:
        fakes.append(Db())
        return fakes[-1]

    with child.override(Db, factory=fake, deps=[], scope=Scope.SINGLETON):
        got = [child.resolve(Repo).db for _ in range(3)]
        assert got == [fakes[0]] * 3
        assert root.resolve(Repo).db is real  # the parent's own is untouched
    assert all(child.resolve(Repo).db is real for _ in range(3))
    assert len(fakes) == 1 and made.count("Db") == 1
    child.close()
    root.close()
