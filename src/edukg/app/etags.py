"""Entity tags of data responses, and If-None-Match read once.

Data is immutable between loads, so a response is fully determined by the loaded
data's content id, the operation with its validated parameter values, and the content
encoding: the ETag is a hash of those, computed without looking at the body. A
matching If-None-Match becomes a 304 only once the request has passed validation and
its lookups (only a 200 may become a 304), in the response stage (app/respond.py).
Never derived from the user's version label alone, which two different loads may share.
"""

from __future__ import annotations

import hashlib
from typing import Any

import orjson


def canonical(values: dict[str, Any]) -> bytes:
    """Validated values as bytes that two equal requests share, whatever the order or
    the unknown parameters of their URLs."""
    return orjson.dumps(values, option=orjson.OPT_SORT_KEYS)


def digest_of(canonical: bytes) -> bytes:
    """What the response cache knows a request's values by: 32 bytes of SHA-256 of their
    canonical form, whatever their size (a body's text may be 80 KB; kept whole in each
    key, a cache counted by its bodies would hold many times its budget)."""
    return hashlib.sha256(canonical).digest()


def etag(
    content_id: str, operation_id: str, values: dict[str, Any] | bytes, encoding: bytes
) -> bytes:
    """A strong ETag for one response: the data, the operation and its validated values
    (so unknown parameters, which change nothing, change no tag), and the encoding."""
    request = values if isinstance(values, bytes) else canonical(values)
    key = b"\0".join((content_id.encode(), operation_id.encode(), request, encoding))
    return b'"%s"' % hashlib.sha256(key).digest()[:16].hex().encode()


def named_tags(header: bytes) -> frozenset[bytes]:
    """The entity tags an If-None-Match value names (weak ones as their strong tag; `*`
    as itself): the one reading of the header."""
    return frozenset(t.strip().removeprefix(b"W/") for t in header.split(b","))


def matches(header: bytes, tag: bytes) -> bool:
    """Whether an If-None-Match value names `tag` or holds `*` (alone or in a list)."""
    named = named_tags(header)
    return tag in named or b"*" in named


def names(header: bytes, tag: bytes) -> bool:
    """Whether an If-None-Match value names `tag` itself (`*` names no tag: it matches
    any current representation, which must be found first)."""
    return tag in named_tags(header)
