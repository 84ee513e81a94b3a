"""Expensive requests (searches, large pages, MCP tool calls): off the event loop,
bounded, and charged more than one token."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator

import httpx
import pytest

from edukg.adapters.config import Settings
from edukg.app.core import EdukgApp
from edukg.app.requests import SEARCH_COST
from edukg.app.workpool import Busy, WorkPool
from edukg.ingest.demo import demo_framework_case_uuid
from edukg.store import open_key_store
from tests.conftest import error_of
from tests.support import BASE, ServerThread

SEARCH = f"{BASE}/academic-standards/search?query=fractions%20on%20a%20number%20line"
CHEAP = f"{BASE}/standards-frameworks"


def test_the_pool_refuses_beyond_its_slots() -> None:
    async def scenario() -> None:
        pool = WorkPool(threads=1, waiting=1)
        gate = threading.Event()
        first = asyncio.ensure_future(pool.run(gate.wait))
        second = asyncio.ensure_future(pool.run(gate.wait))
        await asyncio.sleep(0.05)
        with pytest.raises(Busy):
            await pool.run(lambda: None)
        gate.set()
        assert await first and await second
        assert await pool.run(lambda: 7) == 7
        assert pool.status()["refused"] == 1
        pool.close()

    asyncio.run(scenario())


@pytest.fixture
def tight(demo_db: str) -> Iterator[tuple[str, str, str]]:
    keys = open_key_store(demo_db)
    n = len(keys.list())
    limited = keys.create(f"limited-{n}", rate=0.01, burst=SEARCH_COST * 2)
    free = keys.create(f"free-{n}", rate=0)
    keys.close()
    app = EdukgApp(Settings(db=demo_db, refresh=0, work_threads=1, work_waiting=0))
    server = ServerThread(app).start()
    try:
        yield server.url, limited, free
    finally:
        server.stop()


def test_a_search_costs_several_tokens(tight: tuple[str, str, str]) -> None:
    url, limited, _ = tight
    with httpx.Client(headers={"x-api-key": limited}) as client:
        first = client.get(url + SEARCH)
        assert first.status_code == 200
        assert first.headers["ratelimit-remaining"] == str(SEARCH_COST)
        assert client.get(url + SEARCH + "&limit=3").status_code == 200
        error_of(client.get(url + SEARCH + "&limit=4"), 429, "RateLimitError")


def test_expensive_work_beyond_the_pool_is_503_and_cheap_lookups_go_on(
    tight: tuple[str, str, str],
) -> None:
    url, _, free = tight
    headers = {"x-api-key": free}

    async def scenario() -> tuple[list[httpx.Response], list[int]]:
        async with httpx.AsyncClient(headers=headers, timeout=30) as client:
            searches = [
                client.get(url + SEARCH + f"&limit={n}", headers={"accept-encoding": "identity"})
                for n in range(1, 25)
            ]
            cheap = [client.get(url + CHEAP) for _ in range(10)]
            done = await asyncio.gather(*searches, *cheap)
        return list(done[:24]), [r.status_code for r in done[24:]]

    searches, cheap = asyncio.run(scenario())
    assert set(cheap) == {200}
    statuses = {r.status_code for r in searches}
    assert 200 in statuses and 503 in statuses
    busy = next(r for r in searches if r.status_code == 503)
    error_of(busy, 503, "ServiceUnavailableError")
    assert busy.headers["retry-after"] == "1"


def test_large_pages_cost_more_than_one(tight: tuple[str, str, str]) -> None:
    url, limited, _ = tight
    ms = demo_framework_case_uuid("ms-math")
    page = f"{url}{BASE}/academic-standards?standardsFrameworkCaseIdentifierUUID={ms}&limit=1000"
    first = httpx.get(page, headers={"x-api-key": limited})
    assert first.status_code == 200
    assert int(first.headers["ratelimit-remaining"]) == SEARCH_COST * 2 - 5
