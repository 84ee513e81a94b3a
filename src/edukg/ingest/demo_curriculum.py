"""The demo curriculum (one course of units, sections, lessons, activities and
assessments) and the demo durable skills framework."""

from __future__ import annotations

from typing import Any

import orjson

from edukg.ingest.demo_graph import ACTIVITIES, SKILLS, UNITS, DemoGraph, demo_uuid

# The demo curriculum: one course (UNITS: unit or section title, [(lesson name, optional?,
# [(standard code, alignment type)])]), lessons with activities.
CURRICULUM_ID = "demo"
COURSE_NAME = "Demo Grade 4 Mathematics"

# A durable skills framework: skills, each with progression levels.
LEVELS = ("Beginning", "Developing", "Proficient")


def node_id(key: str) -> str:
    return f"demo:{demo_uuid('curriculum', key)}"


_COURSE_COMMON = {
    "academicSubject": "Mathematics",
    "gradeLevel": orjson.dumps(["4"]).decode(),
    "educationalUse": "instruction",
    "audience": orjson.dumps(["Teacher", "Student", "Family"]).decode(),
    "lmsLoadingGuidance": "unspecified",
    "courseCode": "demo:4",
    "publisherIdentifier": None,
}


class _Course:
    """The demo course's nodes and edges, added in a fixed order."""

    def __init__(self, g: DemoGraph) -> None:
        self.g = g
        self.lesson_number = 0
        self.sections: list[str] = []

    def add(self, label: str, key: str, **props: Any) -> str:
        identifier = node_id(key)
        properties = {"identifier": identifier, **self.g.common(**_COURSE_COMMON), **props}
        self.g.nodes.append(
            {"type": "node", "identifier": identifier, "labels": [label], "properties": properties}
        )
        return identifier

    def align(self, source: str, code: str, kind: str) -> None:
        target = str(self.g.by_code[("ms-math", code)]["identifier"])
        self.g.edge("hasEducationalAlignment", source, target, curriculumAlignmentType=kind)

    def unit(self, course: str, u: int, unit_name: str, unit_sections: list[Any]) -> str:
        unit = self.add(
            "LessonGrouping", f"unit{u}", name=unit_name, ordinalName=f"Unit {u}",
            curriculumLabel="Unit", isOptional="false", timeRequired="P3W",
        )  # fmt: skip
        self.g.edge("hasPart", course, unit)
        for s, (section_name, lessons) in enumerate(unit_sections):
            section = self.add(
                "LessonGrouping", f"unit{u}-section{s}", name=section_name,
                ordinalName=f"Section {chr(ord('A') + s)}", curriculumLabel="Section",
                isOptional="false", timeRequired="P1W",
            )  # fmt: skip
            self.g.edge("hasPart", unit, section)
            self.sections.append(section)
            for lesson_name, optional, aligned in lessons:
                self.lesson(section, lesson_name, optional, aligned)
        self.unit_checks(u, unit, unit_sections)
        return unit

    def lesson(self, section: str, lesson_name: str, optional: bool, aligned: list[Any]) -> None:
        self.lesson_number += 1
        n = self.lesson_number
        lesson = self.add(
            "Lesson", f"lesson{n}", name=lesson_name, ordinalName=f"Lesson {n}",
            curriculumLabel="Lesson", isOptional="true" if optional else "false",
            timeRequired="PT50M",
        )  # fmt: skip
        self.g.edge("hasPart", section, lesson)
        for code, kind in aligned:
            self.align(lesson, code, kind)
        for a, (label, pattern, minutes, grouping) in enumerate(ACTIVITIES):
            activity = self.add(
                "Activity", f"lesson{n}-activity{a}",
                name=pattern.format(lesson_name), ordinalName=f"Activity {a + 1}",
                curriculumLabel=label, isOptional="false",
                timeRequired=f"PT{minutes}M", studentGroupingType=grouping,
            )  # fmt: skip
            self.g.edge("hasPart", lesson, activity)
            if label == "Activity":
                self.align(activity, aligned[0][0], "addressing")
        practice = self.add(
            "Assessment", f"lesson{n}-practice",
            name=f"Practice Problems: {lesson_name}", curriculumLabel="Practice Problems",
            educationalUse="assessment", isOptional="false",
            studentGroupingType="individual", timeRequired="PT15M",
        )  # fmt: skip
        self.g.edge("hasPart", lesson, practice)
        self.align(practice, aligned[0][0], "practicing")

    def unit_checks(self, u: int, unit: str, unit_sections: list[Any]) -> None:
        versions = []
        for version in ("A", "B"):
            check = self.add(
                "Assessment", f"unit{u}-check-{version}",
                name=f"End-of-Unit {u} Assessment, Version {version}",
                curriculumLabel="End-of-Unit Assessment", educationalUse="assessment",
                isOptional="false", studentGroupingType="individual", timeRequired="PT45M",
            )  # fmt: skip
            self.g.edge("hasPart", unit, check)
            first_lesson_of_last_section = unit_sections[-1][1][0]
            self.align(check, first_lesson_of_last_section[2][0][0], "addressing")
            versions.append(check)
        self.g.edge("mutuallyExclusiveWith", versions[0], versions[1])
        self.g.edge("mutuallyExclusiveWith", versions[1], versions[0])
        self.g.edge("hasReference", versions[0], self.sections[-1])


