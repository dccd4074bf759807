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
gets; each ``Inject`` resolves, and the registration's scope decides what is shared
(``CONTAINER``: one per request).

Two ways to an ``Inject``, the same behaviour: an endpoint of a ``TetherRoute`` (the app's route
class after ``install``) resolves its ``Inject`` parameters itself, in one step, after FastAPI
solved its other parameters: FastAPI sees an ``async def`` taking the request's connection instead
of them (dishka's ``@inject`` rewrites a signature so, by hand), because solving one dependency
costs FastAPI about what the request's container costs; a plain ``def`` endpoint then runs in
FastAPI's thread pool, as FastAPI runs it. An ``APIRouter``'s routes the app includes after
``install`` get the same endpoint. Elsewhere (routes declared before ``install``, an ``Inject``
inside a dependency, a generator or callable-object endpoint) ``Inject`` is ``Depends(use_cache=False)``.

A failed request reaches its teardown as with FastAPI's own dependencies: the exception the handler
raised (an ``HTTPException`` too, which FastAPI answers before the middleware sees it: the
rewritten endpoint notes what the handler raised; a ``Depends`` pushes an exit callback noting it
on the exit stack FastAPI closes around the handler, where it throws the exception into its
dependencies with ``yield``) is thrown into the request's generator teardowns
(``gen.throw``/``agen.athrow``), so "commit after yield" does not commit it. (A dependency with
``yield`` would do the same at several times the cost per request.)

At shutdown, ``await shutdown(app)`` in the app's lifespan tears down what the root caches and
keeps the root open: the same app can start again in this process (a second ``TestClient(app)``,
a reloading server), making its singletons anew. Closing the root there would answer every later
request with a 500 ("container is closed").

Requires FastAPI (``pip install tether[fastapi]``); ``import tether`` never imports it.
"""

from __future__ import annotations

import inspect
import logging
import threading
from contextlib import asynccontextmanager, contextmanager
from typing import (TYPE_CHECKING, Annotated, Any, Awaitable, Callable, MutableMapping, TypeVar, get_type_hints,
                    overload)

from fastapi import Depends, FastAPI, HTTPException
from fastapi.routing import APIRoute
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.concurrency import run_in_threadpool
from starlette.requests import HTTPConnection, Request
from starlette.websockets import WebSocket

from .container import Container
from .errors import FactoryError, TeardownError
from .markers import Key, key_name
from .scope import Scope as Lifetime  # (Scope here is the ASGI scope)

__all__ = ["FromTether", "Inject", "TetherRoute", "injector", "install", "shutdown"]

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
        return self.open(connection)

    def open(self, connection: HTTPConnection) -> Container:
        """Makes the request's child, with ``connection`` as its ``Request`` (``WebSocket``) value."""
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
            failure = holder.failure = None  # (a frame holding its own exception: a cycle with its traceback)


def install(app: FastAPI, root: Container) -> None:
    """Gives every request of ``app`` a child container of ``root`` providing the starlette
    ``Request`` (``WebSocket`` for a websocket) as a value, closed (its teardowns run, async ones
    awaited) once the response is sent, also when the handler raised. Declares ``Request`` and
    ``WebSocket`` values of ``root`` (so ``root.validate()`` counts them). Makes the app's route class
    a ``TetherRoute`` (over the class it has): an endpoint declared on the app after this
    (``async def`` or plain ``def``) resolves its ``Inject`` parameters in one step, and so does one
    of a plain ``APIRouter`` the app includes after this (``app.include_router``). Call it once per
    app, before declaring routes and including routers;
    ``app.state.tether_root`` is ``root`` (``await shutdown(app)`` at the end of the app's lifespan)."""
    if not isinstance(app, FastAPI):
        raise TypeError(f"install: app must be a fastapi.FastAPI, not {type(app).__name__}")
    if not isinstance(root, Container):
        raise TypeError(f"install: root must be a tether.Container, not {type(root).__name__}")
    if getattr(app.state, "tether_root", None) is not None:
        raise RuntimeError("install: tether is already installed on this app (once per app)")
    root.register_value(Request)
    root.register_value(WebSocket)
    app.add_middleware(_ChildPerRequest, root=root)
    app.router.route_class = _route_class(app.router.route_class)
    include = app.router.include_router

    def include_router(router: Any, *args: Any, **kwargs: Any) -> None:
        _with_injects_in(router)
        return include(router, *args, **kwargs)

    app.router.include_router = include_router  # type: ignore[method-assign]  # (FastAPI.include_router calls it)
    app.state.tether_root = root


def _with_injects_in(router: Any) -> None:
    """Gives each ``APIRoute`` of ``router`` (an ``APIRouter`` an app of ``install`` is including), and
    of the routers it includes, the endpoint a ``TetherRoute`` has (``_with_injects``): FastAPI builds
    what serves an included route from the route's endpoint, a copy of the route (before 0.16x) or
    a context of its own over the route itself (by reference, 0.16x), never from the route's class.
    (Routes declared on the router after it was included keep each ``Inject`` a ``Depends``.)"""
    for route in getattr(router, "routes", ()):
        if isinstance(route, APIRoute):
            route.endpoint = _with_injects(route.endpoint)
        elif getattr(route, "original_router", None) is not None:  # a router included by reference
            _with_injects_in(route.original_router)


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
#: The key of each of those ``Depends`` objects, by identity (what ``TetherRoute`` looks for).
_injected_keys: dict[int, Key] = {}
_injectors_lock = threading.Lock()


def _failed(exc: Exception, name: str, connection: HTTPConnection) -> Exception:
    """What a request answers when resolving ``name`` raised ``exc``: a factory's own
    ``HTTPException`` as it is, anything else logged (with the traceback) and a 500 naming the key."""
    cause = exc.__cause__ if isinstance(exc, FactoryError) else None
    if isinstance(cause, StarletteHTTPException):
        return cause  # a factory's deliberate answer (401, 404...)
    logger.error("tether.fastapi: resolving %r for %s %s failed", name,
                 connection.scope.get("method", "WEBSOCKET"), connection.url.path, exc_info=exc)
    answer = HTTPException(status_code=500, detail=f"could not resolve {name!r}")
    answer.__cause__ = exc
    return answer


def _holder(connection: HTTPConnection, name: str) -> _RequestContainer:
    holder = connection.scope.get(_SCOPE_KEY)
    if not isinstance(holder, _RequestContainer):
        raise RuntimeError(f"Inject({name!r}): no request container; call tether.fastapi.install(app, root) first")
    return holder


def _injector(key: Key) -> Any:
    """The ``Depends`` of ``key``, made once per key (see ``_injectors``)."""
    made = _injectors.get(key)
    if made is not None:
        return made
    name = key_name(key)

    async def inject(connection: HTTPConnection) -> Any:
        try:
            holder = _holder(connection, name)
            container = holder.container
            if container is None:
                container = holder.start(connection)
            return await container.aresolve(key)
        except Exception as exc:
            answer = _failed(exc, name, connection)
            if answer is exc.__cause__:
                raise answer from None
            raise answer from exc

    inject.__name__ = inject.__qualname__ = f"inject_{name.rsplit('.', 1)[-1]}"
    with _injectors_lock:
        made = _injectors.setdefault(key, Depends(inject, use_cache=False))
        _injected_keys[id(made)] = key
        return made


# ---- TetherRoute: an endpoint's Injects in one step, without FastAPI's dependency solving ------

#: The parameter ``TetherRoute`` adds to an endpoint it rewrites (FastAPI fills it with the request).
_CONNECTION = "tether_connection__"


def _inject_key(default: Any, annotation: Any) -> Key | None:
    """The key of a parameter if it is an ``Inject`` (its default, or in its ``Annotated`` metadata)."""
    for candidate in (default, *getattr(annotation, "__metadata__", ())):
        key = _injected_keys.get(id(candidate))
        if key is not None and candidate is _injectors.get(key):
            return key
    return None


def _plain_endpoint(endpoint: Callable[..., Any]) -> bool:
    """Whether ``_with_injects`` may rewrite ``endpoint``: a function or method, ``async def`` or
    plain ``def`` (not a generator, which FastAPI would not call so, nor a callable object)."""
    return ((inspect.isfunction(endpoint) or inspect.ismethod(endpoint))
            and not inspect.isgeneratorfunction(endpoint) and not inspect.isasyncgenfunction(endpoint))


def _with_injects(endpoint: Callable[..., Any]) -> Callable[..., Any]:
    """``endpoint`` with its ``Inject`` parameters resolved by the endpoint itself: an ``async def``
    taking the request's connection instead of them, resolving them from the request's child on the
    loop, then calling ``endpoint`` (a plain ``def`` in FastAPI's thread pool, as FastAPI would run it;
    its signature is ``endpoint``'s without them, annotations evaluated). The endpoint as it is if it
    has none, is not a plain function (a generator, a callable object), or has ``*args``,
    ``**kwargs`` or positional-only parameters: there each ``Inject`` is a ``Depends``."""
    if hasattr(endpoint, "__tether_injects__") or not _plain_endpoint(endpoint):
        return endpoint
    try:
        signature = inspect.signature(endpoint)
    except (TypeError, ValueError):
        return endpoint
    try:
        hints = get_type_hints(endpoint, include_extras=True)
    except Exception:  # a hint naming something undefined: FastAPI copes, or says so; evaluated one by one
        hints = {}
    namespace = getattr(endpoint, "__globals__", {})

    def evaluated(annotation: Any) -> Any:
        if isinstance(annotation, str):
            try:
                return eval(annotation, namespace)  # noqa: S307 (as get_type_hints evaluates it)
            except Exception:
                return annotation  # FastAPI evaluates it in the endpoint's globals (__wrapped__), or says why
        return annotation

    injects: list[tuple[str, tuple[Key, str]]] = []
    kept: list[inspect.Parameter] = []
    connection = _CONNECTION
    for param in signature.parameters.values():
        if param.kind not in (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY):
            return endpoint
        annotation = hints[param.name] if param.name in hints else evaluated(param.annotation)
        key = _inject_key(param.default, annotation)
        if key is not None:
            injects.append((param.name, (key, key_name(key))))
            continue
        kept.append(param.replace(annotation=annotation))
        if annotation is HTTPConnection:
            connection = param.name  # FastAPI fills one HTTPConnection parameter: share it
    if not injects:
        return endpoint
    pop = connection == _CONNECTION
    if pop:
        kept.append(inspect.Parameter(_CONNECTION, inspect.Parameter.KEYWORD_ONLY, annotation=HTTPConnection))
    run = _runner(endpoint, tuple(injects), connection, pop)
    for attribute in ("__module__", "__name__", "__qualname__", "__doc__"):
        setattr(run, attribute, getattr(endpoint, attribute, None))
    returns = hints["return"] if "return" in hints else evaluated(signature.return_annotation)
    run.__signature__ = signature.replace(parameters=kept, return_annotation=returns)  # type: ignore[attr-defined]
    run.__wrapped__ = endpoint  # type: ignore[attr-defined]  # (FastAPI reads its globals, and its kind)
    run.__tether_injects__ = tuple(key for _, (key, _) in injects)  # type: ignore[attr-defined]
    return run


def _runner(endpoint: Callable[..., Any], injects: tuple[tuple[str, tuple[Key, str]], ...],
            connection_name: str, pop: bool) -> Callable[..., Awaitable[Any]]:
    """The rewritten endpoint of ``_with_injects``."""

    steps = tuple((param, key, name, _injectors[key].dependency) for param, (key, name) in injects)
    first = steps[0][2]
    if not inspect.iscoroutinefunction(endpoint):  # a plain def: in the thread pool, as FastAPI runs it
        sync = endpoint

        async def endpoint(**values: Any) -> Any:
            return await run_in_threadpool(sync, **values)

    async def run(**values: Any) -> Any:
        connection = values.pop(connection_name) if pop else values[connection_name]
        holder = connection.scope.get(_SCOPE_KEY)
        name = first
        try:
            if holder.__class__ is not _RequestContainer:
                holder = _holder(connection, name)  # (says to call install)
            container = holder.container
            if container is None:
                container = holder.open(connection)
            overrides = getattr(connection.scope.get("app"), "dependency_overrides", None)
            for param, key, name, dependency in steps:
                if overrides and dependency in overrides:
                    values[param] = await _overridden(overrides[dependency], key, connection)
                else:
                    values[param] = await container.aresolve(key)
        except Exception as exc:
            answer = _failed(exc, name, connection)
            if isinstance(holder, _RequestContainer):
                holder.failure = answer  # thrown into what the request made, as FastAPI's Depends would
            if answer is exc.__cause__:
                raise answer from None
            raise answer from exc
        try:
            return await endpoint(**values)
        except BaseException as exc:
            holder.failure = exc  # thrown into the request's generator teardowns (the middleware)
            raise

    return run


async def _overridden(override: Callable[..., Any], key: Key, connection: HTTPConnection) -> Any:
    """``app.dependency_overrides[injector(key)]`` for an endpoint of ``TetherRoute``: called without
    arguments (awaited if it returns an awaitable; a generator function entered on FastAPI's exit
    stack of the request, as FastAPI enters dependencies with ``yield``)."""
    try:
        parameters = inspect.signature(override).parameters
    except (TypeError, ValueError):
        parameters = {}  # type: ignore[assignment]
    if parameters:
        raise TypeError(
            f"app.dependency_overrides[injector({key_name(key)!r})] = {override!r} takes parameters "
            f"({', '.join(parameters)}); an override of an Inject is called without arguments: "
            f"override {key_name(key)!r} in the root instead (root.override(key, fake)), or give it "
            f"no parameters")
    if inspect.isasyncgenfunction(override) or inspect.isgeneratorfunction(override):
        stack = connection.scope.get("fastapi_inner_astack") or connection.scope.get("fastapi_astack")
        if stack is None:
            raise RuntimeError(f"app.dependency_overrides[injector({key_name(key)!r})]: no FastAPI exit stack "
                               f"in this request to run the generator's teardown on")
        if inspect.isasyncgenfunction(override):
            return await stack.enter_async_context(asynccontextmanager(override)())
        return stack.enter_context(contextmanager(override)())
    result = override()
    if inspect.isawaitable(result):
        result = await result
    return result


class TetherRoute(APIRoute):
    """An ``APIRoute`` resolving the ``Inject`` parameters of an endpoint (``async def``, or a plain
    ``def`` then run in the thread pool) in one step per request, in the endpoint itself, not each as
    a FastAPI dependency (whose solving costs about what the request's container costs): ``install``
    makes it the route class of the app's own routes, and gives the routes of the ``APIRouter``s the
    app includes its endpoint (``APIRouter(route_class=TetherRoute)`` does it on the router itself).
    Elsewhere (other routes, ``Inject`` inside a dependency) each ``Inject`` is a ``Depends``,
    which behaves the same. The endpoint's ``Inject`` parameters resolve after FastAPI solved its
    other parameters, in their order; ``app.dependency_overrides[injector(K)]`` is called without
    arguments."""

    def __init__(self, path: str, endpoint: Callable[..., Any], **kwargs: Any) -> None:
        super().__init__(path, _with_injects(endpoint), **kwargs)


_route_classes: dict[type, type] = {APIRoute: TetherRoute}


def _route_class(base: type) -> type:
    """``TetherRoute``'s behaviour over an app's route class ``base``."""
    if issubclass(base, TetherRoute):
        return base
    made = _route_classes.get(base)
    if made is None:
        made = _route_classes[base] = type(f"Tether{base.__name__}", (TetherRoute, base), {})
    return made


@overload
def Inject(key: type[T]) -> T: ...
@overload
def Inject(key: str) -> Any: ...


def Inject(key: Key) -> Any:  # noqa: N802 (named like fastapi.Depends, which it is)
    """A FastAPI dependency resolving ``key`` from the request's container (``aresolve``: async
    factories are awaited); ``FromTether[S]`` is ``Annotated[S, Inject(S)]``, the typed way. As a
    default (``svc: S = Inject(S)``) it is typed as an ``S`` for type checkers (it is a ``Depends``).

    In an endpoint of a ``TetherRoute`` the endpoint resolves it itself (see the module).
    The same object for the same key every time: ``app.dependency_overrides[injector(S)]`` replaces
    it (prefer ``root.override(S, fake)`` in tests: that reaches what depends on ``S`` too); a
    ``TetherRoute`` endpoint calls such an override without arguments (one taking some is a logged
    500 saying so).
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
