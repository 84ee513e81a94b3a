"""Search latency at the real export's scale.

    python bench/search_latency.py [EXPORT_DIR]   (default: generate a full-scale export)

Loads the export (by default `edukg generate --scale full --seed 7`) into SQLite, then
times standards searches (with and without filters, and by code) and learning-component
searches through the service functions the API uses, and prints p50/p95 per kind and the
size of the full-text index. Lexical only: ranking by meaning is not built yet.
"""

from __future__ import annotations

import random
import sqlite3
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from edukg import service  # noqa: E402
from edukg.ingest import synthetic  # noqa: E402
from edukg.ingest.builder import load  # noqa: E402
from edukg.ingest.normalize import grade_mask  # noqa: E402
from edukg.store import open_store  # noqa: E402
from edukg.store.base import STANDARD, Search  # noqa: E402

QUERIES = [
    "add fractions with unlike denominators", "place value of digits", "main idea of a text",
    "solve word problems", "ratio and rate reasoning", "interpret data in a graph",
    "evidence from the text", "area and volume", "linear equations", "probability of events",
    "characters in a story", "energy and matter", "compare numbers", "explain reasoning",
    "patterns in data", "multiply whole numbers", "argument with claims", "map skills",
]  # fmt: skip


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] * 1000


def main() -> int:
    with tempfile.TemporaryDirectory() as tmp:
        export = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(tmp) / "export"
        if len(sys.argv) <= 1:
            synthetic.write(export, 1.0, 7)
        db = str(Path(tmp) / "search.db")
        started = time.perf_counter()
        load([str(export)], db)
        print(f"loaded in {time.perf_counter() - started:.1f} s")
        conn = sqlite3.connect(db)
        pages = conn.execute("SELECT sum(pgsize) FROM dbstat WHERE name LIKE 'search%'").fetchone()
        conn.close()
        store = open_store(db)
        store.info()
        rng = random.Random(1)
        kinds: dict[str, list[float]] = {"standards": [], "standards+grade+subject": [],
                                         "standards by code": [], "learning components": []}  # fmt: skip
        for _ in range(200):
            q = rng.choice(QUERIES)
            for kind, times in kinds.items():
                t = time.perf_counter()
                if kind == "standards":
                    service.search_standards(store, q, None, Search(STANDARD, ()), 5)
                elif kind == "standards+grade+subject":
                    filters = Search(STANDARD, (), subject="Mathematics",
                                     grades_mask=grade_mask([rng.choice(["3", "4", "5"])]))  # fmt: skip
                    service.search_standards(store, q, None, filters, 5)
                elif kind == "standards by code":
                    service.search_standards(store, None, "3.A0.1", Search(STANDARD, ()), 5)
                else:
                    service.search_components(store, q, None, 5)
                times.append(time.perf_counter() - t)
        store.close()
    print(f"full-text index      {(pages[0] or 0) / 1e6:.1f} MB (SQLite FTS5)")
    for kind, times in kinds.items():
        print(f"{kind:<24} p50 {percentile(times, 0.5):6.2f} ms   p95 {percentile(times, 0.95):6.2f} ms"
              f"   mean {statistics.fmean(times) * 1000:6.2f} ms")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
