"""The typed result the stages hand on: every candidate with every channel, kept to the
end, so that calibration, the check, the evidence and bench/align_eval.py read the values
the ranking used instead of computing them again, and a stage can be measured alone.

    Candidates (candidates.py)  the filter's standards, the passages and their vectors,
                                which candidates are admitted (grades, subject gate)
    Channels   (channels.py)    each candidate's value on each channel
    Scored                      the fused score, then the reranked one (-inf: not admitted)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from edukg.services.alignment.passages import Passage
from edukg.services.alignment.view import StandardsView, Vectors
from edukg.store.base import Search


@dataclass(frozen=True)
class Candidates:
    """The standards a request ranks, and the text as the ranking reads it."""

    text: str
    view: StandardsView
    search: Search
    index: Any  # vector_index.Indexed, or None without a semantic index
    parts: list[Passage]
    matrix: Any  # the passages' unit vectors (None without the model or the index)
    keep: Any  # int: the candidates admitted, ascending
    # Whether the subject gate found that the text reads as mathematics (None: no gate,
    # no model or no index, and the similarity floor decides instead).
    mathematics: bool | None


@dataclass(frozen=True)
class Channels:
    """Each candidate's value on each channel (one value per candidate of the view)."""

    ranking: str  # "semantic" or "lexical"
    values: dict[str, Any]  # name -> values, as fusion weighs them (in its order)
    statement: Any  # the statement's raw similarity (pooled cosine, or BM25 mapped to 0-1)
    components: Any  # the best supporting component's, or None
    notes: Any  # for twins (a statement shared by two codes): their notes' pooled cosine
    means: Any  # each passage's mean cosine over the candidates (semantic only)
    spreads: Any  # and their spread
    vectors: Vectors | None

    def best_similarity(self, i: int) -> float:
        """Candidate `i`'s stronger raw channel: its statement's or its components'."""
        best = float(self.statement[i])
        if self.components is not None:
            best = max(best, float(self.components[i]))
        return best


@dataclass(frozen=True)
class Scored:
    """The candidates, their channels and scores: what every entrance answers from."""

    candidates: Candidates
    channels: Channels | None  # None when the filters admit no standard
    fused: Any  # the channels fused, with the grade prior and the twins' notes
    total: Any  # after the learned ranking stage: what the order follows

    @property
    def view(self) -> StandardsView:
        return self.candidates.view

    @property
    def parts(self) -> list[Passage]:
        return self.candidates.parts

    @property
    def mathematics(self) -> bool | None:
        return self.candidates.mathematics
