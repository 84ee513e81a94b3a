"""HTTP caching: strong ETags from the data's content id, 304s, Cache-Control, gzip."""

from __future__ import annotations

import gzip
import subprocess
import sys
import tracemalloc
from collections.abc import Callable
from pathlib import Path
from urllib.parse import parse_qs

import httpx

from edukg.adapters.params import parse_values
from edukg.adapters.rest import OPERATIONS
from edukg.app import etags
from edukg.app.compression import GZIP_LEVEL, GZIP_TAG
from edukg.app.http import Representation
from edukg.app.response_cache import ResponseCache
from edukg.cli import build_demo
from edukg.ingest.builder import load
from edukg.ingest.demo import demo_framework_case_uuid, demo_lines
from harness.exports import write_export
from tests.conftest import Api, error_of
from tests.support import BASE

MS = demo_framework_case_uuid("ms-math")
BIG = f"{BASE}/academic-standards?standardsFrameworkCaseIdentifierUUID={MS}&limit=1000"
SMALL = f"{BASE}/standards-frameworks?jurisdiction=Vermont"


class Raw:
    """A response with its body exactly as sent (httpx would decompress it)."""

    def __init__(self, response: httpx.Response, content: bytes) -> None:
        self.status_code = response.status_code
        self.headers = response.headers
        self.content = content


def _health(api: Api) -> dict[str, str]:
    with httpx.Client(base_url=api.server.url) as client:
        return dict(client.get("/healthz").json())


def raw(api: Api, path: str, **headers: str) -> Raw:
    with httpx.Client(base_url=api.server.url) as client:
        request = client.build_request("GET", path, headers={"x-api-key": api.key, **headers})
        response = client.send(request, stream=True)
        content = b"".join(response.iter_raw())
        response.close()
        return Raw(response, content)


def raw_get(api: Api, path: str, headers: dict[str, str]) -> httpx.Response:
    return httpx.get(api.server.url + path, headers={"x-api-key": api.key, **headers})


def test_etag_cache_control_and_304(demo: Api) -> None:
    first = raw(demo, SMALL, **{"accept-encoding": "identity"})
    tag = first.headers["etag"]
    assert tag.startswith('"') and len(tag) > 20
    assert first.headers["cache-control"] == "private, max-age=60"
    assert first.headers["vary"] == "Accept-Encoding, X-Data-Version"
    again = raw(demo, SMALL, **{"accept-encoding": "identity", "if-none-match": tag})
    assert again.status_code == 304 and again.content == b""
    assert again.headers["etag"] == tag
    other = raw(demo, SMALL, **{"accept-encoding": "identity", "if-none-match": '"stale"'})
    assert other.status_code == 200 and other.content == first.content
    # Another URL has another tag.
    assert raw(demo, SMALL + "&limit=5").headers["etag"] != tag


def test_gzip_for_large_bodies_only(demo: Api) -> None:
    plain = raw(demo, BIG, **{"accept-encoding": "identity"})
    zipped = raw(demo, BIG, **{"accept-encoding": "gzip, deflate"})
    assert "content-encoding" not in plain.headers
    assert zipped.headers["content-encoding"] == "gzip"
    assert gzip.decompress(zipped.content) == plain.content
    assert len(zipped.content) < len(plain.content) / 3
    assert zipped.headers["etag"] != plain.headers["etag"]  # the tag names the encoding
    small = raw(demo, SMALL, **{"accept-encoding": "gzip"})
    assert "content-encoding" not in small.headers
    assert (
        small.headers["etag"] == raw(demo, SMALL, **{"accept-encoding": "identity"}).headers["etag"]
    )
    # The same bytes every time (no mtime), as a strong tag promises, and the tag names
    # the level those bytes were made with.
    assert raw(demo, BIG, **{"accept-encoding": "gzip"}).content == zipped.content
    assert zipped.content == gzip.compress(plain.content, compresslevel=GZIP_LEVEL, mtime=0)
    health = _health(demo)
    content_id = f"{health['dataVersion']}/{health['contentId']}"  # tags are per release
    path, _, query = BIG.partition("?")
    op = next(o for o in OPERATIONS if BASE + o.path == path)
    values = parse_values(op.declared, parse_qs(query), {})
    assert (
        zipped.headers["etag"] == etags.etag(content_id, op.operation_id, values, GZIP_TAG).decode()
    )
    assert f"gzip-{GZIP_LEVEL}".encode() == GZIP_TAG
    refused = raw(demo, BIG, **{"accept-encoding": "gzip;q=0"})
    assert "content-encoding" not in refused.headers
    cached = raw(demo, BIG, **{"accept-encoding": "gzip", "if-none-match": zipped.headers["etag"]})
    assert cached.status_code == 304


