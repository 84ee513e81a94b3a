"""Computing the changes of a pair of releases in the background: `edukg diff` in a
process of its own, so that its minutes of reading never hold the server's interpreter.

One job at a time per server process (a request for another pair meanwhile gets the
same 503 and asks again); a pair whose job failed is not retried for a while. Across
processes and hosts the change store's claim lets one job compute a pair.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time

_RETRY = 30.0  # seconds before a failed pair's job is started again


class DiffJobs:
    """Starts `edukg diff OLDER NEWER --quiet` against one database."""

    def __init__(self, db: str) -> None:
        self._db = db
        self._running: subprocess.Popen[bytes] | None = None
        self._started: dict[tuple[str, str], float] = {}
        self._lock = threading.Lock()

    def start(self, older: str, newer: str) -> None:
        """Begin computing the pair, unless a job runs or this pair's started recently.

        The versions are kept releases' names (checked by the caller), which start with a
        letter or digit: never taken for options."""
        with self._lock:
            if self._running is not None and self._running.poll() is None:
                return
            now = time.monotonic()
            if now - self._started.get((older, newer), -_RETRY) < _RETRY:
                return
            self._started[(older, newer)] = now
            # The database goes by the environment: a URL with a password stays out of
            # the process list.
            self._running = subprocess.Popen(
                [sys.executable, "-m", "edukg.cli", "diff", older, newer, "--quiet"],
                env={**os.environ, "EDUKG_DB": self._db},
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )

    def close(self) -> None:
        """Stop a running job (its claim lapses; the next request for the pair starts
        another)."""
        job, self._running = self._running, None
        if job is not None and job.poll() is None:
            job.terminate()
            try:
                job.wait(5)
            except subprocess.TimeoutExpired:
                job.kill()
                job.wait()
