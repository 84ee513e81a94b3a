"""Standards frameworks."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated

from edukg.adapters.params import (
    Cursor,
    IncludeNonCurrent,
    JurisdictionFilter,
    Limit,
    Param,
    SubjectFilter,
)
from edukg.adapters.rest.base import Call, Operation
from edukg.adapters.schemas import page_schema
from edukg.model.shapes import AdoptionStatus
from edukg.services import graph as service


@dataclass(frozen=True, slots=True, kw_only=True)
class ListFrameworks:
    """Parameters of listFrameworks."""

    jurisdiction: JurisdictionFilter = None
    academicSubject: SubjectFilter = None
    adoptionStatus: Annotated[AdoptionStatus | None, Param("Filter by adoption status")] = None
    includeNonCurrent: IncludeNonCurrent = False
    limit: Limit = 100
    cursor: Cursor = None


def _list(call: Call[ListFrameworks]) -> bytes:
    p = call.params
    page = service.frameworks(
        call.store,
        p.jurisdiction,
        p.academicSubject,
        p.adoptionStatus,
        p.includeNonCurrent,
        call.after(),
        p.limit,
    )
    return call.page(page)


OPERATIONS = (
    Operation(
        path="/standards-frameworks",
        operation_id="listFrameworks",
        summary="Standards frameworks",
        description="Current frameworks by default; `includeNonCurrent=true` adds superseded ones.",
        handler=_list,
        response_schema=page_schema("StandardsFramework"),
        params=ListFrameworks,
        tags=("Academic standards",),
    ),
)