def test_etag_changes_with_the_data_not_the_label(
    tmp_path: Path, fresh_db: str, serve: Callable[[str], Api]
) -> None:
    build_demo(fresh_db)
    api = serve(fresh_db)
    before = raw(api, SMALL).headers["etag"]
    changed = [line + b" " for line in demo_lines()]  # the same records in other bytes
    load([str(write_export(tmp_path / "v2", changed))], fresh_db, "demo")  # same label
    after = raw(api, SMALL, **{"if-none-match": before})
    assert after.status_code == 200  # the old tag no longer matches
    assert after.headers["etag"] != before


def test_response_cache_serves_repeats_and_never_stale_or_unauthorised(
    tmp_path: Path, fresh_db: str, serve: Callable[[str], Api]
) -> None:
    build_demo(fresh_db)
    api = serve(fresh_db)

    def cache() -> dict[str, int]:
        figures: dict[str, int] = api.http.get("/healthz", headers={"x-api-key": api.key}).json()[
            "details"
        ]["responseCache"]
        return figures

    first = raw(api, BIG, **{"accept-encoding": "gzip"})
    start = cache()
    again = raw(api, BIG, **{"accept-encoding": "gzip"})
    assert again.content == first.content and again.headers["etag"] == first.headers["etag"]
    assert again.headers["content-encoding"] == "gzip"
    assert cache()["hits"] == start["hits"] + 1
    plain = raw(api, BIG, **{"accept-encoding": "identity"})  # another entry
    assert gzip.decompress(first.content) == plain.content
    # Keys are checked before the cache: a wrong key is refused for a cached URL too.
    with httpx.Client(base_url=api.server.url) as client:
        refused = client.get(BIG, headers={"x-api-key": "not-a-key"})
    assert refused.status_code == 401
    # Bad input is never cached: the same bad URL fails every time.
    for _ in range(2):
        assert api.get("/academic-standards", limit="0").status_code == 400
    # A new load changes every tag: nothing stale comes back.
    old = api.ok("/standards-frameworks", jurisdiction="Vermont")
    lines = [line.replace(b"Vermont", b"Vermont ") for line in demo_lines()]
    load([str(write_export(tmp_path / "v2", lines))], fresh_db, "demo")
    new = api.ok("/standards-frameworks", jurisdiction="Vermont")
    assert old and new != old


def test_only_a_200_becomes_a_304(demo: Api) -> None:
    star = {"if-none-match": "*"}
    error_of(raw_get(demo, f"{BASE}/academic-standards/not-a-uuid", star), 400, "ValidationError")
    unknown = f"{BASE}/academic-standards/00000000-0000-4000-8000-000000000000"
    error_of(raw_get(demo, unknown, star), 404, "NotFoundError")
    error_of(raw_get(demo, f"{BASE}/academic-standards?limit=-5", star), 400, "ValidationError")
    assert raw_get(demo, SMALL, star).status_code == 304


def test_small_bodies_revalidate_for_gzip_clients(demo: Api) -> None:
    first = raw(demo, SMALL, **{"accept-encoding": "gzip"})
    assert "content-encoding" not in first.headers
    again = raw(demo, SMALL, **{"accept-encoding": "gzip", "if-none-match": first.headers["etag"]})
    assert again.status_code == 304


