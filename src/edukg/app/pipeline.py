"""The one request pipeline: every entrance's requests pass the same stages, in order.

    request id and clock -> release prefix off the path -> route ->
    admission (on a network thread when PostgreSQL or Redis is used):
        size limits -> entrance's screen -> method -> key -> release pin ->
        entrance's prepare (cost) -> rate limit
    -> [a POST's body, once the key is good and the work pool has room for its work
        -> its price, the rest charged] ->
        answer (response cache, handler) -> key confirmation
    -> [finish: expensive work, a body, a mounted app]
    -> the response stage (app/respond.py): the conditional GET, Cache-Control, Vary,
       compression, the request's headers, the access record; then send

Each stage is a small method over the request's `Exchange`; entrances (app/entrance.py)
declare which checks apply to them and how their refusals are written. Database trouble
becomes a 503 and anything unforeseen a 500, the same for every entrance.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Any, TypeVar

from edukg.app.access import Access
from edukg.app.body import closes_connection, read_body
from edukg.app.entrance import Entrance, KeyRule, Later, Reply, method_headers
from edukg.app.exchange import Exchange, Receive, Scope, Send, read_head
from edukg.app.pinning import pin, unpinned
from edukg.app.requests import check_sizes
from edukg.app.respond import Responder
from edukg.app.routing import Router
from edukg.app.watch import Watch
from edukg.app.workpool import RETRY_AFTER, Busy, WorkPool
from edukg.model.errors import (
    ApiError,
    MethodNotAllowedError,
    RateLimitError,
    ServiceUnavailableError,
    new_request_id,
)
from edukg.store.base import Releases, StatementTimeout, StoreUnavailable
from edukg.store.errors import REQUEST_DEADLINE, KeyCheckTimeout

log = logging.getLogger("edukg")
T = TypeVar("T")


class Pipeline:
    """Runs every request through the stages, for one app's parts."""

    def __init__(
        self,
        router: Router,
        access: Access,
        releases: Releases,
        io: WorkPool | None,
        respond: Responder,
        fallback: Entrance,
        limit: float | None = None,
        watch: Watch | None = None,
    ) -> None:
        self.router = router
        # One request's limit for its reads on a networked database (--statement-seconds)
        self.limit = limit if io is not None else None
        self.access = access
        self.releases = releases
        self.io = io  # None: everything waits on local files, so stages run inline
        self.respond = respond  # the response stage, which every answer leaves through
        self.metrics = respond.metrics
        self.fallback = fallback  # what refuses a request before it is routed
        self.watch = watch  # looks at local files ahead of the requests (app/watch.py)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if self.watch is not None:
            self.watch.noticed()
        plain, by_path = unpinned(scope)
        head, size = read_head(scope["headers"])
        ex = Exchange(plain, receive, send, new_request_id(), time.perf_counter(), head, size)
        if self.limit is not None:
            ex.deadline = time.monotonic() + self.limit
        ex.release_by_path = by_path
        ex.asks_for_release = by_path is not None or b"x-data-version" in head
        entrance = self.fallback
        body_pending = False
        answer: Reply | Later | None
        try:
            found = ex.found = self.router.find(ex.path)
            entrance = found.entrance
            body_pending = entrance.takes_body and ex.method == "POST"
            if body_pending:
                confirm = await self.off_loop(ex, self._admit, ex, entrance)
                ex.body = await _body(ex, entrance)
                body_pending = False
                answer = await self.off_loop(ex, self._answer, ex, entrance, confirm)
            elif self.io is None:  # local files: inline, without a coroutine of its own
                answer = guarded(ex, self._admit_and_answer, ex, entrance)
            else:  # one hop to a network thread, not two
                answer = await self.off_loop(ex, self._admit_and_answer, ex, entrance)
            if isinstance(answer, Later):
                finish = entrance.finish
                assert finish is not None, entrance.name
                answer = await finish(ex, answer)
        except ApiError as exc:
            if isinstance(exc, RateLimitError):
                self.metrics.event("rate_limited")
            refuser = entrance
            if isinstance(exc, _ByFallback):
                refuser, exc = self.fallback, exc.refused
            answer = refuser.refuse(exc, ex)
            _refusal_headers(exc, ex, body_pending)
        if answer is not None:
            assert not isinstance(answer, Later)
            await self.respond.send(ex, send, answer, entrance.policy)

    def _admit(self, ex: Exchange, entrance: Entrance) -> bool:
        """The stages before any body is read; whether the key is still to be confirmed
        after the reads."""
        check_sizes(ex.scope, ex.head_bytes)
        if entrance.screen is not None:
            entrance.screen(ex)
        if ex.method not in entrance.methods:
            ex.headers.extend(method_headers(entrance))
            raise MethodNotAllowedError(entrance.method_refusal.format(method=ex.method))
        confirm = self._key(ex, entrance)
        if ex.principal is not None and ex.asks_for_release:
            try:
                ex.store = pin(ex.scope, ex.release_by_path, self.releases)
            except ApiError as exc:  # refused alike on every entrance
                raise _ByFallback(exc) from None
        if entrance.prepare is not None:
            try:
                ex.cost = entrance.prepare(ex)
            except ApiError:
                self._limit(ex, entrance)  # a bad request costs a token too
                raise
        self._limit(ex, entrance)
        return confirm

    def _admit_and_answer(self, ex: Exchange, entrance: Entrance) -> Reply | Later:
        """Both, for a request without a body."""
        return self._answer(ex, entrance, self._admit(ex, entrance))

    def _answer(self, ex: Exchange, entrance: Entrance, confirm: bool) -> Reply | Later:
        """The price of what a body asks for (the rest of it charged), then the entrance's
        own answer, then the key's confirmation."""
        if entrance.price is not None and ex.method == "POST":
            charged = ex.cost  # a bad body costs no more than that first charge
            ex.cost = entrance.price(ex)
            if ex.cost > charged:
                self._limit(ex, entrance, ex.cost - charged)
        answer = entrance.answer(ex)
        if confirm:  # after the reads, which may have brought the key store's revision
            self.access.confirm()
        return answer

    def _key(self, ex: Exchange, entrance: Entrance) -> bool:
        """The key stage; whether the key is still to be confirmed after the reads."""
        rule = entrance.key
        if rule is KeyRule.OPTIONAL:
            if entrance.wants_key or ex.asks_for_release:
                ex.principal = self.access.known_key(ex.head)
            return False
        if rule is KeyRule.CASE and self.access.keyless_allowed(ex.head):
            ex.keyless = True
            return False
        ex.principal = self.access.authenticate(ex.head)
        return True

    def _limit(self, ex: Exchange, entrance: Entrance, cost: int | None = None) -> None:
        if not entrance.limited:
            return
        tokens = ex.cost if cost is None else cost
        if ex.keyless:
            self.access.limit_keyless(ex.scope, ex.headers, tokens)
        elif ex.principal is not None:
            self.access.limit(ex.principal, ex.headers, tokens)

    async def off_loop(self, ex: Exchange, stage: Callable[..., T], *args: Any) -> T:
        """Run a synchronous stage: inline on SQLite (microseconds), on a network thread
        when it may wait on PostgreSQL or Redis."""
        if self.io is None:
            return guarded(ex, stage, *args)
        return await self.io.run(lambda: guarded(ex, stage, *args))


