"""The ASGI application: one route table, auth, errors, and nothing per request
that could have been done at load time.

A plain ASGI callable rather than a framework: each request is a dict lookup or
a few segment compares, one key check, one indexed query, and bytes that were
encoded at load. SQLite reads of one page take well under a millisecond, so
they run inline on the event loop instead of paying for a thread hop.
"""

from __future__ import annotations

import contextlib
import gc
import logging
import sys
import time
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from typing import Any, TypeVar

import orjson

from edukg.adapters.config import Settings
from edukg.adapters.docs_page import render_docs, security_headers
from edukg.adapters.explorer import EXPLORER_PATH, Explorer
from edukg.adapters.mcp import build_server, streamable_http_app
from edukg.adapters.openapi import HEALTH_PATH, READY_PATH, build_openapi
from edukg.adapters.params import instance, parse_body, parse_values
from edukg.adapters.rest import OPERATIONS, Call
from edukg.adapters.rest.base import Operation
from edukg.app import caching
from edukg.app.access import Access
from edukg.app.body import read_body, require_json
from edukg.app.case_mount import CASE_PATH, CaseEndpoint
from edukg.app.diff_jobs import DiffJobs
from edukg.app.mcp_mount import MCP_PATH, McpEndpoint
from edukg.app.pending import BODY_KEY, Pending, check_parsable, takes_body
from edukg.app.pinning import asks_for_release, pin, store_of, unpinned
from edukg.app.probes import IndexWatch, readiness
from edukg.app.ratelimit import Limiter, MemoryLimiter, RedisLimiter
from edukg.app.requests import (
    check_sizes,
    error_answer,
    query_of,
    redacted_query,
    refusal,
    request_cost,
)
from edukg.app.responses import ResponseCache
from edukg.app.routing import Found, Router
from edukg.app.workpool import WorkPool
from edukg.model.errors import (
    ApiError,
    MethodNotAllowedError,
    NotFoundError,
    ServiceUnavailableError,
    new_request_id,
)
from edukg.services import graph as service
from edukg.services import search as searching
from edukg.services.changes import ChangeFeed
from edukg.store import (
    KeyStore,
    Store,
    is_postgres,
    open_changes,
    open_key_store,
    open_releases,
    open_store,
)
from edukg.store.base import StoreUnavailable
from edukg.store.keys import KEY_PREFIX

log = logging.getLogger("edukg")

Scope = dict[str, Any]
Receive = Callable[[], Awaitable[dict[str, Any]]]
Send = Callable[[dict[str, Any]], Awaitable[None]]
Headers = list[tuple[bytes, bytes]]
Response = tuple[int, bytes, Headers]
T = TypeVar("T")

