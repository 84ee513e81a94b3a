"""Expensive requests beside the event loop, on a few threads, shared fairly between keys.

A search, an MCP tool call or a page of a thousand records takes milliseconds of work;
run on the event loop, one client sending many of them delays every cheap lookup
behind them. Here they run on a small thread pool (SQLite, NumPy and the JSON encoder
release the interpreter lock for most of that time), at most `threads` at once. Cheap
lookups stay on the loop.

How the threads are shared (docs/security.md, "Sharing the work"):

- one key runs at most `threads - 1` requests at once (one, on two cores), so another
  key's request finds a thread free however much the first sends;
- a key may have at most `per_key` more requests waiting for its turn; beyond that its
  requests are refused with 429 and Retry-After, and nobody else's are touched;
- when a thread frees, it goes to the waiting key served longest ago (a key never
  served first), so a key that arrives while others are busy gets the next thread,
  within the time one request takes, however many keys are waiting;
- at most `threads + waiting` requests are held in all; when that is full, the key with
  the most requests waiting gives its newest one up (503) for a key with fewer, and a
  request is refused at once (503, Retry-After) only when no key holds more than its own.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import itertools
import queue
import threading
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

from edukg.model.errors import RateLimitError, ServiceUnavailableError

T = TypeVar("T")

RETRY_AFTER = 1  # seconds: expensive work is short, a slot frees up quickly
PER_KEY_WAITING = 8  # a key's requests waiting for its turn, beyond those running
HISTORY = 4096  # keys whose last turn is remembered


class Busy(ServiceUnavailableError):
    """Every slot for expensive work is taken: 503, with Retry-After."""


class KeyQueueFull(RateLimitError):
    """This key already has its share running and PER_KEY_WAITING waiting: 429."""


@dataclass
class _Key:
    """One key's place in the pool: what it runs, what waits, when it was last served."""

    name: str
    running: int = 0
    waiting: collections.deque[asyncio.Future[None]] = field(default_factory=collections.deque)
    served: int = -1  # the pool's grant count when this key last got a thread (-1: never)


class WorkPool:
    """A bounded pool for expensive requests (one per worker process)."""

    def __init__(self, threads: int = 2, waiting: int = 8,
                 per_key: int = PER_KEY_WAITING) -> None:  # fmt: skip
        self.threads = threads
        self.slots = threads + waiting
        self.share = max(1, threads - 1)  # what one key may run at once
        self.per_key = per_key
        self.busy = 0  # requests held: running or waiting
        self.running = 0  # of keyed requests
        self.refused = 0
        self._threads = _Threads(threads)
        self._keys: dict[str, _Key] = {}
        self._grants = itertools.count()
        # When each key was last served, kept while it is idle too (the keys a server
        # has are few; the oldest are forgotten past HISTORY).
        self._history: collections.OrderedDict[str, int] = collections.OrderedDict()

    @contextlib.asynccontextmanager
    async def slot(self, owner: str | None = None) -> AsyncIterator[None]:
        """Hold one of the pool's slots (for work that runs its own threads, as MCP
        tools do), or raise Busy (503) or KeyQueueFull (429); `owner` (a key's name)
        waits for its fair turn at a thread first."""
        if owner is None:
            if self.busy >= self.slots:
                raise self._full()
            self.busy += 1
            try:
                yield
            finally:
                self.busy -= 1
            return
        key = self._keys.get(owner)
        if key is None:
            key = self._keys[owner] = _Key(owner, served=self._history.get(owner, -1))
        try:
            self._admit(key)
        except BaseException:
            self._forget(owner, key)
            raise
        self.busy += 1
        try:
            await self._turn(key)
            try:
                yield
            finally:
                self._done(key)
        finally:
            self.busy -= 1
            self._forget(owner, key)

    def _admit(self, key: _Key) -> None:
        """Refuse a request the key or the pool has no room for."""
        if key.running >= self.share and len(key.waiting) >= self.per_key:
            self.refused += 1
            raise KeyQueueFull(
                f"This key already has {key.running + len(key.waiting)} expensive requests"
                f" running or waiting. Retry after {RETRY_AFTER} s.",
                {"retryAfter": RETRY_AFTER},
            )
        if self.busy < self.slots:
            return
        # Full: the key holding the most waiting requests gives its newest one up, if it
        # holds more than this key would; otherwise this request is the one refused.
        heaviest = max(self._keys.values(), key=lambda k: len(k.waiting))
        if len(heaviest.waiting) > len(key.waiting) + 1:
            bumped = heaviest.waiting.pop()
            if not bumped.done():
                bumped.set_exception(self._full())
            return
        raise self._full()

    async def _turn(self, key: _Key) -> None:
        """Wait until this key is granted a thread (at once when one is free for it)."""
        turn: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        key.waiting.append(turn)
        self._dispatch()
        try:
            await turn
        except BaseException:
            if turn.done() and not turn.cancelled() and turn.exception() is None:
                self._done(key)  # granted, then cancelled before it ran: hand it on
            elif turn in key.waiting:
                key.waiting.remove(turn)
            raise

    def _grant(self, key: _Key) -> None:
        self.running += 1
        key.running += 1
        key.served = self._history[key.name] = next(self._grants)
        self._history.move_to_end(key.name)
        if len(self._history) > HISTORY:
            self._history.popitem(last=False)

    def _done(self, key: _Key) -> None:
        self.running -= 1
        key.running -= 1
        self._dispatch()

    def _dispatch(self) -> None:
        """Hand free threads to waiting keys, the key served longest ago first."""
        while self.running < self.threads:
            ready = [k for k in self._keys.values() if k.waiting and k.running < self.share]
            if not ready:
                return
            key = min(ready, key=lambda k: k.served)
            turn = key.waiting.popleft()
            if turn.done():  # refused meanwhile
                continue
            self._grant(key)
            turn.set_result(None)

    def _forget(self, owner: str, key: _Key) -> None:
        """Keys that run and wait for nothing keep no state."""
        if not key.running and not key.waiting and self._keys.get(owner) is key:
            del self._keys[owner]

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
            "perKeyWaiting": self.per_key,
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
    (docs/benchmarks.md, "The scale-out tier"): on PostgreSQL every request takes the hop.
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
