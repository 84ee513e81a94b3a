"""Prometheus metrics: what a request costs on its way, and how the server's parts are.

A request adds to a few plain dictionaries (a counter and a latency histogram's bucket):
well under a microsecond, so the figures cost the hot path almost nothing
(docs/benchmarks.md). Each worker process of a server writes its figures to a file of
its own every second, in the server's private directory (adapters/metrics_files.py),
and `GET /metrics` (any worker) adds up every worker's file, its own taken live, and
renders them with `prometheus_client`: counters summed over every process that has run
since `serve` started (so they never go back; a worker killed outright loses what it
counted since its last write, up to a second), gauges over the live ones.
"""

from __future__ import annotations

import asyncio
import bisect
import contextlib
import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import orjson
from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.core import (
    CounterMetricFamily,
    GaugeMetricFamily,
    HistogramMetricFamily,
    Metric,
)

from edukg.adapters.metrics_files import usable
from edukg.model.processes import pid_alive

# Seconds: a cached answer takes well under a millisecond, an alignment up to seconds.
BUCKETS = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)
FLUSH_SECONDS = 1.0
CONTENT_TYPE = b"text/plain; version=0.0.4; charset=utf-8"
Figures = dict[str, Any]


class Metrics:
    """One process's figures; `parts` gives those of the app's parts when asked."""

    def __init__(self, directory: Path | None, parts: Callable[[bool], Figures]) -> None:
        self.directory = directory if directory is not None and usable(directory) else None
        self._parts = parts
        self.requests: dict[tuple[str, str, int], int] = {}  # (entrance, operation, status)
        self.latency: dict[tuple[str, str], list[float]] = {}  # buckets..., +Inf, sum
        self.events: dict[str, int] = {"rate_limited": 0, "database_errors": 0}
        self._task: asyncio.Task[None] | None = None

    def request(self, entrance: str, operation: str, status: int, seconds: float) -> None:
        """Count one answered request (the hot path: dictionary updates only)."""
        key = (entrance, operation, status)
        self.requests[key] = self.requests.get(key, 0) + 1
        row = self.latency.get((entrance, operation))
        if row is None:
            row = self.latency[(entrance, operation)] = [0.0] * (len(BUCKETS) + 2)
        row[bisect.bisect_left(BUCKETS, seconds)] += 1
        row[-1] += seconds

    def event(self, name: str) -> None:
        """Count one event (a rate-limit refusal, a database error)."""
        self.events[name] += 1

    def figures(self, data: bool = False) -> Figures:
        """This process's figures, as its file holds them; with `data`, also what it reads
        of the data (the release, index progress): asked only when scraped, off the event
        loop where the database is networked, never by the file's writer."""
        return {
            "pid": os.getpid(),
            "requests": [[*key, n] for key, n in self.requests.items()],
            "latency": [[*key, row] for key, row in self.latency.items()],
            "events": dict(self.events),
            "parts": self._parts(data),
        }

    def start(self) -> None:
        """Write this process's file every FLUSH_SECONDS (from the event loop)."""
        if self.directory is not None and self._task is None:
            self._task = asyncio.get_running_loop().create_task(self._flushing())

    async def stop(self) -> None:
        """Stop writing, after a last write."""
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None
            self._write()

    async def _flushing(self) -> None:
        while True:
            await asyncio.sleep(FLUSH_SECONDS)
            with contextlib.suppress(OSError):  # a full disk costs the figures, not requests
                self._write()

    def _write(self) -> None:
        assert self.directory is not None
        self.directory.mkdir(parents=True, exist_ok=True)
        path = self.directory / f"worker-{os.getpid()}.json"
        part = path.with_suffix(".part")
        part.write_bytes(orjson.dumps(self.figures()))
        os.replace(part, path)

    def render(self) -> bytes:
        """Every process's figures in Prometheus's text format."""
        registry = CollectorRegistry(auto_describe=False)
        registry.register(_Collector(list(self._all())))
        return bytes(generate_latest(registry))

    def _all(self) -> Iterator[tuple[Figures, bool]]:
        """(figures, live) of every process: this one's now, the others' from their files."""
        mine = self.figures(data=True)  # the release and index: the scraped worker's
        yield mine, True
        if self.directory is None or not self.directory.is_dir():
            return
        for path in self.directory.glob("worker-*.json"):
            with contextlib.suppress(OSError, orjson.JSONDecodeError):
                figures = orjson.loads(path.read_bytes())
                if figures.get("pid") != mine["pid"]:
                    pid = int(figures.get("pid", 0))
                    yield figures, pid > 0 and pid_alive(pid)


