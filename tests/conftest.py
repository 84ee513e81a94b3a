"""Fixtures: demo and sample databases, real servers over them, keyed HTTP clients."""

from __future__ import annotations

import os
import re
import secrets
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import jsonschema
import pytest

from edukg.adapters.config import Settings
from edukg.app.core import EdukgApp
from edukg.cli import build_demo
from edukg.ingest.builder import load
from edukg.ingest.index import index
from edukg.store import open_key_store
from harness.processes import MARK, stop, strays, uptime
from tests.support import BASE, CONTRACT, SAMPLE, ServerThread, contract_schema

# The store contract, and tests that ask for `fresh_db` or `any_demo_db`, run on both backends.
BACKENDS = ["sqlite", "postgres"]
# The HTTP suite runs on SQLite; the store contract suite proves PostgreSQL answers alike,
# and test_scaleout runs every operation on both and compares the bytes.
# EDUKG_HTTP_BACKENDS=sqlite,postgres runs the whole HTTP suite on both.
HTTP_BACKENDS = os.environ.get("EDUKG_HTTP_BACKENDS", "sqlite").split(",")
PG_ADMIN = os.environ.get("EDUKG_TEST_PG", "postgresql://postgres@127.0.0.1:5432/postgres")
REDIS_URL = os.environ.get("EDUKG_TEST_REDIS", "redis://127.0.0.1:6379/0")  # /N: its db
# Test databases are named PREFIX_<pid>_<random>_<purpose>, and all dropped at the end.
PG_PREFIX = os.environ.get("EDUKG_TEST_PG_PREFIX", "edukg_test")
if not re.fullmatch(r"[a-z_][a-z0-9_]{0,30}", PG_PREFIX):
    raise SystemExit(f"EDUKG_TEST_PG_PREFIX={PG_PREFIX!r}: use lower-case letters, digits, '_'")
# In the names of the keys tests rate-limit in Redis, so the run removes its own.
RUN = os.environ.get("EDUKG_TEST_RUN") or secrets.token_hex(4)
# Every process this run starts carries the mark (harness.processes.strays finds them).
os.environ.setdefault(MARK, f"{os.getpid()}-{secrets.token_hex(4)}")


@pytest.fixture(scope="module", autouse=True)
def _no_stray_processes() -> Iterator[None]:
    """What a module's tests started and left running with no parent among the tests (a
    server whose wrapper was killed, a load's background index) is stopped at its end."""
    since = uptime()
    yield
    for pid in strays(since):
        stop(pid)


def _required_or_skip(what: str, reason: str) -> None:
    """Skip a test that needs an absent service; under CI=true, fail instead."""
    if os.environ.get("CI") == "true":
        pytest.fail(f"{what} is required under CI=true but {reason}")
    pytest.skip(f"{what} is not available: {reason}")


@pytest.fixture(scope="session")
def postgres() -> Iterator[Callable[[str], str]]:
    """Make PostgreSQL databases for this test run; all are dropped at its end."""
    import psycopg

    try:
        admin = psycopg.connect(PG_ADMIN, autocommit=True, connect_timeout=3)
    except psycopg.OperationalError as exc:
        _required_or_skip(f"PostgreSQL at {PG_ADMIN}", str(exc).strip())
    run = f"{PG_PREFIX}_{os.getpid()}_{secrets.token_hex(3)}"
    made: list[str] = []

    def make(purpose: str) -> str:
        name = f"{run}_{purpose}_{len(made)}"
        admin.execute(f'CREATE DATABASE "{name}"')
        made.append(name)
        return PG_ADMIN.rsplit("/", 1)[0] + "/" + name

    yield make
    for name in made:
        admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    admin.close()


@pytest.fixture(scope="session")
def redis_url() -> Iterator[str]:
    """The Redis that rate-limit tests share (skips when unreachable, fails under CI);
    the buckets of this run's keys (named with RUN) are removed at its end."""
    import redis

    client = redis.Redis.from_url(REDIS_URL, socket_connect_timeout=2)
    try:
        client.ping()
    except redis.RedisError as exc:
        client.close()
        _required_or_skip(f"Redis at {REDIS_URL}", str(exc))
    yield REDIS_URL
    try:
        for name in client.scan_iter(match=f"edukg:rl:*{RUN}*", count=500):
            client.delete(name)
    finally:
        client.close()


