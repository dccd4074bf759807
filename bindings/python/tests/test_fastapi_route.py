"""tether.fastapi's two ways of injecting into an ``async def`` handler, held to the same behaviour:
``TetherRoute``'s endpoint (the app's own routes after ``install``, and those of a plain
``APIRouter`` it includes: the endpoint resolves its ``Inject``s itself, in one step) and each
``Inject`` a FastAPI ``Depends`` (routes declared before ``install``).
One child per request, shared across the request's ``Inject``s and new for each request; each
session committed and closed exactly once; a failed request's exception thrown into its teardown;
resolve errors; overrides; what FastAPI reads of a rewritten endpoint (OpenAPI, annotations)."""

from __future__ import annotations

import asyncio
import logging
import threading
from typing import Annotated, AsyncIterator, Iterator

import pytest

fastapi = pytest.importorskip("fastapi")
httpx = pytest.importorskip("httpx")  # the TestClient's transport

from fastapi import APIRouter, Depends, FastAPI, HTTPException, Request  # noqa: E402
from fastapi.routing import APIRoute  # noqa: E402
from fastapi.testclient import TestClient  # noqa: E402
from starlette.requests import HTTPConnection  # noqa: E402

import tether  # noqa: E402
from tether import Scope  # noqa: E402
from tether.fastapi import FromTether, Inject, TetherRoute, injector, install  # noqa: E402

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


@pytest.fixture
def root(c):
    """The app's root container: conftest's ``c`` (closed after the test, no Python object left in C boxes)."""
    return c


@pytest.fixture(params=["TetherRoute", "APIRouter", "Depends"])
def app_with(request, root):
    """``app_with(declare)``: an app of ``root`` whose handlers ``declare(router)`` declares on the app
    itself (``TetherRoute``), on a plain ``APIRouter`` the app includes (given the same endpoints) or
    on the app before ``install`` (each ``Inject`` a ``Depends``)."""

    def make(declare) -> FastAPI:
        app = FastAPI()
        if request.param == "Depends":
            declare(app)
            install(app, root)
            routes = [r for r in app.routes if isinstance(r, APIRoute)]
            assert routes and all(type(r) is APIRoute for r in routes)
            assert not [r for r in routes if hasattr(r.endpoint, "__tether_injects__")]  # not rewritten
            return app
        install(app, root)
        if request.param == "TetherRoute":
            declare(app)
            routes = [r for r in app.routes if isinstance(r, APIRoute)]
            assert routes and all(isinstance(r, TetherRoute) for r in routes)
            # the point of it: FastAPI solves no dependency for an Inject of these endpoints
            assert not [d for r in routes for d in r.dependant.dependencies if is_injector(d.call)]
        else:
            outer, router = APIRouter(), APIRouter()
            declare(router)
            assert all(type(r) is APIRoute for r in router.routes)
            outer.include_router(router)  # a router within a router: FastAPI copies its routes or keeps it
            app.include_router(outer)
            served = served_routes(app)  # as TetherRoute's: FastAPI solves no dependency for an Inject
            assert served and not [d for r in served for d in r.dependant.dependencies if is_injector(d.call)]
        return app

    return make


def served_routes(app: FastAPI) -> list:
    """What serves the app's ``APIRoute``s: each route (FastAPI before 0.16x copies an included
    router's routes into the app) or, for a router included by reference (0.16x), the context FastAPI
    made over the route for that inclusion (its endpoint and dependant)."""
    found, todo = [], list(app.router.routes)
    while todo:
        route = todo.pop()
        if isinstance(route, APIRoute):
            found.append(route)
        elif hasattr(route, "effective_candidates"):
            candidates = route.effective_candidates
            todo += candidates() if callable(candidates) else candidates
        elif hasattr(route, "original_route"):
            found.append(route)
    return found


def is_injector(call) -> bool:
    """Whether ``call`` is the callable of an ``Inject`` (``injector(K)`` for some K)."""
    return getattr(call, "__module__", None) == "tether.fastapi"