async def _body(ex: Exchange, entrance: Entrance) -> bytes:
    """A POST's body, read only now: a request without a good key, or whose work its key
    may not run now (the entrance's `room`, asked on the loop, where the work pool
    lives), never holds a connection while its body drips in, nor has it parsed
    (docs/security.md)."""
    if entrance.room is not None:
        entrance.room(ex)
    return await read_body(ex.head, ex.receive)


class _ByFallback(ApiError):
    """A refusal that every entrance writes alike (the fallback's), whatever the path:
    a pinned release that cannot answer."""

    def __init__(self, error: ApiError) -> None:
        super().__init__(error.message)
        self.refused = error


def guarded(ex: Exchange, stage: Callable[..., T], *args: Any) -> T:
    """Run `stage` (within the request's deadline, where it has one); an unreachable
    database is a 503, anything unforeseen a 500."""
    token = REQUEST_DEADLINE.set(ex.deadline) if ex.deadline is not None else None
    try:
        return stage(*args)
    except ApiError:
        raise
    except KeyCheckTimeout as exc:
        ex.database_error = True
        log.warning("request %s: %s", ex.request_id, exc)
        raise ServiceUnavailableError(
            f"The API key could not be checked: {exc} (is its table locked by another"
            " session?). Keys already checked are still served. Try again shortly."
        ) from None
    except StatementTimeout as exc:
        ex.database_error = True
        log.warning("request %s: %s", ex.request_id, exc)
        raise ServiceUnavailableError(
            f"The request took too long to answer ({exc}). Narrow it, or try again shortly."
        ) from None
    except StoreUnavailable as exc:
        ex.database_error = True
        log.warning("request %s: database unavailable: %s", ex.request_id, exc)
        raise ServiceUnavailableError(
            "The database cannot be reached right now. Try again shortly."
        ) from None
    except Exception:
        log.exception("request %s failed: %s %s", ex.request_id, ex.method, ex.path)
        raise ApiError(
            "An unexpected error occurred. Quote the request id when reporting it."
        ) from None
    finally:
        if token is not None:
            REQUEST_DEADLINE.reset(token)


def _refusal_headers(exc: ApiError, ex: Exchange, body_unread: bool) -> None:
    """The headers a kind of refusal carries; a request whose body was never read is
    answered on a connection that closes (the body would be read as the next request)."""
    retry = RETRY_AFTER if isinstance(exc, Busy) else getattr(exc, "retry_after", None)
    if retry is not None and not any(name == b"retry-after" for name, _ in ex.headers):
        ex.headers.append((b"retry-after", str(retry).encode()))
    if closes_connection(exc) or body_unread:  # the rest of the body is not read
        ex.headers.append((b"connection", b"close"))
