"""The evidence of one aligned standard: the passages of the text that address it most
specifically, and what in each matched (its statement, the learning components that
support it, the words they share).

A passage counts as evidence by how much more alike it is to this standard than to the
other candidates (its similarity less the passage's mean over all of them, over their
spread): a routine sentence ("Students work in pairs") is a little alike to everything
and so is never shown, while the sentence about percent increase stands out for 7.RP.A.3.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from edukg.model.alignment import AlignmentEvidence, EvidencePassage, MatchedComponent
from edukg.services import bm25, rank
from edukg.services.passages import Passage
from edukg.services.standards_view import StandardsView, Vectors

PASSAGES_SHOWN = 3
COMPONENTS_SHOWN = 5
COMPONENT_FLOOR = 0.45  # a learning component this alike to a passage is taught by it
_WORDS_SHOWN = 6


@dataclass(frozen=True)
class Signals:
    """What ranking computed for every candidate, kept for the evidence of the best."""

    ranking: str  # "semantic" or "lexical"
    total: Any  # the fused score, one per candidate
    statement: Any  # the statement channel as computed (pooled cosine, or BM25 mapped)
    components: Any  # the best supporting component's pooled cosine, or None
    matrix: Any  # the passages' vectors (semantic only)
    means: Any  # each passage's mean cosine over the candidates (semantic only)
    spreads: Any  # and their spread
    vectors: Vectors | None

    def best_similarity(self, i: int) -> float:
        """Candidate `i`'s stronger raw channel: its statement's or its components'."""
        best = float(self.statement[i])
        if self.components is not None:
            best = max(best, float(self.components[i]))
        return best


def evidence_of(
    found: StandardsView, i: int, parts: list[Passage], signals: Signals
) -> AlignmentEvidence:
    """The evidence of candidate `i`."""
    if signals.ranking == "semantic" and signals.vectors is not None:
        return _by_meaning(found, i, parts, signals, signals.vectors)
    return _by_words(found, i, parts)


def _by_meaning(
    found: StandardsView, i: int, parts: list[Passage], signals: Signals, vecs: Vectors
) -> AlignmentEvidence:
    import numpy as np  # noqa: PLC0415

    matrix = signals.matrix
    stated = matrix @ vecs.statements[i]
    lc_numbers = [int(n) for n in found.components_of(i) if vecs.component_rows[n] >= 0]
    if lc_numbers:
        lc_sims = matrix @ vecs.components[[int(vecs.component_rows[n]) for n in lc_numbers]].T
        best_lc = lc_sims.max(axis=1)
    else:
        lc_sims = np.zeros((len(parts), 0), dtype=np.float32)
        best_lc = np.zeros(len(parts), dtype=np.float32)
    similarity = np.maximum(stated, best_lc)
    specific = (similarity - signals.means) / signals.spreads
    shown = _strongest(specific)
    out = []
    for p in sorted(shown):
        row = lc_sims[p]
        matched = sorted(
            (k for k in range(len(lc_numbers)) if row[k] >= COMPONENT_FLOOR),
            key=lambda k: (-float(row[k]), found.components[lc_numbers[k]]),
        )[:COMPONENTS_SHOWN]
        out.append(
            _passage(
                parts[p],
                found,
                i,
                float(similarity[p]),
                float(stated[p]),
                [
                    MatchedComponent(
                        identifier=found.components[lc_numbers[k]],
                        description=found.component_texts[lc_numbers[k]] or None,
                        similarity=round(float(row[k]), 4),
                    )
                    for k in matched
                ],
            )
        )
    return AlignmentEvidence(statementSimilarity=round(float(stated.max()), 4), passages=out)


def _by_words(found: StandardsView, i: int, parts: list[Passage]) -> AlignmentEvidence:
    import numpy as np  # noqa: PLC0415

    relevance = np.array(
        [rank.relevance_score(found.words.score_of(p.text, i)) for p in parts],
        dtype=np.float32,
    )
    shown = _strongest(relevance) if relevance.max(initial=0.0) > 0 else [0]
    out = [
        _passage(parts[p], found, i, float(relevance[p]), float(relevance[p]), [])
        for p in sorted(shown)
    ]
    return AlignmentEvidence(statementSimilarity=round(float(relevance.max(initial=0.0)), 4),
                             passages=out)  # fmt: skip


def _strongest(strength: Any) -> list[int]:
    """The passages of greatest strength (at least one), strongest first."""
    import numpy as np  # noqa: PLC0415

    order = np.argsort(-strength, kind="stable")[:PASSAGES_SHOWN]
    return [int(p) for p in order]


def _passage(
    part: Passage,
    found: StandardsView,
    i: int,
    similarity: float,
    stated: float,
    components: list[MatchedComponent],
) -> EvidencePassage:
    return EvidencePassage(
        start=part.start,
        end=part.end,
        text=part.text,
        similarity=round(max(0.0, similarity), 4),
        statementSimilarity=round(max(0.0, stated), 4),
        learningComponents=components,
        words=bm25.shared(part.text, found.statements[i], found.words, _WORDS_SHOWN),
    )
