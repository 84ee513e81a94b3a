"""Curriculum operations on the demo graph: every operation, ordering, paging, errors."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from edukg.ingest.demo import demo_case_uuid, demo_node_id
from edukg.model.contract import (
    ACTIVITY_FIELDS,
    ASSESSMENT_FIELDS,
    COURSE_FIELDS,
    GROUPING_FIELDS,
    LESSON_FIELDS,
)
from tests.conftest import Api, error_of

Conforms = Callable[..., None]
COURSE = demo_node_id("course")
UNIT1, UNIT2 = demo_node_id("unit1"), demo_node_id("unit2")
SECTION_1B = demo_node_id("unit1-section1")
LESSON3 = demo_node_id("lesson3")
OPTIONAL_LESSON = demo_node_id("lesson5")
LESSON6 = demo_node_id("lesson6")
ACTIVITY = demo_node_id("lesson3-activity1")
PRACTICE3 = demo_node_id("lesson3-practice")


def full(record: dict[str, Any], fields: tuple[tuple[str, str, str | None], ...]) -> None:
    """Every field present, in order, and every one with a real value in the demo graph."""
    assert list(record)[: len(fields)] == [f for f, _, _ in fields]
    empty = {f for f, _, _ in fields if record[f] is None}
    assert empty <= {"publisherIdentifier"}, empty


def test_courses(demo: Api, conforms: Conforms) -> None:
    body = demo.ok("/courses", curriculumId="demo")
    assert [c["identifier"] for c in body["data"]] == [COURSE]
    full(body["data"][0], COURSE_FIELDS)
    assert body["data"][0]["courseCode"] == "demo:4"
    conforms("/courses", body)
    error_of(demo.get("/courses"), 400, "ValidationError")
    error_of(demo.get("/courses", curriculumId="nope"), 400, "ValidationError")


def test_scope_and_sequence_summary(demo: Api, conforms: Conforms) -> None:
    body = demo.ok(f"/courses/{COURSE}/scope-and-sequence")
    assert body["view"] == "summary" and body["courseName"] == "Demo Grade 4 Mathematics"
    units = body["lessonGroupings"]
    assert [u["identifier"] for u in units] == [UNIT1, UNIT2]
    assert [u["position"] for u in units] == [0, 1]
    assert all(u["groupName"] == "unit" and u["groupLevel"] == 0 for u in units)
    sections = units[0]["children"]
    assert [s["ordinalName"] for s in sections] == ["Section A", "Section B"]
    assert all(s["groupLevel"] == 1 and s["groupName"] == "section" for s in sections)
    lessons = [les["ordinalName"] for s in sections for les in s["lessons"]]
    assert lessons == ["Lesson 1", "Lesson 2", "Lesson 3", "Lesson 4", "Lesson 5"]
    positions = [les["position"] for les in sections[1]["lessons"]]
    assert positions == sorted(positions)
    assert set(sections[0]["lessons"][0]) == {"identifier", "name", "ordinalName", "position"}
    conforms("/courses/{courseId}/scope-and-sequence", body)


def test_scope_and_sequence_full(demo: Api, conforms: Conforms) -> None:
    body = demo.ok(f"/courses/{COURSE}/scope-and-sequence", view="full")
    assert body["view"] == "full"
    lesson = body["lessonGroupings"][0]["children"][1]["lessons"][0]
    full(lesson, LESSON_FIELDS)
    assert lesson["timeRequired"] == "PT50M"
    conforms("/courses/{courseId}/scope-and-sequence", body)
    error_of(
        demo.get(f"/courses/{COURSE}/scope-and-sequence", view="everything"), 400, "ValidationError"
    )
    error_of(demo.get("/courses/demo:nope/scope-and-sequence"), 404, "NotFoundError")


def test_lesson_grouping_with_lessons(demo: Api, conforms: Conforms) -> None:
    body = demo.ok(f"/lesson-groupings/{SECTION_1B}")
    assert body["groupName"] == "section" and body["groupLevel"] == 1 and body["position"] == 1
    assert [les["ordinalName"] for les in body["lessons"]] == ["Lesson 3", "Lesson 4", "Lesson 5"]
    for lesson in body["lessons"]:
        full(lesson, LESSON_FIELDS)
    conforms("/lesson-groupings/{groupingId}", body)
    unit = demo.ok(f"/lesson-groupings/{UNIT1}")
    assert unit["groupLevel"] == 0 and unit["lessons"] == []
    full(unit, GROUPING_FIELDS)
    error_of(demo.get("/lesson-groupings/demo:nope"), 404, "NotFoundError")
    error_of(demo.get(f"/lesson-groupings/{LESSON3}"), 404, "NotFoundError")


def test_lesson_and_optional_lesson(demo: Api, conforms: Conforms) -> None:
    body = demo.ok(f"/lessons/{LESSON3}")
    full(body, LESSON_FIELDS)
    assert body["position"] == 2 and body["isOptional"] is False
    conforms("/lessons/{lessonId}", body)
    assert demo.ok(f"/lessons/{OPTIONAL_LESSON}")["isOptional"] is True
    error_of(demo.get("/lessons/demo:nope"), 404, "NotFoundError")
    error_of(demo.get(f"/lessons/{UNIT1}"), 404, "NotFoundError")
    error_of(demo.get("/lessons/" + "x" * 300), 400, "ValidationError")


def test_activities_in_position_order_and_paged(demo: Api, conforms: Conforms) -> None:
    body = demo.ok(f"/lessons/{LESSON3}/activities")
    labels = [a["curriculumLabel"] for a in body["data"]]
    assert labels == ["Warm-up", "Activity", "Activity", "Cool-down"]
    assert [a["position"] for a in body["data"]] == [0, 1, 2, 3]
    for activity in body["data"]:
        full(activity, ACTIVITY_FIELDS)
    conforms("/lessons/{lessonId}/activities", body)
    walked = demo.walk(f"/lessons/{LESSON3}/activities", limit=1)
    assert walked == body["data"]
    error_of(demo.get("/lessons/demo:nope/activities"), 404, "NotFoundError")


def test_assessments_by_course_grouping_and_lesson(demo: Api, conforms: Conforms) -> None:
    everything = demo.walk("/assessments", courseId=COURSE, limit=4)
    assert len(everything) == 13
    for assessment in everything:
        full(assessment, ASSESSMENT_FIELDS)
    conforms("/assessments", demo.ok("/assessments", courseId=COURSE))
    unit = demo.walk("/assessments", courseId=COURSE, lessonGroupingId=UNIT1)
    names = {a["name"] for a in unit}
    assert "End-of-Unit 1 Assessment, Version A" in names
    assert "Practice Problems: Sharing Sandwiches Fairly" in names  # inside the unit
    assert "End-of-Course Assessment" not in names
    assert len(unit) == 7
    lesson = demo.ok("/assessments", courseId=COURSE, lessonId=LESSON3)["data"]
    assert [a["identifier"] for a in lesson] == [PRACTICE3]


def test_assessments_errors(demo: Api) -> None:
    body = error_of(
        demo.get("/assessments", courseId=COURSE, lessonId=LESSON3, lessonGroupingId=UNIT1),
        400,
        "ValidationError",
    )
    assert "both" in body["message"]
    error_of(demo.get("/assessments"), 400, "ValidationError")
    error_of(demo.get("/assessments", courseId="demo:nope"), 404, "NotFoundError")
    error_of(demo.get("/assessments", courseId=COURSE, lessonId="demo:nope"), 404, "NotFoundError")


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        (f"/lessons/{demo_node_id('lesson1')}/standards",
         {"3.NF.A.1": ["building_on"], "4.NF.A.1": ["building_toward"]}),
        (f"/lessons/{demo_node_id('lesson4')}/standards",
         {"4.NF.A.2": ["addressing"], "MP3": ["practicing"]}),
        (f"/activities/{ACTIVITY}/standards", {"4.NF.A.1": ["addressing"]}),
        (f"/assessments/{PRACTICE3}/standards", {"4.NF.A.1": ["practicing"]}),
    ],
)  # fmt: skip
def test_standards_aligned_to_content(
    demo: Api, conforms: Conforms, path: str, expected: dict[str, list[str]]
) -> None:
    body = demo.ok(path)
    got = {r["statementCode"]: r["curriculumAlignmentType"] for r in body["data"]}
    assert got == expected
    template = "/" + path.split("/")[1] + "/{" + {"lessons": "lessonId", "activities":
        "activityId", "assessments": "assessmentId"}[path.split("/")[1]] + "}/standards"  # fmt: skip
    conforms(template, body)


def test_alignment_types_cover_all_four(demo: Api) -> None:
    kinds: set[str] = set()
    for n in range(1, 9):
        for row in demo.ok(f"/lessons/{demo_node_id(f'lesson{n}')}/standards")["data"]:
            kinds.update(row["curriculumAlignmentType"])
    assert kinds == {"addressing", "building_toward", "building_on", "practicing"}


def test_content_aligned_to_a_standard(demo: Api, conforms: Conforms) -> None:
    uuid = demo_case_uuid("ms-math", "4.NF.A.1")
    lessons = demo.ok(f"/academic-standards/{uuid}/lessons")
    assert {r["name"]: r["curriculumAlignmentType"] for r in lessons["data"]} == {
        "Sharing Sandwiches Fairly": ["building_toward"],
        "Same Size, Different Names": ["addressing"],
    }
    conforms("/academic-standards/{caseIdentifierUUID}/lessons", lessons)
    activities = demo.ok(f"/academic-standards/{uuid}/activities")
    assert len(activities["data"]) == 2
    conforms("/academic-standards/{caseIdentifierUUID}/activities", activities)
    assessments = demo.ok(f"/academic-standards/{uuid}/assessments")
    assert {r["name"]: r["curriculumAlignmentType"] for r in assessments["data"]} == {
        "Practice Problems: Same Size, Different Names": ["practicing"],
        "End-of-Unit 1 Assessment, Version A": ["addressing"],
        "End-of-Unit 1 Assessment, Version B": ["addressing"],
    }
    conforms("/academic-standards/{caseIdentifierUUID}/assessments", assessments)
    missing = "00000000-0000-4000-8000-000000000000"
    for suffix in ("lessons", "activities", "assessments"):
        error_of(demo.get(f"/academic-standards/{missing}/{suffix}"), 404, "NotFoundError")


def test_unknown_content_for_alignments(demo: Api) -> None:
    error_of(demo.get("/lessons/demo:nope/standards"), 404, "NotFoundError")
    error_of(demo.get(f"/activities/{LESSON3}/standards"), 404, "NotFoundError")
    error_of(demo.get("/assessments/demo:nope/standards"), 404, "NotFoundError")


def test_dependency_map(demo: Api, conforms: Conforms) -> None:
    body = demo.ok("/curriculums/demo/dependency-map")
    assert set(body) == {"dependencies", "pagination"}
    by_source = {d["source"]: d for d in body["dependencies"]}
    assert len(by_source) == 3
    unit2 = by_source[UNIT2]
    assert unit2["sourceName"] == "Adding and Subtracting Fractions"
    assert unit2["sourceCurriculumLabel"] == "Unit"
    assert unit2["hasDependency"] == [
        {"identifier": UNIT1, "name": "Fractions as Numbers", "curriculumLabel": "Unit"}
    ]
    conforms("/curriculums/{curriculumId}/dependency-map", body)
    walked: list[dict[str, Any]] = []
    cursor = None
    while True:
        page = demo.ok(
            "/curriculums/demo/dependency-map", limit=1, **({"cursor": cursor} if cursor else {})
        )
        walked.extend(page["dependencies"])
        cursor = page["pagination"]["nextCursor"]
        if not page["pagination"]["hasMore"]:
            break
    assert walked == body["dependencies"]
    error_of(demo.get("/curriculums/nope/dependency-map"), 400, "ValidationError")
