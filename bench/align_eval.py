"""Alignment quality on real data, beside search, in one run.

    python -m bench.align_eval [--shared ../shared] [--fit] [--skip-sample]

1. Real problems (../shared/data/alignment-dev/mathfish-dev.jsonl, labelled by their
   publishers) aligned to the sample's Multi-State standards, whole text, limit 10: hit@1,
   @5 and @10 without and with the grades given, the latency of each alignment, and
   /academic-standards/search on the first 500 characters beside it; the share of first
   results right in each score band.
2. /similar between New York and California with every `supports` edge withheld (truth:
   learning-component Jaccard >= 0.5 in an overlapping grade), top-1 and top-5 each way.
3. Last round's measures on the sample (harness/alignment_eval.py): (a) one learning
   component's description, (b) several joined, (c) California's Common Core counterparts.

4. The check (POST /alignments/check) on the dev problems: each problem's labels as
   positive pairs, three standards of a label's grade outside the labels' families as
   negative pairs; ROC AUC of `score`, balanced accuracy of `aligned` (no grade given), how
   often a positive is marked not aligned (labels include standards a problem builds on).

5. The subject gate (alignment's learned stage) on texts it never saw: how many dev
   problems and how many of bench/data's 40 plain problems get no answer, and how many of
   its 60 texts of other subjects get one (without a grade and with grade 5).
6. A second source nothing was fitted on: bench/data's 40 plain problems, labelled for
   edukg, aligned without and with their grades, beside search.

--fit prints the calibration's constants (logistic fits of whether a result is right)
for model/alignment_profiles.json (the align and similar profiles). The data is read from ../shared
at run time and never copied; see docs/search.md, "Aligning a text".
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import orjson

from edukg.ingest.builder import load
from edukg.ingest.index import index
from edukg.model.vocabulary import STANDARD, grade_mask
from edukg.services.alignment.calibrate import BANDS, band
from edukg.services.search import search_standards
from edukg.store import open_store
from edukg.store.base import Search, Store
from harness import counterparts, mathfish
from harness.alignment_eval import (
    measure_joined,
    measure_similar,
    measure_single,
    prepare,
    report,
)

ROOT = Path(__file__).resolve().parents[1]

EDGES = tuple(low for low, _, _ in BANDS)  # the score bands, from their one source


def _searched(store: Store, problems: list[mathfish.Problem], graded: bool) -> dict[int, float]:
    """hit@k of /academic-standards/search on each problem's first 500 characters."""
    counts = {1: 0, 5: 0, 10: 0}
    for p in problems:
        mask = grade_mask(p.grades) if graded else 0
        filters = Search(STANDARD, (), mathfish.JURISDICTION, None, None, mask)
        import orjson

        codes = [orjson.loads(d).get("statementCode")
                 for d in search_standards(store, p.text[:500], None, filters, 10)]  # fmt: skip
        for k in counts:
            counts[k] += any(mathfish.hit(c, p.labels) for c in codes[:k])
    return {k: v / len(problems) for k, v in counts.items()}


def _problems(shared: Path, work: Path, fit: bool, db: str | None = None) -> None:
    problems = mathfish.problems(shared / "data/alignment-dev/mathfish-dev.jsonl")
    if db is None:
        db = str(work / "sample.db")
        load([str(shared / "data/kg-sample")], db, data_version="1.0.0")
        index(db)
    store = open_store(db)
    print(f"1. {len(problems)} real problems against the sample's Multi-State standards")
    firsts = []
    for graded in (False, True):
        measured = mathfish.measure(store, problems, graded)
        mathfish.report("align, " + ("grades given" if graded else "no grade"), measured)
        searched = _searched(store, problems, graded)
        print(f"{'search, first 500 characters':28} hit@1 {searched[1]:.3f}  hit@5"
              f" {searched[5]:.3f}  hit@10 {searched[10]:.3f}")  # fmt: skip
        firsts += measured.first
    print(
        "   (latency: with grades, the passages' vectors are those kept from the run"
        " without; bench/align_latency.py measures new texts)"
    )
    print("   first results by score band (both runs): band, results, share right")
    for name, count, share in mathfish.bands(firsts, EDGES):
        print(f"   {name}  {count:4}  {share:.2f}")
    if fit:
        rows = [
            *mathfish.features(store, problems, False),
            *mathfish.features(store, problems, True),
        ]
        print(
            "   fit (share, similarity, bias):", [round(v, 3) for v in mathfish.fit_logistic(rows)]
        )
    _check(store, problems, fit)
    _gate(store, problems)
    _plain(store)
    _apart(store, shared)
    _units(store)
    store.close()


