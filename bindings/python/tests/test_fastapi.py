"""tether.fastapi under FastAPI's TestClient: the Request as a value, a container per request,
teardown after the response (also when the handler raised), async factories, root singletons,
resolve errors as a logged 500, and the example app."""

import logging
from contextlib import asynccontextmanager
from typing import Annotated, AsyncIterator, Iterator

import pytest
from conftest import REPO_ROOT, load_script, run_python_ok

fastapi = pytest.importorskip("fastapi")
pytest.importorskip("httpx")  # the TestClient's transport

from fastapi import BackgroundTasks, FastAPI, HTTPException, Request, WebSocket  # noqa: E402
from fastapi.responses import StreamingResponse  # noqa: E402
from fastapi.testclient import TestClient  # noqa: E402

import tether  # noqa: E402
from tether import Scope  # noqa: E402
from tether.fastapi import Inject, install, shutdown  # noqa: E402

EXAMPLE = REPO_ROOT / "examples" / "python" / "fastapi_app.py"

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


@pytest.fixture
def root(c):
    """The app's root container: conftest's ``c`` (closed after the test, no Python object left in C boxes)."""
    return c


def app_on(root: tether.Container) -> FastAPI:
    app = FastAPI()
    install(app, root)
    return app


class Session:
    def __init__(self, request: Request) -> None:
        self.request = request


class Service:
    def __init__(self, session: Session) -> None:
        self.session = session


def test_the_request_is_a_value_reaching_factories(root):
    root.register(Session)
    root.register(Service)
    app = app_on(root)
    root.validate()  # install declared Request: not missing

    @app.get("/items/{item}")
    async def handler(item: int, request: Request, svc: Service = Inject(Service)):
        return {"same": svc.session.request is request, "path": svc.session.request.url.path,
                "header": svc.session.request.headers["x-who"]}

    response = TestClient(app).get("/items/7", headers={"x-who": "ada"})
    assert response.status_code == 200
    assert response.json() == {"same": True, "path": "/items/7", "header": "ada"}


def test_container_scope_is_one_per_request(root):
    made: list[Session] = []

    def make_session(request: Request) -> Session:
        made.append(Session(request))
        return made[-1]

    root.register(Session, make_session, scope=Scope.CONTAINER)
    root.register(Service)  # GRAPH: a new one per Inject, on the request's session
    app = app_on(root)

    @app.get("/")
    def handler(a: Annotated[Service, Inject(Service)], s: Annotated[Session, Inject(Session)],
                b: Service = Inject(Service)):
        return {"shared": a.session is s and b.session is s, "distinct services": a is not b, "id": len(made)}

    client = TestClient(app)
    assert client.get("/").json() == {"shared": True, "distinct services": True, "id": 1}
    assert client.get("/").json() == {"shared": True, "distinct services": True, "id": 2}
    assert len(made) == 2 and made[0] is not made[1]
    assert made[0].request is not made[1].request


def _teardown_app(root, events):
    def make_session(request: Request) -> Iterator[Session]:
        events.append(f"open {request.url.path}")
        try:
            yield Session(request)
        except BaseException as exc:  # a failed request's exception is thrown in (as FastAPI's Depends do)
            events.append(f"failed {type(exc).__name__}")
            raise
        finally:
            events.append(f"close {request.url.path}")

    root.register(Session, make_session, scope=Scope.CONTAINER)
    app = app_on(root)

    @app.get("/ok")
    def ok(s: Session = Inject(Session)):
        events.append("handler /ok")
        return {}

    @app.get("/raises")
    def raises(s: Session = Inject(Session)):
        events.append("handler /raises")
        raise RuntimeError("handler failed")

    @app.get("/http-error")
    def http_error(s: Session = Inject(Session)):
        events.append("handler /http-error")
        raise HTTPException(status_code=409, detail="conflict")

    @app.get("/stream")
    def stream(s: Session = Inject(Session)):
        def body() -> Iterator[bytes]:
            for part in ("a", "b"):
                events.append(f"send {part}")  # the body is sent after the handler returned
                yield part.encode()

        return StreamingResponse(body())

    @app.get("/background")
    def background(tasks: BackgroundTasks, s: Session = Inject(Session)):
        tasks.add_task(lambda: events.append("background task"))  # runs after the response, on the session
        return {}

    @app.get("/none")
    def none():
        events.append("handler /none")
        return {}

    return app


