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
- when a thread frees, it goes to the waiting key that has run the least on the pool's
  threads lately (thread-seconds, counted at half after HALF_LIFE seconds; a key new to
  the pool has run nothing), so a light key, new or served a moment ago, gets the next
  thread within the time one request takes, however many heavy keys wait;
- at most `threads + waiting` requests are held in all. When that is full, a request of
  a key holding fewer places (running and waiting) than another takes a place from the
  key holding the most: that key's newest waiting request is refused (503, Retry-After).
  Of keys holding equally many, the one that has held the most places lately gives way
  (a key that keeps a request waiting all the time before one whose requests come and
  go). A request is refused itself only when no key holds more places than its own;
- `room` tells, before a request's body is read, whether it would be refused now;
- a waiting request whose client has gone (it closed the connection) is dropped: no
  thread works on an answer nobody will read.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import itertools
import math
import queue
import threading
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

from edukg.model.errors import ApiError, RateLimitError, ServiceUnavailableError

T = TypeVar("T")
Gone = Callable[[], Awaitable[object]]  # ends when the request's client has gone

RETRY_AFTER = 1  # seconds: expensive work is short, a slot frees up quickly
PER_KEY_WAITING = 8  # a key's requests waiting for its turn, beyond those running
HISTORY = 4096  # keys whose use of the pool is remembered while they are idle
# Seconds over which a key's use of the pool counts half: long enough that a flood of
# one request at a time weighs more than a key's occasional short requests, short
# enough that a key that stopped flooding a minute ago counts as light again.
HALF_LIFE = 10.0
_MEAN_LIFE = HALF_LIFE / math.log(2)  # what a count held for ever adds up to


class Busy(ServiceUnavailableError):
    """Every slot for expensive work is taken: 503, with Retry-After."""


class ClientGone(Busy):
    """Dropped while it waited: its client closed the connection (nobody reads this)."""


class KeyQueueFull(RateLimitError):
    """This key already has its share running and PER_KEY_WAITING waiting: 429, with
    Retry-After."""

    retry_after = RETRY_AFTER  # the header the pipeline writes (pipeline._refusal_headers)


@dataclass(eq=False)
class _Key:
    """One key's place in the pool: what it runs, what waits, and how much of the pool's
    threads and places it has held lately."""

    name: str
    running: int = 0
    waiting: collections.deque[asyncio.Future[None]] = field(default_factory=collections.deque)
    served: int = -1  # the pool's grant count when this key last got a thread (-1: never)
    # Seconds of threads it ran on, and of places it held (running or waiting), each
    # counted at half after HALF_LIFE seconds; as of `stamp`.
    used: float = 0.0
    held: float = 0.0
    stamp: float = 0.0

    @property
    def places(self) -> int:
        """The pool's places it holds: running and waiting."""
        return self.running + len(self.waiting)

    def advance(self, now: float) -> None:
        """Bring `used` and `held` to `now`, at the counts it has had since `stamp`
        (called before each change of them, so the counts held all along)."""
        elapsed = now - self.stamp
        if elapsed <= 0:
            return
        kept = 0.5 ** (elapsed / HALF_LIFE)
        gained = (1 - kept) * _MEAN_LIFE  # what a count of 1 adds over `elapsed`
        self.used = self.used * kept + self.running * gained
        self.held = self.held * kept + self.places * gained
        self.stamp = now


