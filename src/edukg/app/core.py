"""The ASGI application: its parts, one route table, and one pipeline for every request.

A plain ASGI callable rather than a framework: each request is a dict lookup or a few
segment compares, one key check, one indexed query (or a cached answer), and bytes that
were encoded at load. SQLite reads of one page take well under a millisecond, so they
run inline on the event loop instead of paying for a thread hop. The stages every
request passes are in app/pipeline.py; what each kind of path adds, in its entrance
(app/api.py, app/case_entrance.py, app/mcp_entrance.py, app/fixed.py).
"""

from __future__ import annotations

import contextlib
import gc
import sys
from pathlib import Path
from typing import Any

from edukg.adapters.config import Settings
from edukg.adapters.explorer import Explorer
from edukg.adapters.mcp import build_server, streamable_http_app
from edukg.adapters.openapi import build_openapi
from edukg.adapters.rest import OPERATIONS
from edukg.app.access import Access
from edukg.app.access_log import AccessLog
from edukg.app.api import ApiAnswers
from edukg.app.case_entrance import CASE_PATH, CaseAnswers
from edukg.app.diff_jobs import DiffJobs
from edukg.app.exchange import Receive, Scope, Send
from edukg.app.fixed import FixedRoutes
from edukg.app.mcp_entrance import MCP_PATH, McpAnswers
from edukg.app.metrics import Metrics
from edukg.app.pipeline import Pipeline
from edukg.app.ratelimit import Limiter, MemoryLimiter, RedisLimiter
from edukg.app.respond import Responder
from edukg.app.response_cache import ResponseCache
from edukg.app.routing import Router
from edukg.app.watch import Watch
from edukg.app.workpool import WorkPool
from edukg.services.changes import ChangeFeed
from edukg.store import LOCAL_RECHECK, KeyStore, Store, backend_of, on_local_files