def test_teardown_runs_once_per_request_after_the_response(root):
    events: list[str] = []
    client = TestClient(_teardown_app(root, events), raise_server_exceptions=False)
    assert client.get("/ok").status_code == 200
    assert client.get("/ok").status_code == 200
    assert events == ["open /ok", "handler /ok", "close /ok"] * 2
    events.clear()
    response = client.get("/stream")
    assert response.text == "ab"
    assert events == ["open /stream", "send a", "send b", "close /stream"]  # after the whole body
    events.clear()
    assert client.get("/background").status_code == 200
    assert events == ["open /background", "background task", "close /background"]
    events.clear()
    assert client.get("/none").status_code == 200
    assert events == ["handler /none"]  # nothing injected: no container, nothing to tear down


def test_teardown_runs_once_when_the_handler_raised(root):
    events: list[str] = []
    client = TestClient(_teardown_app(root, events), raise_server_exceptions=False)
    assert client.get("/raises").status_code == 500
    assert events == ["open /raises", "handler /raises", "failed RuntimeError", "close /raises"]
    events.clear()
    response = client.get("/http-error")
    assert response.status_code == 409 and response.json() == {"detail": "conflict"}
    assert events == ["open /http-error", "handler /http-error", "failed HTTPException", "close /http-error"]


def test_the_handlers_exception_is_the_one_raised(root):
    """A teardown runs while the handler's exception passes; the exception is unchanged."""
    events: list[str] = []
    client = TestClient(_teardown_app(root, events))  # raise_server_exceptions: the app's exception
    with pytest.raises(RuntimeError, match="handler failed"):
        client.get("/raises")
    assert events == ["open /raises", "handler /raises", "failed RuntimeError", "close /raises"]


def test_a_failing_teardown_is_logged_and_the_response_stands(root, caplog):
    def make_session(request: Request) -> Iterator[Session]:
        yield Session(request)
        raise OSError("commit failed")

    root.register(Session, make_session, scope=Scope.CONTAINER)
    app = app_on(root)

    @app.get("/")
    def handler(s: Session = Inject(Session)):
        return {"ok": True}

    with caplog.at_level(logging.ERROR, logger="tether.fastapi"):
        response = TestClient(app).get("/")
    assert response.status_code == 200 and response.json() == {"ok": True}
    records = [r for r in caplog.records if r.name == "tether.fastapi"]
    assert len(records) == 1
    assert "tearing down the container of GET /" in records[0].getMessage()
    error = records[0].exc_info[1]
    assert isinstance(error, tether.TeardownError)
    assert [str(e) for e in error.exceptions] == ["commit failed"]


def test_async_factories_and_async_teardown(root):
    events: list[str] = []

    class Pool:
        pass

    async def make_pool() -> Pool:
        events.append("pool")
        return Pool()

    async def make_session(request: Request, pool: Pool) -> AsyncIterator[Session]:
        events.append(f"open {request.url.path}")
        session = Session(request)
        session.pool = pool
        yield session
        events.append(f"close {request.url.path}")

    root.register(Pool, make_pool, scope=Scope.SINGLETON)
    root.register(Session, make_session, scope=Scope.CONTAINER)
    root.register(Service)
    app = app_on(root)

    @app.get("/{name}")
    async def handler(name: str, svc: Service = Inject(Service), s: Session = Inject(Session)):
        events.append(f"handler /{name}")
        return {"shared": svc.session is s, "pool": id(s.pool)}

    client = TestClient(app)
    first, second = client.get("/a").json(), client.get("/b").json()
    assert first["shared"] and second["shared"] and first["pool"] == second["pool"]
    assert events == ["pool", "open /a", "handler /a", "close /a", "open /b", "handler /b", "close /b"]