class Session:
    def __init__(self, request: Request) -> None:
        self.request = request


def never(request: Request) -> Session:
    raise AssertionError("the real Session was made")


class Repo:
    def __init__(self, session: Session) -> None:
        self.session = session


class Service:
    def __init__(self, repo: Repo) -> None:
        self.repo = repo


def test_one_child_per_request_shared_by_its_injects(root, app_with):
    made: list[Session] = []

    def make_session(request: Request) -> Session:
        made.append(Session(request))
        return made[-1]

    root.register(Session, make_session, scope=Scope.CONTAINER)
    root.register(Repo, scope=Scope.CONTAINER)
    root.register(Service)  # GRAPH: one per Inject, over the request's one Repo and Session
    seen: list[tuple[object, ...]] = []

    def declare(router):
        @router.get("/items/{i}")
        async def item(i: int, request: Request, a: FromTether[Service], s: Annotated[Session, Inject(Session)],
                       q: str = "x", b: Service = Inject(Service), repo: Repo = Inject(Repo)):
            seen.append((a, b, s, repo, request))
            return {"i": i, "q": q}

    client = TestClient(app_with(declare))
    assert client.get("/items/1").json() == {"i": 1, "q": "x"}
    assert client.get("/items/2?q=y").json() == {"i": 2, "q": "y"}
    assert len(made) == 2 and len(seen) == 2
    for (a, b, s, repo, request), session in zip(seen, made):
        assert s is session and session.request is request  # the handler's Request is the child's value
        assert a is not b and a.repo is b.repo is repo and repo.session is s
    assert seen[0][2] is not seen[1][2] and seen[0][3] is not seen[1][3]  # a new child per request


def test_a_def_handler_gets_async_made_injects_and_runs_in_the_thread_pool(root, app_with):
    """A plain ``def`` endpoint: its ``Inject``s resolve on the loop (an async factory is awaited
    there), in the request's one child (shared with an ``Inject`` inside a dependency), and the
    handler runs on a thread of the pool, not the loop's."""
    threads: dict[str, int] = {}

    async def make_session(request: Request) -> Session:
        await asyncio.sleep(0)
        threads["factory"] = threading.get_ident()
        return Session(request)

    root.register(Session, make_session, scope=Scope.CONTAINER)
    root.register(Repo)
    seen: list[tuple[object, ...]] = []

    async def current(s: Session = Inject(Session)) -> Session:
        return s

    def declare(router):
        @router.get("/{i}")
        def handler(i: int, request: Request, s: FromTether[Session], d: Session = Depends(current),
                    repo: Repo = Inject(Repo)):
            threads["handler"] = threading.get_ident()
            seen.append((d, repo, s, request))
            return {"i": i}

    client = TestClient(app_with(declare))
    assert client.get("/1").json() == {"i": 1}
    assert client.get("/2").json() == {"i": 2}
    assert threads["handler"] != threads["factory"]
    (d1, repo1, s1, request1), (d2, _, s2, _) = seen
    assert d1 is s1 and repo1.session is s1 and s1.request is request1
    assert d2 is s2 and s2 is not s1


def test_an_inject_inside_a_dependency_shares_the_requests_child(root, app_with):
    root.register(Session, scope=Scope.CONTAINER)
    sessions: list[Session] = []

    async def current(s: Session = Inject(Session)) -> Session:  # a dependency: always a Depends
        return s

    def declare(router):
        @router.get("/")
        async def handler(d: Session = Depends(current), s: Session = Inject(Session)):
            sessions.append(s)
            return {"same": d is s}

    client = TestClient(app_with(declare))
    assert client.get("/").json() == {"same": True}
    assert client.get("/").json() == {"same": True}
    assert sessions[0] is not sessions[1]