SWITCH_INTERVAL = 0.0005  # seconds: measured in bench/backends.py
IO_WAITING = 4096  # requests waiting for a network thread; the connection cap bounds it first


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
        limit = settings.statement_seconds  # one read's limit, on either backend
        # Chosen once: the primary (keys, change jobs) and where reads go (--read-db).
        primary = backend_of(settings.db)
        reads = backend_of(settings.read_db) if settings.read_db else primary
        self.store = store or reads.store(settings.refresh, limit)
        self.releases = reads.releases(settings.refresh, limit)
        self.diff_jobs = DiffJobs(settings.db)
        self.changes = ChangeFeed(self.releases, reads.changes(), self.diff_jobs.start)
        recheck = min(settings.refresh, LOCAL_RECHECK)
        self.keys = keys or primary.keys(create=False, recheck=recheck, statement_seconds=limit)
        if limiter is None:
            limiter = RedisLimiter(settings.redis) if settings.redis else MemoryLimiter()
        self.limiter = limiter
        self.access = Access(self.keys, limiter, settings)
        self.mcp_server = build_server(self.store)
        self._lifespan_stack = contextlib.AsyncExitStack()
        self.responses = ResponseCache(settings.response_cache_mb * 1024 * 1024)
        self.work = WorkPool(settings.work_threads, settings.work_waiting)
        # With PostgreSQL or Redis every request waits on the network: it runs on threads
        # (as many as the database pool has connections), so that requests overlap their
        # round trips instead of queueing behind each other's (docs/deployment.md).
        networked = bool(settings.redis) or primary.networked or reads.networked
        self.io = WorkPool(settings.io_threads, IO_WAITING) if networked else None
        if networked:
            # Threads back from a database wait queue for the interpreter lock; the default
            # 5 ms turn lets one request's Python delay the others' (docs/deployment.md).
            sys.setswitchinterval(SWITCH_INTERVAL)
        log = AccessLog(settings.access_log)
        where = Path(settings.metrics_dir) if settings.metrics_dir else None  # serve's own
        self.metrics = Metrics(where, self._part_figures)
        self.api = ApiAnswers(self.store, self.releases, self.changes, self.keys,
                              self.responses, self.work, settings.cache_max_age)  # fmt: skip
        self.case = CaseAnswers(settings, self.store, self.work, self.io)
        respond = Responder(self.metrics, log)
        self.mcp = McpAnswers(settings, streamable_http_app(self.mcp_server), self.work, respond)
        self.fixed = FixedRoutes(self.store, self.keys, self.access, self._details,
                                 Explorer(settings.base_path), settings.base_path,
                                 self.metrics)  # fmt: skip
        self.router = self._routes(settings.base_path)
        self.openapi = build_openapi(settings.base_path, OPERATIONS, self.router.documented)
        self.fixed.publish(self.openapi)
        # On local files the stores look at them ahead of the requests (app/watch.py).
        local = on_local_files(self.store, self.keys)
        watch = self.watch = Watch(local, recheck) if local else None
        self.pipeline = Pipeline(self.router, self.access, self.releases, self.io, respond,
                                 self.api.reads, settings.statement_seconds, watch)  # fmt: skip

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            await self.pipeline(scope, receive, send)
        elif scope["type"] == "lifespan":
            await self._lifespan(receive, send)

    def _routes(self, base_path: str) -> Router:
        """The one table of everything this server answers."""
        router = Router(base_path, OPERATIONS)
        router.entrances(self.api.entrance_of, self.api.missing, self.fixed.plain)
        self.fixed.register(router)
        router.fixed(MCP_PATH, self.mcp.entrance)
        router.prefix(CASE_PATH, self.case.entrance)
        return router

    def _part_figures(self, data: bool) -> dict[str, object]:
        """What /metrics shows of this process's parts (metrics.Metrics); with `data`,
        the release and index progress too (reads of the database)."""
        cache, work, keyless = self.responses.status(), self.work, self.case.keyless_work
        figures: dict[str, object] = {
            "response_cache_hits": cache["hits"], "response_cache_misses": cache["misses"],
            "response_cache_bytes": cache["bytes"], "response_cache_entries": cache["entries"],
            "work_busy": work.busy + keyless.busy, "work_slots": work.slots + keyless.slots,
            "work_refused": work.refused + keyless.refused,
            "database_busy": self.io.busy if self.io else 0,
            "database_threads": self.io.made if self.io else 0,
        }  # fmt: skip
        if not data:
            return figures
        with contextlib.suppress(Exception):  # a database down costs these figures only
            info = self.store.info()
            if info is not None:
                figures.update(data_version=info.data_version, content_id=info.content_id)
            progress: Any = self.fixed.index_watch.status(self.store).get("indexing")
            if progress:
                figures.update(index_texts_done=progress["done"],
                               index_texts_total=progress["total"])  # fmt: skip
        return figures

    def _details(self) -> dict[str, object]:
        """What the keyed /healthz shows of this app's parts."""
        return {
            "rateLimiter": self.limiter.status(),
            "responseCache": self.responses.status(),
            "expensiveWork": self.work.status(),
            "caseProvider": self.case.status(),
        }

    async def _lifespan(self, receive: Receive, send: Send) -> None:
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                await self._lifespan_stack.enter_async_context(
                    self.mcp_server.session_manager.run()
                )
                # What start-up made (modules, the MCP server, schemas) lives as long as the
                # process: kept out of the garbage collector's full passes, which otherwise
                # walk it again and again while requests wait (docs/benchmarks.md,
                # "Crosswalks between any two frameworks": start-up objects frozen).
                gc.collect()
                gc.freeze()
                self.metrics.start()
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                gc.unfreeze()
                await self.metrics.stop()
                await self._lifespan_stack.aclose()
                self._close()
                await send({"type": "lifespan.shutdown.complete"})
                return

    def _close(self) -> None:
        if self.watch is not None:
            self.watch.stop()
        self.work.close()
        self.case.close()
        if self.io is not None:
            self.io.close()
        for part in (self.store, self.releases, self.changes, self.diff_jobs, self.keys):
            part.close()
        if isinstance(self.limiter, RedisLimiter):
            self.limiter.close()


def create_app(settings: Settings | None = None) -> EdukgApp:
    """The app for `settings` (default: from the environment, as `edukg serve` sets it)."""
    return EdukgApp(settings or Settings.from_env())