def test_unknown_parameters_are_ignored_and_make_no_cache_entry(
    fresh_db: str, serve: Callable[[str], Api]
) -> None:
    build_demo(fresh_db)
    api = serve(fresh_db)

    def entries() -> int:
        health = api.http.get("/healthz", headers={"x-api-key": api.key}).json()
        return int(health["details"]["responseCache"]["entries"])

    plain = raw(api, SMALL)
    before = entries()
    tags = {raw(api, f"{SMALL}&z={n}").headers["etag"] for n in range(20)}
    assert tags == {plain.headers["etag"]}
    assert entries() == before


def test_the_cache_counts_what_entries_really_cost() -> None:
    budget = 2 * 1024 * 1024
    cache = ResponseCache(budget)
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        for n in range(20_000):  # many tiny entries: the costly case for accounting
            tag = b'"%032x"' % n
            headers = [(b"content-type", b"application/json"), (b"etag", tag),
                       (b"x-data-version", b"1.11.0")]  # fmt: skip
            cache.put(tag, Representation(b'{"data":[],"n":%d}' % n, headers, tag))
        used = tracemalloc.get_traced_memory()[0] - base
    finally:
        tracemalloc.stop()
    assert cache.size <= budget
    assert used <= budget * 1.15, (used, budget)


def test_the_response_cache_holds_what_its_budget_counts() -> None:
    # In a process of its own, so the figure is this cache's alone.
    program = """
import resource, orjson
from edukg.app.http import Representation
from edukg.app.response_cache import ResponseCache
cache = ResponseCache(32 << 20)
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
for i in range(200_000):
    body = orjson.dumps({"a": "x" * 500, "i": i})
    cache.put(str(i).encode(), Representation(body, [(b"etag", b"t")], b"t"))
grown = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024
print(grown, cache.size / (1 << 20))
"""
    done = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True,
                          check=True, timeout=120)  # fmt: skip
    grown, counted = map(float, done.stdout.split())
    assert 28 < counted <= 32
    assert grown < 1.5 * 32, f"32 MiB of small entries took {grown:.0f} MiB"


def test_accept_encoding_weights_are_read_as_numbers() -> None:
    from edukg.app.compression import wants_gzip

    for refused in (b"gzip;q=0", b"gzip;q=0.0", b"gzip;q=0.00", b"gzip; q=0.000",
                    b"br, gzip;q=0.00", b"identity", b"*;q=0", b"gzip;q=0, *;q=1", b"gzip;q=x",
                    b"x-gzip;q=0", b"x-gzip;q=0, *"):  # fmt: skip
        assert not wants_gzip(refused), refused
    for accepted in (b"gzip", b"GZIP;q=0.5", b"gzip;q=0.001", b"br, gzip", b"*", b"deflate, *;q=0.1",
                     b"x-gzip", b"X-GZIP;q=0.5", b"deflate, x-gzip"):  # fmt: skip
        assert wants_gzip(accepted), accepted


def test_x_gzip_is_gzip(demo: Api) -> None:
    """RFC 9110 (8.4.1.3): x-gzip is gzip. The answer names gzip, with gzip's bytes, tag and
    Vary, and that tag is a 304 whichever name the client uses."""
    zipped = raw(demo, BIG, **{"accept-encoding": "gzip"})
    for named in ("x-gzip", "deflate, x-gzip;q=0.5"):
        answered = raw(demo, BIG, **{"accept-encoding": named})
        assert answered.headers["content-encoding"] == "gzip"
        assert answered.content == zipped.content
        assert answered.headers["etag"] == zipped.headers["etag"]
        assert (
            answered.headers["vary"] == zipped.headers["vary"] == "Accept-Encoding, X-Data-Version"
        )
        again = raw(
            demo, BIG, **{"accept-encoding": named, "if-none-match": zipped.headers["etag"]}
        )
        assert again.status_code == 304
    plain = raw(demo, BIG, **{"accept-encoding": "x-gzip;q=0"})
    assert (
        "content-encoding" not in plain.headers and plain.headers["etag"] != zipped.headers["etag"]
    )
    # The fixed routes (the document) and a cold answer alike.
    document = raw(demo, "/openapi.json", **{"accept-encoding": "x-gzip"})
    assert document.headers["content-encoding"] == "gzip"
