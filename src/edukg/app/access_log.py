"""The access log: one JSON line per request on the `edukg.access` logger, written by the
pipeline's send stage (and by an entrance that sends for itself, as /mcp does)."""

from __future__ import annotations

import logging
import time
from datetime import UTC, datetime

import orjson

from edukg.app.exchange import Exchange
from edukg.app.requests import redacted, redacted_query
from edukg.store.keys import KEY_PREFIX

access_log = logging.getLogger("edukg.access")


class AccessLog:
    """Writes the line of each request, when the log is on (`serve --no-access-log`)."""

    def __init__(self, on: bool) -> None:
        self.on = on

    def write(self, ex: Exchange, status: int) -> None:
        """One JSON line per request: no key, no headers, a bounded path."""
        if not self.on or not access_log.isEnabledFor(logging.INFO):
            return
        scope = ex.scope
        query = redacted_query(scope.get("query_string", b""), KEY_PREFIX)[:512]
        path = redacted(scope["path"][:512], KEY_PREFIX)  # a key pasted into a path too
        line = {
            "time": datetime.now(UTC).isoformat(timespec="milliseconds"),
            "requestId": ex.request_id,
            "key": ex.who,
            "method": scope["method"],
            "path": path + (f"?{query}" if query else ""),
            "status": status,
            "ms": round((time.perf_counter() - ex.started) * 1000, 3),
        }
        access_log.info(orjson.dumps(line).decode())