def test_a_request_injecting_nothing_makes_no_child(root, app_with):
    root.register(Session, never, scope=Scope.CONTAINER)

    def declare(router):
        @router.get("/")
        async def plain(request: Request):
            return {"child": "tether.request_container" in request.scope
                    and request.scope["tether.request_container"].container is not None}

    assert TestClient(app_with(declare)).get("/").json() == {"child": False}


@pytest.fixture(params=["async def", "def"])
def handler_kind(request):
    """The handler an app of ``_session_app`` declares: ``async def`` or a plain ``def`` (which
    FastAPI, or ``TetherRoute`` after resolving its ``Inject``s on the loop, runs in its thread pool)."""
    return request.param


def _session_app(root, app_with, events, handler_kind="async def"):
    async def make_session(request: Request) -> AsyncIterator[Session]:
        events.append(f"open {request.url.path}")
        try:
            yield Session(request)
        except BaseException as exc:
            events.append(f"rollback {type(exc).__name__}")
            raise
        else:
            events.append("commit")
        finally:
            events.append("close")

    root.register(Session, make_session, scope=Scope.CONTAINER)
    root.register(Repo)
    root.register(Service)

    def body(name: str, svc: Service, s: Session) -> dict[str, str]:
        assert svc.repo.session is s
        events.append(f"handler {name}")
        if name == "conflict":
            raise HTTPException(status_code=409, detail="conflict")
        if name == "bug":
            raise KeyError(name)
        return {"name": name}

    def declare(router):
        if handler_kind == "def":
            @router.get("/{name}")
            def handler(name: str, svc: Service = Inject(Service), s: Session = Inject(Session)):
                return body(name, svc, s)
        else:
            @router.get("/{name}")
            async def handler(name: str, svc: Service = Inject(Service), s: Session = Inject(Session)):
                return body(name, svc, s)

    return app_with(declare)


def test_teardown_once_after_the_response_and_a_failure_thrown_in(root, app_with, handler_kind):
    events: list[str] = []
    client = TestClient(_session_app(root, app_with, events, handler_kind), raise_server_exceptions=False)
    assert client.get("/ok").json() == {"name": "ok"}
    assert events == ["open /ok", "handler ok", "commit", "close"]
    events.clear()
    assert client.get("/conflict").status_code == 409  # answered by FastAPI: still a failed request
    assert events == ["open /conflict", "handler conflict", "rollback HTTPException", "close"]
    events.clear()
    assert client.get("/bug").status_code == 500
    assert events == ["open /bug", "handler bug", "rollback KeyError", "close"]


def test_the_handlers_exception_stays_the_one_raised(root, app_with, handler_kind):
    events: list[str] = []
    client = TestClient(_session_app(root, app_with, events, handler_kind))
    with pytest.raises(KeyError, match="bug"):
        client.get("/bug")
    assert events == ["open /bug", "handler bug", "rollback KeyError", "close"]


SESSIONS: list[dict[str, int]] = []


class Db:
    def __init__(self) -> None:
        self.counts = {"commit": 0, "rollback": 0, "close": 0}
        SESSIONS.append(self.counts)


async def make_db() -> AsyncIterator[Db]:
    db = Db()
    try:
        yield db
    except Exception:
        db.counts["rollback"] += 1
        raise
    else:
        await asyncio.sleep(0)
        db.counts["commit"] += 1
    finally:
        await asyncio.sleep(0)
        db.counts["close"] += 1


class DbRepo:
    def __init__(self, db: Db) -> None:
        self.db = db


class DbService:
    def __init__(self, repo: DbRepo) -> None:
        self.repo = repo


