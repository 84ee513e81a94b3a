"""The ASGI application: one route table, auth, errors, and nothing per request
that could have been done at load time.

A plain ASGI callable rather than a framework: each request is a dict lookup or
a few segment compares, one key check, one indexed query, and bytes that were
encoded at load. SQLite reads of one page take well under a millisecond, so
they run inline on the event loop instead of paying for a thread hop.
"""

from __future__ import annotations

import contextlib
import logging
import secrets
import time
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from typing import Any
from urllib.parse import parse_qsl

import orjson

from edukg import caching, service
from edukg.api import OPERATIONS, Call
from edukg.assistants import build_server, streamable_http_app
from edukg.config import Settings
from edukg.docs_page import render_docs
from edukg.errors import (
    ApiError,
    AuthenticationError,
    HeadersTooLargeError,
    MethodNotAllowedError,
    NotFoundError,
    RateLimitError,
    ServiceUnavailableError,
    URITooLongError,
    ValidationError,
    error_body,
)
from edukg.explorer import Explorer
from edukg.openapi import build_openapi
from edukg.params import parse
from edukg.ratelimit import Decision, Limiter, MemoryLimiter, RedisLimiter
from edukg.responses import ResponseCache
from edukg.routing import Router
from edukg.store import KeyStore, Store, open_key_store, open_store
from edukg.store.base import Principal, StoreUnavailable

log = logging.getLogger("edukg")

Scope = dict[str, Any]
Receive = Callable[[], Awaitable[dict[str, Any]]]
Send = Callable[[dict[str, Any]], Awaitable[None]]
Headers = list[tuple[bytes, bytes]]

_JSON = (b"content-type", b"application/json")
MAX_URL_BYTES = 8192  # path plus query string; no legitimate request comes near it
MAX_HEADER_BYTES = 16384  # all request headers together
access_log = logging.getLogger("edukg.access")
MCP_PATH = "/mcp"
_MAX_QUERY_FIELDS = 64


