"""The answer's rows: each chosen standard as served, with its score, its confidence
band, its domain, its evidence and every place the framework puts it.

Takes the chosen (candidate, score) pairs and a way to make each one's evidence; gives
the `TextAlignedStandard` rows, in order.
"""

from __future__ import annotations

from collections.abc import Callable

from edukg.model.alignment import (
    AlignmentEvidence,
    DomainName,
    Extended,
    PathStep,
    Placement,
    TextAlignedStandard,
)
from edukg.services.alignment.calibrate import band
from edukg.services.alignment.view import StandardsView
from edukg.services.crosswalks import item_of
from edukg.store.base import Store


def rows(store: Store, found: StandardsView, chosen: list[tuple[int, float]],
         evidence: Callable[[int], AlignmentEvidence]) -> list[Extended[TextAlignedStandard]]:  # fmt: skip
    """The chosen standards' rows (a standard the store no longer holds is left out)."""
    records = store.by_identifiers([found.identifiers[i] for i, _ in chosen])
    out = []
    for i, score in chosen:
        record = records.get(found.identifiers[i])
        if record is None:
            continue
        extension = TextAlignedStandard(
            score=round(score, 4),
            confidence=band(score),  # type: ignore[arg-type]
            domain=_domain(found, i),
            evidence=evidence(i),
            placements=_placements(found, i),
        )
        out.append(Extended(record.doc, item_of(found.identifiers[i], record.doc).brief(),
                            extension))  # fmt: skip
    return out


def _domain(found: StandardsView, i: int) -> DomainName | None:
    d = int(found.domain_of[i])
    if d < 0:
        return None
    return DomainName(code=found.domain_codes[d], description=found.domain_names[d] or None)


def _placements(found: StandardsView, i: int) -> list[Placement]:
    """Every candidate of `i`'s group (the same code and statement), with its path."""
    group = found.groups[i]
    members = [int(j) for j in (found.groups == group).nonzero()[0]]
    return [
        Placement(
            identifier=found.identifiers[j],
            caseIdentifierUUID=found.case_uuids[j],
            path=[
                PathStep(
                    statementCode=n.code, description=n.description, statementType=n.statement_type
                )
                for n in found.ancestry.path(found.identifiers[j])
            ],
        )
        for j in members
    ]
