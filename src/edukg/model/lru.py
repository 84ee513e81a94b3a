"""A thread-safe least-recently-used map bounded by bytes, not by entries."""

from __future__ import annotations

import contextlib
import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Generic, TypeVar

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


class ByteLru(Generic[K, V]):
    """Values by key within `max_bytes` (each weighs `size(value)`); the least recently
    used go first. The newest entry stays even when it alone exceeds the budget, unless
    `keep_last` is False."""

    def __init__(self, max_bytes: int, size: Callable[[V], int], keep_last: bool = True) -> None:
        self._entries: OrderedDict[K, V] = OrderedDict()
        self._lock = threading.Lock()  # requests run on worker threads too
        self._size = size
        self._keep = 1 if keep_last else 0
        self.max_bytes = max_bytes
        self.bytes = 0
        self.hits = 0
        self.misses = 0

    def __len__(self) -> int:
        return len(self._entries)

    def get(self, key: K) -> V | None:
        """The value under `key`, if any (it becomes the most recent)."""
        with self._lock:
            found = self._entries.get(key)
            if found is None:
                self.misses += 1
                return None
            self._entries.move_to_end(key)
            self.hits += 1
            return found

    def put(self, key: K, value: V) -> None:
        """Keep `value` unless `key` is already kept; evict the least recent to fit."""
        with self._lock:
            if key in self._entries:
                return
            self._entries[key] = value
            self.bytes += self._size(value)
            while self.bytes > self.max_bytes and len(self._entries) > self._keep:
                _, old = self._entries.popitem(last=False)
                self.bytes -= self._size(old)


class Recent(Generic[K, V]):
    """The values of the last `size` keys put, the oldest out first: a repeated key's
    lookup is one dictionary read (no reordering, no lock), for caches of what was just
    seen (validated URLs, routes, refused keys) where recency of use matters less than a
    cheap hit. Safe from several threads: a race costs an extra eviction, never an error.
    """

    def __init__(self, size: int) -> None:
        self._entries: dict[K, V] = {}
        self.size = size

    def __len__(self) -> int:
        return len(self._entries)

    def __contains__(self, key: object) -> bool:
        return key in self._entries

    def get(self, key: K) -> V | None:
        """The value under `key`, if kept."""
        return self._entries.get(key)

    def put(self, key: K, value: V) -> None:
        """Keep `value`, forgetting the oldest entry when full."""
        entries = self._entries
        if len(entries) >= self.size:
            with contextlib.suppress(RuntimeError, StopIteration, KeyError):
                del entries[next(iter(entries))]
        entries[key] = value

    def clear(self) -> None:
        """Forget everything."""
        self._entries = {}
