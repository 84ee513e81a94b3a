"""The HTTP server: uvicorn with httptools, guarded where a client could exhaust a worker.

uvicorn's httptools protocol keeps a request's URL and headers until the head is
complete, however long it grows, and waits for ever on a connection that never sends
one. The guarded protocol counts the head's bytes as they arrive and answers 414 or
431 (in the API's Error shape) as soon as a limit is passed, closes connections that
send no complete head within a timeout, and beyond a per-worker cap closes the
connections that have waited longest for their client (idle, or on an unfinished head), so that neither memory nor file descriptors depend on what a client sends.
Limits and reasons: docs/security.md.
"""

from __future__ import annotations

import asyncio
import contextlib
import heapq
import logging
import resource
import socket
import time
from dataclasses import dataclass
from typing import Any

import httptools
import uvicorn
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol
from uvicorn.supervisors import Multiprocess

from edukg.adapters.config import Settings, default_of
from edukg.model.errors import (
    HeadersTooLargeError,
    URITooLongError,
    ValidationError,
    error_response,
    new_request_id,
)

MAX_URL_BYTES = 8192  # path plus query string; no legitimate request comes near it
MAX_HEADER_BYTES = 16384  # all request headers together
# Everything before the body, as raw bytes, whatever the parser has made of it so far.
MAX_HEAD_BYTES = MAX_URL_BYTES + MAX_HEADER_BYTES + 1024
_DRAIN_SECONDS = 1.0  # after a refusal, read and drop what the client still sends
_DRAIN_BYTES = 1 << 20

log = logging.getLogger("edukg.adapters.server")


@dataclass(frozen=True)
class ServerLimits:
    """Per-worker connection limits (flags of `edukg serve`, passed to workers by env)."""

    header_timeout: float = default_of("header_timeout")  # seconds to send a whole head
    max_connections: int = default_of("max_connections")  # open connections per worker

    @classmethod
    def from_env(cls) -> ServerLimits:
        """The limits `edukg serve` set in the environment for its workers."""
        settings = Settings.from_env()
        return cls(settings.header_timeout, settings.max_connections)


class _Refused(Exception):
    """Raised inside a parser callback to stop parsing a head that is over a limit."""


