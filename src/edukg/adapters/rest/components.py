"""Learning components: one by identifier, and the list by subject."""

from __future__ import annotations

from edukg.adapters.params import CURSOR, LIMIT, Param
from edukg.adapters.rest.base import Call, Operation, ref
from edukg.adapters.schemas import page_schema
from edukg.services import graph as service

TAGS = ("Learning components",)


def _get(call: Call) -> bytes:
    return service.learning_component(call.store, call.values["identifier"]).doc


def _list(call: Call) -> bytes:
    v = call.values
    page = service.learning_components(call.store, v["academicSubject"], call.after(), v["limit"])
    return call.page(page)


OPERATIONS = (
    Operation(
        path="/learning-components",
        operation_id="listLearningComponents",
        summary="Learning components by subject",
        handler=_list,
        response_schema=page_schema("LearningComponent"),
        params=(
            Param(
                "academicSubject",
                "enum",
                "Academic subject of the learning components",
                enum="AcademicSubject",
                required=True,
                example="Mathematics",
            ),
            LIMIT,
            CURSOR,
        ),
        tags=TAGS,
    ),
    Operation(
        path="/learning-components/{identifier}",
        operation_id="getLearningComponentByIdentifier",
        summary="Learning component by ID",
        handler=_get,
        response_schema=ref("LearningComponent"),
        params=(
            Param(
                "identifier",
                "uuid",
                "Identifier of the learning component",
                location="path",
                uuid_message="Invalid learning component identifier: it must be a UUID",
            ),
        ),
        tags=TAGS,
        not_found=True,
    ),
)
