"""The MCP entrance: `/mcp` through the pipeline (size limits, the browser origin, keys,
rate limits, the access log), then the SDK's stateless transport, with the pinned
release's store for its tools."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any
from urllib.parse import urlsplit

import orjson

from edukg.adapters.config import Settings
from edukg.adapters.mcp import REQUEST_STORE
from edukg.app.body import declared_length
from edukg.app.entrance import Entrance, Later
from edukg.app.exchange import Exchange
from edukg.app.http import JSON, Answer
from edukg.app.requests import HOUSEKEEPING_COST, mcp_cost
from edukg.app.respond import Responder
from edukg.app.workpool import WorkPool
from edukg.model.errors import ApiError, ForbiddenError, error_response

MCP_PATH = "/mcp"
_LATER = Later()
# Bodies up to this size are read before the work pool is asked (`_room`): a session's
# housekeeping, which the pool does not run, fits many times over, and a small body is
# parsed in microseconds.
_SMALL_BODY = 4096


class McpAnswers:
    """Answers `/mcp` for one app (its pools and MCP server)."""

    def __init__(
        self,
        settings: Settings,
        mcp_app: Any,
        work: WorkPool,
        respond: Responder,
    ) -> None:
        self.settings = settings
        self._mcp_app = mcp_app
        self.work = work
        self._respond = respond  # the SDK answers: the response stage records it
        self.entrance = Entrance(
            "mcp", lambda _ex: _LATER, screen=self._screen,
            prepare=lambda _ex: HOUSEKEEPING_COST, finish=self.finish,
            methods=frozenset(("POST",)), allow=b"POST", takes_body=True,
            price=lambda ex: mcp_cost(ex.body), room=self._room,
            # Stateless streamable HTTP: no server-sent stream to open (GET) and no
            # session to end (DELETE); answering at once keeps probing clients and idle
            # connections from hanging (MCP transport specification).
            method_refusal=f"{{method}} is not allowed at {MCP_PATH}: this stateless MCP"
            " server takes JSON-RPC messages by POST only.", refuse=mcp_refusal,
        )  # fmt: skip

    def _screen(self, ex: Exchange) -> None:
        if ex.method == "POST":
            _check_origin(ex.head.get(b"origin"), self.settings)

    def _room(self, ex: Exchange) -> None:
        """Refuse, before a large body is read, what its key's share of the work pool
        has no room for (a small one may be housekeeping, which takes no share)."""
        length = declared_length(ex.head)
        if ex.owner is not None and (length is None or length > _SMALL_BODY):
            self.work.room(ex.owner)

    async def finish(self, ex: Exchange, _later: Later) -> Answer | None:
        """Hand the request (its body read by the pipeline) to the SDK, a tool call on a
        work-pool slot of its key's share (dropped should its client go while it waits);
        None: the SDK has sent the answer (through the response stage's `passing`: the
        request's headers and its record)."""
        replayed = _replay(ex.body, ex.receive)
        logged_send = self._respond.passing(ex)
        pinned = REQUEST_STORE.set(ex.store)
        try:
            if ex.cost <= HOUSEKEEPING_COST:  # a session's housekeeping: answered at once
                await self._mcp_app(ex.scope, replayed, logged_send)
            else:
                async with self.work.slot(ex.owner, ex.gone):  # expensive work
                    await self._mcp_app(ex.scope, replayed, logged_send)
        finally:
            REQUEST_STORE.reset(pinned)
        return None


def _replay(body: bytes, receive: Any) -> Callable[[], Awaitable[dict[str, Any]]]:
    """A receive that gives the body read already, then what the connection says next."""
    sent = False

    async def replayed() -> dict[str, Any]:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        message: dict[str, Any] = await receive()
        return message

    return replayed


_LOOPBACK = frozenset(["localhost", "127.0.0.1", "[::1]"])


def _check_origin(origin: bytes | None, settings: Any) -> None:
    """A browser's Origin must be loopback, the public URL's own or an allowed one (the
    MCP transport's defence against DNS rebinding); requests without one (programs, not
    pages) pass."""
    if origin is None:
        return
    text = origin.decode("latin-1").strip().rstrip("/").lower()
    parsed = urlsplit(text)
    host = parsed.hostname or ""
    host = f"[{host}]" if ":" in host else host
    allowed = {_origin_of(settings.public_url), *map(_origin_of, settings.allowed_origins)}
    if parsed.scheme in ("http", "https") and (host in _LOOPBACK or _origin_of(text) in allowed):
        return
    raise ForbiddenError(
        f"Origin {text[:100]!r} may not call {MCP_PATH}: browser pages are answered only from"
        " loopback, the server's public URL or an origin allowed with --allowed-origin."
    )


def _origin_of(url: str) -> str:
    """scheme://host[:port] of a URL, lower-cased."""
    parts = urlsplit(url.strip().lower())
    return f"{parts.scheme}://{parts.netloc}"


# The JSON-RPC code of a refusal before any tool runs: the implementation-defined server
# error range (-32000 to -32099), as MCP clients show it.
REFUSED = -32001


def mcp_refusal(exc: ApiError, ex: Exchange) -> Answer:
    """A refusal of /mcp (a wrong key, a rate limit, a body too large...) as a JSON-RPC
    error, with the same status: MCP clients show a JSON-RPC error's message (the SDK
    reads a non-2xx body only when it is one; an Error-shaped body showed as "Server
    returned an error response"). The API's Error fields are in `error.data`."""
    status, body = error_response(exc, ex.request_id)
    message_id = _message_id(ex.body)
    reply = {"jsonrpc": "2.0", "id": message_id,
             "error": {"code": REFUSED, "message": exc.message, "data": orjson.loads(body)}}  # fmt: skip
    return status, orjson.dumps(reply), [JSON]


def _message_id(body: bytes) -> Any:
    """The id of the JSON-RPC request refused, where its body was read and has one."""
    if not body:
        return None
    try:
        message = orjson.loads(body)
    except orjson.JSONDecodeError:
        return None
    found = message.get("id") if isinstance(message, dict) else None
    return found if isinstance(found, str | int) and not isinstance(found, bool) else None