class _Collector:
    """The sums of every process's figures, as metric families."""

    def __init__(self, processes: list[tuple[Figures, bool]]) -> None:
        self._processes = processes

    def collect(self) -> Iterator[Metric]:
        processes = self._processes
        yield from _requests(processes)
        yield from _events(processes)
        yield from _parts(processes)


def _requests(processes: list[tuple[Figures, bool]]) -> Iterator[Metric]:
    counts: dict[tuple[str, str, str], float] = {}
    rows: dict[tuple[str, str], list[float]] = {}
    for figures, _ in processes:
        for entrance, operation, status, n in figures["requests"]:
            key = (entrance, operation, str(status))
            counts[key] = counts.get(key, 0) + n
        for entrance, operation, row in figures["latency"]:
            total = rows.setdefault((entrance, operation), [0.0] * len(row))
            for i, value in enumerate(row):
                total[i] += value
    requests = CounterMetricFamily("edukg_requests", "Requests answered, by entrance, "
                                   "operation and status.", labels=["entrance", "operation",
                                                                    "status"])  # fmt: skip
    for key, n in sorted(counts.items()):
        requests.add_metric(list(key), n)
    yield requests
    latency = HistogramMetricFamily("edukg_request_seconds", "Seconds from a request's "
                                    "arrival to its answer's leaving, by entrance and "
                                    "operation.", labels=["entrance", "operation"])  # fmt: skip
    for (entrance, operation), row in sorted(rows.items()):
        running, buckets = 0.0, []
        for bound, n in zip((*map(str, BUCKETS), "+Inf"), row[:-1], strict=True):
            running += n
            buckets.append((bound, running))
        latency.add_metric([entrance, operation], buckets, row[-1])
    yield latency


def _events(processes: list[tuple[Figures, bool]]) -> Iterator[Metric]:
    helps = {"rate_limited": "Requests refused by a rate limit (429).",
             "database_errors": "Requests the database failed (unreachable, too slow)."}  # fmt: skip
    for name, text in helps.items():
        family = CounterMetricFamily(f"edukg_{name}", text)
        family.add_metric([], sum(f["events"].get(name, 0) for f, _ in processes))
        yield family


def _parts(processes: list[tuple[Figures, bool]]) -> Iterator[Metric]:
    """The app's parts: counters over every process, gauges over the live ones."""
    live = [f["parts"] for f, alive in processes if alive]
    every = [f["parts"] for f, _ in processes]
    for name, text, kind in _PART_METRICS:
        rows = every if kind == "counter" else live[:1] if kind == "shared" else live
        values = [float(p.get(name, 0)) for p in rows]
        family: CounterMetricFamily | GaugeMetricFamily = (
            CounterMetricFamily if kind == "counter" else GaugeMetricFamily
        )(f"edukg_{name}", text)
        # The index is the data's, not a process's: the scraped worker's figure.
        family.add_metric([], sum(values))
        yield family
    if live:
        release = GaugeMetricFamily("edukg_release_info", "The release served (1).",
                                    labels=["data_version", "content_id"])  # fmt: skip
        release.add_metric([str(live[0].get("data_version", "")),
                            str(live[0].get("content_id", ""))], 1)  # fmt: skip
        yield release


_PART_METRICS = (
    ("response_cache_hits", "Answers found in the response cache.", "counter"),
    ("response_cache_misses", "Answers the response cache did not hold.", "counter"),
    ("response_cache_bytes", "Bytes the response caches hold.", "gauge"),
    ("response_cache_entries", "Answers the response caches hold.", "gauge"),
    ("work_busy", "Expensive requests running or waiting for the work pool.", "gauge"),
    ("work_slots", "Expensive requests the work pools take at once (running and waiting).",
     "gauge"),
    ("work_refused", "Expensive requests refused because the work pool was full (503).",
     "counter"),
    ("database_busy", "Requests waiting on PostgreSQL or Redis (network threads in use).",
     "gauge"),
    ("database_threads", "Network threads (each with its database connection).", "gauge"),
    ("index_texts_done", "Texts the semantic index being built has embedded.", "shared"),
    ("index_texts_total", "Texts the semantic index being built will embed.", "shared"),
)  # fmt: skip


__all__ = ["Metrics"]
