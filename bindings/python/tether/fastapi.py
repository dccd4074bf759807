"""FastAPI integration: a child container per request, ``Inject(Key)`` as a FastAPI dependency.

    from tether.fastapi import Inject, install

    install(app, root)   # each request gets Container(parent=root, values={Request: request})

    @app.get("/u/{uid}")
    async def get_user(uid: int, svc: FromTether[UserService]): ...
    # the same: svc: Annotated[UserService, Inject(UserService)], or svc: UserService = Inject(UserService)

Why a middleware and not a dependency with ``yield``: when FastAPI runs the code after a
dependency's ``yield`` (before or after the response is sent, with or without a streaming body)
has changed between its versions. A pure ASGI middleware wraps the whole response (body,
background tasks, an exception out of the handler), so the request's container is closed after
all of it, exactly once, in every version. The child is made on the first ``Inject`` of a request
(a request injecting nothing costs no container), with the very ``Request`` object the handler
gets; ``Inject`` is ``Depends(use_cache=False)``: each one resolves, and the registration's scope
decides what is shared (``CONTAINER``: one per request).

A failed request reaches its teardown as with FastAPI's own dependencies: the exception the handler
raised (an ``HTTPException`` too, which FastAPI answers before the middleware sees it: the first
``Inject`` of a request pushes an exit callback noting it on the exit stack FastAPI closes around
the handler, where it throws the exception into its dependencies with ``yield``) is thrown into the
request's generator teardowns (``gen.throw``/``agen.athrow``), so "commit after yield" does not
commit it. (A dependency with ``yield`` would do the same at several times the cost per request.)

At shutdown, ``await shutdown(app)`` in the app's lifespan tears down what the root caches and
keeps the root open: the same app can start again in this process (a second ``TestClient(app)``,
a reloading server), making its singletons anew. Closing the root there would answer every later
request with a 500 ("container is closed").

Requires FastAPI (``pip install tether[fastapi]``); ``import tether`` never imports it.
"""

from __future__ import annotations

import logging
import threading
from typing import TYPE_CHECKING, Annotated, Any, Awaitable, Callable, MutableMapping, TypeVar, overload

from fastapi import Depends, FastAPI, HTTPException
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.requests import HTTPConnection, Request
from starlette.websockets import WebSocket

from .container import Container
from .errors import FactoryError, TeardownError
from .markers import Key, key_name
from .scope import Scope as Lifetime  # (Scope here is the ASGI scope)

__all__ = ["FromTether", "Inject", "injector", "install", "shutdown"]

T = TypeVar("T")

logger = logging.getLogger("tether.fastapi")

#: The ASGI scope entry holding a request's ``_RequestContainer`` (set by the middleware).
_SCOPE_KEY = "tether.request_container"

Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Any]]
Send = Callable[[Any], Awaitable[None]]


class _RequestContainer:
    """One request's child container, made on first use and closed once by the middleware.
    Shallow copies of the ASGI scope share this object, so they share the child too."""

    __slots__ = ("root", "container", "failure", "watching")

    def __init__(self, root: Container) -> None:
        self.root = root
        self.container: Container | None = None
        self.failure: BaseException | None = None  # what the handler raised (see __exit__)
        self.watching = False

    def __exit__(self, typ: object, exc: BaseException | None, tb: object) -> bool:
        """The exit callback ``start`` pushes: notes the exception FastAPI throws into its
        dependencies (the handler's, also one it answers itself, such as ``HTTPException``)."""
        if exc is not None:
            self.failure = exc
        return False

    def start(self, connection: HTTPConnection) -> Container:
        """The request's first ``Inject``: makes its child, and once per request notes what the
        handler raises (``__exit__``) on FastAPI's exit stack around it (``fastapi_inner_astack``;
        ``fastapi_astack`` before FastAPI 0.106)."""
        if not self.watching:
            self.watching = True
            scope = connection.scope
            stack = scope.get("fastapi_inner_astack") or scope.get("fastapi_astack")
            if stack is not None:
                stack.push(self.__exit__)  # (a callback: one call less for the stack than a context manager)
        key = Request if isinstance(connection, Request) else WebSocket
        container = self.container = Container(parent=self.root, values={key: connection})
        return container


class _ChildPerRequest:
    """ASGI middleware: a ``_RequestContainer`` in the scope of each HTTP request and websocket,
    closed when the app is done with it (response sent, or an exception on its way out)."""

    def __init__(self, app: Callable[[Scope, Receive, Send], Awaitable[None]], root: Container) -> None:
        self.app = app
        self.root = root

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        holder = scope[_SCOPE_KEY] = _RequestContainer(self.root)
        failure = None
        try:
            await self.app(scope, receive, send)
        except BaseException as exc:
            failure = exc
            raise
        finally:
            # closes the child (teardown; async teardown awaited), the failure thrown into generator
            # teardowns, logging failures: the response is gone by now, and an exception of the
            # handler must stay the one reported
            container = holder.container
            if container is not None:
                holder.container = None
                try:
                    await container._aclose(failure if failure is not None else holder.failure)
                except Exception:
                    logger.exception("tether.fastapi: tearing down the container of %s %s failed",
                                     scope.get("method", "WEBSOCKET"), scope.get("path", ""))
            failure = None  # (the frame holding its own exception would be a cycle with its traceback)


