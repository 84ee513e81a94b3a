"""What a hostile client can do to others, measured: one `edukg serve` worker on the
sample (indexed), the attacks of the fourth round of red-team findings, and another key's
requests meanwhile.

    python -m bench.hostile [--sample ../shared/data/kg-sample] [--seconds 15] [--items 7,8]

1. A 20,000-character text of "a", one run of spaces and digits (POST /alignments): its latency,
   and another key's cached GETs meanwhile (p50 / p95). Targets: the text well under
   0.35 s; the other key's p95 at most 0.3 s.
2. One key with no limit of its own aligning 20,000-character texts on four connections;
   another key's searches meanwhile (median), against the same searches alone. Target:
   median under 0.25 s.
3. 800 distinct 80 KB bodies (20,000 four-byte characters) against an 8 MiB response
   cache: the server's growth in RSS.
4. 25 keyless connections dripping a 200,000-byte body against --max-connections 20:
   how many keyed GETs on new connections succeed meanwhile.
5. The crosswalk memo: what a comparison holds against what the memo counts.
6. One key floods distinct 20,000-character mathematical texts on 12 connections; another
   key's searches and small alignments meanwhile: how many are answered (target: all, p95
   under 2 s) and how many of the flood's get 429.
7. Ten keys flood the same way on one connection each; a new key's searches and small
   alignments meanwhile (target: all answered, p95 under 2 s). Its texts and the new
   key's requests are not item 6's: none is answered from the response cache.
8. One key on 30 connections sends distinct 20,000-character checks, each on a new
   connection it closes 50 ms after sending, unread; meanwhile another client's cached
   GETs, each on a new connection: their latency, the listen queue's longest, and for how
   long the pool works on after the flood stops (target: nothing left to work on), then
   the same flood reading its answers.

Every text the server is sent is new to it (numbered with the run's own number). Each
figure is printed beside its target.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import gc
import itertools
import secrets
import socket
import statistics
import subprocess
import tempfile
import time
import tracemalloc
from collections.abc import Awaitable, Callable
from pathlib import Path

import httpx

from bench.serve import BASE, rss_mb
from harness.flood import flood
from harness.processes import EDUKG, free_port, wait_port

ROOT = Path(__file__).resolve().parents[1]
RUN = secrets.token_hex(3)  # in every text: none is one a server has seen before


def _key(db: str, name: str) -> str:
    return subprocess.run([*EDUKG, "keys", "create", name, "--db", db, "--rate", "0"],
                          check=True, capture_output=True, text=True).stdout.splitlines()[-1]  # fmt: skip


def _serve(db: str, port: int, *flags: str) -> subprocess.Popen[bytes]:
    proc = subprocess.Popen([*EDUKG, "serve", "--db", db, "--port", str(port), "--workers", "1",
                             "--no-access-log", *flags],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
    wait_port(port, 60)
    return proc


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * (len(ordered) - 1) + 0.5))] if ordered else 0.0


async def _gets_meanwhile(base: str, key: str, stop: asyncio.Event) -> list[float]:
    """Another key's cached GETs, one after another, until `stop`."""
    out: list[float] = []
    async with httpx.AsyncClient(base_url=base, headers={"x-api-key": key}, timeout=30) as c:
        await c.get(f"{BASE}/standards-frameworks")  # cached from now on
        while not stop.is_set():
            started = time.perf_counter()
            await c.get(f"{BASE}/standards-frameworks")
            out.append(time.perf_counter() - started)
            await asyncio.sleep(0.005)
    return out


async def whitespace(base: str, attacker: str, other: str) -> None:
    text = "a" + " " * 19_990 + "1234567"  # one run of spaces: the worst case for a pattern
    # that retries from each space of a run
    stop = asyncio.Event()
    watcher = asyncio.ensure_future(_gets_meanwhile(base, other, stop))
    await asyncio.sleep(0.3)
    took = []
    async with httpx.AsyncClient(base_url=base, headers={"x-api-key": attacker}, timeout=60) as c:
        for n in range(8):
            started = time.perf_counter()
            r = await c.post(f"{BASE}/alignments", json={"text": (str(n) + text)[:20_000]})
            # (a 200, or a 400 for a text that says nothing: either way the split was done)
            took.append(time.perf_counter() - started)
            assert r.status_code in (200, 400), r.text
    stop.set()
    gets = await watcher
    print(f"1. whitespace text: median {statistics.median(took) * 1000:.0f} ms (target well"
          f" under 350); the other key's cached GETs meanwhile p50 {_pct(gets, .5) * 1000:.1f}"
          f" ms, p95 {_pct(gets, .95) * 1000:.1f} ms (target <= 300), n={len(gets)}")  # fmt: skip


