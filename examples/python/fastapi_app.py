"""A FastAPI app on Tether: singletons in the root, a database session per request (CONTAINER
scope, committed when the response is done, rolled back when the request failed), the request
itself injected, an async factory.

    python examples/python/fastapi_app.py          # two requests through FastAPI's TestClient
    uvicorn fastapi_app:app                        # or serve it (from examples/python)

Needs FastAPI (``pip install tether[fastapi]``; the TestClient needs httpx).
"""

from __future__ import annotations

import sys
from pathlib import Path
from contextlib import asynccontextmanager
from typing import Annotated, AsyncIterator, Iterator

from fastapi import FastAPI, HTTPException, Request

try:
    import tether
except ImportError:  # running from a checkout without installing the package
    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bindings" / "python"))
    import tether
from tether import Scope
from tether.fastapi import FromTether, Inject, install, shutdown

events: list[str] = []


class Settings:
    greeting = "hello"


class Database:
    """Opened once (a root singleton), shared by every request."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.users = {1: "ada", 2: "grace"}


class Session:
    """One per request, shared by everything that request resolves; committed after the response."""

    def __init__(self, db: Database, request: Request) -> None:
        self.db, self.path = db, request.url.path


class Clock:
    def __init__(self, tick: int) -> None:
        self.tick = tick


class UserService:
    def __init__(self, session: Session, settings: Settings, clock: Clock) -> None:
        self.session, self.settings, self.clock = session, settings, clock

    def greet(self, uid: int) -> str:
        name = self.session.db.users.get(uid)
        if name is None:
            raise HTTPException(status_code=404, detail=f"no user {uid}")
        return f"{self.settings.greeting} {name}"


def make_session(db: Database, request: Request) -> Iterator[Session]:
    events.append(f"begin {request.url.path}")
    try:
        yield Session(db, request)
    except Exception:  # the request failed (here a 404): its exception is thrown in
        events.append(f"rollback {request.url.path}")
        raise
    events.append(f"commit {request.url.path}")  # after the response was sent


ticks = [0]


async def make_clock() -> AsyncIterator[Clock]:  # an async factory: awaited on the server's loop
    ticks[0] += 1
    try:
        yield Clock(ticks[0])
    finally:
        events.append(f"stop clock {ticks[0]}")


def make_root() -> tether.Container:
    root = tether.Container()
    root.register(Settings, scope=Scope.SINGLETON)
    root.register(Database, scope=Scope.SINGLETON)
    root.register(Session, make_session, scope=Scope.CONTAINER)
    root.register(Clock, make_clock, scope=Scope.CONTAINER)
    root.register(UserService)
    return root


@asynccontextmanager
async def lifespan(app: FastAPI) -> AsyncIterator[None]:
    yield
    await shutdown(app)  # the root's singletons torn down; the root stays open for the next startup


root = make_root()
app = FastAPI(lifespan=lifespan)
install(app, root)  # also declares Request a value of root: validate() counts it
root.validate()


@app.get("/users/{uid}")
async def get_user(uid: int, session: Annotated[Session, Inject(Session)],
                   users: FromTether[UserService]) -> dict[str, object]:  # the typed form of Annotated[...]
    return {"text": users.greet(uid), "one session": users.session is session, "tick": users.clock.tick}


def main() -> None:
    from fastapi.testclient import TestClient

    with TestClient(app) as client:
        for uid in (1, 2, 3):
            response = client.get(f"/users/{uid}")
            print(response.status_code, response.json())
    with TestClient(app) as client:  # a second startup of the same app in this process
        print(client.get("/users/1").status_code)
    root.close()  # nothing starts the app again
    print("events:", ", ".join(events))
    assert events == ["begin /users/1", "stop clock 1", "commit /users/1", "begin /users/2", "stop clock 2",
                      "commit /users/2", "begin /users/3", "stop clock 3", "rollback /users/3",
                      "begin /users/1", "stop clock 4", "commit /users/1"], events
    print("fastapi app ok")


if __name__ == "__main__":
    main()
