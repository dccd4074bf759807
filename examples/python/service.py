"""A web-service-shaped app on Tether: a root container of singletons, one child container per
request (its Request provided as a value), a per-request database session (Scope.CONTAINER)
torn down with the request, a cycle (a User and its Profile pointing back weakly), and the same
service served from async code.

    python examples/python/service.py
"""

from __future__ import annotations

import asyncio
from typing import AsyncIterator, Iterator

import tether
from tether import Scope

events: list[str] = []


class Settings:
    dsn = "sqlite://memory"


class Database:
    """A connection pool: opened once, closed when the app shuts down."""

    def __init__(self, settings: Settings) -> None:
        self.dsn = settings.dsn


class Request:
    def __init__(self, path: str, user_id: int) -> None:
        self.path, self.user_id = path, user_id


class Session:
    """One transaction per request, shared by every repository of that request."""

    def __init__(self, db: Database, request: Request) -> None:
        self.db, self.request = db, request


class Profile:
    user = None  # the owning User, set weakly once both exist: the back edge of the cycle


class User:
    def __init__(self, profile: Profile) -> None:
        self.profile = profile


class UserRepo:
    def __init__(self, session: Session, user: User) -> None:
        self.session, self.user = session, user


class AuditLog:
    def __init__(self, session: Session) -> None:
        self.session = session


class Handler:
    def __init__(self, users: UserRepo, audit: AuditLog, request: Request) -> None:
        self.users, self.audit, self.request = users, audit, request

    def handle(self) -> str:
        same = self.users.session is self.audit.session
        back = self.users.user.profile.user() is self.users.user
        return f"{self.request.path} user={self.request.user_id} one session={same} cycle closed={back}"


def make_db(settings: Settings) -> Iterator[Database]:
    db = Database(settings)
    events.append("open db")
    yield db
    events.append("close db")  # runs when the root container closes


def make_session(db: Database, request: Request) -> Iterator[Session]:
    events.append(f"begin {request.path}")
    yield Session(db, request)
    events.append(f"commit {request.path}")  # runs when the request's container closes


def app() -> tether.Container:
    root = tether.Container()
    root.register(Settings, scope=Scope.SINGLETON)
    root.register(Database, make_db, scope=Scope.SINGLETON)
    root.register_value(Request)  # each request's container provides it
    root.register(Session, make_session, scope=Scope.CONTAINER)
    root.register(Profile, on_complete=tether.complete(lambda p, user: setattr(p, "user", user), deps=[tether.weak(User)]))
    root.register(User)
    root.register(UserRepo)
    root.register(AuditLog)
    root.register(Handler)
    root.validate()  # Request is declared, not missing
    return root


async def serve_async(root: tether.Container, path: str) -> str:
    async def make_cache() -> AsyncIterator[dict]:
        await asyncio.sleep(0)
        yield {}
        events.append(f"flush cache {path}")

    async with tether.Container(parent=root, values={Request: Request(path, 7)}) as request:
        request.register("cache", make_cache, scope=Scope.CONTAINER)
        cache = await request.aresolve("cache")
        handler = await request.aresolve(Handler)
        cache["seen"] = handler.handle()
        return cache["seen"]


def main() -> None:
    root = app()
    for path, uid in (("/a", 1), ("/b", 2)):
        with tether.Container(parent=root, values={Request: Request(path, uid)}) as request:
            print(request.resolve(Handler).handle())
    print(asyncio.run(serve_async(root, "/async")))
    root.close()
    print("events:", ", ".join(events))
    assert events == ["open db", "begin /a", "commit /a", "begin /b", "commit /b", "begin /async",
                      "commit /async", "flush cache /async", "close db"], events
    print("service ok")


if __name__ == "__main__":
    main()
