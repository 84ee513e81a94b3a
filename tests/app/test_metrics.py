"""Prometheus metrics at GET /metrics: requests by entrance, operation and status, their
latency, refusals, the response cache, the work pool and the release served."""

from __future__ import annotations

import re
from pathlib import Path

import httpx

from edukg.adapters.config import Settings
from edukg.app.core import EdukgApp
from edukg.cli import build_demo
from edukg.store import open_key_store
from tests.support import BASE, ServerThread


def _value(text: str, line: str) -> float:
    found = re.search(re.escape(line) + r" ([0-9.e+]+)\n", text)
    assert found is not None, f"{line} not in the metrics:\n{text}"
    return float(found.group(1))


def test_metrics_count_requests_refusals_and_the_parts(tmp_path: Path) -> None:
    db = str(tmp_path / "edukg.db")
    build_demo(db)
    keys = open_key_store(db)
    key, slow = keys.create("free", rate=0), keys.create("slow", rate=0.001, burst=1)
    scraper = keys.create("scraper", rate=0, metrics=True)
    slow_scraper = keys.create("slow-scraper", rate=0.001, burst=1, metrics=True)
    keys.close()
    server = ServerThread(EdukgApp(Settings(db=db))).start()
    api = f"{server.url}{BASE}"
    try:
        for _ in range(3):
            assert httpx.get(f"{api}/standards-frameworks", headers={"x-api-key": key}).is_success
        assert httpx.get(f"{api}/nothing", headers={"x-api-key": key}).status_code == 404
        limited = [httpx.get(f"{api}/standards-frameworks", headers={"x-api-key": slow})
                   for _ in range(2)]  # fmt: skip
        assert [r.status_code for r in limited] == [200, 429]
        assert httpx.get(f"{server.url}/metrics").status_code == 401  # a key, as for data
        # Server-wide figures are for a scraper's key (`keys create --metrics`) alone.
        refused = httpx.get(f"{server.url}/metrics", headers={"authorization": f"Bearer {key}"})
        assert refused.status_code == 403 and refused.json()["error"] == "ForbiddenError"
        scraped = httpx.get(f"{server.url}/metrics",
                            headers={"authorization": f"Bearer {scraper}"})  # fmt: skip
        assert scraped.status_code == 200
        assert scraped.headers["content-type"].startswith("text/plain; version=0.0.4")
        text = scraped.text
        ok = '{entrance="api",operation="listFrameworks",status="200"}'
        assert _value(text, f"edukg_requests_total{ok}") == 4
        assert _value(text, 'edukg_requests_total{entrance="api-missing",operation="none",'
                      'status="404"}') == 1  # fmt: skip
        assert _value(text, "edukg_rate_limited_total") == 1
        bucket = 'edukg_request_seconds_bucket{entrance="api",le="+Inf",operation="listFrameworks"}'
        assert _value(text, bucket) == 5  # the 429 too
        assert _value(text, "edukg_response_cache_hits_total") >= 2
        assert _value(text, "edukg_work_slots") > 0
        assert 'edukg_release_info{content_id="' in text
        # Scrapes and the keyed health details count against the key's rate limit.
        scrapes = [httpx.get(f"{server.url}/metrics", headers={"x-api-key": slow_scraper})
                   for _ in range(2)]  # fmt: skip
        assert [r.status_code for r in scrapes] == [200, 429]
        assert httpx.get(f"{server.url}/healthz", headers={"x-api-key": slow}).status_code == 429
        assert httpx.get(f"{server.url}/healthz").status_code == 200  # a probe, never limited
    finally:
        server.stop()
