"""Align a text (a lesson, an item, an activity) to standards, with the evidence.

The text is cut into passages (services.passages). Every standard the filters admit is
scored against the whole text on four channels (services.alignment_scoring): its
statement and the learning components that support it, by meaning over the passages
(where the release has a semantic index and the model is installed); its statement's
words; and its domain's heading. The channels are fused, the grades the best matches
share lend a small prior, and a standard the framework repeats in several places is
answered once with every place it stands. Each answer carries a calibrated score and the
passages that address it most specifically, with what each matched.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from edukg.model.alignment import (
    DomainName,
    Extended,
    FrameworkItemBrief,
    PathStep,
    Placement,
    TextAlignedStandard,
)
from edukg.model.errors import ValidationError
from edukg.model.vocabulary import STANDARD
from edukg.services import alignment_scoring as scoring
from edukg.services import rank
from edukg.services.alignment_evidence import Signals, evidence_of
from edukg.services.crosswalks import item_of
from edukg.services.frameworks import framework
from edukg.services.passages import Passage, passages
from edukg.services.standards_view import StandardsView, Vectors, vectors, view
from edukg.services.subject_gate import gate
from edukg.services.vector_index import indexed
from edukg.store.base import Search, Store

MAX_TEXT = 20_000  # characters
MIN_SCORE = 0.01  # calibrated: below this a standard is not answered at all
# A text none of whose passages is this alike to any candidate's statement or components
# says nothing the standards say ("The French Revolution began in 1789." against Common
# Core math: 0.22; 298 of the 300 dev problems reach 0.25 or more): nothing is answered.
TEXT_FLOOR = 0.25


@dataclass(frozen=True)
class AlignQuery:
    """What to align, and among which standards."""

    text: str
    framework: str | None = None  # a framework's CASE UUID
    jurisdiction: str | None = None
    subject: str | None = None
    grades_mask: int = 0
    statement_type: str | None = "Standard"
    limit: int = 10


@dataclass(frozen=True)
class Alignment:
    """The standards a text addresses, best first (model.alignment.TextAlignment)."""

    data: list[Extended[TextAlignedStandard]]
    ranking: str
    passages: int
    note: str | None = None

    def encoded(self) -> bytes:
        from edukg.model.alignment import encoded_list  # noqa: PLC0415

        rest: dict[str, Any] = {"ranking": self.ranking, "passages": self.passages}
        if self.note:
            rest["note"] = self.note
        return encoded_list(list(self.data), rest)


# The ranking's version: part of every alignment answer's ETag and response-cache key, so
# that an upgrade that changes scores never answers 304 with old ones. Raise ENGINE with
# any change to how standards are ranked or scored; the gate's weights count by digest.
ENGINE = "align-15"


def version() -> str:
    """The version of alignment's ranking: the engine and its learned stage."""
    found = gate()
    return f"{ENGINE}+gate-{found.fingerprint if found is not None else 'none'}"


NOT_MATHEMATICS = ("This text does not read as mathematics (alignment's subject gate), so no"
                   " mathematics standard is answered for it.")  # fmt: skip
UNRELATED = "No passage of this text is alike enough to any of these standards."


@dataclass(frozen=True)
class Ranked:
    """Every candidate of an alignment, scored: what `align` answers from (and what
    bench/align_eval.py calibrates the score on)."""

    view: StandardsView
    parts: list[Passage]
    signals: Signals | None  # None when the filters admit no standard
    # Whether the subject gate found that the text reads as mathematics (None: no gate,
    # no model or no index, and the similarity floor decides instead).
    mathematics: bool | None = None


def ranked(store: Store, query: AlignQuery) -> Ranked:
    """The candidates of `query` with their channels and fused scores."""
    text = query.text
    if not text.strip():
        raise ValidationError("`text` is empty.", {"parameter": "text"})
    if len(text) > MAX_TEXT:
        raise ValidationError(f"`text` is longer than {MAX_TEXT} characters.",
                              {"parameter": "text"})  # fmt: skip
    within = framework(store, query.framework).identifier if query.framework else None
    # One view per place, subject and type, whatever the grades: the grades choose among
    # its candidates (so that each combination of grades costs no view of its own).
    search = Search(STANDARD, (), None if within else query.jurisdiction, query.subject,
                    query.statement_type, 0, within)  # fmt: skip
    index = indexed(store, search)
    found = view(store, search, index)
    parts = passages(text)
    keep = _in_grades(found, query.grades_mask)
    matrix = rank.vectors([p.text for p in parts]) if index is not None else None
    reads = _reads_as_mathematics(matrix)
    if reads is False:  # no mathematics standard for a text about something else
        keep = keep[~found.mathematics[keep]]
    if not len(keep):
        return Ranked(found, parts, None, reads)
    signals = _signals(store, search, found, index, text, parts, keep, matrix)
    return Ranked(found, parts, signals, reads)


