"""CFPackages on the largest framework: time to first byte, total time, worker memory.

    python -m bench.case_package [--export DIR] [--db FILE] [--rounds 5]

Loads the export (the full-scale generated one by default) unless the database exists,
finds the framework with the most items, serves it with one worker (CASE paths public,
response cache and CASE answer cache off) and fetches `/ims/case/v1p1/CFPackages/{id}` `--rounds` times,
streaming the body. Prints medians and the worker's memory once it has settled (its
startup check of the file done) and after the requests: peak resident (VmHWM, which
counts file pages SQLite maps in) and its own memory (RssAnon). Linux only (reads /proc).
"""

from __future__ import annotations

import argparse
import sqlite3
import statistics
import subprocess
import time
from pathlib import Path

import httpx

from harness.processes import EDUKG, free_port, wait_port

ROOT = Path(__file__).resolve().parents[1]


def _memory_kib(pid: int) -> dict[str, int]:
    """VmHWM (peak resident, counting the database file's pages mapped in by SQLite's mmap)
    and RssAnon (the process's own memory: heap, objects)."""
    found = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        name, _, value = line.partition(":")
        if name in ("VmHWM", "RssAnon"):
            found[name] = int(value.split()[0])
    return found


def _settled(port: int) -> None:
    """Until the worker's check of the opened file (a pass over every record) is done, so
    that its memory is not counted as the package's."""
    for _ in range(600):
        ready = httpx.get(f"http://127.0.0.1:{port}/readyz", timeout=10)
        if ready.status_code == 200 and ready.json().get("integrity") == "ok":
            return
        time.sleep(0.5)


def _largest(db: str) -> tuple[str, int]:
    conn = sqlite3.connect(db)
    try:
        framework, count = conn.execute(
            "SELECT framework, count(*) FROM membership GROUP BY framework ORDER BY 2 DESC LIMIT 1"
        ).fetchone()
        (case_uuid,) = conn.execute(
            "SELECT case_uuid FROM docs WHERE identifier = ?", (framework,)
        ).fetchone()
        return str(case_uuid), int(count)
    finally:
        conn.close()


def _fetch(url: str) -> tuple[float, float, int]:
    started = time.perf_counter()
    first = None
    size = 0
    with httpx.stream("GET", url, timeout=300) as response:
        response.raise_for_status()
        for chunk in response.iter_raw():
            if first is None:
                first = time.perf_counter() - started
            size += len(chunk)
    return first or 0.0, time.perf_counter() - started, size


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--export", default=str(ROOT / ".bench" / "export"))
    parser.add_argument("--db", default=str(ROOT / ".bench" / "case.db"))
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    edukg = [*EDUKG]
    if not Path(args.db).exists():
        subprocess.run([*edukg, "load", args.export, "--db", args.db, "--no-index"], check=True)
    case_uuid, items = _largest(args.db)
    port = free_port()
    options = [
        "--port",
        str(port),
        "--case-public",
        "--no-access-log",
        "--response-cache-mb",
        "0",
        "--case-cache-mb",
        "0",
    ]  # fmt: skip: every round builds the package
    server = subprocess.Popen([*edukg, "serve", "--db", args.db, *options])
    try:
        wait_port(port)
        _settled(port)
        before = _memory_kib(server.pid)
        url = f"http://127.0.0.1:{port}/ims/case/v1p1/CFPackages/{case_uuid}"
        runs = [_fetch(url) for _ in range(args.rounds)]
        after = _memory_kib(server.pid)
    finally:
        server.terminate()
        server.wait(timeout=30)
    first = statistics.median(r[0] for r in runs)
    total = statistics.median(r[1] for r in runs)
    print(f"largest framework {case_uuid}: {items:,} items, package {runs[0][2] / 1e6:.1f} MB")
    print(f"time to first byte, median of {args.rounds}: {first * 1000:.0f} ms")
    print(f"total, median of {args.rounds}: {total * 1000:.0f} ms")
    for name in ("VmHWM", "RssAnon"):
        print(
            f"worker {name}: {before[name] / 1024:.0f} MiB settled, {after[name] / 1024:.0f} MiB after"
        )


if __name__ == "__main__":
    main()
