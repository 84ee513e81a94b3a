"""The MCP endpoint's HTTP side: the REST API's size limits, keys, rate limits and access
log, then the SDK's stateless transport, with the pinned release's store for its tools."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any
from urllib.parse import urlsplit

from edukg.adapters.mcp import REQUEST_STORE
from edukg.app.body import closes_connection, read_body
from edukg.app.pinning import STORE_KEY
from edukg.app.requests import MCP_COST, check_sizes, error_answer
from edukg.app.workpool import RETRY_AFTER, Busy
from edukg.model.errors import ApiError, ForbiddenError, MethodNotAllowedError

MCP_PATH = "/mcp"
Scope = dict[str, Any]
Headers = list[tuple[bytes, bytes]]
Send = Callable[[dict[str, Any]], Awaitable[None]]


class McpEndpoint:
    """Answers `/mcp` for one app (its keys, limits, pools and MCP server)."""

    def __init__(self, app: Any, mcp_app: Any) -> None:
        self.app = app
        self._mcp_app = mcp_app

    async def __call__(
        self,
        scope: Scope,
        receive: Any,
        send: Send,
        request: tuple[str, float, Headers, list[str]],
    ) -> None:
        app = self.app
        request_id, started, extra, who = request
        try:
            if app.io is None:
                app._guarded(request_id, scope, self._admit, scope, extra, who)
            else:
                await app.io.run(
                    lambda: app._guarded(request_id, scope, self._admit, scope, extra, who)
                )
        except ApiError as exc:
            await app._send(send, scope, error_answer(exc, request_id), request)
            return

        async def logged_send(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.start":
                message["headers"] = [*message.get("headers", []), *extra,
                                      (b"x-request-id", request_id.encode())]  # fmt: skip
                app._log(scope, request_id, who, message["status"], started)
            await send(message)

        try:
            body = await read_body(scope, receive)
        except ApiError as exc:
            if closes_connection(exc):
                extra.append((b"connection", b"close"))
            await app._send(send, scope, error_answer(exc, request_id), request)
            return
        pinned = REQUEST_STORE.set(scope.get(STORE_KEY))
        try:
            async with app.work.slot():  # tool calls are expensive work too
                await self._mcp_app(scope, _replay(body, receive), logged_send)
        except Busy as exc:
            extra.append((b"retry-after", str(RETRY_AFTER).encode()))
            await app._send(send, scope, error_answer(exc, request_id), request)
        finally:
            REQUEST_STORE.reset(pinned)

    def _admit(self, scope: Scope, extra: Headers, who: list[str]) -> None:
        check_sizes(scope)
        if scope["method"] != "POST":
            # Stateless streamable HTTP: no server-sent stream to open (GET) and no
            # session to end (DELETE); answering at once keeps probing clients and
            # idle connections from hanging (MCP transport specification).
            extra.append((b"allow", b"POST"))
            raise MethodNotAllowedError(
                f"{scope['method']} is not allowed at {MCP_PATH}: this stateless MCP "
                "server takes JSON-RPC messages by POST only."
            )
        _check_origin(scope, self.app.settings)
        access = self.app.access
        principal = access.authenticate(scope)
        access.confirm()
        who.append(principal.name)
        access.limit(principal, extra, MCP_COST)


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


def _check_origin(scope: Scope, settings: Any) -> None:
    """A browser's Origin must be loopback, the public URL's own or an allowed one (the
    MCP transport's defence against DNS rebinding); requests without one (programs, not
    pages) pass."""
    origin = next((v for k, v in scope["headers"] if k == b"origin"), None)
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
