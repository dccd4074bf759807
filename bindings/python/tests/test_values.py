"""Per-request containers: values a child provides for a key its parent declared, and the
CONTAINER scope (one instance per resolving container, torn down with it)."""

from __future__ import annotations

import gc
import threading
import weakref
from typing import Any, Iterator

import pytest

import tether
from tether import Scope


class Request:
    def __init__(self, path: str) -> None:
        self.path = path


class Db:
    pass


class Session:
    def __init__(self, db: Db, request: Request) -> None:
        self.db, self.request = db, request


class UserRepo:
    def __init__(self, session: Session) -> None:
        self.session = session


class OrderRepo:
    def __init__(self, session: Session) -> None:
        self.session = session


class Handler:
    def __init__(self, users: UserRepo, orders: OrderRepo, request: Request) -> None:
        self.users, self.orders, self.request = users, orders, request


def app(log: list[str]) -> tether.Container:
    root = tether.Container()
    root.register(Db, scope=Scope.SINGLETON, close=lambda _db: log.append("Db"))
    root.register_value(Request)

    def session(db: Db, request: Request) -> Iterator[Session]:
        yield Session(db, request)
        log.append(f"Session {request.path}")

    root.register(Session, session, scope=Scope.CONTAINER)
    root.register(UserRepo)
    root.register(OrderRepo)
    root.register(Handler)
    return root


def test_declared_value_validates_but_is_missing_without_a_child() -> None:
    root = app([])
    root.validate()  # a declared value key is not missing
    with pytest.raises(tether.NotFoundError) as caught:
        root.resolve(Request)
    assert f'no value for "{tether.key_name(Request)}"' in str(caught.value)
    assert "child container" in str(caught.value) and "values={" in str(caught.value)
    assert "tether_" not in str(caught.value)  # rendered in Python's terms
    with pytest.raises(tether.NotFoundError, match="needed by"):
        root.resolve(Handler)
    root.close()


def test_each_request_gets_its_values_and_one_session() -> None:
    log: list[str] = []
    root = app(log)
    a, b = Request("/a"), Request("/b")
    with tether.Container(parent=root, values={Request: a}) as ra:
        with tether.Container(parent=root, values={Request: b}) as rb:
            h1, h2, h3 = ra.resolve(Handler), ra.resolve(Handler), rb.resolve(Handler)
            assert h1.request is a and h3.request is b
            assert h1.users.session is h1.orders.session is h2.users.session  # one per request
            assert h3.users.session is not h1.users.session
            assert h1.users.session.request is a and h3.users.session.request is b
            assert h1.users.session.db is h3.users.session.db  # the root's singleton
            assert ra.resolve(Session) is h1.users.session
            assert log == []
        assert log == ["Session /b"]
    assert log == ["Session /b", "Session /a"]
    root.close()
    assert log == ["Session /b", "Session /a", "Db"]


def test_two_concurrent_requests() -> None:
    log: list[str] = []
    root = app(log)
    barrier = threading.Barrier(2)
    seen: dict[str, set[Any]] = {}  # the sessions themselves: ids of freed ones may be reused
    errors: list[BaseException] = []

    def serve(path: str) -> None:
        try:
            request = Request(path)
            with tether.Container(parent=root, values={Request: request}) as r:
                barrier.wait()
                sessions = {r.resolve(Handler).users.session for _ in range(200)}
                assert r.resolve(Handler).request is request
                seen[path] = sessions
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=serve, args=(p,)) for p in ("/x", "/y")]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert len(seen["/x"]) == 1 and len(seen["/y"]) == 1 and seen["/x"] != seen["/y"]
    assert sorted(log) == ["Session /x", "Session /y"]
    root.close()


def test_values_are_released_with_their_container() -> None:
    root = tether.Container()
    root.register_value(Request)
    request = Request("/r")
    gone = weakref.ref(request)
    child = tether.Container(parent=root, values={Request: request})
    assert child.resolve(Request) is request
    del request
    gc.collect()
    assert gone() is not None  # the child holds its value
    child.close()
    gc.collect()
    assert gone() is None
    root.close()


def test_container_scope_reset_and_root() -> None:
    made: list[Db] = []
    dropped: list[Db] = []

    def make() -> Db:
        made.append(Db())
        return made[-1]

    root = tether.Container()
    root.register(Db, make, scope=Scope.CONTAINER, close=dropped.append)
    child = tether.Container(parent=root)
    first = child.resolve(Db)
    assert child.resolve(Db) is first
    assert root.resolve(Db) is not first  # resolved from the root: the root's own
    child.reset(Scope.CONTAINER)
    assert dropped == [first]
    assert child.resolve(Db) is not first
    child.close()
    root.close()
    assert len(made) == 3 and len(dropped) == 3


def test_a_singleton_cannot_take_a_childs_value() -> None:
    class Audit:
        def __init__(self, request: Request) -> None:
            self.request = request

    root = tether.Container()
    root.register_value(Request)
    root.register(Audit, deps=[Request], scope=Scope.SINGLETON)
    with tether.Container(parent=root, values={Request: Request("/")}) as r:
        with pytest.raises(tether.NotFoundError, match="no value for"):
            r.resolve(Audit)
    root.close()


def test_bad_values() -> None:
    root = tether.Container()
    with pytest.raises(TypeError, match="mapping"):
        tether.Container(parent=root, values=[1])  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="None"):
        tether.Container(parent=root, values={Request: None})
    with pytest.raises(ValueError, match="CONTAINER"):
        root.register(Db, scope=9)  # type: ignore[arg-type]
    root.close()  # the refused children were closed
