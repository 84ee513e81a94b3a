"""The rows edukg's alignment operations answer with, declared once as types.

As `model.shapes` does for records: services build these rows, the API encodes them as
they are (field order is the served order), and the OpenAPI schemas, docs/api.md's
reference and the MCP tools' descriptions are generated from the same declarations. A
class with `EXTENDS` is served as that record (pre-encoded at load) with these fields
appended.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Annotated, Any, ClassVar, Generic, Literal, TypeVar, get_args, get_type_hints

import orjson

from edukg.model.records import with_encoded
from edukg.model.shapes import EnumName

T = TypeVar("T")


@dataclass(frozen=True)
class Doc:
    """A field's description in the generated schema."""

    text: str


@dataclass(frozen=True)
class Omittable:
    """A field left out of the row, not written as null, when it has no value."""


@dataclass(frozen=True)
class Bounds:
    """The range a number field's values lie in."""

    minimum: float
    maximum: float


Score = Annotated[float, Bounds(0.0, 1.0)]
Ranking = Annotated[Literal["semantic", "lexical"], EnumName("Ranking")]
Confidence = Annotated[Literal["high", "medium", "low", "very low"], EnumName("Confidence")]
CrosswalkMethod = Annotated[
    Literal["published", "learning-components"], EnumName("CrosswalkMethod")
]
CoverageStatus = Annotated[Literal["direct", "crosswalk", "none"], EnumName("CoverageStatus")]
ContentType = Annotated[Literal["Lesson", "Activity", "Assessment"], EnumName("ContentType")]
ComponentsFrom = Annotated[Literal["own", "crosswalk", "none"], EnumName("ComponentsFrom")]

ENUM_TYPES = (Ranking, Confidence, CrosswalkMethod, CoverageStatus, ContentType, ComponentsFrom)


@dataclass(frozen=True, kw_only=True)
class FrameworkItemBrief:
    """A framework item as alignment rows name it (edukg extension)."""

    identifier: str
    caseIdentifierUUID: str
    statementCode: str | None
    description: str | None
    jurisdiction: str | None
    academicSubject: str | None
    gradeLevel: list[str]
    normalizedStatementType: str | None


@dataclass(frozen=True, kw_only=True)
class MatchedComponent:
    """A learning component a passage matched (one that supports the standard)."""

    identifier: str
    description: str | None
    similarity: Annotated[Score, Doc("Cosine similarity of the passage and the component")]


@dataclass(frozen=True, kw_only=True)
class EvidencePassage:
    """text[start:end] of the aligned text, and what in it matched the standard."""

    start: int
    end: int
    text: str
    similarity: Annotated[Score, Doc("The better of the two similarities below")]
    statementSimilarity: Annotated[
        Score, Doc("Cosine similarity with the statement (by words alone: BM25 mapped onto 0-1)")
    ]
    learningComponents: list[MatchedComponent]
    words: Annotated[list[str], Doc("The passage's words the statement shares, rarest first")]


@dataclass(frozen=True, kw_only=True)
class AlignmentEvidence:
    """Why a standard was aligned: the passages that address it most specifically."""

    statementSimilarity: Annotated[Score, Doc("The statement's best similarity to a passage")]
    passages: list[EvidencePassage]


@dataclass(frozen=True, kw_only=True)
class PathStep:
    """One grouping above a standard (a course, domain or cluster)."""

    statementCode: str | None
    description: str | None
    statementType: str | None


@dataclass(frozen=True, kw_only=True)
class Placement:
    """One place a standard stands in its framework."""

    identifier: str
    caseIdentifierUUID: str
    path: Annotated[list[PathStep], Doc("The groupings above it, from the top down")]


@dataclass(frozen=True, kw_only=True)
class DomainName:
    """The domain a standard lies in, as teachers name it."""

    code: Annotated[str | None, Doc("The code its standards share (3.NF)")]
    description: str | None


