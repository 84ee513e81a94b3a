"""Alignment between frameworks (edukg extensions): every crosswalk between two
frameworks, and how well a curriculum covers a framework."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any

from edukg.adapters.params import Cursor, GradeLevels, Limit, Param, SubjectFilter, Uuid
from edukg.adapters.rest.base import Call, Operation, ref
from edukg.adapters.schemas import page_schema
from edukg.model.alignment import encode
from edukg.model.framework_rows import FrameworkCrosswalkSummary
from edukg.model.shapes import NormalizedStatementType
from edukg.model.vocabulary import grade_mask
from edukg.services import comparison, coverage
from edukg.services.comparison import PairFilter

TAGS = ("Alignment",)
# Tokens of the key's bucket: a comparison reads two frameworks' items and learning
# components (a framework of 1,200 standards: tens of milliseconds), about a search's work.
ALIGNMENT_COST = 5
_MIN_JACCARD = Param("Minimum Jaccard score, 0 to 1", minimum=0.0, maximum=1.0)
_STATEMENT_TYPE = Param("Items of this normalized statement type (default Standard)")


@dataclass(frozen=True, slots=True, kw_only=True)
class FrameworkPairs:
    """Parameters of getFrameworkCrosswalkSummary."""

    sourceFrameworkCaseIdentifierUUID: Annotated[Uuid, Param("CASE UUID of the source framework")]
    targetFrameworkCaseIdentifierUUID: Annotated[Uuid, Param("CASE UUID of the target framework")]
    gradeLevel: GradeLevels = ()
    academicSubject: SubjectFilter = None
    normalizedStatementType: Annotated[NormalizedStatementType, _STATEMENT_TYPE] = "Standard"
    minJaccardScore: Annotated[float | None, _MIN_JACCARD] = None


@dataclass(frozen=True, slots=True, kw_only=True)
class FrameworkPairPage(FrameworkPairs):
    """Parameters of listFrameworkCrosswalks."""

    limit: Limit = 100
    cursor: Cursor = None


_CurriculumId = Annotated[
    str,
    Param("A curriculum in the data (e.g. im360, demo)", location="path", max_length=64),
]
_Framework = Annotated[Uuid, Param("CASE UUID of the framework to cover")]


@dataclass(frozen=True, slots=True, kw_only=True)
class CoverageSummary:
    """Parameters of getCurriculumCoverageSummary."""

    curriculumId: _CurriculumId
    standardsFrameworkCaseIdentifierUUID: _Framework
    gradeLevel: GradeLevels = ()
    normalizedStatementType: Annotated[NormalizedStatementType, _STATEMENT_TYPE] = "Standard"
    minJaccardScore: Annotated[float | None, _MIN_JACCARD] = None


@dataclass(frozen=True, slots=True, kw_only=True)
class CoveragePage(CoverageSummary):
    """Parameters of listCurriculumCoverage."""

    limit: Limit = 100
    cursor: Cursor = None


def pair_filter(
    p: FrameworkPairs | FrameworkPairPage | CoverageSummary | CoveragePage,
) -> PairFilter:
    """The service's filter from any of these operations' parameters."""
    return PairFilter(
        grades_mask=grade_mask(p.gradeLevel),
        subject=getattr(p, "academicSubject", None),
        statement_type=p.normalizedStatementType,
        min_jaccard=p.minJaccardScore,
    )


def _pairs(call: Call[FrameworkPairPage]) -> bytes:
    p = call.params
    compared = comparison.compare(
        call.store,
        p.sourceFrameworkCaseIdentifierUUID,
        p.targetFrameworkCaseIdentifierUUID,
        pair_filter(p),
    )
    return call.page(comparison.pairs_page(compared, call.after(), p.limit))


def _pair_summary(call: Call[FrameworkPairs]) -> bytes:
    p = call.params
    compared = comparison.compare(
        call.store,
        p.sourceFrameworkCaseIdentifierUUID,
        p.targetFrameworkCaseIdentifierUUID,
        pair_filter(p),
    )
    return encode(
        FrameworkCrosswalkSummary(
            sourceFrameworkCaseIdentifierUUID=p.sourceFrameworkCaseIdentifierUUID,
            targetFrameworkCaseIdentifierUUID=p.targetFrameworkCaseIdentifierUUID,
            pairs=len(compared.rows),
            data=compared.summary,
        )
    )


def _coverage(call: Call[CoveragePage]) -> bytes:
    p = call.params
    result = coverage.coverage(
        call.store, p.curriculumId, p.standardsFrameworkCaseIdentifierUUID, pair_filter(p)
    )
    return call.page(coverage.coverage_page(result, call.after(), p.limit))


def _coverage_summary(call: Call[CoverageSummary]) -> bytes:
    p = call.params
    result = coverage.coverage(
        call.store, p.curriculumId, p.standardsFrameworkCaseIdentifierUUID, pair_filter(p)
    )
    return encode(result.summary)


_PAIRS_ABOUT = (
    "edukg extension. Every pair of items between two frameworks that a crosswalk links:"
    " published (`hasStandardAlignment`, served as published) or derived from learning"
    " components (the Jaccard index of the two items' sets of supporting learning"
    " components, the measure the published crosswalks use; items of the same subject"
    " sharing at least one). `method` says which. `gradeLevel` filters the source items."
    " Frameworks of different subjects: an empty list. By source, then target identifier."
)
_COVERAGE_ABOUT = (
    "edukg extension. Each standard of a framework with the curriculum's lessons,"
    " activities and assessments aligned to it directly (`hasEducationalAlignment`) or to"
    " one of its crosswalk counterparts (published or derived; `minJaccardScore` bounds"
    " them), and its `status`: direct, crosswalk or none. Nothing rolls up from children."
    " An unknown curriculum is a 400 listing the loaded ones."
)


def _operation(
    path: str, operation_id: str, summary: str, description: str, handler: Any, schema: Any,
    params: type,
) -> Operation[Any]:  # fmt: skip
    return Operation(
        path=path,
        operation_id=operation_id,
        summary=f"{summary} (edukg extension)",
        description=description,
        handler=handler,
        response_schema=schema,
        params=params,
        tags=TAGS,
        not_found=True,
        cost=ALIGNMENT_COST,
    )


OPERATIONS: tuple[Operation[Any], ...] = (
    _operation(
        "/framework-crosswalks",
        "listFrameworkCrosswalks",
        "Crosswalks between two frameworks",
        _PAIRS_ABOUT,
        _pairs,
        page_schema("FrameworkCrosswalk"),
        FrameworkPairPage,
    ),
    _operation(
        "/framework-crosswalks/summary",
        "getFrameworkCrosswalkSummary",
        "How much of one framework another covers, per grade",
        "edukg extension. Per grade of the source framework's items: how many, with a"
        " counterpart in the target framework, with one at Jaccard >= 0.5, at 1.0, and with"
        " none (see listFrameworkCrosswalks).",
        _pair_summary,
        ref("FrameworkCrosswalkSummary"),
        FrameworkPairs,
    ),
    _operation(
        "/curriculums/{curriculumId}/coverage",
        "listCurriculumCoverage",
        "What a curriculum covers of a framework",
        _COVERAGE_ABOUT,
        _coverage,
        page_schema("CoverageRow"),
        CoveragePage,
    ),
    _operation(
        "/curriculums/{curriculumId}/coverage/summary",
        "getCurriculumCoverageSummary",
        "A curriculum's coverage of a framework per grade and domain",
        "edukg extension. Standards covered directly, through a crosswalk, and not covered:"
        " in all, per grade and per top-level grouping (domain). See listCurriculumCoverage.",
        _coverage_summary,
        ref("CoverageSummary"),
        CoverageSummary,
    ),
)
