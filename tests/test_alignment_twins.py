"""Standards that share a statement are told apart by their notes: G-CO.C.10 and
G-SRT.B.4 both say "Prove theorems about triangles."; only their notes ("Theorems
include: ...") say which theorems. On the real sample, with its semantic index."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace

import pytest

from edukg.model.vocabulary import grade_mask
from edukg.services.alignment import AlignQuery, ranked, rerank
from edukg.services.alignment import aligning as align_module
from edukg.services.alignment.profile import profiles
from edukg.store import open_store
from edukg.store.base import Store

HIGH_SCHOOL = grade_mask(["9", "10", "11", "12"])
CASES = [
    ("Prove that the measures of the interior angles of a triangle sum to 180 degrees.",
     "HSG-CO.C.10"),
    ("Prove that the base angles of an isosceles triangle are congruent.", "HSG-CO.C.10"),
    ("Prove the Pythagorean theorem using similar triangles.", "HSG-SRT.B.4"),
    ("Prove that a line parallel to one side of a triangle divides the other two sides"
     " proportionally.", "HSG-SRT.B.4"),
]  # fmt: skip


@pytest.fixture(scope="module")
def store(indexed_sample_db: str) -> Iterator[Store]:
    found = open_store(indexed_sample_db)
    yield found
    found.close()


def _first_twin(store: Store, text: str) -> str | None:
    """Which of the two twins the ranking puts first for `text` (of the high-school
    standards), whatever else ranks above them."""
    found = ranked(store, AlignQuery(text, jurisdiction="Multi-State", grades_mask=HIGH_SCHOOL))
    scores = {code: float(found.total[i]) for i, code in enumerate(found.view.codes)
              if code in ("HSG-CO.C.10", "HSG-SRT.B.4")}  # fmt: skip
    return max(scores, key=lambda code: scores[code]) if scores else None


def test_twins_are_told_apart_by_their_notes(store: Store) -> None:
    assert [_first_twin(store, text) for text, _ in CASES] == [want for _, want in CASES]


def test_without_the_notes_the_statement_alone_cannot_tell(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    without = replace(profiles(), align=replace(profiles().align, notes_weight=0.0))
    monkeypatch.setattr(align_module, "profiles", lambda: without)
    monkeypatch.setattr(rerank, "profiles", lambda: without)
    # The texts written for each twin tell them apart too (the learned stage) ...
    assert [_first_twin(store, text) for text, _ in CASES] == [want for _, want in CASES]
    # ... and without them and the notes, the shared statement cannot.
    monkeypatch.setattr(rerank, "_learned", lambda: None)
    assert [_first_twin(store, text) for text, _ in CASES] != [want for _, want in CASES]
