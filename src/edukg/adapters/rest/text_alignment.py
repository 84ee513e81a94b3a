"""Alignment by meaning (edukg extensions): a whole text aligned to standards with its
evidence (the API's one operation with a body), and a standard's counterparts elsewhere."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any

from edukg.adapters.params import CaseUuidPath, GradeLevels, Param, SubjectFilter, Uuid
from edukg.adapters.rest.base import ALIGNMENT, RANKING, Call, Family, Operation, ref
from edukg.model.alignment import encode
from edukg.model.errors import ValidationError
from edukg.model.shapes import Jurisdiction, NormalizedStatementType
from edukg.model.vocabulary import grade_mask
from edukg.services.alignment import (
    MAX_TEXT,
    AlignQuery,
    CheckQuery,
    SimilarQuery,
    align,
    bands_text,
    check,
    similar,
)
from edukg.services.alignment.profile import profiles

TAGS = ("Alignment",)
ALIGN_COST = 5  # tokens, plus one per TEXT_COST_CHARS characters of the text
TEXT_COST_CHARS = 2000
SIMILAR_COST = 5  # a search's work
_Framework = Annotated[
    Uuid | None, Param("Only standards of this framework (CASE UUID); or give `jurisdiction`")
]
_Jurisdiction = Annotated[
    Jurisdiction | None, Param("Only standards of this jurisdiction; or give a framework")
]


@dataclass(frozen=True, slots=True, kw_only=True)
class AlignBody:
    """The body of alignTextToStandards."""

    text: Annotated[
        str,
        Param(f"The text to align: a lesson, an item, an activity (1 to {MAX_TEXT} characters)",
              min_length=1, max_length=MAX_TEXT,
              example="Students add fractions with unlike denominators."),
    ]  # fmt: skip
    standardsFrameworkCaseIdentifierUUID: _Framework = None
    jurisdiction: _Jurisdiction = None
    academicSubject: SubjectFilter = None
    gradeLevel: GradeLevels = ()
    normalizedStatementType: Annotated[
        NormalizedStatementType | None, Param("Standards of this type (default Standard)")
    ] = "Standard"
    limit: Annotated[int, Param("Maximum number of standards (1-50)", minimum=1, maximum=50)] = 10


@dataclass(frozen=True, slots=True, kw_only=True)
class CheckBody:
    """The body of checkTextAgainstStandard."""

    text: Annotated[
        str,
        Param(f"The text to check: an item, a lesson, an activity (1 to {MAX_TEXT} characters)",
              min_length=1, max_length=MAX_TEXT,
              example="What is the total area of an L-shaped playground?"),
    ]  # fmt: skip
    caseIdentifierUUID: Annotated[
        Uuid | None, Param("The standard's CASE UUID; or give `statementCode`")
    ] = None
    statementCode: Annotated[
        str | None,
        Param("The standard's code (3.MD.C.7.d), in `jurisdiction`; or give"
              " `caseIdentifierUUID`", max_length=50, example="3.MD.C.7.d"),
    ] = None  # fmt: skip
    jurisdiction: Annotated[
        Jurisdiction | None, Param("Where `statementCode` is looked up (default Multi-State)")
    ] = None


@dataclass(frozen=True, slots=True, kw_only=True)
class SimilarParams:
    """Parameters of listSimilarStandards."""

    caseIdentifierUUID: CaseUuidPath
    jurisdiction: _Jurisdiction = None
    standardsFrameworkCaseIdentifierUUID: _Framework = None
    limit: Annotated[int, Param("Maximum number of standards (1-50)", minimum=1, maximum=50)] = 5
    minScore: Annotated[float | None, Param("Minimum score, 0 to 1", minimum=0.0, maximum=1.0)] = (
        None
    )
    gradeLevel: Annotated[
        str | None,
        Param("`any` to look beyond the grades the standard shares (default: overlapping"
              " grades only)", max_length=3),
    ] = None  # fmt: skip


def _align(call: Call[AlignBody]) -> bytes:
    p = call.params
    if p.standardsFrameworkCaseIdentifierUUID is not None and p.jurisdiction is not None:
        raise ValidationError(
            "Give `jurisdiction` or `standardsFrameworkCaseIdentifierUUID`, not both.",
            {"parameter": "jurisdiction"},
        )
    query = AlignQuery(
        text=p.text,
        framework=p.standardsFrameworkCaseIdentifierUUID,
        jurisdiction=p.jurisdiction,
        subject=p.academicSubject,
        grades_mask=grade_mask(p.gradeLevel),
        statement_type=p.normalizedStatementType,
        limit=p.limit,
    )
    return align(call.store, query).encoded()


def _check(call: Call[CheckBody]) -> bytes:
    p = call.params
    check_choice(p)
    query = CheckQuery(text=p.text, case_uuid=p.caseIdentifierUUID, code=p.statementCode,
                       jurisdiction=p.jurisdiction)  # fmt: skip
    return encode(check(call.store, query))


def check_choice(p: CheckBody) -> None:
    """The one rule of a check's body its types cannot say: one way to name the standard."""
    if (p.caseIdentifierUUID is None) == (p.statementCode is None):
        raise ValidationError(
            "Give `caseIdentifierUUID` or `statementCode` (with `jurisdiction`), one of them.",
            {"parameter": "statementCode"},
        )
    if p.caseIdentifierUUID is not None and p.jurisdiction is not None:
        raise ValidationError(
            "`jurisdiction` goes with `statementCode`; a CASE UUID names the standard alone.",
            {"parameter": "jurisdiction"},
        )


