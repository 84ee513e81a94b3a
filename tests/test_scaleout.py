"""Scale-out: identical answers on both backends; several servers on one PostgreSQL and Redis."""

from __future__ import annotations

import os
import secrets
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from edukg.adapters.config import Settings
from edukg.adapters.rest import OPERATIONS
from edukg.app.core import EdukgApp
from edukg.app.routing import Router
from edukg.cli import build_demo
from edukg.ingest.builder import load
from edukg.ingest.demo import (
    demo_case_uuid,
    demo_lines,
)
from edukg.ingest.index import index
from harness.exports import write_export
from harness.processes import EDUKG, edukg, free_port, stop, wait_for
from tests.conftest import RUN, Api, error_of
from tests.every_operation import BY_MEANING, LOAD_TIMED, RANKED, REQUESTS, unsigned
from tests.support import BASE, ServerThread


@pytest.fixture(scope="module")
def both(
    tmp_path_factory: pytest.TempPathFactory, postgres: Callable[[str], str]
) -> Iterator[tuple[Api, Api]]:
    from tests.conftest import _serve

    sqlite_db = str(tmp_path_factory.mktemp("same") / "edukg.db")
    pg_db = postgres("same")
    build_demo(sqlite_db)
    build_demo(pg_db)
    for db in (sqlite_db, pg_db):  # both rank by meaning, as the demo fixtures do
        index(db)
    a, b = _serve(sqlite_db), _serve(pg_db)
    yield next(a), next(b)
    for gen in (a, b):
        for _ in gen:
            pass


def test_the_comparison_covers_every_operation() -> None:
    router = Router(BASE, OPERATIONS)
    covered = set()
    for path, _ in [*REQUESTS, *RANKED, *LOAD_TIMED, *BY_MEANING]:
        matched = router.match(BASE + path.replace("{component}", "x"))
        if matched is not None:
            covered.add(matched[0].operation_id)
    assert covered == {op.operation_id for op in OPERATIONS}


@pytest.mark.parametrize(("path", "params"), RANKED)
def test_ranked_searches_answer_alike_in_shape(
    both: tuple[Api, Api], path: str, params: dict[str, str]
) -> None:
    sqlite, pg = both
    one, two = sqlite.get(path, **params), pg.get(path, **params)
    assert one.status_code == two.status_code == 200
    mine, theirs = one.json(), two.json()  # search answers are bare lists, as hosted
    assert mine and theirs
    assert set(mine[0]) == set(theirs[0])


@pytest.mark.parametrize(("path", "params"), BY_MEANING)
def test_rankings_by_meaning_agree(
    both: tuple[Api, Api], path: str, params: dict[str, Any]
) -> None:
    answers = []
    for api in both:
        if path.startswith("/alignments"):
            response = api.http.post(BASE + path, json=params, headers={"x-api-key": api.key})
        else:
            response = api.get(path, **params)
        assert response.status_code == 200, response.text
        answers.append(response.json())
    if "data" not in answers[0]:  # a check: one standard's verdict and components
        one, two = answers
        assert abs(one["score"] - two["score"]) < 0.01 and one["ranking"] == "semantic"
        assert [c["identifier"] for c in one["learningComponents"]] == [
            c["identifier"] for c in two["learningComponents"]
        ]
        return
    # The same standards with the same scores, to the precision each backend keeps its
    # vectors in (near ties may swap).
    scores = [{r["statementCode"]: r["score"] for r in a["data"]} for a in answers]
    assert scores[0] and set(scores[0]) == set(scores[1])
    assert all(abs(scores[0][c] - scores[1][c]) < 0.01 for c in scores[0])
    assert answers[0]["ranking"] == answers[1]["ranking"] == "semantic"


@pytest.mark.parametrize(("path", "params"), LOAD_TIMED)
def test_releases_answer_alike_but_for_load_times(
    both: tuple[Api, Api], path: str, params: dict[str, str]
) -> None:
    sqlite, pg = both
    one, two = sqlite.ok(path, **params), pg.ok(path, **params)
    for body in (one, two):
        for record in body["data"]:
            assert record.pop("loadedAt").endswith("Z")
    assert one == two


