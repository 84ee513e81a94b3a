"""Worker processes on each backend: 1, 2 and 4 `edukg serve` workers, SQLite and PostgreSQL.

    python -m bench.workers [--export DIR] [--seconds 8] [--rounds 3]

The same request mix and client as bench/backends.py (wrk, 32 connections, response
cache off), but nothing pinned: the workers, PostgreSQL and wrk share the machine's
cores, as they would on one host. On a 2-core machine this says how the load spreads,
not how many nodes a real database host serves. Medians of the rounds.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
from pathlib import Path

from bench.backends import key_for, loaded, wrk
from bench.serve import mix
from harness.processes import EDUKG, free_port, wait_port

ROOT = Path(__file__).resolve().parents[1]


def _serve(db: str, workers: int) -> tuple[subprocess.Popen[bytes], int]:
    port = free_port()
    proc = subprocess.Popen(
        [*EDUKG, "serve", "--db", db, "--port", str(port), "--workers", str(workers),
         "--no-access-log", "--response-cache-mb", "0"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    wait_port(port)
    return proc, port


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--export", default=str(ROOT.parent / "shared" / "data" / "kg-sample"))
    parser.add_argument("--seconds", type=int, default=8)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    if not shutil.which("wrk"):
        print("needs wrk: apt-get install wrk", file=sys.stderr)
        return 2
    figures: dict[tuple[str, int], list[tuple[float, float]]] = {}
    with loaded(args.export) as (dbs, _):
        paths = [p for _, weight, p, _ in mix(dbs["sqlite"]) for _ in range(weight)]
        keys = {backend: key_for(db) for backend, db in dbs.items()}
        for _ in range(args.rounds):
            for workers in (1, 2, 4):
                for backend, db in dbs.items():
                    proc, port = _serve(db, workers)
                    try:
                        rps, p99, errors = wrk(f"http://127.0.0.1:{port}", paths, keys[backend],
                                               args.seconds)  # fmt: skip
                        assert errors == 0, (backend, workers, errors)
                        figures.setdefault((backend, workers), []).append((rps, p99))
                    finally:
                        proc.terminate()
                        proc.wait()
    for (backend, workers), runs in figures.items():
        rps = statistics.median(r for r, _ in runs)
        p99 = statistics.median(p for _, p in runs)
        print(f"{backend:<9} {workers} worker(s)  {rps:8,.0f} req/s   p99 {p99:6.1f} ms")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