def _reads_as_mathematics(matrix: Any) -> bool | None:
    """The subject gate's verdict on the passages (None without it or the vectors)."""
    found = gate()
    if found is None or matrix is None:
        return None
    return found.reads_as_mathematics(matrix)


def _in_grades(found: StandardsView, mask: int) -> Any:
    """The candidates of any of the grades in `mask` (all of them when 0)."""
    import numpy as np  # noqa: PLC0415

    if not mask:
        return np.arange(len(found.identifiers))
    return np.nonzero(found.grades & mask)[0]


def align(store: Store, query: AlignQuery) -> Alignment:
    """The standards `query.text` addresses, best first, each with its evidence."""
    found = ranked(store, query)
    note = NOT_MATHEMATICS if found.mathematics is False else None
    if found.signals is None:
        ranking = "semantic" if rank.available() else "lexical"
        return Alignment([], ranking, len(found.parts), note or UNRELATED)
    signals = found.signals
    if not found.mathematics and not _relevant(signals, found.view, found.mathematics):
        return Alignment([], signals.ranking, len(found.parts), note or UNRELATED)
    data = _answer(store, found.view, found.parts, signals, query.limit)
    return Alignment(data, signals.ranking, len(found.parts), None if data else note)


def _relevant(signals: Signals, found: StandardsView, mathematics: bool | None) -> bool:
    """Whether the text shares anything with the standards of the place asked about (any
    grade): by meaning, a passage at least TEXT_FLOOR alike to one of them; by words, one
    word in common. A text the subject gate reads as mathematics needs no floor; one it
    does not is measured against the standards of other subjects alone."""
    import numpy as np  # noqa: PLC0415

    among = ~found.mathematics if mathematics is False else np.ones(len(found.codes), bool)
    if not among.any():
        return False
    best = float(np.max(signals.statement[among]))
    if signals.components is not None:
        best = max(best, float(np.max(signals.components[among])))
    return best >= (TEXT_FLOOR if signals.ranking == "semantic" else 1e-9)


def _signals(
    store: Store,
    search: Search,
    found: StandardsView,
    index: Any,
    text: str,
    parts: list[Passage],
    keep: Any,
    matrix: Any,
) -> Signals:
    """Every candidate's channels, and the fused score of those in `keep` (the others
    score minus infinity)."""
    import numpy as np  # noqa: PLC0415

    vecs = vectors(store, search, found, index) if matrix is not None else None
    within = None
    if len(keep) < len(found.identifiers):
        within = np.zeros(len(found.identifiers), dtype=bool)
        within[keep] = True
    words = found.words.scores(text, within)
    if matrix is None or vecs is None:
        return _lexical(found, text, parts, words, keep)
    statement, means, spreads = scoring.pooled(matrix, vecs.statements)
    components = _components_by_meaning(found, vecs, matrix, statement)
    domain = _domains_by_meaning(found, vecs, matrix)
    channels = {"statement": statement, "components": components, "words": words,
                "domain": domain}  # fmt: skip
    total = _told_apart(_total(channels, scoring.SEMANTIC, found, keep), found, matrix)
    return Signals("semantic", total, statement, components, matrix, means, spreads, vecs)


# How far a twin's notes move it against the twins it shares a statement with: per unit of
# pooled cosine above their mean (fixed beforehand, not fitted: the notes only break what
# the statement cannot tell; bench/align_eval.py measures the dev problems unchanged).
NOTES_WEIGHT = 5.0


def _told_apart(total: Any, found: StandardsView, matrix: Any) -> Any:
    """`total` with the candidates that share a statement with another code's (G-CO.C.10
    and G-SRT.B.4, "Prove theorems about triangles.") moved apart by how alike the text is
    to each one's notes (else the grouping above it)."""
    import numpy as np  # noqa: PLC0415

    twins = np.nonzero((found.twins >= 0) & np.isfinite(total))[0]
    if not len(twins):
        return total
    telling = rank.vectors([found.telling[i] or found.statements[i] for i in twins])
    if telling is None:
        return total
    alike, _, _ = scoring.pooled(matrix, telling)
    out = total.copy()
    for number in set(found.twins[twins].tolist()):
        members = found.twins[twins] == number
        if members.sum() < 2:
            continue
        values = alike[members]
        out[twins[members]] += NOTES_WEIGHT * (values - values.mean())
    return out


