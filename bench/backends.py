"""Backends benchmark: one worker on SQLite against one worker on PostgreSQL, the same
request mix, the same data; then PostgreSQL 30 ms away, and a Redis that never answers.

    python bench/backends.py [--export DIR] [--seconds 10] [--rounds 3]

Needs `wrk` (apt-get install wrk), PostgreSQL ($EDUKG_BENCH_PG, default
postgresql://postgres@127.0.0.1:5432/postgres: a database is made and dropped) and Redis
is not needed (the silent one is a socket of this script's own). Each server is pinned
to core 0 and wrk to core 1; the versions alternate round by round and medians are
printed. Response cache off, so the figures measure the database path. Default export:
../shared/data/kg-sample.
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

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "src"), str(ROOT), str(ROOT / "bench")]

from harness.network import LatencyProxy, SilentServer  # noqa: E402
from serve import free_port, mix, wait_port  # noqa: E402

EDUKG = [sys.executable, "-m", "edukg.cli"]
PG_ADMIN = os.environ.get("EDUKG_BENCH_PG", "postgresql://postgres@127.0.0.1:5432/postgres")


def wrk(base: str, paths: list[str], key: str, seconds: int) -> tuple[float, float, int]:
    """(requests per second, p99 ms, errors) at 32 connections, closed loop."""
    script = Path(tempfile.mkstemp(suffix=".lua")[1])
    lines = ["local paths = {", *[f"  [[{p}]]," for p in paths], "}", "local i = 0",
             f'wrk.headers["x-api-key"] = "{key}"', "request = function()",
             "  i = i % #paths + 1", '  return wrk.format("GET", paths[i])', "end"]  # fmt: skip
    script.write_text("\n".join(lines))
    out = subprocess.run(
        ["taskset", "-c", "1", "wrk", "-t1", "-c32", f"-d{seconds}s", "--latency", "-s",
         str(script), base],
        capture_output=True, text=True, check=True,
    ).stdout  # fmt: skip
    script.unlink()
    rps = float(next(x for x in out.splitlines() if x.startswith("Requests/sec")).split()[1])
    p99 = next(x for x in out.splitlines() if x.strip().startswith("99%")).split()[1]
    ms = (
        float(p99[:-2])
        if p99.endswith("ms")
        else float(p99[:-2]) / 1000
        if p99.endswith("us")
        else float(p99[:-1]) * 1000
    )
    errors = sum(
        int(t)
        for line in out.splitlines()
        if "Non-2xx" in line or "Socket errors" in line
        for t in line.replace(",", " ").split()
        if t.isdigit()
    )
    return rps, ms, errors


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


def throughput(dbs: dict[str, str], paths: list[str], args: argparse.Namespace) -> None:
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
    print(f"postgres / sqlite        {medians['postgres'] / medians['sqlite'] * 100:.0f}%"
          "   (target >= 50%, p99 <= 20 ms)")  # fmt: skip


def slow_database(pg: str, path: str) -> None:
    port = int(urlsplit(pg).port or 5432)
    proxy = LatencyProxy(port, 0.030).start()
    proc, server_port = serve(via(pg, proxy.port), "--refresh", "60")
    try:
        key = key_for(pg)
        url = f"http://127.0.0.1:{server_port}{path}"
        asyncio.run(together(url, key, 8))  # connections made through the proxy first
        runs = [asyncio.run(together(url, key, 32)) for _ in range(3)]
        seconds = statistics.median(r[0] for r in runs)
        print(f"PostgreSQL 30 ms each way: 32 concurrent requests in {seconds:.2f} s"
              f" (median of 3; errors {sum(r[1] for r in runs)}; target < 0.8 s)")  # fmt: skip
    finally:
        proc.terminate()
        proc.wait()
        proxy.stop()


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
        table = mix(sqlite)
        paths = [path for _, weight, path, _ in table for _ in range(weight)]
        print("request mix (weight): " + ", ".join(f"{k} ({w})" for k, w, _, _ in table))
        throughput({"sqlite": sqlite, "postgres": pg}, paths, args)
        slow_database(pg, paths[0])
        silent_redis(sqlite, paths[0])
    return 0


if __name__ == "__main__":
    sys.exit(main())