class GuardedHttpToolsProtocol(HttpToolsProtocol):
    """uvicorn's httptools protocol with head limits, a head timeout and a connection cap."""

    limits = ServerLimits.from_env()

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._opened = time.monotonic()
        self._in_head = True  # no complete head yet for the current request
        self._line_done = False  # the request line has ended (seen a newline)
        self._head_bytes = 0
        self._url_bytes = 0
        self._header_bytes = 0
        self._refusal: tuple[int, bytes, bytes] | None = None
        self._draining = -1  # bytes dropped since a refusal; -1 when not draining
        self._head_since = 0.0  # when the current head began (loop time)
        self._tail = b""  # the last bytes of the head so far (its end may span two reads)
        self._one_write: _OneWrite | None = None  # what the connection's answers write to
        self._idle_since = 0.0  # when its last answer left (loop time); 0: none yet

    # Connections
    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        if len(self.connections) > self.limits.max_connections:
            self._shed()
        if not transport.is_closing():
            self._head_since = self.loop.time()
            _sweep_soon(self.loop, self.connections, self.limits.header_timeout)

    def _shed(self) -> None:
        """Over the cap: close connections past the head deadline, then those that have
        waited longest for their client (idle between requests, or on a head begun and
        not finished), and refuse the newcomer only when every other one is in a request.
        A head counts as waiting: a client that holds a byte of a head on each of its
        connections would otherwise keep the cap full and every newcomer out."""
        now = self.loop.time()
        timeout = self.limits.header_timeout
        waiting: list[tuple[float, float, GuardedHttpToolsProtocol]] = []
        for conn in list(self.connections):
            if conn is self or not isinstance(conn, GuardedHttpToolsProtocol):
                continue
            if conn.head_overdue(now, timeout):
                log.debug("closing a connection that sent no complete request head in %g s",
                          timeout)  # fmt: skip
                conn._close_for_room()
                continue
            since = conn._waiting_since()
            if since is not None:
                waiting.append((since, conn._opened, conn))
        excess = len(self.connections) - self.limits.max_connections
        for _, _, conn in heapq.nsmallest(excess, waiting, key=lambda w: w[:2]):
            log.debug("closing the connection waiting longest: over %d per worker",
                      self.limits.max_connections)  # fmt: skip
            conn._close_for_room()
        if len(self.connections) > self.limits.max_connections:
            self.transport.close()  # every other one is in a request: refuse the newcomer
            self.connections.discard(self)

    def _close_for_room(self) -> None:
        self.transport.close()
        self.connections.discard(self)

    def _waiting_since(self) -> float | None:
        """Since when (loop time) this connection has waited for its client: for the next
        request after an answer, or for the rest of a head (a new connection: since it
        opened). None while a request is under way or the connection is closing."""
        if self._draining >= 0 or self.transport.is_closing():
            return None
        if self.cycle is not None and not self.cycle.response_complete:
            return None
        return self._head_since if self._in_head else self._idle_since

    def _idle(self) -> bool:
        """No request under way: nothing of a head read, no response owed."""
        in_flight = self.cycle is not None and not self.cycle.response_complete
        return not in_flight and self._head_bytes == 0 and not self.transport.is_closing()

    def idle_overdue(self, now: float) -> bool:
        """Kept alive, idle, for longer than the keep-alive timeout since its last answer."""
        return (
            self._idle_since > 0.0 and now - self._idle_since > self.timeout_keep_alive
            and self._idle()
        )  # fmt: skip

    def on_response_complete(self) -> None:
        # uvicorn's own, but for the keep-alive timeout: it arms a timer per answer (2 µs,
        # and a cancelled timer left in the loop's heap per request); the sweep that closes
        # overdue heads closes connections idle past the timeout too (every 0.5 s).
        self.server_state.total_requests += 1
        if self.transport.is_closing():
            return
        self._unset_keepalive_if_required()
        self.flow.resume_reading()
        if self.pipeline:  # a pipelined request waits: start it
            cycle, app = self.pipeline.pop()
            self._start_asgi_task(cycle, app)
        else:
            self._idle_since = self.loop.time()

    def head_overdue(self, now: float, timeout: float) -> bool:
        """Still reading a request head begun more than `timeout` seconds ago."""
        return (
            self._in_head and now - self._head_since > timeout and not self.transport.is_closing()
        )

    # Bytes in
    def data_received(self, data: bytes) -> None:
        if self._draining >= 0:
            self._draining += len(data)
            if self._draining > _DRAIN_BYTES:
                self.transport.abort()
            return
        if self._in_head:
            self._head_bytes += self._head_part(data)
            self._line_done = self._line_done or b"\n" in data
            if self._head_bytes > MAX_HEAD_BYTES:
                self._refuse_head()
                return
        self._unset_keepalive_if_required()
        try:
            self.parser.feed_data(data)
        except httptools.HttpParserUpgrade:
            self._unsupported_upgrade_warning()
        except httptools.HttpParserError:
            if self._refusal is None:
                self._refusal = _error(400, ValidationError("Malformed HTTP request."))
            self._send_refusal()

    def _head_part(self, data: bytes) -> int:
        """How many of `data`'s bytes belong to the head: up to its blank line, when it
        ends here (what follows is a body, bounded by the app's own limit)."""
        window = self._tail + data
        end = window.find(b"\r\n\r\n")
        self._tail = window[-3:]
        return len(data) if end < 0 else max(0, end + 4 - (len(window) - len(data)))

    def _refuse_head(self) -> None:
        """Over the raw ceiling: the request line ended (headers too large) or did not."""
        if self._line_done:
            self._refusal = _error(431, _headers_too_large())
        else:
            self._refusal = _error(414, _url_too_long())
        self._send_refusal()

    def _send_refusal(self) -> None:
        """Answer the refusal, then drop what the client still sends, briefly, and close."""
        assert self._refusal is not None
        status, body, request_id = self._refusal
        self.transport.write(
            b"HTTP/1.1 %d %s\r\ncontent-type: application/json\r\ncontent-length: %d\r\n"
            b"x-request-id: %s\r\nconnection: close\r\n\r\n%s"
            % (status, _REASONS[status], len(body), request_id, body)
        )
        # Closing with unread bytes would reset the connection and lose the answer.
        self._draining = 0
        self._in_head = False
        if self.transport.can_write_eof():
            self.transport.write_eof()
        self.loop.call_later(_DRAIN_SECONDS, self.transport.close)

    def send_400_response(self, msg: str) -> None:
        self._refusal = _error(400, ValidationError("Malformed HTTP request."))
        self._send_refusal()

    # Parser callbacks
    def on_message_begin(self) -> None:
        super().on_message_begin()
        self._in_head = True
        self._url_bytes = self._header_bytes = 0
        self._head_since = self.loop.time()

    def on_url(self, url: bytes) -> None:
        self._url_bytes += len(url)
        if self._url_bytes > MAX_URL_BYTES:
            self._refusal = _error(414, _url_too_long())
            raise _Refused
        super().on_url(url)

    def on_header(self, name: bytes, value: bytes) -> None:
        self._header_bytes += len(name) + len(value)
        if self._header_bytes > MAX_HEADER_BYTES:
            self._refusal = _error(431, _headers_too_large())
            raise _Refused
        super().on_header(name, value)

    def on_headers_complete(self) -> None:
        self._in_head = self._line_done = False
        self._head_bytes = 0
        self._tail = b""
        super().on_headers_complete()
        cycle = self.cycle
        if cycle is None or cycle.scope is not self.scope:  # an upgrade: not a request of ours
            return
        if self._one_write is None:
            self._one_write = _OneWrite(self.transport, self.loop)
        cycle.transport = self._one_write  # type: ignore[assignment]


