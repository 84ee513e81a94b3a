"""What the app itself spends on a cached answer, without the HTTP server: microseconds
per request, and where they go.

    python -m bench.pipeline_cost [--before REV] [--rounds 5] [--profile] [--access-log]
                                  [--uncached]

Loads the sample into a temporary SQLite file, then calls the ASGI app directly with one
standard's request, over and over (every answer a response-cache hit), in this process:
the figure is the pipeline's own cost, apart from uvicorn's. With `--before REV` the same
for an earlier revision (a temporary worktree), alternated round by round in separate
processes; medians printed. `--profile` prints cProfile's per-function times for each
tree (the stages: app/pipeline.py). `--access-log` writes each request's log line (to
/dev/null) to measure what it costs. `--uncached`: the same lookup with the response cache
off, so that every request reads the store and builds its answer (what the cache does not
hold).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from harness.processes import EDUKG
from harness.revisions import checkout

ROOT = Path(__file__).resolve().parents[1]

SAMPLE = ROOT.parent / "shared" / "data" / "kg-sample"
_RUN = """
import asyncio, cProfile, logging, os, pstats, sqlite3, sys, time
from edukg.adapters.config import Settings
from edukg.app.core import EdukgApp
from edukg.store import open_key_store
db, log, profile, cache = sys.argv[1], sys.argv[2] == "1", sys.argv[3] == "1", int(sys.argv[4])
keys = open_key_store(db)
key = keys.create(f"cost{time.time_ns()}", rate=0)
keys.close()
if log:
    handler = logging.StreamHandler(open(os.devnull, "w"))
    access = logging.getLogger("edukg.access")
    access.addHandler(handler); access.setLevel(logging.INFO); access.propagate = False
app = EdukgApp(Settings(db=db, access_log=log, response_cache_mb=cache))
uuid = sqlite3.connect(db).execute("SELECT case_uuid FROM docs WHERE kind = 'standard'"
                                   " AND case_uuid IS NOT NULL ORDER BY identifier").fetchone()[0]
path = f"/knowledge-graph/v0/academic-standards/{uuid}"
scope = {"type": "http", "method": "GET", "path": path, "raw_path": path.encode(),
         "query_string": b"", "client": ("127.0.0.1", 5000),
         "headers": [(b"host", b"127.0.0.1:8000"), (b"x-api-key", key.encode()),
                     (b"user-agent", b"wrk")]}
async def receive():
    return {"type": "http.request", "body": b"", "more_body": False}
async def send(message):
    pass
async def run(n):
    for _ in range(n):
        await app(dict(scope), receive, send)
asyncio.run(run(2000))
started = time.perf_counter()
asyncio.run(run(50_000))
print((time.perf_counter() - started) / 50_000 * 1e6)
if profile:
    cProfile.run("asyncio.run(run(50_000))", "/tmp/edukg-pipeline.prof")
    pstats.Stats("/tmp/edukg-pipeline.prof", stream=sys.stderr).sort_stats("tottime").print_stats(25)
"""


def _cost(src: Path, db: str, log: bool, cache: int, profile: bool = False) -> float:
    done = subprocess.run(
        [sys.executable, "-c", _RUN, db, "1" if log else "0", "1" if profile else "0",
         str(cache)],
        env={**os.environ, "PYTHONPATH": str(src)}, capture_output=True, text=True, check=True,
    )  # fmt: skip
    if profile:
        print(done.stderr)
    return float(done.stdout.split()[-1])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--export", default=str(SAMPLE))
    parser.add_argument("--before", default=None, help="an earlier revision to compare")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--profile", action="store_true")
    parser.add_argument("--access-log", action="store_true")
    parser.add_argument("--uncached", action="store_true", help="the response cache off")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp, contextlib.ExitStack() as stack:
        trees = {"this tree": ROOT / "src"}
        if args.before:
            trees["before"] = stack.enter_context(checkout(args.before))
        db = str(Path(tmp) / "cost.db")
        subprocess.run([*EDUKG, "load", args.export, "--db", db,
                        "--no-index"], check=True, capture_output=True,
                       env={**os.environ, "PYTHONPATH": str(ROOT / "src")})  # fmt: skip
        figures: dict[str, list[float]] = {name: [] for name in trees}
        cache = 0 if args.uncached else 64  # MiB of response cache
        for n in range(args.rounds):
            order = list(trees) if n % 2 == 0 else list(reversed(trees))
            for name in order:
                figures[name].append(_cost(trees[name], db, args.access_log, cache))
        what = "uncached" if args.uncached else "cached"
        print(f"{'median µs per ' + what + ' answer':<30}{'µs':>8}")
        for name, runs in figures.items():
            print(f"{name:<30}{statistics.median(runs):>8.2f}")
        if args.profile:  # where the time goes, in each tree
            for name, src in trees.items():
                print(f"\n## {name}: cProfile, by own time")
                _cost(src, db, args.access_log, cache, profile=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
