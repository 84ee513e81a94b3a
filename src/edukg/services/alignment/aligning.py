"""The entrance of `POST /alignments`: align a text (a lesson, an item, an activity) to
standards, with the evidence.

    passages ─► candidates ─► channels ─► fusion ─► rerank   (ranked: the Scored result)
             ─► calibrate ─► choose ─► evidence, placements  (align: the answer)

Each stage is one module of this package and says what it takes and gives; the weights,
the calibration and the floors are the task's profile (profile.py).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from edukg.model.alignment import Extended, TextAlignedStandard
from edukg.model.errors import ValidationError
from edukg.model.text import is_blank
from edukg.services import rank
from edukg.services.alignment import artifacts, calibrate, gate, placements, rerank
from edukg.services.alignment.candidates import candidates
from edukg.services.alignment.channels import channels
from edukg.services.alignment.choose import choose, ranked_order, relevant
from edukg.services.alignment.evidence import evidence_of
from edukg.services.alignment.fusion import fusion
from edukg.services.alignment.passages import passages
from edukg.services.alignment.profile import profiles
from edukg.services.alignment.scored import Scored
from edukg.store.base import Store

MAX_TEXT = 20_000  # characters


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
    jurisdictions: list[str]
    note: str | None = None

    def encoded(self) -> bytes:
        from edukg.model.alignment import encoded_list  # noqa: PLC0415

        rest: dict[str, Any] = {"ranking": self.ranking, "passages": self.passages,
                                "jurisdictions": self.jurisdictions}  # fmt: skip
        if self.note:
            rest["note"] = self.note
        return encoded_list(list(self.data), rest)


def version() -> str:
    """The version of alignment's ranking: the profile's, and the learned artifacts' (part
    of every alignment answer's ETag and response-cache key, so that an upgrade that
    changes scores never answers 304 with old ones)."""
    found = gate.gate()
    learned = rerank.fingerprint()
    return (f"{profiles().align.version}+gate-{found.fingerprint if found is not None else 'none'}"
            + (f"+rerank-{learned}" if learned else ""))  # fmt: skip


def health() -> dict[str, Any]:
    """For /healthz: the ranking's version, the subject gate, and every learned artifact
    with its fingerprint or the reason the loader refused it."""
    return {"version": version(), **gate.status(), "artifacts": artifacts.report()}


NOT_MATHEMATICS = ("This text does not read as mathematics (alignment's subject gate), so no"
                   " mathematics standard is answered for it.")  # fmt: skip
UNRELATED = "No passage of this text is alike enough to any of these standards."


def ranked(store: Store, query: AlignQuery) -> Scored:
    """Every candidate of `query`, with its channels and scores."""
    text = query.text
    if is_blank(text):  # zero-width characters and a byte-order mark are nothing too
        raise ValidationError("`text` is empty.", {"parameter": "text"})
    if len(text) > MAX_TEXT:
        raise ValidationError(f"`text` is longer than {MAX_TEXT} characters.",
                              {"parameter": "text"})  # fmt: skip
    found = candidates(store, (query.framework, query.jurisdiction), query.subject,
                       query.statement_type, query.grades_mask, text, passages(text))  # fmt: skip
    if not len(found.keep):
        return Scored(found, None, None, None)
    measured = channels(store, found, text)
    profile = profiles().align
    fused = fusion(measured, profile.weights[measured.ranking], found.view.grades,
                   found.view.twins, found.keep, profile.notes_weight)  # fmt: skip
    return rerank.reranked(Scored(found, measured, fused, fused))


def align(store: Store, query: AlignQuery) -> Alignment:
    """The standards `query.text` addresses, best first, each with its evidence."""
    scored = ranked(store, query)
    note = NOT_MATHEMATICS if scored.mathematics is False else None
    profile = profiles().align
    searched = scored.view.jurisdictions_of(scored.candidates.keep)
    if scored.channels is None:
        ranking = "semantic" if rank.available() else "lexical"
        return Alignment([], ranking, len(scored.parts), searched, note or UNRELATED)
    ranking = scored.channels.ranking
    if not relevant(scored, profile.text_floor):
        return Alignment([], ranking, len(scored.parts), searched, note or UNRELATED)
    score_of = calibrate.calibrated(scored, profile.calibration[ranking])
    chosen = choose(ranked_order(scored.total), scored.view.groups, score_of, profile.choice,
                    query.limit)  # fmt: skip
    data = placements.rows(store, scored.view, chosen,
                           lambda i: evidence_of(scored, i, profile.evidence_floor))  # fmt: skip
    return Alignment(data, ranking, len(scored.parts), searched, None if data else note)
