"""Fairness benchmarks: what floods of expensive work leave to other keys.

    python -m bench.fairness [--export DIR] [--db DB] [--seconds 15] [--only lookups|newcomer]

One `edukg serve` worker on SQLite (`--workers 1`, the default two work threads and eight
waiting places); every key is made without a rate limit.

lookups: one key keeps 16 searches in flight (the response cache off, the server pinned
  to core 0); another key sends one plain lookup every 20 ms. Prints the other key's
  p50/p99/max and how many searches were answered or refused. Target: p99 under 50 ms.

newcomer: N keys (10, then 12) each send distinct 20,000-character checks (`POST
  /alignments/check`) back to back on one connection; a new key sends its own requests
  one at a time, 0.1 s apart: short checks, the same checks through /mcp
  (`tools/call`), and real problems (mathfish-dev) to `POST /alignments`. Every text is
  one the server has never seen (numbered with this run's own number), so none is
  answered from the response cache. Prints how many of the new key's were answered,
  p50/p95, beside the same requests with no flood (control). Target: all answered, p95
  under 2 s (docs/security.md, "Sharing the work").
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import os
import secrets
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

import httpx
import orjson

from bench.serve import BASE
from harness.flood import flood
from harness.processes import EDUKG, free_port, wait_port

ROOT = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("EDUKG_SHARED", ROOT.parent / "shared"))
QUERY = "adding and subtracting fractions with unlike denominators using equivalent fractions"
RUN = secrets.token_hex(3)  # in every text: none is one a server has seen before


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


def _serve(db: str, *flags: str, pin: bool = False) -> tuple[subprocess.Popen[bytes], str]:
    """A server and its base URL."""
    port = free_port()
    proc = subprocess.Popen(
        [*(["taskset", "-c", "0"] if pin else []), *EDUKG, "serve", "--db", db, "--port",
         str(port), "--workers", "1", "--no-access-log", *flags],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    wait_port(port, 60)
    return proc, f"http://127.0.0.1:{port}"


def lookups(db: str, seconds: float) -> None:
    flood, other = key(db), key(db)
    proc, base = _serve(db, "--response-cache-mb", "0", pin=True)
    try:
        r = asyncio.run(measure(base, flood, other, seconds))
    finally:
        proc.terminate()
        proc.wait()
    print(
        f"lookups: another key's lookups while one key floods searches: p50 {r['p50']:.1f} ms,"
        f" p99 {r['p99']:.1f} ms, max {r['max']:.1f} ms ({r['lookups']:.0f} lookups;"
        f" target p99 < 50 ms); searches answered {r['searches']:.0f}, refused (503)"
        f" {r['refused']:.0f}"
    )


# The newcomer scenario ------------------------------------------------------------------


def _sentences(sample: Path) -> list[str]:
    return [orjson.loads(line)["properties"]["description"].rstrip(".")
            for line in (sample / "nodes.jsonl").read_bytes().splitlines()
            if b'"LearningComponent"' in line]  # fmt: skip


def _flood_texts(sample: Path) -> Callable[[], str]:
    """A new 20,000-character text at each call, of the sample's sentences."""
    sentences = _sentences(sample)
    counter = itertools.count()

    def text() -> str:
        n = next(counter)
        out, k = "", n * 7919
        while len(out) < 20_000:
            out += f"{sentences[k % len(sentences)]} (run {RUN}, flood {n}.{k}). "
            k += 1
        return out[:20_000]

    return text


def _problems() -> list[str]:
    path = SHARED / "data" / "alignment-dev" / "mathfish-dev.jsonl"
    return [orjson.loads(line)["text"] for line in path.read_bytes().splitlines()]


def _standards(sample: Path) -> list[str]:
    return [orjson.loads(line)["properties"]["caseIdentifierUUID"]
            for line in (sample / "nodes.jsonl").read_bytes().splitlines()
            if b'"StandardsFrameworkItem"' in line and b'"Multi-State"' in line]  # fmt: skip


Ask = Callable[[httpx.AsyncClient, int], Awaitable[httpx.Response]]


