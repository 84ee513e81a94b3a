"""The CASE provider's entrance: `/ims/case/v1p1/...` and `/ims/case/v1p0/...`.

Same keys (x-api-key or Bearer), rate limits, ETags and 304 as the REST API, through the
same pipeline; packages count as expensive work (the bounded pool); errors are
`imsx_StatusInfo` bodies.

With `--case-public`, a request without a key is limited by its client address (not by
any key's bucket) and builds on a pool of its own, half the size of the keyed one, so
anonymous importers cannot take what keyed clients need. Every answer is built once per
release and kept (`--case-cache-mb`); requests for an answer being built wait for that
one build rather than each making their own, so memory does not grow with them.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from edukg.adapters.case.errors import CaseError, status_info
from edukg.adapters.case.objects import Place
from edukg.adapters.case.provider import COLLECTIONS, EXPENSIVE, CaseRequest, answer
from edukg.adapters.config import Settings
from edukg.app import etags
from edukg.app.allocator import released
from edukg.app.compression import compress, tag_encoding, wants_gzip, with_encoding, worth_gzip
from edukg.app.entrance import Entrance, KeyRule, Later, Reply
from edukg.app.exchange import Exchange
from edukg.app.http import JSON, Answer, Headers, Representation
from edukg.app.pipeline import guarded
from edukg.app.requests import SEARCH_COST, query_of
from edukg.app.respond import Policy, names_tag
from edukg.app.workpool import Busy, WorkPool
from edukg.model.errors import ApiError, RateLimitError
from edukg.model.lru import ByteLru
from edukg.services import graph as service
from edukg.store.base import Store

CASE_PATH = "/ims/case"
VERSIONS = ("v1p1", "v1p0")


@dataclass(frozen=True, slots=True)
class CaseRead:
    """What the CASE checks made of a request: the path's CASE version and the read."""

    version: str
    request: CaseRequest


def _read_of(ex: Exchange) -> CaseRead:
    parsed = ex.parsed
    assert isinstance(parsed, CaseRead)  # the screen made it
    return parsed


def _request(path: str) -> CaseRead:
    """The read a CASE path asks for, or a 404 CaseError."""
    parts = path[len(CASE_PATH) :].strip("/").split("/")
    if len(parts) not in (2, 3) or parts[0] not in VERSIONS or parts[1] not in COLLECTIONS:
        raise CaseError(404, "unknownobject", f"Nothing at {path[:200]}.")
    if len(parts) == 2 and parts[1] != "CFDocuments":
        raise CaseError(404, "unknownobject", f"{parts[1]} are read one at a time: add the id.")
    return CaseRead(parts[0], CaseRequest(parts[1], parts[2] if len(parts) == 3 else None, {}))


@dataclass(slots=True, eq=False)
class _Build(Later):
    """A CASE answer to build (or to compress): the key it is kept by, its pool and work,
    and the representation it becomes."""

    key: bytes
    pool: WorkPool | None
    build: Callable[[], bytes]
    headers: Headers
    tag: bytes  # the representation's ETag
    gzip: bool  # the client accepts gzip


class CaseAnswers:
    """Answers the CASE paths for one app (its store, pools and kept answers)."""

    def __init__(
        self, settings: Settings, store: Store, work: WorkPool, io: WorkPool | None
    ) -> None:
        self.settings = settings
        self.store = store
        self.work = work
        self.io = io
        self.keyless_work = WorkPool(
            max(1, settings.work_threads // 2), max(1, settings.work_waiting // 2)
        )
        self.answers: ByteLru[bytes, bytes] = ByteLru(
            settings.case_cache_mb * 1024 * 1024, len, keep_last=False
        )
        self._building: dict[bytes, asyncio.Future[bytes]] = {}
        self.builds = 0
        self.entrance = Entrance(
            "case", self.answer, key=KeyRule.CASE, screen=_screen, prepare=_prepare,
            finish=self.finish, refuse=_refuse, method_refusal="{method} is not allowed: read-only.",
            policy=Policy.private(settings.cache_max_age, b"Accept-Encoding, X-Data-Version"),
        )  # fmt: skip

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

    def answer(self, ex: Exchange) -> Reply | Later:
        """A 304 or a kept answer at once; else the build (`finish`)."""
        read = _read_of(ex)
        request = read.request
        store = ex.store or self.store
        info = service.loaded(store)
        place = Place(self.settings.public_url, read.version, info.loaded_at)
        values = {"id": request.sourced_id, "query": request.query}
        data, operation = (
            f"{info.data_version}/{info.content_id}",
            f"case:{read.version}:{request.collection}",
        )
        key = etags.etag(data, operation, values, b"")  # what the answer is kept by
        gz = wants_gzip(ex.head.get(b"accept-encoding"))
        tag = etags.etag(data, operation, values, tag_encoding(gz))
        headers = [JSON, (b"etag", tag), (b"x-data-version", info.data_version.encode())]
        # A tag of this request was issued only on a 200 of it (an error of the same
        # request errs every time), so a named tag needs no lookup: the response stage
        # answers this representation 304, and its body is never built.
        if names_tag(ex, tag):
            return Representation(b"", headers, tag)
        kept = self.answers.get(key)
        if kept is not None:
            if not worth_gzip(kept, gz):
                return Representation(kept, headers, tag)
            zipped = self.answers.get(key + _GZIP)
            if zipped is not None:
                return Representation(zipped, with_encoding(headers, True), tag)
        expensive = request.collection in EXPENSIVE
        pool = (self.keyless_work if ex.keyless else self.work) if expensive else self.io
        return _Build(key, pool, lambda: released(b"".join(answer(store, place, request))),
                      headers, tag, gz)  # fmt: skip

    async def finish(self, ex: Exchange, later: Later) -> Representation:
        """Build the answer once, however many requests ask for it meanwhile; compress it
        once for the clients that accept gzip."""
        todo: Any = later
        body = await self._built(todo.key, todo.pool, lambda: guarded(ex, todo.build))
        if not worth_gzip(body, todo.gzip):
            return Representation(body, todo.headers, todo.tag)
        zipped = await self._built(todo.key + _GZIP, todo.pool, lambda: compress(body))
        return Representation(zipped, with_encoding(todo.headers, True), todo.tag)

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
        self.builds += not tag.endswith(_GZIP)  # answers built, not their compressions
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


def _screen(ex: Exchange) -> None:
    """The path names a CASE collection (404 before anything else)."""
    ex.parsed = _request(ex.path)


def _prepare(ex: Exchange) -> int:
    read = _read_of(ex)
    request = read.request
    query = query_of(ex.scope)
    ex.parsed = CaseRead(read.version, CaseRequest(request.collection, request.sourced_id, query))
    return SEARCH_COST if request.collection in EXPENSIVE else 1


def _refuse(exc: ApiError, ex: Exchange) -> Answer:
    """A refusal as an `imsx_StatusInfo` body of the path's CASE version."""
    version = "v1p1" if "/v1p0/" not in ex.path else "v1p0"
    if not isinstance(exc, CaseError):
        minor = _MINOR.get(exc.status, "invalid_selection_field")
        status = 429 if isinstance(exc, Busy | RateLimitError) else exc.status
        if isinstance(exc, Busy):
            minor = "server_busy"
        exc = CaseError(status, minor, exc.message)
    return exc.status, status_info(exc.minor, exc.description, version), [JSON]


_MINOR = {401: "unauthorised_request", 404: "unknownobject", 405: "forbidden",
          429: "server_busy", 503: "server_busy"}  # fmt: skip
_GZIP = b":gzip"  # the key of an answer's gzip body, beside its own
