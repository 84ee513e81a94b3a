"""Looks at the local files ahead of the requests, not inside one.

A server on SQLite notices a new load (the data file replaced) and a revoke (the key
file's data_version moved) by looking at the files, at most every `store.LOCAL_RECHECK`
seconds. Done by whichever request came due, a look put a stat, a statement and a lock
of the key file inside an answer every few dozen requests. While requests come in, a
timer on the event loop looks every `every` seconds and lets the requests rely on it for
twice that, so no request looks; when a tick sees no request since the last one, the
timer stops, and the first request after a quiet spell looks for itself, as before
(docs/security.md: a revoke or a load is served within `every`).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from typing import Protocol

log = logging.getLogger("edukg")


class Looked(Protocol):
    """A part that looks at its own files (store.sqlite.SqliteStore, the key stores)."""

    def look(self, hold: float) -> None:
        """Look now; requests may rely on what was seen for `hold` seconds."""


class Watch:
    """The timer that looks at `parts` every `every` seconds while requests come in."""

    def __init__(self, parts: Sequence[Looked], every: float) -> None:
        self._parts = tuple(parts)
        self._every = every
        self._seen = False  # a request came since the last tick
        self._timer: asyncio.TimerHandle | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    @property
    def running(self) -> bool:
        """Whether the timer is armed (requests have come in lately)."""
        return self._timer is not None

    def noticed(self) -> None:
        """A request arrived (called on the event loop): the timer runs while they do."""
        self._seen = True
        if self._timer is None or self._loop is not asyncio.get_running_loop():
            # (another loop: a test client's; the old loop's timer no longer runs)
            self._loop = asyncio.get_running_loop()
            self._tick()

    def _tick(self) -> None:
        if not self._seen:
            self._timer = None  # quiet: the next request looks for itself and re-arms
            return
        self._seen = False
        for part in self._parts:
            try:
                part.look(2 * self._every)
            except Exception:  # a request that looks for itself reports the trouble
                log.debug("a look ahead of the requests failed", exc_info=True)
        assert self._loop is not None
        self._timer = self._loop.call_later(self._every, self._tick)

    def stop(self) -> None:
        """Stop the timer (the app is shutting down)."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
