"""The shapes edukg serves: record fields, enums and their JSON schemas.

One table of fields per record kind drives both the encoder that writes each
record's JSON once at load time and the schemas of edukg's own OpenAPI document,
so that the two cannot drift apart.
"""

from __future__ import annotations

from typing import Any

JURISDICTIONS: tuple[str, ...] = (
    "Alabama", "Alaska", "Arizona", "Arkansas", "California", "Colorado", "Connecticut",
    "Delaware", "Florida", "Georgia", "Hawaii", "Idaho", "Illinois", "Indiana", "Iowa",
    "Kansas", "Kentucky", "Louisiana", "Maine", "Maryland", "Massachusetts", "Michigan",
    "Minnesota", "Mississippi", "Missouri", "Montana", "Nebraska", "Nevada", "New Hampshire",
    "New Jersey", "New Mexico", "New York", "North Carolina", "North Dakota", "Ohio",
    "Oklahoma", "Oregon", "Pennsylvania", "Rhode Island", "South Carolina", "South Dakota",
    "Tennessee", "Texas", "Utah", "Vermont", "Virginia", "Washington", "Washington, D.C.",
    "West Virginia", "Wisconsin", "Wyoming", "Multi-State",
)  # fmt: skip
ACADEMIC_SUBJECTS = ("English Language Arts", "Mathematics", "Science", "Social Studies", "Other")
GRADE_LEVELS = ("PK", "K", "1", "2", "3", "4", "5", "6", "7", "8", "9", "10", "11", "12")
ADOPTION_STATUSES = ("Draft", "Proposed", "Adopted", "Implemented", "Retired")
NORMALIZED_STATEMENT_TYPES = ("Standard", "Standard Grouping", "Other")
LANGUAGES = ("en-US", "es-US")

# Field kinds: how a value is typed in the API (the export stores most as strings).
STR, LIST, BOOL, NUM, INT = "string", "list", "boolean", "number", "integer"

# (field, kind, enum name or None). Order is the order of keys in the served JSON.
STANDARD_FIELDS: tuple[tuple[str, str, str | None], ...] = (
    ("identifier", STR, None),
    ("caseIdentifierURI", STR, None),
    ("caseIdentifierUUID", STR, None),
    ("name", STR, None),
    ("statementCode", STR, None),
    ("description", STR, None),
    ("statementType", STR, None),
    ("normalizedStatementType", STR, "NormalizedStatementType"),
    ("jurisdiction", STR, "Jurisdiction"),
    ("academicSubject", STR, "AcademicSubject"),
    ("gradeLevel", LIST, "GradeLevel"),
    ("inLanguage", STR, "Language"),
    ("dateCreated", STR, None),
    ("dateModified", STR, None),
    ("notes", STR, None),
    ("author", STR, None),
    ("provider", STR, None),
    ("license", STR, None),
    ("attributionStatement", STR, None),
    # hasChildren is always the last key: the loader relies on it (see ingest.builder).
    ("hasChildren", BOOL, None),
)

FRAMEWORK_FIELDS: tuple[tuple[str, str, str | None], ...] = (
    ("identifier", STR, None),
    ("caseIdentifierURI", STR, None),
    ("caseIdentifierUUID", STR, None),
    ("name", STR, None),
    ("description", STR, None),
    ("jurisdiction", STR, "Jurisdiction"),
    ("academicSubject", STR, "AcademicSubject"),
    ("inLanguage", STR, "Language"),
    ("adoptionStatus", STR, "AdoptionStatus"),
    ("dateCreated", STR, None),
    ("dateModified", STR, None),
    ("notes", STR, None),
    ("author", STR, None),
    ("provider", STR, None),
    ("license", STR, None),
    ("attributionStatement", STR, None),
    ("isCurrent", BOOL, None),
)

COMPONENT_FIELDS: tuple[tuple[str, str, str | None], ...] = (
    ("identifier", STR, None),
    ("description", STR, None),
    ("academicSubject", STR, "AcademicSubject"),
    ("inLanguage", STR, "Language"),
    ("dateCreated", STR, None),
    ("dateModified", STR, None),
    ("examples", LIST, None),
    ("author", STR, None),
    ("provider", STR, None),
    ("license", STR, None),
    ("attributionStatement", STR, None),
)

