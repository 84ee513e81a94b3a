"""The JSON schemas of the shapes edukg serves, for its OpenAPI document: built from the
record field lists of `model.contract`, so a record and its schema cannot disagree."""

from __future__ import annotations

from typing import Any

from edukg.model.contract import (
    ACTIVITY_FIELDS,
    ASSESSMENT_FIELDS,
    COMPONENT_FIELDS,
    COURSE_FIELDS,
    CROSSWALK_EXTRA_FIELDS,
    ENUMS,
    FRAMEWORK_FIELDS,
    GROUPING_FIELDS,
    LESSON_FIELDS,
    LIST,
    SKILL_FIELDS,
    SKILLS_FRAMEWORK_FIELDS,
    STANDARD_FIELDS,
)

_REQUIRED = {
    "StandardsFrameworkItem": ("identifier", "caseIdentifierUUID", "hasChildren"),
    "StandardsFramework": ("identifier", "caseIdentifierUUID", "isCurrent"),
    "LearningComponent": ("identifier",),
    "Course": ("identifier",),
    "Lesson": ("identifier",),
    "LessonGrouping": ("identifier",),
    "Activity": ("identifier",),
    "Assessment": ("identifier",),
    "DurableSkillsFramework": ("identifier", "isCurrent"),
    "DurableSkill": ("identifier", "hasChildren"),
}


def _field_schema(kind: str, enum: str | None) -> dict[str, Any]:
    if kind == LIST:
        items: dict[str, Any] = {"type": "string"}
        if enum:
            items = {"$ref": f"#/components/schemas/{enum}ENUM"}
        return {"type": "array", "items": items, "nullable": True}
    if enum:
        return {"allOf": [{"$ref": f"#/components/schemas/{enum}ENUM"}], "nullable": True}
    return {"type": kind, "nullable": True}


def _record_schema(
    name: str, fields: tuple[tuple[str, str, str | None], ...], description: str
) -> dict[str, Any]:
    required = _REQUIRED.get(name, ())
    props: dict[str, Any] = {}
    for field, kind, enum in fields:
        schema = _field_schema(kind, enum)
        if field in required:
            schema.pop("nullable", None)
        props[field] = schema
    return {
        "type": "object",
        "description": description,
        "required": [f for f, _, _ in fields],
        "properties": props,
    }


def component_schemas() -> dict[str, Any]:
    """JSON schemas (OpenAPI 3.0 dialect) of every shape edukg serves."""
    schemas: dict[str, Any] = {
        f"{name}ENUM": {"type": "string", "enum": list(values)} for name, values in ENUMS.items()
    }
    _records(schemas)
    _aligned(schemas)
    _scope_and_sequence(schemas)
    _dependencies(schemas)
    _envelopes(schemas)
    return schemas


def _records(schemas: dict[str, Any]) -> None:
    schemas["StandardsFrameworkItem"] = _record_schema(
        "StandardsFrameworkItem",
        STANDARD_FIELDS,
        "An academic standard or grouping within a standards framework. Every field is "
        "always present, null where the data has no value.",
    )
    schemas["StandardsFramework"] = _record_schema(
        "StandardsFramework", FRAMEWORK_FIELDS, "A standards framework (a standards document)."
    )
    schemas["LearningComponent"] = _record_schema(
        "LearningComponent", COMPONENT_FIELDS, "A fine-grained skill that supports standards."
    )
    crosswalk = _record_schema(
        "StandardsFrameworkItem",
        STANDARD_FIELDS + CROSSWALK_EXTRA_FIELDS,
        "The aligned standard (full record) with the crosswalk's overlap figures.",
    )
    schemas["StandardCrosswalk"] = crosswalk
    for name, fields, text in (
        ("Course", COURSE_FIELDS, "A course of a curriculum."),
        ("LessonGrouping", GROUPING_FIELDS, "A unit, section or module of a course."),
        ("Lesson", LESSON_FIELDS, "A lesson."),
        ("Activity", ACTIVITY_FIELDS, "An activity of a lesson."),
        ("Assessment", ASSESSMENT_FIELDS, "An assessment of a course, grouping or lesson."),
        ("DurableSkillsFramework", SKILLS_FRAMEWORK_FIELDS, "A durable skills framework."),
        ("DurableSkill", SKILL_FIELDS, "A durable skill or a grouping of them."),
    ):
        schemas[name] = _record_schema(name, fields, text)


def _aligned(schemas: dict[str, Any]) -> None:
    alignment = {
        "curriculumAlignmentType": {
            "type": "array",
            "items": {"type": "string"},
            "description": "addressing, building_toward, building_on or practicing",
        }
    }
    for name, base in (
        ("AlignedStandard", "StandardsFrameworkItem"),
        ("AlignedLesson", "Lesson"),
        ("AlignedActivity", "Activity"),
        ("AlignedAssessment", "Assessment"),
    ):
        schemas[name] = {
            "allOf": [
                {"$ref": f"#/components/schemas/{base}"},
                {
                    "type": "object",
                    "required": ["curriculumAlignmentType"],
                    "properties": alignment,
                },
            ]
        }


