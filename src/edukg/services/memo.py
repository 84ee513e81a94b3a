"""What a release computes once and keeps while it is served: the memo of derived answers
(a walk's pages, a comparison, an alignment's view of the standards a filter admits).

Data is immutable within a release, so a value computed for one request serves every
later one on the same release; entries are keyed by the release's content id and weighed
in bytes, the least recently used going first.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from edukg.model.lru import ByteLru
from edukg.store.base import Store

MEMO_BYTES = 128 << 20  # 128 MiB of derived values per process

T = TypeVar("T")
# The newest value stays even when it alone exceeds the budget (an alignment's view of
# every standard of a full-scale release is about that size): recomputing it on every
# request would cost seconds each time.
_MEMO: ByteLru[tuple[Any, ...], tuple[int, Any]] = ByteLru(MEMO_BYTES, lambda v: v[0])


def remembered(store: Store, key: tuple[Any, ...], compute: Callable[[], tuple[int, T]]) -> T:
    """`compute()`'s value for `key` on the loaded release, computed once while it is kept.

    `compute` returns (the bytes the value holds, the value): the weight the memo's budget
    counts, so callers weigh what they keep, buffers included."""
    info = store.info()
    full = (info.content_id if info else "", *key)
    found = _MEMO.get(full)
    if found is None:
        found = compute()
        _MEMO.put(full, found)
    result: T = found[1]
    return result


def memo_bytes() -> int:
    """The bytes the memo holds now (for tests and /metrics)."""
    return _MEMO.bytes
