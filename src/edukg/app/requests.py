"""What the app reads off a request before any data: its size, its query string, its
cost, and the Error answer for a refusal."""

from __future__ import annotations

from typing import Any
from urllib.parse import parse_qsl, unquote_plus

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


def check_sizes(scope: Scope, header_bytes: int) -> None:
    """The head limits again, for servers other than edukg's own (which refuses earlier)."""
    if len(scope.get("raw_path") or b"") + len(scope.get("query_string", b"")) > MAX_URL_BYTES:
        raise URITooLongError(f"The URL is longer than {MAX_URL_BYTES} bytes.")
    if header_bytes > MAX_HEADER_BYTES:
        raise HeadersTooLargeError(f"The request headers exceed {MAX_HEADER_BYTES} bytes.")


# Query parameters whose values are credentials wherever a client puts them.
_SECRET_NAMES = frozenset(["key", "apikey", "api_key", "api-key", "x-api-key", "token",
                           "access_token", "authorization"])  # fmt: skip


def redacted_query(raw: bytes, key_prefix: str) -> str:
    """A query string for the access log: the value of any parameter named like a
    credential, or that starts with the key prefix, written `REDACTED`."""
    parts = []
    for part in raw.decode("latin-1").split("&"):
        name, sep, value = part.partition("=")
        plain = unquote_plus(value)
        if sep and (name.lower() in _SECRET_NAMES or plain.startswith(key_prefix)):
            value = "REDACTED"
        parts.append(name + sep + value)
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


__all__ = ["MCP_COST", "SEARCH_COST", "check_sizes", "query_of", "redacted_query", "request_cost"]
