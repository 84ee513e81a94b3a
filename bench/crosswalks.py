"""Crosswalks between any two frameworks and curriculum coverage, at full scale.

    python -m bench.crosswalks [--export DIR] [--rev REV] [--rounds 3] [--frameworks 20]

On the full-scale generated export (its learning components shared across states within a
subject, as in the real export):
1. The two designs. Kept at load: every derived pair computed from the export's `supports`
   sets (seconds, pairs) and stored in a compact SQLite table with both directions keyed
   (bytes). Computed on request (what edukg does): the bytes it adds (the reverse
   `supports` list and each item's framework, as link rows).
2. Load time and database size of this tree against REV (default: the revision before
   alignment), alternating, medians.
3. Request time on one worker, one connection, sequential requests, the response cache
   off: the first page (100 rows) of framework-to-framework crosswalks for distinct
   framework pairs of one subject (each pair cold), the next page (warm), a standard's
   crosswalks with includeDerived, and a whole coverage summary for the largest frameworks.
"""

from __future__ import annotations

import argparse
import itertools
import os
import sqlite3
import statistics
import subprocess
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

import httpx
import orjson

from bench.serve import BASE
from edukg.store import open_key_store
from harness.processes import EDUKG, free_port, wait_port
from harness.revisions import checkout, load_seconds

ROOT = Path(__file__).resolve().parents[1]

BEFORE = "c216e6f"  # the last revision without derived crosswalks


def _read_export(export: Path) -> tuple[dict[str, dict[str, object]], dict[str, set[str]]]:
    items: dict[str, dict[str, object]] = {}
    with open(export / "nodes.jsonl", "rb") as f:
        for line in f:
            r = orjson.loads(line)
            if r["labels"][0] in ("StandardsFrameworkItem", "StandardsFramework"):
                items[r["identifier"]] = {"label": r["labels"][0], **r["properties"]}
    supports, children = _edges(export)
    for node, fw in _frameworks(items, children).items():
        items[node]["framework"] = fw
    return items, supports


def _edges(export: Path) -> tuple[dict[str, set[str]], dict[str, list[str]]]:
    supports: dict[str, set[str]] = defaultdict(set)
    children: dict[str, list[str]] = defaultdict(list)
    with open(export / "relationships.jsonl", "rb") as f:
        for line in f:
            r = orjson.loads(line)
            if r["label"] == "supports":
                supports[r["target_identifier"]].add(r["source_identifier"])
            elif r["label"] == "hasChild":
                children[r["source_identifier"]].append(r["target_identifier"])
    return supports, children


def _frameworks(
    items: dict[str, dict[str, object]], children: dict[str, list[str]]
) -> dict[str, str]:
    frameworks: dict[str, str] = {}
    for fw, props in items.items():
        if props["label"] == "StandardsFramework":
            stack = list(children[fw])
            while stack:
                node = stack.pop()
                if node not in frameworks:
                    frameworks[node] = fw
                    stack.extend(children[node])
    return frameworks


def precomputed(export: Path) -> dict[str, float]:
    """The kept-at-load design: every derived pair, its time and its bytes."""
    items, supports = _read_export(export)
    started = time.perf_counter()
    by_lc: dict[str, list[str]] = defaultdict(list)
    for standard, lcs in supports.items():
        for lc in lcs:
            by_lc[lc].append(standard)
    pairs = []
    for s, lcs in supports.items():
        for t in {t for lc in lcs for t in by_lc[lc]}:
            a, b = items.get(s, {}), items.get(t, {})
            if s == t or a.get("framework") == b.get("framework"):
                continue
            if a.get("academicSubject") != b.get("academicSubject"):
                continue
            shared = len(lcs & supports[t])
            union = len(lcs) + len(supports[t]) - shared
            pairs.append((s, t, round(shared / union, 4), len(lcs), len(supports[t]), shared))
    seconds = time.perf_counter() - started
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "pairs.db"
        conn = sqlite3.connect(db)
        conn.execute("CREATE TABLE pairs (source TEXT, target TEXT, jaccard REAL, a INTEGER,"
                     " b INTEGER, shared INTEGER, PRIMARY KEY (source, target)) WITHOUT ROWID")  # fmt: skip
        conn.executemany("INSERT OR IGNORE INTO pairs VALUES (?, ?, ?, ?, ?, ?)", sorted(pairs))
        conn.commit()
        conn.execute("VACUUM")
        conn.close()
        size = db.stat().st_size
    return {"pairs (both directions)": len(pairs), "compute s": seconds, "bytes": size}


def _db_bytes(db: str) -> int:
    base = Path(db)
    return sum(p.stat().st_size for p in base.parent.iterdir() if p.name.startswith(base.name)
               and ".release-" not in p.name and not p.name.endswith((".keys.db", ".changes")))  # fmt: skip


def load_and_size(export: Path, rev: str, rounds: int) -> dict[str, list[float]]:
    figures: dict[str, list[float]] = defaultdict(list)
    with checkout(rev) as before:
        for _ in range(rounds):
            for name, src in (("before", before), ("after", ROOT / "src")):
                with tempfile.TemporaryDirectory() as tmp:
                    db = str(Path(tmp) / "bench.db")
                    figures[f"{name} load s"].append(load_seconds(src, export, db))
                    figures[f"{name} bytes"].append(_db_bytes(db))
    return figures


