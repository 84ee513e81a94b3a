"""What an entrance is: a kind of path, declared by what the pipeline checks before its
handler and how its refusals are written.

Every path the server answers belongs to one entrance (the API's reads and its POST
operations, the CASE paths, `/mcp`, the fixed routes and the explorer), and every
entrance goes through the same stages (app/pipeline.py). Adding one means declaring it
here and in the route table, not copying the chain.
"""

from __future__ import annotations

import enum
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from edukg.app.exchange import Exchange
from edukg.app.http import JSON, Answer, Headers, Representation
from edukg.app.respond import PLAIN, Policy
from edukg.model.errors import ApiError, error_response

# What an entrance answers: a whole answer, or a 200 with its tag (which the response
# stage may turn into a 304).
Reply = Answer | Representation
READS = frozenset(("GET", "HEAD"))


class KeyRule(enum.Enum):
    """What an entrance asks of the request's key."""

    REQUIRED = "required"  # a valid key, or 401
    OPTIONAL = "optional"  # a valid key shows more (health details, a pinned release)
    CASE = "case"  # required, unless `serve --case-public` and the request names none


class Later:
    """An answer the entrance finishes off the admission stages (expensive work, a body
    still to read): what `answer` returns instead of a response."""


def api_refusal(exc: ApiError, ex: Exchange) -> Answer:
    """An Error answer in the API's shape."""
    status, body = error_response(exc, ex.request_id)
    return status, body, [JSON]


@dataclass(frozen=True)
class Entrance:
    """One kind of path and what answering it takes.

    The pipeline runs, in order: `screen` (checks that need no key), the method check,
    the key (`key`), the release pin, `prepare` (parses what the head says; returns the
    request's cost so far), the rate limit (when `limited`); for an entrance that
    `takes_body`, then `room` (whether the work pool would take its work now), the body
    (only once the key is known good) and `price` (parses the body; returns the
    request's whole cost, the rest of which is charged then);
    `answer`, the key's confirmation; then, when `answer` returned a `Later`, `finish`
    off those stages; then the response stage (app/respond.py) under `policy`.
    """

    name: str
    answer: Callable[[Exchange], Reply | Later]
    key: KeyRule = KeyRule.REQUIRED
    methods: frozenset[str] = READS
    method_refusal: str = "{method} is not allowed here."
    allow: bytes = b"GET, HEAD"
    screen: Callable[[Exchange], None] | None = None
    prepare: Callable[[Exchange], int] | None = None
    finish: Callable[[Exchange, Later], Awaitable[Reply | None]] | None = None
    refuse: Callable[[ApiError, Exchange], Answer] = api_refusal
    takes_body: bool = False  # a POST's body is read, after the key (POST operations, /mcp)
    price: Callable[[Exchange], int] | None = None  # the whole cost, once the body is read
    # Refuses, before a body is read, a request whose work the key may not run now (the
    # work pool's verdict), so that such a request costs no more than its head
    room: Callable[[Exchange], None] | None = None
    limited: bool = True  # the key's rate limit applies
    wants_key: bool = False  # OPTIONAL: look the key up even when no release is named
    policy: Policy = PLAIN  # Cache-Control, Vary and compression of its answers


def method_headers(entrance: Entrance) -> Headers:
    """What a 405 of `entrance` carries."""
    return [(b"allow", entrance.allow)]
