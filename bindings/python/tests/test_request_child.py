"""A request's child (made with values, no C container) runs the whole request from the plan its
parent described, CONTAINER-scoped steps included (TETHER_PLAN_STEP_CONTAINER): made once per
child (``aresolve`` awaits async factories itself), kept by the child, torn down at its close last
kept first, as the library's cache (the failure thrown in); handed to the child's C container (``tether_plan_adopt``) if
something ever needs one."""

from __future__ import annotations

import asyncio
from typing import AsyncIterator, Iterator

import pytest

import tether
from tether import Scope


class Request:
    def __init__(self, path: str) -> None:
        self.path = path


class Session:
    def __init__(self, request: Request) -> None:
        self.request = request


class Uow:  # CONTAINER-scoped over the session: made after it, torn down before it
    def __init__(self, session: Session) -> None:
        self.session = session


class Repo:
    def __init__(self, session: Session) -> None:
        self.session = session


class Service:
    def __init__(self, repo: Repo, uow: Uow) -> None:
        self.repo, self.uow = repo, uow


class Other:  # a second graph of the request over the same session
    def __init__(self, session: Session) -> None:
        self.session = session


class Late:  # CONTAINER-scoped, made by the library after the child got its C container
    def __init__(self, session: Session) -> None:
        self.session = session


def _root(events: list[str], *, suspend: bool = False, sync: bool = False) -> tether.Container:
    root = tether.Container()
    root.register_value(Request)
    if sync:
        def session(request: Request) -> Iterator[Session]:
            s = Session(request)
            events.append(f"open {request.path}")
            try:
                yield s
            except BaseException as exc:
                events.append(f"rollback {request.path} {type(exc).__name__}")
                raise
            else:
                events.append(f"commit {request.path}")
        root.register(Session, session, scope=Scope.CONTAINER)
    else:
        async def asession(request: Request) -> AsyncIterator[Session]:
            if suspend:
                await asyncio.sleep(0)
            s = Session(request)
            events.append(f"open {request.path}")
            try:
                yield s
            except BaseException as exc:
                events.append(f"rollback {request.path} {type(exc).__name__}")
                raise
            else:
                if suspend:
                    await asyncio.sleep(0)
                events.append(f"commit {request.path}")
        root.register(Session, asession, scope=Scope.CONTAINER)

    def uow(session: Session) -> Iterator[Uow]:
        events.append("begin uow")
        yield Uow(session)
        events.append("end uow")

    root.register(Uow, uow, scope=Scope.CONTAINER)
    root.register(Repo)
    root.register(Service)
    root.register(Other)
    return root


@pytest.mark.parametrize("suspend", [False, True])
def test_a_request_is_run_from_the_parents_plan_with_no_c_container(suspend: bool) -> None:
    events: list[str] = []
    root = _root(events, suspend=suspend)

    async def request(path: str) -> tuple[Service, Other, Session]:
        before = len(events)
        async with tether.Container(parent=root, values={Request: Request(path)}) as child:
            service = await child.aresolve(Service)
            again = await child.aresolve(Service)
            other = await child.aresolve(Other)
            session = await child.aresolve(Session)  # a CONTAINER-scoped root: the child's one
            assert child._handle is None  # the library never needed a C container for it
            assert service is not again and service.repo is not again.repo  # graph-scoped: one per resolve
            assert service.uow is again.uow and service.repo.session is session is other.session is service.uow.session
            assert session.request.path == path
            assert events[before:] == [f"open {path}", "begin uow"]  # once each in the request
            events.append("handled")
        return service, other, session

    async def both() -> None:
        first = await request("/a")
        second = await request("/b")
        assert first[2] is not second[2] and first[0].uow is not second[0].uow  # one per request

    asyncio.run(both())
    # each teardown once, at the child's close, last made first (the unit of work before its session)
    assert events == ["open /a", "begin uow", "handled", "end uow", "commit /a",
                      "open /b", "begin uow", "handled", "end uow", "commit /b"]
    root.close()


def test_a_failed_request_throws_its_exception_into_the_teardowns() -> None:
    events: list[str] = []
    root = _root(events)

    async def run() -> None:
        with pytest.raises(KeyError):
            async with tether.Container(parent=root, values={Request: Request("/x")}) as child:
                await child.aresolve(Service)
                raise KeyError("handler failed")

    asyncio.run(run())
    # thrown into each generator teardown, last made first (the unit of work re-raised it)
    assert events == ["open /x", "begin uow", "rollback /x KeyError"]
    root.close()


