"""Eight threads' synchronous request-scoped (CONTAINER) factories run at the same time: nothing in
the package serializes them (the library creates each (container, key) in its own cell)."""

from __future__ import annotations

import threading

import tether
from tether import Scope


class Request:
    pass


class Session:
    def __init__(self, request: Request) -> None:
        self.request = request


def test_eight_threads_container_scoped_factories_overlap() -> None:
    n = 8
    inside = threading.Barrier(n, timeout=20)  # opens only when all n factories run at once
    sessions: list[Session] = []

    def session(request: Request) -> Session:
        inside.wait()
        return Session(request)

    root = tether.Container()
    root.register_value(Request)
    root.register(Session, session, scope=Scope.CONTAINER)
    errors: list[BaseException] = []

    def serve() -> None:
        try:
            with tether.Container(parent=root, values={Request: Request()}) as request:
                made = request.resolve(Session)
                assert request.resolve(Session) is made
                sessions.append(made)
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=serve) for _ in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert errors == [] and len({id(s) for s in sessions}) == n
    root.close()
