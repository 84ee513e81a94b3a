"""Backends benchmark: one worker on SQLite against one worker on PostgreSQL, the same
requests, the same data; then PostgreSQL 60 ms away, and a Redis that never answers.

    python -m bench.backends [--export DIR] [--seconds 10] [--rounds 3]

1. Closed loop: wrk -t1 -c32 over about 850 distinct lookups (bench/hot_path.py's mix),
   each server alone, the backends alternating round by round: requests per second and
   p99. Target: PostgreSQL at half of SQLite or better.
2. Open loop (bench/open_loop.py): a fixed rate at 50% and 80% of each backend's measured
   maximum, 64 connections: p50 and p99 latency from each request's due time.
3. PostgreSQL behind a proxy adding 30 ms each way: 32 concurrent requests for distinct
   standards, with --io-threads 4 (the default before) and the default; target at most
   0.4 s.
4. A Redis that accepts and never answers.

Needs `wrk` (apt-get install wrk) and PostgreSQL ($EDUKG_BENCH_PG, default
postgresql://postgres@127.0.0.1:5432/postgres: a database is made and dropped); the
silent Redis is a socket of this script's own. Each server is pinned to core 0 and the
load to core 1; medians are printed. Response cache and access log off, so the figures
measure the database path. Default export: ../shared/data/kg-sample.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import secrets
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import httpx

from bench.hot_path import mix_paths
from bench.open_loop import run as open_loop
from harness import load
from harness.network import LatencyProxy, SilentServer
from harness.processes import EDUKG, free_port, wait_port

ROOT = Path(__file__).resolve().parents[1]

PG_ADMIN = os.environ.get("EDUKG_BENCH_PG", "postgresql://postgres@127.0.0.1:5432/postgres")


def wrk(base: str, paths: list[str], key: str, seconds: int) -> tuple[float, float, int]:
    """(requests per second, p99 ms, errors) at 32 connections, closed loop (harness.load)."""
    got = load.wrk(base, paths, {"x-api-key": key}, seconds)
    return got["rps"], got["p99 ms"], int(got["errors"])


def serve(db: str, *extra: str, redis: str | None = None) -> tuple[subprocess.Popen[bytes], int]:
    port = free_port()
    args = ["taskset", "-c", "0", *EDUKG, "serve", "--db", db, "--port", str(port),
            "--no-access-log", "--response-cache-mb", "0", *extra]  # fmt: skip
    if redis:
        args += ["--redis", redis]
    proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wait_port(port)
    return proc, port


def key_for(db: str, rate: str = "0") -> str:
    return subprocess.run(
        [*EDUKG, "keys", "create", f"bench-{secrets.token_hex(4)}", "--rate", rate,
         "--burst", "1000", "--db", db],
        check=True, capture_output=True, text=True,
    ).stdout.splitlines()[-1]  # fmt: skip


def via(url: str, port: int) -> str:
    parts = urlsplit(url)
    user = parts.netloc.rsplit("@", 1)[0] + "@" if "@" in parts.netloc else ""
    return urlunsplit(parts._replace(netloc=f"{user}127.0.0.1:{port}"))


async def together(url: str, key: str, n: int) -> tuple[float, int]:
    async with httpx.AsyncClient(headers={"x-api-key": key}, timeout=60) as client:
        started = time.perf_counter()
        answers = await asyncio.gather(*(client.get(url) for _ in range(n)))
    return time.perf_counter() - started, sum(a.status_code != 200 for a in answers)


def throughput(dbs: dict[str, str], paths: list[str], args: argparse.Namespace) -> dict[str, float]:
    figures: dict[str, list[tuple[float, float, int]]] = {name: [] for name in dbs}
    keys = {name: key_for(db) for name, db in dbs.items()}
    for _ in range(args.rounds):
        for name, db in dbs.items():  # alternating: sqlite, postgres, sqlite, ...
            proc, port = serve(db)
            try:
                base = f"http://127.0.0.1:{port}"
                with httpx.Client(base_url=base, headers={"x-api-key": keys[name]}) as client:
                    for path in dict.fromkeys(paths):  # warm, and check every answer
                        assert client.get(path).status_code == 200, path
                figures[name].append(wrk(base, paths, keys[name], args.seconds))
            finally:
                proc.terminate()
                proc.wait()
    medians = {}
    for name, runs in figures.items():
        rps = statistics.median(r[0] for r in runs)
        p99 = statistics.median(r[1] for r in runs)
        medians[name] = rps
        print(f"{name:<9} {rps:8,.0f} req/s  p99 {p99:6.2f} ms at 32 connections"
              f"  (rounds: {', '.join(f'{r[0]:,.0f}' for r in runs)}; errors {sum(r[2] for r in runs)})")  # fmt: skip
    print(f"postgres / sqlite        {medians['postgres'] / medians['sqlite']:.2f}"
          "   (target >= 0.50)")  # fmt: skip
    return medians


def open_loop_latency(
    dbs: dict[str, str], paths: list[str], maxima: dict[str, float], seconds: int
) -> None:
    """p50 and p99 at 50% and 80% of each backend's closed-loop maximum (the load from
    core 1, as wrk's)."""
    os.sched_setaffinity(0, {1})
    for name, db in dbs.items():
        key = key_for(db)
        proc, port = serve(db)
        try:
            for share in (0.5, 0.8):
                rate = maxima[name] * share
                latencies, errors = asyncio.run(open_loop(port, paths, key, rate, seconds))
                ordered = sorted(latencies)
                p50 = ordered[len(ordered) // 2] * 1000
                p99 = ordered[int(len(ordered) * 0.99)] * 1000
                print(f"open loop {name:<9} {share:.0%} of max ({rate:,.0f} req/s): p50"
                      f" {p50:.2f} ms, p99 {p99:.2f} ms (errors {errors})")  # fmt: skip
        finally:
            proc.terminate()
            proc.wait()


def slow_database(pg: str, paths: list[str]) -> None:
    """32 concurrent requests for distinct standards, PostgreSQL 30 ms away each way."""
    port = int(urlsplit(pg).port or 5432)
    proxy = LatencyProxy(port, 0.030).start()
    distinct = [p for p in paths if p.count("/") == 4 and "/academic-standards/" in p][:32]
    try:
        key = key_for(pg)
        for threads in ("4", None):
            extra = ["--io-threads", threads] if threads else []
            proc, server_port = serve(via(pg, proxy.port), "--refresh", "60", *extra)
            try:
                base = f"http://127.0.0.1:{server_port}"
                asyncio.run(together(base + paths[0], key, 8))  # connections made first
                runs = [asyncio.run(burst(base, key, distinct)) for _ in range(3)]
                seconds = statistics.median(r[0] for r in runs)
                label = f"--io-threads {threads}" if threads else "the default (32)"
                print(f"PostgreSQL 30 ms each way, {label}: 32 concurrent requests for distinct"
                      f" standards in {seconds:.2f} s (median of 3; errors"
                      f" {sum(r[1] for r in runs)}; in a row 32 round trips take 1.92 s;"
                      " target <= 0.4 s)")  # fmt: skip
            finally:
                proc.terminate()
                proc.wait()
    finally:
        proxy.stop()


async def burst(base: str, key: str, paths: list[str]) -> tuple[float, int]:
    async with httpx.AsyncClient(base_url=base, headers={"x-api-key": key}, timeout=60) as client:
        started = time.perf_counter()
        answers = await asyncio.gather(*(client.get(p) for p in paths))
    return time.perf_counter() - started, sum(a.status_code != 200 for a in answers)


def silent_redis(db: str, path: str) -> None:
    silent = SilentServer().start()
    proc, port = serve(db, redis=f"redis://127.0.0.1:{silent.port}/0")
    try:
        key = key_for(db, rate="1000")
        url = f"http://127.0.0.1:{port}{path}"
        seconds, errors = asyncio.run(together(url, key, 16))
        print(f"Redis silent: 16 concurrent requests of a limited key in {seconds:.2f} s"
              f" (errors {errors}; target < 1 s)")  # fmt: skip
        with httpx.Client(headers={"x-api-key": key}, timeout=30) as client:
            started = time.perf_counter()
            for _ in range(40):
                client.get(url)
            sequential = time.perf_counter() - started
            started = time.perf_counter()
            client.get(f"http://127.0.0.1:{port}/healthz")
            health = time.perf_counter() - started
        print(f"Redis silent: 40 sequential requests in {sequential:.2f} s (target < 1.5 s);"
              f" /healthz in {health * 1000:.0f} ms (target < 1 s)")  # fmt: skip
    finally:
        proc.terminate()
        proc.wait()
        silent.stop()


@contextlib.contextmanager
def loaded(export: str) -> Iterator[tuple[dict[str, str], dict[str, float]]]:
    """The export loaded into a fresh SQLite file and a fresh PostgreSQL database (dropped
    afterwards): the two `--db` values by backend, and each load's seconds."""
    import psycopg

    tmp = Path(tempfile.mkdtemp(prefix="edukg-backends-"))
    name = f"edukg_bench_{secrets.token_hex(3)}"
    admin = psycopg.connect(PG_ADMIN, autocommit=True)
    admin.execute(f'CREATE DATABASE "{name}"')
    dbs = {"sqlite": str(tmp / "bench.db"), "postgres": PG_ADMIN.rsplit("/", 1)[0] + "/" + name}
    seconds = {}
    try:
        for backend, db in dbs.items():
            started = time.perf_counter()
            subprocess.run([*EDUKG, "load", export, "--db", db, "--no-index",
                            "--data-version", "bench"], check=True, stdout=subprocess.DEVNULL)  # fmt: skip
            seconds[backend] = time.perf_counter() - started
        yield dbs, seconds
    finally:
        admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        admin.close()
        shutil.rmtree(tmp, ignore_errors=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--export", default=str(ROOT.parent / "shared" / "data" / "kg-sample"))
    parser.add_argument("--seconds", type=int, default=10)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    if not shutil.which("wrk") or not shutil.which("taskset"):
        print("needs wrk: apt-get install wrk", file=sys.stderr)
        return 2
    with loaded(args.export) as (dbs, seconds):
        sqlite, pg = dbs["sqlite"], dbs["postgres"]
        for backend, took in seconds.items():
            print(f"load into {'PostgreSQL' if backend == 'postgres' else 'SQLite'}: {took:.1f} s")
        paths = mix_paths(sqlite)
        print(f"request mix: {len(paths)} distinct lookups (bench/hot_path.py)")
        maxima = throughput({"sqlite": sqlite, "postgres": pg}, paths, args)
        open_loop_latency({"sqlite": sqlite, "postgres": pg}, paths, maxima, args.seconds)
        slow_database(pg, paths)
        silent_redis(sqlite, paths[0])
    return 0


if __name__ == "__main__":
    sys.exit(main())
