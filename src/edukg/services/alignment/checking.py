"""Check one text against one standard, learning component by learning component.

The standard is ranked among its jurisdiction's standards of its subject and type for
the text by the same stages as `POST /alignments` (services.alignment.aligning.ranked), so
its score and its rank come from the evidence of every standard at once: a standard
that another fits better says so, with the better ones' codes. Its score counts the
best of the standard and its own sub-standards (a text that practises 3.MD.C.7.d
addresses 3.MD.C.7), calibrated as the chance that a publisher would tag it rather
than a standard of the same grade (bench/align_eval.py, `--fit`).

Each learning component that supports the standard (its own; where it has none, those
of its published crosswalk counterparts) is addressed when a passage of the text is
alike to it at the check profile's component floor or more, and answers with those passages' offsets. A
standard with no component at all is checked on its statement alone, and says so.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import orjson

from edukg.model.alignment import (
    CheckedComponent,
    ComponentPassage,
    FrameworkItemBrief,
    StandardCheck,
    StandardStanding,
)
from edukg.model.errors import NotFoundError, ValidationError
from edukg.services import rank
from edukg.services.alignment.aligning import NOT_MATHEMATICS, AlignQuery, ranked
from edukg.services.alignment.calibrate import band, calibrated
from edukg.services.alignment.evidence import evidence_of
from edukg.services.alignment.gate import SUBJECT
from edukg.services.alignment.passages import Passage, vectors
from edukg.services.alignment.profile import profiles
from edukg.services.alignment.scored import Scored
from edukg.services.codes import find_standard_by_code
from edukg.services.crosswalks import item_of
from edukg.services.graph import standard
from edukg.store.base import COMPONENTS, CROSSWALK, Store

DEFAULT_JURISDICTION = "Multi-State"
PASSAGES_SHOWN = 3
BETTER_SHOWN = 10


@dataclass(frozen=True)
class CheckQuery:
    """The text, and the standard: by CASE UUID, or by code in a jurisdiction."""

    text: str
    case_uuid: str | None = None
    code: str | None = None
    jurisdiction: str | None = None


def check(store: Store, query: CheckQuery) -> StandardCheck:
    """How well `query.text` addresses one standard, component by component."""
    identifier, record, found = _ranked(store, query)
    brief = item_of(identifier, orjson.dumps(record)).brief()
    from_, lcs = _components(store, identifier)
    signals = found.channels
    i = _position(found, identifier)
    ranking = "semantic" if rank.available() else "lexical"
    profile = profiles().check
    if found.mathematics is False and record.get("academicSubject") == SUBJECT:
        checked = _by_meaning(found, lcs, indexed=False) if lcs else []
        return _answer(brief, 0.0, checked, from_, None, None, ranking, len(found.parts),
                       NOT_MATHEMATICS)  # fmt: skip
    if signals is None or i is None:
        checked = _by_words(found.parts, lcs) if lcs else []
        return _answer(brief, 0.0, checked, from_, None, None, ranking, len(found.parts))
    ranking = signals.ranking
    if signals.vectors is not None and found.candidates.matrix is not None:
        checked = _by_meaning(found, lcs)
    else:
        checked = _by_words(found.parts, lcs)
    best = max((c.score for c in checked), default=0.0)
    standing = _standing(found, i)
    score = profile.calibration[ranking].score(_family_best(found, i, _total_of(found)), best,
                                               standing.position)  # fmt: skip
    alignment = calibrated(found, profiles().align.calibration[ranking])(i)
    return _answer(brief, score, checked, from_, standing,
                   evidence_of(found, i, profiles().align.evidence_floor), ranking,
                   len(found.parts), alignment=alignment)  # fmt: skip


def _total_of(found: Scored) -> Callable[[int], float]:
    return lambda j: float(found.total[j])


def calibration_inputs(store: Store, query: CheckQuery) -> tuple[float, float, int]:
    """What the score is a logistic map of: the fused score of the standard's family, its
    best component's similarity and its rank (bench/align_eval.py --fit fits the check
    profile's calibration on these)."""
    result = check(store, query)
    identifier, _, found = _ranked(store, query)
    i = _position(found, identifier)
    fused = 0.0
    if i is not None and found.channels is not None:
        fused = _family_best(found, i, _total_of(found))
    position = result.rank.position if result.rank is not None else 1000
    return fused, max((c.score for c in result.learningComponents), default=0.0), position


