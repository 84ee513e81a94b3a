"""Durable skills frameworks and their hierarchy."""

from __future__ import annotations

from edukg.adapters.params import CURSOR, INCLUDE_NON_CURRENT, LIMIT, Param
from edukg.adapters.rest.base import Call, Operation, ref
from edukg.adapters.schemas import page_schema
from edukg.services import graph as service

TAGS = ("Durable skills",)
_SKILL_PATH = Param(
    "identifier", "string", "Identifier of the durable skill", location="path", max_length=256
)


def _frameworks(call: Call) -> bytes:
    v = call.values
    page = service.skills_frameworks(call.store, v["includeNonCurrent"], call.after(), v["limit"])
    return call.page(page)


def _skills(call: Call) -> bytes:
    v = call.values
    page = service.skills(
        call.store, v["frameworkIdentifier"], v["normalizedStatementType"], call.after(), v["limit"]
    )
    return call.page(page)


def _skill(call: Call) -> bytes:
    return service.skill(call.store, call.values["identifier"]).doc


def _children(call: Call) -> bytes:
    v = call.values
    return call.page(service.skill_children(call.store, v["identifier"], call.after(), v["limit"]))


OPERATIONS = (
    Operation(
        path="/durable-skills-frameworks",
        operation_id="listDurableSkillsFrameworks",
        summary="Durable skills frameworks",
        handler=_frameworks,
        response_schema=page_schema("DurableSkillsFramework"),
        params=(
            INCLUDE_NON_CURRENT,
            LIMIT,
            CURSOR,
        ),
        tags=TAGS,
    ),
    Operation(
        path="/durable-skills",
        operation_id="listDurableSkills",
        summary="Durable skills of a framework",
        description="Every item of the framework's hierarchy. An unknown framework is a 400.",
        handler=_skills,
        response_schema=page_schema("DurableSkill"),
        params=(
            Param(
                "frameworkIdentifier",
                "string",
                "The framework's `identifier`, from GET /durable-skills-frameworks",
                required=True,
                max_length=256,
            ),
            Param(
                "normalizedStatementType",
                "enum",
                "Only skills of this normalized type",
                enum="NormalizedStatementType",
            ),
            LIMIT,
            CURSOR,
        ),
        tags=TAGS,
    ),
    Operation(
        path="/durable-skills/{identifier}",
        operation_id="getDurableSkillByIdentifier",
        summary="Durable skill by ID",
        handler=_skill,
        response_schema=ref("DurableSkill"),
        params=(_SKILL_PATH,),
        tags=TAGS,
        not_found=True,
    ),
    Operation(
        path="/durable-skills/{identifier}/children",
        operation_id="listChildDurableSkills",
        summary="Child durable skills",
        handler=_children,
        response_schema=page_schema("DurableSkill"),
        params=(_SKILL_PATH, LIMIT, CURSOR),
        tags=TAGS,
        not_found=True,
    ),
)