class WorkPool:
    """A bounded pool for expensive requests (one per worker process)."""

    def __init__(self, threads: int = 2, waiting: int = 8, per_key: int = PER_KEY_WAITING,
                 clock: Callable[[], float] = time.monotonic) -> None:  # fmt: skip
        self.threads = threads
        self.slots = threads + waiting
        self.share = max(1, threads - 1)  # what one key may run at once
        self.per_key = per_key
        self.busy = 0  # requests held: running or waiting
        self.running = 0  # of keyed requests
        self.refused = 0
        self.dropped = 0  # waiting requests whose client had gone
        self._clock = clock  # what a key's use of the pool is measured with
        self._threads = _Threads(threads)
        self._keys: dict[str, _Key] = {}  # keys with requests running or waiting
        self._grants = itertools.count()
        # Every key's use of the pool, kept while it is idle too (the keys a server has
        # are few; the oldest are forgotten past HISTORY).
        self._history: collections.OrderedDict[str, _Key] = collections.OrderedDict()

    @contextlib.asynccontextmanager
    async def slot(self, owner: str | None = None, gone: Gone | None = None,
                   ) -> AsyncIterator[None]:  # fmt: skip
        """Hold one of the pool's slots (for work that runs its own threads, as MCP
        tools do), or raise Busy (503) or KeyQueueFull (429); `owner` (a key's name)
        waits for its fair turn at a thread first, and is dropped (ClientGone) should
        `gone` end before that turn."""
        if owner is None:
            if self.busy >= self.slots:
                raise self._full()
            self.busy += 1
            try:
                yield
            finally:
                self.busy -= 1
            return
        key = self._key(owner)
        try:
            self._admit(key)
        except BaseException:
            self._forget(key)
            raise
        self.busy += 1
        try:
            await self._turn(key, gone)
            try:
                yield
            finally:
                self._done(key)
        finally:
            self.busy -= 1
            self._forget(key)

    def room(self, owner: str) -> None:
        """Raise what a request of `owner`'s would be refused with now (KeyQueueFull,
        Busy), taking nothing: asked before a body is read and parsed, so that work the
        key may not run costs no more than its head."""
        refusal, _ = self._verdict(self._keys.get(owner) or _Key(owner))
        if refusal is not None:
            raise refusal

    def _key(self, owner: str) -> _Key:
        key = self._keys.get(owner)
        if key is None:
            key = self._history.get(owner) or _Key(owner)
            self._keys[owner] = key
        return key

    def _admit(self, key: _Key) -> None:
        """Refuse a request the key or the pool has no room for, or make room for it."""
        refusal, victim = self._verdict(key)
        if refusal is not None:
            raise refusal
        if victim is not None:
            victim.advance(self._clock())
            bumped = victim.waiting.pop()  # its newest: the one that waited least
            if not bumped.done():
                bumped.set_exception(self._full())

    def _verdict(self, key: _Key) -> tuple[ApiError | None, _Key | None]:
        """What admitting one more request of `key`'s means: a refusal, or the key that
        gives a place up for it (None: there is room)."""
        if key.running >= self.share and len(key.waiting) >= self.per_key:
            self.refused += 1
            return KeyQueueFull(
                f"This key already has {key.places} expensive requests running or waiting."
                f" Retry after {RETRY_AFTER} s.",
                {"retryAfter": RETRY_AFTER},
            ), None
        if self.busy < self.slots:
            return None, None
        # Full: a key holding more places than this one gives its newest waiting request
        # up; of those holding the most, the one that has held the most places lately (a
        # key that keeps one request waiting all the time before one that comes and goes).
        holders = [k for k in self._keys.values() if k.waiting and k is not key]
        most = max((k.places for k in holders), default=0)
        if most <= key.places:
            return self._full(), None
        now = self._clock()
        for k in holders:
            k.advance(now)
        return None, max((k for k in holders if k.places == most),
                         key=lambda k: (k.held, k.used, k.served))  # fmt: skip

    async def _turn(self, key: _Key, gone: Gone | None) -> None:
        """Wait until this key is granted a thread (at once when one is free for it)."""
        turn: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        key.advance(self._clock())
        key.waiting.append(turn)
        self._dispatch()
        watch = None if turn.done() or gone is None else self._watch(gone, turn, key)
        try:
            await turn
        except BaseException:
            if turn.done() and not turn.cancelled() and turn.exception() is None:
                self._done(key)  # granted, then cancelled before it ran
            elif turn in key.waiting:
                key.advance(self._clock())
                key.waiting.remove(turn)
            raise
        finally:
            if watch is not None:
                watch.cancel()

    def _watch(self, gone: Gone, turn: asyncio.Future[None], key: _Key) -> asyncio.Future[object]:
        """Drop the waiting `turn` once `gone` ends (its client closed the connection)."""

        def dropped(watch: asyncio.Future[object]) -> None:
            if watch.cancelled() or watch.exception() is not None or turn.done():
                return
            self.dropped += 1
            if turn in key.waiting:  # its place is free from now on, not once it resumes
                key.advance(self._clock())
                key.waiting.remove(turn)
            turn.set_exception(ClientGone("The client closed the connection before its turn."))

        watch = asyncio.ensure_future(gone())
        watch.add_done_callback(dropped)
        return watch

    def _grant(self, key: _Key) -> None:
        self.running += 1
        key.running += 1
        key.served = next(self._grants)
        self._history[key.name] = key
        self._history.move_to_end(key.name)
        if len(self._history) > HISTORY:
            self._history.popitem(last=False)

    def _done(self, key: _Key) -> None:
        key.advance(self._clock())
        self.running -= 1
        key.running -= 1
        self._dispatch()

    def _dispatch(self) -> None:
        """Hand free threads to waiting keys, the key that used the least lately first."""
        while self.running < self.threads:
            ready = [k for k in self._keys.values() if k.waiting and k.running < self.share]
            if not ready:
                return
            now = self._clock()
            for k in ready:
                k.advance(now)
            key = min(ready, key=lambda k: (k.used, k.served))
            turn = key.waiting.popleft()
            if turn.done():  # refused meanwhile
                continue
            self._grant(key)
            turn.set_result(None)

    def _forget(self, key: _Key) -> None:
        """Keys that run and wait for nothing are kept only in the history."""
        if not key.places and self._keys.get(key.name) is key:
            del self._keys[key.name]

    async def run(self, fn: Callable[[], T], owner: str | None = None,
                  gone: Gone | None = None) -> T:  # fmt: skip
        """Run `fn` on the pool's threads and return its result (Busy when full)."""
        if owner is not None:
            async with self.slot(owner, gone):
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
            "dropped": self.dropped,
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
