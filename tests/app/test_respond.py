"""The response stage (app/respond.py): the conditional GET, the policy's headers,
compression and the access record, decided once for every entrance."""

from __future__ import annotations

import asyncio
import gzip
import time
from typing import Any

from edukg.app.access_log import AccessLog
from edukg.app.compression import encoded, wants_gzip
from edukg.app.exchange import Exchange
from edukg.app.http import JSON, Answer, Representation
from edukg.app.metrics import Metrics
from edukg.app.respond import PLAIN, Policy, Responder, conditional, names_tag

TAG = b'"abc"'
REP = Representation(b"{}", [JSON, (b"etag", TAG), (b"content-encoding", b"gzip")], TAG)


def _exchange(method: str = "GET", /, **head: bytes) -> Exchange:
    scope = {"method": method, "path": "/x", "headers": []}
    headers = {name.replace("_", "-").encode(): value for name, value in head.items()}
    return Exchange(scope, _nothing, _nothing, "req_1", time.perf_counter(), headers, 0)


async def _nothing(*_: Any) -> Any:
    return None


def test_a_named_tag_or_a_star_is_a_304_without_the_contents_headers() -> None:
    for condition in (TAG, b'"other", ' + TAG, b"*", b"W/" + TAG):
        status, body, headers = conditional(_exchange(if_none_match=condition), REP)
        assert (status, body) == (304, b"")
        assert headers == [(b"etag", TAG)]
    assert conditional(_exchange(if_none_match=b'"other"'), REP)[0] == 200
    assert conditional(_exchange(), REP)[0] == 200


def test_a_post_is_never_a_304() -> None:
    assert conditional(_exchange("POST", if_none_match=b"*"), REP)[0] == 200


def test_names_tag_needs_the_tag_itself() -> None:
    assert names_tag(_exchange(if_none_match=TAG), TAG)
    assert not names_tag(_exchange(if_none_match=b"*"), TAG)


def test_small_bodies_and_clients_without_gzip_get_the_body_as_it_is() -> None:
    large = b"x" * 5000
    assert encoded(b"{}", True) == (b"{}", False)
    assert encoded(large, False) == (large, False)
    assert not wants_gzip(b"gzip;q=0") and wants_gzip(b"br, gzip")
    zipped, done = encoded(large, True)
    assert done and gzip.decompress(zipped) == large


def _sent(answer: Answer, policy: Policy, **head: bytes) -> tuple[int, dict[bytes, bytes], bytes]:
    messages: list[dict[str, Any]] = []

    async def send(message: dict[str, Any]) -> None:
        messages.append(message)

    responder = Responder(Metrics(None, lambda _data: {}), AccessLog(False))
    asyncio.run(responder.send(_exchange("GET", **head), send, answer, policy))
    start = messages[0]
    return start["status"], dict(start["headers"]), b"".join(m.get("body", b"") for m in messages)


def test_the_policy_adds_cache_control_and_vary_to_200_and_304_only() -> None:
    policy = Policy.private(60, b"Accept-Encoding")
    status, headers, _ = _sent((200, b"{}", [JSON]), policy)
    assert status == 200
    assert headers[b"cache-control"] == b"private, max-age=60"
    assert headers[b"vary"] == b"Accept-Encoding"
    assert headers[b"x-request-id"] == b"req_1" and headers[b"content-length"] == b"2"
    assert b"cache-control" not in _sent((404, b"{}", [JSON]), policy)[1]
    own = _sent((200, b"{}", [JSON, (b"cache-control", b"no-cache")]), PLAIN)[1]
    assert own[b"cache-control"] == b"no-cache"  # without a policy's, the answer's own
    assert b"vary" not in _sent((200, b"{}", [JSON]), PLAIN)[1]


def test_compression_is_the_policys_and_the_clients() -> None:
    page = b"<p>" + b"a page " * 1000
    policy = Policy(vary=b"Accept-Encoding", compress=True)
    _, headers, body = _sent((200, page, []), policy, accept_encoding=b"gzip")
    assert headers[b"content-encoding"] == b"gzip" and gzip.decompress(body) == page
    assert headers[b"content-length"] == str(len(body)).encode()
    _, headers, body = _sent((200, page, []), policy)
    assert b"content-encoding" not in headers and body == page
    _, headers, body = _sent((200, page, []), PLAIN, accept_encoding=b"gzip")
    assert b"content-encoding" not in headers and body == page
