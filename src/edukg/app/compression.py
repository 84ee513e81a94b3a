"""gzip for answers: whether a client accepts it, whether a body is worth it, and the
compression itself; the one place that decides (bench/compression.py measured the
figures)."""

from __future__ import annotations

import gzip

from edukg.app.http import Headers

# Measured by bench/compression.py (docs/benchmarks.md): below 1 KiB a body saves a few
# hundred bytes for 7-9 µs; level 1 comes within 3% of level 9's size on these JSON
# bodies at half the time of level 5 and a quarter of level 9's on a page of 100.
GZIP_MIN_BYTES = 1024
GZIP_LEVEL = 1
# What an ETag says of a gzip body: its bytes depend on the level, so the tag names it.
GZIP_TAG = b"gzip-%d" % GZIP_LEVEL


ENCODED = (b"content-encoding", b"gzip")


def wants_gzip(accept_encoding: bytes | None) -> bool:
    """Whether an Accept-Encoding header accepts gzip: listed, as `gzip` or as `x-gzip`
    (RFC 9110, 8.4.1.3: the same coding; the answer names it `gzip`), or `*` when
    neither is, with a weight above zero (`q=0`, `q=0.00` and `q=0.000` refuse it)."""
    if accept_encoding is None:
        return False
    known = _ACCEPTS.get(accept_encoding)
    if known is None:
        weights: dict[bytes, float] = {}
        for part in accept_encoding.lower().split(b","):
            coding, _, params = part.strip().partition(b";")
            weights[coding.strip()] = _weight(params)
        named = weights.get(b"gzip", weights.get(b"x-gzip"))
        known = (weights.get(b"*", 0.0) if named is None else named) > 0.0
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


def tag_encoding(gzipped: bool) -> bytes:
    """What an ETag names of a body's encoding: a gzip body's bytes depend on the level."""
    return GZIP_TAG if gzipped else b"identity"


def worth_gzip(body: bytes, accepted: bool) -> bool:
    """Whether a body goes gzipped to a client that does (`accepted`) or does not accept
    it: below GZIP_MIN_BYTES a body goes as it is (bench/compression.py)."""
    return accepted and len(body) >= GZIP_MIN_BYTES


def encoded(body: bytes, accepted: bool) -> tuple[bytes, bool]:
    """The body as a client that does (`accepted`) or does not accept gzip gets it, and
    whether gzipped."""
    if not worth_gzip(body, accepted):
        return body, False
    return compress(body), True


def with_encoding(headers: Headers, gzipped: bool) -> Headers:
    """A representation's headers, naming its encoding when gzipped."""
    return [*headers, ENCODED] if gzipped else headers


def compress(body: bytes) -> bytes:
    """gzip at a level that keeps up with the server (mtime 0: the same bytes every time)."""
    return gzip.compress(body, compresslevel=GZIP_LEVEL, mtime=0)