def curriculum(g: DemoGraph) -> None:
    c = _Course(g)
    course = c.add(
        "Course", "course", name=COURSE_NAME, curriculumLabel="Course",
        description="A synthetic fourth-grade mathematics course about fractions, for trying "
        "edukg's curriculum operations.", timeRequired="P10W",
    )  # fmt: skip
    units = [c.unit(course, u, name, sections) for u, (name, sections) in enumerate(UNITS, 1)]
    final = c.add(
        "Assessment", "course-final", name="End-of-Course Assessment",
        curriculumLabel="End-of-Course Assessment", educationalUse="assessment",
        isOptional="false", studentGroupingType="individual", timeRequired="PT60M",
    )  # fmt: skip
    g.edge("hasPart", course, final)
    c.align(final, "4.NF.B.3", "addressing")
    # Dependencies: the target is the prerequisite, taught first.
    g.edge("hasDependency", units[1], units[0])
    g.edge("hasDependency", c.sections[1], c.sections[0])
    g.edge("hasDependency", c.sections[2], c.sections[1])


def durable_skills(g: DemoGraph) -> None:
    fw_id = demo_uuid("node", "skills")
    g.nodes.append({
        "type": "node", "identifier": fw_id, "labels": ["DurableSkillsFramework"],
        "properties": g.common(
            identifier=fw_id, name="edukg Demo Durable Skills",
            description="A synthetic durable skills framework: skills with progression levels.",
            jurisdiction="Multi-State", isCurrent="true",
        ),
    })  # fmt: skip
    grades = orjson.dumps([str(n) for n in range(6, 13)]).decode()

    def skill(key: str, code: str, name: str | None, text: str, kind: tuple[str, str]) -> str:
        identifier = demo_uuid("node", f"skills:{key}")
        g.nodes.append({
            "type": "node", "identifier": identifier, "labels": ["DurableSkill"],
            "properties": g.common(
                identifier=identifier, statementCode=code, name=name, description=text,
                statementType=kind[0], normalizedStatementType=kind[1], gradeLevel=grades,
                jurisdiction="Multi-State",
            ),
        })  # fmt: skip
        return identifier

    for code, name, text, skills in SKILLS:
        group = skill(code, code, name, text, ("Skill Domain", "Standard Grouping"))
        g.edge("hasChild", fw_id, group)
        for s_code, s_name, s_text, levels in skills:
            parent = skill(s_code, s_code, s_name, s_text, ("Skill", "Standard"))
            g.edge("hasChild", group, parent)
            for n, level_text in enumerate(levels, start=1):
                level = skill(
                    f"{s_code}.{n}", f"{s_code}.{n}", LEVELS[n - 1], level_text,
                    ("Progression Level", "Standard"),
                )  # fmt: skip
                g.edge("hasChild", parent, level)
