"""The one request pipeline and the seams under it: a read's time limit, reads that share
a connection, how soon a server sees a revoke or a deleted key store when it no longer
looks at its files on every request, and the index's row numbers per backend."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

import httpx
import pytest

from edukg.adapters.config import Settings
from edukg.app.core import EdukgApp
from edukg.cli import build_demo
from edukg.services.alignment.vector_index import indexed
from edukg.store import LOCAL_RECHECK, open_key_store
from edukg.store.base import Candidates, OfKind, Search
from edukg.store.keys import keys_path_for
from edukg.store.sqlite import SqliteStore
from tests.support import BASE, ServerThread


@pytest.mark.parametrize("sample_db", ["sqlite"], indirect=True)
def test_a_read_past_its_time_limit_is_interrupted_and_answered_503(sample_db: str) -> None:
    keys = open_key_store(sample_db)
    key = keys.create(f"slow-{time.monotonic_ns()}", rate=0)
    keys.close()
    # A limit no read of many rows can meet: the page is interrupted, not waited for.
    store = SqliteStore(sample_db, statement_seconds=1e-9)
    server = ServerThread(EdukgApp(Settings(db=sample_db), store=store)).start()
    page = f"{server.url}{BASE}/learning-components"
    try:
        headers = {"x-api-key": key}
        slow = httpx.get(page, params=_MANY, headers=headers)
        assert slow.status_code == 503, slow.text
        body = slow.json()
        assert body["error"] == "ServiceUnavailableError" and "took too long" in body["message"]
        assert body["requestId"] == slow.headers["x-request-id"]
        store.statement_seconds = 5.0  # the same server answers once reads may finish
        fine = httpx.get(page, params=_MANY, headers=headers)
        assert fine.status_code == 200
    finally:
        server.stop()


def test_a_server_sees_a_revoke_and_a_deleted_key_store_within_its_recheck(
    tmp_path: Path,
) -> None:
    db = str(tmp_path / "edukg.db")
    build_demo(db)
    admin = open_key_store(db)
    alice, bob = admin.create("alice", rate=0), admin.create("bob", rate=0)
    # Default settings: the server looks at its files at most every LOCAL_RECHECK seconds.
    server = ServerThread(EdukgApp(Settings(db=db))).start()
    url = f"{server.url}{BASE}/standards-frameworks"
    try:
        for key in (alice, bob):
            assert httpx.get(url, headers={"x-api-key": key}).status_code == 200
        assert admin.revoke("alice")
        time.sleep(LOCAL_RECHECK * 5)
        assert httpx.get(url, headers={"x-api-key": alice}).status_code == 401
        assert httpx.get(url, headers={"x-api-key": bob}).status_code == 200
        admin.close()
        for path in keys_path_for(db).parent.glob(keys_path_for(db).name + "*"):
            path.unlink()
        time.sleep(LOCAL_RECHECK * 5)
        gone = httpx.get(url, headers={"x-api-key": bob})  # no key store: every key refused
        assert gone.status_code == 503 and gone.json()["error"] == "ServiceUnavailableError"
    finally:
        server.stop()


_MANY = {"academicSubject": "Mathematics", "limit": "1000"}


@pytest.mark.parametrize("sample_db", ["sqlite"], indirect=True)
def test_reads_from_many_threads_under_the_time_limit_never_lock_each_other(
    sample_db: str,
) -> None:
    # The time limit's progress handler needs the interpreter lock while SQLite holds the
    # connection's mutex: threads sharing the connection must never wait on that mutex
    # holding the interpreter lock.
    store = SqliteStore(sample_db)
    assert store.info() is not None
    query = OfKind("standard")
    finished: list[int] = []

    def reads() -> None:
        for _ in range(60):
            store.page(query, None, 1000)
            store.by_identifiers([f"id-{n}" for n in range(50)])
        finished.append(1)

    threads = [threading.Thread(target=reads, daemon=True) for _ in range(4)]
    for thread in threads:
        thread.start()
    deadline = time.monotonic() + 30
    for thread in threads:
        thread.join(timeout=max(0.0, deadline - time.monotonic()))
    assert len(finished) == len(threads), "reads on a shared connection locked each other"


class _Reversed(SqliteStore):
    """The same content, its index rows numbered the other way round (as another backend
    may number them)."""

    def candidates(self, query: Any) -> Candidates | None:
        found = super().candidates(query)
        if found is None:
            return None
        return Candidates(list(found.identifiers)[::-1], found.vectors[::-1])


@pytest.mark.parametrize("demo_db", ["sqlite"], indirect=True)
def test_two_backends_with_one_content_keep_their_own_row_numbers(demo_db: str) -> None:
    search = Search("standard", ())
    for store in (SqliteStore(demo_db), _Reversed(demo_db), SqliteStore(demo_db)):
        assert store.info() is not None
        found = indexed(store, search)
        own = store.candidates(search)
        assert found is not None and own is not None and len(own.identifiers) > 2
        vector_of = dict(zip(own.identifiers, own.vectors, strict=True))
        for identifier in own.identifiers[:3]:  # each identifier's row is its own vector
            assert (found.vectors[found.rows[identifier]] == vector_of[identifier]).all()
