"""Pre-encoded records: every record is encoded as JSON once, at load; these add fields
to one without decoding it (a JSON object's last byte is its closing brace)."""

from __future__ import annotations

from typing import Any

import orjson


def with_fields(doc: bytes, fields: dict[str, Any]) -> bytes:
    """`doc` (a JSON object) with `fields` appended."""
    if not fields:
        return doc
    return with_encoded(doc, orjson.dumps(fields)[1:-1])


def exact(encoded: bytes) -> bytes:
    """`encoded` copied to its own length: what `orjson.dumps` returns keeps the 4 KiB or
    more it was built in, so a value kept for long (a memo's row) is copied first."""
    return bytes(memoryview(encoded))


BYTES_OVERHEAD = 33  # what a bytes object costs besides its content (CPython, 64-bit)


def with_encoded(doc: bytes, members: bytes) -> bytes:
    """`doc` with already encoded members (`"name":value,...`) appended."""
    return doc[:-1] + b"," + members + b"}"


def with_children(doc: bytes) -> bytes:
    """A standard's or skill's record, saying it has children: records are encoded with
    hasChildren last, as false, so this is a cut and a join."""
    return doc[: -len(b"false}")] + b"true}"