_JSON = (b"content-type", b"application/json")
_ALLOW_READS = (b"allow", b"GET, HEAD")
_DAY = b"public, max-age=86400"
_NOT_IN_304 = frozenset((b"content-type", b"content-encoding"))
access_log = logging.getLogger("edukg.access")


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
        self.releases = open_releases(settings.read_db or settings.db, settings.refresh)
        self.diff_jobs = DiffJobs(settings.db)
        self.changes = ChangeFeed(
            self.releases, open_changes(settings.read_db or settings.db), self.diff_jobs.start
        )
        self.keys = keys or open_key_store(settings.db, create=False)
        if limiter is None:
            limiter = RedisLimiter(settings.redis) if settings.redis else MemoryLimiter()
        self.limiter = limiter
        self.access = Access(self.keys, limiter, settings)
        self.mcp_server = build_server(self.store)
        self._mcp_app = streamable_http_app(self.mcp_server)
        self._lifespan_stack = contextlib.AsyncExitStack()
        self.explorer = Explorer(settings.base_path)
        self.router = self._routes(settings.base_path)
        self.openapi = build_openapi(settings.base_path, OPERATIONS, self.router.documented)
        self._openapi_bytes = orjson.dumps(self.openapi)
        self._docs_bytes = render_docs(self.openapi)
        self._docs_headers = [
            (b"content-type", b"text/html; charset=utf-8"),
            *security_headers(self._docs_bytes),
        ]
        # Private: responses sit behind a key, so shared caches must not keep them.
        self.cache_control = f"private, max-age={settings.cache_max_age}".encode()
        self.responses = ResponseCache(settings.response_cache_mb * 1024 * 1024)
        self.index_watch = IndexWatch()
        self.work = WorkPool(settings.work_threads, settings.work_waiting)
        self._recent: dict[tuple[bytes, bytes], tuple[dict[str, Any], Any]] = {}  # URL -> params
        # With PostgreSQL or Redis every request waits on the network: it runs on threads
        # (as many as the database pool has connections), so that requests overlap their
        # round trips instead of queueing behind each other's (docs/deployment.md).
        networked = settings.redis or is_postgres(settings.db)
        networked = networked or is_postgres(settings.read_db or settings.db)
        self.io = WorkPool(settings.io_threads, IO_WAITING) if networked else None
        if networked:
            # Threads back from a database wait queue for the interpreter lock; the default
            # 5 ms turn lets one request's Python delay the others' (docs/deployment.md).
            sys.setswitchinterval(SWITCH_INTERVAL)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await self._lifespan(receive, send)
            return
        if scope["type"] != "http":
            return
        request_id = new_request_id()
        started = time.perf_counter()
        extra: Headers = []  # headers every response carries once known (rate limits)
        who: list[str] = []  # the key's name, once authenticated (never the key)
        if asks_for_release(scope):
            try:
                scope = await self._pinned(request_id, scope)
            except ApiError as exc:
                refused = error_answer(exc, request_id)
                await self._send(send, scope, refused, (request_id, started, extra, who))
                return
        found = self.router.find(scope["path"])
        if found is not None and found.mount is not None:
            await found.mount(scope, receive, send, (request_id, started, extra, who))
            return
        try:
            if takes_body(found, scope):
                scope = {**scope, BODY_KEY: await read_body(scope, receive)}
            answer = await self._answer(request_id, scope, found, extra, who)
        except ApiError as exc:
            answer = refusal(exc, request_id, extra)
        await self._send(send, scope, answer, (request_id, started, extra, who))

    async def _answer(
        self, request_id: str, scope: Scope, found: Found | None, extra: Headers, who: list[str]
    ) -> Response:
        """The answer of everything but the mounts: inline, on a network thread, or (for
        expensive work) on the work pool."""
        if self.io is None:  # SQLite and in-process limits: microseconds, inline
            answer = self._guarded(request_id, scope, self._respond, scope, found, extra, who)
        else:  # a database or Redis over the network: never on the event loop
            answer = await self.io.run(
                lambda: self._guarded(request_id, scope, self._respond, scope, found, extra, who)
            )
        if isinstance(answer, Pending):  # expensive: off the event loop
            pending = answer
            built = await self.work.run(
                lambda: self._guarded(request_id, scope, self._build, pending)
            )
            return self._complete(pending, *built)
        return answer

    async def _pinned(self, request_id: str, scope: Scope) -> Scope:
        """The scope with the release it names (a lookup: off the loop when networked)."""
        if self.io is None:
            return self._guarded(request_id, scope, self._pin, scope)
        return await self.io.run(lambda: self._guarded(request_id, scope, self._pin, scope))

    def _pin(self, scope: Scope) -> Scope:
        """Pinned for a valid key only: without one, no release is looked up or named (a
        data path then answers 401, whatever the pin)."""
        if self.access.known_key(scope) is None:
            return unpinned(scope)
        return pin(scope, self.releases)

    async def _send(
        self,
        send: Send,
        scope: Scope,
        answer: Response,
        request: tuple[str, float, Headers, list[str]],
    ) -> None:
        """Send one whole answer with the request's own headers, logged before it leaves
        (so the line exists once a client has its answer)."""
        status, body, headers = answer
        request_id, started, extra, who = request
        headers = [
            *headers,
            *extra,
            (b"x-request-id", request_id.encode()),
            (b"content-length", str(len(body)).encode()),
        ]
        self._log(scope, request_id, who, status, started)
        await send({"type": "http.response.start", "status": status, "headers": headers})
        no_body = scope["method"] == "HEAD" or status == 304
        await send({"type": "http.response.body", "body": b"" if no_body else body})

    def _guarded(self, request_id: str, scope: Scope, answer: Callable[..., T], *args: Any) -> T:
        """Run `answer`; an unreachable database is a 503, anything unforeseen a 500."""
        try:
            return answer(*args)
        except ApiError:
            raise
        except StoreUnavailable as exc:
            log.warning("request %s: database unavailable: %s", request_id, exc)
            raise ServiceUnavailableError(
                "The database cannot be reached right now. Try again shortly."
            ) from None
        except Exception:
            log.exception("request %s failed: %s %s", request_id, scope["method"], scope["path"])
            raise ApiError(
                "An unexpected error occurred. Quote the request id when reporting it."
            ) from None

    def _log(
        self, scope: Scope, request_id: str, who: list[str], status: int, started: float
    ) -> None:
        """One JSON line per request: no key, no headers, a bounded path."""
        if not self.settings.access_log or not access_log.isEnabledFor(logging.INFO):
            return
        query = redacted_query(scope.get("query_string", b""), KEY_PREFIX)[:512]
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

    def _routes(self, base_path: str) -> Router:
        """The one table of everything this server answers."""
        router = Router(base_path, OPERATIONS)

        def docs_page(_scope: Scope) -> Response:
            return 200, self._docs_bytes, self._docs_headers

        router.fixed("/readyz", self._ready, READY_PATH)
        router.fixed("/healthz", self._health, HEALTH_PATH)
        router.fixed("/openapi.json", lambda _scope: (200, self._openapi_bytes, [_JSON]))
        router.fixed("/", self._index)
        icon = [(b"content-type", self.explorer.icon.content_type), (b"cache-control", _DAY)]
        router.fixed("/favicon.ico", lambda _scope: (200, self.explorer.icon.body, icon))
        router.fixed("/docs", docs_page)
        router.fixed("/docs/", docs_page)
        router.prefix(EXPLORER_PATH, lambda scope: self.explorer.respond(scope["path"]))
        router.mount(MCP_PATH, McpEndpoint(self, self._mcp_app))
        self.case = CaseEndpoint(self, self._log)
        router.mount(CASE_PATH, self.case, subtree=True)
        return router

    def _respond(
        self, scope: Scope, found: Found | None, extra: Headers, who: list[str]
    ) -> Response | Pending:
        path: str = scope["path"]
        check_sizes(scope)
        if found is not None and found.api:
            return self._respond_api(scope, found, extra, who)
        if scope["method"] not in ("GET", "HEAD"):
            extra.append(_ALLOW_READS)
            raise MethodNotAllowedError(f"{scope['method']} is not allowed here.")
        answer = found.handler(scope) if found is not None and found.handler else None
        if answer is None:
            raise NotFoundError(f"Nothing at {path}. The API lives under {self.router.base_path}/.")
        return answer

    def _respond_api(
        self, scope: Scope, found: Found, extra: Headers, who: list[str]
    ) -> Response | Pending:
        """An operation of the API: key, rate limit, parameters, then the data."""
        path: str = scope["path"]
        method: str = scope["method"]
        takes_body = found.operation is not None and found.operation.takes_body
        if takes_body and method != "POST":
            extra.append((b"allow", b"POST"))
            raise MethodNotAllowedError(
                f"{method} is not allowed here: send the JSON body by POST."
            )
        if not takes_body and method not in ("GET", "HEAD"):
            extra.append(_ALLOW_READS)
            raise MethodNotAllowedError(f"{method} is not allowed: this API is read-only.")
        principal = self.access.authenticate(scope)
        who.append(principal.name)
        if found.operation is None:
            self.access.limit(principal, extra)
            raise NotFoundError(f"No operation at {path}. See /openapi.json for the API.")
        op = found.operation
        try:
            values, params = self._parsed(op, scope, found.values or {})
        except ApiError:
            self.access.limit(principal, extra)  # a bad request costs a token too
            raise
        cost = request_cost(op, values)
        self.access.limit(principal, extra, cost)
        answer = self._data(op, values, params, scope)
        if isinstance(answer, Pending) and cost == 1:  # cheap: right here
            answer = self._complete(answer, *self._build(answer))
        self.access.confirm()  # after the reads, which may have brought the key revision
        return answer

    def _parsed(
        self, op: Operation[Any], scope: Scope, path: dict[str, str]
    ) -> tuple[dict[str, Any], Any]:
        """Validated values, by name and as the operation's parameter object, remembered for recent URLs (a few thousand, oldest out):
        repeated requests, the common case, skip re-validating the same bytes."""
        if op.takes_body:  # a body is new each time: nothing to remember it by
            require_json(scope)
            values = parse_body(op.declared, scope.get(BODY_KEY, b""))
            return values, instance(op.params, values)
        key = (scope.get("raw_path") or scope["path"].encode(), scope.get("query_string", b""))
        known = self._recent.get(key)
        if known is not None:
            return known
        values = parse_values(op.declared, query_of(scope), path)
        parsed = (values, instance(op.params, values))
        if len(self._recent) >= _RECENT_URLS:
            self._recent.pop(next(iter(self._recent)), None)
        self._recent[key] = parsed
        return parsed

    def _data(
        self, op: Operation[Any], values: dict[str, Any], params: Any, scope: Scope
    ) -> Response | Pending:
        """A validated data request: its response from the cache, or what building it
        takes (run by `_build`, whose lookups may fail, then `_complete`)."""
        store = store_of(scope, self.store)
        info = service.loaded(store)
        gz = caching.wants_gzip(scope)
        # Two releases of the same content still answer with their own X-Data-Version.
        version = f"{info.data_version}/{info.content_id}"
        if "Search" in op.tags or op.ranked:  # the same data answers differently once indexed
            version += ":" + searching.search_ranking(store)
        if "Data releases" in op.tags:  # answers change with the kept releases
            version += ":" + self.releases.stamp()
        # Keyed by what the handler reads, so parameters it ignores make no new entry.
        tag = caching.etag(
            version, op.operation_id, values, caching.GZIP_TAG if gz else b"identity"
        )
        kept = self.responses.get(tag)
        if kept is not None:
            return self._conditional(scope, *kept)
        secret = self._cursor_secret()
        return Pending(op, values, params, scope, store, info, version, tag, gz, secret)

    def _build(self, p: Pending) -> tuple[bytes, Headers]:
        """Run the handler and encode its answer (safe on a worker thread: no shared state
        but the store, which is)."""
        call = Call(p.op.operation_id, p.params, p.values, p.store, p.info, p.secret,
                    self.releases, self.changes)  # fmt: skip
        body = p.op.handler(call)
        verdict = p.store.integrity()
        if verdict == "checking" or verdict.startswith("damaged"):  # else: the file is sound
            check_parsable(body, p)
        headers = [
            _JSON,
            (b"x-data-version", p.info.data_version.encode()),
            (b"etag", p.tag),
            (b"cache-control", self.cache_control),
            (b"vary", b"Accept-Encoding, X-Data-Version"),
        ]
        if p.gz and len(body) >= caching.GZIP_MIN_BYTES:
            body = caching.compress(body)
            headers.append((b"content-encoding", b"gzip"))
        elif p.gz:  # small bodies go as they are, under the tag of that representation
            headers[2] = (
                b"etag",
                caching.etag(p.version, p.op.operation_id, p.values, b"identity"),
            )
        return body, headers

    def _complete(self, p: Pending, body: bytes, headers: Headers) -> Response:
        self.responses.put(p.tag, body, headers)
        return self._conditional(p.scope, body, headers)

    @staticmethod
    def _conditional(scope: Scope, body: bytes, headers: Headers) -> Response:
        """Only a 200 may become a 304, when If-None-Match names its tag."""
        condition = caching.if_none_match(scope) if scope["method"] != "POST" else None
        if condition is not None and caching.matches(condition, headers[2][1]):
            return 304, b"", [h for h in headers if h[0] not in _NOT_IN_304]
        return 200, body, headers

    def _cursor_secret(self) -> bytes:
        """From the key store's secret, so every node signs alike (and a new store, new)."""
        return self.keys.derived_secret(b"cursor")

    def _index(self, _scope: Scope) -> tuple[int, bytes, Headers]:
        """What a visitor to / is looking for: where the API, its docs and the explorer are."""
        body = orjson.dumps({
            "name": "edukg", "api": self.router.base_path, "docs": "/docs",
            "openapi": "/openapi.json", "explorer": EXPLORER_PATH, "health": "/healthz",
        })  # fmt: skip
        return 200, body, [_JSON]

    def _health(self, scope: Scope) -> tuple[int, bytes, Headers]:
        """Liveness for anyone; the details (limits, cache, search) for a valid key only."""
        store = store_of(scope, self.store)
        info = service.loaded(store)
        health: dict[str, object] = {
            "status": "ok",
            "dataVersion": info.data_version,
            "loadedAt": info.loaded_at,
            "contentId": info.content_id,
        }
        principal = self.access.known_key(scope)
        if principal is not None:
            health["counts"] = info.counts
            health["details"] = {
                "rateLimit": self.access.limits_of(principal),
                "rateLimiter": self.limiter.status(),
                "responseCache": self.responses.status(),
                "expensiveWork": self.work.status(),
                "caseProvider": self.case.status(),
                "search": {**searching.search_mode(store), **self.index_watch.status(store)},
                # Aligning a text and similar standards rank as search does.
                "alignment": {"ranking": _ALIGNMENT[searching.search_ranking(store)]},
            }
        body = orjson.dumps(health)
        return 200, body, [_JSON, (b"x-data-version", info.data_version.encode())]

    def _ready(self, scope: Scope) -> tuple[int, bytes, Headers]:
        """Ready to take traffic: data loaded, its database reachable, keys reachable."""
        return readiness(self.store, self.keys, self.access.known_key(scope) is not None)

    async def _lifespan(self, receive: Receive, send: Send) -> None:
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                await self._lifespan_stack.enter_async_context(
                    self.mcp_server.session_manager.run()
                )
                # What start-up made (modules, the MCP server, schemas) lives as long as the
                # process: kept out of the garbage collector's full passes, which otherwise
                # walk it again and again while requests wait (docs/benchmarks.md, 8th round).
                gc.collect()
                gc.freeze()
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                gc.unfreeze()
                await self._lifespan_stack.aclose()
                self.work.close()
                self.case.close()
                if self.io is not None:
                    self.io.close()
                self.store.close()
                self.releases.close()
                self.changes.close()
                self.diff_jobs.close()
                self.keys.close()
                if isinstance(self.limiter, RedisLimiter):
                    self.limiter.close()
                await send({"type": "lifespan.shutdown.complete"})
                return


_ALIGNMENT = {"hybrid": "semantic", "lexical": "lexical"}
_RECENT_URLS = 4096  # validated URLs remembered per worker
SWITCH_INTERVAL = 0.0005  # seconds: measured in bench/backends.py
IO_WAITING = 4096  # requests waiting for a network thread; the connection cap bounds it first


def create_app(settings: Settings | None = None) -> EdukgApp:
    """The app for `settings` (default: from the environment, as `edukg serve` sets it)."""
    return EdukgApp(settings or Settings.from_env())
