"""A failed request reaches its teardown: the exception leaving ``with``/``async with`` a container is
thrown into generator teardowns (``gen.throw``/``agen.athrow``), in the library's order, with
``contextlib.ExitStack``'s rules: swallowed -> suppressed (later teardowns see none), re-raised ->
passes unchanged, another raised -> later teardowns see that one and it is reported."""

from __future__ import annotations

import asyncio
import contextlib
from typing import AsyncIterator, Iterator

import pytest

import tether
from tether import Scope, teardown


class Session:
    pass


class Repo:
    def __init__(self, session: Session) -> None:
        self.session = session


def transactional(log: list[str], name: str, cls: type, *, swallow: bool = False, replace: bool = False):
    """A generator factory committing after yield, rolling back (and re-raising) on an exception."""

    def make(*args: object) -> Iterator[object]:
        obj = cls(*args)
        try:
            yield obj
        except BaseException as exc:
            log.append(f"{name} rollback {type(exc).__name__}")
            if replace:
                raise LookupError(f"{name} failed to roll back") from exc
            if not swallow:
                raise
        else:
            log.append(f"{name} commit")

    return make


def request_app(log: list[str], **repo_options: bool) -> tether.Container:
    root = tether.Container()
    root.register(Session, transactional(log, "Session", Session), scope=Scope.CONTAINER)
    root.register(Repo, transactional(log, "Repo", Repo, **repo_options), deps=[Session], scope=Scope.CONTAINER)
    return root


def test_a_failed_with_block_rolls_back_instead_of_committing() -> None:
    log: list[str] = []
    root = request_app(log)
    with pytest.raises(ValueError, match="handler failed"):
        with tether.Container(parent=root) as request:
            request.resolve(Repo)
            raise ValueError("handler failed")
    assert log == ["Repo rollback ValueError", "Session rollback ValueError"]  # dependents first
    log.clear()
    with tether.Container(parent=root) as request:  # a request that succeeds commits
        request.resolve(Repo)
    assert log == ["Repo commit", "Session commit"]
    root.close()
    assert teardown.pending_count() == 0


def test_the_rules_are_exit_stacks() -> None:
    """The same generators under contextlib.ExitStack and under a container end the same way."""

    def run_exit_stack(**repo_options: bool) -> tuple[list[str], str]:
        log: list[str] = []
        try:
            with contextlib.ExitStack() as stack:
                session = stack.enter_context(contextlib.contextmanager(transactional(log, "Session", Session))())
                stack.enter_context(contextlib.contextmanager(transactional(log, "Repo", Repo, **repo_options))(session))
                raise ValueError("handler failed")
        except Exception as exc:
            return log, type(exc).__name__
        return log, "suppressed"

    def run_container(**repo_options: bool) -> tuple[list[str], str]:
        log: list[str] = []
        root = request_app(log, **repo_options)
        try:
            with tether.Container(parent=root) as request:
                request.resolve(Repo)
                raise ValueError("handler failed")
        except tether.TeardownError as exc:
            return log, type(exc.exceptions[0]).__name__
        except Exception as exc:
            return log, type(exc).__name__
        finally:
            root.close()
        return log, "suppressed"

    for options in ({}, {"swallow": True}, {"replace": True}):
        assert run_container(**options) == run_exit_stack(**options), options
    # spelled out: swallowed -> the Session is resumed as after a success, the block's exception suppressed
    assert run_container(swallow=True) == (["Repo rollback ValueError", "Session commit"], "suppressed")
    # another raised -> the Session sees that one, and it is what comes out (in TeardownError)
    assert run_container(replace=True) == (["Repo rollback ValueError", "Session rollback LookupError"], "LookupError")


def test_a_replaced_exception_is_reported_with_the_original_as_context() -> None:
    log: list[str] = []
    root = request_app(log, replace=True)
    with pytest.raises(tether.TeardownError) as caught:
        with tether.Container(parent=root) as request:
            request.resolve(Repo)
            raise ValueError("handler failed")
    (replaced,) = caught.value.exceptions
    assert isinstance(replaced, LookupError) and isinstance(replaced.__cause__, ValueError)
    assert isinstance(caught.value.__context__, ValueError)
    root.close()


def test_close_after_a_with_free_of_exceptions_resumes_with_none() -> None:
    log: list[str] = []
    root = request_app(log)
    request = tether.Container(parent=root)
    request.resolve(Repo)
    try:
        raise ValueError("not leaving a with block")
    except ValueError:
        request.close()  # a plain close() throws nothing in, whatever is being handled
    assert log == ["Repo commit", "Session commit"]
    root.close()


def test_an_async_with_block_throws_into_async_generators() -> None:
    log: list[str] = []

    async def session() -> AsyncIterator[Session]:
        try:
            yield Session()
        except ValueError:
            await asyncio.sleep(0)  # suspends: awaited on the loop, in order
            log.append("Session rollback")
            raise
        else:
            log.append("Session commit")

    async def repo(s: Session) -> AsyncIterator[Repo]:
        try:
            yield Repo(s)
        except ValueError:
            log.append("Repo rollback")
            raise

    async def main() -> None:
        root = tether.Container()
        root.register(Session, session, scope=Scope.CONTAINER)
        root.register(Repo, repo, deps=[Session], scope=Scope.CONTAINER)
        with pytest.raises(ValueError, match="handler failed"):
            async with tether.Container(parent=root) as request:
                await request.aresolve(Repo)
                raise ValueError("handler failed")
        assert log == ["Repo rollback", "Session rollback"]
        log.clear()
        async with tether.Container(parent=root) as request:
            await request.aresolve(Repo)
        assert log == ["Session commit"]
        await root.aclose()

    asyncio.run(main())


def test_an_async_generator_swallowing_suppresses_like_an_async_exit_stack() -> None:
    log: list[str] = []

    async def session() -> AsyncIterator[Session]:
        try:
            yield Session()
        except ValueError:
            log.append("Session rollback")

    async def main() -> str:
        root = tether.Container()
        root.register(Session, session, scope=Scope.CONTAINER)
        try:
            async with tether.Container(parent=root) as request:
                await request.aresolve(Session)
                raise ValueError("handler failed")
        except ValueError:
            return "raised"
        finally:
            await root.aclose()
        return "suppressed"

    assert asyncio.run(main()) == "suppressed"
    assert log == ["Session rollback"]