async def fairness(base: str, attacker: str, other: str, seconds: float) -> None:
    words = ["students", "add", "and", "compare", "fractions", "with", "unlike", "denominators"]
    text = (" ".join(words[n % len(words)] for n in range(4000)) + ".")[:20_000]

    async def searches(n: int, first: int) -> list[float]:
        out = []  # each a new query: none is answered from the response cache
        async with httpx.AsyncClient(base_url=base, headers={"x-api-key": other}, timeout=60) as c:
            for k in range(first, first + n):
                started = time.perf_counter()
                await c.get(f"{BASE}/academic-standards/search",
                            params={"query": f"{words[k % 8]} {k}", "limit": 10})  # fmt: skip
                out.append(time.perf_counter() - started)
        return out

    alone = await searches(30, 0)
    stop = time.monotonic() + seconds

    async def aligner(n: int) -> int:
        done = 0
        async with httpx.AsyncClient(base_url=base, headers={"x-api-key": attacker},
                                     timeout=120) as c:  # fmt: skip
            while time.monotonic() < stop:
                await c.post(f"{BASE}/alignments", json={"text": f"{n} {done} {text}"[:20_000]})
                done += 1
        return done

    flood = [asyncio.ensure_future(aligner(n)) for n in range(4)]
    await asyncio.sleep(1.0)
    during = await searches(30, 1000)
    aligned = sum(await asyncio.gather(*flood))
    print(f"2. another key's searches: alone median {statistics.median(alone) * 1000:.0f} ms;"
          f" while one key aligns 20,000 characters on 4 connections median"
          f" {statistics.median(during) * 1000:.0f} ms, p95 {_pct(during, .95) * 1000:.0f} ms"
          f" (target median < 250; {aligned} alignments meanwhile)")  # fmt: skip


def _new_texts(sample: Path, size: int, label: str) -> Callable[[], str]:
    """A new text of the sample's learning components' sentences at each call, numbered
    with the run and `label` (so that none is answered from a cache or embedded before,
    this run's other items' included)."""
    sentences = _sentences(sample)
    counter = itertools.count()

    def text() -> str:
        n = next(counter)
        out, k = "", n * 7919
        while len(out) < size:
            out += f"{sentences[k % len(sentences)]} ({RUN} {label} {n}.{k}). "
            k += 1
        return out[:size]

    return text


def _sentences(sample: Path) -> list[str]:
    import orjson

    return [orjson.loads(line)["properties"]["description"].rstrip(".")
            for line in (sample / "nodes.jsonl").read_bytes().splitlines()
            if b'"LearningComponent"' in line]  # fmt: skip


async def _flooders(base: str, keys: list[str], connections: int, text: Callable[[], str],
                    stop: float, established: asyncio.Event) -> dict[int, int]:  # fmt: skip
    """`connections` connections per key, each aligning a new long text after another
    until `stop`; the statuses they got. `established` is set once every key has had an
    answer: the flood is under way (not the server's first requests, the model loading)."""

    def request(c: httpx.AsyncClient, _: int) -> Awaitable[httpx.Response]:
        return c.post(f"{BASE}/alignments", json={"text": text()})

    return await flood(base, keys, connections, request, stop, established)


async def _meanwhile(base: str, key: str, count: int, label: str,
                     ) -> tuple[list[float], dict[int, int]]:  # fmt: skip
    """A well-behaved key's searches and small alignments, alternating, one at a time,
    each new to the server."""
    took: list[float] = []
    statuses: dict[int, int] = {}
    async with httpx.AsyncClient(base_url=base, headers={"x-api-key": key}, timeout=60) as c:
        for n in range(count):
            started = time.perf_counter()
            if n % 2:
                r = await c.post(f"{BASE}/alignments", json={
                    "text": f"Add fractions with unlike denominators, case {RUN} {label} {n}."})  # fmt: skip
            else:
                r = await c.get(f"{BASE}/academic-standards/search",
                                params={"query": f"fractions number line {RUN} {label} {n}"})  # fmt: skip
            took.append(time.perf_counter() - started)
            statuses[r.status_code] = statuses.get(r.status_code, 0) + 1
            await asyncio.sleep(0.1)
    return took, statuses


async def shares(base: str, sample: Path, flood: list[str], other: str, seconds: float,
                 label: str, connections: int) -> None:  # fmt: skip
    texts = _new_texts(sample, 20_000, label[:2])
    stop = time.monotonic() + seconds
    established = asyncio.Event()
    flooding = asyncio.ensure_future(_flooders(base, flood, connections, texts, stop, established))
    await asyncio.wait_for(established.wait(), seconds)
    took, statuses = await _meanwhile(base, other, 30, label[:2])
    flooded = await flooding
    answered = statuses.get(200, 0)
    print(f"{label} the other key: {answered} of {len(took)} answered"
          f" ({dict(sorted(statuses.items()))}), p50 {_pct(took, .5) * 1000:.0f} ms, p95"
          f" {_pct(took, .95) * 1000:.0f} ms (target: all, p95 < 2000); the flood got"
          f" {dict(sorted(flooded.items()))}")  # fmt: skip