def install(app: FastAPI, root: Container) -> None:
    """Gives every request of ``app`` a child container of ``root`` providing the starlette
    ``Request`` (``WebSocket`` for a websocket) as a value, closed (its teardowns run, async ones
    awaited) once the response is sent, also when the handler raised. Declares ``Request`` and
    ``WebSocket`` values of ``root`` (so ``root.validate()`` counts them). Call it once per app,
    before the app starts; ``app.state.tether_root`` is ``root`` (``await shutdown(app)`` at the end of
    the app's lifespan)."""
    if not isinstance(app, FastAPI):
        raise TypeError(f"install: app must be a fastapi.FastAPI, not {type(app).__name__}")
    if not isinstance(root, Container):
        raise TypeError(f"install: root must be a tether.Container, not {type(root).__name__}")
    if getattr(app.state, "tether_root", None) is not None:
        raise RuntimeError("install: tether is already installed on this app (once per app)")
    root.register_value(Request)
    root.register_value(WebSocket)
    app.add_middleware(_ChildPerRequest, root=root)
    app.state.tether_root = root


async def shutdown(app: FastAPI) -> None:
    """The end of an app's lifespan: tears down what the root of ``install(app, root)`` caches, its
    singletons, then its own CONTAINER-scoped instances (teardowns run, async ones awaited; failures
    raised together as ``TeardownError`` once both are done), and keeps the root and its registrations,
    so that the app can start again in this process and make them anew::

        @asynccontextmanager
        async def lifespan(app: FastAPI):
            yield
            await tether.fastapi.shutdown(app)

    ``root.close()`` instead ends the root for good: only when nothing will start the app again."""
    root = getattr(app.state, "tether_root", None)
    if not isinstance(root, Container):
        raise RuntimeError("shutdown: tether is not installed on this app (call install(app, root) first)")
    failed: list[Exception] = []
    for lifetime in (Lifetime.SINGLETON, Lifetime.CONTAINER):
        try:
            await root.areset(lifetime)
        except TeardownError as exc:
            failed += exc.exceptions
    if failed:
        raise TeardownError(failed)


#: ``Inject``'s dependency per key: one callable per key, so ``app.dependency_overrides`` can name it.
_injectors: dict[Key, Any] = {}
_injectors_lock = threading.Lock()


def _injector(key: Key) -> Any:
    """The ``Depends`` of ``key``, made once per key (see ``_injectors``)."""
    made = _injectors.get(key)
    if made is not None:
        return made
    name = key_name(key)

    async def inject(connection: HTTPConnection) -> Any:
        scope = connection.scope
        holder = scope.get(_SCOPE_KEY)
        try:
            if not isinstance(holder, _RequestContainer):
                raise RuntimeError(f"Inject({name!r}): no request container; call tether.fastapi.install(app, root) first")
            container = holder.container
            if container is None:
                container = holder.start(connection)
            return await container.aresolve(key)
        except Exception as exc:
            cause = exc.__cause__ if isinstance(exc, FactoryError) else None
            if isinstance(cause, StarletteHTTPException):
                raise cause from None  # a factory's deliberate answer (401, 404...)
            logger.error("tether.fastapi: resolving %r for %s %s failed", name,
                         connection.scope.get("method", "WEBSOCKET"), connection.url.path, exc_info=exc)
            raise HTTPException(status_code=500, detail=f"could not resolve {name!r}") from exc

    inject.__name__ = inject.__qualname__ = f"inject_{name.rsplit('.', 1)[-1]}"
    with _injectors_lock:
        return _injectors.setdefault(key, Depends(inject, use_cache=False))


@overload
def Inject(key: type[T]) -> T: ...
@overload
def Inject(key: str) -> Any: ...


def Inject(key: Key) -> Any:  # noqa: N802 (named like fastapi.Depends, which it is)
    """A FastAPI dependency resolving ``key`` from the request's container (``aresolve``: async
    factories are awaited); ``FromTether[S]`` is ``Annotated[S, Inject(S)]``, the typed way. As a
    default (``svc: S = Inject(S)``) it is typed as an ``S`` for type checkers (it is a ``Depends``).

    The same object for the same key every time: ``app.dependency_overrides[injector(S)]`` replaces
    it (prefer ``root.override(S, fake)`` in tests: that reaches what depends on ``S`` too).
    A failing resolve is logged (``tether.fastapi`` logger, with the traceback) and answered with a
    500 naming the key, not the error; a factory raising ``HTTPException`` answers with it."""
    return _injector(key)


def injector(key: Key) -> Callable[..., Any]:
    """The callable behind ``Inject(key)`` (the same for every ``Inject`` of ``key``): the key of
    ``app.dependency_overrides``."""
    return _injector(key).dependency  # type: ignore[no-any-return]


if TYPE_CHECKING:
    #: ``FromTether[S]`` is ``S`` to a type checker and ``Annotated[S, Inject(S)]`` to FastAPI.
    FromTether = Annotated[T, "tether.fastapi.Inject"]
else:
    class FromTether:
        """``FromTether[S]``: ``Annotated[S, Inject(S)]``, a parameter type FastAPI injects and a type
        checker reads as ``S``."""

        __slots__ = ()

        def __class_getitem__(cls, key: Any) -> Any:
            return Annotated[key, Inject(key)]
