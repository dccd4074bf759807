"""The FastAPI test pattern of bindings/python/README.md ("Testing a FastAPI app"), as it is written
there: an app module with ``install(app, root)``, pytest fixtures overriding ``Pool`` in ``root``
and a TestClient; then ``app.dependency_overrides`` on ``injector(K)`` (the one callable of every
``Inject(K)``)."""

from __future__ import annotations

from typing import Iterator

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("httpx")  # the TestClient's transport

from fastapi import FastAPI  # noqa: E402
from fastapi.testclient import TestClient  # noqa: E402

import tether  # noqa: E402
from tether.fastapi import FromTether, Inject, injector, install  # noqa: E402

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")

# ---- the app module of the README ---------------------------------------------------------------


class Pool:
    def __init__(self, rows: list[str] | None = None) -> None:
        self.rows = rows if rows is not None else ["real"]


class ItemService:
    def __init__(self, pool: Pool) -> None:
        self.pool = pool

    def names(self) -> list[str]:
        return list(self.pool.rows)


root = tether.Container()
root.register(Pool, scope=tether.Scope.SINGLETON)
root.register(ItemService, scope=tether.Scope.SINGLETON)  # built over Pool
app = FastAPI()
install(app, root)


@app.get("/items")
async def items(svc: FromTether[ItemService]) -> list[str]:
    return svc.names()


# ---- the conftest.py of the README --------------------------------------------------------------


@pytest.fixture
def fake_pool() -> Iterator[Pool]:
    pool = Pool(["a", "b"])
    with root.override(Pool, pool):  # ItemService is rebuilt over it, and over the real Pool after
        yield pool


@pytest.fixture
def client() -> Iterator[TestClient]:
    with TestClient(app) as client:
        yield client


# ---- the tests of the README ------------------------------------------------------------------


def test_items(client: TestClient, fake_pool: Pool) -> None:
    assert client.get("/items").json() == ["a", "b"]


def test_items_real(client: TestClient) -> None:
    assert client.get("/items").json() == ["real"]


# ---- beyond the README: what those tests rely on ----------------------------------------------


def test_the_singleton_is_rebuilt_over_the_fake_and_back(client: TestClient) -> None:
    before = root.resolve(ItemService)
    with root.override(Pool, Pool(["x"])):
        during = root.resolve(ItemService)
        assert during is not before and client.get("/items").json() == ["x"]
    after = root.resolve(ItemService)
    assert after is not during and after.pool is before.pool
    assert client.get("/items").json() == ["real"]


def test_inject_is_one_dependency_per_key_and_dependency_overrides_reach_it(client: TestClient) -> None:
    assert Inject(ItemService) is Inject(ItemService)
    assert injector(ItemService) is injector(ItemService)
    assert injector(ItemService) is not injector(Pool)

    class Fake:
        def names(self) -> list[str]:
            return ["overridden"]

    app.dependency_overrides[injector(ItemService)] = Fake
    try:
        assert client.get("/items").json() == ["overridden"]
    finally:
        app.dependency_overrides.clear()
    assert client.get("/items").json() == ["real"]


@pytest.fixture(scope="module", autouse=True)
def _close_root() -> Iterator[None]:
    yield
    root.close()
