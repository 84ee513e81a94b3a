"""The JSON schemas of the shapes edukg serves, for its OpenAPI document: generated from
the record types of `model.shapes`, so a record and its schema cannot disagree."""

from __future__ import annotations

import inspect
from typing import Any

from edukg.adapters.schemas_typed import alignment_schemas
from edukg.model import shapes
from edukg.model.contract import ENUMS, LIST, fields_of, keeps_null_of, required_of

_RECORDS = (
    shapes.StandardsFrameworkItem,
    shapes.StandardsFramework,
    shapes.LearningComponent,
    shapes.StandardCrosswalk,
    shapes.Course,
    shapes.LessonGrouping,
    shapes.Lesson,
    shapes.Activity,
    shapes.Assessment,
    shapes.DurableSkillsFramework,
    shapes.DurableSkill,
)


def _field_schema(kind: str, enum: str | None) -> dict[str, Any]:
    if kind == LIST:
        items: dict[str, Any] = {"type": "string"}
        if enum:
            items = {"$ref": f"#/components/schemas/{enum}ENUM"}
        return {"type": "array", "items": items, "nullable": True}
    if enum:
        return {"allOf": [{"$ref": f"#/components/schemas/{enum}ENUM"}], "nullable": True}
    return {"type": kind, "nullable": True}


def record_schema(shape: type) -> dict[str, Any]:
    """The JSON schema of one of `model.shapes`' record types."""
    fields = fields_of(shape)
    required = required_of(shape)
    nulls = keeps_null_of(shape)  # a curriculum record leaves out what it lacks
    props: dict[str, Any] = {}
    for field, kind, enum in fields:
        schema = _field_schema(kind, enum)
        if field in required or (nulls is not None and field not in nulls):
            schema.pop("nullable", None)
        props[field] = schema
    listed = [f for f, _, _ in fields if nulls is None or f in required]
    return {
        "type": "object",
        "description": " ".join(inspect.getdoc(shape).split()),  # type: ignore[union-attr]
        "required": listed,
        "properties": props,
    }


def component_schemas() -> dict[str, Any]:
    """JSON schemas (OpenAPI 3.0 dialect) of every shape edukg serves."""
    schemas: dict[str, Any] = {
        f"{name}ENUM": {"type": "string", "enum": list(values)} for name, values in ENUMS.items()
    }
    schemas.update({shape.__name__: record_schema(shape) for shape in _RECORDS})
    _aligned(schemas)
    _scope_and_sequence(schemas)
    _dependencies(schemas)
    _envelopes(schemas)
    _data_version(schemas)
    _changes(schemas)
    alignment_schemas(schemas)
    return schemas


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


def _data_version(schemas: dict[str, Any]) -> None:
    schemas["DataVersion"] = {
        "type": "object",
        "description": "A data release this server keeps (edukg extension).",
        "required": ["dataVersion", "contentId", "loadedAt", "counts", "current"],
        "properties": {
            "dataVersion": {"type": "string", "description": "The release, e.g. 1.11.0"},
            "contentId": {"type": "string", "description": "SHA-256 of the loaded records"},
            "loadedAt": {"type": "string", "description": "When it was loaded (UTC)"},
            "counts": {"type": "object", "additionalProperties": {"type": "integer"}},
            "current": {"type": "boolean", "description": "Answers requests that name none"},
        },
    }


def _changes(schemas: dict[str, Any]) -> None:
    text, nullable = {"type": "string"}, {"type": "string", "nullable": True}
    values = {"type": "object", "nullable": True, "additionalProperties": True}
    schemas["Change"] = {
        "type": "object",
        "description": "One record that differs between two releases (edukg extension).",
        "required": ["type", "label", "identifier", "change", "changedProperties"],
        "properties": {
            "type": {"$ref": "#/components/schemas/RecordTypeENUM"},
            "label": {**text, "description": "The export's label"},
            "identifier": {**text, "description": "The newer release's (a removed record: the older's)"},
            "change": {"$ref": "#/components/schemas/ChangeKindENUM"},
            "changedProperties": {"type": "array", "items": text,
                                  "description": "For `modified`: the export properties that differ"},
            "caseIdentifierUUID": {**nullable, "description": "Nodes"},
            "statementCode": {**nullable, "description": "Nodes"},
            "name": {**nullable, "description": "Nodes: the name, else the statement (shortened)"},
            "sourceIdentifier": {**text, "description": "Relationships"},
            "targetIdentifier": {**text, "description": "Relationships"},
            "sourceCode": {**nullable, "description": "Relationships: the source's statement code"},
            "sourceName": {**nullable, "description": "Relationships: the source's name or statement"},
            "targetCode": {**nullable, "description": "Relationships: the target's statement code"},
            "targetName": {**nullable, "description": "Relationships: the target's name or statement"},
            "before": {**values, "description": "With includeValues: the older values"},
            "after": {**values, "description": "With includeValues: the newer values"},
        },
    }  # fmt: skip
    count = {"type": "integer"}
    schemas["ChangeSummary"] = {
        "type": "object",
        "required": ["from", "to", "counts"],
        "properties": {
            "from": text,
            "to": text,
            "counts": {"type": "array", "items": {
                "type": "object", "required": ["label", "added", "removed", "modified"],
                "properties": {"label": text, "added": count, "removed": count,
                               "modified": count}}},
        },
    }  # fmt: skip


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
