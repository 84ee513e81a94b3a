"""HTTP caching and compression for data responses.

Data is immutable between loads, so a response is fully determined by the loaded
data's content id, the request URL and the content encoding: the ETag is a hash of
those three, computed without looking at the body, and a matching If-None-Match is
answered 304 before any query runs. Never derived from the user's version label
alone, which two different loads may share.
"""

from __future__ import annotations

import gzip
import hashlib
from typing import Any

Headers = list[tuple[bytes, bytes]]

# Measured by bench/compression.py (docs/benchmarks.md): below 1 KiB a body saves a few
# hundred bytes for 7-9 µs; level 1 comes within 3% of level 9's size on these JSON
# bodies at half the time of level 5 and a quarter of level 9's on a page of 100.
GZIP_MIN_BYTES = 1024
GZIP_LEVEL = 1
# What an ETag says of a gzip body: its bytes depend on the level, so the tag names it.
GZIP_TAG = b"gzip-%d" % GZIP_LEVEL


def etag(content_id: str, scope: dict[str, Any], encoding: bytes) -> bytes:
    """A strong ETag for one response."""
    raw = scope.get("raw_path") or scope["path"].encode()
    key = b"\0".join((content_id.encode(), raw, scope.get("query_string", b""), encoding))
    return b'"' + hashlib.sha256(key).hexdigest()[:32].encode() + b'"'


def wants_gzip(scope: dict[str, Any]) -> bool:
    """Whether the client accepts gzip (and did not refuse it with q=0)."""
    for name, value in scope["headers"]:
        if name == b"accept-encoding":
            for part in value.lower().split(b","):
                coding, _, params = part.strip().partition(b";")
                if coding.strip() == b"gzip" and params.replace(b" ", b"") not in (
                    b"q=0",
                    b"q=0.0",
                ):
                    return True
    return False


def if_none_match(scope: dict[str, Any]) -> bytes | None:
    """The If-None-Match header, if any."""
    for name, value in scope["headers"]:
        if name == b"if-none-match":
            return bytes(value)
    return None


def matches(header: bytes, tag: bytes) -> bool:
    """Whether an If-None-Match value names `tag` (or is `*`)."""
    candidates = [t.strip() for t in header.split(b",")]
    return b"*" in candidates or tag in candidates or b"W/" + tag in candidates


def compress(body: bytes) -> bytes:
    """gzip at a level that keeps up with the server (mtime 0: the same bytes every time)."""
    return gzip.compress(body, compresslevel=GZIP_LEVEL, mtime=0)