def test_sync_close_with_async_teardown_pending_says_aclose() -> None:
    events: list[str] = []
    root = _root(events)

    async def run() -> None:
        child = tether.Container(parent=root, values={Request: Request("/s")})
        await child.aresolve(Session)
        with pytest.raises(TypeError, match="aclose"):  # (tether.errors.NeedsAwait)
            child.close()
        assert not child.closed and events == ["open /s"]
        await child.aclose()
        assert child.closed and events == ["open /s", "commit /s"]

    asyncio.run(run())
    root.close()


def test_a_synchronous_request_runs_the_plan_too() -> None:
    events: list[str] = []
    root = _root(events, sync=True)
    with tether.Container(parent=root, values={Request: Request("/sync")}) as child:
        service = child.resolve(Service)
        assert child.resolve(Other).session is service.repo.session is child.resolve(Session)
        assert child._handle is None
    assert events == ["open /sync", "begin uow", "end uow", "commit /sync"]
    root.close()


def test_the_c_container_adopts_what_the_request_made() -> None:
    events: list[str] = []
    root = _root(events)

    def late(session: Session) -> Iterator[Late]:
        events.append("make late")
        yield Late(session)
        events.append("end late")

    root.register(Late, late, scope=Scope.CONTAINER)

    async def run() -> None:
        async with tether.Container(parent=root, values={Request: Request("/c")}) as child:
            service = await child.aresolve(Service)
            assert child._handle is None
            assert child.handle  # something needs the library: it gets a C container, adopting what was made
            # the library's resolves now take the adopted instances (no factory runs again)
            assert (await child.aresolve(Session)) is service.repo.session
            assert child.resolve(Uow) is service.uow
            assert child.resolve(Late).session is service.repo.session  # made by the library, after them
            assert events.count("open /c") == 1 and events.count("begin uow") == 1

    asyncio.run(run())
    # the library tears down its cache last made first: the later one, then what was adopted, in order
    assert events == ["open /c", "begin uow", "make late", "end late", "end uow", "commit /c"]
    root.close()


def test_a_failing_step_tears_down_what_the_run_made_and_keeps_nothing() -> None:
    events: list[str] = []
    root = _root(events)
    fail = [True]

    class Broken:
        def __init__(self, uow: Uow) -> None:
            if fail[0]:
                raise ValueError("broken")
            self.uow = uow

    root.register(Broken)

    async def run() -> None:
        async with tether.Container(parent=root, values={Request: Request("/f")}) as child:
            with pytest.raises(tether.FactoryError) as caught:
                await child.aresolve(Broken)
            assert "Broken" in str(caught.value) and isinstance(caught.value.__cause__, ValueError)
            # what that resolve made is gone (as the library's failed resolve), each teardown once
            assert events == ["open /f", "begin uow", "end uow", "commit /f"]
            fail[0] = False
            broken = await child.aresolve(Broken)  # made again, kept this time
            assert broken.uow.session.request.path == "/f"
            assert events.count("open /f") == 2

    asyncio.run(run())
    assert events == ["open /f", "begin uow", "end uow", "commit /f", "open /f", "begin uow", "end uow", "commit /f"]
    root.close()


def test_concurrent_resolves_of_one_request_make_its_session_once() -> None:
    events: list[str] = []
    root = _root(events, suspend=True)

    async def run() -> None:
        async with tether.Container(parent=root, values={Request: Request("/p")}) as child:
            results = await asyncio.gather(*(child.aresolve(Service) for _ in range(8)))
            assert len({id(s.repo.session) for s in results}) == 1 and len({id(s.uow) for s in results}) == 1
            assert events.count("open /p") == 1 and events.count("begin uow") == 1

    asyncio.run(run())
    assert events == ["open /p", "begin uow", "end uow", "commit /p"]
    root.close()


def test_cancelling_a_request_keeps_nothing_it_made() -> None:
    events: list[str] = []
    root = tether.Container()
    root.register_value(Request)
    started = asyncio.Event

    async def slow(request: Request) -> AsyncIterator[Session]:
        events.append("enter")
        try:
            await asyncio.sleep(10)
        except asyncio.CancelledError:
            events.append("cancelled")
            raise
        yield Session(request)
        events.append("never")

    root.register(Session, slow, scope=Scope.CONTAINER)
    root.register(Repo)

    async def run() -> None:
        async with tether.Container(parent=root, values={Request: Request("/k")}) as child:
            task = asyncio.ensure_future(child.aresolve(Repo))
            await asyncio.sleep(0.01)
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task
            assert child._scoped is None and not child._making  # nothing kept, nothing claimed
    del started
    asyncio.run(run())
    assert events == ["enter", "cancelled"]
    root.close()