class _OneWrite:
    """The transport a response is written to: its head is held until its body follows,
    so that a whole answer leaves in one system call, not two (docs/benchmarks.md, "The
    cached answer back to its speed"). A head whose body does not follow at once (a
    stream) leaves at the loop's next turn; a large body is not copied to join its head."""

    __slots__ = ("_held", "_loop", "_transport")

    def __init__(self, transport: asyncio.Transport, loop: asyncio.AbstractEventLoop) -> None:
        self._transport = transport
        self._loop = loop
        self._held: bytes | None = None

    def write(self, data: bytes) -> None:
        held = self._held
        if held is None:
            # A cycle's first write is its head (or a 100 Continue): held for its body.
            self._held = data
            self._loop.call_soon(self.flush)
            return
        self._held = None
        if len(data) <= _JOIN_BELOW:
            self._transport.write(held + data)
        else:
            self._transport.writelines((held, data))

    def flush(self) -> None:
        """Write what is held (a head whose body has not come in this turn)."""
        held, self._held = self._held, None
        if held is not None:
            self._transport.write(held)

    def close(self) -> None:
        self.flush()
        self._transport.close()

    def is_closing(self) -> bool:
        return self._transport.is_closing()

    def get_extra_info(self, name: str, default: object = None) -> object:
        return self._transport.get_extra_info(name, default)


_JOIN_BELOW = 1 << 16  # bytes of a body copied to join its head; larger go by writelines


_sweeping: set[int] = set()  # event loops (by id) whose sweep is scheduled


def _sweep_soon(loop: asyncio.AbstractEventLoop, connections: set[Any], timeout: float) -> None:
    """Close connections whose head is overdue or that idled past the keep-alive timeout,
    every _SWEEP_SECONDS while any are open: one pass rather than a timer per request."""
    if id(loop) in _sweeping:
        return
    _sweeping.add(id(loop))

    def sweep() -> None:
        now = loop.time()
        for conn in list(connections):
            if not isinstance(conn, GuardedHttpToolsProtocol):
                continue
            if conn.head_overdue(now, timeout):
                log.debug(
                    "closing a connection that sent no complete request head in %g s", timeout
                )
                conn.transport.close()
            elif conn.idle_overdue(now):  # kept alive past the keep-alive timeout
                conn.transport.close()
        if connections:
            loop.call_later(_SWEEP_SECONDS, sweep)
        else:
            _sweeping.discard(id(loop))

    loop.call_later(_SWEEP_SECONDS, sweep)


_SWEEP_SECONDS = 0.5

_REASONS = {400: b"Bad Request", 414: b"URI Too Long", 431: b"Request Header Fields Too Large"}


def _url_too_long() -> URITooLongError:
    return URITooLongError(f"The URL is longer than {MAX_URL_BYTES} bytes.")


def _headers_too_large() -> HeadersTooLargeError:
    return HeadersTooLargeError(f"The request headers exceed {MAX_HEADER_BYTES} bytes.")


def _error(
    status: int, exc: URITooLongError | HeadersTooLargeError | ValidationError
) -> tuple[int, bytes, bytes]:
    request_id = new_request_id()
    _, body = error_response(exc, request_id)
    return status, body, request_id.encode()


class PortUnavailable(Exception):
    """The address to serve on cannot be bound (taken, or not allowed)."""


def bind(host: str, port: int) -> socket.socket:
    """A listening socket on host:port, bound before anything else happens."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    # IPPROTO_TCP named: asyncio then turns Nagle's algorithm off on accepted connections.
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        raise PortUnavailable(f"cannot serve on {host}:{port}: {exc.strerror or exc}") from None
    sock.set_inheritable(True)
    return sock


def raise_file_limit(connections: int) -> int:
    """Raise this process's open-file limit to cover `connections` plus headroom.

    Returns the soft limit in force (never above the hard limit, which only root raises).
    """
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    wanted = connections + 256  # the database, the key file, logs, the model
    if soft != resource.RLIM_INFINITY and soft < wanted:
        target = wanted if hard == resource.RLIM_INFINITY else min(wanted, hard)
        with contextlib.suppress(ValueError, OSError):
            resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
    return resource.getrlimit(resource.RLIMIT_NOFILE)[0]


def config(app: Any, limits: ServerLimits | None = None, **options: Any) -> uvicorn.Config:
    """uvicorn's configuration for edukg: the guarded protocol, no proxy headers."""
    GuardedHttpToolsProtocol.limits = limits or ServerLimits.from_env()
    return uvicorn.Config(
        app, http=GuardedHttpToolsProtocol, proxy_headers=False, access_log=False, **options
    )


def run(settings: uvicorn.Config, sock: socket.socket) -> None:
    """Serve on the bound `sock`: in this process, or in `settings.workers` processes."""
    raise_file_limit(GuardedHttpToolsProtocol.limits.max_connections)
    try:
        if settings.workers > 1:
            Multiprocess(settings, sockets=[sock]).run()
        else:
            uvicorn.Server(settings).run(sockets=[sock])
    except KeyboardInterrupt:
        pass
