"""The fixed routes: `/`, health and readiness, the OpenAPI document and docs page, the
icon, and the explorer. They take no key, and show more to a valid one (health details,
a pinned release); they are not rate limited."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import orjson

from edukg.adapters.docs_page import render_docs, security_headers
from edukg.adapters.explorer import EXPLORER_PATH, Explorer
from edukg.adapters.openapi import HEALTH_PATH, READY_PATH
from edukg.app.access import Access
from edukg.app.entrance import Entrance, KeyRule
from edukg.app.exchange import Exchange
from edukg.app.http import JSON, Answer
from edukg.app.metrics import CONTENT_TYPE, Metrics
from edukg.app.probes import IndexWatch, readiness
from edukg.app.respond import Policy
from edukg.app.routing import Handler, Router
from edukg.model.errors import ForbiddenError, NotFoundError
from edukg.services import graph as service
from edukg.services import search as searching
from edukg.services.alignment import health as alignment_health
from edukg.store.base import KeyStore, Store

_DAY = b"public, max-age=86400"
_ALIGNMENT = {"hybrid": "semantic", "lexical": "lexical"}


def _scraper_only(ex: Exchange) -> int:
    """/metrics is server-wide figures: a scraper's key only (403 for the others)."""
    if ex.principal is None or not ex.principal.metrics:
        raise ForbiddenError(
            "This key may not read /metrics: make a scraper's key with"
            " `edukg keys create NAME --metrics`."
        )
    return 1


class FixedRoutes:
    """The fixed routes of one app, and the figures its health page shows."""

    def __init__(
        self,
        store: Store,
        keys: KeyStore,
        access: Access,
        details: Callable[[], dict[str, object]],
        explorer: Explorer,
        base_path: str,
        metrics: Metrics,
    ) -> None:
        self.store = store
        self.keys = keys
        self.access = access
        self.details = details  # the figures of the app's parts, for a valid key
        self.index_watch = IndexWatch()
        self.explorer = explorer
        self.base_path = base_path
        self.metrics = metrics
        self._openapi = b""
        self._docs: Answer = (404, b"", [])
        # The document, the docs page and the explorer's page and assets: compressed for
        # a client that accepts gzip, each body once (app/respond.py).
        self.plain = Entrance("fixed", self._handled, key=KeyRule.OPTIONAL, limited=False,
                              policy=Policy(vary=b"Accept-Encoding", compress=True))  # fmt: skip
        # With a key, /healthz and /readyz show details: the key's rate limit applies then
        # (without one they are liveness and readiness probes, never limited).
        self.keyed = Entrance("fixed-keyed", self._handled, key=KeyRule.OPTIONAL,
                              wants_key=True)  # fmt: skip
        # Prometheus sends its key as a Bearer token: a key of the metrics role
        # (`keys create --metrics`), whose scrapes count against its rate limit.
        self.scraped = Entrance("metrics", self._handled, prepare=_scraper_only)

    def publish(self, openapi: dict[str, Any]) -> None:
        """Serve the OpenAPI document (made from the route table) and its docs page."""
        self._openapi = orjson.dumps(openapi)
        docs = render_docs(openapi)
        self._docs = (200, docs, [(b"content-type", b"text/html; charset=utf-8"),
                                  *security_headers(docs)])  # fmt: skip

    def _handled(self, ex: Exchange) -> Answer:
        """The answer of the route's own handler (a 404 when it has none for this path)."""
        handler: Handler | None = ex.found.handler if ex.found is not None else None
        answer = handler(ex) if handler is not None else None
        if answer is None:
            raise NotFoundError(f"Nothing at {ex.path}. The API lives under {self.base_path}/.")
        return answer

    def register(self, router: Router) -> None:
        """Put the fixed routes in the route table."""
        plain = self.plain
        router.fixed("/readyz", self.keyed, self.ready, READY_PATH)
        router.fixed(
            "/metrics",
            self.scraped,
            lambda _ex: (200, self.metrics.render(), [(b"content-type", CONTENT_TYPE)]),
        )
        router.fixed("/healthz", self.keyed, self.health, HEALTH_PATH)
        router.fixed("/openapi.json", plain, lambda _ex: (200, self._openapi, [JSON]))
        router.fixed("/", plain, self.index)
        icon = [(b"content-type", self.explorer.icon.content_type), (b"cache-control", _DAY)]
        router.fixed("/favicon.ico", plain, lambda _ex: (200, self.explorer.icon.body, icon))
        router.fixed("/docs", plain, lambda _ex: self._docs)
        router.fixed("/docs/", plain, lambda _ex: self._docs)
        router.prefix(EXPLORER_PATH, plain, lambda ex: self.explorer.respond(ex.path))

    def index(self, _ex: Exchange) -> Answer:
        """What a visitor to / is looking for: where the API, its docs and the explorer are."""
        body = orjson.dumps({
            "name": "edukg", "api": self.base_path, "docs": "/docs",
            "openapi": "/openapi.json", "explorer": EXPLORER_PATH, "health": "/healthz",
        })  # fmt: skip
        return 200, body, [JSON]

    def health(self, ex: Exchange) -> Answer:
        """Liveness for anyone; the details (limits, cache, search) for a valid key only."""
        store = ex.store or self.store
        info = service.loaded(store)
        health: dict[str, object] = {
            "status": "ok",
            "dataVersion": info.data_version,
            "loadedAt": info.loaded_at,
            "contentId": info.content_id,
        }
        if ex.principal is not None:
            health["counts"] = info.counts
            health["details"] = {
                "rateLimit": self.access.limits_of(ex.principal),
                **self.details(),
                "search": {**searching.search_mode(store), **self.index_watch.status(store)},
                # Aligning a text and similar standards rank as search does.
                "alignment": {
                    "ranking": _ALIGNMENT[searching.search_ranking(store)],
                    **alignment_health(),
                },
            }
        body = orjson.dumps(health)
        return 200, body, [JSON, (b"x-data-version", info.data_version.encode())]

    def ready(self, ex: Exchange) -> Answer:
        """Ready to take traffic: data loaded, its database reachable, keys reachable."""
        return readiness(self.store, self.keys, ex.principal is not None)
