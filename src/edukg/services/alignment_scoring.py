"""How alignment weighs its evidence: the channels each candidate standard is scored on,
their fusion, the grade the text as a whole points to, and the calibrated score.

Each channel scores every candidate of the filter against the whole text:

- statement: how alike the text's passages are to the standard's statement by meaning,
  pooled over the passages by a soft maximum (a log-mean-exp), so that a standard one
  passage matches closely and several match well ranks above one a single stray sentence
  touches;
- components: the same for the learning components that support the standard (its own,
  or its crosswalk counterparts'), its best component counting;
- words: BM25 of the whole text against the statement;
- domain: the text against the heading of the standard's domain ("Ratios & Proportional
  Relationships"), which places a text before its exact standard is clear.

Channels are put on one scale per request (standardised over the candidates) and added
with the weights below; then the grades of the best candidates, taken together, lend a
small prior to the standards of those grades. Every constant was chosen by measurement
on real labelled problems (bench/align_eval.py; docs/search.md has each option tried).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

SHARPNESS = 10.0  # of the soft maximum over passages (1: the mean; large: the maximum)
_BLOCK = 64  # passages whose similarities are held at once


@dataclass(frozen=True)
class Weights:
    """How much each channel counts (0: not used)."""

    statement: float
    components: float
    words: float
    domain: float
    grade_prior: float  # of the log of the grade consensus


# Chosen on the dev problems and last round's measures together (bench/align_eval.py;
# docs/search.md has the options tried and their figures).
SEMANTIC = Weights(statement=0.5, components=1.2, words=0.6, domain=0.3, grade_prior=0.15)
LEXICAL = Weights(statement=0.0, components=0.6, words=1.0, domain=0.0, grade_prior=0.3)
_CONSENSUS = 3.0  # how sharply the grade consensus follows the best candidates


def pooled(passages: Any, targets: Any) -> tuple[Any, Any, Any]:
    """For each target (a row of `targets`), the soft maximum over `passages` of their
    cosines; and each passage's mean and spread of cosines over the targets (what tells a
    specific passage from one alike to everything)."""
    import numpy as np  # noqa: PLC0415

    count = len(passages)
    total = np.zeros(len(targets), dtype=np.float64)
    means = np.zeros(count, dtype=np.float32)
    spreads = np.ones(count, dtype=np.float32)
    if count == 0 or len(targets) == 0:
        return total.astype(np.float32), means, spreads
    for start in range(0, count, _BLOCK):
        sims = passages[start : start + _BLOCK] @ targets.T
        # Cosines are at most 1: exp(a (s - 1)) cannot overflow.
        total += np.exp(SHARPNESS * (sims - 1.0)).sum(axis=0)
        means[start : start + _BLOCK] = sims.mean(axis=1)
        spreads[start : start + _BLOCK] = sims.std(axis=1) + 1e-6
    soft = 1.0 + np.log(np.maximum(total / count, 1e-30)) / SHARPNESS
    return soft.astype(np.float32), means, spreads


def per_candidate(values: Any, start: Any, index: Any, empty: float) -> Any:
    """Each candidate's best value among its items (`index[start[i]:start[i+1]]` of
    `values`), `empty` where it has none."""
    import numpy as np  # noqa: PLC0415

    out = np.full(len(start) - 1, empty, dtype=np.float32)
    if len(index) == 0 or len(values) == 0:
        return out
    counts = np.diff(start)
    has = counts > 0
    best = np.fmax.reduceat(values[index], start[:-1][has])  # NaN: an item without a value
    out[has] = best
    return out


def standardised(values: Any) -> Any:
    """`values` on a common scale: minus their mean, over their spread (0 when flat)."""
    import numpy as np  # noqa: PLC0415

    if len(values) == 0:
        return values
    spread = float(values.std())
    if spread < 1e-9:
        return np.zeros_like(values)
    return (values - values.mean()) / spread


def fused(channels: dict[str, Any], weights: Weights) -> Any:
    """The weighted sum of the standardised channels."""
    import numpy as np  # noqa: PLC0415

    total: Any = None
    for name, values in channels.items():
        w = getattr(weights, name)
        if w and values is not None:
            part = w * standardised(values)
            total = part if total is None else total + part
    if total is None:
        return np.zeros(0, dtype=np.float32)
    return total


def with_grade_prior(score: Any, grades: Any, weight: float) -> Any:
    """`score` plus `weight` times the log of how much of the best candidates' weight lies
    in each candidate's grades: a text about fractions whose best matches are grade 4 and
    5 standards lifts the grade 4 and 5 standards among the rest."""
    import numpy as np  # noqa: PLC0415

    if not weight or len(score) == 0:
        return score
    bits = ((grades[:, None] >> np.arange(15)[None, :]) & 1).astype(np.float32)
    counts = np.maximum(bits.sum(axis=1), 1.0)
    w = np.exp(_CONSENSUS * (score - score.max()))
    mass = (w @ (bits / counts[:, None])) / w.sum()
    mine = (bits @ mass) / counts
    return score + weight * np.log(mine + 1e-3)


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


@dataclass(frozen=True)
class Calibration:
    """A logistic map from a result's share of the evidence and its best raw similarity
    to the chance that it is a standard the text's publisher would tag."""

    share: float
    similarity: float
    bias: float

    def score(self, share: float, similarity: float) -> float:
        z = self.share * share + self.similarity * similarity + self.bias
        return 1.0 / (1.0 + math.exp(-max(-30.0, min(30.0, z))))


# Fitted on the dev problems' first ten results, without and with their grades
# (bench/align_eval.py --fit); docs/api.md gives the share of first results right in
# each band, measured with these constants.
CALIBRATED = {
    "semantic": Calibration(share=4.035, similarity=2.345, bias=-2.914),
    "lexical": Calibration(share=3.2, similarity=0.0, bias=-1.75),
}
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
