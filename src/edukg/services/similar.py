"""A standard's counterparts in another jurisdiction or framework, by meaning alone.

For the frameworks that learning components do not reach (most states outside math and
early ELA), the statements themselves are the evidence: the target's standards of the
same subject and statement type, in overlapping grades unless asked otherwise, ranked by
the cosine of their statements' vectors (by words without a semantic index). Where
learning components also link a suggestion to the standard, the answer shows them with
their Jaccard figures, so a client sees which suggestions evidence backs too.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import orjson

from edukg.model.errors import ValidationError
from edukg.model.records import with_encoded
from edukg.model.vocabulary import COMPONENT, STANDARD, grade_mask
from edukg.services import graph
from edukg.services.crosswalks import Item, component_sets, framework, framework_items, item_of
from edukg.services.crosswalks import overlap as jaccard_of
from edukg.services.meaning import indexed
from edukg.services.search import query_words
from edukg.store.base import Members, Search, Store

_POOL = 200  # suggestions read before the framework and score filters
_SHARED_SHOWN = 10


@dataclass(frozen=True)
class SimilarQuery:
    """Which standard, and where to look for its counterparts."""

    case_uuid: str
    jurisdiction: str | None = None
    framework: str | None = None  # CASE UUID
    limit: int = 5
    min_score: float | None = None
    any_grade: bool = False


def similar(store: Store, query: SimilarQuery) -> dict[str, Any]:
    """`{"data": [...], "ranking": ...}`: the target's standards most alike in meaning."""
    if (query.jurisdiction is None) == (query.framework is None):
        raise ValidationError(
            "Say where to look: give exactly one of `jurisdiction` or"
            " `standardsFrameworkCaseIdentifierUUID`.",
            {"parameters": ["jurisdiction", "standardsFrameworkCaseIdentifierUUID"]},
        )
    found = graph.standard(store, query.case_uuid)
    source = item_of(found.identifier, found.doc)
    jurisdiction, allowed = query.jurisdiction, None
    if query.framework is not None:
        target = framework(store, query.framework)
        jurisdiction = orjson.loads(target.doc).get("jurisdiction")
        allowed = set(framework_items(store, Members(target.identifier))[0])
    mask = 0 if query.any_grade else grade_mask(list(source.grades))
    search = Search(STANDARD, (), jurisdiction, source.subject, source.statement_type, mask)
    ranked, ranking = _ranked(store, source, search)
    floor = query.min_score or 0.0
    best = [
        (i, s)
        for i, s in ranked
        if i != source.identifier and (allowed is None or i in allowed) and s >= floor
    ][: query.limit]
    return {"data": _answer(store, source, best), "ranking": ranking}


def _ranked(store: Store, source: Item, search: Search) -> tuple[list[tuple[str, float]], str]:
    """(identifier, score) best first, and how they were ranked."""
    targets = indexed(store, search)
    vector = _vector_of(store, source) if targets is not None else None
    if targets is not None and vector is not None and targets.identifiers:
        return targets.top(vector[None, :], _POOL, 0.0)[0], "semantic"
    words = query_words(source.description or "")
    if not words:
        return [], "lexical"
    found = store.search(Search(STANDARD, words, *_filters(search)), _POOL)
    return [(i, min(0.9999, r / (r + 1.0))) for i, _, r in found], "lexical"


def _filters(search: Search) -> tuple[str | None, str | None, str | None, int]:
    return search.jurisdiction, search.subject, search.statement_type, search.grades_mask


def _vector_of(store: Store, source: Item) -> Any:
    """The standard's own vector, from the index of its jurisdiction."""
    own = indexed(store, Search(STANDARD, (), source.jurisdiction, source.subject))
    if own is None or source.identifier not in own.rows:
        return None
    return own.vectors[own.rows[source.identifier]]


def _answer(store: Store, source: Item, best: list[tuple[str, float]]) -> list[bytes]:
    records = store.by_identifiers([i for i, _ in best])
    sets = component_sets(store, [source.identifier, *records])
    mine = sets.get(source.identifier, frozenset())
    shared_all = sorted({lc for i in records for lc in sets.get(i, frozenset()) & mine})
    described = {
        i: orjson.loads(f.doc).get("description")
        for i, f in store.by_identifiers(shared_all).items()
        if f.kind == COMPONENT
    }
    out = []
    for identifier, score in best:
        record = records.get(identifier)
        if record is None:
            continue
        theirs = sets.get(identifier, frozenset())
        shared = None
        if mine & theirs:
            jaccard, a, b, count = jaccard_of(mine, theirs)
            shared = {
                "jaccard": jaccard,
                "sharedLCCount": count,
                "sourceLCCount": a,
                "targetLCCount": b,
                "learningComponents": [
                    {"identifier": lc, "description": described.get(lc)}
                    for lc in sorted(mine & theirs)[:_SHARED_SHOWN]
                ],
            }
        extra = {"score": round(score, 4), "sharedLearningComponents": shared}
        out.append(with_encoded(record.doc, orjson.dumps(extra)[1:-1]))
    return out
