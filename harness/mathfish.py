"""Aligning real problems: the dev problems of ../shared/data/alignment-dev (real math
problems labelled by their publishers with Common Core standards), aligned to the
sample's Multi-State standards as a user would, and scored the way the goal is stated.

hit@k: one of a problem's labels is among the first k standards. Labels are Achieve the
Core's codes (7.NS.A.1c is the export's 7.NS.A.1.c; A-REI.D.11 is HSA-REI.D.11); a
standard counts for its own sub-standards and its parent, and a cluster or domain label
for the standards inside it. "Grades given": gradeLevel set to every grade of the labels
(9-12 for a high-school label). Read from ../shared at run time, never copied.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from edukg.model.vocabulary import grade_mask
from edukg.services.alignment import AlignQuery, align, ranked
from edukg.store.base import Store

JURISDICTION = "Multi-State"
HIGH_SCHOOL = ("9", "10", "11", "12")


@dataclass(frozen=True)
class Problem:
    """One labelled problem."""

    identifier: str
    text: str
    labels: tuple[str, ...]  # in the export's codes
    grades: tuple[str, ...]  # of its labels


def export_code(code: str) -> str:
    """An Achieve the Core code in the export's form."""
    code = code.strip()
    if re.match(r"^[A-Z]-", code):
        code = "HS" + code
    return re.sub(r"(\d)([a-z])$", r"\1.\2", code)


def grades_of(code: str) -> tuple[str, ...]:
    """The grades of a standard's code in the export's form (9-12 for high school)."""
    return _grades(code)


def _grades(code: str) -> tuple[str, ...]:
    return HIGH_SCHOOL if code.startswith("HS") else (code.split(".", maxsplit=1)[0],)


def problems(path: Path) -> list[Problem]:
    """The labelled problems of a JSON-lines file."""
    out = []
    for line in path.read_bytes().splitlines():
        if not line.strip():
            continue
        row = orjson.loads(line)
        labels = tuple(export_code(c) for c in row["standard_ids"])
        grades = tuple(dict.fromkeys(g for c in labels for g in _grades(c)))
        out.append(Problem(row["id"], row["text"], labels, grades))
    return out


def hit(code: str | None, labels: tuple[str, ...]) -> bool:
    """Whether a result's code counts as one of `labels`."""
    if not code:
        return False
    return any(
        code == label or code.startswith(label + ".") or label.startswith(code + ".")
        for label in labels
    )


@dataclass
class Measured:
    """hit@1, @5 and @10, the latency of each alignment, and each first result's score
    and whether it was right (for the score's bands)."""

    hits: dict[int, float]
    seconds: list[float]
    first: list[tuple[float, bool]]


def measure(store: Store, found: list[Problem], graded: bool, limit: int = 10) -> Measured:
    """Align every problem (the whole text) and score the results."""
    counts = {1: 0, 5: 0, 10: 0}
    seconds: list[float] = []
    first: list[tuple[float, bool]] = []
    for problem in found:
        query = AlignQuery(problem.text, jurisdiction=JURISDICTION, limit=limit,
                           grades_mask=grade_mask(problem.grades) if graded else 0)  # fmt: skip
        started = time.perf_counter()
        rows = align(store, query).data
        seconds.append(time.perf_counter() - started)
        codes = [r.brief.statementCode for r in rows]
        for k in counts:
            counts[k] += any(hit(c, problem.labels) for c in codes[:k])
        if rows:
            first.append((rows[0].extension.score, hit(codes[0], problem.labels)))
    return Measured({k: v / max(1, len(found)) for k, v in counts.items()}, seconds, first)


def features(
    store: Store, found: list[Problem], graded: bool
) -> Iterator[tuple[float, float, bool]]:
    """(share of the evidence, best raw similarity, right) of each problem's first ten distinct
    candidates: what the score is calibrated on."""
    for problem in found:
        query = AlignQuery(problem.text, jurisdiction=JURISDICTION,
                           grades_mask=grade_mask(problem.grades) if graded else 0)  # fmt: skip
        result = ranked(store, query)
        signals = result.channels
        if signals is None:
            continue
        from edukg.services.alignment.calibrate import shares

        share = shares(result.total, result.view.groups)
        seen: set[int] = set()
        for i in result.total.argsort()[::-1]:
            if not result.total[i] > -1e300:
                break  # outside the grades asked for
            group = int(result.view.groups[i])
            if group in seen:
                continue
            seen.add(group)
            right = hit(result.view.codes[i], problem.labels)
            yield float(share[i]), signals.best_similarity(int(i)), right
            if len(seen) >= 10:
                break


def fit_logistic(rows: list[tuple[Any, ...]], steps: int = 4000) -> tuple[float, ...]:
    """(the weight of each feature, then the bias) of a logistic fit of rows of features
    ending with whether the row is right (features standardised while fitting)."""
    import numpy as np

    x = np.array([[float(v) for v in r[:-1]] for r in rows], dtype=np.float64)
    y = np.array([1.0 if r[-1] else 0.0 for r in rows])
    mean, spread = x.mean(axis=0), np.maximum(x.std(axis=0), 1e-9)
    z = np.c_[(x - mean) / spread, np.ones(len(x))]
    w = np.zeros(z.shape[1])
    for _ in range(steps):
        p = 1.0 / (1.0 + np.exp(-(z @ w)))
        w -= 0.5 * (z.T @ (p - y) / len(y) + 1e-4 * w)
    weights = w[:-1] / spread
    return (*(float(v) for v in weights), float(w[-1] - (weights * mean).sum()))


