"""Concurrency beyond resolves: close() while other threads resolve from the container, and a forked
child using the containers, instances and caches made before the fork."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import threading
from typing import Iterator

import pytest
from conftest import subprocess_env

import tether
from tether import Scope, teardown


class Db:
    pass


class Repo:
    def __init__(self, db: Db) -> None:
        self.db = db


def test_close_while_other_threads_resolve() -> None:
    log: list[str] = []

    def db() -> Iterator[Db]:
        log.append("make Db")
        yield Db()
        log.append("close Db")

    root = tether.Container()
    root.register(Db, db, scope=Scope.SINGLETON)
    root.register(Repo, deps=[Db])
    first = root.resolve(Repo).db
    counts = [0] * 4
    errors: list[BaseException] = []
    running = threading.Barrier(len(counts) + 1)

    def work(i: int) -> None:
        running.wait()
        while True:
            try:
                repo = root.resolve(Repo)
            except tether.InvalidHandleError:
                return  # closed under it: said so, nothing else
            except BaseException as exc:  # anything else is a bug
                errors.append(exc)
                return
            if repo.db is not first:
                errors.append(AssertionError("a second Db"))
                return
            counts[i] += 1

    threads = [threading.Thread(target=work, args=(i,)) for i in range(len(counts))]
    for t in threads:
        t.start()
    running.wait()
    while min(counts) < 20:  # every thread is resolving
        threading.Event().wait(0.001)
    root.close()
    for t in threads:
        t.join(10)
    assert not any(t.is_alive() for t in threads)
    assert errors == []
    assert log == ["make Db", "close Db"]  # made once, torn down once, by the close
    with pytest.raises(tether.InvalidHandleError):
        root.resolve(Repo)
    assert teardown.pending_count() == 0


FORK_SCRIPT = textwrap.dedent(
    """
    import os, sys, threading, traceback
    from typing import Iterator
    import tether
    from tether import Scope

    class Db: pass
    class Repo:
        def __init__(self, db: Db) -> None: self.db = db
    class Shared: pass
    class Request: pass

    log = []
    def make_db() -> Iterator[Db]:
        yield Db()
        log.append("close Db")

    root = tether.Container()
    root.register(Db, make_db, scope=Scope.SINGLETON)
    root.register(Repo, deps=[Db])
    root.register(Shared, scope=Scope.WEAK)
    root.register_value(Request)
    root.register("scoped", lambda r: [r], deps=[Request], scope=Scope.CONTAINER)
    db, shared, repo = root.resolve(Db), root.resolve(Shared), root.resolve(Repo)
    request = Request()
    child = tether.Container(parent=root, values={Request: request})
    scoped = child.resolve("scoped")

    stop = threading.Event()
    def busy():  # another thread resolving while the fork happens
        while not stop.is_set():
            with tether.Container(parent=root, values={Request: Request()}) as c:
                c.resolve("scoped"); c.resolve(Repo)
    worker = threading.Thread(target=busy)
    worker.start()
    for _ in range(200):
        root.resolve(Repo)

    pid = os.fork()
    if pid == 0:
        try:
            assert root.resolve(Db) is db                     # the cached singleton
            assert root.resolve(Shared) is shared             # the weak-scoped instance still held
            again = root.resolve(Repo)
            assert again.db is db and again is not repo
            assert child.resolve("scoped") is scoped          # the child's CONTAINER-scoped cache
            assert child.resolve("scoped")[0] is request
            with tether.Container(parent=root, values={Request: Request()}) as c:
                assert c.resolve("scoped") is not scoped
            child.close()
            try:
                root.close()
            except tether.InvalidArgumentError as exc:  # the worker's request, open at the fork, stays open here
                assert "open child container" in str(exc)
                assert root.resolve(Db) is db and log == [], log
            else:
                assert log == ["close Db"], log               # torn down in the child, once
            os._exit(0)
        except BaseException:
            traceback.print_exc()
            os._exit(1)
    stop.set()
    worker.join()
    _, status = os.waitpid(pid, 0)
    assert root.resolve(Db) is db                             # the parent goes on as before
    child.close()
    root.close()
    assert log == ["close Db"]
    print("child exit", os.waitstatus_to_exitcode(status))
    """
)


@pytest.mark.skipif(not hasattr(__import__("os"), "fork"), reason="needs os.fork")
def test_a_forked_child_uses_what_was_made_before_the_fork() -> None:
    done = subprocess.run([sys.executable, "-c", FORK_SCRIPT], env=subprocess_env(), capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "child exit 0" in done.stdout, done.stdout + done.stderr
