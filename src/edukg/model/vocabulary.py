"""The graph's nouns: kinds of served records, the export labels that make them, grade
masks, and the names of the lists that derivations produce and services read."""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from edukg.model.contract import GRADE_LEVELS

# Kinds of served records, as stored.
STANDARD, FRAMEWORK, COMPONENT = "standard", "framework", "component"
COURSE, GROUPING, LESSON, ACTIVITY, ASSESSMENT = (
    "course",
    "grouping",
    "lesson",
    "activity",
    "assessment",
)
SKILLS_FRAMEWORK, SKILL = "skills-framework", "skill"

KIND_BY_LABEL = {
    "StandardsFrameworkItem": STANDARD,
    "StandardsFramework": FRAMEWORK,
    "LearningComponent": COMPONENT,
    "Course": COURSE,
    "LessonGrouping": GROUPING,
    "Lesson": LESSON,
    "Activity": ACTIVITY,
    "Assessment": ASSESSMENT,
    "DurableSkillsFramework": SKILLS_FRAMEWORK,
    "DurableSkill": SKILL,
}
# Kinds whose records need the whole graph (positions, levels): encoded by ingest.curriculum.
CURRICULUM_KINDS = frozenset({COURSE, GROUPING, LESSON, ACTIVITY, ASSESSMENT})
# Kinds whose records say whether they have children (hasChildren).
NESTED_KINDS = frozenset({STANDARD, SKILL})

CURRICULA = "curricula"  # rows relation: node '', key: each curriculum id in the data
# What a CURRICULA row says a curriculum holds (and its records carrying an alignment to a
# standard in the release, `alignedItems`), by kind.
CURRICULUM_HOLDINGS = {COURSE: "courses", GROUPING: "lessonGroupings", LESSON: "lessons",
                       ACTIVITY: "activities", ASSESSMENT: "assessments"}  # fmt: skip


def curriculum_of(props: dict[str, Any]) -> str | None:
    """The curriculum a record belongs to: the prefix of its courseCode (`im360:K` -> im360)."""
    code = props.get("courseCode")
    if isinstance(code, str) and ":" in code:
        return code.split(":", 1)[0]
    return None


_GRADE_BITS = {grade: 1 << i for i, grade in enumerate(GRADE_LEVELS)}
_GRADE_ORDER = {grade: i for i, grade in enumerate(GRADE_LEVELS)}


def grade_order(grade: str | None) -> int:
    """Where a grade sorts: PK, K, 1 ... 12, then anything else (no grade, a value outside
    the enum) after them all."""
    return _GRADE_ORDER.get(grade or "", len(GRADE_LEVELS))


def grade_mask(grades: Iterable[Any] | None) -> int:
    """A bit per grade of the API's grade enum, for filtering with one AND."""
    mask = 0
    for grade in grades or ():
        mask |= _GRADE_BITS.get(str(grade), 0)
    return mask


# CASE identifiers: UUIDs in their text form, any case.
UUID_PATTERN = re.compile(
    r"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$"
)
UUID_EXAMPLE = "6bd8552e-6f8f-4538-bf33-d016ac080178"


_DIGITS = re.compile(r"(\d+)")


def code_order(code: str | None) -> tuple[Any, ...]:
    """How statement codes sort as people read them: 2.OA.A.2 before 2.OA.A.10."""
    parts = _DIGITS.split(code or "")
    return tuple((0, int(p)) if p.isdigit() else (1, p) for p in parts)


# What a standard's, framework's or learning component's license or attribution says when
# its source states none (the published schemas require both); the CASE provider writes
# such a field as absent again.
NOT_STATED = "not stated in the source"


def stated(value: object) -> object:
    """`value`, or None where it is NOT_STATED."""
    return None if value == NOT_STATED else value
