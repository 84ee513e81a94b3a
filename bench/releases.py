"""Several releases at full scale: disk per release, load and switch times, and what a
pinned request costs against an unpinned one.

    python -m bench.releases [--export DIR] [--pg URL] [--seconds 8] [--rounds 3]

Loads the export (the full-scale generated one by default) twice into a fresh SQLite
location, as 1.0.0 and 2.0.0 (the same records: disk per release does not depend on what
changed), and once into a fresh PostgreSQL database when `--pg` names a server; prints the
size of each release as `edukg releases list` reports it and the directory's size. Then
serves the SQLite location with one worker (pinned to core 0, wrk on core 1, response
cache off, so every request reads the database) and runs the same request mix unpinned,
pinned to the older release by header, and by path prefix, alternating, `--rounds` times;
prints medians and ratios against the unpinned run. Needs `wrk`.
"""

from __future__ import annotations

import argparse
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

from bench.serve import BASE
from edukg.cli.output import size_text
from edukg.store import open_releases
from harness.load import wrk
from harness.processes import EDUKG, free_port, wait_port

ROOT = Path(__file__).resolve().parents[1]


def _load(export: str, db: str, version: str) -> float:
    started = time.monotonic()
    subprocess.run([*EDUKG, "load", export, "--db", db, "--data-version", version, "--no-index"],
                   check=True, stdout=subprocess.DEVNULL)  # fmt: skip
    return time.monotonic() - started


def _sizes(db: str) -> list[tuple[str, int, bool]]:
    releases = open_releases(db)
    try:
        return [(r.data_version, r.size_bytes, r.current) for r in releases.list(sizes=True)]
    finally:
        releases.close()


def _paths(db: str) -> list[str]:
    """Reads of single records and of short lists, from the loaded data."""
    c = sqlite3.connect(db)
    standards = [r[0] for r in c.execute(
        "SELECT case_uuid FROM docs WHERE kind = 'standard' AND case_uuid IS NOT NULL"
        " ORDER BY identifier LIMIT 50 OFFSET 1000")]  # fmt: skip
    c.close()
    paths = [f"{BASE}/academic-standards/{u}" for u in standards]
    paths += [f"{BASE}/academic-standards/{u}/children" for u in standards[:10]]
    return paths


def _serve_rounds(db: str, seconds: int, rounds: int) -> dict[str, list[float]]:
    key = subprocess.run([*EDUKG, "keys", "create", f"bench-{time.time_ns()}", "--db", db,
                          "--rate", "0"], check=True, capture_output=True, text=True,
                         ).stdout.strip().splitlines()[-1]  # fmt: skip
    port = free_port()
    proc = subprocess.Popen(["taskset", "-c", "0", *EDUKG, "serve", "--db", db, "--port",
                             str(port), "--no-access-log", "--response-cache-mb", "0"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
    try:
        wait_port(port)
        url = f"http://127.0.0.1:{port}"
        paths = _paths(db)
        variants = {
            "unpinned": (paths, {"x-api-key": key}),
            "header": (paths, {"x-api-key": key, "x-data-version": "1.0.0"}),
            "prefix": ([f"/releases/1.0.0{p}" for p in paths], {"x-api-key": key}),
        }
        for name, (some, headers) in variants.items():  # every variant answers 200 first
            answer = httpx.get(url + some[0], headers=headers)
            assert answer.status_code == 200, (name, answer.text[:200])
            want = "2.0.0" if name == "unpinned" else "1.0.0"
            assert answer.headers["x-data-version"] == want
        found: dict[str, list[float]] = {name: [] for name in variants}
        for _ in range(rounds):
            for name, (some, headers) in variants.items():
                result = wrk(url, some, headers, seconds)
                assert result["errors"] == 0, (name, result)
                found[name].append(result["rps"])
        return found
    finally:
        proc.terminate()
        proc.wait()


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--export", default=str(ROOT / ".bench" / "export"))
    parser.add_argument("--pg", default=None, help="postgresql:// URL of an empty database")
    parser.add_argument("--seconds", type=int, default=8)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    if not Path(args.export, "nodes.jsonl").is_file():
        subprocess.run([*EDUKG, "generate", args.export, "--scale", "full", "--seed", "7"],
                       check=True)  # fmt: skip
    tmp = Path(tempfile.mkdtemp(prefix="edukg-releases-", dir=ROOT / ".bench"))
    try:
        db = str(tmp / "edukg.db")
        first, second = _load(args.export, db, "1.0.0"), _load(args.export, db, "2.0.0")
        print(f"SQLite load 1.0.0 {first:.1f} s, 2.0.0 beside it {second:.1f} s")
        started = time.monotonic()
        subprocess.run([*EDUKG, "releases", "use", "1.0.0", "--db", db], check=True,
                       stdout=subprocess.DEVNULL)  # fmt: skip
        subprocess.run([*EDUKG, "releases", "use", "2.0.0", "--db", db], check=True,
                       stdout=subprocess.DEVNULL)  # fmt: skip
        print(f"releases use, twice (two processes): {time.monotonic() - started:.2f} s")
        for version, size, current in _sizes(db):
            print(f"SQLite release {version}: {size_text(size)}{' (current)' if current else ''}")
        inodes = {p.stat().st_ino: p.stat().st_size for p in tmp.iterdir() if p.is_file()}
        total = sum(inodes.values())
        print(f"SQLite directory with both (links counted once): {size_text(total)}")
        if args.pg:
            took = _load(args.export, args.pg, "1.0.0")
            for version, size, _ in _sizes(args.pg):
                print(f"PostgreSQL release {version}: {size_text(size)} (load {took:.1f} s)")
        found = _serve_rounds(db, args.seconds, args.rounds)
        base = statistics.median(found["unpinned"])
        for name, values in found.items():
            median = statistics.median(values)
            print(f"{name:9} req/s median {median:8,.0f}  ratio {median / base:.2f}"
                  f"  rounds {', '.join(f'{v:,.0f}' for v in values)}")  # fmt: skip
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
