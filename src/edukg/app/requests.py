"""What the app reads off a request before any data: its size, its query string, its
cost, and the Error answer for a refusal."""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import parse_qsl, unquote_plus

import orjson

from edukg.adapters.mcp import TOOL_OPERATIONS
from edukg.adapters.rest.base import SEARCH_COST, Operation
from edukg.adapters.server import MAX_HEADER_BYTES, MAX_URL_BYTES
from edukg.model.errors import (
    HeadersTooLargeError,
    URITooLongError,
    ValidationError,
)

Scope = dict[str, Any]
MAX_QUERY_FIELDS = 64

MCP_COST = 5  # tokens of the key's bucket a call of /mcp takes, as a search
# What an MCP session sends besides its tool calls, which the SDK answers from what it
# holds: priced as a cheap lookup, so that a session costs its calls and little more.
HOUSEKEEPING_COST = 1
_HOUSEKEEPING = frozenset(("initialize", "ping", "tools/list", "resources/list",
                           "resources/templates/list", "prompts/list", "logging/setLevel"))  # fmt: skip
_LARGE_PAGE = 250  # records: a page beyond this is expensive work


def request_cost(op: Operation[Any], values: dict[str, Any]) -> int:
    """Tokens a request takes from its key's bucket; more than one means expensive work
    (run off the event loop, bounded by the work pool)."""
    if op.text_cost_chars:
        return op.cost + len(values.get("text") or "") // op.text_cost_chars
    if op.cost > 1:
        return op.cost
    limit = values.get("limit")
    if isinstance(limit, int) and limit > _LARGE_PAGE:
        return 1 + limit // _LARGE_PAGE
    return 1


def mcp_cost(body: bytes) -> int:
    """Tokens a call of /mcp takes: a tool's price as its REST operation's (aligning a
    text: 5 plus 1 per 2,000 characters, as POST /alignments), a session's housekeeping
    (initialize, notifications, ping, the lists) HOUSEKEEPING_COST, MCP_COST for the
    rest; a batch, the sum. A body that is not a JSON-RPC call the SDK will refuse
    costs MCP_COST. More than HOUSEKEEPING_COST is expensive work (the work pool)."""
    try:
        message = orjson.loads(body)
    except orjson.JSONDecodeError:
        return MCP_COST
    calls = message if isinstance(message, list) else [message]
    total = 0
    for call in calls[:_MAX_CALLS]:
        total += _call_cost(call)
    return max(HOUSEKEEPING_COST, total)


_MAX_CALLS = 100  # of a JSON-RPC batch priced one by one; the SDK bounds the rest


def _call_cost(call: Any) -> int:
    method = call.get("method") if isinstance(call, dict) else None
    if not isinstance(method, str):
        return MCP_COST
    if method in _HOUSEKEEPING or method.startswith("notifications/"):
        return HOUSEKEEPING_COST
    if method != "tools/call":
        return MCP_COST
    params = call.get("params")
    if not isinstance(params, dict):
        return MCP_COST
    op = TOOL_OPERATIONS.get(str(params.get("name")))
    arguments = params.get("arguments")
    if op is None or not isinstance(arguments, dict):
        return MCP_COST
    return max(
        MCP_COST,
        request_cost(
            op, {"text": arguments.get("text") if isinstance(arguments.get("text"), str) else ""}
        ),
    )


def check_sizes(scope: Scope, header_bytes: int) -> None:
    """The head limits again, for servers other than edukg's own (which refuses earlier)."""
    if len(scope.get("raw_path") or b"") + len(scope.get("query_string", b"")) > MAX_URL_BYTES:
        raise URITooLongError(f"The URL is longer than {MAX_URL_BYTES} bytes.")
    if header_bytes > MAX_HEADER_BYTES:
        raise HeadersTooLargeError(f"The request headers exceed {MAX_HEADER_BYTES} bytes.")


# Query parameters whose values are credentials wherever a client puts them.
_SECRET_NAMES = frozenset(["key", "apikey", "api_key", "api-key", "x-api-key", "token",
                           "access_token", "authorization"])  # fmt: skip
_PARAMETER = re.compile(r"[&;]")


def redacted(text: str, key_prefix: str) -> str:
    """`text` (a decoded path or query value) with anything shaped like a key, wherever
    it stands, written PREFIX + REDACTED."""
    return re.sub(re.escape(key_prefix) + r"[A-Za-z0-9_\-]*", key_prefix + "REDACTED", text)


def redacted_query(raw: bytes, key_prefix: str) -> str:
    """A query string for the access log, decoded: the value of any parameter named like
    a credential written REDACTED, and anything shaped like a key, in a name or a value
    (`?ekg_...`, `foo=Bearer%20ekg_...`, `a=1;key=...`), written PREFIX + REDACTED."""
    parts = []
    for part in _PARAMETER.split(raw.decode("latin-1")):
        name, sep, value = part.partition("=")
        name, value = unquote_plus(name), unquote_plus(value)
        if sep and name.lower() in _SECRET_NAMES:
            value = "REDACTED"
        parts.append(redacted(name, key_prefix) + sep + redacted(value, key_prefix))
    return "&".join(parts)


def query_of(scope: Scope) -> dict[str, list[str]]:
    raw: bytes = scope.get("query_string", b"")
    if not raw:
        return {}
    try:
        pairs = parse_qsl(
            raw.decode("utf-8"),
            keep_blank_values=True,
            errors="strict",
            max_num_fields=MAX_QUERY_FIELDS,
        )
    except UnicodeDecodeError:
        raise ValidationError("The query string is not valid UTF-8.") from None
    except ValueError:
        raise ValidationError(f"Too many query parameters (at most {MAX_QUERY_FIELDS}).") from None
    query: dict[str, list[str]] = {}
    for name, value in pairs:
        query.setdefault(name, []).append(value)
    return query


__all__ = [
    "HOUSEKEEPING_COST",
    "MCP_COST",
    "SEARCH_COST",
    "check_sizes",
    "mcp_cost",
    "query_of",
    "redacted",
    "redacted_query",
    "request_cost",
]