def _scope_and_sequence(schemas: dict[str, Any]) -> None:
    schemas["LessonGroupingWithLessons"] = {
        "allOf": [
            {"$ref": "#/components/schemas/LessonGrouping"},
            {
                "type": "object",
                "required": ["lessons"],
                "properties": {
                    "lessons": {"type": "array", "items": {"$ref": "#/components/schemas/Lesson"}}
                },
            },
        ]
    }
    node: dict[str, Any] = {
        "type": "object",
        "required": ["identifier", "name", "ordinalName", "groupName", "groupLevel", "position",
                     "children", "lessons"],
        "properties": {
            "identifier": {"type": "string"},
            "name": {"type": "string", "nullable": True},
            "ordinalName": {"type": "string", "nullable": True},
            "groupName": {"type": "string", "nullable": True},
            "groupLevel": {"type": "integer", "nullable": True},
            "position": {"type": "integer", "nullable": True},
            "children": {"type": "array", "items": {"$ref": "#/components/schemas/LessonGroupingNode"}},
            "lessons": {"type": "array", "items": {"$ref": "#/components/schemas/LessonNode"}},
        },
    }  # fmt: skip
    schemas["LessonGroupingNode"] = node
    schemas["LessonNode"] = {
        "type": "object",
        "required": ["identifier", "name", "ordinalName", "position"],
        "properties": {
            k: node["properties"][k] for k in ("identifier", "name", "ordinalName", "position")
        },
    }
    schemas["ScopeAndSequence"] = {
        "type": "object",
        "required": ["courseId", "courseName", "view", "lessonGroupings"],
        "description": "With view=full, each grouping and lesson also carries its full record.",
        "properties": {
            "courseId": {"type": "string"},
            "courseName": {"type": "string", "nullable": True},
            "view": {"type": "string", "enum": ["summary", "full"]},
            "lessonGroupings": {
                "type": "array",
                "items": {"$ref": "#/components/schemas/LessonGroupingNode"},
            },
        },
    }


def _dependencies(schemas: dict[str, Any]) -> None:
    schemas["Dependency"] = {
        "type": "object",
        "required": ["source", "sourceName", "sourceCurriculumLabel", "hasDependency"],
        "properties": {
            "source": {"type": "string"},
            "sourceName": {"type": "string", "nullable": True},
            "sourceCurriculumLabel": {"type": "string", "nullable": True},
            "hasDependency": {
                "type": "array",
                "items": {
                    "type": "object",
                    "required": ["identifier", "name", "curriculumLabel"],
                    "properties": {
                        "identifier": {"type": "string"},
                        "name": {"type": "string", "nullable": True},
                        "curriculumLabel": {"type": "string", "nullable": True},
                    },
                },
            },
        },
    }
    schemas["DependencyMapResponse"] = {
        "type": "object",
        "required": ["dependencies", "pagination"],
        "properties": {
            "dependencies": {"type": "array", "items": {"$ref": "#/components/schemas/Dependency"}},
            "pagination": {"$ref": "#/components/schemas/Pagination"},
        },
    }


def _envelopes(schemas: dict[str, Any]) -> None:
    schemas["Pagination"] = {
        "type": "object",
        "required": ["limit", "nextCursor", "hasMore"],
        "properties": {
            "limit": {"type": "integer"},
            "nextCursor": {"type": "string", "nullable": True},
            "hasMore": {"type": "boolean"},
        },
    }
    schemas["Error"] = {
        "type": "object",
        "required": ["error", "message", "requestId"],
        "properties": {
            "error": {"type": "string"},
            "message": {"type": "string"},
            "requestId": {"type": "string"},
            "details": {"type": "object", "additionalProperties": True},
        },
    }
    schemas["Health"] = {
        "type": "object",
        "required": ["status", "dataVersion", "loadedAt", "contentId"],
        "properties": {
            "status": {"type": "string", "enum": ["ok"]},
            "dataVersion": {"type": "string"},
            "loadedAt": {"type": "string"},
            "contentId": {"type": "string"},
            "counts": {"type": "object", "additionalProperties": {"type": "integer"}},
        },
    }


def page_schema(item_schema: str) -> dict[str, Any]:
    """The schema of a paged list of `item_schema` records."""
    return {
        "type": "object",
        "required": ["data", "pagination"],
        "properties": {
            "data": {"type": "array", "items": {"$ref": f"#/components/schemas/{item_schema}"}},
            "pagination": {"$ref": "#/components/schemas/Pagination"},
        },
    }
