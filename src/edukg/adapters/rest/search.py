"""Search: standards, learning components and durable skills, by words or by code."""

from __future__ import annotations

from typing import Any

from edukg.adapters.params import GRADE_LEVEL, SUBJECT, Param
from edukg.adapters.rest.base import Call, Operation
from edukg.model.vocabulary import STANDARD, grade_mask
from edukg.services import search as searching
from edukg.store.base import Search

SEARCH_LIMIT = Param(
    "limit", "integer", "Maximum number of results (1-50)", minimum=1, maximum=50, default=5
)
QUERY = Param("query", "string", "Words to search for (ranked by relevance)", max_length=500)
CODE = Param(
    "statementCode",
    "string",
    "An exact statement code, case-insensitive (score 1.0)",
    max_length=50,
)
STATEMENT_TYPE = Param(
    "normalizedStatementType", "enum", "Only records of this type", enum="NormalizedStatementType"
)


def _results(item_schema: str) -> dict[str, Any]:
    return {
        "type": "array",
        "items": {
            "allOf": [
                {"$ref": f"#/components/schemas/{item_schema}"},
                {
                    "type": "object",
                    "required": ["score"],
                    "properties": {"score": {"type": "number", "minimum": 0, "maximum": 1}},
                },
            ]
        },
    }


def _array(docs: list[bytes]) -> bytes:
    return b"[" + b",".join(docs) + b"]"


def _standards(call: Call) -> bytes:
    v = call.values
    filters = Search(
        STANDARD,
        (),
        jurisdiction=v["jurisdiction"],
        subject=v["academicSubject"],
        statement_type=v["normalizedStatementType"],
        grades_mask=grade_mask(v["gradeLevel"]),
    )
    docs = searching.search_standards(
        call.store, v["query"], v["statementCode"], filters, v["limit"]
    )
    return _array(docs)


def _components(call: Call) -> bytes:
    v = call.values
    return _array(
        searching.search_components(call.store, v["query"], v["academicSubject"], v["limit"])
    )


def _skills(call: Call) -> bytes:
    v = call.values
    docs = searching.search_skills(
        call.store, v["query"], v["statementCode"], v["normalizedStatementType"], v["limit"]
    )
    return _array(docs)


_HOW = (
    " Ranking is hybrid: words (BM25 over stemmed words; PostgreSQL: its full-text rank) and "
    "meaning (all-MiniLM-L6-v2 sentence embeddings), fused by reciprocal rank; the score is "
    "the fused rank score scaled so that first by both would be 1. Without a semantic index "
    "(see /healthz) ranking is by words alone and the score a monotone map of BM25 onto "
    "(0, 1). Exact codes score 1.0 and come first. Filters apply before ranking. Ties break "
    "by identifier."
)

OPERATIONS = (
    Operation(
        path="/academic-standards/search",
        operation_id="searchAcademicStandards",
        summary="Search academic standards",
        description="Exactly one of `query` (words; a code typed as words, such as "
        "'3.nf.a.1' or 'rl 4 3', is found too) or `statementCode` (exact). `jurisdiction` "
        "defaults to Multi-State in both modes." + _HOW,
        handler=_standards,
        response_schema=_results("StandardsFrameworkItem"),
        params=(
            QUERY,
            CODE,
            GRADE_LEVEL,
            SUBJECT,
            STATEMENT_TYPE,
            Param(
                "jurisdiction",
                "enum",
                "Filter by jurisdiction (default Multi-State)",
                enum="Jurisdiction",
                default="Multi-State",
            ),
            SEARCH_LIMIT,
        ),
        tags=("Academic standards", "Search"),
    ),
    Operation(
        path="/learning-components/search",
        operation_id="searchLearningComponents",
        summary="Search learning components",
        description="`query` is required." + _HOW,
        handler=_components,
        response_schema=_results("LearningComponent"),
        params=(
            Param(
                "query",
                "string",
                "Words to search for",
                required=True,
                max_length=500,
                example="add fractions",
            ),
            SUBJECT,
            SEARCH_LIMIT,
        ),
        tags=("Learning components", "Search"),
    ),
    Operation(
        path="/durable-skills/search",
        operation_id="searchDurableSkills",
        summary="Search durable skills",
        description="Exactly one of `query` or `statementCode`." + _HOW,
        handler=_skills,
        response_schema=_results("DurableSkill"),
        params=(QUERY, CODE, STATEMENT_TYPE, SEARCH_LIMIT),
        tags=("Durable skills", "Search"),
    ),
)
