"""Durable skills frameworks and their hierarchy."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated

from edukg.adapters.params import Cursor, IncludeNonCurrent, Limit, Param
from edukg.adapters.rest.base import Call, Operation, ref
from edukg.adapters.schemas import page_schema
from edukg.model.shapes import NormalizedStatementType
from edukg.services import graph as service

TAGS = ("Durable skills",)
_SkillPath = Annotated[
    str, Param("Identifier of the durable skill", location="path", max_length=256)
]


@dataclass(frozen=True, slots=True, kw_only=True)
class ListSkillsFrameworks:
    """Parameters of listDurableSkillsFrameworks."""

    includeNonCurrent: IncludeNonCurrent = False
    limit: Limit = 100
    cursor: Cursor = None


@dataclass(frozen=True, slots=True, kw_only=True)
class ListSkills:
    """Parameters of listDurableSkills."""

    frameworkIdentifier: Annotated[
        str,
        Param(
            "The framework's `identifier`, from GET /durable-skills-frameworks",
            max_length=256,
        ),
    ]
    normalizedStatementType: Annotated[
        NormalizedStatementType | None, Param("Only skills of this normalized type")
    ] = None
    limit: Limit = 100
    cursor: Cursor = None


@dataclass(frozen=True, slots=True, kw_only=True)
class Skill:
    """Parameters of getDurableSkillByIdentifier."""

    identifier: _SkillPath


@dataclass(frozen=True, slots=True, kw_only=True)
class SkillPage:
    """Parameters of listChildDurableSkills."""

    identifier: _SkillPath
    limit: Limit = 100
    cursor: Cursor = None


def _frameworks(call: Call[ListSkillsFrameworks]) -> bytes:
    p = call.params
    page = service.skills_frameworks(call.store, p.includeNonCurrent, call.after(), p.limit)
    return call.page(page)


def _skills(call: Call[ListSkills]) -> bytes:
    p = call.params
    page = service.skills(
        call.store, p.frameworkIdentifier, p.normalizedStatementType, call.after(), p.limit
    )
    return call.page(page)


def _skill(call: Call[Skill]) -> bytes:
    return service.skill(call.store, call.params.identifier).doc


def _children(call: Call[SkillPage]) -> bytes:
    p = call.params
    return call.page(service.skill_children(call.store, p.identifier, call.after(), p.limit))


OPERATIONS = (
    Operation(
        path="/durable-skills-frameworks",
        operation_id="listDurableSkillsFrameworks",
        summary="Durable skills frameworks",
        handler=_frameworks,
        response_schema=page_schema("DurableSkillsFramework"),
        params=ListSkillsFrameworks,
        tags=TAGS,
    ),
    Operation(
        path="/durable-skills",
        operation_id="listDurableSkills",
        summary="Durable skills of a framework",
        description="Every item of the framework's hierarchy. An unknown framework is a 400.",
        handler=_skills,
        response_schema=page_schema("DurableSkill"),
        params=ListSkills,
        tags=TAGS,
    ),
    Operation(
        path="/durable-skills/{identifier}",
        operation_id="getDurableSkillByIdentifier",
        summary="Durable skill by ID",
        handler=_skill,
        response_schema=ref("DurableSkill"),
        params=Skill,
        tags=TAGS,
        not_found=True,
    ),
    Operation(
        path="/durable-skills/{identifier}/children",
        operation_id="listChildDurableSkills",
        summary="Child durable skills",
        handler=_children,
        response_schema=page_schema("DurableSkill"),
        params=SkillPage,
        tags=TAGS,
        not_found=True,
    ),
)