def test_32_concurrent_requests_each_session_committed_and_closed_once(root, app_with):
    """The app of issue 27 (an async session committing after yield, a repository, a service), 64
    requests at once in-process, commit and close each awaiting the loop: every request's session
    is made, committed and closed exactly once, and a failed one rolled back instead."""
    sessions = SESSIONS
    sessions.clear()
    root.register(Db, make_db, scope=Scope.CONTAINER)
    root.register(DbRepo)
    root.register(DbService)
    dbs: dict[int, Db] = {}

    def declare(router):
        @router.get("/items/{i}")
        async def item(i: int, svc: DbService = Inject(DbService), db: Db = Inject(Db)):
            assert svc.repo.db is db
            dbs[i] = db
            await asyncio.sleep(0)
            if i % 8 == 7:
                raise HTTPException(status_code=409, detail="conflict")
            return {"id": i}

    app = app_with(declare)

    async def run() -> list[int]:
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://t") as client:
            responses = await asyncio.gather(*(client.get(f"/items/{i}") for i in range(64)))
        return [r.status_code for r in responses]

    assert asyncio.run(run()) == [409 if i % 8 == 7 else 200 for i in range(64)]
    assert len(sessions) == 64 and len({id(db) for db in dbs.values()}) == 64
    assert sorted((c["commit"], c["rollback"], c["close"]) for c in sessions) == [(0, 1, 1)] * 8 + [(1, 0, 1)] * 56


def test_teardown_is_awaited_on_the_requests_task(root, app_with):
    tasks: dict[str, object] = {}

    async def make_session(request: Request) -> AsyncIterator[Session]:
        tasks["open"] = asyncio.current_task()
        yield Session(request)
        await asyncio.sleep(0)
        tasks["close"] = asyncio.current_task()

    root.register(Session, make_session, scope=Scope.CONTAINER)

    def declare(router):
        @router.get("/")
        async def handler(s: Session = Inject(Session)):
            tasks["handler"] = asyncio.current_task()
            return {}

    assert TestClient(app_with(declare)).get("/").status_code == 200
    assert tasks["open"] is not None and tasks["open"] is tasks["handler"] is tasks["close"]


class Broken:
    def __init__(self, session: Session) -> None:
        raise ValueError("secret detail 42")


def test_a_failing_resolve_is_a_logged_500_thrown_into_what_was_made(root, app_with, caplog):
    events: list[str] = []

    def make_session(request: Request) -> Iterator[Session]:
        events.append("open")
        try:
            yield Session(request)
        except HTTPException as exc:
            events.append(f"failed {exc.status_code}")
            raise
        finally:
            events.append("close")

    root.register(Session, make_session, scope=Scope.CONTAINER)
    root.register(Broken)

    def declare(router):
        @router.get("/broken")
        async def handler(s: Session = Inject(Session), b: Broken = Inject(Broken)):
            events.append("handler")  # never runs
            return {}

    with caplog.at_level(logging.ERROR, logger="tether.fastapi"):
        response = TestClient(app_with(declare)).get("/broken")
    assert response.status_code == 500
    assert response.json() == {"detail": f"could not resolve {tether.key_name(Broken)!r}"}
    records = [r for r in caplog.records if r.name == "tether.fastapi"]
    assert len(records) == 1 and "for GET /broken failed" in records[0].getMessage()
    assert isinstance(records[0].exc_info[1].__cause__, ValueError)
    assert events == ["open", "failed 500", "close"]


def test_a_factory_raising_http_exception_answers_with_it(root, app_with, caplog):
    def authenticate(request: Request) -> Session:
        if "authorization" not in request.headers:
            raise HTTPException(status_code=401, detail="log in first")
        return Session(request)

    root.register(Session, authenticate)

    def declare(router):
        @router.get("/")
        async def handler(s: Session = Inject(Session)):
            return {"ok": True}

    client = TestClient(app_with(declare))
    with caplog.at_level(logging.ERROR, logger="tether.fastapi"):
        response = client.get("/")
    assert response.status_code == 401 and response.json() == {"detail": "log in first"}
    assert not [r for r in caplog.records if r.name == "tether.fastapi"]
    assert client.get("/", headers={"authorization": "x"}).json() == {"ok": True}


