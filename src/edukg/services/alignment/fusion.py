"""The fourth stage: the channels fused into one score per candidate.

Takes `Channels`, the admitted candidates and the task's weights; gives the fused score
(minus infinity for a candidate not admitted). Channels are put on one scale among the
admitted candidates (standardised) and added with the weights of the task's profile; then
the grades of the best candidates, taken together, lend a small prior to the standards of
those grades; and twins (two codes, one statement) are moved apart by their notes.
"""

from __future__ import annotations

from typing import Any

from edukg.services.alignment.profile import Weights
from edukg.services.alignment.scored import Channels

_CONSENSUS = 3.0  # how sharply the grade consensus follows the best candidates


def fusion(found: Channels, weights: Weights, grades: Any, twins: Any, keep: Any,
           notes_weight: float) -> Any:  # fmt: skip
    """The fused score of every candidate in `keep` (`grades`: every candidate's grade
    mask; `twins`: its twin number, -1 for none); minus infinity for the rest."""
    import numpy as np  # noqa: PLC0415

    kept = {name: None if v is None else v[keep] for name, v in found.values.items()}
    score = with_grade_prior(fused(kept, weights), grades[keep], weights.grade_prior)
    total = np.full(len(grades), -np.inf, dtype=np.float64)
    total[keep] = score
    if found.notes is None:
        return total
    return _told_apart(total, found.notes, twins, notes_weight)


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


def _told_apart(total: Any, notes: Any, twins: Any, weight: float) -> Any:
    """`total` with the twins that share a statement moved apart by how alike the text is
    to each one's notes: `weight` per unit of pooled cosine above their mean."""
    import numpy as np  # noqa: PLC0415

    have = np.nonzero(~np.isnan(notes))[0]
    out = total.copy()
    for number in set(twins[have].tolist()):
        members = twins[have] == number
        if members.sum() < 2:
            continue
        values = notes[have][members]
        out[have[members]] += weight * (values - values.mean())
    return out