@dataclass(frozen=True, kw_only=True)
class TextAlignedStandard:
    """A standard a text addresses, with its score and evidence (edukg extension)."""

    EXTENDS: ClassVar[str] = "StandardsFrameworkItem"
    score: Annotated[
        Score,
        Doc("Calibrated: of first results scored so on real problems labelled by their"
            " publishers, about this share were a standard the publisher tagged (the bands:"
            " docs/api.md, 'Aligning a text')"),
    ]  # fmt: skip
    confidence: Annotated[Confidence, Doc("The score's band (docs/api.md)")]
    domain: DomainName | None
    evidence: AlignmentEvidence
    placements: Annotated[
        list[Placement],
        Doc("Every place the framework puts this code and statement (several where it"
            " repeats a standard in several course trees)"),
    ]  # fmt: skip


@dataclass(frozen=True, kw_only=True)
class TextAlignment:
    """The standards a text addresses, best first."""

    data: list[TextAlignedStandard]
    ranking: Ranking
    passages: Annotated[int, Doc("How many passages the text was cut into")]
    jurisdictions: Annotated[
        list[str],
        Doc(
            "The jurisdictions whose standards were ranked"
            " (every loaded one when none was asked for)"
        ),
    ]
    note: Annotated[str | None, Omittable(), Doc("Why no standard was answered")] = None


@dataclass(frozen=True, kw_only=True)
class SharedComponents:
    """The learning components that support both standards."""

    jaccard: Score
    sharedLCCount: int
    sourceLCCount: int
    targetLCCount: int
    learningComponents: list[MatchedComponentRef]


@dataclass(frozen=True, kw_only=True)
class MatchedComponentRef:
    """A learning component, named."""

    identifier: str
    description: str | None


@dataclass(frozen=True, kw_only=True)
class SimilarStandard:
    """A standard of another jurisdiction or framework that says the same thing."""

    EXTENDS: ClassVar[str] = "StandardsFrameworkItem"
    score: Annotated[
        Score,
        Doc(
            "Calibrated: of suggestions scored so between two real state frameworks, about"
            " this share were counterparts (docs/api.md)"
        ),
    ]
    sharedLearningComponents: Annotated[
        SharedComponents | None,
        Doc("Where learning components also link the two; null where none do (no"
            " component supports both, or either has none: most states' frameworks outside"
            " mathematics carry none)"),
    ]  # fmt: skip


@dataclass(frozen=True, kw_only=True)
class SimilarStandards:
    """A standard's counterparts, best first."""

    data: list[SimilarStandard]
    ranking: Ranking
    note: Annotated[
        str | None, Omittable(), Doc("Why the list is empty or was looked for more widely")
    ] = None


@dataclass(frozen=True, kw_only=True)
class ComponentPassage:
    """text[start:end] of the checked text, a passage that addresses a component."""

    start: int
    end: int
    text: str
    similarity: Annotated[Score, Doc("Cosine similarity of the passage and the component (by"
                                     " words alone: BM25 mapped onto 0-1)")]  # fmt: skip


@dataclass(frozen=True, kw_only=True)
class CheckedComponent:
    """One learning component of the checked standard, and whether the text addresses it."""

    identifier: str
    description: str | None
    addressed: Annotated[bool, Doc("Whether a passage of the text addresses this skill")]
    score: Annotated[Score, Doc("The best passage's similarity to the component")]
    passages: Annotated[list[ComponentPassage], Doc("The passages that address it, in text order")]


@dataclass(frozen=True, kw_only=True)
class StandardStanding:
    """Where the checked standard stands among its framework's standards for the text."""

    position: Annotated[int, Doc("1: no standard fits the text better")]
    of: Annotated[int, Doc("How many distinct standards were ranked")]
    better: Annotated[
        list[str],
        Doc("The codes of the standards that fit better, best first (at most 10)"),
    ]