async def cache_memory(base: str, key: str, pid: int) -> None:
    char = "\U0001d7d8"  # four bytes in UTF-8
    async with httpx.AsyncClient(base_url=base, headers={"x-api-key": key}, timeout=60) as c:
        for n in range(50):  # the model, its runtime and the standards' view: loaded once
            await c.post(f"{BASE}/alignments", json={"text": f"warm {n} " + char * 19_990})
        before = rss_mb(pid)
        for n in range(800):
            body = {"text": f"{n} " + char * 19_990, "limit": 1}
            await c.post(f"{BASE}/alignments", json=body)
    after = rss_mb(pid)
    print(f"3. 800 distinct 80 KB bodies, 8 MiB response cache, after 50 to warm up: RSS"
          f" {before:.0f} -> {after:.0f} MB (+{after - before:.0f} MB; before the fix, +70 MB)")  # fmt: skip


def drip(port: int, key: str, seconds: float) -> None:
    head = (f"POST {BASE}/alignments HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\n"
            "content-length: 200000\r\n\r\n").encode()  # fmt: skip
    held = []
    for _ in range(25):
        s = socket.create_connection(("127.0.0.1", port))
        s.sendall(head)
        held.append(s)
    ok = failed = 0
    stop = time.monotonic() + seconds
    while time.monotonic() < stop:
        for s in held:
            with contextlib.suppress(OSError):  # the server may have closed it
                s.sendall(b"a")
        try:
            r = httpx.get(f"http://127.0.0.1:{port}{BASE}/standards-frameworks",
                          headers={"x-api-key": key}, timeout=5)  # fmt: skip
            ok += r.status_code == 200
            failed += r.status_code != 200
        except httpx.HTTPError:
            failed += 1
        time.sleep(0.2)
    for s in held:
        s.close()
    print(f"4. 25 keyless dripping bodies, --max-connections 20: keyed GETs on new connections"
          f" {ok} answered, {failed} failed")  # fmt: skip


def memo(db: str) -> None:
    from edukg.services import memo as memo_module
    from edukg.services.comparison import PairFilter, compare, resolve_framework
    from edukg.store import open_store

    store = open_store(db)
    source = resolve_framework(store, "California:Mathematics")
    target = resolve_framework(store, "Multi-State:Mathematics")
    compare(store, target, source, PairFilter())
    before = memo_module.memo_bytes()
    gc.collect()
    tracemalloc.start()
    start = tracemalloc.get_traced_memory()[0]
    found = compare(store, source, target, PairFilter())
    gc.collect()
    held = tracemalloc.get_traced_memory()[0] - start
    tracemalloc.stop()
    counted = memo_module.memo_bytes() - before
    print(f"5. crosswalk memo, California -> Multi-State ({len(found.rows)} rows): holds"
          f" {held / 1024:.0f} KiB, counted {counted / 1024:.0f} KiB ({held / counted:.2f}x;"
          f" before the fix 7.2-7.6x)")  # fmt: skip
    store.close()


def _standard(sample: Path) -> str:
    import orjson

    return str(next(orjson.loads(line)["properties"]["caseIdentifierUUID"]
                    for line in (sample / "nodes.jsonl").read_bytes().splitlines()
                    if b'"StandardsFrameworkItem"' in line))  # fmt: skip


def _listen_queue(port: int) -> int:
    """Connections the kernel has taken for the listening socket on `port` and the
    server has not accepted yet (/proc/net/tcp: rx_queue of a LISTEN socket)."""
    for line in Path("/proc/net/tcp").read_text().splitlines()[1:]:
        fields = line.split()
        if fields[1].endswith(f":{port:04X}") and fields[3] == "0A":
            return int(fields[4].split(":")[1], 16)
    return 0


async def _get_on_new_connection(port: int, key: str) -> float:
    """A cached GET on a connection of its own: seconds from connecting to the answer."""
    started = time.perf_counter()
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(f"GET {BASE}/standards-frameworks HTTP/1.1\r\nhost: x\r\nx-api-key: {key}"
                 "\r\nconnection: close\r\n\r\n".encode())  # fmt: skip
    await reader.read()  # to the server's close: the whole answer
    writer.close()
    return time.perf_counter() - started


