"""Expensive requests beside the event loop, on a few threads, with a bound on waiting.

A search, an MCP tool call or a page of a thousand records takes milliseconds of work;
run on the event loop, one client sending many of them delays every cheap lookup
behind them. Here they run on a small thread pool (SQLite, NumPy and the JSON encoder
release the interpreter lock for most of that time), at most `threads` at once with at
most `waiting` more queued; beyond that a request is refused at once with 503 and
Retry-After rather than queued without end. Cheap lookups stay on the loop.

One key's work never takes every thread: a key runs at most `threads - 1` requests at
once (one, on two cores), its others waiting their turn, so that another key's request
finds a thread free at once however much the first sends (docs/security.md, "Sharing
the work").
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

from edukg.model.errors import ServiceUnavailableError

T = TypeVar("T")

RETRY_AFTER = 1  # seconds: expensive work is short, a slot frees up quickly


class Busy(ServiceUnavailableError):
    """Every slot for expensive work is taken: 503, with Retry-After."""


class WorkPool:
    """A bounded pool for expensive requests (one per worker process)."""

    def __init__(self, threads: int = 2, waiting: int = 8) -> None:
        self.threads = threads
        self.slots = threads + waiting
        self.share = max(1, threads - 1)  # what one key may run at once
        self.busy = 0
        self.refused = 0
        self._executor: ThreadPoolExecutor | None = None
        self._turns: dict[str, tuple[asyncio.Semaphore, int]] = {}  # key -> (its turns, users)

    @contextlib.asynccontextmanager
    async def slot(self, owner: str | None = None) -> AsyncIterator[None]:
        """Hold one of the pool's slots (for work that runs its own threads, as MCP
        tools do), or raise Busy when all are taken; `owner` (a key's name) waits for
        one of its own `share` turns first."""
        if self.busy >= self.slots:
            self.refused += 1
            raise Busy(
                f"The server is busy with expensive requests ({self.slots} at once). "
                f"Retry after {RETRY_AFTER} s.",
                {"retryAfter": RETRY_AFTER},
            )
        self.busy += 1
        try:
            if owner is None:
                yield
            else:
                async with self._turn(owner):
                    yield
        finally:
            self.busy -= 1

    @contextlib.asynccontextmanager
    async def _turn(self, owner: str) -> AsyncIterator[None]:
        turns, users = self._turns.get(owner) or (asyncio.Semaphore(self.share), 0)
        self._turns[owner] = (turns, users + 1)
        try:
            async with turns:
                yield
        finally:
            turns, users = self._turns[owner]
            if users == 1:
                del self._turns[owner]  # keys that are not waiting keep no state
            else:
                self._turns[owner] = (turns, users - 1)

    async def run(self, fn: Callable[[], T], owner: str | None = None) -> T:
        """Run `fn` on the pool's threads and return its result (Busy when full)."""
        async with self.slot(owner):
            if self._executor is None:
                self._executor = ThreadPoolExecutor(self.threads, thread_name_prefix="edukg-work")
            return await asyncio.get_running_loop().run_in_executor(self._executor, fn)

    def status(self) -> dict[str, int]:
        """Figures for the keyed /healthz details."""
        return {
            "threads": self.threads,
            "slots": self.slots,
            "busy": self.busy,
            "perKey": self.share,
            "refused": self.refused,
        }

    def close(self) -> None:
        """Stop the threads once their work is done."""
        if self._executor is not None:
            self._executor.shutdown(wait=True)
            self._executor = None
