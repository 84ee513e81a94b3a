"""Search behaviour on the demo graph, on both backends: codes, the either-or rule, filters,
limits, empty and odd queries, and clear-cut cases (hybrid: the demo has a semantic index;
tests/test_semantic.py covers ranking by meaning and the lexical fallback)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from edukg.ingest.demo import demo_framework_case_uuid
from tests.conftest import Api, error_of

Conforms = Callable[..., None]


def codes(rows: list[dict[str, Any]]) -> list[str]:
    return [r.get("statementCode") or "" for r in rows]


def test_exact_code_scores_one(demo: Api, conforms: Conforms) -> None:
    rows = demo.ok("/academic-standards/search", statementCode="3.nf.a.1")
    assert codes(rows) == ["3.NF.A.1"] and rows[0]["score"] == 1.0
    assert demo.ok("/academic-standards/search", statementCode="3.NF.A") == [
        *demo.ok("/academic-standards/search", statementCode="3.nf.a")
    ]
    assert demo.ok("/academic-standards/search", statementCode="3.NF.A.9") == []
    conforms("/academic-standards/search", rows)


def test_codes_typed_as_words_come_first(demo: Api) -> None:
    for typed in ("3.nf.a.1", "3 NF A 1", "3.NF.A.1"):
        rows = demo.ok("/academic-standards/search", query=typed)
        assert rows[0]["statementCode"] == "3.NF.A.1" and rows[0]["score"] == 1.0, typed
    ela = demo.ok("/academic-standards/search", query="rl 3 2")
    assert ela[0]["statementCode"] == "RL.3.2"


def test_either_query_or_code(demo: Api) -> None:
    error_of(demo.get("/academic-standards/search"), 400, "ValidationError")
    both = demo.get("/academic-standards/search", query="fractions", statementCode="3.NF.A.1")
    error_of(both, 400, "ValidationError")
    error_of(demo.get("/durable-skills/search"), 400, "ValidationError")
    error_of(
        demo.get("/durable-skills/search", query="x", statementCode="COL"), 400, "ValidationError"
    )
    error_of(demo.get("/learning-components/search"), 400, "ValidationError")


@pytest.mark.parametrize(
    ("query", "first"),
    [
        ("adding fractions with unlike denominators", "5.NF.A.1"),
        ("numerical expressions with whole-number exponents", "6.EE.A.1"),
        ("unit rate", "6.RP.A.2"),
        ("elapsed time to the nearest minute", "3.MD.A.1"),
    ],
)
def test_clear_cut_words(demo: Api, query: str, first: str) -> None:
    rows = demo.ok("/academic-standards/search", query=query)
    assert rows[0]["statementCode"] == first, codes(rows)
    scores = [r["score"] for r in rows]
    assert scores == sorted(scores, reverse=True) and all(0 < s < 1 for s in scores)


def test_filters_apply_before_ranking(demo: Api) -> None:
    grade3 = demo.ok("/academic-standards/search", query="fractions", gradeLevel="3", limit=50)
    assert grade3 and all("3" in r["gradeLevel"] for r in grade3)
    assert len(grade3) > 5  # not an empty page because the top hits were other grades
    both = demo.ok("/academic-standards/search", query="fractions", gradeLevel=["3", "5"], limit=50)
    assert {g for r in both for g in r["gradeLevel"]} >= {"3", "5"}
    vt = demo.ok("/academic-standards/search", query="fractions", jurisdiction="Vermont")
    assert vt and all(r["jurisdiction"] == "Vermont" for r in vt)
    default = demo.ok("/academic-standards/search", query="fractions", limit=50)
    assert all(r["jurisdiction"] == "Multi-State" for r in default)  # the default jurisdiction
    ela = demo.ok(
        "/academic-standards/search", query="story", academicSubject="English Language Arts"
    )
    assert ela and all(r["academicSubject"] == "English Language Arts" for r in ela)
    groupings = demo.ok("/academic-standards/search", query="fractions",
                        normalizedStatementType="Standard Grouping")  # fmt: skip
    assert groupings and all(r["normalizedStatementType"] == "Standard Grouping" for r in groupings)
    coded = demo.ok("/academic-standards/search", statementCode="M.3.NF.1")
    assert coded == []  # a Vermont code, but the default jurisdiction is Multi-State
    assert codes(demo.ok("/academic-standards/search", statementCode="M.3.NF.1",
                         jurisdiction="Vermont")) == ["M.3.NF.1"]  # fmt: skip


def test_limits(demo: Api) -> None:
    assert len(demo.ok("/academic-standards/search", query="fractions")) == 5  # the default
    assert len(demo.ok("/academic-standards/search", query="fractions", limit=2)) == 2
    for bad in ("0", "51", "-1", "x"):
        error_of(demo.get("/academic-standards/search", query="fractions", limit=bad), 400,
                 "ValidationError")  # fmt: skip


def test_empty_long_and_odd_queries(demo: Api) -> None:
    assert demo.ok("/academic-standards/search", query="photosynthesis") == []
    assert demo.ok("/academic-standards/search", query="!!! ??? ...") == []
    error_of(demo.get("/academic-standards/search", query="x" * 501), 400, "ValidationError")
    for odd in ('"unbalanced', "NEAR(a b)", "fractions*", "a AND OR NOT", "é ü 分数", "-", "'; --"):
        response = demo.get("/academic-standards/search", query=odd)
        assert response.status_code == 200, (odd, response.text)
        assert isinstance(response.json(), list)


def test_learning_component_search(demo: Api, conforms: Conforms) -> None:
    rows = demo.ok("/learning-components/search", query="unit fraction on a number line")
    assert rows[0]["description"] == "Locate a unit fraction on a number line"
    conforms("/learning-components/search", rows)
    ela = demo.ok(
        "/learning-components/search", query="story", academicSubject="English Language Arts"
    )
    assert ela and all(r["academicSubject"] == "English Language Arts" for r in ela)
    assert demo.ok("/learning-components/search", query="story", academicSubject="Science") == []


def test_durable_skill_search(demo: Api, conforms: Conforms) -> None:
    rows = demo.ok("/durable-skills/search", query="explains why a method works")
    assert rows[0]["statementCode"] == "COM.1.3"
    conforms("/durable-skills/search", rows)
    coded = demo.ok("/durable-skills/search", statementCode="col.1")
    assert codes(coded) == ["COL.1"] and coded[0]["score"] == 1.0
    levels = demo.ok(
        "/durable-skills/search", query="shares ideas", normalizedStatementType="Standard Grouping"
    )
    assert all(r["normalizedStatementType"] == "Standard Grouping" for r in levels)


def test_search_within_one_framework(demo: Api, conforms: Conforms) -> None:
    framework = demo_framework_case_uuid("ms-math")
    members = {
        s["caseIdentifierUUID"]
        for s in demo.ok("/academic-standards", standardsFrameworkCaseIdentifierUUID=framework,
                         limit=1000)["data"]
    }  # fmt: skip
    found = demo.ok("/academic-standards/search", query="fractions", limit=50,
                    standardsFrameworkCaseIdentifierUUID=framework)  # fmt: skip
    conforms("/academic-standards/search", found)
    assert found and {s["caseIdentifierUUID"] for s in found} <= members
    # By stem, not by substring: "fractions" finds "a unit fraction".
    assert any("unit fraction" in s["description"] for s in found)
    # A code names a branch of the framework: the branch and nothing else.
    branch = demo.ok("/academic-standards/search", query="3.nf.a", limit=50,
                     standardsFrameworkCaseIdentifierUUID=framework)  # fmt: skip
    codes = {s["statementCode"] for s in branch}
    assert {"3.NF.A", "3.NF.A.1", "3.NF.A.3.d"} <= codes
    assert all(c == "3.NF.A" or c.startswith("3.NF.A.") for c in codes), codes
    unknown = demo.ok("/academic-standards/search", query="fractions",
                      standardsFrameworkCaseIdentifierUUID="00000000-0000-4000-8000-000000000000")  # fmt: skip
    assert unknown == []  # as listAcademicStandards: an unknown framework has no items
    bad = demo.get("/academic-standards/search", query="fractions",
                   standardsFrameworkCaseIdentifierUUID="not-a-uuid")  # fmt: skip
    error_of(bad, 400, "ValidationError")
