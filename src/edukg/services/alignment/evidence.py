"""The stage after choosing: the evidence of one chosen standard, the passages of the text
that address it most specifically, and what in each matched (its statement, the learning
components that support it, the words they share).

Takes the `Scored` result and a chosen candidate; gives its `AlignmentEvidence`.

A passage counts as evidence by how much more alike it is to this standard than to the
other candidates (its similarity less the passage's mean over all of them, over their
spread): a routine sentence ("Students work in pairs") is a little alike to everything
and so is never shown, while the sentence about percent increase stands out for 7.RP.A.3.
"""

from __future__ import annotations

from typing import Any

from edukg.model.alignment import AlignmentEvidence, EvidencePassage, MatchedComponent
from edukg.services import rank
from edukg.services.alignment import bm25
from edukg.services.alignment.passages import Passage
from edukg.services.alignment.scored import Scored
from edukg.services.alignment.view import StandardsView, Vectors

PASSAGES_SHOWN = 3
COMPONENTS_SHOWN = 5
_WORDS_SHOWN = 6


def evidence_of(scored: Scored, i: int, floor: float) -> AlignmentEvidence:
    """The evidence of candidate `i` (`floor`: how alike a component must be to a passage
    to be named as taught by it)."""
    signals, found, parts = scored.channels, scored.view, scored.parts
    assert signals is not None
    matrix = scored.candidates.matrix
    if signals.ranking == "semantic" and signals.vectors is not None:
        return _by_meaning(found, i, parts, (matrix, signals.means, signals.spreads),
                           signals.vectors, floor)  # fmt: skip
    return _by_words(found, i, parts)


def _by_meaning(found: StandardsView, i: int, parts: list[Passage], passages: tuple[Any, Any, Any],
                vecs: Vectors, floor: float) -> AlignmentEvidence:  # fmt: skip
    """The passages most specific to `i` (`passages`: their vectors, and each one's mean
    and spread of cosines over the candidates)."""
    import numpy as np  # noqa: PLC0415

    matrix, means, spreads = passages
    stated = matrix @ vecs.statements[i]
    lc_numbers = [int(n) for n in found.components_of(i) if vecs.component_rows[n] >= 0]
    if lc_numbers:
        lc_sims = matrix @ vecs.components[[int(vecs.component_rows[n]) for n in lc_numbers]].T
        best_lc = lc_sims.max(axis=1)
    else:
        lc_sims = np.zeros((len(parts), 0), dtype=np.float32)
        best_lc = np.zeros(len(parts), dtype=np.float32)
    similarity = np.maximum(stated, best_lc)
    specific = (similarity - means) / spreads
    shown = _strongest(specific)
    out = []
    for p in sorted(shown):
        row = lc_sims[p]
        matched = sorted(
            (k for k in range(len(lc_numbers)) if row[k] >= floor),
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
