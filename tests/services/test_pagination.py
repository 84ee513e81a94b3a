"""Cursors and the page envelope (services/pagination.py)."""

from __future__ import annotations

import orjson
import pytest

from edukg.model.errors import ValidationError
from edukg.services.pagination import decode_cursor, encode_cursor, page_body, query_key

SECRET = b"s" * 32
CONTENT = "c" * 64


def test_cursor_round_trip_and_refusals() -> None:
    scope = query_key("listThings", {"subject": "Mathematics"})
    cursor = encode_cursor("id-7", CONTENT, scope, SECRET)
    assert decode_cursor(cursor, CONTENT, scope, SECRET) == "id-7"
    assert decode_cursor(None, CONTENT, scope, SECRET) is None
    with pytest.raises(ValidationError, match="not a cursor this service issued"):
        decode_cursor(cursor, CONTENT, scope, b"x" * 32)  # another deployment's secret
    with pytest.raises(ValidationError, match="not a cursor this service issued"):
        decode_cursor("%%%", CONTENT, scope, SECRET)
    with pytest.raises(ValidationError) as stale:
        decode_cursor(cursor, "d" * 64, scope, SECRET)
    assert stale.value.details == {"reason": "stale_cursor"}
    other = query_key("listThings", {"subject": "Science"})
    with pytest.raises(ValidationError) as mismatch:
        decode_cursor(cursor, CONTENT, other, SECRET)
    assert mismatch.value.details == {"reason": "cursor_query_mismatch"}


def test_scope_ignores_the_order_of_filters() -> None:
    assert query_key("op", {"a": 1, "b": 2}) == query_key("op", {"b": 2, "a": 1})


def test_page_body_is_the_envelope() -> None:
    rows = [("a", b'{"n":1}'), ("b", b'{"n":2}'), ("c", b'{"n":3}')]
    body = orjson.loads(page_body(rows, 2, CONTENT, "q", SECRET))
    assert body["data"] == [{"n": 1}, {"n": 2}]
    assert body["pagination"]["hasMore"] is True
    assert decode_cursor(body["pagination"]["nextCursor"], CONTENT, "q", SECRET) == "b"
    last = orjson.loads(page_body(rows[:1], 2, CONTENT, "q", SECRET))
    assert last["pagination"] == {"limit": 2, "nextCursor": None, "hasMore": False}
