"""HTTP caching and compression for data responses.

Data is immutable between loads, so a response is fully determined by the loaded
data's content id, the operation with its validated parameter values, and the content
encoding: the ETag is a hash of those, computed without looking at the body. A
matching If-None-Match becomes a 304 only once the request has passed validation and
its lookups (only a 200 may become a 304). Never derived from the user's version label
alone, which two different loads may share.
"""

from __future__ import annotations

import gzip
import hashlib
from typing import Any

import orjson

# Measured by bench/compression.py (docs/benchmarks.md): below 1 KiB a body saves a few
# hundred bytes for 7-9 µs; level 1 comes within 3% of level 9's size on these JSON
# bodies at half the time of level 5 and a quarter of level 9's on a page of 100.
GZIP_MIN_BYTES = 1024
GZIP_LEVEL = 1
# What an ETag says of a gzip body: its bytes depend on the level, so the tag names it.
GZIP_TAG = b"gzip-%d" % GZIP_LEVEL


def canonical(values: dict[str, Any]) -> bytes:
    """Validated values as bytes that two equal requests share, whatever the order or
    the unknown parameters of their URLs."""
    return orjson.dumps(values, option=orjson.OPT_SORT_KEYS)


def digest(values: dict[str, Any]) -> bytes:
    """What the response cache knows a request's values by: 32 bytes of SHA-256 of their
    canonical form, whatever their size (a body's text may be 80 KB; kept whole in each
    key, a cache counted by its bodies would hold many times its budget)."""
    return hashlib.sha256(canonical(values)).digest()


def etag(
    content_id: str, operation_id: str, values: dict[str, Any] | bytes, encoding: bytes
) -> bytes:
    """A strong ETag for one response: the data, the operation and its validated values
    (so unknown parameters, which change nothing, change no tag), and the encoding."""
    request = values if isinstance(values, bytes) else canonical(values)
    key = b"\0".join((content_id.encode(), operation_id.encode(), request, encoding))
    return b'"' + hashlib.sha256(key).hexdigest()[:32].encode() + b'"'


def wants_gzip(accept_encoding: bytes | None) -> bool:
    """Whether an Accept-Encoding header accepts gzip: listed (or `*` when gzip is not)
    with a weight above zero (`q=0`, `q=0.00` and `q=0.000` refuse it)."""
    if accept_encoding is None:
        return False
    known = _ACCEPTS.get(accept_encoding)
    if known is None:
        weights: dict[bytes, float] = {}
        for part in accept_encoding.lower().split(b","):
            coding, _, params = part.strip().partition(b";")
            weights[coding.strip()] = _weight(params)
        known = weights.get(b"gzip", weights.get(b"*", 0.0)) > 0.0
        if len(_ACCEPTS) < 256:  # clients send a handful of distinct values
            _ACCEPTS[accept_encoding] = known
    return known


_ACCEPTS: dict[bytes, bool] = {}


def _weight(params: bytes) -> float:
    """The q of a coding's parameters (1 when absent; 0 when it is not a number)."""
    for param in params.split(b";"):
        name, _, value = param.replace(b" ", b"").partition(b"=")
        if name == b"q":
            try:
                return float(value)
            except ValueError:
                return 0.0
    return 1.0


def matches(header: bytes, tag: bytes) -> bool:
    """Whether an If-None-Match value names `tag` or holds `*` (alone or in a list)."""
    candidates = [t.strip() for t in header.split(b",")]
    return b"*" in candidates or tag in candidates or b"W/" + tag in candidates


def names(header: bytes, tag: bytes) -> bool:
    """Whether an If-None-Match value names `tag` itself (`*` names no tag: it matches
    any current representation, which must be found first)."""
    candidates = [t.strip() for t in header.split(b",")]
    return tag in candidates or b"W/" + tag in candidates


def compress(body: bytes) -> bytes:
    """gzip at a level that keeps up with the server (mtime 0: the same bytes every time)."""
    return gzip.compress(body, compresslevel=GZIP_LEVEL, mtime=0)
