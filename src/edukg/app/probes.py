"""Readiness: whether this server can take traffic, and, for a valid key, why not; and
how far a semantic index being built has come."""

from __future__ import annotations

import time

import orjson

from edukg.app.http import JSON, Answer
from edukg.model.errors import ServiceUnavailableError
from edukg.store import KeyStore, Store
from edukg.store.base import StoreUnavailable


def readiness(store: Store, keys: KeyStore, keyed: bool) -> Answer:
    """200 when the data is loaded, its database and the keys reachable and the file
    sound; else 503 with the checks (where a damaged file is damaged: for a key only)."""
    checks: dict[str, object] = {}
    try:
        info = store.info()
        checks["database"] = "reachable" if store.answering() else "not answering"
    except StoreUnavailable:
        info = None
        checks["database"] = "unreachable"
    checks["dataLoaded"] = info is not None
    verdict = store.integrity()
    if verdict.startswith("damaged") and not keyed:
        verdict = "damaged"
    checks["integrity"] = verdict
    try:
        if checks["database"] == "not answering":  # not ready either way: do not wait on it
            checks["keys"] = "not checked"
        else:
            keys.verify("readiness-probe")
            checks["keys"] = "reachable"
    except StoreUnavailable:
        checks["keys"] = "unreachable"
    ready = info is not None and checks["keys"] == "reachable" and not verdict.startswith("damaged")
    ready = ready and checks["database"] == "reachable"
    if not ready:
        raise ServiceUnavailableError("Not ready to serve.", checks)
    body = orjson.dumps(
        {"status": "ready", "dataVersion": info.data_version if info else None, **checks}
    )
    return 200, body, [JSON]


class IndexWatch:
    """The progress of a semantic index being built (by `edukg index` in any process),
    with an estimate of the time left from the pace this server has seen, and word that
    the build stopped when it has made no progress for `stall_seconds` (a killed index
    writes nothing more; `edukg index` resumes where it stopped)."""

    def __init__(self, stall_seconds: float = 120.0) -> None:
        self.stall_seconds = stall_seconds
        self._first: dict[int, tuple[float, int]] = {}  # texts in all -> (when, done)
        self._moved: dict[int, tuple[float, int]] = {}  # texts in all -> (when, done) last

    def status(self, store: Store) -> dict[str, object]:
        """`{"indexing": {"done", "total", "etaSeconds"}}` while incomplete (with
        `"stopped": true` and a `note` once it has stalled), else `{}`."""
        found = store.indexing()
        if found is None:
            return {}
        done, total = found
        now = time.monotonic()
        seen = self._first.get(total)
        if seen is None or done < seen[1]:  # first look, or the index began again
            seen = self._first[total] = (now, done)
            if len(self._first) > 8:
                self._first.pop(next(iter(self._first)))
        moved = self._moved.get(total)
        if moved is None or done != moved[1]:
            moved = self._moved[total] = (now, done)
            if len(self._moved) > 8:
                self._moved.pop(next(iter(self._moved)))
        if now - moved[0] >= self.stall_seconds:
            return {"indexing": {
                "done": done, "total": total, "etaSeconds": None, "stopped": True,
                "note": f"No progress for {now - moved[0]:.0f} s: the index build seems to"
                " have stopped (was it killed?). Run `edukg index` with this database to"
                " resume it where it stopped; search ranks by words until it is done.",
            }}  # fmt: skip
        pace = (done - seen[1]) / (now - seen[0]) if done > seen[1] else 0.0
        eta = round((total - done) / pace, 1) if pace > 0 else None
        return {"indexing": {"done": done, "total": total, "etaSeconds": eta}}