@dataclass(frozen=True, kw_only=True)
class StandardCheck:
    """How well a text addresses one standard, component by component (edukg extension)."""

    standard: FrameworkItemBrief
    aligned: Annotated[bool, Doc("Whether the text addresses the standard: a score at the"
                                 " operation's threshold or more (its description names it),"
                                 " and one of its learning components addressed where it has"
                                 " any")]  # fmt: skip
    score: Annotated[
        Score,
        Doc("Calibrated on real problems: the chance that the standard is one the text's"
            " publisher tagged, against standards of the same grade (docs/api.md); held under"
            " the threshold where none of its learning components is addressed"),
    ]  # fmt: skip
    alignmentScore: Annotated[
        Score | None,
        Doc("The score the standard gets in POST /alignments for the same text among its"
            " jurisdiction's standards, no grade given: its share of the evidence among all"
            " of them, where `score` weighs it against its own grade's (docs/api.md)"),
    ]  # fmt: skip
    confidence: Annotated[Confidence, Doc("The score's band (docs/api.md)")]
    componentsFrom: Annotated[
        ComponentsFrom,
        Doc("own: the standard's learning components; crosswalk: those of its published"
            " crosswalk counterparts (it has none of its own); none: it has none at all, and"
            " its statement is the one thing checked"),
    ]  # fmt: skip
    alignedCount: Annotated[int, Doc("Learning components the text addresses")]
    totalCount: Annotated[int, Doc("Learning components checked")]
    learningComponents: list[CheckedComponent]
    rank: Annotated[
        StandardStanding | None,
        Doc("Where the standard stands for this text among its jurisdiction's standards of"
            " its subject and type (the same engine as POST /alignments)"),
    ]  # fmt: skip
    evidence: Annotated[
        AlignmentEvidence | None,
        Doc("The passages that address the standard most specifically, as POST /alignments"
            " shows them"),
    ]  # fmt: skip
    ranking: Ranking
    passages: Annotated[int, Doc("How many passages the text was cut into")]
    note: Annotated[str | None, Omittable(), Doc("Why the check is partial, where it is")] = None


# The rows the API serves, each a schema of its own (in this order in the OpenAPI document).
SHAPES = (FrameworkItemBrief, MatchedComponent, EvidencePassage, AlignmentEvidence, PathStep,
          Placement, DomainName, TextAlignedStandard, TextAlignment, MatchedComponentRef,
          SharedComponents, SimilarStandard, SimilarStandards, ComponentPassage,
          CheckedComponent, StandardStanding, StandardCheck)  # fmt: skip


@dataclass(frozen=True)
class Extended(Generic[T]):
    """A served record (pre-encoded at load) and the typed fields appended to it: how a
    class with `EXTENDS` is answered. `brief` names the record for presentations (the CLI,
    MCP) so that none decodes the bytes."""

    record: bytes
    brief: FrameworkItemBrief
    extension: T

    def encoded(self) -> bytes:
        """The record with the extension's fields appended, as served."""
        return appended(self.record, self.extension)


def appended(record: bytes, extension: Any) -> bytes:
    """A served record (pre-encoded at load) with a typed row's fields appended: how a
    class with `EXTENDS` is answered."""
    return with_encoded(record, encode(extension)[1:-1])


def encoded_list(rows: list[Extended[Any]], rest: dict[str, Any]) -> bytes:
    """`{"data": [rows...], **rest}` with each row spliced in as it is encoded."""
    head = orjson.dumps(rest)[1:-1]
    return b'{"data":[' + b",".join(r.encoded() for r in rows) + b"]," + head + b"}"


def encode(row: Any) -> bytes:
    """A row as served: its fields in declared order, an `Omittable` one left out when
    it has no value."""
    omit = omittable_fields(type(row))
    if not any(getattr(row, name) is None for name in omit):
        return orjson.dumps(row)
    kept = {f.name: getattr(row, f.name) for f in dataclasses.fields(row)}
    return orjson.dumps({k: v for k, v in kept.items() if not (k in omit and v is None)})


def omittable_fields(shape: Any) -> tuple[str, ...]:
    """The fields of a row type marked `Omittable`."""
    known = _OMITTABLE.get(shape)
    if known is None:
        hints = get_type_hints(shape, include_extras=True)
        known = _OMITTABLE[shape] = tuple(
            f.name
            for f in dataclasses.fields(shape)
            if any(isinstance(extra, Omittable) for extra in get_args(hints[f.name])[1:])
        )
    return known


_OMITTABLE: dict[Any, tuple[str, ...]] = {}  # row type -> its Omittable fields
