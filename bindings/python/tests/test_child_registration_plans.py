"""A child per request with a registration of its own (its request object, say): the library resolves
a key the first time (``Container._first_resolve``), then describes its plan (the child's registration
one of its steps), and a child whose plan is described the same as an earlier sibling's runs that
sibling's prepared plan with its own registrations (``Container._prepared_again``); what it runs, and
how it fails, is each child's own."""

from __future__ import annotations

import gc
import weakref
from concurrent.futures import ThreadPoolExecutor

import pytest

import tether
from tether import Scope, executor


class Settings:
    pass


class Request:
    pass


class Svc:
    def __init__(self, settings: Settings) -> None:
        self.settings = settings


class Handler:
    def __init__(self, request: Request, svc: Svc) -> None:
        self.request, self.svc = request, svc


def app() -> tether.Container:
    root = tether.Container()
    root.register(Settings, Settings, deps=[], scope=Scope.SINGLETON)
    root.register(Svc, Svc, deps=[Settings])
    root.register(Handler, Handler, deps=[Request, Svc])
    root.register_value(Request)
    return root


def per_request(root: tether.Container, request: object, factory=None) -> Handler:
    """Handler from a child registering ``request``, resolved twice: by the library, then from its plan."""
    with tether.Container(root) as child:
        child.register(Request, factory or (lambda: request), deps=[])
        first = child.resolve(Handler)
        assert first.request is request or factory is not None
        return child.resolve(Handler)


def test_each_child_runs_its_own_registration() -> None:
    root = app()
    settings = root.resolve(Settings)
    requests = [Request() for _ in range(4)]
    handlers = [per_request(root, request) for request in requests]
    assert [h.request for h in handlers] == requests  # not the first child's factory again
    assert all(h.svc.settings is settings for h in handlers)
    assert len({id(h.svc) for h in handlers}) == 4
    root.close()


def test_the_second_child_reuses_the_first_ones_prepared_plan(monkeypatch: pytest.MonkeyPatch) -> None:
    root = app()
    root.resolve(Settings)
    per_request(root, Request())
    prepared: list[object] = []
    real = executor.prepare
    monkeypatch.setattr(executor, "prepare", lambda *a, **k: prepared.append(a) or real(*a, **k))
    request = Request()
    assert per_request(root, request).request is request
    assert prepared == []  # the template of the first child: nothing prepared again
    root.register(Svc, Svc, deps=[Settings])  # the parent reconfigured: its templates go
    assert per_request(root, request).request is request
    assert len(prepared) == 1
    root.close()


def test_a_template_keeps_no_childs_objects() -> None:
    root = app()
    request = Request()
    gone = weakref.ref(request)
    per_request(root, request)
    del request
    gc.collect()
    assert gone() is None  # the parent's template holds none of the child's registrations
    root.close()


def test_another_declaration_is_another_plan() -> None:
    root = app()
    root.register("Path", lambda: "/x", deps=[])
    per_request(root, Request())
    with tether.Container(root) as child:
        seen = []
        child.register(Request, lambda path: seen.append(path) or Request(), deps=["Path"])
        handler = child.resolve(Handler)
    assert isinstance(handler.request, Request) and seen == ["/x"]
    root.close()


def test_a_failing_factory_in_a_later_child_fails_as_the_library_says() -> None:
    root = app()
    per_request(root, Request())

    def broken() -> Request:
        raise RuntimeError("no request")

    with pytest.raises(tether.FactoryError) as info:
        per_request(root, None, broken)
    by_library = str(info.value)
    assert 'factory for "test_child_registration_plans.Request" raised RuntimeError: no request' in str(info.value)
    assert isinstance(info.value.__cause__, RuntimeError)
    with pytest.raises(tether.FactoryError) as info:
        per_request(root, None, lambda: None)
    assert "returned None" in str(info.value)
    failing = [False]

    def sometimes() -> Request:
        if failing[0]:
            raise RuntimeError("no request")
        return Request()

    with tether.Container(root) as child:  # the second resolve runs the plan: it fails as the first would
        child.register(Request, sometimes, deps=[])
        child.resolve(Handler)
        failing[0] = True
        with pytest.raises(tether.FactoryError) as again:
            child.resolve(Handler)
        failing[0] = False
        assert isinstance(child.resolve(Handler).request, Request)
    assert str(again.value) == by_library and isinstance(again.value.__cause__, RuntimeError)
    request = Request()
    assert per_request(root, request).request is request
    root.close()


def test_a_childs_registration_stays_visible_to_c() -> None:
    root = app()
    per_request(root, Request())
    with tether.Container(root) as child:
        request = Request()
        child.register(Request, lambda: request, deps=[])
        assert child.resolve(Handler).request is request
        assert child.handle and child.resolve(Request) is request
    root.close()


def test_teardown_runs_once_per_child() -> None:
    root = app()
    closed: list[object] = []
    for _ in range(3):
        request = Request()
        with tether.Container(root) as child:
            child.register(Request, lambda: request, deps=[], close=closed.append)
            assert child.resolve(Handler).request is request
    assert len(closed) == 3 and len({id(obj) for obj in closed}) == 3
    root.close()


def test_children_per_request_on_threads() -> None:
    root = app()
    settings = root.resolve(Settings)
    failures: list[str] = []

    def serve() -> None:
        for _ in range(200):
            request = Request()
            handler = per_request(root, request)
            if handler.request is not request or handler.svc.settings is not settings:
                failures.append("wrong graph")

    with ThreadPoolExecutor(4) as pool:
        for done in [pool.submit(serve) for _ in range(4)]:
            done.result()
    assert failures == []
    root.close()


def _gen():
    yield 1


async def _coro():
    return 1


async def _agen():
    yield 1


def _wrapped():
    return 1


_wrapped.__wrapped__ = _coro  # type: ignore[attr-defined]


@pytest.mark.parametrize("fn", [lambda: 1, _gen, _coro, _agen, _wrapped, lambda x, *a: 1, lambda *, k: 1])
def test_code_flags_answer_as_inspect_does(fn) -> None:
    import inspect

    from tether import aio, parameters, teardown

    slow = (inspect.iscoroutinefunction(fn) or inspect.isasyncgenfunction(fn)
            or inspect.iscoroutinefunction(fn.__call__) or inspect.isasyncgenfunction(fn.__call__))
    assert aio.is_async(fn) == slow
    assert (teardown.wrap("K", fn, None) is not None) == inspect.isgeneratorfunction(fn)
    try:
        autowired = parameters.infer(fn, "x")
    except TypeError:
        autowired = None
    assert autowired == (parameters.Parameters([], 0, []) if not inspect.signature(fn).parameters else None)