DATA = ROOT / "bench" / "data"


def _gate(store: Store, problems: list[mathfish.Problem]) -> None:
    from edukg.services.alignment import AlignQuery, align

    def answered(text: str, grades: tuple[str, ...] = ()) -> bool:
        query = AlignQuery(text, jurisdiction=mathfish.JURISDICTION,
                           grades_mask=grade_mask(list(grades)))  # fmt: skip
        return bool(align(store, query).data)

    other = [
        orjson.loads(line)["text"]
        for line in (DATA / "other_subjects_eval.jsonl").read_bytes().splitlines()
    ]
    plain = mathfish.problems(DATA / "plain_math_eval.jsonl")
    dev_none = sum(not answered(p.text) for p in problems)
    plain_none = sum(not answered(p.text) for p in plain)
    plain_none_graded = sum(not answered(p.text, p.grades) for p in plain)
    other_some = sum(answered(t) for t in other)
    other_some_graded = sum(answered(t, ("5",)) for t in other)
    print("5. the subject gate: mathematics with no answer, other subjects with one")
    print(f"   dev problems {dev_none}/{len(problems)}; plain problems {plain_none}/{len(plain)},"
          f" with grades {plain_none_graded}/{len(plain)}; other subjects {other_some}/"
          f"{len(other)}, with grade 5 {other_some_graded}/{len(other)}")  # fmt: skip


def _plain(store: Store) -> None:
    plain = mathfish.problems(DATA / "plain_math_eval.jsonl")
    print(f"6. a second source: {len(plain)} plain problems written and labelled for edukg")
    for graded in (False, True):
        mathfish.report("align, " + ("grades given" if graded else "no grade"),
                        mathfish.measure(store, plain, graded))  # fmt: skip
        searched = _searched(store, plain, graded)
        print(f"{'search':28} hit@1 {searched[1]:.3f}  hit@5 {searched[5]:.3f}"
              f"  hit@10 {searched[10]:.3f}")  # fmt: skip


def _apart(store: Store, shared: Path) -> None:
    """The written texts held apart from training (one of every standard)."""
    from harness import written

    held = [mathfish.Problem(f"apart-{n}", row.text, (row.code,), mathfish.grades_of(row.code))
            for n, row in enumerate(written.apart(shared))]  # fmt: skip
    print(f"7. the written texts held apart from training ({len(held)}, one of every standard)")
    firsts = []
    for graded in (False, True):
        measured = mathfish.measure(store, held, graded)
        mathfish.report("align, " + ("grades given" if graded else "no grade"), measured)
        firsts += measured.first
    for name, count, share in mathfish.bands(firsts, EDGES):
        print(f"   {name}  {count:4}  {share:.2f}")


def _units(store: Store) -> None:
    """bench/data/publisher_units.jsonl: six units as a publisher aligns and checks them."""
    from edukg.services.alignment import AlignQuery, CheckQuery, align, check

    rows = [orjson.loads(line) for line in
            (DATA / "publisher_units.jsonl").read_bytes().splitlines() if line.strip()]  # fmt: skip
    problems = [r for r in rows if r["kind"] == "problem"]
    counts = {"first with grade": 0, "first without": 0, "top 5 without": 0}
    for row in problems:
        labels = tuple(mathfish.export_code(c) for c in row["standard_ids"])
        for graded in (True, False):
            mask = grade_mask([row["grade"]] if graded else [])
            query = AlignQuery(row["text"], jurisdiction=mathfish.JURISDICTION, grades_mask=mask)
            codes = [r.brief.statementCode for r in align(store, query).data]
            if graded:
                counts["first with grade"] += bool(codes) and mathfish.hit(codes[0], labels)
            else:
                counts["first without"] += bool(codes) and mathfish.hit(codes[0], labels)
                counts["top 5 without"] += any(mathfish.hit(c, labels) for c in codes[:5])
    others = [r for r in rows if r["kind"] == "other"]
    answered = sum(bool(align(store, AlignQuery(r["text"], jurisdiction=mathfish.JURISDICTION))
                        .data) for r in others)  # fmt: skip
    checks = [r for r in rows if r["kind"] == "check"]
    judged = 0
    high = right_high = 0
    for r in checks:
        found = check(store, CheckQuery(r["text"], code=r["standard"],
                                        jurisdiction=mathfish.JURISDICTION))  # fmt: skip
        judged += found.aligned == r["aligned"]
        if found.confidence == "high":
            high += 1
            right_high += bool(r["aligned"])
    print(
        f"8. publisher units: {len(problems)} problems, {len(others)} other texts,"
        f" {len(checks)} check pairs"
    )
    print(
        "   "
        + "; ".join(f"{k} {v}/{len(problems)}" for k, v in counts.items())
        + f"; other subjects answered {answered}/{len(others)}"
    )
    print(
        f"   check pairs as a teacher judges {judged}/{len(checks)};"
        f" 'high' right {right_high}/{high}"
    )