async def _unread_flood(port: int, key: str, text: Callable[[], str], standard: str,
                        stop: float, read: bool) -> None:  # fmt: skip
    """A new check on a new connection, closed 50 ms after it is sent (`read`: once its
    answer is read instead)."""
    import orjson

    while time.monotonic() < stop:
        body = orjson.dumps({"text": text(), "caseIdentifierUUID": standard})
        head = (f"POST {BASE}/alignments/check HTTP/1.1\r\nhost: x\r\nx-api-key: {key}\r\n"
                f"content-type: application/json\r\ncontent-length: {len(body)}\r\n"
                "connection: close\r\n\r\n").encode()  # fmt: skip
        try:
            reader, writer = await asyncio.open_connection("127.0.0.1", port)
            writer.write(head + body)
            await writer.drain()
            await (reader.read() if read else asyncio.sleep(0.05))
            writer.close()
        except OSError:
            await asyncio.sleep(0.05)


async def unread(port: int, sample: Path, flood: str, other: str, seconds: float,
                 read: bool) -> None:  # fmt: skip
    text, standard = _new_texts(sample, 20_000, f"u{read:d}"), _standard(sample)
    stop = time.monotonic() + seconds
    flooders = [asyncio.ensure_future(_unread_flood(port, flood, text, standard, stop, read))
                for _ in range(30)]  # fmt: skip
    took: list[float] = []
    longest = 0
    await asyncio.sleep(1.0)
    while time.monotonic() < stop:
        longest = max(longest, _listen_queue(port))
        took.append(await _get_on_new_connection(port, other))
        await asyncio.sleep(0.05)
    await asyncio.gather(*flooders)
    ended = time.monotonic()
    held: list[dict[str, int]] = []
    async with httpx.AsyncClient(headers={"x-api-key": other}, timeout=60) as c:
        while not held or held[-1]["busy"]:  # until the pool has nothing left to work on
            health = (await c.get(f"http://127.0.0.1:{port}/healthz")).json()
            held.append(health["details"]["expensiveWork"])
            await asyncio.sleep(0.02)
    after = time.monotonic() - ended
    what = "reading its answers" if read else "each closed 50 ms after it was sent, unread"
    print(f"8. one key on 30 connections, 20,000-character checks {what}: another client's"
          f" GETs on new connections p50 {_pct(took, .5) * 1000:.0f} ms, p95"
          f" {_pct(took, .95) * 1000:.0f} ms (n={len(took)}); listen queue at most {longest};"
          f" as the flood stopped the pool held {held[0]['busy']} requests, idle"
          f" {after:.2f} s later (target: nothing left for nobody); dropped while waiting:"
          f" {held[-1].get('dropped', 'not counted')}, refused {held[-1]['refused']}")  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sample", default=str(ROOT.parent / "shared/data/kg-sample"))
    parser.add_argument("--db", help="the sample loaded and indexed already (keys are added)")
    parser.add_argument("--seconds", type=float, default=15)
    parser.add_argument("--items", default="1,2,3,4,5,6,7,8", help="which, e.g. 7,8")
    args = parser.parse_args()
    items = {int(n) for n in args.items.split(",")}
    with tempfile.TemporaryDirectory() as tmp:
        db = args.db or str(Path(tmp) / "sample.db")
        if args.db is None:
            subprocess.run([*EDUKG, "load", args.sample, "--db", db, "--wait-index"],
                           check=True, capture_output=True)  # fmt: skip
        _run(db, Path(args.sample), args.seconds, items)


def _run(db: str, sample: Path, seconds: float, items: set[int]) -> None:
    attacker, other = _key(db, f"attacker-{RUN}"), _key(db, f"other-{RUN}")
    port = free_port()
    proc = _serve(db, port)
    base = f"http://127.0.0.1:{port}"
    try:
        if 1 in items:
            asyncio.run(whitespace(base, attacker, other))
        if 2 in items:
            asyncio.run(fairness(base, attacker, other, seconds))
        if 6 in items:
            asyncio.run(shares(base, sample, [attacker], other, seconds,
                               "6. one key on 12 connections:", 12))  # fmt: skip
        if 7 in items:
            ten = [_key(db, f"flood-{n}-{RUN}") for n in range(10)]
            asyncio.run(shares(base, sample, ten, _key(db, f"newcomer-{RUN}"), seconds,
                               "7. ten keys on one connection each, a new key:", 1))  # fmt: skip
        for read in (False, True) if 8 in items else ():
            asyncio.run(unread(port, sample, attacker, other, seconds, read))
    finally:
        proc.terminate()
        proc.wait()
    if 3 in items or 4 in items:
        port = free_port()
        proc = _serve(db, port, "--response-cache-mb", "8", "--max-connections", "20")
        try:
            if 3 in items:
                asyncio.run(cache_memory(f"http://127.0.0.1:{port}", attacker, proc.pid))
            if 4 in items:
                drip(port, other, 10)
        finally:
            proc.terminate()
            proc.wait()
    if 5 in items:
        memo(db)


if __name__ == "__main__":
    main()
