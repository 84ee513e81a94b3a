"""The scale-out tier under faults: PostgreSQL one (slow) hop away, a Redis that never
answers. Loopback only; every wait is bounded."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from urllib.parse import urlsplit, urlunsplit

import httpx

from edukg.adapters.config import Settings
from edukg.app.core import EdukgApp
from edukg.cli import build_demo
from edukg.store import open_key_store
from harness.network import LatencyProxy, SilentServer
from tests.support import BASE, ServerThread

PATH = f"{BASE}/standards-frameworks"


def _via(url: str, port: int) -> str:
    parts = urlsplit(url)
    netloc = parts.netloc.rsplit("@", 1)
    host = f"127.0.0.1:{port}"
    return urlunsplit(parts._replace(netloc=f"{netloc[0]}@{host}" if len(netloc) == 2 else host))


async def _concurrently(url: str, key: str, n: int) -> tuple[float, set[int]]:
    async with httpx.AsyncClient(headers={"x-api-key": key}, timeout=30) as client:
        started = time.monotonic()
        answers = await asyncio.gather(*(client.get(url) for _ in range(n)))
        return time.monotonic() - started, {a.status_code for a in answers}


def test_slow_postgres_round_trips_overlap(postgres: Callable[[str], str]) -> None:
    """30 ms each way to PostgreSQL: 32 concurrent requests wait for their own round trips,
    not for each other's (one after another they took 4.5 s)."""
    db = postgres("slow")
    build_demo(db)
    keys = open_key_store(db)
    key = keys.create("slow", rate=0)
    keys.close()
    proxy = LatencyProxy(int(urlsplit(db).port or 5432), 0.030).start()
    settings = Settings(db=_via(db, proxy.port), refresh=60, response_cache_mb=0)
    server = ServerThread(EdukgApp(settings)).start()
    try:
        url = server.url + PATH
        asyncio.run(_concurrently(url, key, 8))  # connections made, the key remembered
        seconds, statuses = asyncio.run(_concurrently(url, key, 32))
        assert statuses == {200}
        assert seconds < 1.5, seconds
    finally:
        server.stop()
        proxy.stop()


def test_a_silent_redis_costs_one_timeout_not_one_per_request(
    tmp_path_factory: object, demo_db: str
) -> None:
    silent = SilentServer().start()
    keys = open_key_store(demo_db)
    key = keys.create(f"silent-{time.monotonic_ns()}", rate=1000, burst=1000)
    keys.close()
    app = EdukgApp(Settings(db=demo_db, refresh=0, redis=f"redis://127.0.0.1:{silent.port}/0"))
    server = ServerThread(app).start()
    try:
        url = server.url + PATH
        seconds, statuses = asyncio.run(_concurrently(url, key, 16))
        assert statuses == {200} and seconds < 2.0, seconds  # hung Redis: 4.1 s before
        started = time.monotonic()
        with httpx.Client(headers={"x-api-key": key}, timeout=10) as client:
            for _ in range(40):
                assert client.get(url).status_code == 200
            assert time.monotonic() - started < 3.0  # one timeout each: 10 s before
            started = time.monotonic()
            health = client.get(server.url + "/healthz").json()
        assert time.monotonic() - started < 1.0
        assert health["details"]["rateLimiter"]["circuit"] == "open"
    finally:
        server.stop()
        silent.stop()
