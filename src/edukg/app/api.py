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
from edukg.adapters.rest.base import ALIGNMENT, RANKING, RELEASES, Operation
from edukg.app import etags
from edukg.app.body import require_json
from edukg.app.compression import encoded, tag_encoding, wants_gzip, with_encoding
from edukg.app.entrance import Entrance
from edukg.app.exchange import Exchange
from edukg.app.http import JSON, Representation
from edukg.app.pending import Parsed, Pending, check_parsable
from edukg.app.pipeline import guarded
from edukg.app.requests import query_of, request_cost
from edukg.app.respond import Policy
from edukg.app.response_cache import ResponseCache
from edukg.app.workpool import WorkPool
from edukg.model.errors import NotFoundError
from edukg.model.lru import Recent
from edukg.services import graph as service
from edukg.services import search as searching
from edukg.services.alignment import version as alignment_version
from edukg.services.changes import ChangeFeed
from edukg.store.base import KeyStore, Releases, Store

_RECENT_URLS = 4096  # validated URLs remembered per worker
_VARY = b"Accept-Encoding, X-Data-Version"


def _operation_of(ex: Exchange) -> Operation[Any]:
    found = ex.found
    assert found is not None and found.operation is not None  # routed to an operation
    return found.operation


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
        self._recent: Recent[tuple[bytes, bytes], tuple[Parsed, int]] = Recent(_RECENT_URLS)
        # Private: responses sit behind a key, so shared caches must not keep them.
        policy = Policy.private(cache_max_age, _VARY)
        self.reads = Entrance("api", self.answer, prepare=self.prepare, finish=self.finish,
                              method_refusal="{method} is not allowed: this API is read-only.",
                              policy=policy)  # fmt: skip
        self.posts = Entrance(
            "api-body", self.answer, prepare=self.prepare, finish=self.finish,
            methods=frozenset(("POST",)), allow=b"POST", takes_body=True, price=self.price,
            room=self.room,
            method_refusal="{method} is not allowed here: send the JSON body by POST.",
            policy=policy,
        )  # fmt: skip
        self.missing = Entrance("api-missing", _missing, prepare=_nothing,
                                method_refusal=self.reads.method_refusal)  # fmt: skip

    def entrance_of(self, op: Operation[Any]) -> Entrance:
        """The entrance of an operation: a read, or a POST with a body."""
        return self.posts if op.takes_body else self.reads

    def prepare(self, ex: Exchange) -> int:
        """The request's validated parameters and its cost; for an operation with a body,
        what the head says (JSON, or 415) and its cost before the body (`price`)."""
        op = _operation_of(ex)
        if op.takes_body:
            require_json(ex.head)
            return op.cost
        ex.parsed, cost = self._parsed(op, ex)
        return cost

    def room(self, ex: Exchange) -> None:
        """Refuse, before its body is read, a text its key's share of the work pool has
        no room for (an answer the cache holds is refused too: the key already holds
        all it may)."""
        if ex.owner is not None:
            self.work.room(ex.owner)

    def price(self, ex: Exchange) -> int:
        """A body's validated values; the request's whole cost."""
        op = _operation_of(ex)
        values = parse_body(op.declared, ex.body)
        ex.parsed = Parsed.of(op, values, instance(op.params, values))
        return request_cost(op, values)

    def answer(self, ex: Exchange) -> Representation | Pending:
        """The response from the cache, built here when cheap, or what building it takes
        (`finish`, on the work pool)."""
        parsed = ex.parsed
        assert isinstance(parsed, Parsed)  # prepare or price made it
        op = parsed.op
        store = ex.store or self.store
        info = service.loaded(store)
        gz = wants_gzip(ex.head.get(b"accept-encoding"))
        varies = self._varies(op, store)
        # Keyed by what the handler reads, so parameters it ignores make no new entry.
        key = (info.content_id, info.data_version, varies, op.operation_id, parsed.digest, gz)
        kept = self.responses.get(key)
        if kept is not None:
            return kept
        secret = self.keys.derived_secret(b"cursor")  # so every node signs alike
        # What the tag names: two releases of the same content still answer with their
        # own X-Data-Version.
        version = f"{info.data_version}/{info.content_id}{varies}"
        pending = Pending(parsed, ex, store, info, version, key, gz, secret)
        if ex.cost == 1:  # cheap: right here
            return self._complete(pending, self._build(pending))
        return pending

    async def finish(self, ex: Exchange, later: Any) -> Representation:
        """Build an expensive answer on the work pool (not once its client has gone)."""
        pending: Pending = later
        built = await self.work.run(lambda: guarded(ex, self._build, pending), ex.owner,
                                    ex.gone)  # fmt: skip
        return self._complete(pending, built)

    def _varies(self, op: Operation[Any], store: Store) -> str:
        """What else than the data and the values the answer varies with."""
        if not op.varies:  # most operations: nothing
            return ""
        varies = ""
        if RANKING in op.varies:  # the same data answers differently once indexed
            varies += ":" + searching.search_ranking(store)
        if ALIGNMENT in op.varies:  # scores change with the alignment engine's version
            varies += ":" + alignment_version()
        if RELEASES in op.varies:  # answers change with the kept releases
            varies += ":" + self.releases.stamp()
        return varies

    def _parsed(self, op: Operation[Any], ex: Exchange) -> tuple[Parsed, int]:
        """Validated values, by name, as the operation's parameter object and as the
        digest of their canonical form (what the response cache knows them by), and the
        request's cost; remembered for recent URLs (a few thousand, oldest out): repeated
        requests, the common case, skip re-validating the same bytes."""
        scope = ex.scope
        key = (scope.get("raw_path") or ex.path.encode(), scope.get("query_string", b""))
        known = self._recent.get(key)
        if known is not None:
            return known
        assert ex.found is not None
        values = parse_values(op.declared, query_of(scope), ex.found.values or {})
        parsed = Parsed.of(op, values, instance(op.params, values))
        known = (parsed, request_cost(op, values))
        self._recent.put(key, known)
        return known

    def _build(self, p: Pending) -> Representation:
        """Run the handler and encode its answer (safe on a worker thread: no shared state
        but the store, which is)."""
        op, values = p.parsed.op, p.parsed.values
        call = Call(op.operation_id, p.parsed.params, values, p.store, p.info, p.secret,
                    self.releases, self.changes)  # fmt: skip
        body = op.handler(call)
        verdict = p.store.integrity()
        if verdict == "checking" or verdict.startswith("damaged"):  # else: the file is sound
            check_parsable(body, p)
        # Small bodies go as they are, under the tag of that representation.
        body, gzipped = encoded(body, p.gz)
        tag = etags.etag(p.version, op.operation_id, p.parsed.canonical, tag_encoding(gzipped))
        headers = [JSON, (b"x-data-version", p.info.data_version.encode()), (b"etag", tag)]
        return Representation(body, with_encoding(headers, gzipped), tag)

    def _complete(self, p: Pending, built: Representation) -> Representation:
        self.responses.put(p.key, built)
        return built


def _nothing(ex: Exchange) -> int:
    raise NotFoundError(f"No operation at {ex.path}. See /openapi.json for the API.")


def _missing(ex: Exchange) -> Representation:  # never reached: `_nothing` refuses first
    raise NotFoundError(f"No operation at {ex.path}.")
