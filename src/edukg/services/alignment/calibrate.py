"""The sixth stage: calibrated scores, the chance that a result is one a publisher would
tag, and the confidence bands that name them.

Takes `Scored` and the task's calibration; gives each candidate's share of the evidence
(`shares`) and its calibrated score. Alignment and /similar map a candidate's share and
its best raw similarity; the check maps the fused score of the standard's family and its
best learning component's similarity (services.alignment.checking).
"""

from __future__ import annotations

import math
from typing import Any

from edukg.services.alignment.profile import Calibration
from edukg.services.alignment.scored import Scored


def shares(score: Any, groups: Any) -> Any:
    """Each candidate's share of the request's evidence: the softmax of the fused scores
    over distinct standards (a standard repeated in several places counts once, at its
    best). Unlike the fused score, whose range grows with the number of candidates, a
    share means the same with a grade filter of 30 standards and without one of 600."""
    import numpy as np  # noqa: PLC0415

    if len(score) == 0:
        return score
    best: dict[int, float] = {}
    for g, s in zip(groups.tolist(), score.tolist(), strict=True):
        if s > best.get(g, -math.inf):  # minus infinity: a candidate left out, never best
            best[g] = s
    top = max(best.values())
    total = sum(math.exp(s - top) for s in best.values())
    return np.exp(score - top) / total


def calibrated(scored: Scored, calibration: Calibration) -> Any:
    """A function of a candidate number: its calibrated score (alignment's map of its
    share and its stronger raw similarity)."""
    assert scored.channels is not None
    share = shares(scored.total, scored.view.groups)
    found = scored.channels
    return lambda i: calibration.score(float(share[i]), found.best_similarity(i))


# From the top: (lowest score, name, what share of first results in the band were right
# on the dev problems, without and with their grades: bench/align_eval.py). The API's
# descriptions, the MCP tool's and docs/api.md quote these; the explorer has a copy that
# a test holds equal.
BANDS = (
    (0.6, "high", "about 2 in 3"),
    (0.4, "medium", "about 1 in 2"),
    (0.2, "low", "about 2 in 5"),
    (0.0, "very low", "about 1 in 7"),
)


def band(score: float) -> str:
    """The confidence band of a calibrated score."""
    return next(name for low, name, _ in BANDS if score >= low)


def bands_text() -> str:
    """The bands in one sentence, for descriptions: "0.6 or more: high, about 2 in 3
    right; ..." (of first results, on real problems)."""
    parts = []
    top = 1.0
    for low, name, right in BANDS:
        span = (
            f"{low:g} or more"
            if top == 1.0
            else (f"below {top:g}" if low == 0 else f"{low:g}-{top:g}")
        )
        parts.append(f"{span}: {name}, {right} right")
        top = low
    return "; ".join(parts)
