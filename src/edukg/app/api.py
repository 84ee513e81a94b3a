"""The API's operations behind the pipeline: parameters, the response cache, the handler.

A repeated request costs a dictionary lookup for its validated parameters and one for
its finished response: the response cache is keyed by what the answer depends on (the
release, the ranking or kept releases where the operation varies with them, the
operation and its validated values in canonical form, made once per URL), and the ETag
was computed once, when the entry was made.
"""

from __future__ import annotations

from typing import Any

from edukg.adapters.params import instance, parse_body, parse_values
from edukg.adapters.rest import Call
from edukg.adapters.rest.base import RANKING, RELEASES, Operation
from edukg.app import caching
from edukg.app.body import require_json
from edukg.app.entrance import Entrance
from edukg.app.exchange import Answer, Exchange, Headers
from edukg.app.pending import Pending, check_parsable
from edukg.app.pipeline import guarded
from edukg.app.requests import query_of, request_cost
from edukg.app.responses import ResponseCache
from edukg.app.workpool import WorkPool
from edukg.model.errors import NotFoundError
from edukg.model.lru import Recent
from edukg.services import graph as service
from edukg.services import search as searching
from edukg.services.changes import ChangeFeed
from edukg.store.base import KeyStore, Releases, Store

_JSON = (b"content-type", b"application/json")
_NOT_IN_304 = frozenset((b"content-type", b"content-encoding"))
_RECENT_URLS = 4096  # validated URLs remembered per worker
_VARY = (b"vary", b"Accept-Encoding, X-Data-Version")


