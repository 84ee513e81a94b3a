"""Fairness benchmark: another key's plain lookups while one key floods searches.

    python -m bench.fairness [--export DIR] [--seconds 10]

One `edukg serve` worker on SQLite (pinned to core 0). The flooding key has no rate
limit (the default for a key made without --rate) and keeps 16 searches in flight;
meanwhile another key sends one plain lookup every 20 ms and its latencies are
recorded. Prints the other key's p50/p99/max and how many searches were answered or
refused (503, the bounded pool for expensive work). Target: p99 under 50 ms.
"""

from __future__ import annotations

import argparse
import asyncio
import secrets
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

from harness.processes import EDUKG, free_port, wait_port

ROOT = Path(__file__).resolve().parents[1]

QUERY = "adding and subtracting fractions with unlike denominators using equivalent fractions"


def key(db: str) -> str:
    return subprocess.run(
        [*EDUKG, "keys", "create", f"fair-{secrets.token_hex(3)}", "--db", db],
        check=True, capture_output=True, text=True,
    ).stdout.splitlines()[-1]  # fmt: skip


async def measure(base: str, flood: str, other: str, seconds: float) -> dict[str, float]:
    stop = time.monotonic() + seconds
    answered = refused = 0
    latencies: list[float] = []

    async def flooder(client: httpx.AsyncClient, n: int) -> None:
        nonlocal answered, refused
        while time.monotonic() < stop:
            r = await client.get(
                "/knowledge-graph/v0/academic-standards/search",
                params={"query": f"{QUERY} {n}", "limit": 50},
            )
            n += 16
            answered += r.status_code == 200
            refused += r.status_code == 503

    async def lookups(client: httpx.AsyncClient) -> None:
        while time.monotonic() < stop:
            started = time.perf_counter()
            r = await client.get("/knowledge-graph/v0/standards-frameworks")
            assert r.status_code == 200
            latencies.append((time.perf_counter() - started) * 1000)
            await asyncio.sleep(0.02)

    limits = httpx.Limits(max_connections=32)
    async with (
        httpx.AsyncClient(
            base_url=base, headers={"x-api-key": flood}, timeout=60, limits=limits
        ) as f,
        httpx.AsyncClient(base_url=base, headers={"x-api-key": other}, timeout=60) as o,
    ):
        await asyncio.gather(*(flooder(f, n) for n in range(16)), lookups(o))
    latencies.sort()
    return {
        "p50": latencies[len(latencies) // 2],
        "p99": latencies[int(len(latencies) * 0.99)],
        "max": latencies[-1],
        "lookups": len(latencies),
        "searches": answered,
        "refused": refused,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--export", default=str(ROOT.parent / "shared" / "data" / "kg-sample"))
    parser.add_argument("--seconds", type=float, default=10)
    args = parser.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="edukg-fairness-"))
    try:
        db = str(tmp / "bench.db")
        subprocess.run([*EDUKG, "load", args.export, "--db", db, "--data-version", "bench"],
                       check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
        flood, other = key(db), key(db)
        port = free_port()
        proc = subprocess.Popen(
            ["taskset", "-c", "0", *EDUKG, "serve", "--db", db, "--port", str(port),
             "--no-access-log", "--response-cache-mb", "0"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )  # fmt: skip
        try:
            wait_port(port)
            r = asyncio.run(measure(f"http://127.0.0.1:{port}", flood, other, args.seconds))
        finally:
            proc.terminate()
            proc.wait()
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print(
        f"other key's lookups while one key floods searches: p50 {r['p50']:.1f} ms,"
        f" p99 {r['p99']:.1f} ms, max {r['max']:.1f} ms ({r['lookups']:.0f} lookups;"
        f" target p99 < 50 ms); searches answered {r['searches']:.0f}, refused (503)"
        f" {r['refused']:.0f}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
