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
import queue
import threading
from collections.abc import AsyncIterator, Callable
from typing import Any, TypeVar

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
        self._threads = _Threads(threads)
        self._turns: dict[str, tuple[asyncio.Semaphore, int]] = {}  # key -> (its turns, users)

    @contextlib.asynccontextmanager
    async def slot(self, owner: str | None = None) -> AsyncIterator[None]:
        """Hold one of the pool's slots (for work that runs its own threads, as MCP
        tools do), or raise Busy when all are taken; `owner` (a key's name) waits for
        one of its own `share` turns first."""
        if self.busy >= self.slots:
            raise self._full()
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
        if owner is not None:
            async with self.slot(owner):
                return await self._threads.run(fn)
        # The network pool's hop, every request on PostgreSQL takes: no context manager.
        if self.busy >= self.slots:
            raise self._full()
        self.busy += 1
        try:
            return await self._threads.run(fn)
        finally:
            self.busy -= 1

    def _full(self) -> Busy:
        self.refused += 1
        return Busy(
            f"The server is busy with expensive requests ({self.slots} at once). "
            f"Retry after {RETRY_AFTER} s.",
            {"retryAfter": RETRY_AFTER},
        )

    def status(self) -> dict[str, int]:
        """Figures for the keyed /healthz details."""
        return {
            "threads": self.threads,
            "slots": self.slots,
            "busy": self.busy,
            "perKey": self.share,
            "refused": self.refused,
        }

    @property
    def made(self) -> int:
        """Threads made so far (they are made as concurrent work needs them)."""
        return self._threads.made

    def close(self) -> None:
        """Stop the threads once their work is done."""
        self._threads.close()


_STOP = object()


class _Threads:
    """At most `most` threads, made as concurrent work needs them, taking work from one
    queue and handing each result straight to its awaiting coroutine's loop.

    What `run_in_executor` does through concurrent futures, chained futures and a
    condition per call costs 50-110 µs of CPU a call here; this, 5-10 µs under load
    (docs/benchmarks.md, twelfth round): on PostgreSQL every request takes the hop.
    """

    def __init__(self, most: int) -> None:
        self.most = most
        self.made = 0
        self._idle = 0
        self._queue: queue.SimpleQueue[Any] = queue.SimpleQueue()
        self._lock = threading.Lock()
        self._all: list[threading.Thread] = []

    def run(self, fn: Callable[[], T]) -> asyncio.Future[T]:
        loop = asyncio.get_running_loop()
        future: asyncio.Future[T] = loop.create_future()
        with self._lock:
            if self._idle <= 0 and self.made < self.most:
                self.made += 1
                thread = threading.Thread(target=self._work, name=f"edukg-work-{self.made}",
                                          daemon=True)  # fmt: skip
                self._all.append(thread)
                thread.start()
            else:
                self._idle -= 1  # this item is one an idle thread will take
        self._queue.put((fn, future, loop))
        return future

    def _work(self) -> None:
        while True:
            item = self._queue.get()
            if item is _STOP:
                return
            fn, future, loop = item
            try:
                result, error = fn(), None
            except BaseException as exc:  # handed to the awaiting coroutine
                result, error = None, exc
            with self._lock:
                self._idle += 1
            with contextlib.suppress(RuntimeError):  # the loop closed meanwhile
                loop.call_soon_threadsafe(_settle, future, result, error)

    def close(self) -> None:
        for _ in self._all:
            self._queue.put(_STOP)
        for thread in self._all:
            thread.join(timeout=30)
        self._all = []
        self.made = self._idle = 0


def _settle(future: asyncio.Future[Any], result: Any, error: BaseException | None) -> None:
    if future.cancelled():
        return
    if error is None:
        future.set_result(result)
    else:
        future.set_exception(error)
