"""Alignment quality on the sample: POST /alignments and /similar beside today's search.

    python bench/align_eval.py [--sample ../shared/data/kg-sample]

The questions and measures are in tests/alignment_eval.py (the tests assert floors on
the same figures); see docs/search.md, "Aligning a text".
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "src"))

from tests.alignment_eval import (  # noqa: E402
    measure_joined,
    measure_similar,
    measure_single,
    prepare,
    report,
)

from edukg.store import open_store  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "--sample", default=str(Path(__file__).parents[2] / "shared/data/kg-sample")
    )
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        started = time.perf_counter()
        truth, texts_db, meaning_db = prepare(Path(args.sample), Path(tmp))
        print(f"prepared in {time.perf_counter() - started:.1f} s: {len(truth.single)} single,"
              f" {len(truth.joined)} joined, {len(truth.counterparts)} counterpart questions")  # fmt: skip
        store = open_store(texts_db)
        report("(a) one component", measure_single(store, truth))
        report("(b) joined, grade given", measure_joined(store, truth, True))
        report("(b) joined, no grade", measure_joined(store, truth, False))
        store.close()
        store = open_store(meaning_db)
        report("(c) similar", measure_similar(store, truth))
        store.close()


if __name__ == "__main__":
    main()