@pytest.mark.parametrize(("path", "params"), REQUESTS)
def test_backends_answer_byte_for_byte_alike(
    both: tuple[Api, Api], path: str, params: dict[str, str]
) -> None:
    sqlite, pg = both
    if "{component}" in path:
        first = sqlite.ok("/learning-components", academicSubject="Mathematics", limit="1")
        path = path.replace("{component}", first["data"][0]["identifier"])
    one, two = sqlite.get(path, **params), pg.get(path, **params)
    assert one.status_code == 200 or path.endswith("0000-4000-8000-000000000000")
    assert one.status_code == two.status_code
    if one.status_code == 200:
        # Cursors are signed with each deployment's own secret (kept with its keys):
        # the same cursor payload, a different signature.
        assert unsigned(one.content) == unsigned(two.content)
        body = one.json()
        cursor = body.get("pagination", {}).get("nextCursor") if isinstance(body, dict) else None
        if cursor:  # and the next page too
            pg_cursor = two.json()["pagination"]["nextCursor"]
            assert unsigned(sqlite.get(path, **params, cursor=cursor).content) == unsigned(
                pg.get(path, **params, cursor=pg_cursor).content
            )


def test_database_unreachable_is_503(tmp_path: Path) -> None:
    down = "postgresql://postgres@127.0.0.1:1/nothing"  # nothing listens on port 1
    server = ServerThread(EdukgApp(Settings(db=down, refresh=0))).start()
    try:
        error_of(httpx.get(f"{server.url}/healthz"), 503, "ServiceUnavailableError")
        response = httpx.get(f"{server.url}{BASE}/standards-frameworks", headers={"x-api-key": "k"})
        body = error_of(response, 503, "ServiceUnavailableError")
        assert "database" in body["message"] and "1/nothing" not in response.text
    finally:
        server.stop()


def _edukg(*args: str, db: str) -> subprocess.CompletedProcess[str]:
    return edukg(*args, "--db", db)


def test_two_servers_share_one_database_and_one_redis(
    tmp_path: Path, postgres: Callable[[str], str], redis_url: str
) -> None:
    db = postgres("nodes")
    assert _edukg("demo", db=db).returncode == 0
    name = f"shared-{RUN}-{secrets.token_hex(4)}"
    created = _edukg("keys", "create", name, "--rate", "0.05", "--burst", "4", db=db)
    key = created.stdout.splitlines()[-1]
    other_name = f"other-{secrets.token_hex(4)}"
    other = _edukg("keys", "create", other_name, "--rate", "0", db=db).stdout.splitlines()[-1]
    servers: list[subprocess.Popen[str]] = []
    urls = []
    try:
        for _ in range(2):
            port = free_port()
            servers.append(subprocess.Popen(
                [*EDUKG, "serve", "--db", db, "--port", str(port),
                 "--redis", redis_url, "--refresh", "0.2"],
                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                env={**os.environ, "EDUKG_DB": ""},
            ))  # fmt: skip
            urls.append(f"http://127.0.0.1:{port}")
        for proc, url in zip(servers, urls, strict=True):
            wait_for(f"{url}/healthz", proc)

        def get(url: str, path: str, with_key: str) -> httpx.Response:
            return httpx.get(f"{url}{BASE}{path}", headers={"x-api-key": with_key}, timeout=10)

        # The same answers from both.
        path = f"/academic-standards/{demo_case_uuid('ms-math', '3.NF.A.1')}"
        assert get(urls[0], path, other).content == get(urls[1], path, other).content
        # A rate limit spent on one is spent on both: a burst of 4 across the two.
        spent = [get(urls[i % 2], "/standards-frameworks", key).status_code for i in range(4)]
        assert spent == [200, 200, 200, 200]
        assert get(urls[0], "/standards-frameworks", key).status_code == 429
        assert get(urls[1], "/standards-frameworks", key).status_code == 429
        # A key revoked through one is refused by both.
        assert _edukg("keys", "revoke", other_name, db=db).returncode == 0
        for url in urls:
            error_of(get(url, path, other), 401, "AuthenticationError")
        # A new load is seen by both.
        fresh = _edukg("keys", "create", f"after-{secrets.token_hex(4)}", "--rate", "0", db=db)
        key3 = fresh.stdout.splitlines()[-1]
        changed = [x.replace(b"Understand a unit fraction", b"Picture a unit fraction")
                   for x in demo_lines()]  # fmt: skip
        load([str(write_export(tmp_path / "v2", changed))], db, "2.0.0")
        deadline = time.monotonic() + 10
        for url in urls:
            while True:
                response = get(url, path, key3)
                if response.headers.get("x-data-version") == "2.0.0":
                    assert response.json()["description"].startswith("Picture a unit fraction")
                    break
                assert time.monotonic() < deadline, f"{url} never saw the new version"
                time.sleep(0.1)
    finally:
        for proc in servers:
            stop(proc)
