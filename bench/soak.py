"""Soak: a bounded load test against `edukg serve`, for errors and memory growth.

    python -m bench.soak [--seconds 120] [--connections 64] [--db PATH] [--export DIR]

Starts `edukg serve` on a fresh copy of the data (the demo graph by default, or a
loaded export), makes an unlimited benchmark key, and drives a fixed mix of requests
from N keep-alive connections on loopback for a bounded time. Prints requests, errors,
throughput, latency percentiles and the server's RSS over time (first, last, max): the
aims are zero errors and flat memory. Stops by itself.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from edukg.ingest.demo import demo_case_uuid, demo_framework_case_uuid
from harness.processes import EDUKG, free_port

ROOT = Path(__file__).resolve().parents[1]

BASE = "/knowledge-graph/v0"


def demo_mix() -> list[str]:
    """A fixed mix of request paths over the demo graph (weights by repetition)."""
    ms = demo_framework_case_uuid("ms-math")
    nf1 = demo_case_uuid("ms-math", "3.NF.A.1")
    return [
        *[f"{BASE}/academic-standards/{nf1}"] * 3,
        *[f"{BASE}/academic-standards?standardsFrameworkCaseIdentifierUUID={ms}&gradeLevel=4"] * 2,
        f"{BASE}/academic-standards/{demo_case_uuid('ms-math', '3.NF.A')}/children",
        f"{BASE}/academic-standards/{demo_case_uuid('ms-math', '4.NF.B.3.a')}/prerequisites",
        f"{BASE}/academic-standards/{demo_case_uuid('vt-math', 'M.4.NF.2')}/crosswalks",
        f"{BASE}/academic-standards/{nf1}/learning-components",
        f"{BASE}/standards-frameworks",
    ]


def rss_kb(pid: int) -> int:
    """Resident memory of a process and its children (the uvicorn workers), in KiB."""
    total = 0
    pids = [pid, *[int(p) for p in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]]
    for p in pids:
        try:
            for line in Path(f"/proc/{p}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    total += int(line.split()[1])
        except FileNotFoundError:
            pass
    return total


async def connection(
    port: int, key: str, paths: list[str], until: float, latencies: list[float], errors: list[str]
) -> None:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    rng = random.Random(port)
    while time.monotonic() < until:
        path = rng.choice(paths)
        started = time.perf_counter()
        writer.write(f"GET {path} HTTP/1.1\r\nHost: bench\r\nx-api-key: {key}\r\n\r\n".encode())
        try:
            head = await reader.readuntil(b"\r\n\r\n")
            status = int(head.split(b" ", 2)[1])
            length = 0
            for line in head.split(b"\r\n"):
                if line.lower().startswith(b"content-length:"):
                    length = int(line.split(b":")[1])
            await reader.readexactly(length)
        except (asyncio.IncompleteReadError, ConnectionError) as exc:
            errors.append(f"{type(exc).__name__}")
            writer.close()
            reader, writer = await asyncio.open_connection("127.0.0.1", port)
            continue
        latencies.append(time.perf_counter() - started)
        if status != 200:
            errors.append(str(status))
    writer.close()


async def drive(port: int, key: str, paths: list[str], seconds: float, conns: int,
                pid: int) -> tuple[list[float], list[str], list[int]]:  # fmt: skip
    latencies: list[float] = []
    errors: list[str] = []
    memory: list[int] = [rss_kb(pid)]
    until = time.monotonic() + seconds

    async def sample() -> None:
        while time.monotonic() < until:
            await asyncio.sleep(min(5.0, max(0.1, until - time.monotonic())))
            memory.append(rss_kb(pid))

    await asyncio.gather(
        sample(), *(connection(port, key, paths, until, latencies, errors) for _ in range(conns))
    )
    return latencies, errors, memory


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=120)
    parser.add_argument("--connections", type=int, default=64)
    parser.add_argument("--workers", type=int, default=1)
    args = parser.parse_args()
    edukg = [*EDUKG]
    with tempfile.TemporaryDirectory() as tmp:
        db = str(Path(tmp) / "soak.db")
        subprocess.run([*edukg, "demo", "--db", db], check=True, stdout=subprocess.DEVNULL)
        key = subprocess.run(
            [*edukg, "keys", "create", "soak", "--rate", "0", "--db", db],
            check=True, capture_output=True, text=True,
        ).stdout.splitlines()[-1]  # fmt: skip
        port = free_port()
        server = subprocess.Popen(
            [*edukg, "serve", "--db", db, "--port", str(port), "--workers", str(args.workers),
             "--no-access-log"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            env={**os.environ, "PYTHONPATH": str(ROOT / "src")},
        )  # fmt: skip
        try:
            deadline = time.monotonic() + 20
            while True:
                try:
                    socket.create_connection(("127.0.0.1", port), timeout=1).close()
                    break
                except OSError:
                    if time.monotonic() > deadline:
                        raise
                    time.sleep(0.1)
            time.sleep(0.5)
            latencies, errors, memory = asyncio.run(
                drive(port, key, demo_mix(), args.seconds, args.connections, server.pid)
            )
        finally:
            server.terminate()
            server.wait(timeout=30)
    latencies.sort()

    def pct(q: float) -> float:
        return latencies[min(len(latencies) - 1, int(q * len(latencies)))] * 1000

    print(f"duration            {args.seconds:.0f} s, {args.connections} connections, "
          f"{args.workers} worker(s)")  # fmt: skip
    print(f"requests            {len(latencies):,}")
    print(f"errors              {len(errors)} {sorted(set(errors))[:5]}")
    print(
        f"throughput          {len(latencies) / args.seconds:,.0f} requests/s (client on the same 2 cores)"
    )
    print(f"latency             p50 {pct(0.50):.2f} ms, p99 {pct(0.99):.2f} ms, "
          f"mean {statistics.fmean(latencies) * 1000:.2f} ms")  # fmt: skip
    print(f"server RSS (MiB)    first {memory[0] / 1024:.1f}, last {memory[-1] / 1024:.1f}, "
          f"max {max(memory) / 1024:.1f}, samples {len(memory)}")  # fmt: skip
    growth = (memory[-1] - memory[1]) / 1024 if len(memory) > 2 else 0.0
    print(f"RSS growth after warm-up  {growth:+.1f} MiB")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
