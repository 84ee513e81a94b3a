"""services/memo.py: what a release computes once is weighed by what it really holds."""

from __future__ import annotations

import gc
import tracemalloc
from pathlib import Path

from edukg.cli import build_demo
from edukg.ingest.demo import demo_framework_case_uuid
from edukg.services import memo
from edukg.services.comparison import PairFilter, compare
from edukg.store import open_store


def test_a_comparison_weighs_about_what_it_holds(tmp_path: Path) -> None:
    db = str(tmp_path / "edukg.db")
    build_demo(db)
    store = open_store(db)
    try:
        source, target = demo_framework_case_uuid("vt-math"), demo_framework_case_uuid("ms-math")
        # Warm what a first comparison in this direction computes once for the process (the
        # store's statements and caches, lazily built tables): only the memo's entry is measured.
        compare(store, target, source, PairFilter())
        compare(store, source, target, PairFilter(min_jaccard=2e-9))
        before_weight = memo.memo_bytes()
        gc.collect()
        tracemalloc.start()
        start = tracemalloc.get_traced_memory()[0]
        # A filter no other test asks for: the memo is the process's, and another test may
        # have kept this comparison of the same demo content already.
        found = compare(store, source, target, PairFilter(min_jaccard=1e-9))
        gc.collect()
        held = tracemalloc.get_traced_memory()[0] - start
        tracemalloc.stop()
        weight = memo.memo_bytes() - before_weight
        assert found.rows and weight > 0
        # Each row encoded kept its 4 KiB encoding buffer before (7x what was counted);
        # copied to its own size, what is held stays within twice what is counted, plus a
        # fixed 8 KiB for what any entry holds beside its value (its key, the LRU's node, the
        # answer's shell): with the demo's few rows that share is most of the measure.
        assert held <= 2 * weight + 8192, (held, weight, len(found.rows))
    finally:
        store.close()