def test_root_singletons_are_shared_across_requests(root):
    made: list[object] = []

    class Settings:
        def __init__(self) -> None:
            made.append(self)

    root.register(Settings, scope=Scope.SINGLETON)
    app = app_on(root)

    @app.get("/")
    def handler(s: Settings = Inject(Settings)):
        return {"same": s is made[0]}

    client = TestClient(app)
    assert [client.get("/").json() for _ in range(3)] == [{"same": True}] * 3
    assert len(made) == 1
    assert root.resolve(Settings) is made[0]


def test_the_documented_lifespan_survives_several_startups(root):
    """`await shutdown(app)` at the end of the lifespan: each startup (a TestClient) gets its own
    singletons, torn down (async ones awaited) at its shutdown; the root stays open for the next."""
    events: list[str] = []
    made = iter(range(1, 10))

    class Pool:
        def __init__(self, n: int) -> None:
            self.n = n

    class Clock:
        pass

    def make_pool() -> Iterator[Pool]:
        pool = Pool(next(made))
        events.append(f"open pool {pool.n}")
        yield pool
        events.append(f"close pool {pool.n}")

    async def make_clock() -> AsyncIterator[Clock]:
        yield Clock()
        events.append("stop clock")

    root.register(Pool, make_pool, scope=Scope.SINGLETON)
    root.register(Clock, make_clock, scope=Scope.SINGLETON)

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        events.append("startup")
        yield
        await shutdown(app)

    app = FastAPI(lifespan=lifespan)
    install(app, root)

    @app.get("/pool")
    async def pool(p: Pool = Inject(Pool), clock: Clock = Inject(Clock)) -> dict[str, int]:
        return {"pool": p.n}

    for n in (1, 2, 3):
        with TestClient(app) as client:
            assert client.get("/pool").json() == {"pool": n}
            assert client.get("/pool").json() == {"pool": n}  # one per startup
    assert events == ["startup", "open pool 1", "stop clock", "close pool 1",
                      "startup", "open pool 2", "stop clock", "close pool 2",
                      "startup", "open pool 3", "stop clock", "close pool 3"]
    assert not root.closed


def test_shutdown_without_install_says_so():
    import asyncio

    with pytest.raises(RuntimeError, match=r"install\(app, root\)"):
        asyncio.run(shutdown(FastAPI()))


def test_a_failing_resolve_is_a_500_with_the_exception_logged(root, caplog):
    events: list[str] = []

    def make_session(request: Request) -> Iterator[Session]:
        events.append("open")
        try:
            yield Session(request)
        except HTTPException as exc:  # the failed request's answer, thrown in
            events.append(f"failed {exc.status_code}")
            raise
        finally:
            events.append("close")

    class Broken:
        def __init__(self, session: Session) -> None:
            raise ValueError("secret detail 42")

    root.register(Session, make_session, scope=Scope.CONTAINER)
    root.register(Broken)
    app = app_on(root)

    @app.get("/broken")
    def handler(s: Session = Inject(Session), b: Broken = Inject(Broken)):
        events.append("handler")  # never runs
        return {}

    with caplog.at_level(logging.ERROR, logger="tether.fastapi"):
        response = TestClient(app).get("/broken")
    assert response.status_code == 500
    assert response.json() == {"detail": f"could not resolve {tether.key_name(Broken)!r}"}
    assert "secret" not in response.text  # the client learns the key, not the error
    records = [r for r in caplog.records if r.name == "tether.fastapi"]
    assert len(records) == 1 and records[0].levelno == logging.ERROR
    assert "for GET /broken failed" in records[0].getMessage()
    error = records[0].exc_info[1]
    assert isinstance(error, tether.FactoryError) and isinstance(error.__cause__, ValueError)
    assert "secret detail 42" in caplog.text and "Traceback" in caplog.text  # the original, with its traceback
    assert events == ["open", "failed 500", "close"]  # the request's session still torn down, once