def bands(
    first: list[tuple[float, bool]], edges: tuple[float, ...]
) -> list[tuple[str, int, float]]:
    """(band, first results in it, share right), for bands between `edges` (high first)."""
    out = []
    top = 1.01
    for low in edges:
        inside = [right for score, right in first if low <= score < top]
        share = sum(inside) / len(inside) if inside else float("nan")
        out.append((f"{low:.2f}-{min(top, 1.0):.2f}", len(inside), share))
        top = low
    return out


def report(title: str, measured: Measured, say: Callable[[str], None] = print) -> None:
    """One line: hit@1/5/10 and latency."""
    ms = sorted(1000 * s for s in measured.seconds)
    p50 = ms[len(ms) // 2] if ms else 0.0
    p95 = ms[int(0.95 * (len(ms) - 1))] if ms else 0.0
    say(f"{title:28} hit@1 {measured.hits[1]:.3f}  hit@5 {measured.hits[5]:.3f}"
        f"  hit@10 {measured.hits[10]:.3f}   p50 {p50:.0f} ms  p95 {p95:.0f} ms")  # fmt: skip


@dataclass(frozen=True)
class Pair:
    """A problem and a standard of the sample's Multi-State framework: one of its labels
    (positive) or a standard of a label's grade outside every label's family (negative)."""

    problem: Problem
    code: str
    positive: bool


def check_pairs(
    store: Store, found: list[Problem], negatives: int = 3, seed: int = 7
) -> list[Pair]:
    """Each problem's labels as positive pairs, and `negatives` standards of the labels'
    grades outside the labels' families (a standard, its sub-standards and its parent) as
    negative pairs, drawn with a fixed seed."""
    import random

    from edukg.model.vocabulary import STANDARD
    from edukg.store.base import Matching, every_row

    rows = list(every_row(store, Matching(STANDARD, jurisdiction=JURISDICTION), 1000))
    standards = sorted({(orjson.loads(doc).get("statementCode") or "",
                         tuple(orjson.loads(doc).get("gradeLevel") or ())) for _, doc in rows})  # fmt: skip
    codes = {code for code, _ in standards}
    draw = random.Random(seed)
    out = []
    for problem in found:
        out += [Pair(problem, label, True) for label in problem.labels if label in codes]
        pool = [code for code, grades in standards
                if code and set(grades) & set(problem.grades) and not hit(code, problem.labels)]  # fmt: skip
        out += [Pair(problem, code, False) for code in draw.sample(pool, min(negatives, len(pool)))]
    return out


@dataclass
class Checked:
    """The check's measures: ROC AUC of `score`, balanced accuracy of `aligned`, how often
    a positive is marked not aligned, and each pair's (score, aligned, positive,
    addressed share of components) with the latency of each check."""

    auc: float
    balanced: float
    positives_not_aligned: float
    rows: list[tuple[float, bool, bool, float]]
    seconds: list[float]


def measure_check(store: Store, pairs: list[Pair]) -> Checked:
    """Check every pair (no grade given, as the check takes none)."""
    from edukg.services.alignment import CheckQuery, check

    rows = []
    seconds = []
    for pair in pairs:
        started = time.perf_counter()
        result = check(store, CheckQuery(pair.problem.text, code=pair.code,
                                         jurisdiction=JURISDICTION))  # fmt: skip
        seconds.append(time.perf_counter() - started)
        # -1: a standard with no learning components (nothing to address)
        share = result.alignedCount / result.totalCount if result.totalCount else -1.0
        rows.append((result.score, result.aligned, pair.positive, share))
    pos = [r for r in rows if r[2]]
    neg = [r for r in rows if not r[2]]
    balanced = (sum(r[1] for r in pos) / max(1, len(pos))
                + sum(not r[1] for r in neg) / max(1, len(neg))) / 2  # fmt: skip
    return Checked(roc_auc([r[0] for r in rows], [r[2] for r in rows]), balanced,
                   sum(not r[1] for r in pos) / max(1, len(pos)), rows, seconds)  # fmt: skip


def roc_auc(scores: list[float], positive: list[bool]) -> float:
    """The chance that a positive scores above a negative (ties count half)."""
    ranked_ = sorted(zip(scores, positive, strict=True))
    n_pos = sum(positive)
    n_neg = len(positive) - n_pos
    if not n_pos or not n_neg:
        return float("nan")
    rank_sum = 0.0
    i = 0
    while i < len(ranked_):
        j = i
        while j < len(ranked_) and ranked_[j][0] == ranked_[i][0]:
            j += 1
        mid = (i + j + 1) / 2  # the mean 1-based rank of a tie
        rank_sum += mid * sum(1 for k in range(i, j) if ranked_[k][1])
        i = j
    return (rank_sum - n_pos * (n_pos + 1) / 2) / (n_pos * n_neg)


def check_features(store: Store, pairs: list[Pair]) -> Iterator[tuple[float, float, float, bool]]:
    """(fused score of the standard's family, best component's similarity, minus the log
    of its rank, positive) of each pair: what the check's score is calibrated on."""
    import math

    from edukg.services.alignment.checking import CheckQuery, calibration_inputs

    for pair in pairs:
        query = CheckQuery(pair.problem.text, code=pair.code, jurisdiction=JURISDICTION)
        fused, component, position = calibration_inputs(store, query)
        yield fused, component, -math.log(position), pair.positive
