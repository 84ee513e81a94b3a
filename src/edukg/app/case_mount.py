"""The CASE provider's HTTP side: `/ims/case/v1p1/...` and `/ims/case/v1p0/...`.

Same keys (x-api-key or Bearer), rate limits, ETags and 304 as the REST API; packages
count as expensive work (the bounded pool); errors are `imsx_StatusInfo` bodies.

With `--case-public`, a request without a key is limited by its client address (not by
any key's bucket) and builds on a pool of its own, half the size of the keyed one, so
anonymous importers cannot take what keyed clients need. Every answer is built once per
release and kept (`--case-cache-mb`); requests for an answer being built wait for that
one build rather than each making their own, so memory does not grow with them.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable
from typing import Any

from edukg.adapters.case.errors import CaseError, status_info
from edukg.adapters.case.objects import Place
from edukg.adapters.case.provider import COLLECTIONS, EXPENSIVE, CaseRequest, answer
from edukg.app import caching
from edukg.app.memory import released
from edukg.app.pinning import store_of
from edukg.app.requests import SEARCH_COST, check_sizes, query_of
from edukg.app.workpool import Busy, WorkPool
from edukg.model.errors import (
    ApiError,
    AuthenticationError,
    RateLimitError,
    ServiceUnavailableError,
)
from edukg.model.lru import ByteLru
from edukg.services import graph as service
from edukg.store.base import StoreUnavailable

CASE_PATH = "/ims/case"
VERSIONS = ("v1p1", "v1p0")
_CHUNK = 1 << 18  # bytes per body message
Scope = dict[str, Any]
Headers = list[tuple[bytes, bytes]]
Send = Callable[[dict[str, Any]], Awaitable[None]]
Log = Callable[[Scope, str, list[str], int, float], None]


def _request(path: str) -> tuple[str, CaseRequest]:
    """(version, request) for a CASE path, or a 404 CaseError."""
    parts = path[len(CASE_PATH) :].strip("/").split("/")
    if len(parts) not in (2, 3) or parts[0] not in VERSIONS or parts[1] not in COLLECTIONS:
        raise CaseError(404, "unknownobject", f"Nothing at {path[:200]}.")
    if len(parts) == 2 and parts[1] != "CFDocuments":
        raise CaseError(404, "unknownobject", f"{parts[1]} are read one at a time: add the id.")
    return parts[0], CaseRequest(parts[1], parts[2] if len(parts) == 3 else None, {})


class CaseEndpoint:
    """Answers the CASE paths for one app (its store, keys, limits and pools)."""

    def __init__(self, app: Any, log: Log) -> None:
        self.app = app
        self._log = log
        settings = app.settings
        self.keyless_work = WorkPool(
            max(1, settings.work_threads // 2), max(1, settings.work_waiting // 2)
        )
        self.answers: ByteLru[bytes, bytes] = ByteLru(
            settings.case_cache_mb * 1024 * 1024, len, keep_last=False
        )
        self._building: dict[bytes, asyncio.Future[bytes]] = {}
        self.builds = 0

    def status(self) -> dict[str, object]:
        """Figures for the keyed /healthz details."""
        kept = self.answers
        return {
            "answersKept": {"entries": len(kept), "bytes": kept.bytes, "maxBytes": kept.max_bytes},
            "builds": self.builds,
            "keylessWork": self.keyless_work.status(),
        }

    def close(self) -> None:
        """Stop the keyless pool's threads."""
        self.keyless_work.close()

    async def __call__(
        self,
        scope: Scope,
        _receive: Any,
        send: Send,
        request: tuple[str, float, Headers, list[str]],
    ) -> None:
        request_id, started, extra, who = request
        version = "v1p1" if "/v1p0/" not in scope["path"] else "v1p0"
        try:
            status, pieces, headers = await self._answer(scope, extra, who)
        except CaseError as exc:
            status, pieces, headers = (
                exc.status,
                [status_info(exc.minor, exc.description, version)],
                [_JSON],
            )
        headers = [*headers, *extra, (b"x-request-id", request_id.encode()),
                   (b"content-length", str(sum(map(len, pieces))).encode())]  # fmt: skip
        self._log(scope, request_id, who, status, started)
        await send({"type": "http.response.start", "status": status, "headers": headers})
        if scope["method"] == "HEAD" or status == 304:
            pieces = []
        body = b"".join(pieces)
        for start in range(0, len(body) - _CHUNK, _CHUNK):  # a few large messages
            piece = body[start : start + _CHUNK]
            await send({"type": "http.response.body", "body": piece, "more_body": True})
        last = body[(max(0, len(body) - 1) // _CHUNK) * _CHUNK :]
        await send({"type": "http.response.body", "body": last})

    async def _answer(
        self, scope: Scope, extra: Headers, who: list[str]
    ) -> tuple[int, list[bytes], Headers]:
        app = self.app
        try:
            check_sizes(scope)
            version, request = _request(scope["path"])
            if scope["method"] not in ("GET", "HEAD"):
                extra.append((b"allow", b"GET, HEAD"))
                raise CaseError(405, "forbidden", f"{scope['method']} is not allowed: read-only.")
            request = CaseRequest(request.collection, request.sourced_id, query_of(scope))
            expensive = request.collection in EXPENSIVE
            cost = SEARCH_COST if expensive else 1
            keyed = not app.settings.case_public or app.access.has_key(scope)
            info = await self._run(app.io, lambda: self._admit(scope, extra, who, cost, keyed))
            place = Place(app.settings.public_url, version, info.loaded_at)
            values = {"id": request.sourced_id, "query": request.query}
            tag = caching.etag(f"{info.data_version}/{info.content_id}",
                               f"case:{version}:{request.collection}", values, b"")  # fmt: skip
            headers = [_JSON, (b"etag", tag), (b"x-data-version", info.data_version.encode()),
                       (b"cache-control", app.cache_control), _VARY]  # fmt: skip
            # Only a 200 becomes a 304. A tag of this request was issued only on a 200 of
            # it (an error of the same request errs every time), so a named tag needs no
            # lookup; `*` names none, so the answer is found first.
            condition = caching.if_none_match(scope)
            matched = condition is not None and caching.matches(condition, tag)
            if matched and condition is not None and condition.strip() != b"*":
                return 304, [], [h for h in headers if h[0] != b"content-type"]
            pool = (app.work if keyed else self.keyless_work) if expensive else app.io
            store = store_of(scope, app.store)
            body = await self._built(
                tag, pool, lambda: released(b"".join(answer(store, place, request)))
            )
            if matched:
                return 304, [], [h for h in headers if h[0] != b"content-type"]
            return 200, [body], headers
        except CaseError:
            raise
        except Busy as exc:
            extra.append((b"retry-after", b"1"))
            raise CaseError(429, "server_busy", exc.message) from None
        except RateLimitError as exc:
            raise CaseError(429, "server_busy", exc.message) from None
        except AuthenticationError as exc:
            raise CaseError(401, "unauthorised_request", exc.message) from None
        except (ServiceUnavailableError, StoreUnavailable) as exc:
            raise CaseError(503, "server_busy", str(exc)) from None
        except ApiError as exc:
            raise CaseError(
                exc.status,
                "unknownobject" if exc.status == 404 else "invalid_selection_field",
                exc.message,
            ) from None

    def _admit(self, scope: Scope, extra: Headers, who: list[str], cost: int, keyed: bool) -> Any:
        """The key and its rate limit (or, keyless, the address's); the data's info."""
        access = self.app.access
        if keyed:
            principal = access.authenticate(scope)
            who.append(principal.name)
            access.limit(principal, extra, cost)
            access.confirm()
        else:
            access.limit_keyless(scope, extra, cost)
        return service.loaded(store_of(scope, self.app.store))

    async def _built(self, tag: bytes, pool: WorkPool | None, build: Callable[[], bytes]) -> bytes:
        """The answer under `tag`: kept, being built (then awaited), or built here."""
        while True:
            kept = self.answers.get(tag)
            if kept is not None:
                return kept
            building = self._building.get(tag)
            if building is None:
                break
            with contextlib.suppress(_Abandoned):
                return await asyncio.shield(building)
        future: asyncio.Future[bytes] = asyncio.get_running_loop().create_future()
        self._building[tag] = future
        self.builds += 1
        try:
            body: bytes = await self._run(pool, build)
        except Exception as exc:
            future.set_exception(exc)
            future.exception()  # retrieved: waiters may be none
            raise
        except BaseException:
            future.set_exception(_Abandoned())  # the builder went away: a waiter builds
            future.exception()
            raise
        finally:
            del self._building[tag]
        self.answers.put(tag, body)
        future.set_result(body)
        return body

    @staticmethod
    async def _run(pool: WorkPool | None, work: Callable[[], Any]) -> Any:
        """Inline on SQLite (microseconds); off the event loop when a pool is given."""
        return work() if pool is None else await pool.run(work)


class _Abandoned(Exception):
    """The request building an answer was cancelled before it was done."""


_JSON = (b"content-type", b"application/json")
_VARY = (b"vary", b"X-Data-Version")
