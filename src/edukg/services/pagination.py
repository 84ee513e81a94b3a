"""Opaque keyset cursors, and the paged-list envelope.

A cursor is base64 of an HMAC tag and a small JSON object: the last identifier
returned, the id of the data it was issued on, and a hash of the query's filters. The
tag, made with a secret every node of a deployment shares (derived from the key
store's), means only cursors edukg issued are taken. A cursor used with other filters,
or after a reload switched the data, is refused with a message that says to restart
the walk, rather than silently skipping or repeating records.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
from typing import Any

import orjson

from edukg.model.errors import ValidationError
from edukg.store.base import Row


def query_key(operation_id: str, filters: dict[str, Any]) -> str:
    """A short hash of the operation and its filters (everything but limit and cursor)."""
    blob = orjson.dumps([operation_id, filters], option=orjson.OPT_SORT_KEYS)
    return hashlib.sha256(blob).hexdigest()[:16]


_TAG_BYTES = 16


def _tag(secret: bytes, blob: bytes) -> bytes:
    return hmac.new(secret, blob, hashlib.sha256).digest()[:_TAG_BYTES]


def encode_cursor(last: str, content_id: str, query: str, secret: bytes, release: str = "") -> str:
    """The cursor for the page after the identifier `last`, signed with `secret`; it
    names the data release it walks (`release`), for the message when it is used with
    another."""
    state = {"identifier": last, "data": content_id[:16], "q": query}
    if release:
        state["v"] = release
    blob = orjson.dumps(state)
    return base64.urlsafe_b64encode(_tag(secret, blob) + blob).rstrip(b"=").decode("ascii")


def decode_cursor(
    cursor: str | None, content_id: str, query: str, secret: bytes, release: str = ""
) -> str | None:
    """The identifier to continue after, or a ValidationError for a cursor we did not issue."""
    if cursor is None:
        return None
    not_ours = ValidationError("Invalid cursor: it is not a cursor this service issued.")
    try:
        padded = cursor + "=" * (-len(cursor) % 4)
        raw = base64.urlsafe_b64decode(padded.encode("ascii"))
    except (binascii.Error, ValueError, UnicodeEncodeError):
        raise not_ours from None
    tag, blob = raw[:_TAG_BYTES], raw[_TAG_BYTES:]
    if not hmac.compare_digest(tag, _tag(secret, blob)):
        raise not_ours
    try:
        state = orjson.loads(blob)
    except ValueError:
        raise not_ours from None
    if (
        not isinstance(state, dict)
        or not isinstance(state.get("identifier"), str)
        or not isinstance(state.get("data"), str)
        or not isinstance(state.get("q"), str)
    ):
        raise ValidationError("Invalid cursor: it is not a cursor this service issued.")
    if state["data"] != content_id[:16]:
        raise _stale(state.get("v"), release)
    if state["q"] != query:
        raise ValidationError(
            "This cursor was issued for a different query (other filters or another "
            "resource). Restart the walk from the first page (omit cursor).",
            {"reason": "cursor_query_mismatch"},
        )
    return str(state["identifier"])


def _stale(walked: Any, release: str) -> ValidationError:
    """The refusal of a cursor issued on other data: naming both releases when it can."""
    if isinstance(walked, str) and release and walked != release:
        return ValidationError(
            f"This cursor walks data release {walked!r}, and this request reads release"
            f" {release!r}: a walk stays in one release. Send X-Data-Version: {walked} with"
            " each page to go on. Restart the walk from the first page (omit cursor) to"
            " read this release.",
            {"reason": "stale_cursor", "cursorRelease": walked, "release": release},
        )
    return ValidationError(
        "This cursor belongs to a previous version of the data, which has since been "
        "reloaded. Restart the walk from the first page (omit cursor).",
        {"reason": "stale_cursor"},
    )


def page_body(
    rows: list[Row],
    limit: int,
    content_id: str,
    query: str,
    secret: bytes,
    key: bytes = b"data",
    release: str = "",
    note: str | None = None,
) -> bytes:
    """`{"data":[...],"pagination":{...}}` from up to limit+1 rows of pre-encoded records
    (and `"note"`, an edukg extension, where the page says why it is empty)."""
    has_more = len(rows) > limit
    rows = rows[:limit]
    next_cursor = (
        encode_cursor(rows[-1][0], content_id, query, secret, release)
        if has_more and rows
        else None
    )
    pagination = orjson.dumps({"limit": limit, "nextCursor": next_cursor, "hasMore": has_more})
    items = b",".join(doc for _, doc in rows)
    tail = b',"note":' + orjson.dumps(note) if note else b""
    return b'{"' + key + b'":[' + items + b'],"pagination":' + pagination + tail + b"}"
