"""Every standards operation on the demo graph: answers, filters and errors."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from edukg.ingest.demo import demo_case_uuid, demo_framework_case_uuid
from edukg.model.contract import STANDARD_FIELDS
from tests.conftest import Api, error_of
from tests.support import contract_fields

MS = demo_framework_case_uuid("ms-math")
VT = demo_framework_case_uuid("vt-math")
UNKNOWN = "00000000-0000-4000-8000-000000000000"
Conforms = Callable[..., None]


def uuid_of(code: str, framework: str = "ms-math") -> str:
    return demo_case_uuid(framework, code)


def codes(records: list[dict[str, Any]]) -> list[str]:
    return [r["statementCode"] or "" for r in records]


def test_one_standard_carries_every_field_typed(demo: Api, conforms: Conforms) -> None:
    body = demo.ok(f"/academic-standards/{uuid_of('3.NF.A.1')}")
    contract = [f for f, _, _ in STANDARD_FIELDS]
    # The contract's fields in its order, then the export's other properties, and
    # hasChildren (derived) last.
    assert contract[-1] == "hasChildren" and list(body)[-1] == "hasChildren"
    assert list(body)[: len(contract) - 1] == contract[:-1]
    assert set(body) - set(contract) == {"adoptionStatus", "isCurrent"}
    assert body["isCurrent"] is True
    assert body["statementCode"] == "3.NF.A.1"
    assert body["gradeLevel"] == ["3"]
    assert body["hasChildren"] is False
    assert body["name"] is None
    assert body["notes"] is None
    assert "$\\frac{1}{b}$" in body["description"]
    assert "*b*" in body["description"]
    conforms("/academic-standards/{caseIdentifierUUID}", body)


def test_has_children_is_true_exactly_for_parents(demo: Api) -> None:
    assert demo.ok(f"/academic-standards/{uuid_of('3.NF.A')}")["hasChildren"] is True
    assert demo.ok(f"/academic-standards/{uuid_of('3.NF.A.3')}")["hasChildren"] is True
    assert demo.ok(f"/academic-standards/{uuid_of('3.NF.A.3.a')}")["hasChildren"] is False


def test_data_responses_carry_data_version_and_request_id(demo: Api) -> None:
    response = demo.get(f"/academic-standards/{uuid_of('3.NF.A.1')}")
    assert response.headers["x-data-version"] == "demo"
    assert response.headers["x-request-id"].startswith("req_")
    assert response.headers["content-type"] == "application/json"


def test_uppercase_uuid_is_accepted(demo: Api) -> None:
    body = demo.ok(f"/academic-standards/{uuid_of('3.NF.A.1').upper()}")
    assert body["statementCode"] == "3.NF.A.1"


def test_unknown_and_malformed_standard(demo: Api) -> None:
    body = error_of(demo.get(f"/academic-standards/{UNKNOWN}"), 404, "NotFoundError")
    assert UNKNOWN in body["message"]
    error_of(demo.get("/academic-standards/not-a-uuid"), 400, "ValidationError")


def test_framework_membership_is_the_whole_hasChild_tree(demo: Api, conforms: Conforms) -> None:
    records = demo.walk("/academic-standards", standardsFrameworkCaseIdentifierUUID=MS)
    found = set(codes(records))
    assert {"3.NF", "3.NF.A", "3.NF.A.3", "3.NF.A.3.d", "MP1", "MP8", "6.EE.A.1"} <= found
    assert not {c for c in found if c and c.startswith(("M.", "RL"))}  # other frameworks
    identifiers = [r["identifier"] for r in records]
    assert identifiers == sorted(identifiers, key=lambda s: s.encode())
    assert len(identifiers) == len(set(identifiers))
    body = demo.ok("/academic-standards", standardsFrameworkCaseIdentifierUUID=MS)
    conforms("/academic-standards", body)


def test_grade_filter_matches_any_of_the_grades(demo: Api) -> None:
    grade3 = demo.walk(
        "/academic-standards", standardsFrameworkCaseIdentifierUUID=MS, gradeLevel="3"
    )
    assert all("3" in r["gradeLevel"] for r in grade3)
    assert "3.NF.A.1" in codes(grade3)
    assert "MP1" in codes(grade3)
    both = demo.walk(
        "/academic-standards", standardsFrameworkCaseIdentifierUUID=MS, gradeLevel=["3", "4"]
    )
    assert all({"3", "4"} & set(r["gradeLevel"]) for r in both)
    assert {"3.NF.A.1", "4.NF.A.1"} <= set(codes(both))
    assert len(both) > len(grade3)
    none = demo.ok("/academic-standards", standardsFrameworkCaseIdentifierUUID=MS, gradeLevel="PK")
    assert none["data"] == []
    assert none["pagination"]["hasMore"] is False


def test_statement_type_and_subject_filters(demo: Api) -> None:
    groupings = demo.walk(
        "/academic-standards",
        standardsFrameworkCaseIdentifierUUID=MS,
        normalizedStatementType="Standard Grouping",
    )
    assert groupings
    assert all(r["normalizedStatementType"] == "Standard Grouping" for r in groupings)
    ela = demo.ok(
        "/academic-standards",
        standardsFrameworkCaseIdentifierUUID=MS,
        academicSubject="English Language Arts",
    )
    assert ela["data"] == []


def test_list_standards_errors(demo: Api) -> None:
    body = error_of(demo.get("/academic-standards"), 400, "ValidationError")
    assert body["message"].startswith(
        "Missing required parameter: standardsFrameworkCaseIdentifierUUID"
    )
    error_of(
        demo.get("/academic-standards", standardsFrameworkCaseIdentifierUUID="nope"),
        400,
        "ValidationError",
    )
    for bad in ({"normalizedStatementType": "Foo"}, {"gradeLevel": "13"}, {"limit": "0"},
                {"limit": "1001"}, {"limit": "ten"}, {"academicSubject": "Math"}):  # fmt: skip
        response = demo.get("/academic-standards", standardsFrameworkCaseIdentifierUUID=MS, **bad)
        error_of(response, 400, "ValidationError")
    unknown = demo.ok("/academic-standards", standardsFrameworkCaseIdentifierUUID=UNKNOWN)
    assert unknown["data"] == []


def test_repeated_scalar_parameter_is_refused(demo: Api) -> None:
    response = demo.http.get(
        "/knowledge-graph/v0/academic-standards",
        params=[("standardsFrameworkCaseIdentifierUUID", MS), ("limit", "5"), ("limit", "6")],
        headers={"x-api-key": demo.key},
    )
    body = error_of(response, 400, "ValidationError")
    assert "limit" in body["message"]


def test_children_are_direct_only(demo: Api, conforms: Conforms) -> None:
    body = demo.ok(f"/academic-standards/{uuid_of('3.NF.A')}/children")
    assert sorted(codes(body["data"])) == ["3.NF.A.1", "3.NF.A.2", "3.NF.A.3"]
    conforms("/academic-standards/{caseIdentifierUUID}/children", body)
    leaf = demo.ok(f"/academic-standards/{uuid_of('3.NF.A.1')}/children")
    assert leaf == {"data": [], "pagination": {"limit": 100, "nextCursor": None, "hasMore": False}}
    error_of(demo.get(f"/academic-standards/{UNKNOWN}/children"), 404, "NotFoundError")


def test_children_of_a_framework_are_its_top_level_items(demo: Api) -> None:
    top = demo.walk(f"/academic-standards/{VT}/children")
    assert sorted(codes(top)) == ["M.3.NF", "M.3.OA", "M.4.NF", "M.5.NF"]


@pytest.mark.parametrize(
    ("suffix", "code", "expected"),
    [
        ("prerequisites", "4.NF.B.3.a", {"3.NF.A.1", "4.NF.A.1"}),
        ("builds-towards", "3.NF.A.1", {"3.NF.A.2", "4.NF.B.3.a"}),
        ("related-standards", "4.NF.A.2", {"4.NF.A.1"}),
        ("related-standards", "4.NF.A.1", {"4.NF.A.2"}),
    ],
)
def test_progressions(
    demo: Api, conforms: Conforms, suffix: str, code: str, expected: set[str]
) -> None:
    body = demo.ok(f"/academic-standards/{uuid_of(code)}/{suffix}")
    assert set(codes(body["data"])) == expected
    assert len(body["data"]) == len(expected)  # relatesTo is stored both ways: each once
    for record in body["data"]:
        assert set(contract_fields(record, STANDARD_FIELDS)) == {f for f, _, _ in STANDARD_FIELDS}
    conforms(f"/academic-standards/{{caseIdentifierUUID}}/{suffix}", body)
    error_of(demo.get(f"/academic-standards/{UNKNOWN}/{suffix}"), 404, "NotFoundError")
    error_of(demo.get(f"/academic-standards/bad/{suffix}"), 400, "ValidationError")


def test_learning_components_of_a_standard(demo: Api, conforms: Conforms) -> None:
    body = demo.ok(f"/academic-standards/{uuid_of('3.NF.A.1')}/learning-components")
    descriptions = {r["description"] for r in body["data"]}
    assert "Partition a shape into equal parts" in descriptions
    assert len(body["data"]) == 3
    for record in body["data"]:
        assert isinstance(record["examples"], list)
    conforms("/academic-standards/{caseIdentifierUUID}/learning-components", body)
    error_of(demo.get(f"/academic-standards/{UNKNOWN}/learning-components"), 404, "NotFoundError")


def test_crosswalks_both_directions_with_typed_figures(demo: Api, conforms: Conforms) -> None:
    state = uuid_of("M.4.NF.2", "vt-math")
    forward = demo.ok(f"/academic-standards/{state}/crosswalks")
    assert codes(forward["data"]) == ["4.NF.A.2"]
    row = forward["data"][0]
    assert row["jurisdiction"] == "Multi-State"
    assert row["jaccard"] == 0.5
    assert isinstance(row["jaccard"], float)
    assert (row["stateLCCount"], row["ccssLCCount"], row["sharedLCCount"]) == (1, 2, 1)
    conforms("/academic-standards/{caseIdentifierUUID}/crosswalks", forward)
    back = demo.ok(f"/academic-standards/{uuid_of('4.NF.A.2')}/crosswalks")
    assert codes(back["data"]) == ["M.4.NF.2"]
    assert back["data"][0]["jurisdiction"] == "Vermont"
    assert back["data"][0]["jaccard"] == 0.5
    conforms("/academic-standards/{caseIdentifierUUID}/crosswalks", back)


def test_crosswalk_filters(demo: Api) -> None:
    ms = uuid_of("4.NF.A.2")
    path = f"/academic-standards/{ms}/crosswalks"
    assert demo.ok(path, jurisdiction="Vermont")["data"]
    assert demo.ok(path, jurisdiction="Texas")["data"] == []
    assert demo.ok(path, minJaccardScore="0.5")["data"]
    assert demo.ok(path, minJaccardScore="0.51")["data"] == []
    for bad in ("1.5", "-0.1", "abc", "nan"):
        error_of(demo.get(path, minJaccardScore=bad), 400, "ValidationError")
    error_of(demo.get(path, jurisdiction="Atlantis"), 400, "ValidationError")
    error_of(demo.get(f"/academic-standards/{UNKNOWN}/crosswalks"), 404, "NotFoundError")
