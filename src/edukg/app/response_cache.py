"""An in-process cache of finished data responses, with their ETags.

The key names everything a data response depends on (the loaded content id and
version, the search ranking or the kept releases where they matter, the operation, the
URL or, for a body, the ETag of its values, and the content encoding), so a response
found under it is the response the handler would build again; a new load changes every
key and old entries simply age out. The ETag is computed once, when the entry is made.
Authentication, rate limiting and conditional requests still
run on every request: only the query, the encoding and the compression are saved.
Bounded by bytes, least recently used first out.
"""

from __future__ import annotations

from collections.abc import Hashable

from edukg.app.http import Representation
from edukg.model.lru import ByteLru

DEFAULT_BYTES = 64 * 1024 * 1024
_LARGEST_SHARE = 16  # one response may take at most 1/16 of the cache
# What an entry costs beyond its body: the tag, the headers list and its tuples, the
# objects' headers and the dict slot (measured: about 800 bytes with five headers).
# Counted so that many small entries stay within the budget too.
ENTRY_OVERHEAD = 800
_EXACT_BELOW = 16 * 1024  # bodies copied to their own size when kept (bench/response_cache.py)


class ResponseCache:
    """Finished responses by key, within a byte budget."""

    def __init__(self, max_bytes: int = DEFAULT_BYTES) -> None:
        self._entries: ByteLru[Hashable, Representation] = ByteLru(
            max_bytes, lambda entry: len(entry[0]) + ENTRY_OVERHEAD, keep_last=False
        )
        self._max = max_bytes

    @property
    def size(self) -> int:
        """Bytes held, overheads included."""
        return self._entries.bytes

    def get(self, key: Hashable) -> Representation | None:
        """The response stored under `key`, if any (it becomes the most recent)."""
        return self._entries.get(key)

    def put(self, key: Hashable, rep: Representation) -> None:
        """Keep a response unless it is too large; evict the least recent to fit."""
        body = rep.body
        if self._max <= 0 or len(body) > self._max // _LARGEST_SHARE:
            return
        if len(body) < _EXACT_BELOW:
            # What `orjson.dumps` returns keeps the 4 KiB or more it was built in: kept
            # as is, small entries would weigh several times what the budget counts.
            body = bytes(memoryview(body))
        self._entries.put(key, rep._replace(body=body))

    def status(self) -> dict[str, int]:
        """Figures for /healthz."""
        return {
            "entries": len(self._entries),
            "bytes": self._entries.bytes,
            "maxBytes": self._max,
            "hits": self._entries.hits,
            "misses": self._entries.misses,
        }
