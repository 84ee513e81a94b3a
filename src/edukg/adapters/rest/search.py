"""Search: standards, learning components and durable skills, by words or by code."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any

from edukg.adapters.params import GradeLevels, Param, SubjectFilter, Uuid
from edukg.adapters.rest.base import RANKING, SEARCH_COST, Call, Family
from edukg.model.errors import NotFoundError
from edukg.model.shapes import Jurisdiction, NormalizedStatementType
from edukg.model.vocabulary import STANDARD, grade_mask
from edukg.services import search as searching
from edukg.services.frameworks import framework
from edukg.store.base import Search

_Limit = Annotated[int, Param("Maximum number of results (1-50)", minimum=1, maximum=50)]
_Query = Annotated[str | None, Param("Words to search for (ranked by relevance)", max_length=500)]
_Code = Annotated[
    str | None,
    Param("A statement code as people write it, case-insensitive (score 1.0): 3.NF.A.1, or"
          " 6.RP.3c for 6.RP.A.3.c, A-REI.11 for HSA-REI.D.11", max_length=50),
]  # fmt: skip
_StatementType = Annotated[NormalizedStatementType | None, Param("Only records of this type")]


@dataclass(frozen=True, slots=True, kw_only=True)
class SearchStandards:
    """Parameters of searchAcademicStandards."""

    query: _Query = None
    statementCode: _Code = None
    gradeLevel: GradeLevels = ()
    academicSubject: SubjectFilter = None
    normalizedStatementType: _StatementType = None
    jurisdiction: Annotated[Jurisdiction, Param("Filter by jurisdiction (default Multi-State)")] = (
        "Multi-State"
    )
    standardsFrameworkCaseIdentifierUUID: Annotated[
        Uuid | None,
        Param(
            "Only the items of this framework (an edukg extension; the jurisdiction is then the"
            " framework's own, and a code also finds the items under it)",
            example="c6487102-d7cb-11e8-824f-0242ac160002",
        ),
    ] = None
    limit: _Limit = 5


@dataclass(frozen=True, slots=True, kw_only=True)
class SearchComponents:
    """Parameters of searchLearningComponents."""

    query: Annotated[str, Param("Words to search for", max_length=500, example="add fractions")]
    academicSubject: SubjectFilter = None
    limit: _Limit = 5


@dataclass(frozen=True, slots=True, kw_only=True)
class SearchSkills:
    """Parameters of searchDurableSkills."""

    query: _Query = None
    statementCode: _Code = None
    normalizedStatementType: _StatementType = None
    limit: _Limit = 5


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


def _standards(call: Call[SearchStandards]) -> bytes:
    p = call.params
    within = None
    if p.standardsFrameworkCaseIdentifierUUID is not None:
        try:
            found = framework(call.store, p.standardsFrameworkCaseIdentifierUUID)
        except NotFoundError:  # as listAcademicStandards: an unknown framework has no items
            return _array([])
        within = found.identifier
    filters = Search(
        STANDARD,
        (),
        jurisdiction=None if within else p.jurisdiction,
        subject=p.academicSubject,
        statement_type=p.normalizedStatementType,
        grades_mask=grade_mask(p.gradeLevel),
        framework=within,
    )
    docs = searching.search_standards(call.store, p.query, p.statementCode, filters, p.limit)
    return _array(docs)


def _components(call: Call[SearchComponents]) -> bytes:
    p = call.params
    return _array(searching.search_components(call.store, p.query, p.academicSubject, p.limit))


def _skills(call: Call[SearchSkills]) -> bytes:
    p = call.params
    docs = searching.search_skills(
        call.store, p.query, p.statementCode, p.normalizedStatementType, p.limit
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

_SEARCH = Family(("Search",), cost=SEARCH_COST, varies=frozenset((RANKING,)))

OPERATIONS = (
    _SEARCH.of(
        path="/academic-standards/search",
        operation_id="searchAcademicStandards",
        summary="Search academic standards",
        description="Exactly one of `query` (words; a code typed as words, such as "
        "'3.nf.a.1' or 'rl 4 3', is found too) or `statementCode` (a code; a short form that"
        " leaves out the cluster letter, 6.RP.3c, names a standard when exactly one fits)."
        " `jurisdiction` "
        "defaults to Multi-State in both modes." + _HOW,
        handler=_standards,
        response_schema=_results("StandardsFrameworkItem"),
        params=SearchStandards,
        tags=("Academic standards", "Search"),
    ),
    _SEARCH.of(
        path="/learning-components/search",
        operation_id="searchLearningComponents",
        summary="Search learning components",
        description="`query` is required." + _HOW,
        handler=_components,
        response_schema=_results("LearningComponent"),
        params=SearchComponents,
        tags=("Learning components", "Search"),
    ),
    _SEARCH.of(
        path="/durable-skills/search",
        operation_id="searchDurableSkills",
        summary="Search durable skills",
        description="Exactly one of `query` or `statementCode`." + _HOW,
        handler=_skills,
        response_schema=_results("DurableSkill"),
        params=SearchSkills,
        tags=("Durable skills", "Search"),
    ),
)
