"""One request on its way through the pipeline: what every stage reads and adds to.

A typed record instead of a tuple passed by position: the stages (app/pipeline.py) and
the entrances (the API's operations, CASE, MCP, the fixed routes) name what they use.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from edukg.adapters.rest.base import Operation
from edukg.app.http import Answer, Headers
from edukg.store.base import Principal, Store


class Routed(Protocol):
    """What the route table found for a request (app.routing.Found), as the stages read
    it: declared here so that a request's record needs nothing of the route table."""

    @property
    def operation(self) -> Operation[Any] | None:
        """The API operation, if the path names one."""

    @property
    def values(self) -> dict[str, str] | None:
        """The operation's path values."""

    @property
    def handler(self) -> Callable[[Exchange], Answer | None] | None:
        """A fixed route's own handler."""

    @property
    def counted_as(self) -> tuple[str, str]:
        """(entrance, operation): what metrics count a request under."""


Scope = dict[str, Any]
Receive = Callable[[], Awaitable[dict[str, Any]]]
Send = Callable[[dict[str, Any]], Awaitable[None]]


# The request headers any stage reads: taken in one pass over the headers (with their
# total size), not searched for by each stage.
HEAD_NAMES = frozenset((b"x-api-key", b"authorization", b"x-data-version", b"accept-encoding",
                        b"if-none-match", b"content-type", b"content-length", b"origin",
                        b"expect"))  # fmt: skip


def read_head(headers: Headers) -> tuple[dict[bytes, bytes], int]:
    """The headers of HEAD_NAMES (the first of each name) and every header's size."""
    head: dict[bytes, bytes] = {}
    size = 0
    for name, value in headers:
        size += len(name) + len(value)
        if name in HEAD_NAMES and name not in head:
            head[name] = value
    return head, size


@dataclass(slots=True, eq=False)
class Exchange:
    """A request and what the stages have learned of it so far."""

    scope: Scope  # with any /releases/X prefix taken off its path
    receive: Receive
    send: Send
    request_id: str
    started: float  # time.perf_counter() when it arrived
    head: dict[bytes, bytes]  # the headers stages read (read_head)
    head_bytes: int  # all headers' size
    asks_for_release: bool = False  # it names a release (header or path prefix)
    release_by_path: str | None = None  # the release its /releases/X prefix named
    database_error: bool = False  # the database failed it (counted by metrics)
    # When its reads on a networked database must be done (time.monotonic()): one limit
    # for the whole request, its waits for a thread included; None on local files
    deadline: float | None = None
    found: Routed | None = None  # the route table's answer
    headers: Headers = field(default_factory=list)  # every response carries them (limits)
    principal: Principal | None = None  # the key's holder, once authenticated
    keyless: bool = False  # a keyless CASE request (serve --case-public)
    store: Store | None = None  # the release answering it; None: the current one
    body: bytes = b""  # a body read before the admission stages (POST operations)
    cost: int = 1  # tokens of the rate limit; above 1 it is expensive work
    parsed: object = None  # what the entrance's own checks made of it (its own type)

    @property
    def method(self) -> str:
        """The HTTP method."""
        method: str = self.scope["method"]
        return method

    @property
    def path(self) -> str:
        """The path, without any /releases/X prefix."""
        path: str = self.scope["path"]
        return path

    @property
    def owner(self) -> str | None:
        """Whose share of the work pool the request takes: its key's (keyless CASE
        requests share one)."""
        if self.principal is not None:
            return self.principal.name
        return "keyless" if self.keyless else None

    async def gone(self) -> None:
        """Return once the client has closed the connection: how work waiting for its
        turn learns that nobody will read its answer. Called once the body is read (or
        for a request without one); what else the connection says is dropped."""
        while (await self.receive())["type"] != "http.disconnect":
            pass

    @property
    def who(self) -> str | None:
        """The key's name for the access log (never the key)."""
        return self.principal.name if self.principal is not None else None
