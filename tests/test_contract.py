"""The typed contract: served records match the declared types of `model.shapes`, and the
generated reference (OpenAPI copy, docs tables, CLI reference) matches the code."""

from __future__ import annotations

import dataclasses
import subprocess
import sys
from typing import Any

import orjson
import pydantic
import pytest

from edukg.model import shapes
from tests.conftest import Api
from tests.support import ROOT

CA_MATH = "c6487102-d7cb-11e8-824f-0242ac160002"


def _conform(shape: type, records: list[dict[str, Any]]) -> None:
    """Each record validates against its type and has every declared field, in the declared
    order (a standard's extra export properties sit before its last key, hasChildren)."""
    assert records, f"no {shape.__name__} records to check"
    adapter: pydantic.TypeAdapter[Any] = pydantic.TypeAdapter(shape)
    names = [f.name for f in dataclasses.fields(shape)]
    nulls = getattr(shape, "KEEPS_NULL", None)  # a curriculum record leaves out what it lacks
    for record in records:
        if nulls is not None:
            nulled = [k for k, v in record.items() if v is None and k in names and k not in nulls]
            assert not nulled, (nulled, record)  # left out, never null
            full = {n: record.get(n) for n in names} | record
            adapter.validate_json(orjson.dumps(full), strict=True)
            assert [k for k in record if k in names] == [n for n in names if n in record], record
            continue
        adapter.validate_json(orjson.dumps(record), strict=True)
        assert [k for k in record if k in names] == names, record


def _first_standard(sample: Api) -> str:
    found = sample.ok("/academic-standards", standardsFrameworkCaseIdentifierUUID=CA_MATH)
    return str(found["data"][0]["caseIdentifierUUID"])


def test_standards_records_match_their_types(sample: Api) -> None:
    standards = sample.walk("/academic-standards", standardsFrameworkCaseIdentifierUUID=CA_MATH)
    _conform(shapes.StandardsFrameworkItem, standards)
    frameworks = sample.ok("/standards-frameworks", includeNonCurrent="true")["data"]
    _conform(shapes.StandardsFramework, frameworks)
    components = sample.ok("/learning-components", academicSubject="Mathematics")["data"]
    _conform(shapes.LearningComponent, components)
    crosswalks = []
    for standard in standards[:400]:
        crosswalks += sample.ok(f"/academic-standards/{standard['caseIdentifierUUID']}/crosswalks")[
            "data"
        ]
    _conform(shapes.StandardCrosswalk, crosswalks)


IM_UNIT = "im:ae6d42ea-338b-5027-b09c-13fa28f6664b"
IM_LESSON = "im:86ad47a6-6ab7-5d84-a57e-d15695cc8978"


def _without_lessons(grouping: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in grouping.items() if k != "lessons"}


def test_curriculum_and_skills_records_match_their_types(sample: Api, demo: Api) -> None:
    _conform(shapes.LessonGrouping, [_without_lessons(sample.ok(f"/lesson-groupings/{IM_UNIT}"))])
    _conform(shapes.Lesson, [sample.ok(f"/lessons/{IM_LESSON}")])
    courses = demo.ok("/courses", curriculumId="demo")["data"]
    _conform(shapes.Course, courses)
    groupings, lessons, activities = [], [], []
    for course in courses:
        outline = demo.ok(f"/courses/{course['identifier']}/scope-and-sequence")
        nodes = list(outline["lessonGroupings"])
        while nodes:
            node = nodes.pop()
            nodes += node["children"]
            grouping = demo.ok(f"/lesson-groupings/{node['identifier']}")
            groupings.append(_without_lessons(grouping))
            lessons += grouping["lessons"]
    for lesson in lessons:
        activities += demo.ok(f"/lessons/{lesson['identifier']}/activities")["data"]
    _conform(shapes.LessonGrouping, groupings)
    _conform(shapes.Lesson, lessons)
    _conform(shapes.Activity, activities)
    _conform(shapes.Assessment, demo.walk("/assessments", courseId=courses[0]["identifier"]))
    frameworks = demo.ok("/durable-skills-frameworks")["data"]
    _conform(shapes.DurableSkillsFramework, frameworks)
    skills = demo.walk("/durable-skills", frameworkIdentifier=frameworks[0]["identifier"])
    _conform(shapes.DurableSkill, skills)


def test_a_record_off_its_type_is_refused_by_the_check() -> None:
    record: dict[str, Any] = {f.name: None for f in dataclasses.fields(shapes.StandardsFramework)}
    record |= {"identifier": "x", "caseIdentifierUUID": "y", "isCurrent": True, "author": "a",
               "provider": "p", "license": "l", "attributionStatement": "s"}  # fmt: skip
    _conform(shapes.StandardsFramework, [record])
    with pytest.raises(pydantic.ValidationError):  # required and not nullable
        _conform(shapes.StandardsFramework, [record | {"provider": None}])
    with pytest.raises(pydantic.ValidationError):
        _conform(shapes.StandardsFramework, [record | {"jurisdiction": "Atlantis"}])
    with pytest.raises(pydantic.ValidationError):
        _conform(shapes.StandardsFramework, [record | {"isCurrent": "true"}])


def test_the_served_openapi_document_is_the_checked_in_copy(demo: Api) -> None:
    served = demo.http.get("/openapi.json").json()
    assert served == orjson.loads((ROOT / "docs" / "openapi.json").read_bytes())


def test_the_generated_reference_is_current(tmp_path: Any) -> None:
    check = [sys.executable, "-m", "edukg.cli.reference", "--check", "--root", str(ROOT)]
    done = subprocess.run(check, check=False, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    # A stale copy fails the check, and the message says what to run.
    for name in ("docs", "README.md"):
        target = tmp_path / name
        if (ROOT / name).is_dir():
            target.mkdir()
            for f in ("openapi.json", "api.md", "cli.md"):
                (target / f).write_bytes((ROOT / name / f).read_bytes())
        else:
            target.write_bytes((ROOT / name).read_bytes())
    api_md = tmp_path / "docs" / "api.md"
    api_md.write_text(api_md.read_text().replace("listFrameworks", "listFrameworkz"))
    check[-1] = str(tmp_path)
    stale = subprocess.run(check, check=False, capture_output=True, text=True, timeout=120)
    assert stale.returncode == 1
    assert "docs/api.md" in stale.stderr and "make docs" in stale.stderr