def _total(channels: dict[str, Any], weights: scoring.Weights, found: StandardsView,
           keep: Any) -> Any:  # fmt: skip
    """The fused score with the grade prior, over the candidates in `keep` (each channel
    put on one scale among them); minus infinity for the rest."""
    import numpy as np  # noqa: PLC0415

    kept = {name: None if values is None else values[keep] for name, values in channels.items()}
    fused = scoring.with_grade_prior(scoring.fused(kept, weights), found.grades[keep],
                                     weights.grade_prior)  # fmt: skip
    total = np.full(len(found.identifiers), -np.inf, dtype=np.float64)
    total[keep] = fused
    return total


def _components_by_meaning(found: StandardsView, vecs: Vectors, matrix: Any, statement: Any) -> Any:
    """Each candidate's best supporting component, pooled over the passages; a candidate
    that no indexed component supports is taken at its statement's value (no components
    is no evidence either way: bench/align_eval.py measured this against counting it as
    the lowest value, which sank such standards, the practices among them)."""
    import numpy as np  # noqa: PLC0415

    pooled_lcs, _, _ = scoring.pooled(matrix, vecs.components)
    per_lc = np.where(vecs.component_rows >= 0, pooled_lcs[np.maximum(vecs.component_rows, 0)],
                      np.nan).astype(np.float32)  # fmt: skip
    best = scoring.per_candidate(per_lc, found.component_start, found.component_index, np.nan)
    return np.where(np.isnan(best), statement, best).astype(np.float32)


def _domains_by_meaning(found: StandardsView, vecs: Vectors, matrix: Any) -> Any:
    import numpy as np  # noqa: PLC0415

    pooled_heads, _, _ = scoring.pooled(matrix, vecs.headings)
    rows = np.where(found.domain_of >= 0, vecs.heading_rows[np.maximum(found.domain_of, 0)], -1)
    if len(pooled_heads) == 0:
        return None
    fill = float(pooled_heads.mean())
    return np.where(rows >= 0, pooled_heads[np.maximum(rows, 0)], fill).astype(np.float32)


def _lexical(
    found: StandardsView, text: str, parts: list[Passage], words: Any, keep: Any
) -> Signals:
    """Words alone: the statements' BM25, and the supporting components' (without a
    semantic index or the model)."""
    import numpy as np  # noqa: PLC0415

    lcs = found.component_words.scores(text) if found.components else None
    components = None
    if lcs is not None:  # as by meaning: no components, the statement's value
        best = scoring.per_candidate(lcs, found.component_start, found.component_index, np.nan)
        components = np.where(np.isnan(best), words, best).astype(np.float32)
    total = _total({"words": words, "components": components}, scoring.LEXICAL, found, keep)
    raw = np.array([rank.relevance_score(float(w)) for w in words], dtype=np.float32)
    mapped = None
    if components is not None:
        mapped = np.array([rank.relevance_score(float(c)) for c in components], np.float32)
    return Signals("lexical", total, raw, mapped, None, None, None, None)


def _answer(
    store: Store, found: StandardsView, parts: list[Passage], signals: Signals, limit: int
) -> list[Extended[TextAlignedStandard]]:
    """The best `limit` distinct standards, each with its score, evidence and places."""
    import numpy as np  # noqa: PLC0415

    order = np.argsort(-signals.total, kind="stable")
    calibration = scoring.CALIBRATED[signals.ranking]
    share = scoring.shares(signals.total, found.groups)
    chosen: list[tuple[int, float]] = []
    seen: set[int] = set()
    for i in order:
        if not np.isfinite(signals.total[i]):
            break  # the rest lie outside the grades asked for
        group = int(found.groups[i])
        if group in seen:
            continue
        seen.add(group)
        score = calibration.score(float(share[i]), signals.best_similarity(int(i)))
        if chosen:  # down the list a score never rises above the one before
            score = min(score, chosen[-1][1])
        if score < MIN_SCORE:
            break
        chosen.append((int(i), score))
        if len(chosen) >= limit:
            break
    records = store.by_identifiers([found.identifiers[i] for i, _ in chosen])
    out = []
    for i, score in chosen:
        record = records.get(found.identifiers[i])
        if record is None:
            continue
        extension = TextAlignedStandard(
            score=round(score, 4),
            confidence=scoring.band(score),  # type: ignore[arg-type]
            domain=_domain(found, i),
            evidence=evidence_of(found, i, parts, signals),
            placements=_placements(found, i),
        )
        out.append(Extended(record.doc, _brief(found, i, record.doc), extension))
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


def _brief(found: StandardsView, i: int, doc: bytes) -> FrameworkItemBrief:
    return item_of(found.identifiers[i], doc).brief()
