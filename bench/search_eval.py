"""Search quality on the sample: recall@1, recall@5 and MRR@10, lexical vs dense vs hybrid.

    python -m bench.search_eval [--sample ../shared/data/kg-sample] [--db postgresql://...]

Loads the sample into a scratch database, builds its semantic index, then runs every
query of bench/search_eval/queries.jsonl (typed the way teachers and tutors type:
paraphrases, partial phrases, misspellings, codes in odd formats) through the same
service functions the API uses, in each ranking mode. A query counts as found at k
when any of its expected records is among the first k results. The exact-code step
runs before ranking in every mode, as it does in the API.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

import orjson

from edukg.ingest.builder import load
from edukg.ingest.index import index
from edukg.model.vocabulary import COMPONENT, STANDARD
from edukg.services import search as searching
from edukg.store import open_store
from edukg.store.base import Matching, Search, Store

HERE = Path(__file__).resolve().parent
MODES = ("lexical", "dense", "hybrid")


def _expected(store: Store, query: dict[str, object]) -> set[str]:
    """Identifiers of the records a query should find."""
    out: set[str] = set()
    if query.get("kind") == "components":
        wanted = {str(e) for e in query["expect"]}  # type: ignore[attr-defined]
        after = None
        while True:
            rows = store.page(Matching(COMPONENT), after, 1000)
            for identifier, doc in rows:
                if orjson.loads(doc)["description"] in wanted:
                    out.add(identifier)
            if len(rows) < 1000:
                break
            after = rows[-1][0]
    else:
        jurisdiction = str(query.get("jurisdiction", "Multi-State"))
        for code in query["expect"]:  # type: ignore[attr-defined]
            rows = store.page(
                Matching(STANDARD, code=code.upper(), jurisdiction=jurisdiction), None, 100
            )
            out.update(identifier for identifier, _ in rows)
    if not out:
        raise SystemExit(f"no expected record found for {query}")
    return out


def _run(store: Store, query: dict[str, object], mode: str) -> list[str]:
    text = str(query["q"])
    if query.get("kind") == "components":
        docs = searching.search_components(store, text, None, 10, mode=mode)
    else:
        filters = Search(STANDARD, (), jurisdiction=str(query.get("jurisdiction", "Multi-State")))
        docs = searching.search_standards(store, text, None, filters, 10, mode=mode)
    return [orjson.loads(d)["identifier"] for d in docs]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sample", default=str(HERE.parent.parent / "shared/data/kg-sample"))
    parser.add_argument("--queries", default=str(HERE / "search_eval" / "queries.jsonl"))
    parser.add_argument("--db", default=None, help="a PostgreSQL URL (default: scratch SQLite)")
    parser.add_argument("--show-misses", action="store_true")
    args = parser.parse_args()
    queries = [orjson.loads(line) for line in Path(args.queries).read_bytes().splitlines() if line]
    with tempfile.TemporaryDirectory() as tmp:
        db = args.db or str(Path(tmp) / "eval.db")
        started = time.monotonic()
        load([args.sample], db, "sample")
        summary = index(db)
        print(
            f"sample loaded and indexed in {time.monotonic() - started:.1f} s"
            f" ({summary.rows:,} rows, {summary.embedded:,} texts embedded)"
        )
        store = open_store(db, refresh=0)
        store.info()
        totals: dict[str, dict[str, float]] = {m: defaultdict(float) for m in MODES}
        styles: dict[str, dict[str, float]] = defaultdict(lambda: defaultdict(float))
        counts: dict[str, int] = defaultdict(int)
        for query in queries:
            expected = _expected(store, query)
            counts[str(query["style"])] += 1
            for mode in MODES:
                found = _run(store, query, mode)
                rank = next((n for n, i in enumerate(found, 1) if i in expected), None)
                row = totals[mode]
                row["r1"] += rank == 1
                row["r5"] += rank is not None and rank <= 5
                row["mrr"] += 1.0 / rank if rank else 0.0
                styles[f"{query['style']}/{mode}"]["r5"] += rank is not None and rank <= 5
                if args.show_misses and mode == "hybrid" and (rank is None or rank > 5):
                    print(f"  miss: {query['q']!r} (rank {rank})")
        store.close()
    n = len(queries)
    print(f"\n{n} queries ({', '.join(f'{k} {v}' for k, v in sorted(counts.items()))})\n")
    print(f"{'mode':<8} {'recall@1':>9} {'recall@5':>9} {'MRR@10':>8}")
    for mode in MODES:
        t = totals[mode]
        print(f"{mode:<8} {t['r1'] / n:>9.3f} {t['r5'] / n:>9.3f} {t['mrr'] / n:>8.3f}")
    print("\nrecall@5 by query style")
    print(f"{'style':<12}" + "".join(f"{m:>9}" for m in MODES))
    for style in sorted(counts):
        cells = "".join(f"{styles[f'{style}/{m}']['r5'] / counts[style]:>9.3f}" for m in MODES)
        print(f"{style:<12}{cells}")
    hybrid = totals["hybrid"]["r5"] / n
    others = max(totals["lexical"]["r5"], totals["dense"]["r5"]) / n
    print(f"\nhybrid recall@5 {hybrid:.3f} (target >= 0.90, and above {others:.3f})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
