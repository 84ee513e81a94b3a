"""A standard's counterparts in another jurisdiction or framework, by meaning and words.

For the frameworks that learning components do not reach (most states outside math and
early ELA), the statements themselves are the evidence: the target's standards of the
same subject and statement type, in overlapping grades unless asked otherwise, ranked by
how alike their statements are in meaning, with the words they share and how alike the
headings of their domains are added (services.alignment.fusion puts them on one scale);
by words alone without a semantic index. A standard the target framework repeats in
several places is answered once, with every place. Where learning components also link a
suggestion to the standard, the answer shows them with their Jaccard figures.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import orjson

from edukg.model.alignment import (
    Extended,
    MatchedComponentRef,
    SharedComponents,
    SimilarStandard,
)
from edukg.model.errors import ValidationError
from edukg.model.vocabulary import COMPONENT, STANDARD, grade_mask
from edukg.services import graph
from edukg.services.alignment.calibrate import shares
from edukg.services.alignment.choose import choose
from edukg.services.alignment.fusion import fused
from edukg.services.alignment.profile import profiles
from edukg.services.alignment.vector_index import indexed
from edukg.services.alignment.view import StandardsView, Vectors, vectors, view
from edukg.services.crosswalks import Item, component_sets, item_of
from edukg.services.crosswalks import overlap as jaccard_of
from edukg.services.frameworks import framework
from edukg.store.base import Search, Store

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


@dataclass(frozen=True)
class Similar:
    """A standard's counterparts, best first (model.alignment.SimilarStandards)."""

    data: list[Extended[SimilarStandard]]
    ranking: str
    note: str | None = None

    def encoded(self) -> bytes:
        from edukg.model.alignment import encoded_list  # noqa: PLC0415

        rest: dict[str, Any] = {"ranking": self.ranking}
        if self.note:
            rest["note"] = self.note
        return encoded_list(list(self.data), rest)


def similar(store: Store, query: SimilarQuery) -> Similar:
    """The target's standards most alike to the standard."""
    source, targets, scored, ranking = candidates(store, query)
    widened = _widened(store, query, source)
    profile = profiles().similar
    calibration = profile.calibration[ranking]
    by_number = {i: (share, alike) for i, share, alike in scored}
    # The standard itself, wherever it repeats, is never its own counterpart.
    itself = frozenset(int(targets.groups[i]) for i, name in enumerate(targets.identifiers)
                       if name == source.identifier)  # fmt: skip
    best = choose([i for i, _, _ in scored], targets.groups,
                  lambda i: calibration.score(*by_number[i]), profile.choice, query.limit,
                  query.min_score, itself)  # fmt: skip
    floor = profile.choice.min_score if query.min_score is None else query.min_score
    note = _why(query, source, widened, bool(scored), bool(best), floor)
    return Similar(_answer(store, source, targets, best), ranking, note)


def _why(query: SimilarQuery, source: Item, widened: bool, scored: bool, found: bool,
         floor: float) -> str | None:  # fmt: skip
    """What an empty or widened answer says about itself."""
    place = query.jurisdiction or "that framework"
    grades = not query.any_grade and bool(source.grades)
    if not found and not scored:
        return (f"{place} has no {source.subject or ''} standards".replace("  ", " ")
                + (" in a grade this one shares (gradeLevel=any looks at every grade)."
                   if grades else "."))  # fmt: skip
    if not found:
        return (f"No standard of {place} scored {floor:g} or more"
                + (" in a grade this one shares (gradeLevel=any looks at every grade)."
                   if grades else "; minScore=0 shows the best anyway."))  # fmt: skip
    if widened:
        return (
            f"{place} has no standards of this one's statement type"
            f" ({source.statement_type}): its standards of type Standard were compared."
        )
    return None


def _statement_type(store: Store, query: SimilarQuery, source: Item) -> str | None:
    """The statement type to look for in the target: the standard's own, or Standard
    where the target has none of that type (an imported CASE item is often "Other")."""
    own = source.statement_type
    if own == _STANDARD_TYPE or own is None:
        return own
    within = framework(store, query.framework).identifier if query.framework else None
    search = Search(STANDARD, (), None if within else query.jurisdiction, source.subject, own,
                    0, within)  # fmt: skip
    if view(store, search, indexed(store, search)).identifiers:
        return own
    return _STANDARD_TYPE


def _widened(store: Store, query: SimilarQuery, source: Item) -> bool:
    return _statement_type(store, query, source) != source.statement_type


_STANDARD_TYPE = "Standard"