def _ranked(store: Store, query: CheckQuery) -> tuple[str, dict[str, Any], Scored]:
    """The standard, and every standard of its place ranked for the text."""
    identifier, record = _standard(store, query)
    found = ranked(store, AlignQuery(
        query.text, jurisdiction=record.get("jurisdiction"), subject=record.get("academicSubject"),
        statement_type=record.get("normalizedStatementType") or "Standard",
    ))  # fmt: skip
    return identifier, record, found


def _standard(store: Store, query: CheckQuery) -> tuple[str, dict[str, Any]]:
    """The standard's identifier and record."""
    if query.case_uuid:
        found = standard(store, query.case_uuid.lower())
        return found.identifier, orjson.loads(found.doc)
    code = (query.code or "").strip()
    if not code:
        raise ValidationError("Give `caseIdentifierUUID`, or `statementCode` (with"
                              " `jurisdiction`).", {"parameter": "statementCode"})  # fmt: skip
    place = query.jurisdiction or DEFAULT_JURISDICTION
    # As people write codes (6.RP.3c, A-REI.11): the answer names the standard found.
    row = find_standard_by_code(store, code, place)
    if row is None:
        raise NotFoundError(f"No standard with code {code} in {place}.")
    identifier, doc = row  # a code a framework repeats is one standard
    return identifier, orjson.loads(doc)


def _position(found: Scored, identifier: str) -> int | None:
    try:
        return found.view.identifiers.index(identifier)
    except ValueError:
        return None


def _family_best(found: Scored, i: int, score_of: Callable[[int], float]) -> float:
    """`score_of` `i` or of its best sub-standard, whichever is higher (a text that
    practises 3.MD.C.7.d addresses 3.MD.C.7)."""
    code = found.view.codes[i]
    best = score_of(i)
    if code:
        prefix = code + "."
        for j, other in enumerate(found.view.codes):
            if other and other.startswith(prefix) and math.isfinite(float(found.total[j])):
                best = max(best, score_of(j))
    return best


def _standing(found: Scored, i: int) -> StandardStanding:
    """Where `i` stands among the distinct standards, and the codes above it."""
    total, groups, codes = found.total, found.view.groups, found.view.codes
    best: dict[int, int] = {}
    for j in range(len(total)):
        g = int(groups[j])
        if g not in best or total[j] > total[best[g]]:
            best[g] = j
    mine = float(total[i])
    own = (codes[i] or "\0") + "."  # its sub-standards are part of it, never better
    above = sorted((j for j in best.values() if total[j] > mine and int(groups[j]) != int(groups[i])
                    and not (codes[j] or "").startswith(own)),
                   key=lambda j: -float(total[j]))  # fmt: skip
    return StandardStanding(position=len(above) + 1, of=len(best),
                            better=[codes[j] or found.view.identifiers[j]
                                    for j in above[:BETTER_SHOWN]])  # fmt: skip


def _components(store: Store, identifier: str) -> tuple[str, list[tuple[str, str]]]:
    """Where the standard's components come from, and each (identifier, description)."""
    own = sorted({lc for _, lc in store.links_many(COMPONENTS, [identifier])})
    source = "own"
    if not own:
        lenders = sorted({other for _, other, _ in store.rows_many(CROSSWALK, [identifier])})
        own = sorted({lc for _, lc in store.links_many(COMPONENTS, lenders)}) if lenders else []
        source = "crosswalk" if own else "none"
    docs = store.by_identifiers(own)
    named = [(lc, orjson.loads(docs[lc].doc).get("description") or "") for lc in own if lc in docs]
    return source, sorted(named, key=lambda pair: (pair[1], pair[0]))