def test_dependency_overrides_of_an_injector(root, app_with):
    events: list[str] = []
    root.register(Session, never)

    class Fake:
        pass

    async def fake_session() -> AsyncIterator[Fake]:
        events.append("fake open")
        yield Fake()
        events.append("fake close")

    def declare(router):
        @router.get("/")
        async def handler(s: Session = Inject(Session)):
            events.append(type(s).__name__)
            return {}

    app = app_with(declare)
    client = TestClient(app)
    app.dependency_overrides[injector(Session)] = Fake
    assert client.get("/").status_code == 200
    app.dependency_overrides[injector(Session)] = fake_session
    assert client.get("/").status_code == 200
    assert events == ["Fake", "fake open", "Fake", "fake close"]


def test_an_override_with_parameters_under_tether_route_says_what_to_do(root, caplog):
    root.register(Session)
    app = FastAPI()
    install(app, root)

    @app.get("/")
    async def handler(s: Session = Inject(Session)):
        return {}

    def fake(request: Request) -> object:
        return object()

    app.dependency_overrides[injector(Session)] = fake
    with caplog.at_level(logging.ERROR, logger="tether.fastapi"):
        assert TestClient(app).get("/").status_code == 500
    assert "takes parameters (request)" in caplog.text and "root.override" in caplog.text


def test_what_fastapi_reads_of_a_rewritten_endpoint(root):
    """OpenAPI, the route's name and description, the response model from the return annotation,
    string annotations (this module's ``from __future__ import annotations``), a handler's own
    ``HTTPConnection`` parameter."""
    root.register(Session)
    app = FastAPI()
    install(app, root)

    @app.get("/items/{i}")
    async def get_item(i: int, conn: HTTPConnection, q: int = 3, s: Session = Inject(Session)) -> dict[str, int]:
        """Reads one item."""
        assert s.request is conn
        return {"i": i, "q": q, "extra": 1}

    (route,) = [r for r in app.routes if isinstance(r, APIRoute)]
    assert isinstance(route, TetherRoute) and route.name == "get_item"
    operation = TestClient(app).get("/openapi.json").json()["paths"]["/items/{i}"]["get"]
    assert operation["description"] == "Reads one item."
    assert sorted(p["name"] for p in operation["parameters"]) == ["i", "q"]
    assert TestClient(app).get("/items/4?q=5").json() == {"i": 4, "q": 5, "extra": 1}
    assert TestClient(app).get("/items/x").status_code == 422  # FastAPI still validates


def test_routes_of_other_classes(root):
    """A router's own ``TetherRoute``; an app's own route class kept under ``install``; routes
    declared before ``install`` keep each ``Inject`` a ``Depends`` and work; a sync handler of the
    app's route class is rewritten as an async one."""
    root.register(Session)

    class Mine(APIRoute):
        pass

    app = FastAPI()

    @app.get("/early")
    async def early(s: Session = Inject(Session)):
        return {"path": s.request.url.path}

    app.router.route_class = Mine
    install(app, root)
    router = APIRouter(route_class=TetherRoute)

    @router.get("/routed")
    async def routed(s: Session = Inject(Session)):
        return {"path": s.request.url.path}

    @app.get("/mine")
    async def mine(s: Session = Inject(Session)):
        return {"path": s.request.url.path}

    @app.get("/sync")
    def sync(s: Session = Inject(Session)):
        return {"path": s.request.url.path}

    app.include_router(router)
    by_path = {r.path: r for r in app.routes if isinstance(r, APIRoute)}
    assert isinstance(by_path["/mine"], Mine) and isinstance(by_path["/mine"], TetherRoute)
    assert not by_path["/mine"].dependant.dependencies  # its Inject is not a FastAPI dependency
    assert not isinstance(by_path["/early"], TetherRoute)
    assert not by_path["/sync"].dependant.dependencies and by_path["/sync"].endpoint.__wrapped__ is sync
    client = TestClient(app)
    for path in ("/early", "/routed", "/mine", "/sync"):
        assert client.get(path).json() == {"path": path}