class ApiAnswers:
    """Answers the API's operations for one app."""

    def __init__(
        self,
        store: Store,
        releases: Releases,
        changes: ChangeFeed,
        keys: KeyStore,
        responses: ResponseCache,
        work: WorkPool,
        cache_max_age: int,
    ) -> None:
        self.store = store
        self.releases = releases
        self.changes = changes
        self.keys = keys
        self.responses = responses
        self.work = work
        # Private: responses sit behind a key, so shared caches must not keep them.
        self._cache_control = (b"cache-control", f"private, max-age={cache_max_age}".encode())
        self._recent: Recent[tuple[bytes, bytes], tuple[dict[str, Any], Any, bytes, int]] = Recent(
            _RECENT_URLS
        )
        self.reads = Entrance("api", self.answer, prepare=self.prepare, finish=self.finish,
                              method_refusal="{method} is not allowed: this API is read-only.")  # fmt: skip
        self.posts = Entrance(
            "api-body", self.answer, prepare=self.prepare, finish=self.finish,
            methods=frozenset(("POST",)), allow=b"POST", takes_body=True, price=self.price,
            method_refusal="{method} is not allowed here: send the JSON body by POST.",
        )  # fmt: skip
        self.missing = Entrance("api-missing", _missing, prepare=_nothing,
                                method_refusal=self.reads.method_refusal)  # fmt: skip

    def entrance_of(self, op: Operation[Any]) -> Entrance:
        """The entrance of an operation: a read, or a POST with a body."""
        return self.posts if op.takes_body else self.reads

    def prepare(self, ex: Exchange) -> int:
        """The request's validated parameters and its cost; for an operation with a body,
        what the head says (JSON, or 415) and its cost before the body (`price`)."""
        op: Operation[Any] = ex.found.operation
        if op.takes_body:
            require_json(ex.head)
            return op.cost
        values, params, digest, cost = self._parsed(op, ex)
        ex.parsed = (op, values, params, digest)
        return cost

    def price(self, ex: Exchange) -> int:
        """A body's validated values; the request's whole cost."""
        op: Operation[Any] = ex.found.operation
        values = parse_body(op.declared, ex.body)
        ex.parsed = (op, values, instance(op.params, values), caching.digest(values))
        return request_cost(op, values)

    def answer(self, ex: Exchange) -> Answer | Pending:
        """The response from the cache, built here when cheap, or what building it takes
        (`finish`, on the work pool)."""
        op, values, params, canon = ex.parsed
        store = ex.store or self.store
        info = service.loaded(store)
        gz = caching.wants_gzip(ex.head.get(b"accept-encoding"))
        varies = self._varies(op, store)
        # Keyed by what the handler reads, so parameters it ignores make no new entry.
        key = (info.content_id, info.data_version, varies, op.operation_id, canon, gz)
        kept = self.responses.get(key)
        if kept is not None:
            return _conditional(ex, kept.body, kept.headers, kept.tag)
        secret = self.keys.derived_secret(b"cursor")  # so every node signs alike
        # What the tag names: two releases of the same content still answer with their
        # own X-Data-Version.
        version = f"{info.data_version}/{info.content_id}{varies}"
        pending = Pending(op, values, params, canon, ex, store, info, version, key, gz, secret)
        if ex.cost == 1:  # cheap: right here
            return self._complete(pending, *self._build(pending))
        return pending

    async def finish(self, ex: Exchange, later: Any) -> Answer:
        """Build an expensive answer on the work pool."""
        pending: Pending = later
        built = await self.work.run(lambda: guarded(ex, self._build, pending), ex.owner)
        return self._complete(pending, *built)

    def _varies(self, op: Operation[Any], store: Store) -> str:
        """What else than the data and the values the answer varies with."""
        varies = ""
        if RANKING in op.varies:  # the same data answers differently once indexed
            varies += ":" + searching.search_ranking(store)
        if RELEASES in op.varies:  # answers change with the kept releases
            varies += ":" + self.releases.stamp()
        return varies

    def _parsed(self, op: Operation[Any], ex: Exchange) -> tuple[dict[str, Any], Any, bytes, int]:
        """Validated values, by name, as the operation's parameter object and as the
        digest of their canonical form (what the response cache knows them by), and the
        request's cost; remembered for recent URLs (a few thousand, oldest out): repeated
        requests, the common case, skip re-validating the same bytes."""
        scope = ex.scope
        key = (scope.get("raw_path") or ex.path.encode(), scope.get("query_string", b""))
        known = self._recent.get(key)
        if known is not None:
            return known
        values = parse_values(op.declared, query_of(scope), ex.found.values or {})
        parsed = (values, instance(op.params, values), caching.digest(values),
                  request_cost(op, values))  # fmt: skip
        self._recent.put(key, parsed)
        return parsed

    def _build(self, p: Pending) -> tuple[bytes, Headers, bytes]:
        """Run the handler and encode its answer (safe on a worker thread: no shared state
        but the store, which is)."""
        call = Call(p.op.operation_id, p.params, p.values, p.store, p.info, p.secret,
                    self.releases, self.changes)  # fmt: skip
        body = p.op.handler(call)
        verdict = p.store.integrity()
        if verdict == "checking" or verdict.startswith("damaged"):  # else: the file is sound
            check_parsable(body, p)
        gzipped = p.gz and len(body) >= caching.GZIP_MIN_BYTES
        # Small bodies go as they are, under the tag of that representation.
        encoding = caching.GZIP_TAG if gzipped else b"identity"
        tag = caching.etag(p.version, p.op.operation_id, caching.canonical(p.values), encoding)
        headers = [_JSON, (b"x-data-version", p.info.data_version.encode()), (b"etag", tag),
                   self._cache_control, _VARY]  # fmt: skip
        if gzipped:
            body = caching.compress(body)
            headers.append((b"content-encoding", b"gzip"))
        return body, headers, tag

    def _complete(self, p: Pending, body: bytes, headers: Headers, tag: bytes) -> Answer:
        self.responses.put(p.key, body, headers, tag)
        return _conditional(p.ex, body, headers, tag)


def _conditional(ex: Exchange, body: bytes, headers: Headers, tag: bytes) -> Answer:
    """Only a 200 may become a 304, when If-None-Match names its tag."""
    condition = ex.head.get(b"if-none-match") if ex.method != "POST" else None
    if condition is not None and caching.matches(condition, tag):
        return 304, b"", [h for h in headers if h[0] not in _NOT_IN_304]
    return 200, body, headers


def _nothing(ex: Exchange) -> int:
    raise NotFoundError(f"No operation at {ex.path}. See /openapi.json for the API.")


def _missing(ex: Exchange) -> Answer:  # never reached: `_nothing` refuses first
    raise NotFoundError(f"No operation at {ex.path}.")
