"""Rate limits: one suite over both limiters, then through the API."""

from __future__ import annotations

import secrets
import time
from collections.abc import Callable, Iterator

import pytest

from edukg.adapters.config import Settings
from edukg.app.core import EdukgApp
from edukg.app.ratelimit import Limiter, MemoryLimiter, RedisLimiter
from edukg.store import open_key_store
from tests.conftest import RUN, Api, error_of
from tests.support import BASE, ServerThread


@pytest.fixture(params=["memory", "redis"])
def limiter(request: pytest.FixtureRequest) -> Iterator[Limiter]:
    if request.param == "memory":
        yield MemoryLimiter()
        return
    url = request.getfixturevalue("redis_url")
    made = RedisLimiter(url)
    yield made
    made.close()


def fresh_key() -> str:
    return f"test-{RUN}-{secrets.token_hex(6)}"


def test_burst_then_refused_with_retry_after(limiter: Limiter) -> None:
    key = fresh_key()
    decisions = [limiter.hit(key, rate=1.0, burst=3) for _ in range(4)]
    assert [d.allowed for d in decisions] == [True, True, True, False]
    assert [d.remaining for d in decisions[:3]] == [2, 1, 0]
    assert all(d.limit == 3 for d in decisions)
    refused = decisions[-1]
    assert refused.retry_after >= 1 and refused.reset >= 1


def test_tokens_refill_at_the_rate(limiter: Limiter) -> None:
    key = fresh_key()
    for _ in range(2):
        assert limiter.hit(key, rate=20.0, burst=2).allowed
    assert not limiter.hit(key, rate=20.0, burst=2).allowed
    time.sleep(0.12)  # 20 per second: two tokens back after 0.1 s
    assert limiter.hit(key, rate=20.0, burst=2).allowed


def test_keys_have_separate_buckets(limiter: Limiter) -> None:
    a, b = fresh_key(), fresh_key()
    assert limiter.hit(a, rate=0.1, burst=1).allowed
    assert not limiter.hit(a, rate=0.1, burst=1).allowed
    assert limiter.hit(b, rate=0.1, burst=1).allowed


def test_status(limiter: Limiter) -> None:
    status = limiter.status()
    assert status["ok"] is True and status["backend"] in ("memory", "redis")


def test_redis_unreachable_limits_per_process() -> None:
    down = RedisLimiter("redis://127.0.0.1:1/0")  # nothing listens on port 1
    try:
        for _ in range(5):
            assert down.hit(fresh_key(), rate=0.1, burst=1).allowed
        key = fresh_key()
        assert down.hit(key, rate=0.1, burst=1).allowed
        assert not down.hit(key, rate=0.1, burst=1).allowed  # this process's own bucket
        status = down.status()
        assert status["ok"] is False and "open" in str(status["failMode"])
    finally:
        down.close()


def test_api_limits_per_key_with_headers(demo_db: str, serve: Callable[[str], Api]) -> None:
    api = serve(demo_db)
    keys = open_key_store(demo_db)
    name = fresh_key()
    limited = keys.create(name, rate=0.5, burst=2)
    keys.close()
    first = api.get("/standards-frameworks", key=limited)
    assert first.status_code == 200
    assert first.headers["ratelimit-limit"] == "2"
    assert first.headers["ratelimit-remaining"] == "1"
    assert int(first.headers["ratelimit-reset"]) >= 1
    assert api.get("/standards-frameworks", key=limited).status_code == 200
    refused = api.get("/standards-frameworks", key=limited)
    body = error_of(refused, 429, "RateLimitError")
    assert int(refused.headers["retry-after"]) >= 1
    assert refused.headers["ratelimit-remaining"] == "0"
    assert name in body["message"]
    # another key is unaffected
    assert api.get("/standards-frameworks").status_code == 200


def test_default_limit_applies_to_keys_without_their_own(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    from edukg.cli import build_demo

    db = str(tmp_path_factory.mktemp("limits") / "edukg.db")
    build_demo(db)
    keys = open_key_store(db)
    key = keys.create("plain")
    watcher = keys.create("watcher")  # keyed health is rate limited too: ask with another key
    keys.close()
    server = ServerThread(EdukgApp(Settings(db=db, rate=0.5, burst=1))).start()
    try:
        import httpx

        url = f"{server.url}{BASE}/standards-frameworks"
        assert httpx.get(url, headers={"x-api-key": key}).status_code == 200
        assert httpx.get(url, headers={"x-api-key": key}).status_code == 429
        health = httpx.get(f"{server.url}/healthz", headers={"x-api-key": watcher}).json()
        assert health["details"]["rateLimiter"]["backend"] == "memory"
    finally:
        server.stop()


def test_api_keeps_serving_when_redis_is_down(demo_db: str) -> None:
    import httpx

    keys = open_key_store(demo_db)
    key = keys.create(fresh_key(), rate=0.1, burst=1)
    watcher = keys.create(fresh_key())  # keyed health is rate limited too: ask with another key
    keys.close()
    app = EdukgApp(Settings(db=demo_db, refresh=0, redis="redis://127.0.0.1:1/0"))
    server = ServerThread(app).start()
    try:
        url = f"{server.url}{BASE}/standards-frameworks"
        # Redis cannot count: this process limits on its own, and keeps serving.
        statuses = [httpx.get(url, headers={"x-api-key": key}).status_code for _ in range(3)]
        assert statuses == [200, 429, 429]
        health = httpx.get(f"{server.url}/healthz", headers={"x-api-key": watcher}).json()
        assert health["details"]["rateLimiter"]["ok"] is False
    finally:
        server.stop()


def test_no_limit_by_default(demo_db: str) -> None:
    import httpx

    keys = open_key_store(demo_db)
    key = keys.create(fresh_key())  # no --rate, and the server sets none
    keys.close()
    server = ServerThread(EdukgApp(Settings(db=demo_db, refresh=0))).start()
    try:
        url = f"{server.url}{BASE}/standards-frameworks"
        with httpx.Client(headers={"x-api-key": key}) as client:
            statuses = {client.get(url).status_code for _ in range(120)}
            health = client.get(f"{server.url}/healthz").json()
        assert statuses == {200}
        assert health["details"]["rateLimit"]["limited"] is False
    finally:
        server.stop()
