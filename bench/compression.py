"""Compression benchmark: what gzip costs and saves, by response size.

    python -m bench.compression --db LOADED.db [--seconds 8]

Part 1, in process: real response bodies of the loaded data, from under a hundred bytes
to a page of 100 standards; for each, the time to gzip it at levels 1 (edukg's), 5 and 9
and the bytes saved. Part 2, over HTTP (wrk, closed loop, 32 connections; the server
pinned to core 0 and wrk to core 1, as in bench/serve.py): edukg's throughput on a mix of
small responses (under edukg's threshold, sent as they are) and a mix of large ones, each
with and without `Accept-Encoding: gzip`, with the response cache off (every response
built, and compressed where it applies) and on (the default). Needs `wrk`.
"""

from __future__ import annotations

import argparse
import gzip
import os
import shutil
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import httpx

from bench.serve import BASE
from edukg.app.compression import GZIP_LEVEL, GZIP_MIN_BYTES
from harness.load import wrk
from harness.processes import EDUKG, free_port, wait_port

ROOT = Path(__file__).resolve().parents[1]


def paths(db: str) -> list[str]:
    """Requests over real records of `db` whose answers span small to large."""
    c = sqlite3.connect(db)
    framework = c.execute(
        "SELECT f.case_uuid FROM docs f JOIN membership m ON m.framework = f.identifier"
        " WHERE f.kind = 'framework' GROUP BY f.identifier HAVING count(*) > 300 LIMIT 1"
    ).fetchone()[0]
    component = c.execute(
        "SELECT identifier FROM docs WHERE kind = 'component' LIMIT 1 OFFSET 100"
    ).fetchone()[0]
    standards = [
        case
        for (case,) in c.execute(
            "SELECT d.case_uuid FROM docs d JOIN links l ON l.node = d.identifier"
            " AND l.relation = 'child' WHERE d.kind = 'standard' LIMIT 3 OFFSET 500"
        )
    ]
    c.close()
    listed = f"{BASE}/academic-standards?standardsFrameworkCaseIdentifierUUID={framework}"
    return [
        f"{BASE}/learning-components/{component}",
        *(f"{BASE}/academic-standards/{case}" for case in standards),
        *(f"{listed}&limit={n}" for n in (1, 2, 5, 20, 100)),
        *(f"{BASE}/academic-standards/{case}/children" for case in standards),
    ]


def gzip_costs(bodies: dict[str, bytes]) -> None:
    """Print compress time and bytes saved at three levels for each body, smallest first."""
    levels = (1, 5, 9)
    names = [f"level {n}" + (" (edukg)" if n == GZIP_LEVEL else "") for n in levels]
    print(f"{'bytes':>8} | " + " | ".join(f"{name:>18}" for name in names))
    print(f"{'':>8} | {'µs':>7} {'saved':>10} | {'µs':>7} {'saved':>10} | {'µs':>7} {'saved':>10}")
    for body in sorted(set(bodies.values()), key=len):
        cells = []
        for level in levels:
            rounds = max(20, 200_000 // max(len(body), 1))
            started = time.perf_counter()
            for _ in range(rounds):
                packed = gzip.compress(body, compresslevel=level, mtime=0)
            micros = (time.perf_counter() - started) / rounds * 1e6
            cells.append(f"{micros:7.1f} {len(body) - len(packed):>10,}")
        mark = "  (sent as is)" if len(body) < GZIP_MIN_BYTES else ""
        print(f"{len(body):>8,} | " + " | ".join(cells) + mark)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--db", required=True, help="an already loaded SQLite database")
    parser.add_argument("--seconds", type=int, default=8)
    args = parser.parse_args()
    if not shutil.which("wrk"):
        print("needs wrk: apt-get install wrk", file=sys.stderr)
        return 2
    edukg = [*EDUKG]
    key = subprocess.run([*edukg, "keys", "create", f"gzip-{os.getpid()}", "--rate", "0", "--db", args.db],
                         check=True, capture_output=True, text=True).stdout.splitlines()[-1]  # fmt: skip
    plain = {"x-api-key": key}
    packed = {**plain, "accept-encoding": "gzip"}
    requests = paths(args.db)
    results: dict[tuple[str, str, str], float] = {}
    bodies: dict[str, bytes] = {}
    for cache in ("off", "on"):
        port = free_port()
        extra = ["--response-cache-mb", "0"] if cache == "off" else []
        proc = subprocess.Popen(["taskset", "-c", "0", *edukg, "serve", "--db", args.db, "--port", str(port),
                                 "--no-access-log", *extra], stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL)  # fmt: skip
        try:
            wait_port(port)
            with httpx.Client(base_url=f"http://127.0.0.1:{port}") as client:
                for path in requests:
                    answer = client.get(path, headers={**plain, "accept-encoding": "identity"})
                    assert answer.status_code == 200, (path, answer.status_code, answer.text[:200])
                    bodies[path] = answer.content
            small = [p for p in requests if len(bodies[p]) < GZIP_MIN_BYTES]
            large = [p for p in requests if len(bodies[p]) >= GZIP_MIN_BYTES]
            for mix, chosen in (("small", small), ("large", large)):
                for encoding, headers in (("identity", plain), ("gzip", packed)):
                    measured = wrk(f"http://127.0.0.1:{port}", chosen, headers, args.seconds)
                    assert measured["errors"] == 0, measured
                    results[(cache, mix, encoding)] = measured["rps"]
        finally:
            proc.terminate()
            proc.wait()

    print(f"gzip cost by response size (in process; edukg compresses from {GZIP_MIN_BYTES:,} bytes"
          f" at level {GZIP_LEVEL})")  # fmt: skip
    gzip_costs(bodies)
    small_sizes = sorted(len(bodies[p]) for p in requests if len(bodies[p]) < GZIP_MIN_BYTES)
    large_sizes = sorted(len(bodies[p]) for p in requests if len(bodies[p]) >= GZIP_MIN_BYTES)
    print()
    print(f"small mix: {len(small_sizes)} URLs of {small_sizes[0]:,}-{small_sizes[-1]:,} bytes;"
          f" large mix: {len(large_sizes)} URLs of {large_sizes[0]:,}-{large_sizes[-1]:,} bytes")  # fmt: skip
    print(
        f"{'response cache':<15} {'mix':<6} {'identity req/s':>15} {'gzip req/s':>11} {'gzip/identity':>14}"
    )
    for cache in ("off", "on"):
        for mix in ("small", "large"):
            ident, gz = results[(cache, mix, "identity")], results[(cache, mix, "gzip")]
            print(f"{cache:<15} {mix:<6} {ident:>15,.0f} {gz:>11,.0f} {gz / ident:>14.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
