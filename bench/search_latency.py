"""Search latency at the real export's scale, lexical and hybrid.

    python -m bench.search_latency [EXPORT_DIR | --db LOADED_AND_INDEXED.db]

Loads the export (by default `edukg generate --scale full --seed 7`) into SQLite and
builds its semantic index (or takes a database already loaded and indexed), then times
standards searches (Multi-State, as the API defaults; with grade and subject filters;
by code) and learning-component searches through the service functions the API uses,
in lexical and hybrid mode, and prints p50/p95 per kind, the size of each index and the
memory the process holds after the run.
"""

from __future__ import annotations

import random
import sqlite3
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from edukg.ingest import synthetic
from edukg.ingest.builder import load
from edukg.model.vocabulary import STANDARD, grade_mask
from edukg.services import search as searching
from edukg.store import open_store
from edukg.store.base import Search

ROOT = Path(__file__).resolve().parents[1]

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


def _timings(store: Any, rank: Any, searching: Any) -> dict[str, list[float]]:
    """Seconds per call, by kind of search, over 200 random queries."""
    rng = random.Random(1)
    multi = "Multi-State"
    kinds: dict[str, list[float]] = {}
    for _ in range(200):
        q = rng.choice(QUERIES)
        grade = grade_mask([rng.choice(["3", "4", "5"])])
        for mode in ("lexical", "hybrid"):
            calls: list[tuple[str, Callable[..., object], tuple[object, ...]]] = [
                ("standards", searching.search_standards,
                 (store, q, None, Search(STANDARD, (), jurisdiction=multi), 5)),
                ("standards+grade+subject", searching.search_standards,
                 (store, q, None, Search(STANDARD, (), jurisdiction=multi,
                                         subject="Mathematics", grades_mask=grade), 5)),
                ("learning components", searching.search_components, (store, q, None, 5)),
            ]  # fmt: skip
            for kind, call, call_args in calls:
                t = time.perf_counter()
                call(*call_args, mode=mode)
                kinds.setdefault(f"{kind} ({mode})", []).append(time.perf_counter() - t)
        t = time.perf_counter()
        searching.search_standards(
            store, None, "3.A0.1", Search(STANDARD, (), jurisdiction=multi), 5
        )
        kinds.setdefault("standards by code", []).append(time.perf_counter() - t)
        t = time.perf_counter()
        rank.query_vector(q)
        kinds.setdefault("query embedding alone", []).append(time.perf_counter() - t)
    return kinds


def main() -> int:
    import os
    import resource

    # As `edukg serve` runs: one BLAS thread per process (cli.output.single_threaded_blas); NumPy
    # is not loaded yet.
    for name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS"):
        os.environ.setdefault(name, "1")

    from edukg.ingest.index import index
    from edukg.services import rank
    from edukg.store.sqlite_vectors import vectors_path

    with tempfile.TemporaryDirectory() as tmp:
        if len(sys.argv) > 2 and sys.argv[1] == "--db":
            db = sys.argv[2]
        else:
            export = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(tmp) / "export"
            if len(sys.argv) <= 1:
                synthetic.write(export, 1.0, 7)
            db = str(Path(tmp) / "search.db")
            started = time.perf_counter()
            load([str(export)], db)
            print(f"loaded in {time.perf_counter() - started:.1f} s")
            summary = index(db)
            print(f"indexed {summary.rows:,} texts in {summary.seconds:.1f} s")
        conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
        pages = conn.execute("SELECT sum(pgsize) FROM dbstat WHERE name LIKE 'search%'").fetchone()
        semantic = conn.execute(
            "SELECT sum(pgsize) FROM dbstat WHERE name LIKE 'semantic%'"
        ).fetchone()
        conn.close()
        store = open_store(db)
        info = store.info()
        assert info is not None
        vectors = vectors_path(db, info.content_id).stat().st_size
        t = time.perf_counter()
        rank.query_vector("warm up")
        cold = time.perf_counter() - t
        rss_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        kinds = _timings(store, rank, searching)
        store.close()
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"full-text index       {(pages[0] or 0) / 1e6:.1f} MB (SQLite FTS5)")
    print(f"semantic rows table   {(semantic[0] or 0) / 1e6:.1f} MB")
    print(f"vectors file          {vectors / 1e6:.1f} MB (float32, memory-mapped)")
    print(f"model load            {cold * 1000:.0f} ms (first query of a process)")
    print(f"peak RSS              {rss_before:.0f} MB after the model, {rss:.0f} MB after the run")
    for kind, times in kinds.items():
        print(f"{kind:<34} p50 {percentile(times, 0.5):6.2f} ms   p95 {percentile(times, 0.95):6.2f} ms"
              f"   mean {statistics.fmean(times) * 1000:6.2f} ms")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
