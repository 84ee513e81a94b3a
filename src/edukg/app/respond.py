"""The response stage: what every entrance's answer goes through on its way out.

An entrance declares its `Policy` (app/entrance.py); here, and only here, a
representation becomes a 304 when If-None-Match names it, `Cache-Control` and `Vary`
are added, a body is compressed for a client that accepts gzip, the request's own
headers are added, and the access record is written as the answer leaves. The API keeps
what it compressed in its response cache (app/api.py), through the same `encoded`.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field

from edukg.app import etags
from edukg.app.access_log import AccessLog
from edukg.app.compression import ENCODED, compress, wants_gzip, worth_gzip
from edukg.app.exchange import Exchange, Send
from edukg.app.http import Answer, Headers, Representation
from edukg.app.metrics import Metrics

log = logging.getLogger("edukg")
_CHUNK = 1 << 18  # bytes per body message of a large answer
_NOT_IN_304 = frozenset((b"content-type", b"content-encoding", b"content-length"))
_MEMO = 32  # compressed fixed bodies kept (the explorer's page and assets, the document)


@dataclass(frozen=True, slots=True)
class Policy:
    """How an entrance's answers may be kept and encoded."""

    # Added to every 200 and 304: an entrance with one owns the header (its answers set
    # none); without one, an answer may set its own (the explorer's assets do).
    cache_control: bytes | None = None
    vary: bytes | None = None
    compress: bool = False  # gzip a 200 for a client that accepts it (fixed bodies)
    # The headers added, made once (the cached answer's path adds them to every hit).
    added: Headers = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        vary: Headers = [(b"vary", self.vary)] if self.vary is not None else []
        control: Headers = [(b"cache-control", self.cache_control)] if self.cache_control else []
        object.__setattr__(self, "added", [*control, *vary])

    @staticmethod
    def private(max_age: int, vary: bytes) -> Policy:
        """Answers behind a key: no shared cache may keep them."""
        return Policy(f"private, max-age={max_age}".encode(), vary)


PLAIN = Policy()


def names_tag(ex: Exchange, tag: bytes) -> bool:
    """Whether If-None-Match names `tag` itself: a 304 without looking the answer up
    (only a 200 was ever tagged, so the tag stands for one)."""
    condition = ex.head.get(b"if-none-match")
    return condition is not None and etags.names(condition, tag)


def conditional(ex: Exchange, rep: Representation) -> Answer:
    """The one evaluation of If-None-Match: a representation it matches (by tag, or `*`)
    is a 304 with the representation's headers but its content's; a POST's never is."""
    condition = ex.head.get(b"if-none-match") if ex.method != "POST" else None
    if condition is not None and etags.matches(condition, rep.tag):
        return 304, b"", [h for h in rep.headers if h[0] not in _NOT_IN_304]
    return 200, rep.body, rep.headers


class Responder:
    """Sends answers and records them: metrics and the access log."""

    def __init__(self, metrics: Metrics, access_log: AccessLog) -> None:
        self.metrics = metrics
        self.log = access_log
        self._memo: dict[int, tuple[bytes, bytes]] = {}

    async def send(
        self, ex: Exchange, send: Send, answer: Answer | Representation, policy: Policy
    ) -> None:
        """Send one whole answer under its entrance's policy with the request's own
        headers, recorded before it leaves (the log line exists once a client has it); a
        representation If-None-Match names goes as a 304."""
        if isinstance(answer, Representation):
            answer = conditional(ex, answer)
        status, body, headers = answer
        if status in (200, 304):
            headers = self._kept(headers, policy)
            if policy.compress and status == 200:
                body, headers = self._compressed(ex, body, headers)
        headers = [*headers, *ex.headers, (b"x-request-id", ex.request_id.encode()),
                   (b"content-length", str(len(body)).encode())]  # fmt: skip
        self.record(ex, status)
        await send({"type": "http.response.start", "status": status, "headers": headers})
        if ex.method == "HEAD" or status == 304:
            body = b""
        if len(body) > _CHUNK:  # a large body: a few messages
            for start in range(0, len(body) - _CHUNK, _CHUNK):
                piece = body[start : start + _CHUNK]
                await send({"type": "http.response.body", "body": piece, "more_body": True})
            body = body[_last_chunk(len(body)) :]
        await send({"type": "http.response.body", "body": body})

    def passing(self, ex: Exchange) -> Send:
        """A send for a mounted app (the MCP SDK) that answers for itself: the request's
        headers added and the answer recorded as it starts."""

        async def passed(message: dict[str, object]) -> None:
            if message["type"] == "http.response.start":
                given: Headers = message.get("headers", [])  # type: ignore[assignment]
                message["headers"] = [*given, *ex.headers,
                                      (b"x-request-id", ex.request_id.encode())]  # fmt: skip
                status = message["status"]
                self.record(ex, status if isinstance(status, int) else 500)
            await ex.send(message)

        return passed

    def record(self, ex: Exchange, status: int) -> None:
        """The request's figures and its access-log line, as its answer leaves."""
        self.metrics.request(*labels(ex), status, time.perf_counter() - ex.started)
        if ex.database_error:
            self.metrics.event("database_errors")
        self.log.write(ex, status)

    @staticmethod
    def _kept(headers: Headers, policy: Policy) -> Headers:
        """The policy's Cache-Control and Vary."""
        added = policy.added
        return headers + added if added else headers

    def _compressed(self, ex: Exchange, body: bytes, headers: Headers) -> tuple[bytes, Headers]:
        """A fixed route's body gzipped for a client that accepts it; the same body
        object (a page, an asset, the document) is compressed once."""
        if any(h[0] == b"content-encoding" for h in headers):
            return body, headers
        if not worth_gzip(body, wants_gzip(ex.head.get(b"accept-encoding"))):
            return body, headers
        memo = self._memo.get(id(body))
        if memo is None or memo[0] is not body:  # kept with its body: ids are not reused
            memo = (body, compress(body))
            if len(self._memo) >= _MEMO:
                self._memo.pop(next(iter(self._memo)))
            self._memo[id(body)] = memo
        return memo[1], [*headers, ENCODED]


def labels(ex: Exchange) -> tuple[str, str]:
    """The entrance and operation a request is counted under (metrics)."""
    found = ex.found
    return ("none", "none") if found is None else found.counted_as


def _last_chunk(size: int) -> int:
    return (max(0, size - 1) // _CHUNK) * _CHUNK
