"""Learning components: one by identifier, and the list by subject."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated

from edukg.adapters.params import Cursor, Limit, Param, Uuid
from edukg.adapters.rest.base import Call, Operation, ref
from edukg.adapters.schemas import page_schema
from edukg.model.shapes import AcademicSubject
from edukg.services import graph as service

TAGS = ("Learning components",)


@dataclass(frozen=True, slots=True, kw_only=True)
class ListComponents:
    """Parameters of listLearningComponents."""

    academicSubject: Annotated[
        AcademicSubject,
        Param("Academic subject of the learning components", example="Mathematics"),
    ]
    limit: Limit = 100
    cursor: Cursor = None


@dataclass(frozen=True, slots=True, kw_only=True)
class Component:
    """Parameters of getLearningComponentByIdentifier."""

    identifier: Annotated[
        Uuid,
        Param(
            "Identifier of the learning component",
            location="path",
            uuid_message="Invalid learning component identifier: it must be a UUID",
        ),
    ]


def _get(call: Call[Component]) -> bytes:
    return service.learning_component(call.store, call.params.identifier).doc


def _list(call: Call[ListComponents]) -> bytes:
    p = call.params
    page = service.learning_components(call.store, p.academicSubject, call.after(), p.limit)
    return call.page(page)


OPERATIONS = (
    Operation(
        path="/learning-components",
        operation_id="listLearningComponents",
        summary="Learning components by subject",
        handler=_list,
        response_schema=page_schema("LearningComponent"),
        params=ListComponents,
        tags=TAGS,
    ),
    Operation(
        path="/learning-components/{identifier}",
        operation_id="getLearningComponentByIdentifier",
        summary="Learning component by ID",
        handler=_get,
        response_schema=ref("LearningComponent"),
        params=Component,
        tags=TAGS,
        not_found=True,
    ),
)
