"""Giving freed memory back to the system after a large answer was built.

A CASE package of a large framework is built from a hundred thousand objects, then
joined into one body; once they are freed, glibc keeps most of their pages in its heaps
(one per thread) rather than returning them, so a worker that built one large package
stays hundreds of MiB larger for the rest of its life (bench/case_flood.py).
`malloc_trim(0)` returns the free pages of every heap; it takes milliseconds, so it runs
only after a build of `LARGE_BYTES` or more, on the thread that built it.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import threading
from collections.abc import Callable

LARGE_BYTES = 8 << 20

_lock = threading.Lock()
_trim: Callable[[int], int] | None = None
_looked = False


def _malloc_trim() -> Callable[[int], int] | None:
    """glibc's malloc_trim, or None where the C library has none (macOS, musl)."""
    global _trim, _looked  # noqa: PLW0603 - looked up once per process
    with _lock:
        if not _looked:
            _looked = True
            name = ctypes.util.find_library("c")
            function = getattr(ctypes.CDLL(name), "malloc_trim", None) if name else None
            _trim = function
        return _trim


def released(body: bytes) -> bytes:
    """`body`, after returning freed memory to the system when it was a large build."""
    if len(body) >= LARGE_BYTES:
        trim = _malloc_trim()
        if trim is not None:
            trim(0)
    return body
