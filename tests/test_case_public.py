"""Keyless CASE traffic (serve --case-public): a limit per client address, a pool of its
own, and each answer built once per release, so keyed clients keep what they need."""

from __future__ import annotations

import threading
import time
from collections import Counter
from pathlib import Path

import httpx
import pytest

from edukg.adapters.config import Settings
from edukg.app.core import EdukgApp
from edukg.cli import build_demo
from edukg.ingest.demo import demo_framework_case_uuid
from edukg.store import open_key_store
from tests.support import BASE, ServerThread

PACKAGE = f"/ims/case/v1p1/CFPackages/{demo_framework_case_uuid('ms-math')}"


@pytest.fixture
def public(tmp_path: Path) -> tuple[str, str, Path]:
    """A demo database and a keyed client's key; servers are made by each test."""
    db = tmp_path / "public.db"
    build_demo(str(db))
    keys = open_key_store(str(db))
    key = keys.create("keyed", rate=0)
    keys.close()
    return str(db), key, tmp_path


def _server(db: str, **given: object) -> ServerThread:
    return ServerThread(EdukgApp(Settings(db=db, case_public=True, **given))).start()  # type: ignore[arg-type]


def test_keyless_requests_are_limited_by_address_apart_from_keys(
    public: tuple[str, str, Path],
) -> None:
    db, key, _ = public
    server = _server(db, case_public_rate=0.5, case_public_burst=10)
    try:
        url = server.url + PACKAGE
        answers = [httpx.get(url) for _ in range(3)]  # a package costs 5 of the 10
        assert [a.status_code for a in answers] == [200, 200, 429]
        refused = answers[2].json()["imsx_codeMajor"], answers[2].json()["imsx_description"]
        assert refused[0] == "failure" and "keyless CASE requests from 127.0.0.1" in refused[1]
        assert int(answers[2].headers["retry-after"]) >= 1
        # The same address with a key has the key's own bucket; the REST API is untouched.
        assert httpx.get(url, headers={"x-api-key": key}).status_code == 200
        search = f"{server.url}{BASE}/academic-standards/search?query=fractions"
        assert httpx.get(search, headers={"x-api-key": key}).status_code == 200
        # A key that is not valid is refused, even where no key is needed.
        assert httpx.get(url, headers={"x-api-key": "ekg_wrong"}).status_code == 401
        unlimited = _server(db, case_public_rate=0)
        try:
            assert all(httpx.get(unlimited.url + PACKAGE).status_code == 200 for _ in range(5))
        finally:
            unlimited.stop()
    finally:
        server.stop()


def test_a_package_is_built_once_for_concurrent_and_later_requests(
    public: tuple[str, str, Path],
) -> None:
    db, key, _ = public
    server = _server(db, case_public_rate=0)
    bodies: list[bytes] = []
    try:
        workers = [
            threading.Thread(target=lambda: bodies.append(httpx.get(server.url + PACKAGE).content))
            for _ in range(12)
        ]
        for worker in workers:
            worker.start()
        for worker in workers:
            worker.join(timeout=30)
        bodies.append(httpx.get(server.url + PACKAGE, headers={"x-api-key": key}).content)
        assert len(bodies) == 13 and len(set(bodies)) == 1 and len(bodies[0]) > 1000
        health = httpx.get(f"{server.url}/healthz", headers={"x-api-key": key}).json()
        case = health["details"]["caseProvider"]
        assert case["builds"] == 1
        assert case["answersKept"]["entries"] == 2  # the answer, and gzipped (httpx asks so)
        assert case["keylessWork"]["threads"] == 1
    finally:
        server.stop()


def test_keyed_searches_hold_through_a_keyless_flood(public: tuple[str, str, Path]) -> None:
    db, key, _ = public
    server = _server(db)  # the default keyless limit
    done = threading.Event()
    flood: Counter[int] = Counter()

    def anonymous() -> None:
        with httpx.Client(timeout=30) as client:
            while not done.is_set():
                flood[client.get(server.url + PACKAGE).status_code] += 1

    threads = [threading.Thread(target=anonymous) for _ in range(12)]
    keyed: list[tuple[int, float]] = []
    try:
        for thread in threads:
            thread.start()
        with httpx.Client(base_url=server.url, headers={"x-api-key": key}, timeout=30) as client:
            deadline = time.monotonic() + 3
            n = 0
            while time.monotonic() < deadline:
                n += 1  # distinct searches: none comes from the response cache
                started = time.monotonic()
                status = client.get(f"{BASE}/academic-standards/search",
                                    params={"query": f"fractions {n}"}).status_code  # fmt: skip
                keyed.append((status, time.monotonic() - started))
    finally:
        done.set()
        for thread in threads:
            thread.join(timeout=30)
        server.stop()
    assert flood[429] > flood[200] > 0  # the flood met its limit
    ok = sum(1 for status, _ in keyed if status == 200)
    assert ok >= 0.9 * len(keyed) and len(keyed) >= 5, (ok, len(keyed))