def candidates(
    store: Store, query: SimilarQuery
) -> tuple[Item, StandardsView, list[tuple[int, float, float]], str]:
    """The standard, the target's candidates, and (candidate number, share of the
    evidence, cosine of the statements) best first, and how they were ranked (what `similar` answers from,
    and what bench/align_eval.py calibrates its score on)."""
    import numpy as np  # noqa: PLC0415

    if (query.jurisdiction is None) == (query.framework is None):
        raise ValidationError(
            "Say where to look: give exactly one of `jurisdiction` or"
            " `standardsFrameworkCaseIdentifierUUID`.",
            {"parameters": ["jurisdiction", "standardsFrameworkCaseIdentifierUUID"]},
        )
    found = graph.standard(store, query.case_uuid)
    source = item_of(found.identifier, found.doc)
    within = framework(store, query.framework).identifier if query.framework else None
    # One view per place, subject and type (as alignment's); the grades choose among it.
    search = Search(STANDARD, (), None if within else query.jurisdiction, source.subject,
                    _statement_type(store, query, source), 0, within)  # fmt: skip
    index = indexed(store, search)
    targets = view(store, search, index)
    mask = 0 if query.any_grade else grade_mask(list(source.grades))
    keep = np.nonzero(targets.grades & mask)[0] if mask else np.arange(len(targets.identifiers))
    scored, ranking = _scored(store, source, search, targets, index, keep)
    return source, targets, scored, ranking


def _scored(
    store: Store, source: Item, search: Search, targets: StandardsView, index: Any, keep: Any
) -> tuple[list[tuple[int, float, float]], str]:
    """(candidate number, share of the evidence, cosine), best first, and how they were
    ranked."""
    import numpy as np  # noqa: PLC0415

    if not len(keep):
        return [], "semantic" if index is not None else "lexical"
    within = None
    if len(keep) < len(targets.identifiers):
        within = np.zeros(len(targets.identifiers), dtype=bool)
        within[keep] = True
    words = targets.words.scores(source.description or "", within)
    own = _own(store, source)
    vecs = vectors(store, search, targets, index) if index is not None else None
    if own is None or vecs is None:
        channels: dict[str, Any] = {"words": words}
        ranking, similarity = "lexical", np.zeros(len(words), np.float32)
    else:
        vector, heading = own
        similarity = vecs.statements @ vector
        channels = {"statement": similarity, "words": words,
                    "domain": _domains(targets, vecs, heading)}  # fmt: skip
        ranking = "semantic"
    kept = {name: None if values is None else values[keep] for name, values in channels.items()}
    total = fused(kept, profiles().similar.weights[ranking])
    share = shares(total, targets.groups[keep])
    order = np.argsort(-total, kind="stable")
    return [(int(keep[j]), float(share[j]), float(similarity[keep[j]])) for j in order], ranking


def _own(store: Store, source: Item) -> tuple[Any, Any] | None:
    """The standard's own vector and its domain heading's (or None), from the view of its
    own jurisdiction; None without a semantic index."""
    search = Search(STANDARD, (), source.jurisdiction, source.subject, source.statement_type)
    index = indexed(store, search)
    if index is None or source.identifier not in index.rows:
        return None
    mine = view(store, search, index)
    vecs = vectors(store, search, mine, index)
    if vecs is None:
        return None
    i = index.rows[source.identifier]
    d = int(mine.domain_of[i])
    row = int(vecs.heading_rows[d]) if d >= 0 else -1
    return vecs.statements[i], (vecs.headings[row] if row >= 0 else None)


def _domains(targets: StandardsView, vecs: Vectors, heading: Any) -> Any:
    """How alike each target's domain heading is to the standard's (None without one)."""
    import numpy as np  # noqa: PLC0415

    if heading is None or len(vecs.headings) == 0:
        return None
    alike = vecs.headings @ heading
    rows = np.where(targets.domain_of >= 0, vecs.heading_rows[np.maximum(targets.domain_of, 0)],
                    -1)  # fmt: skip
    return np.where(rows >= 0, alike[np.maximum(rows, 0)], float(alike.mean())).astype(np.float32)


def _answer(
    store: Store, source: Item, targets: StandardsView, best: list[tuple[int, float]]
) -> list[Extended[SimilarStandard]]:
    ids = [targets.identifiers[i] for i, _ in best]
    records = store.by_identifiers(ids)
    sets = component_sets(store, [source.identifier, *ids])
    mine = sets.get(source.identifier, frozenset())
    shared_all = sorted({lc for i in ids for lc in sets.get(i, frozenset()) & mine})
    described = {
        i: orjson.loads(f.doc).get("description")
        for i, f in store.by_identifiers(shared_all).items()
        if f.kind == COMPONENT
    }
    out = []
    for (_, score), identifier in zip(best, ids, strict=True):
        record = records.get(identifier)
        if record is None:
            continue
        theirs = sets.get(identifier, frozenset())
        shared = None
        if mine & theirs:
            jaccard, a, b, count = jaccard_of(mine, theirs)
            shared = SharedComponents(
                jaccard=jaccard, sharedLCCount=count, sourceLCCount=a, targetLCCount=b,
                learningComponents=[
                    MatchedComponentRef(identifier=lc, description=described.get(lc))
                    for lc in sorted(mine & theirs)[:_SHARED_SHOWN]
                ],
            )  # fmt: skip
        extension = SimilarStandard(score=round(score, 4), sharedLearningComponents=shared)
        out.append(Extended(record.doc, item_of(identifier, record.doc).brief(), extension))
    return out