def _similar(call: Call[SimilarParams]) -> bytes:
    p = call.params
    if p.gradeLevel not in (None, "any"):
        raise ValidationError(
            "gradeLevel takes one value here: `any` (look beyond overlapping grades).",
            {"parameter": "gradeLevel"},
        )
    query = SimilarQuery(
        case_uuid=p.caseIdentifierUUID,
        jurisdiction=p.jurisdiction,
        framework=p.standardsFrameworkCaseIdentifierUUID,
        limit=p.limit,
        min_score=p.minScore,
        any_grade=p.gradeLevel == "any",
    )
    return similar(call.store, query).encoded()


_ALIGN_ABOUT = (
    "edukg extension, the API's one operation with a body (JSON, at most 256 KiB). Every"
    " standard the filters admit is scored against the whole text: its statement and the"
    " learning components that support it (its own, or its crosswalk counterparts') by"
    " meaning over the text's passages, its statement's words, and its domain's heading;"
    " the grades the best matches share lend a small prior. `score` is calibrated on real"
    " problems tagged by their publishers; its band is `confidence`, with the share of"
    f" first results in each that were a standard the publisher tagged ({bands_text()};"
    " docs/api.md says how this was measured). A standard the framework repeats"
    " in several places (one code and statement under several courses) is answered once,"
    " with every place in `placements`. `evidence` lists the passages (with offsets into"
    " `text`) that address the standard most specifically, with the learning components"
    " and words each matched. `gradeLevel` takes one grade or a list. Without the semantic"
    " index or the model, ranks by words (`ranking`: lexical). Costs 5 tokens plus 1 per"
    " 2,000 characters, on every entrance (the MCP tool too)."
)
_CHECK_ABOUT = (
    "edukg extension: one text checked against one standard, learning component by learning"
    " component, offline. Name the standard by `caseIdentifierUUID`, or by `statementCode`"
    " in `jurisdiction` (default Multi-State). The standard is ranked among its"
    " jurisdiction's standards of its subject for the text by the engine of POST"
    " /alignments: `rank` says where it stands and which standards fit better. `score`"
    " counts the best of the standard and its sub-standards with its best component,"
    " calibrated on real problems against standards of the same grade; `aligned` is a score"
    f" of {profiles().check.aligned:g} or more and `confidence` its band ({bands_text()}). Each learning"
    " component that supports the standard (its own; where it has none, those of its"
    " published crosswalk counterparts, `componentsFrom`) is `addressed` when a passage of"
    f" the text is at least {profiles().check.component_floor:g} alike to it, with those passages' offsets;"
    " a standard with none is checked on its statement alone, and `note` says so. Costs 5"
    " tokens plus 1 per 2,000 characters, on every entrance (the MCP tool too)."
)
_SIMILAR_ABOUT = (
    "edukg extension. The standards of another jurisdiction or framework (exactly one) that"
    " say the same thing: same subject and statement type, overlapping grades unless"
    " `gradeLevel=any`, ranked by how alike the statements are in meaning, with the words"
    " they share and their domains' headings added (by words alone without a semantic"
    " index). `score` is calibrated between two real state frameworks (docs/api.md);"
    " suggestions under 0.01 are left out unless `minScore` asks for them."
    " `sharedLearningComponents` shows where learning components also link the two, with"
    " the Jaccard figures; it is null where no component supports both (most frameworks"
    " outside mathematics carry none, and in the sample only California's standards do)."
)

# Aligning a text and finding similar standards rank as search does, and score by the
# alignment engine's version: both are part of their answers' tags.
_TEXT = Family(TAGS, ALIGN_COST, TEXT_COST_CHARS, frozenset((RANKING, ALIGNMENT)), not_found=True)
_SIMILAR = Family(TAGS, SIMILAR_COST, varies=frozenset((RANKING, ALIGNMENT)), not_found=True)

OPERATIONS: tuple[Operation[Any], ...] = (
    _TEXT.of(
        path="/alignments",
        operation_id="alignTextToStandards",
        summary="Align a text to standards, with the evidence (edukg extension)",
        description=_ALIGN_ABOUT,
        handler=_align,
        response_schema=ref("TextAlignment"),
        params=AlignBody,
        method="POST",
    ),
    _TEXT.of(
        path="/alignments/check",
        operation_id="checkTextAgainstStandard",
        summary="Check a text against one standard, component by component (edukg extension)",
        description=_CHECK_ABOUT,
        handler=_check,
        response_schema=ref("StandardCheck"),
        params=CheckBody,
        method="POST",
    ),
    _SIMILAR.of(
        path="/academic-standards/{caseIdentifierUUID}/similar",
        operation_id="listSimilarStandards",
        summary="A standard's counterparts elsewhere, by meaning (edukg extension)",
        description=_SIMILAR_ABOUT,
        handler=_similar,
        response_schema=ref("SimilarStandards"),
        params=SimilarParams,
    ),
)
