"""Academic standards: lists, one standard, hierarchy, progressions, crosswalks."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Annotated, Any

from edukg.adapters.params import (
    CaseUuidPath,
    Cursor,
    GradeLevels,
    JurisdictionFilter,
    Limit,
    Param,
    Standard,
    StandardPage,
    SubjectFilter,
    Uuid,
)
from edukg.adapters.rest.base import Call, Operation, ref
from edukg.adapters.schemas import page_schema
from edukg.model.shapes import NormalizedStatementType
from edukg.model.vocabulary import grade_mask
from edukg.services import comparison
from edukg.services import graph as service
from edukg.store.base import BUILDS_TOWARDS, CHILDREN, COMPONENTS, PREREQUISITES, RELATED

TAGS = ("Academic standards",)


@dataclass(frozen=True, slots=True, kw_only=True)
class ListStandards:
    """Parameters of listAcademicStandards."""

    standardsFrameworkCaseIdentifierUUID: Annotated[
        Uuid,
        Param(
            "CASE UUID of the standards framework",
            example="c6487102-d7cb-11e8-824f-0242ac160002",
        ),
    ]
    gradeLevel: GradeLevels = ()
    academicSubject: SubjectFilter = None
    normalizedStatementType: Annotated[
        NormalizedStatementType | None, Param("Filter by normalized statement type")
    ] = None
    limit: Limit = 100
    cursor: Cursor = None


@dataclass(frozen=True, slots=True, kw_only=True)
class Crosswalks:
    """Parameters of listCrosswalkedStandards."""

    caseIdentifierUUID: CaseUuidPath
    jurisdiction: JurisdictionFilter = None
    minJaccardScore: Annotated[
        float | None, Param("Minimum Jaccard score, 0 to 1", minimum=0.0, maximum=1.0)
    ] = None
    includeDerived: Annotated[
        bool,
        Param(
            "edukg extension: also crosswalks derived from shared learning components, to"
            " standards of any other framework of the same subject; every row then says"
            " its `method` and the source's and target's learning-component counts"
        ),
    ] = False
    limit: Limit = 100
    cursor: Cursor = None


def _list(call: Call[ListStandards]) -> bytes:
    p = call.params
    page = service.standards_in_framework(
        call.store,
        p.standardsFrameworkCaseIdentifierUUID,
        grade_mask(p.gradeLevel),
        p.academicSubject,
        p.normalizedStatementType,
        call.after(),
        p.limit,
    )
    return call.page(page)


def _get(call: Call[Standard]) -> bytes:
    return service.standard(call.store, call.params.caseIdentifierUUID).doc


def _linked(relation: str) -> Callable[[Call[StandardPage]], bytes]:
    def handler(call: Call[StandardPage]) -> bytes:
        p = call.params
        page = service.linked(call.store, p.caseIdentifierUUID, relation, call.after(), p.limit)
        return call.page(page)

    return handler


def _ancestors(call: Call[Standard]) -> bytes:
    chain = service.ancestors(call.store, call.params.caseIdentifierUUID)
    pagination = b'{"limit":%d,"nextCursor":null,"hasMore":false}' % len(chain)
    return b'{"data":[' + b",".join(chain) + b'],"pagination":' + pagination + b"}"


def _crosswalks(call: Call[Crosswalks]) -> bytes:
    p = call.params
    # The default answer is the hosted one, byte for byte; derived rows only when asked.
    listed = comparison.standard_crosswalks if p.includeDerived else service.crosswalks
    return call.page(
        listed(
            call.store,
            p.caseIdentifierUUID,
            p.jurisdiction,
            p.minJaccardScore,
            call.after(),
            p.limit,
        )
    )


def _crosswalk_page() -> dict[str, Any]:
    schema = page_schema("StandardCrosswalk")
    schema["properties"]["data"]["items"] = {
        "anyOf": [ref("StandardCrosswalk"), ref("DerivedStandardCrosswalk")]
    }
    return schema


def _linked_operation(
    suffix: str, operation_id: str, summary: str, relation: str, schema: str, description: str
) -> Operation[StandardPage]:
    return Operation(
        path=f"/academic-standards/{{caseIdentifierUUID}}/{suffix}",
        operation_id=operation_id,
        summary=summary,
        description=description,
        handler=_linked(relation),
        response_schema=page_schema(schema),
        params=StandardPage,
        tags=TAGS,
        not_found=True,
    )


OPERATIONS = (
    Operation(
        path="/academic-standards",
        operation_id="listAcademicStandards",
        summary="Standards in a framework",
        description="Every item reachable from the framework through `hasChild`, with "
        "optional filters. An item matches a repeated `gradeLevel` if it has any of them.",
        handler=_list,
        response_schema=page_schema("StandardsFrameworkItem"),
        params=ListStandards,
        tags=TAGS,
    ),
    Operation(
        path="/academic-standards/{caseIdentifierUUID}",
        operation_id="getAcademicStandardByCaseIdentifierUUID",
        summary="Standard by ID",
        handler=_get,
        response_schema=ref("StandardsFrameworkItem"),
        params=Standard,
        tags=TAGS,
        not_found=True,
    ),
    _linked_operation(
        "children",
        "listChildAcademicStandards",
        "Child standards",
        CHILDREN,
        "StandardsFrameworkItem",
        "Direct `hasChild` children. A framework's CASE UUID is accepted too and gives "
        "its top-level items.",
    ),
    _linked_operation(
        "prerequisites",
        "listPrerequisiteAcademicStandards",
        "Prerequisites for a standard",
        PREREQUISITES,
        "StandardsFrameworkItem",
        "Standards that build towards this one (`buildsTowards` into it). Full records.",
    ),
    _linked_operation(
        "builds-towards",
        "listBuildsTowardsAcademicStandards",
        "Standards this one builds towards",
        BUILDS_TOWARDS,
        "StandardsFrameworkItem",
        "Standards this one `buildsTowards`. Full records.",
    ),
    _linked_operation(
        "related-standards",
        "listRelatedAcademicStandards",
        "Related standards",
        RELATED,
        "StandardsFrameworkItem",
        "Standards linked by `relatesTo` in either direction, each once. Full records.",
    ),
    _linked_operation(
        "learning-components",
        "listLearningComponentsByAcademicStandard",
        "Learning components for a standard",
        COMPONENTS,
        "LearningComponent",
        "Learning components that `supports` the standard. Full records.",
    ),
    Operation(
        path="/academic-standards/{caseIdentifierUUID}/ancestors",
        operation_id="listAncestorAcademicStandards",
        summary="Ancestors of a standard (edukg extension)",
        description="The framework, then every enclosing item down to the standard's "
        "parent, following `hasChild` upwards: for breadcrumbs. Not in the hosted API.",
        handler=_ancestors,
        response_schema={
            "type": "object",
            "required": ["data", "pagination"],
            "properties": {
                "data": {
                    "type": "array",
                    "items": {
                        "oneOf": [
                            ref("StandardsFramework"),
                            ref("StandardsFrameworkItem"),
                        ]
                    },
                },
                "pagination": ref("Pagination"),
            },
        },
        params=Standard,
        tags=TAGS,
        not_found=True,
    ),
    Operation(
        path="/academic-standards/{caseIdentifierUUID}/crosswalks",
        operation_id="listCrosswalkedStandards",
        summary="Crosswalks for a standard",
        description="Standards aligned by `hasStandardAlignment`, state to Common Core and "
        "back: the aligned standard's full record with `jaccard` and the three counts. "
        "With `includeDerived=true` (edukg extension) also the standards of other "
        "frameworks of the same subject that share learning components with it, each "
        "with `method` (`published` or `learning-components`), `sourceLCCount` and "
        "`targetLCCount` (a DerivedStandardCrosswalk).",
        handler=_crosswalks,
        response_schema=_crosswalk_page(),
        params=Crosswalks,
        tags=("Standards crosswalks", *TAGS),
        not_found=True,
    ),
)