def _db_for(
    backend: str, purpose: str, tmp: pytest.TempPathFactory, request: pytest.FixtureRequest
) -> str:
    if backend == "postgres":
        make: Callable[[str], str] = request.getfixturevalue("postgres")
        return make(purpose)
    return str(tmp.mktemp(purpose) / "edukg.db")


_DEMO_DBS: dict[str, str] = {}


def _demo_db(backend: str, tmp: pytest.TempPathFactory, request: pytest.FixtureRequest) -> str:
    """The demo database of one backend, built once per run whichever fixture asks."""
    if backend not in _DEMO_DBS:
        db = _db_for(backend, "demo", tmp, request)
        build_demo(db)
        index(db)  # search on the demo is hybrid; the sample stays lexical (no index)
        _DEMO_DBS[backend] = db
    return _DEMO_DBS[backend]


@pytest.fixture(scope="session", params=HTTP_BACKENDS)
def demo_db(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> str:
    """A database holding the demo graph (SQLite unless EDUKG_HTTP_BACKENDS says more)."""
    return _demo_db(request.param, tmp_path_factory, request)


@pytest.fixture(scope="session", params=BACKENDS)
def any_demo_db(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> str:
    """The demo graph on each backend: for tests whose point is that both answer alike."""
    return _demo_db(request.param, tmp_path_factory, request)


@pytest.fixture(scope="session")
def indexed_sample_db(tmp_path_factory: pytest.TempPathFactory) -> str:
    """A SQLite database holding ../shared/data/kg-sample with its semantic index (skips
    without the sample or ONNX Runtime): what alignment is measured on."""
    from edukg.model.encoder import available

    if not available():
        pytest.skip("ONNX Runtime is not installed (pip install 'edukg[index]')")
    if not (SAMPLE / "nodes.jsonl").is_file():
        pytest.skip(f"the real export sample is not at {SAMPLE}")
    db = str(tmp_path_factory.mktemp("indexed-sample") / "sample.db")
    load([str(SAMPLE)], db, data_version="1.0.0")
    index(db)
    return db


@pytest.fixture(scope="session", params=HTTP_BACKENDS)
def sample_db(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> str:
    """A database holding ../shared/data/kg-sample (skips when it is absent)."""
    if not (SAMPLE / "nodes.jsonl").is_file():
        pytest.skip(f"the real export sample is not at {SAMPLE}")
    db = _db_for(request.param, "sample", tmp_path_factory, request)
    load([str(SAMPLE)], db, "1.11.0")
    return db


@pytest.fixture(params=BACKENDS)
def fresh_db(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> str:
    """An empty database for one test, on each backend."""
    return _db_for(request.param, "fresh", tmp_path_factory, request)


class Api:
    """A keyed HTTP client on a running server, with base-path-relative helpers."""

    def __init__(self, server: ServerThread, key: str) -> None:
        self.server = server
        self.key = key
        self.http = httpx.Client(base_url=server.url, timeout=10)

    def get(self, path: str, key: str | None = None, **params: Any) -> httpx.Response:
        """GET `path` under the base path, with this client's key unless told otherwise."""
        headers = {"x-api-key": self.key if key is None else key} if key != "" else {}
        return self.http.get(BASE + path, params=params, headers=headers)

    def ok(self, path: str, **params: Any) -> Any:
        """GET, assert 200, return the JSON."""
        response = self.get(path, **params)
        assert response.status_code == 200, response.text
        return response.json()

    def walk(self, path: str, **params: Any) -> list[dict[str, Any]]:
        """Every record of a paged list, following nextCursor to the end."""
        records: list[dict[str, Any]] = []
        cursor = None
        for _ in range(10_000):
            body = self.ok(path, **params, **({"cursor": cursor} if cursor else {}))
            records.extend(body["data"])
            if not body["pagination"]["hasMore"]:
                assert body["pagination"]["nextCursor"] is None
                return records
            cursor = body["pagination"]["nextCursor"]
        raise AssertionError("paging did not end")


def _serve(db: str) -> Iterator[Api]:
    keys = open_key_store(db)
    key = keys.create(f"test-{len(keys.list())}", rate=0)  # unlimited: tests walk pages
    keys.close()
    # refresh=0: PostgreSQL readers look for a new version on every request, so tests
    # of reloads need not wait.
    server = ServerThread(EdukgApp(Settings(db=db, refresh=0))).start()
    api = Api(server, key)
    try:
        yield api
    finally:
        api.http.close()
        server.stop()


@pytest.fixture(scope="session")
def demo(demo_db: str) -> Iterator[Api]:
    """A server over the demo graph."""
    yield from _serve(demo_db)


@pytest.fixture(scope="session")
def any_demo(any_demo_db: str) -> Iterator[Api]:
    """A server over the demo graph, on each backend."""
    yield from _serve(any_demo_db)


@pytest.fixture(scope="session")
def sample(sample_db: str) -> Iterator[Api]:
    """A server over the real export sample."""
    yield from _serve(sample_db)


@pytest.fixture
def serve() -> Iterator[Callable[[str], Api]]:
    """Start servers over any database; stopped at the end of the test."""
    started: list[Iterator[Api]] = []

    def start(db: str) -> Api:
        gen = _serve(db)
        started.append(gen)
        return next(gen)

    yield start
    for gen in started:
        for _ in gen:
            pass


@pytest.fixture(scope="session")
def conforms() -> Callable[[str, Any], None]:
    """Assert that a body matches the published contract's schema for an operation path."""
    if not CONTRACT.is_file():
        pytest.skip(f"the published contract is not at {CONTRACT}")

    def check(
        path: str, body: Any, status: str = "200", nullable: frozenset[str] = frozenset()
    ) -> None:
        jsonschema.validate(body, contract_schema(path, status, nullable))

    return check


def error_of(response: httpx.Response, status: int, error: str) -> dict[str, Any]:
    """Assert an Error-shaped response; return its body. /mcp refuses with a JSON-RPC
    error whose `data` is the Error (app/mcp_entrance.py): that is checked and returned."""
    assert response.status_code == status, response.text
    body: dict[str, Any] = response.json()
    if "jsonrpc" in body:
        assert body["error"]["code"] == -32001 and body["error"]["message"], body
        assert body["error"]["message"] == body["error"]["data"]["message"]
        body = body["error"]["data"]
    assert body["error"] == error
    assert isinstance(body["message"], str)
    assert body["message"]
    assert body["requestId"] == response.headers["x-request-id"]
    assert "Traceback" not in response.text
    assert "sqlite" not in response.text.lower()
    return body


# The explorer's browser tests (tests/test_explorer.py and others).
CHROMIUM = os.environ.get("EDUKG_CHROMIUM", shutil.which("chromium") or "/usr/bin/chromium")
FLAGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync"]  # fmt: skip


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    """Chromium for a module's tests (a module with async tests uses `lone_browser`:
    Playwright's own event loop runs as long as it does)."""
    yield from _launched()


@pytest.fixture
def lone_browser() -> Iterator[object]:
    """Chromium for one test."""
    yield from _launched()


def _launched() -> Iterator[object]:
    if not Path(CHROMIUM).is_file():
        if os.environ.get("CI") == "true":
            pytest.fail(f"Chromium is required under CI=true but is not at {CHROMIUM}")
        pytest.skip(f"no Chromium at {CHROMIUM} (Debian: apt-get install chromium)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        launched = p.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
        yield launched
        launched.close()


@pytest.fixture
def page(browser: object) -> Iterator[object]:
    context = browser.new_context(viewport={"width": 1100, "height": 900})  # type: ignore[attr-defined]
    made = context.new_page()
    errors: list[str] = []
    made.on("pageerror", lambda exc: errors.append(str(exc)))
    yield made
    context.close()
    assert errors == [], errors


@pytest.fixture
def anyio_backend() -> str:
    """The event loop the async (MCP) tests run on."""
    return "asyncio"
