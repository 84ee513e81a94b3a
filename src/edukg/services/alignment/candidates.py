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

import orjson

from edukg.model.errors import NotFoundError
from edukg.model.vocabulary import FRAMEWORK, STANDARD
from edukg.services.alignment import gate
from edukg.services.alignment.passages import Passage, vectors
from edukg.services.alignment.scored import Candidates
from edukg.services.alignment.vector_index import indexed
from edukg.services.alignment.view import StandardsView, view
from edukg.services.frameworks import framework
from edukg.services.memo import remembered
from edukg.store.base import Matching, Search, Store, every_row


def candidates(store: Store, place: tuple[str | None, str | None], subject: str | None,
               statement_type: str | None, grades_mask: int, text: str,
               parts: list[Passage]) -> Candidates:  # fmt: skip
    """The candidates of a place (`(framework CASE UUID, jurisdiction)`) for `text`, cut
    into `parts`."""
    within = framework(store, place[0]).identifier if place[0] else None
    search = Search(STANDARD, (), None if within else place[1], subject, statement_type, 0,
                    within)  # fmt: skip
    index = indexed(store, search)
    found = view(store, search, index)
    if place[1] and not within and not found.identifiers:
        _loaded_or_refused(store, place[1])
    keep = in_grades(found, grades_mask)
    matrix = vectors([p.text for p in parts]) if index is not None else None
    reads = gate.verdict(matrix)
    if reads is False:  # no mathematics standard for a text about something else
        keep = keep[~found.mathematics[keep]]
    return Candidates(text, found, search, index, parts, matrix, keep, reads)


def in_grades(found: StandardsView, mask: int) -> Any:
    """The candidates of any of the grades in `mask` (all of them when 0)."""
    import numpy as np  # noqa: PLC0415

    if not mask:
        return np.arange(len(found.identifiers))
    return np.nonzero(found.grades & mask)[0]


def _loaded_or_refused(store: Store, jurisdiction: str) -> None:
    """Nothing when `jurisdiction` has a framework loaded (its standards of this subject
    and type are none: the answer says so); a 404 naming the loaded ones when it has none
    (a misspelt or absent place is an error, not an empty answer)."""
    loaded = jurisdictions(store)
    if jurisdiction in loaded:
        return
    raise NotFoundError(f"No standards of the jurisdiction {jurisdiction!r} are loaded. Loaded:"
                        f" {', '.join(loaded) or 'none'}.", {"parameter": "jurisdiction"})  # fmt: skip


def jurisdictions(store: Store) -> list[str]:
    """The jurisdictions of the loaded standards frameworks, sorted (kept per release)."""

    def listed() -> tuple[int, list[str]]:
        found = sorted({orjson.loads(doc).get("jurisdiction") or ""
                        for _, doc in every_row(store, Matching(FRAMEWORK), 500)} - {""})  # fmt: skip
        return 64 * len(found) + 64, found

    return remembered(store, ("jurisdictions",), listed)