def test_aclose_awaits_the_teardowns_on_its_own_task_with_no_task_made() -> None:
    """A request's close awaits what its plans made on the closing task itself: an async generator
    session suspending in its commit, a sync generator before it; no task, no thread, no queue."""
    events: list[str] = []
    root = _root(events, suspend=True)
    tasks: list[object] = []

    async def run() -> None:
        loop = asyncio.get_running_loop()
        loop.set_task_factory(lambda loop, coro, **kw: tasks.append(coro) or asyncio.Task(coro, loop=loop, **kw))
        me = asyncio.current_task()
        seen: list[object] = []
        child = tether.Container(parent=root, values={Request: Request("/t")})
        service = await child.aresolve(Service)
        assert service.repo.session is service.uow.session
        original = service.uow.session  # (the session's commit runs on the closing task)
        events.append("handled")
        seen.append(asyncio.current_task())
        await child.aclose()
        seen.append(asyncio.current_task())
        assert seen == [me, me] and original is not None
        await child.aclose()  # idempotent: nothing runs twice
        assert tasks == []  # (asyncio.run's own shutdown makes some after this)

    asyncio.run(run())
    assert events == ["open /t", "begin uow", "handled", "end uow", "commit /t"]
    root.close()


def test_a_request_waiting_for_its_session_while_the_child_gets_a_c_container_asks_the_library() -> None:
    """One resolve of a request makes its session (suspended), a second waits for it; meanwhile the
    child gets its C container: the waiting one asks the library, which has the session adopted."""
    events: list[str] = []
    root = _root(events, suspend=True)

    async def run() -> None:
        async with tether.Container(parent=root, values={Request: Request("/c")}) as child:
            first = asyncio.ensure_future(child.aresolve(Service))
            second = asyncio.ensure_future(child.aresolve(Other))
            await asyncio.sleep(0)  # both started: the first makes the session, the second waits
            assert child._making
            assert child.handle  # (its C container, made now)
            service, other = await asyncio.gather(first, second)
            assert other.session is service.repo.session
            assert events.count("open /c") == 1

    asyncio.run(run())
    assert events == ["open /c", "begin uow", "end uow", "commit /c"]
    root.close()


@pytest.mark.parametrize("with_c_container", [False, True])
def test_a_request_lets_go_last_cached_first_as_the_library_does(with_c_container: bool) -> None:
    """A request's close lets go of what its plans made last *cached* first (the library's rule,
    tether_container_free): one resolve makes First, then suspends in Slow's async factory; a second
    makes Tag and caches it meanwhile; the first caches First and Slow when it completes. So Tag,
    made after First, goes last. The same child with a C container from the start (the library's
    own resolves and cache) tears them down in the same order."""
    events: list[str] = []
    root = tether.Container()
    root.register_value(Request)

    class First:
        def __init__(self, request: Request) -> None:
            self.request = request

    class Slow:
        def __init__(self, first: First) -> None:
            self.first = first

    class Tag:
        def __init__(self, request: Request) -> None:
            self.request = request

    def first(request: Request) -> Iterator[First]:
        events.append("make first")
        yield First(request)
        events.append("end first")

    async def slow(first: First) -> AsyncIterator[Slow]:
        events.append("start slow")
        await asyncio.sleep(0)
        await asyncio.sleep(0)
        events.append("make slow")
        yield Slow(first)
        events.append("end slow")

    def tag(request: Request) -> Iterator[Tag]:
        events.append("make tag")
        yield Tag(request)
        events.append("end tag")

    root.register(First, first, deps=[Request], scope=Scope.CONTAINER)
    root.register(Slow, slow, deps=[First], scope=Scope.CONTAINER)
    root.register(Tag, tag, deps=[Request], scope=Scope.CONTAINER)

    async def run() -> None:
        child = tether.Container(parent=root, values={Request: Request("/o")})
        if with_c_container:
            assert child.handle
        one = asyncio.ensure_future(child.aresolve(Slow))
        while "start slow" not in events:
            await asyncio.sleep(0)
        assert (await child.aresolve(Tag)).request.path == "/o"
        assert (await one).first.request.path == "/o"
        assert (child._handle is not None) is with_c_container
        events.append("close")
        await child.aclose()

    asyncio.run(run())
    assert events == ["make first", "start slow", "make tag", "make slow", "close", "end slow", "end first", "end tag"]
    root.close()