_CURRICULUM_COMMON: tuple[tuple[str, str, str | None], ...] = (
    ("academicSubject", STR, None),
    ("gradeLevel", LIST, None),
    ("author", STR, None),
    ("provider", STR, None),
    ("inLanguage", STR, None),
    ("educationalUse", STR, None),
    ("audience", LIST, None),
    ("license", STR, None),
    ("curriculumLabel", STR, None),
    ("lmsLoadingGuidance", STR, None),
)

COURSE_FIELDS: tuple[tuple[str, str, str | None], ...] = (
    ("identifier", STR, None),
    ("name", STR, None),
    ("description", STR, None),
    ("courseCode", STR, None),
    ("publisherIdentifier", STR, None),
    *_CURRICULUM_COMMON,
    ("timeRequired", STR, None),
    ("dateCreated", STR, None),
    ("attributionStatement", STR, None),
)

LESSON_FIELDS: tuple[tuple[str, str, str | None], ...] = (
    ("identifier", STR, None),
    ("name", STR, None),
    ("ordinalName", STR, None),
    ("position", INT, None),
    *_CURRICULUM_COMMON,
    ("isOptional", BOOL, None),
    ("courseCode", STR, None),
    ("publisherIdentifier", STR, None),
    ("timeRequired", STR, None),
    ("dateCreated", STR, None),
    ("attributionStatement", STR, None),
)

GROUPING_FIELDS: tuple[tuple[str, str, str | None], ...] = (
    *LESSON_FIELDS[:3],
    ("groupName", STR, None),
    ("groupLevel", INT, None),
    *LESSON_FIELDS[3:],
)

ACTIVITY_FIELDS: tuple[tuple[str, str, str | None], ...] = (
    *LESSON_FIELDS[:4],
    *_CURRICULUM_COMMON,
    ("isOptional", BOOL, None),
    ("courseCode", STR, None),
    ("timeRequired", STR, None),
    ("studentGroupingType", STR, None),
    ("dateCreated", STR, None),
    ("attributionStatement", STR, None),
)

ASSESSMENT_FIELDS: tuple[tuple[str, str, str | None], ...] = (
    ("identifier", STR, None),
    ("name", STR, None),
    *_CURRICULUM_COMMON,
    ("isOptional", BOOL, None),
    ("courseCode", STR, None),
    ("publisherIdentifier", STR, None),
    ("studentGroupingType", STR, None),
    ("timeRequired", STR, None),
    ("dateCreated", STR, None),
    ("attributionStatement", STR, None),
)

SKILLS_FRAMEWORK_FIELDS: tuple[tuple[str, str, str | None], ...] = (
    ("identifier", STR, None),
    ("name", STR, None),
    ("description", STR, None),
    ("jurisdiction", STR, "Jurisdiction"),
    ("inLanguage", STR, "Language"),
    ("isCurrent", BOOL, None),
    ("dateCreated", STR, None),
    ("dateModified", STR, None),
    ("author", STR, None),
    ("provider", STR, None),
    ("license", STR, None),
    ("attributionStatement", STR, None),
)

SKILL_FIELDS: tuple[tuple[str, str, str | None], ...] = (
    ("identifier", STR, None),
    ("statementCode", STR, None),
    ("name", STR, None),
    ("description", STR, None),
    ("statementType", STR, None),
    ("normalizedStatementType", STR, "NormalizedStatementType"),
    ("gradeLevel", LIST, "GradeLevel"),
    ("jurisdiction", STR, "Jurisdiction"),
    ("inLanguage", STR, "Language"),
    ("dateCreated", STR, None),
    ("dateModified", STR, None),
    ("notes", STR, None),
    ("author", STR, None),
    ("provider", STR, None),
    ("license", STR, None),
    ("attributionStatement", STR, None),
    # Last, as for standards: the loader flips it in place.
    ("hasChildren", BOOL, None),
)

CROSSWALK_EXTRA_FIELDS: tuple[tuple[str, str, str | None], ...] = (
    ("jaccard", NUM, None),
    ("stateLCCount", INT, None),
    ("ccssLCCount", INT, None),
    ("sharedLCCount", INT, None),
)

ENUMS: dict[str, tuple[str, ...]] = {
    "Jurisdiction": JURISDICTIONS,
    "AcademicSubject": ACADEMIC_SUBJECTS,
    "GradeLevel": GRADE_LEVELS,
    "AdoptionStatus": ADOPTION_STATUSES,
    "NormalizedStatementType": NORMALIZED_STATEMENT_TYPES,
    "Language": LANGUAGES,
    "ScopeView": ("summary", "full"),
}

# Fields the API requires to be present with a value; all others may be null.
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
    return schemas


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
