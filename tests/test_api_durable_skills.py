"""Durable skills operations on the demo graph."""

from __future__ import annotations

from collections.abc import Callable

from edukg.ingest.demo import demo_skill_id
from edukg.model.contract import SKILL_FIELDS, SKILLS_FRAMEWORK_FIELDS
from tests.conftest import Api, error_of
from tests.support import contract_fields

Conforms = Callable[..., None]
FRAMEWORK = demo_skill_id("skills")


def test_frameworks(demo: Api, conforms: Conforms) -> None:
    body = demo.ok("/durable-skills-frameworks")
    assert [f["identifier"] for f in body["data"]] == [FRAMEWORK]
    record = body["data"][0]
    assert contract_fields(record, SKILLS_FRAMEWORK_FIELDS) == [
        f for f, _, _ in SKILLS_FRAMEWORK_FIELDS
    ]
    assert record["isCurrent"] is True and record["name"] == "edukg Demo Durable Skills"
    conforms("/durable-skills-frameworks", body)
    error_of(
        demo.get("/durable-skills-frameworks", includeNonCurrent="sure"), 400, "ValidationError"
    )


def test_skills_of_a_framework(demo: Api, conforms: Conforms) -> None:
    every = demo.walk("/durable-skills", frameworkIdentifier=FRAMEWORK, limit=5)
    assert len(every) == 14
    for record in every:
        assert set(contract_fields(record, SKILL_FIELDS)) == {f for f, _, _ in SKILL_FIELDS}
        assert all(record[f] is not None for f in ("description", "statementCode", "gradeLevel"))
    conforms("/durable-skills", demo.ok("/durable-skills", frameworkIdentifier=FRAMEWORK))
    groupings = demo.walk(
        "/durable-skills",
        frameworkIdentifier=FRAMEWORK,
        normalizedStatementType="Standard Grouping",
    )
    assert sorted(r["statementCode"] for r in groupings) == ["COL", "COM"]
    body = error_of(demo.get("/durable-skills"), 400, "ValidationError")
    assert "frameworkIdentifier" in body["message"]
    error_of(demo.get("/durable-skills", frameworkIdentifier="nope"), 400, "ValidationError")


def test_one_skill_and_its_children(demo: Api, conforms: Conforms) -> None:
    skill = demo.ok(f"/durable-skills/{demo_skill_id('COL.1')}")
    assert skill["name"] == "Shares ideas" and skill["hasChildren"] is True
    conforms("/durable-skills/{identifier}", skill)
    children = demo.ok(f"/durable-skills/{demo_skill_id('COL.1')}/children")
    assert [c["name"] for c in sorted(children["data"], key=lambda c: c["statementCode"])] == [
        "Beginning",
        "Developing",
        "Proficient",
    ]
    assert all(c["hasChildren"] is False for c in children["data"])
    conforms("/durable-skills/{identifier}/children", children)
    error_of(demo.get("/durable-skills/nope"), 404, "NotFoundError")
    error_of(demo.get("/durable-skills/nope/children"), 404, "NotFoundError")
    error_of(demo.get(f"/durable-skills/{FRAMEWORK}"), 404, "NotFoundError")
