"""The rows of edukg's framework comparisons and curriculum coverage, declared once as
types (as model.alignment does for text alignment): services build them, the API
encodes them as they are, and the OpenAPI schemas, docs/api.md's reference and the MCP
tools' descriptions are generated from them."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any, ClassVar

from edukg.model.alignment import (
    ContentType,
    CoverageStatus,
    CrosswalkMethod,
    Doc,
    FrameworkItemBrief,
    Omittable,
)

_METHOD = ("published: the export's crosswalk, as published; learning-components: derived by"
           " edukg from the two items' supporting learning components")  # fmt: skip


@dataclass(frozen=True, kw_only=True)
class DerivedStandardCrosswalk:
    """With includeDerived=true: a crosswalk and how it was obtained. On a derived row
    stateLCCount/ccssLCCount are set only between a state and Common Core."""

    EXTENDS: ClassVar[str] = "StandardsFrameworkItem"
    jaccard: float | None
    stateLCCount: int | None
    ccssLCCount: int | None
    sharedLCCount: int | None
    sourceLCCount: int | None
    targetLCCount: int | None
    method: Annotated[CrosswalkMethod, Doc(_METHOD)]


@dataclass(frozen=True, kw_only=True)
class FrameworkCrosswalk:
    """A pair of items of two frameworks and their overlap (edukg extension)."""

    source: FrameworkItemBrief
    target: FrameworkItemBrief
    jaccard: float | None
    sourceLCCount: int | None
    targetLCCount: int | None
    sharedLCCount: int | None
    method: Annotated[CrosswalkMethod, Doc(_METHOD)]


@dataclass(frozen=True, kw_only=True)
class GradeComparison:
    """One grade of a framework comparison's summary."""

    gradeLevel: str | None
    standards: int
    withCounterpart: int
    withJaccardAtLeastHalf: int
    withExactCounterpart: int
    withoutCounterpart: int
    withoutCounterpartCodes: Annotated[
        list[str], Doc("The codes of the standards without a counterpart, in code order")
    ]


@dataclass(frozen=True, kw_only=True)
class FrameworkCrosswalkSummary:
    """How far one framework's standards have counterparts in another, per grade."""

    sourceFrameworkCaseIdentifierUUID: str
    targetFrameworkCaseIdentifierUUID: str
    pairs: int
    data: list[GradeComparison]


@dataclass(frozen=True, kw_only=True)
class AlignedContent:
    """A lesson, activity or assessment aligned to a standard."""

    identifier: str
    type: ContentType
    name: str | None
    ordinalName: str | None
    courseCode: str | None
    curriculumAlignmentType: list[str]


@dataclass(frozen=True, kw_only=True)
class CoverageDomain:
    """The domain a standard lies in, as teachers know it: the framework's Domain level
    where it has one, else the level above its clusters (edukg extension)."""

    identifier: str
    caseIdentifierUUID: str | None
    code: Annotated[str | None, Doc("The code its standards share (3.NF)")]
    description: str | None


@dataclass(frozen=True, kw_only=True)
class CoverageByCrosswalk:
    """A counterpart of the standard and what of the curriculum is aligned to it."""

    standard: FrameworkItemBrief
    jaccard: float | None
    method: Annotated[CrosswalkMethod, Doc(_METHOD)]
    aligned: list[AlignedContent]


@dataclass(frozen=True, kw_only=True)
class CoverageRow:
    """A standard and what of a curriculum covers it (edukg extension)."""

    standard: FrameworkItemBrief
    direct: list[AlignedContent]
    viaCrosswalk: list[CoverageByCrosswalk]
    status: CoverageStatus
    domain: CoverageDomain | None


@dataclass(frozen=True, kw_only=True)
class CoverageCounts:
    """How many standards are covered directly, only through a crosswalk, and not."""

    standards: int
    direct: int
    viaCrosswalk: int
    notCovered: int


@dataclass(frozen=True, kw_only=True)
class GradeCoverage:
    """The counts of one grade (null: standards without a grade)."""

    gradeLevel: str | None
    standards: int
    direct: int
    viaCrosswalk: int
    notCovered: int


@dataclass(frozen=True, kw_only=True)
class DomainCoverage:
    """The counts of one domain (null: standards outside any)."""

    domain: CoverageDomain | None
    standards: int
    direct: int
    viaCrosswalk: int
    notCovered: int


@dataclass(frozen=True, kw_only=True)
class CoverageSummary:
    """A curriculum's coverage of a framework in figures (edukg extension)."""

    curriculumId: str
    framework: Annotated[dict[str, Any], Doc("The framework, named")]
    alignedItems: Annotated[
        int | None,
        Doc("How many of the curriculum's lessons, activities and assessments carry an"
            " alignment to a standard in this release (0: it covers nothing anywhere)"),
    ]  # fmt: skip
    total: CoverageCounts
    byGrade: list[GradeCoverage]
    byDomain: list[DomainCoverage]
    note: Annotated[
        str | None,
        Omittable(),
        Doc("Why the coverage is empty, when the curriculum carries no alignment in this"
            " release"),
    ] = None  # fmt: skip


SHAPES = (DerivedStandardCrosswalk, FrameworkCrosswalk, GradeComparison,
          FrameworkCrosswalkSummary, AlignedContent, CoverageDomain, CoverageByCrosswalk,
          CoverageRow, CoverageCounts, GradeCoverage, DomainCoverage,
          CoverageSummary)  # fmt: skip