def test_a_factory_raising_http_exception_answers_with_it(root, caplog):
    def authenticate(request: Request) -> Session:
        if "authorization" not in request.headers:
            raise HTTPException(status_code=401, detail="log in first")
        return Session(request)

    root.register(Session, authenticate)
    app = app_on(root)

    @app.get("/")
    def handler(s: Session = Inject(Session)):
        return {"ok": True}

    client = TestClient(app)
    with caplog.at_level(logging.ERROR, logger="tether.fastapi"):
        response = client.get("/")
    assert response.status_code == 401 and response.json() == {"detail": "log in first"}
    assert not [r for r in caplog.records if r.name == "tether.fastapi"]  # an answer, not an error
    assert client.get("/", headers={"authorization": "x"}).json() == {"ok": True}


def test_inject_without_install_is_a_logged_500(caplog):
    app = FastAPI()

    @app.get("/")
    def handler(s: Session = Inject(Session)):
        return {}

    with caplog.at_level(logging.ERROR, logger="tether.fastapi"):
        response = TestClient(app).get("/")
    assert response.status_code == 500
    assert "call tether.fastapi.install(app, root) first" in caplog.text


def test_install_checks_its_arguments(root):
    app = FastAPI()
    with pytest.raises(TypeError, match="root must be a tether.Container"):
        install(app, object())
    with pytest.raises(TypeError, match="app must be a fastapi.FastAPI"):
        install(object(), root)
    install(app, root)
    assert app.state.tether_root is root
    with pytest.raises(RuntimeError, match="already installed"):
        install(app, root)


def test_a_websocket_gets_its_websocket_as_a_value(root):
    class Channel:
        def __init__(self, ws: WebSocket) -> None:
            self.ws = ws

    root.register(Channel)
    app = app_on(root)

    @app.websocket("/ws")
    async def endpoint(websocket: WebSocket, ch: Channel = Inject(Channel)):
        await websocket.accept()
        await websocket.send_json({"same": ch.ws is websocket})
        await websocket.close()

    with TestClient(app).websocket_connect("/ws") as ws:
        assert ws.receive_json() == {"same": True}


def test_importing_tether_does_not_import_fastapi():
    code = "import sys, tether; tether.Container().close(); assert 'fastapi' not in sys.modules, 'fastapi imported'"
    run_python_ok("-c", code)


def test_the_example_app_runs():
    out = run_python_ok(EXAMPLE)
    assert "200 {'text': 'hello ada', 'one session': True, 'tick': 1}" in out
    assert "404 {'detail': 'no user 3'}" in out
    assert "events: begin /users/1, stop clock 1, commit /users/1, begin /users/2" in out
    assert out.rstrip().endswith("fastapi app ok")


def test_the_example_app_in_this_process():
    module = load_script(EXAMPLE, "fastapi_app_example")
    client = TestClient(module.app)
    assert client.get("/users/2").json() == {"text": "hello grace", "one session": True, "tick": 1}
    assert module.events == ["begin /users/2", "stop clock 1", "commit /users/2"]
    module.root.close()


def test_a_failed_request_is_thrown_into_async_generator_teardown(root):
    """An async session committing after yield: a request whose handler raised rolls back instead."""
    events: list[str] = []

    async def make_session(request: Request) -> AsyncIterator[Session]:
        try:
            yield Session(request)
        except Exception as exc:
            events.append(f"rollback {request.url.path} {type(exc).__name__}")
            raise
        events.append(f"commit {request.url.path}")

    root.register(Session, make_session, scope=Scope.CONTAINER)
    app = app_on(root)

    @app.get("/{name}")
    async def handler(name: str, s: Session = Inject(Session)):
        if name == "conflict":
            raise HTTPException(status_code=409, detail="conflict")
        if name == "bug":
            raise KeyError(name)
        return {}

    client = TestClient(app, raise_server_exceptions=False)
    assert [client.get(f"/{name}").status_code for name in ("ok", "conflict", "bug")] == [200, 409, 500]
    assert events == ["commit /ok", "rollback /conflict HTTPException", "rollback /bug KeyError"]
