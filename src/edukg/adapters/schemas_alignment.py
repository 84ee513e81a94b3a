"""The JSON schemas of the alignment extensions: crosswalks between frameworks and a
curriculum's coverage of a framework (services.comparison, services.coverage)."""

from __future__ import annotations

from typing import Any

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


def _object(required: list[str], properties: dict[str, Any], about: str = "") -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "object", "required": required, "properties": properties}
    if about:
        schema["description"] = about
    return schema


def alignment_schemas(schemas: dict[str, Any]) -> None:
    """Add the alignment extensions' schemas to `schemas`."""
    text_alignment_schemas(schemas)
    brief = {
        "identifier": _TEXT,
        "caseIdentifierUUID": _TEXT,
        "statementCode": _NULLABLE_TEXT,
        "description": _NULLABLE_TEXT,
        "jurisdiction": _NULLABLE_TEXT,
        "academicSubject": _NULLABLE_TEXT,
        "gradeLevel": {"type": "array", "items": _TEXT},
        "normalizedStatementType": _NULLABLE_TEXT,
    }
    schemas["FrameworkItemBrief"] = _object(
        list(brief), brief, "A framework item as alignment rows name it (edukg extension)."
    )
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
        "domain": {
            "type": "object",
            "nullable": True,
            "description": "The framework's top-level grouping the standard lies under",
            "required": ["identifier", "caseIdentifierUUID", "statementCode", "description"],
            "properties": {
                "identifier": _TEXT,
                "caseIdentifierUUID": _TEXT,
                "statementCode": _NULLABLE_TEXT,
                "description": _NULLABLE_TEXT,
            },
        },
    }
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
    by_domain = {"domain": {"allOf": [_ref("FrameworkItemBrief")], "nullable": True}, **counts}
    summary = {
        "curriculumId": _TEXT,
        "framework": {"type": "object", "additionalProperties": True},
        "total": _object(list(counts), counts),
        "byGrade": {"type": "array", "items": _object(list(by_grade), by_grade)},
        "byDomain": {"type": "array", "items": _object(list(by_domain), by_domain)},
    }
    schemas["CoverageSummary"] = _object(list(summary), summary)


_SCORE = {"type": "number", "minimum": 0, "maximum": 1}
_RANKING = {
    "type": "string",
    "enum": ["semantic", "lexical"],
    "description": "semantic: by meaning (the semantic index and the model); lexical: by"
    " words alone, as search ranks without them",
}


def text_alignment_schemas(schemas: dict[str, Any]) -> None:
    """Add the schemas of alignTextToStandards and listSimilarStandards to `schemas`."""
    component = _object(
        ["identifier", "description", "similarity"],
        {"identifier": _TEXT, "description": _NULLABLE_TEXT, "similarity": _SCORE},
    )
    passage = _object(
        ["start", "end", "text", "similarity", "statementSimilarity", "learningComponents"],
        {
            "start": _COUNT,
            "end": _COUNT,
            "text": _TEXT,
            "similarity": _SCORE,
            "statementSimilarity": _SCORE,
            "learningComponents": {"type": "array", "items": component},
        },
        "text[start:end] of the aligned text, and what in it matched the standard",
    )
    evidence = _object(
        ["statementSimilarity", "passages"],
        {"statementSimilarity": _SCORE, "passages": {"type": "array", "items": passage}},
    )
    schemas["TextAlignedStandard"] = {
        "allOf": [
            _ref("StandardsFrameworkItem"),
            _object(["score", "evidence"], {"score": _SCORE, "evidence": evidence}),
        ]
    }
    schemas["TextAlignment"] = _object(
        ["data", "ranking", "passages"],
        {
            "data": {"type": "array", "items": _ref("TextAlignedStandard")},
            "ranking": _RANKING,
            "passages": {**_COUNT, "description": "How many passages the text was cut into"},
        },
    )
    shared = _object(
        ["jaccard", "sharedLCCount", "sourceLCCount", "targetLCCount", "learningComponents"],
        {
            "jaccard": _SCORE,
            "sharedLCCount": _COUNT,
            "sourceLCCount": _COUNT,
            "targetLCCount": _COUNT,
            "learningComponents": {
                "type": "array",
                "items": _object(
                    ["identifier"], {"identifier": _TEXT, "description": _NULLABLE_TEXT}
                ),
            },
        },
        "The learning components that support both standards (absent: none)",
    )
    schemas["SimilarStandard"] = {
        "allOf": [
            _ref("StandardsFrameworkItem"),
            _object(
                ["score", "sharedLearningComponents"],
                {"score": _SCORE, "sharedLearningComponents": {**shared, "nullable": True}},
            ),
        ]
    }
    schemas["SimilarStandards"] = _object(
        ["data", "ranking"],
        {"data": {"type": "array", "items": _ref("SimilarStandard")}, "ranking": _RANKING},
    )
