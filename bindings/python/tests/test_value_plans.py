"""A child made with values resolves through the plan the library described once from its parent:
value steps (TETHER_PLAN_STEP_VALUE) take the child's values by key, so the child needs no C
container of its own until something needs the library (then it gets one, values included)."""

from __future__ import annotations

import threading
from typing import Iterator

import pytest

import tether
from tether import Scope


class Request:
    def __init__(self, path: str) -> None:
        self.path = path


class User:
    pass


class Db:
    pass


class Repo:
    def __init__(self, db: Db) -> None:
        self.db = db


class Handler:
    def __init__(self, repo: Repo, request: Request) -> None:
        self.repo, self.request = repo, request


class Audit:
    def __init__(self, request: Request, user: User) -> None:
        self.request, self.user = request, user


class Session:
    def __init__(self, request: Request) -> None:
        self.request = request


class Uses:
    def __init__(self, session: Session, request: Request) -> None:
        self.session, self.request = session, request


def app(made: list[str]) -> tether.Container:
    root = tether.Container()

    def db() -> Db:
        made.append("Db")
        return Db()

    def handler(repo: Repo, request: Request) -> Handler:
        made.append("Handler")
        return Handler(repo, request)

    root.register(Db, db, scope=Scope.SINGLETON)
    root.register_value(Request)
    root.register_value(User)
    root.register(Repo)
    root.register(Handler, handler)
    root.register(Audit)
    return root


def test_a_value_child_runs_its_parents_plan_without_a_c_container() -> None:
    made: list[str] = []
    root = app(made)
    requests = [Request(f"/{i}") for i in range(5)]
    handlers = []
    for n, request in enumerate(requests):
        with tether.Container(parent=root, values={Request: request}) as child:
            h = child.resolve(Handler)
            assert child.resolve(Handler) is not h  # graph scope: one per resolve
            # served by the parent's described plan: no C container (the first child's resolve made
            # the root's singleton through the library)
            assert (child._handle is None) == (n > 0)
            handlers.append(h)
    assert [h.request for h in handlers] == requests
    assert len({id(h.repo.db) for h in handlers}) == 1  # the root's singleton
    assert made == ["Db"] + ["Handler"] * 10
    root.close()


def test_a_missing_value_is_the_librarys_not_found() -> None:
    root = app([])
    with tether.Container(parent=root, values={Request: Request("/")}) as child:
        with pytest.raises(tether.NotFoundError) as caught:
            child.resolve(Audit)  # User is declared, not provided
        assert f'no value for "{tether.key_name(User)}"' in str(caught.value)
        assert "values={" in str(caught.value)
    with tether.Container(parent=root, values={User: User()}) as child:
        with pytest.raises(tether.NotFoundError, match=f'no value for "{tether.key_name(Request)}"'):
            child.resolve(Handler)
    with tether.Container(parent=root, values={User: User(), Request: Request("/a")}) as child:
        audit = child.resolve(Audit)
        assert audit.request.path == "/a" and isinstance(audit.user, User)
    root.close()


def test_a_failing_factory_reports_the_librarys_message() -> None:
    root = tether.Container()
    root.register_value(Request)

    def broken(request: Request) -> Handler:
        raise RuntimeError(f"no handler for {request.path}")

    root.register(Handler, broken)
    for _ in range(2):  # the second through the kept builder
        with tether.Container(parent=root, values={Request: Request("/x")}) as child:
            with pytest.raises(tether.FactoryError, match="no handler for /x") as caught:
                child.resolve(Handler)
            assert isinstance(caught.value.__cause__, RuntimeError)
            assert child._handle is None
    root.close()


def test_values_of_concurrent_children_do_not_mix() -> None:
    root = app([])
    barrier = threading.Barrier(4)
    errors: list[BaseException] = []

    def serve(n: int) -> None:
        try:
            barrier.wait()
            for i in range(300):
                request = Request(f"/{n}/{i}")
                with tether.Container(parent=root, values={Request: request}) as child:
                    assert child.resolve(Handler).request is request
                    assert child.resolve(Handler).request is request
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=serve, args=(n,)) for n in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    root.close()


def test_a_child_that_needs_the_library_gets_its_values() -> None:
    root = app([])
    root.resolve(Db)  # the root's singleton exists: the plan's cached step has an instance
    request = Request("/lib")
    # a value shadowing a step of the graph makes another graph: the library resolves it
    db = Db()
    with tether.Container(parent=root, values={Request: request, Db: db}) as child:
        h = child.resolve(Handler)
        assert h.request is request and h.repo.db is db
        assert child._handle is not None
    # the value itself, C code using the child, a registration in the child
    with tether.Container(parent=root, values={Request: request}) as child:
        assert child.resolve(Handler).request is request
        assert child._handle is None
        assert child.resolve(Request) is request
        assert child._handle is not None
        assert child.resolve(Handler).request is request
    with tether.Container(parent=root, values={Request: request}) as child:
        assert child.handle  # C code may use it: the library has the value
        assert child.resolve(Handler).request is request
    with tether.Container(parent=root, values={Request: request}) as child:
        child.register(Repo, lambda db: Repo(db), deps=[Db])
        assert child.resolve(Handler).request is request
    with tether.Container(parent=root, values={Request: request}) as child:
        child.provide_value(User, User())
        assert isinstance(child.resolve(Audit).user, User) and child.resolve(Handler).request is request
    root.close()


def test_container_scope_in_a_value_child_is_torn_down_once() -> None:
    log: list[str] = []
    root = tether.Container()
    root.register_value(Request)

    def session(request: Request) -> Iterator[Session]:
        yield Session(request)
        log.append(f"Session {request.path}")

    root.register(Session, session, scope=Scope.CONTAINER)
    root.register(Uses)
    for path in ("/a", "/b"):
        child = tether.Container(parent=root, values={Request: Request(path)})
        first, second = child.resolve(Uses), child.resolve(Uses)
        assert first.session is second.session and first.session.request.path == path
        child.close()
        child.close()
    assert log == ["Session /a", "Session /b"]
    root.close()
    assert log == ["Session /a", "Session /b"]


def test_reconfiguring_the_parent_is_seen_by_the_next_child() -> None:
    root = app([])
    with tether.Container(parent=root, values={Request: Request("/")}) as child:
        assert type(child.resolve(Handler).repo) is Repo

    class OtherRepo(Repo):
        pass

    root.register(Repo, lambda db: OtherRepo(db), deps=[Db])
    with tether.Container(parent=root, values={Request: Request("/")}) as child:
        assert type(child.resolve(Handler).repo) is OtherRepo
        assert child._handle is None
    root.close()