def _asks(sample: Path) -> dict[str, Ask]:
    """The new key's requests: each a text the server has not seen (numbered)."""
    problems, standards = _problems(), _standards(sample)

    def short(n: int) -> str:
        return f"{problems[n % len(problems)][:300]} (run {RUN}, ask {n})"

    async def check(c: httpx.AsyncClient, n: int) -> httpx.Response:
        body = {"text": short(n), "caseIdentifierUUID": standards[n % len(standards)]}
        return await c.post(f"{BASE}/alignments/check", json=body)

    async def mcp(c: httpx.AsyncClient, n: int) -> httpx.Response:
        arguments = {"text": short(n), "caseIdentifierUUID": standards[n % len(standards)]}
        call = {"jsonrpc": "2.0", "id": n, "method": "tools/call",
                "params": {"name": "check_text_against_standard", "arguments": arguments}}  # fmt: skip
        return await c.post("/mcp", json=call,
                            headers={"accept": "application/json, text/event-stream"})  # fmt: skip

    async def align(c: httpx.AsyncClient, n: int) -> httpx.Response:
        text = f"{problems[n % len(problems)]} (run {RUN}, ask {n})"
        return await c.post(f"{BASE}/alignments", json={"text": text[:20_000]})

    return {"checks": check, "MCP checks": mcp, "alignments": align}


async def _newcomer(base: str, key: str, ask: Ask, first: int, stop: float,
                    ) -> tuple[list[float], dict[int, int]]:  # fmt: skip
    took: list[float] = []
    statuses: dict[int, int] = {}
    async with httpx.AsyncClient(base_url=base, headers={"x-api-key": key}, timeout=60) as c:
        for n in itertools.count(first):
            if time.monotonic() >= stop:
                break
            started = time.perf_counter()
            r = await ask(c, n)
            took.append(time.perf_counter() - started)
            statuses[r.status_code] = statuses.get(r.status_code, 0) + 1
            await asyncio.sleep(0.1)
    return took, statuses


async def _flooders(base: str, keys: list[str], text: Callable[[], str], standards: list[str],
                    stop: float, established: asyncio.Event) -> dict[int, int]:  # fmt: skip
    """Each key on one connection: a new 20,000-character check after another.
    `established` is set once every key has had an answer: the flood is under way."""

    def request(c: httpx.AsyncClient, n: int) -> Awaitable[httpx.Response]:
        body = {"text": text(), "caseIdentifierUUID": standards[n % len(standards)]}
        return c.post(f"{BASE}/alignments/check", json=body)

    return await flood(base, keys, 1, request, stop, established)


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * (len(ordered) - 1) + 0.5))] if ordered else 0.0


def _line(took: list[float], statuses: dict[int, int]) -> str:
    return (f"{statuses.get(200, 0)} of {len(took)} answered {dict(sorted(statuses.items()))},"
            f" p50 {_pct(took, .5) * 1000:.0f} ms, p95 {_pct(took, .95) * 1000:.0f} ms")  # fmt: skip


async def _one_case(base: str, sample: Path, flood: list[str], fresh: Callable[[], str],
                    name: str, ask: Ask, seconds: float, first: int) -> None:  # fmt: skip
    # The control on a key of its own: the new key is new to the server.
    control = await _newcomer(base, fresh(), ask, first, time.monotonic() + seconds / 3)
    stop = time.monotonic() + seconds
    established = asyncio.Event()
    flooding = asyncio.ensure_future(
        _flooders(base, flood, _flood_texts(sample), _standards(sample), stop, established)
    )
    await asyncio.wait_for(established.wait(), seconds)  # then the new key comes
    during = await _newcomer(base, fresh(), ask, first + 10_000, stop)
    flooded = await flooding
    print(f"newcomer: {len(flood)} keys flooding 20,000-character checks, a new key's {name}:"
          f" {_line(*during)} (target: all, p95 < 2000); alone: {_line(*control)};"
          f" the flood got {dict(sorted(flooded.items()))}", flush=True)  # fmt: skip


def newcomer(db: str, sample: Path, seconds: float) -> None:
    keys = [key(db) for _ in range(12)]
    proc, base = _serve(db)
    try:
        asks = _asks(sample)
        cases = [(10, "checks"), (12, "checks"), (10, "MCP checks"), (10, "alignments")]
        for n, (count, name) in enumerate(cases):
            asyncio.run(_one_case(base, sample, keys[:count], lambda: key(db), name,
                                  asks[name], seconds, n * 100_000))  # fmt: skip
    finally:
        proc.terminate()
        proc.wait()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--export", default=str(SHARED / "data" / "kg-sample"))
    parser.add_argument("--seconds", type=float, default=15)
    parser.add_argument("--db", help="the export loaded and indexed already (keys are added)")
    parser.add_argument("--only", choices=["lookups", "newcomer"])
    args = parser.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="edukg-fairness-"))
    try:
        db = args.db or str(tmp / "bench.db")
        if args.db is None:
            indexed = ["--wait-index"] if args.only != "lookups" else []
            subprocess.run([*EDUKG, "load", args.export, "--db", db, "--data-version", "bench",
                            *indexed], check=True, stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL)  # fmt: skip
        if args.only in (None, "lookups"):
            lookups(db, args.seconds)
        if args.only in (None, "newcomer"):
            newcomer(db, Path(args.export), args.seconds)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
