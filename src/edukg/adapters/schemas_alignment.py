"""The JSON schemas of the alignment extensions: crosswalks between frameworks and a
curriculum's coverage of a framework (services.comparison, services.coverage)."""

from __future__ import annotations

from typing import Any

from edukg.adapters.schemas_typed import enum_schemas, row_schema
from edukg.model import alignment

_TEXT = {"type": "string"}
_NULLABLE_TEXT = {"type": "string", "nullable": True}
_COUNT = {"type": "integer"}
_NULLABLE_COUNT = {"type": "integer", "nullable": True}
_METHOD = {
    "type": "string",
    "enum": ["published", "learning-components"],
    "description": "published: the export's crosswalk, as published; learning-components: "
    "derived by edukg from the two items' supporting learning components",
}


def _ref(name: str) -> dict[str, Any]:
    return {"$ref": f"#/components/schemas/{name}"}


def _ref_nullable(name: str) -> dict[str, Any]:
    return {"allOf": [_ref(name)], "nullable": True}


def _object(required: list[str], properties: dict[str, Any], about: str = "") -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "object", "required": required, "properties": properties}
    if about:
        schema["description"] = about
    return schema


def alignment_schemas(schemas: dict[str, Any]) -> None:
    """Add the alignment extensions' schemas to `schemas`: the rows declared as types in
    `model.alignment` generated from them, the rest written here."""
    schemas.update(enum_schemas(alignment.ENUM_TYPES))
    schemas.update({shape.__name__: row_schema(shape) for shape in alignment.SHAPES})
    schemas["DerivedStandardCrosswalk"] = {
        "allOf": [
            _ref("StandardCrosswalk"),
            _object(
                ["sourceLCCount", "targetLCCount", "method"],
                {"sourceLCCount": _NULLABLE_COUNT, "targetLCCount": _NULLABLE_COUNT,
                 "method": _METHOD},
            ),
        ],
        "description": "With includeDerived=true: a crosswalk and how it was obtained. On a "
        "derived row stateLCCount/ccssLCCount are set only between a state and Common Core.",
    }  # fmt: skip
    figures = {
        "jaccard": {"type": "number", "nullable": True},
        "sourceLCCount": _NULLABLE_COUNT,
        "targetLCCount": _NULLABLE_COUNT,
        "sharedLCCount": _NULLABLE_COUNT,
        "method": _METHOD,
    }
    schemas["FrameworkCrosswalk"] = _object(
        ["source", "target", *figures],
        {"source": _ref("FrameworkItemBrief"), "target": _ref("FrameworkItemBrief"), **figures},
        "A pair of items of two frameworks and their overlap (edukg extension).",
    )
    grade = {
        "gradeLevel": _NULLABLE_TEXT,
        "standards": _COUNT,
        "withCounterpart": _COUNT,
        "withJaccardAtLeastHalf": _COUNT,
        "withExactCounterpart": _COUNT,
        "withoutCounterpart": _COUNT,
        "withoutCounterpartCodes": {
            "type": "array",
            "items": _TEXT,
            "description": "the codes of the standards without a counterpart, in code order",
        },
    }
    schemas["FrameworkCrosswalkSummary"] = _object(
        ["sourceFrameworkCaseIdentifierUUID", "targetFrameworkCaseIdentifierUUID", "pairs",
         "data"],
        {"sourceFrameworkCaseIdentifierUUID": _TEXT, "targetFrameworkCaseIdentifierUUID": _TEXT,
         "pairs": _COUNT, "data": {"type": "array", "items": _object(list(grade), grade)}},
    )  # fmt: skip
    _coverage_schemas(schemas)


def _coverage_schemas(schemas: dict[str, Any]) -> None:
    content = {
        "identifier": _TEXT,
        "type": {"type": "string", "enum": ["Lesson", "Activity", "Assessment"]},
        "name": _NULLABLE_TEXT,
        "ordinalName": _NULLABLE_TEXT,
        "courseCode": _NULLABLE_TEXT,
        "curriculumAlignmentType": {"type": "array", "items": _TEXT},
    }
    schemas["AlignedContent"] = _object(list(content), content)
    aligned = {"type": "array", "items": _ref("AlignedContent")}
    via = {
        "standard": _ref("FrameworkItemBrief"),
        "jaccard": {"type": "number", "nullable": True},
        "method": _METHOD,
        "aligned": aligned,
    }
    row = {
        "standard": _ref("FrameworkItemBrief"),
        "direct": aligned,
        "viaCrosswalk": {"type": "array", "items": _object(list(via), via)},
        "status": {"type": "string", "enum": ["direct", "crosswalk", "none"]},
        "domain": _ref_nullable("CoverageDomain"),
    }
    schemas["CoverageDomain"] = _object(
        ["identifier", "caseIdentifierUUID", "code", "description"],
        {"identifier": _TEXT, "caseIdentifierUUID": _NULLABLE_TEXT,
         "code": {**_NULLABLE_TEXT, "description": "the code its standards share (3.NF)"},
         "description": _NULLABLE_TEXT},
        "The domain a standard lies in, as teachers know it: the framework's Domain level"
        " where it has one, else the level above its clusters (edukg extension).",
    )  # fmt: skip
    schemas["CoverageRow"] = _object(
        list(row), row, "A standard and what of a curriculum covers it (edukg extension)."
    )
    counts = {
        "standards": _COUNT,
        "direct": _COUNT,
        "viaCrosswalk": _COUNT,
        "notCovered": _COUNT,
    }
    by_grade = {"gradeLevel": _NULLABLE_TEXT, **counts}
    by_domain = {"domain": _ref_nullable("CoverageDomain"), **counts}
    summary = {
        "curriculumId": _TEXT,
        "framework": {"type": "object", "additionalProperties": True},
        "alignedItems": {
            **_NULLABLE_COUNT,
            "description": "how many of the curriculum's"
            " lessons, activities and assessments carry an alignment to a standard"
            " in this release (0: it covers nothing anywhere)",
        },
        "total": _object(list(counts), counts),
        "byGrade": {"type": "array", "items": _object(list(by_grade), by_grade)},
        "byDomain": {"type": "array", "items": _object(list(by_domain), by_domain)},
    }
    schemas["CoverageSummary"] = _object(
        list(summary),
        {
            **summary,
            "note": {
                "type": "string",
                "description": "why the coverage is empty,"
                " when the curriculum carries no alignment in this release",
            },
        },
    )
