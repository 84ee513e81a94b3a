"""Keyless CASE clients flooding packages, and a keyed client's searches meanwhile.

    python -m bench.case_flood [--export DIR] [--seconds 20] [--clients 12]

Loads the export (the real sample by default) and a generated CASE framework of 60,000
items (`--package-items`; its package is about 60 MB) into a scratch database and serves
it with one worker and `--case-public`. Twelve clients without a key fetch the largest
frameworks' CFPackages in a loop for `--seconds`, while one keyed client sends distinct
searches (none answered from the response cache) one after another. Run twice: with the
default keyless limit (per client address) and with none (`--case-public-rate 0`, where
only the keyless pool and the answers built once protect keyed clients).

Prints, per run: the keyed client's searches answered 200 and their p95; the flood's
answers by status; the worker's own memory (RssAnon) before, at its peak and 3 s after.
Targets: ≥ 90% of keyed searches 200, p95 under 2 s, memory within 400 MB of before.
Linux only (reads /proc).
"""

from __future__ import annotations

import argparse
import asyncio
import secrets
import sqlite3
import statistics
import subprocess
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

import httpx

from bench.case_load_memory import package
from harness.processes import EDUKG, free_port, wait_port

ROOT = Path(__file__).resolve().parents[1]

SAMPLE = ROOT.parent / "shared" / "data" / "kg-sample"


def _rss_mib(pid: int, field: str = "RssAnon") -> float:
    """The worker's own memory (RssAnon: heap and objects; not the database file's pages,
    which SQLite maps in and the kernel reclaims at will) or another /proc status field."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(f"{field}:"):
            return int(line.split()[1]) / 1024
    return 0.0


def _frameworks(db: str, n: int = 4) -> list[str]:
    conn = sqlite3.connect(db)
    try:
        rows = conn.execute(
            "SELECT d.case_uuid FROM membership m JOIN docs d ON d.identifier = m.framework"
            " GROUP BY m.framework ORDER BY count(*) DESC LIMIT ?",
            (n,),
        ).fetchall()
        return [str(r[0]) for r in rows]
    finally:
        conn.close()


async def _flood(base: str, frameworks: list[str], clients: int, seconds: float) -> dict[str, Any]:
    stop = time.monotonic() + seconds
    statuses: Counter[int] = Counter()
    searches: list[tuple[int, float]] = []

    async def anonymous(client: httpx.AsyncClient, n: int) -> None:
        while time.monotonic() < stop:
            framework = frameworks[n % len(frameworks)]
            n += 1
            try:
                async with client.stream("GET", f"/ims/case/v1p1/CFPackages/{framework}") as r:
                    async for _ in r.aiter_raw():
                        pass
                    statuses[r.status_code] += 1
            except httpx.HTTPError:
                statuses[0] += 1
            if statuses[429] and n % 8 == 0:
                await asyncio.sleep(0.05)  # a refused client retries, as importers do

    async def keyed(client: httpx.AsyncClient) -> None:
        n = 0
        while time.monotonic() < stop:
            n += 1
            started = time.perf_counter()
            r = await client.get("/knowledge-graph/v0/academic-standards/search",
                                 params={"query": f"fractions equivalent {n}", "limit": 10})  # fmt: skip
            searches.append((r.status_code, time.perf_counter() - started))

    limits = httpx.Limits(max_connections=clients + 4)
    keyed_headers = {"x-api-key": _KEY[0]}
    async with (
        httpx.AsyncClient(base_url=base, timeout=300, limits=limits) as pool,
        httpx.AsyncClient(base_url=base, timeout=300, headers=keyed_headers) as client,
    ):
        await asyncio.gather(keyed(client), *(anonymous(pool, i) for i in range(clients)))
    times = sorted(t for _, t in searches)
    return {
        "keyed": len(searches),
        "keyed_ok": sum(1 for s, _ in searches if s == 200),
        "p95": times[int(0.95 * (len(times) - 1))] if times else 0.0,
        "median": statistics.median(times) if times else 0.0,
        "flood": dict(statuses),
    }


_KEY: list[str] = []


def _run(db: str, frameworks: list[str], extra: list[str], args: argparse.Namespace) -> None:
    port = free_port()
    server = subprocess.Popen([*EDUKG, "serve", "--db", db, "--port", str(port), "--case-public",
                               "--no-access-log", *extra])  # fmt: skip
    try:
        wait_port(port)
        base = f"http://127.0.0.1:{port}"
        httpx.get(f"{base}/healthz", headers={"x-api-key": _KEY[0]}, timeout=60)  # model loaded
        time.sleep(2)
        before = _rss_mib(server.pid)
        peak = [before]

        async def watched() -> dict[str, Any]:
            async def watch() -> None:
                while True:
                    peak[0] = max(peak[0], _rss_mib(server.pid))
                    await asyncio.sleep(0.2)

            watcher = asyncio.create_task(watch())
            try:
                return await _flood(base, frameworks, args.clients, args.seconds)
            finally:
                watcher.cancel()

        found = asyncio.run(watched())
        time.sleep(3)
        after = _rss_mib(server.pid)
        resident = _rss_mib(server.pid, "VmRSS")
    finally:
        server.terminate()
        server.wait(timeout=30)
    share = found["keyed_ok"] / max(1, found["keyed"])
    print(f"  keyed searches: {found['keyed_ok']}/{found['keyed']} answered 200 ({share:.0%}),"
          f" median {found['median'] * 1000:.0f} ms, p95 {found['p95'] * 1000:.0f} ms")  # fmt: skip
    print(f"  keyless answers by status: {found['flood']}")
    print(f"  worker's own memory (RssAnon): {before:.0f} MiB before, {peak[0]:.0f} MiB peak,"
          f" {after:.0f} MiB 3 s after ({after - before:+.0f} MiB); all resident (VmRSS, with"
          f" the mapped database file) {resident:.0f} MiB")  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--export", default=str(SAMPLE))
    parser.add_argument("--db", help="a database loaded already (else the export is loaded)")
    parser.add_argument("--package-items", type=int, default=60_000,
                        help="a generated CASE framework of this many items loaded beside the"
                        " export (0: none)")  # fmt: skip
    parser.add_argument("--seconds", type=float, default=20)
    parser.add_argument("--clients", type=int, default=12)
    parser.add_argument("--default-only", action="store_true",
                        help="only the default limit (for versions without the flag)")  # fmt: skip
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="edukg-flood-") as scratch:
        db = args.db or str(Path(scratch) / "flood.db")
        if not Path(db).exists():
            sources = [args.export]
            if args.package_items:
                big = Path(scratch) / "big-package.json"
                big.write_bytes(package(args.package_items))
                sources.append(str(big))
            subprocess.run([*EDUKG, "load", *sources, "--db", db, "--no-index",
                            "--data-version", "1.0.0"], check=True, capture_output=True)  # fmt: skip
        _KEY.append(subprocess.run(
            [*EDUKG, "keys", "create", f"flood-{secrets.token_hex(3)}", "--db", db],
            check=True, capture_output=True, text=True,
        ).stdout.splitlines()[-1])  # fmt: skip
        frameworks = _frameworks(db)
        print(f"{args.clients} keyless clients fetching the {len(frameworks)} largest packages"
              f" for {args.seconds:g} s; one keyed client searching")  # fmt: skip
        runs: list[tuple[str, list[str]]] = [("default keyless limit", [])]
        if not args.default_only:
            runs.append(("no keyless limit (--case-public-rate 0)", ["--case-public-rate", "0"]))
        for label, extra in runs:
            print(label)
            _run(db, frameworks, extra, args)


if __name__ == "__main__":
    main()
