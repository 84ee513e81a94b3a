"""The last stage: which results are answered, for alignment and /similar alike.

Takes the candidates in order (best first), their groups (a standard a framework repeats
in several places is one group), a calibrated score for each and the task's choice; gives
(candidate, score) pairs: one per standard, a score that never rises down the list, none
below the task's floor, at most `limit`. Also the floor below which a text shares nothing
with the standards at all (`relevant`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from edukg.services.alignment.profile import Choice
from edukg.services.alignment.scored import Scored


def choose(order: Iterable[int], groups: Any, score_of: Callable[[int], float], choice: Choice,
           limit: int, floor: float | None = None,
           taken: frozenset[int] = frozenset()) -> list[tuple[int, float]]:  # fmt: skip
    """The chosen candidates and their scores, best first (`floor` overrides the
    choice's; `taken`: groups never answered, such as the standard asked about)."""
    least = choice.min_score if floor is None else floor
    chosen: list[tuple[int, float]] = []
    seen = set(taken)
    for i in order:
        group = int(groups[i])
        if group in seen:
            continue
        score = score_of(i)
        if chosen:  # down the list a score never rises above the one before
            score = min(score, chosen[-1][1])
        if score < least:
            if choice.past_floor == "stop":
                break
            continue
        seen.add(group)
        chosen.append((i, score))
        if len(chosen) >= limit:
            break
    return chosen


def ranked_order(total: Any) -> list[int]:
    """The admitted candidates best first (ties in the view's order); those left out
    (minus infinity) are not listed."""
    import numpy as np  # noqa: PLC0415

    order = np.argsort(-total, kind="stable")
    return [int(i) for i in order if np.isfinite(total[i])]


def relevant(scored: Scored, floor: float) -> bool:
    """Whether the text shares anything with the standards of the place asked about (any
    grade): by meaning, a passage at least `floor` alike to one of them; by words, one
    word in common. A text the subject gate reads as mathematics needs no floor; one it
    does not is measured against the standards of other subjects alone."""
    import numpy as np  # noqa: PLC0415

    found, channels = scored.view, scored.channels
    if scored.mathematics or channels is None:
        return channels is not None
    among = ~found.mathematics if scored.mathematics is False else np.ones(len(found.codes), bool)
    if not among.any():
        return False
    best = float(np.max(channels.statement[among]))
    if channels.components is not None:
        best = max(best, float(np.max(channels.components[among])))
    return best >= (floor if channels.ranking == "semantic" else 1e-9)