def _check(store: Store, problems: list[mathfish.Problem], fit: bool) -> None:
    pairs = mathfish.check_pairs(store, problems)
    measured = mathfish.measure_check(store, pairs)
    ms = sorted(1000 * s for s in measured.seconds)
    print(f"4. the check, {len(pairs)} pairs ({sum(p.positive for p in pairs)} labels)")
    print(f"   ROC AUC of score {measured.auc:.3f}   balanced accuracy of aligned"
          f" {measured.balanced:.3f}   labels marked not aligned"
          f" {measured.positives_not_aligned:.3f}   p50 {ms[len(ms) // 2]:.0f} ms"
          f"  p95 {ms[int(0.95 * (len(ms) - 1))]:.0f} ms")  # fmt: skip
    high = [positive for score, _, positive, _ in measured.rows if band(score) == "high"]
    empty = sum(aligned and share == 0 for _, aligned, _, share in measured.rows)
    print(f"   'high' right {sum(high)}/{len(high)}; aligned with no component addressed {empty}")
    if fit:
        rows = list(mathfish.check_features(store, pairs))
        print("   check fit (family's fused score, component, minus log rank, bias):",
              [round(v, 3) for v in mathfish.fit_logistic(rows)])  # fmt: skip
        print("   the threshold of best balanced accuracy for this score:",
              _best_threshold([(r[0], r[2]) for r in measured.rows]))  # fmt: skip


def _best_threshold(rows: list[tuple[float, bool]]) -> tuple[float, float]:
    """The `aligned` threshold (on a 0.01 grid) of best balanced accuracy, and that."""
    pos = [s for s, p in rows if p]
    neg = [s for s, p in rows if not p]
    best = (0.0, 0.0)
    for t in (n / 100 for n in range(1, 100)):
        balanced = (sum(s >= t for s in pos) / len(pos) + sum(s < t for s in neg) / len(neg)) / 2
        best = max(best, (round(balanced, 3), t))
    return best[1], best[0]


def _states(shared: Path, work: Path, fit: bool) -> None:
    questions, db = counterparts.prepare(shared / "data/kg-sample",
                                         shared / "data/alignment-dev/new-york", work)  # fmt: skip
    store = open_store(db)
    print(f"2. /similar between New York and California, supports withheld ({len(questions)})")
    for name, value in sorted(counterparts.measure(store, questions).items()):
        print(f"   {name:34} {value:.3f}")
    print("   suggestions by score band: band, suggestions, share right")
    for name, count, share in mathfish.bands(counterparts.scored(store, questions), EDGES):
        print(f"   {name}  {count:4}  {share:.2f}")
    if fit:
        rows = counterparts.features(store, questions)
        print("   fit (share, cosine, bias):", [round(v, 3) for v in mathfish.fit_logistic(rows)])
    store.close()


def _sample(shared: Path, work: Path) -> None:
    truth, texts_db, meaning_db = prepare(shared / "data/kg-sample", work)
    print("3. last round's measures on the sample")
    store = open_store(texts_db)
    report("(a) one component", measure_single(store, truth))
    report("(b) joined, grade given", measure_joined(store, truth, True))
    report("(b) joined, no grade", measure_joined(store, truth, False))
    store.close()
    store = open_store(meaning_db)
    report("(c) similar", measure_similar(store, truth))
    store.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--shared", default=str(ROOT.parent / "shared"))
    parser.add_argument("--fit", action="store_true", help="print the calibration's constants")
    parser.add_argument("--only", choices=("problems", "states", "sample"), default=None)
    parser.add_argument("--db", help="an indexed database of the sample for parts 1 and 4-8"
                        " (else one is built)")  # fmt: skip
    args = parser.parse_args()
    shared = Path(args.shared)
    started = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        if args.only in (None, "problems"):
            _problems(shared, work / "p", args.fit, args.db)
        if args.only in (None, "states"):
            _states(shared, work / "s", args.fit)
        if args.only in (None, "sample"):
            _sample(shared, work / "a")
    print(f"done in {time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
