"""Standards frameworks."""

from __future__ import annotations

from edukg.adapters.params import CURSOR, INCLUDE_NON_CURRENT, JURISDICTION, LIMIT, SUBJECT, Param
from edukg.adapters.rest.base import Call, Operation
from edukg.adapters.schemas import page_schema
from edukg.services import graph as service


def _list(call: Call) -> bytes:
    v = call.values
    page = service.frameworks(
        call.store,
        v["jurisdiction"],
        v["academicSubject"],
        v["adoptionStatus"],
        v["includeNonCurrent"],
        call.after(),
        v["limit"],
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
        params=(
            JURISDICTION,
            SUBJECT,
            Param("adoptionStatus", "enum", "Filter by adoption status", enum="AdoptionStatus"),
            INCLUDE_NON_CURRENT,
            LIMIT,
            CURSOR,
        ),
        tags=("Academic standards",),
    ),
)