def _percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


def requests(db: str, frameworks: int) -> dict[str, float]:
    keys = open_key_store(db)
    key = keys.create(f"bench-{time.monotonic_ns()}", rate=0)
    keys.close()
    port = free_port()
    proc = subprocess.Popen(
        [*EDUKG, "serve", "--db", db, "--port", str(port),
         "--no-access-log", "--response-cache-mb", "0"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        env={**os.environ, "PYTHONPATH": str(ROOT / "src")},
    )  # fmt: skip
    try:
        wait_port(port)
        http = httpx.Client(base_url=f"http://127.0.0.1:{port}{BASE}",
                            headers={"x-api-key": key}, timeout=60)  # fmt: skip
        _integrity_checked(port)
        return _timed(http, frameworks)
    finally:
        proc.terminate()
        proc.wait()


def _integrity_checked(port: int) -> None:
    """Wait for the server's check of the data file: it runs beside requests at start and
    would weigh on the first ones (a check of 1.7 GB takes seconds)."""
    for _ in range(600):
        if httpx.get(f"http://127.0.0.1:{port}/readyz").json().get("integrity") != "checking":
            return
        time.sleep(0.5)


def _get(http: httpx.Client, path: str, **params: Any) -> tuple[float, Any]:
    started = time.perf_counter()
    response = http.get(path, params=params)
    elapsed = time.perf_counter() - started
    response.raise_for_status()
    return elapsed * 1000, response.json()


def _timed(http: httpx.Client, count: int) -> dict[str, float]:
    fws: list[dict[str, Any]] = []
    cursor = None
    while True:
        ms, page = _get(http, "/standards-frameworks", includeNonCurrent="true", limit=1000,
                        **({"cursor": cursor} if cursor else {}))  # fmt: skip
        fws += page["data"]
        if not page["pagination"]["hasMore"]:
            break
        cursor = page["pagination"]["nextCursor"]
    math = [f for f in fws if f["academicSubject"] == "Mathematics"]
    first, second, summaries, singles, standards = [], [], [], [], []
    for a, b in itertools.islice(itertools.permutations(math, 2), count):
        params = {"sourceFrameworkCaseIdentifierUUID": a["caseIdentifierUUID"],
                  "targetFrameworkCaseIdentifierUUID": b["caseIdentifierUUID"], "limit": 100}  # fmt: skip
        ms, page = _get(http, "/framework-crosswalks", **params)
        first.append(ms)
        if page["pagination"]["nextCursor"]:
            ms, _ = _get(
                http, "/framework-crosswalks", **params, cursor=page["pagination"]["nextCursor"]
            )
            second.append(ms)
        for row in page["data"][:2]:
            ms, _ = _get(http, f"/academic-standards/{row['source']['caseIdentifierUUID']}/crosswalks",
                         includeDerived="true")  # fmt: skip
            singles.append(ms)
    for fw in math[: max(3, count // 4)]:
        ms, body = _get(http, "/curriculums/im360/coverage/summary",
                        standardsFrameworkCaseIdentifierUUID=fw["caseIdentifierUUID"])  # fmt: skip
        summaries.append(ms)
        standards.append(body["total"]["standards"])
    return {
        "framework pairs page 1 p50 ms": statistics.median(first),
        "framework pairs page 1 first ms": first[0],
        "framework pairs page 1 max ms": max(first),
        "framework pairs page 1 over 50 ms": sum(ms > 50 for ms in first),
        "framework pairs timed": len(first),
        "framework pairs page 1 p95 ms": _percentile(first, 0.95),
        "framework pairs page 2 p95 ms": _percentile(second, 0.95) if second else 0.0,
        "standard includeDerived p95 ms": _percentile(singles, 0.95),
        "coverage summary p50 ms": statistics.median(summaries),
        "coverage summary max ms": max(summaries),
        "coverage standards per framework (max)": max(standards),
    }


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--export", default=str(ROOT / ".bench" / "export"))
    ap.add_argument("--rev", default=BEFORE)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--frameworks", type=int, default=20)
    ap.add_argument("--requests-only", metavar="DB", help="only part 3, on a loaded database")
    args = ap.parse_args()
    if args.requests_only:
        for name, value in requests(args.requests_only, args.frameworks).items():
            print(f"  {name}: {value:,.1f}")
        return
    export = Path(args.export)
    print("kept at load (the alternative):")
    for name, value in precomputed(export).items():
        print(f"  {name}: {value:,.1f}")
    figures = load_and_size(export, args.rev, args.rounds)
    print(f"load and size, this tree against {args.rev}, {args.rounds} alternating rounds:")
    for name, values in figures.items():
        print(f"  {name}: median {statistics.median(values):,.1f}")
    for what in ("load s", "bytes"):
        ratio = statistics.median(figures[f"after {what}"]) / statistics.median(
            figures[f"before {what}"]
        )
        print(f"  {what} after/before: {ratio:.3f}")
    with tempfile.TemporaryDirectory() as tmp:
        db = str(Path(tmp) / "bench.db")
        load_seconds(ROOT / "src", export, db)
        print("requests (one worker, one connection, sequential, response cache off):")
        for name, value in requests(db, args.frameworks).items():
            print(f"  {name}: {value:,.1f}")


if __name__ == "__main__":
    main()
