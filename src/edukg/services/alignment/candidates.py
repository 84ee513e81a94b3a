"""The second stage: the standards a request ranks.

Takes the store, the filters (a framework or a jurisdiction, a subject, a statement type,
grades) and the passages with their vectors; gives `Candidates`: the filter's view of the
standards (one per place, subject and type, whatever the grades: the grades choose among
its candidates, so each combination of grades costs no view of its own), the semantic
index, and which candidates are admitted. A text that the subject gate reads as being
about something else admits no mathematics standard.
"""

from __future__ import annotations

from typing import Any

from edukg.model.vocabulary import STANDARD
from edukg.services.alignment import gate
from edukg.services.alignment.passages import Passage, vectors
from edukg.services.alignment.scored import Candidates
from edukg.services.alignment.vector_index import indexed
from edukg.services.alignment.view import StandardsView, view
from edukg.services.frameworks import framework
from edukg.store.base import Search, Store


def candidates(store: Store, place: tuple[str | None, str | None], subject: str | None,
               statement_type: str | None, grades_mask: int,
               parts: list[Passage]) -> Candidates:  # fmt: skip
    """The candidates of a place (`(framework CASE UUID, jurisdiction)`) for `parts`."""
    within = framework(store, place[0]).identifier if place[0] else None
    search = Search(STANDARD, (), None if within else place[1], subject, statement_type, 0,
                    within)  # fmt: skip
    index = indexed(store, search)
    found = view(store, search, index)
    keep = in_grades(found, grades_mask)
    matrix = vectors([p.text for p in parts]) if index is not None else None
    reads = gate.verdict(matrix)
    if reads is False:  # no mathematics standard for a text about something else
        keep = keep[~found.mathematics[keep]]
    return Candidates(found, search, index, parts, matrix, keep, reads)


def in_grades(found: StandardsView, mask: int) -> Any:
    """The candidates of any of the grades in `mask` (all of them when 0)."""
    import numpy as np  # noqa: PLC0415

    if not mask:
        return np.arange(len(found.identifiers))
    return np.nonzero(found.grades & mask)[0]