def _by_meaning(found: Scored, lcs: list[tuple[str, str]],
                indexed: bool = True) -> list[CheckedComponent]:  # fmt: skip
    """Each component against every passage by meaning (its vector from the index, or
    embedded where the index lacks it, no ranking was made or `indexed` is False)."""
    import numpy as np  # noqa: PLC0415

    signals = found.channels if indexed else None
    vecs = signals.vectors if signals is not None else None
    number = {c: n for n, c in enumerate(found.view.components)}
    rows = []
    missing = []
    for k, (lc, _) in enumerate(lcs):
        n = number.get(lc)
        row = int(vecs.component_rows[n]) if n is not None and vecs is not None else -1
        rows.append(vecs.components[row] if vecs is not None and row >= 0 else None)
        if row < 0:
            missing.append(k)
    if missing:
        embedded = vectors([lcs[k][1] or lcs[k][0] for k in missing])
        for k, vector in zip(missing, embedded, strict=True):
            rows[k] = vector
    if not rows:
        return []
    matrix = found.candidates.matrix
    if signals is None or matrix is None:
        matrix = vectors([p.text for p in found.parts])
    sims = matrix @ np.asarray(rows, dtype=np.float32).T  # passages x components
    floor = profiles().check.component_floor
    return [_checked(lc, text, sims[:, k].tolist(), found.parts, floor)
            for k, (lc, text) in enumerate(lcs)]  # fmt: skip


def _by_words(parts: list[Passage], lcs: list[tuple[str, str]]) -> list[CheckedComponent]:
    """Each component against every passage by its words (BM25 mapped onto 0-1)."""
    from edukg.services.alignment import bm25  # noqa: PLC0415

    index = bm25.index([text for _, text in lcs])
    floor = profiles().check.words_floor
    return [
        _checked(lc, text, [rank.relevance_score(index.score_of(p.text, k)) for p in parts],
                 parts, floor)
        for k, (lc, text) in enumerate(lcs)
    ]  # fmt: skip


def _checked(lc: str, text: str, sims: list[float], parts: list[Passage],
             floor: float) -> CheckedComponent:  # fmt: skip
    order = sorted(range(len(sims)), key=lambda p: -sims[p])
    best = sims[order[0]] if order else 0.0
    shown = [p for p in order if sims[p] >= floor][:PASSAGES_SHOWN]
    return CheckedComponent(
        identifier=lc,
        description=text or None,
        addressed=best >= floor,
        score=round(max(0.0, min(1.0, best)), 4),
        passages=[ComponentPassage(start=parts[p].start, end=parts[p].end, text=parts[p].text,
                                   similarity=round(max(0.0, sims[p]), 4))
                  for p in sorted(shown)],
    )  # fmt: skip


def _answer(brief: FrameworkItemBrief, score: float, checked: list[CheckedComponent],
            from_: str, standing: StandardStanding | None, evidence: Any, ranking: str,
            passages: int, why: str | None = None,
            alignment: float | None = None) -> StandardCheck:  # fmt: skip
    note = None
    threshold = profiles().check.aligned
    if checked and not any(c.addressed for c in checked) and score >= threshold:
        # The verdict agrees with its evidence: a standard none of whose learning
        # components the text addresses is not aligned, whatever its rank.
        score = min(score, round(threshold - 0.01, 4))
        why = why or (f"None of this standard's {len(checked)} learning components is"
                      " addressed by a passage of the text: not aligned, whatever its rank.")  # fmt: skip
    if not checked:
        note = ("This standard has no learning components, its own or through a published"
                " crosswalk: its statement is the one thing checked.")  # fmt: skip
    if why is not None:
        note = why
    elif standing is None:
        note = ("This standard is not among the standards this release ranks by meaning or"
                " words (its jurisdiction has no index rows for it): no score or rank.")  # fmt: skip
    score = round(score, 4)
    return StandardCheck(
        standard=brief,
        aligned=score >= threshold,
        score=score,
        alignmentScore=None if alignment is None else round(alignment, 4),
        confidence=band(score),  # type: ignore[arg-type]
        componentsFrom=from_,  # type: ignore[arg-type]
        alignedCount=sum(c.addressed for c in checked),
        totalCount=len(checked),
        learningComponents=checked,
        rank=standing,
        evidence=evidence,
        ranking=ranking,  # type: ignore[arg-type]
        passages=passages,
        note=note,
    )