class EdukgApp:
    """The HTTP API over one Store and one KeyStore."""

    def __init__(
        self,
        settings: Settings,
        store: Store | None = None,
        keys: KeyStore | None = None,
        limiter: Limiter | None = None,
    ) -> None:
        self.settings = settings
        self.store = store or open_store(settings.read_db or settings.db, settings.refresh)
        self.keys = keys or open_key_store(settings.db)
        if limiter is None:
            limiter = RedisLimiter(settings.redis) if settings.redis else MemoryLimiter()
        self.limiter = limiter
        self.mcp_server = build_server(self.store)
        self._mcp_app = streamable_http_app(self.mcp_server)
        self._lifespan_stack = contextlib.AsyncExitStack()
        self.router = Router(settings.base_path, OPERATIONS)
        self.openapi = build_openapi(settings.base_path, OPERATIONS)
        self._openapi_bytes = orjson.dumps(self.openapi)
        self._docs_bytes = render_docs(self.openapi)
        self.explorer = Explorer(settings.base_path)
        # Private: responses sit behind a key, so shared caches must not keep them.
        self._cache_control = f"private, max-age={settings.cache_max_age}".encode()
        self.responses = ResponseCache(settings.response_cache_mb * 1024 * 1024)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await self._lifespan(receive, send)
            return
        if scope["type"] != "http":
            return
        if scope["path"] == MCP_PATH:
            await self._mcp(scope, receive, send)
            return
        request_id = "req_" + secrets.token_hex(8)
        started = time.perf_counter()
        extra: Headers = []  # headers every response carries once known (rate limits)
        who: list[str] = []  # the key's name, once authenticated (never the key)
        try:
            try:
                status, body, headers = self._respond(scope, extra, who)
            except StoreUnavailable as exc:
                log.warning("request %s: database unavailable: %s", request_id, exc)
                raise ServiceUnavailableError(
                    "The database cannot be reached right now. Try again shortly."
                ) from None
        except ApiError as exc:
            status, headers = exc.status, [_JSON]
            body = error_body(exc.error, exc.message, request_id, exc.details)
            if isinstance(exc, MethodNotAllowedError):
                headers = [*headers, (b"allow", b"GET, HEAD")]
        except Exception:
            log.exception("request %s failed: %s %s", request_id, scope["method"], scope["path"])
            status, headers = 500, [_JSON]
            body = error_body(
                "InternalServerError",
                "An unexpected error occurred. Quote the request id when reporting it.",
                request_id,
            )
        headers = [
            *headers,
            *extra,
            (b"x-request-id", request_id.encode()),
            (b"content-length", str(len(body)).encode()),
        ]
        await send({"type": "http.response.start", "status": status, "headers": headers})
        no_body = scope["method"] == "HEAD" or status == 304
        await send({"type": "http.response.body", "body": b"" if no_body else body})
        if self.settings.access_log:
            self._log(scope, request_id, who, status, started)

    def _log(
        self, scope: Scope, request_id: str, who: list[str], status: int, started: float
    ) -> None:
        """One JSON line per request: no key, no headers, a bounded path."""
        query = scope.get("query_string", b"")[:512].decode("latin-1")
        line = {
            "time": datetime.now(UTC).isoformat(timespec="milliseconds"),
            "requestId": request_id,
            "key": who[0] if who else None,
            "method": scope["method"],
            "path": scope["path"][:512] + (f"?{query}" if query else ""),
            "status": status,
            "ms": round((time.perf_counter() - started) * 1000, 3),
        }
        access_log.info(orjson.dumps(line).decode())

    def _respond(self, scope: Scope, extra: Headers, who: list[str]) -> tuple[int, bytes, Headers]:
        path: str = scope["path"]
        method: str = scope["method"]
        if len(scope.get("raw_path") or b"") + len(scope.get("query_string", b"")) > MAX_URL_BYTES:
            raise URITooLongError(f"The URL is longer than {MAX_URL_BYTES} bytes.")
        if sum(len(k) + len(v) for k, v in scope["headers"]) > MAX_HEADER_BYTES:
            raise HeadersTooLargeError(f"The request headers exceed {MAX_HEADER_BYTES} bytes.")
        if self.router.under_base(path):
            if method not in ("GET", "HEAD"):
                raise MethodNotAllowedError(f"{method} is not allowed: this API is read-only.")
            principal = self._authenticate(scope)
            who.append(principal.name)
            self._limit(principal, extra)
            matched = self.router.match(path)
            if matched is None:
                raise NotFoundError(f"No operation at {path}. See /openapi.json for the API.")
            op, path_params = matched
            info = service.loaded(self.store)
            gz = caching.wants_gzip(scope)
            version = info.content_id
            if "Search" in op.tags:  # the same data answers differently once it is indexed
                version += ":" + service.search_ranking(self.store)
            tag = caching.etag(version, scope, caching.GZIP_TAG if gz else b"identity")
            headers = [
                _JSON,
                (b"x-data-version", info.data_version.encode()),
                (b"etag", tag),
                (b"cache-control", self._cache_control),
                (b"vary", b"Accept-Encoding"),
            ]
            condition = caching.if_none_match(scope)
            if condition is not None and caching.matches(condition, tag):
                return 304, b"", [h for h in headers if h is not _JSON]
            # Only answers that passed validation are kept, so a hit needs no parsing.
            kept = self.responses.get(tag)
            if kept is not None:
                return 200, kept[0], kept[1]
            values = parse(op.params, _query(scope), path_params)
            body = op.handler(Call(op.operation_id, values, self.store, info))
            if gz and len(body) >= caching.GZIP_MIN_BYTES:
                body = caching.compress(body)
                headers.append((b"content-encoding", b"gzip"))
            elif gz:  # the tag named gzip; small bodies go as they are, with their own tag
                headers[2] = (b"etag", caching.etag(version, scope, b"identity"))
            self.responses.put(tag, body, headers)
            return 200, body, headers
        if method not in ("GET", "HEAD"):
            raise MethodNotAllowedError(f"{method} is not allowed here.")
        if path == "/healthz":
            return self._health()
        if path == "/readyz":
            return self._ready()
        if path == "/openapi.json":
            return 200, self._openapi_bytes, [_JSON]
        if path in ("/docs", "/docs/"):
            return 200, self._docs_bytes, [(b"content-type", b"text/html; charset=utf-8")]
        if Explorer.owns(path):
            answer = self.explorer.respond(path)
            if answer is not None:
                return answer
        raise NotFoundError(f"Nothing at {path}. The API lives under {self.router.base_path}/.")

    async def _mcp(self, scope: Scope, receive: Receive, send: Send) -> None:
        """The MCP endpoint: the same keys and limits as REST, then the SDK's transport."""
        extra: Headers = []
        try:
            try:
                self._limit(self._authenticate(scope, bearer=True), extra)
            except StoreUnavailable:
                raise ServiceUnavailableError(
                    "The database cannot be reached right now. Try again shortly."
                ) from None
        except ApiError as exc:
            request_id = "req_" + secrets.token_hex(8)
            body = error_body(exc.error, exc.message, request_id, exc.details)
            headers = [_JSON, *extra, (b"x-request-id", request_id.encode())]
            headers.append((b"content-length", str(len(body)).encode()))
            await send({"type": "http.response.start", "status": exc.status, "headers": headers})
            await send({"type": "http.response.body", "body": body})
            return
        await self._mcp_app(scope, receive, send)

    def _authenticate(self, scope: Scope, bearer: bool = False) -> Principal:
        key = None
        for name, value in scope["headers"]:
            if name == b"x-api-key":
                key = value.decode("latin-1")
                break
            if bearer and name == b"authorization":
                scheme, _, token = value.decode("latin-1").partition(" ")
                if scheme.lower() == "bearer" and token.strip():
                    key = token.strip()
                    break
        if not key:
            where = "x-api-key header (or Authorization: Bearer)" if bearer else "x-api-key header"
            raise AuthenticationError(f"Missing API key: send it in the {where}.")
        owner = self.keys.verify(key)
        if owner is None:
            raise AuthenticationError("Invalid or revoked API key.")
        return owner

    def _limit(self, principal: Principal, extra: Headers) -> None:
        rate = self.settings.rate if principal.rate is None else principal.rate
        burst = self.settings.burst if principal.burst is None else principal.burst
        if rate <= 0:
            return  # an unlimited key (e.g. for benchmarks)
        decision: Decision = self.limiter.hit(principal.name, rate, burst)
        extra.extend(
            (
                (b"ratelimit-limit", str(decision.limit).encode()),
                (b"ratelimit-remaining", str(decision.remaining).encode()),
                (b"ratelimit-reset", str(decision.reset).encode()),
            )
        )
        if not decision.allowed:
            extra.append((b"retry-after", str(decision.retry_after).encode()))
            raise RateLimitError(
                f"Rate limit exceeded for key {principal.name!r} ({rate:g} requests per second, "
                f"bursts of {burst}). Retry after {decision.retry_after} s.",
                {"retryAfter": decision.retry_after},
            )

    def _health(self) -> tuple[int, bytes, Headers]:
        info = service.loaded(self.store)
        body = orjson.dumps(
            {
                "status": "ok",
                "dataVersion": info.data_version,
                "loadedAt": info.loaded_at,
                "contentId": info.content_id,
                "counts": info.counts,
                "details": {
                    "rateLimiter": self.limiter.status(),
                    "responseCache": self.responses.status(),
                    "search": service.search_mode(self.store),
                },
            }
        )
        return 200, body, [_JSON, (b"x-data-version", info.data_version.encode())]

    def _ready(self) -> tuple[int, bytes, Headers]:
        """Ready to take traffic: data loaded, its database reachable, keys reachable."""
        checks: dict[str, object] = {}
        try:
            info = self.store.info()
            checks["database"] = "reachable"
        except StoreUnavailable:
            info = None
            checks["database"] = "unreachable"
        checks["dataLoaded"] = info is not None
        try:
            self.keys.verify("readiness-probe")
            checks["keys"] = "reachable"
        except StoreUnavailable:
            checks["keys"] = "unreachable"
        ready = info is not None and checks["keys"] == "reachable"
        if not ready:
            raise ServiceUnavailableError("Not ready to serve.", checks)
        body = orjson.dumps(
            {"status": "ready", "dataVersion": info.data_version if info else None, **checks}
        )
        return 200, body, [_JSON]

    async def _lifespan(self, receive: Receive, send: Send) -> None:
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                await self._lifespan_stack.enter_async_context(
                    self.mcp_server.session_manager.run()
                )
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                await self._lifespan_stack.aclose()
                self.store.close()
                self.keys.close()
                if isinstance(self.limiter, RedisLimiter):
                    self.limiter.close()
                await send({"type": "lifespan.shutdown.complete"})
                return


def _query(scope: Scope) -> dict[str, list[str]]:
    raw: bytes = scope.get("query_string", b"")
    if not raw:
        return {}
    try:
        pairs = parse_qsl(
            raw.decode("utf-8"),
            keep_blank_values=True,
            errors="strict",
            max_num_fields=_MAX_QUERY_FIELDS,
        )
    except UnicodeDecodeError:
        raise ValidationError("The query string is not valid UTF-8.") from None
    except ValueError:
        raise ValidationError(f"Too many query parameters (at most {_MAX_QUERY_FIELDS}).") from None
    query: dict[str, list[str]] = {}
    for name, value in pairs:
        query.setdefault(name, []).append(value)
    return query


def create_app(settings: Settings | None = None) -> EdukgApp:
    """The app for `settings` (default: from the environment, as `edukg serve` sets it)."""
    return EdukgApp(settings or Settings.from_env())
