"""Frameworks, learning components, health, docs, auth and HTTP-level behaviour."""

from __future__ import annotations

from collections.abc import Callable

import httpx

from edukg.model.contract import COMPONENT_FIELDS, FRAMEWORK_FIELDS
from tests.conftest import Api, error_of
from tests.support import contract_fields

Conforms = Callable[..., None]


def test_frameworks_current_by_default(demo: Api, conforms: Conforms) -> None:
    body = demo.ok("/standards-frameworks")
    names = {f["name"] for f in body["data"]}
    assert len(names) == 3
    assert all(f["isCurrent"] is True for f in body["data"])
    assert contract_fields(body["data"][0], FRAMEWORK_FIELDS) == [f for f, _, _ in FRAMEWORK_FIELDS]
    conforms("/standards-frameworks", body)
    every = demo.ok("/standards-frameworks", includeNonCurrent="true")["data"]
    retired = [f for f in every if not f["isCurrent"]]
    assert len(every) == 4
    assert len(retired) == 1
    assert retired[0]["adoptionStatus"] == "Retired"


def test_framework_filters(demo: Api) -> None:
    vt = demo.ok("/standards-frameworks", jurisdiction="Vermont")["data"]
    assert [f["jurisdiction"] for f in vt] == ["Vermont"]
    ela = demo.ok("/standards-frameworks", academicSubject="English Language Arts")["data"]
    assert len(ela) == 1
    retired = demo.ok("/standards-frameworks", adoptionStatus="Retired", includeNonCurrent="true")
    assert len(retired["data"]) == 1
    assert demo.ok("/standards-frameworks", adoptionStatus="Retired")["data"] == []
    for bad in ({"includeNonCurrent": "yes"}, {"adoptionStatus": "Gone"}, {"jurisdiction": "X"}):
        error_of(demo.get("/standards-frameworks", **bad), 400, "ValidationError")


def test_learning_component_by_id(demo: Api, conforms: Conforms) -> None:
    listed = demo.ok("/learning-components", academicSubject="Mathematics", limit=1)["data"][0]
    body = demo.ok(f"/learning-components/{listed['identifier']}")
    assert body == listed
    assert contract_fields(body, COMPONENT_FIELDS) == [f for f, _, _ in COMPONENT_FIELDS]
    assert isinstance(body["examples"], list)
    assert body["examples"]
    conforms("/learning-components/{identifier}", body)
    missing = "00000000-0000-4000-8000-000000000000"
    error_of(demo.get(f"/learning-components/{missing}"), 404, "NotFoundError")
    error_of(demo.get("/learning-components/not-a-uuid"), 400, "ValidationError")


def test_learning_components_by_subject(demo: Api, conforms: Conforms) -> None:
    math = demo.walk("/learning-components", academicSubject="Mathematics", limit=7)
    ela = demo.walk("/learning-components", academicSubject="English Language Arts")
    assert len(math) == 41
    assert len(ela) == 6
    assert all(c["academicSubject"] == "Mathematics" for c in math)
    conforms("/learning-components", demo.ok("/learning-components", academicSubject="Mathematics"))
    body = error_of(demo.get("/learning-components"), 400, "ValidationError")
    assert body["message"].startswith("Missing required parameter: academicSubject")


def test_missing_wrong_and_revoked_keys(demo: Api) -> None:
    path = "/standards-frameworks"
    body = error_of(demo.get(path, key=""), 401, "AuthenticationError")
    assert "x-api-key" in body["message"]
    error_of(demo.get(path, key="ekg_not-a-real-key"), 401, "AuthenticationError")
    error_of(demo.get("/no/such/path", key=""), 401, "AuthenticationError")


def test_unknown_path_and_methods(demo: Api) -> None:
    error_of(demo.get("/no/such/path"), 404, "NotFoundError")
    error_of(demo.http.get("/elsewhere"), 404, "NotFoundError")
    for method in ("POST", "PUT", "DELETE", "PATCH"):
        response = demo.http.request(
            method, "/knowledge-graph/v0/standards-frameworks", headers={"x-api-key": demo.key}
        )
        error_of(response, 405, "MethodNotAllowedError")
        assert response.headers["allow"] == "GET, HEAD"


def test_head_answers_headers_only(demo: Api) -> None:
    response = demo.http.head(
        "/knowledge-graph/v0/standards-frameworks", headers={"x-api-key": demo.key}
    )
    assert response.status_code == 200
    assert response.content == b""


def test_non_utf8_query_string(demo: Api) -> None:
    response = httpx.get(
        f"{demo.server.url}/knowledge-graph/v0/standards-frameworks?jurisdiction=%ff%fe",
        headers={"x-api-key": demo.key},
    )
    error_of(response, 400, "ValidationError")


def test_health_and_openapi_need_no_key(demo: Api) -> None:
    health = demo.http.get("/healthz")
    assert health.status_code == 200
    assert health.json()["dataVersion"] == "demo"
    keyed = demo.http.get("/healthz", headers={"x-api-key": demo.key})
    assert keyed.json()["counts"]["standard"] == 92
    spec = demo.http.get("/openapi.json").json()
    assert spec["openapi"].startswith("3.")
    docs = demo.http.get("/docs")
    assert docs.status_code == 200
    assert "listAcademicStandards" not in docs.text
    assert "/knowledge-graph/v0/academic-standards" in docs.text


def test_own_openapi_declares_every_status_and_operation(demo: Api) -> None:
    spec = demo.http.get("/openapi.json").json()
    paths = spec["paths"]
    for path, item in paths.items():
        (op,) = item.values()  # one method per path: GET, or POST for the one with a body
        if path in ("/healthz", "/readyz"):
            continue
        assert {"200", "400", "401", "405", "500", "503"} <= set(op["responses"]), path
        if "requestBody" in op:
            assert {"413", "415"} <= set(op["responses"]), path
        if "{" in path and not path.endswith("dependency-map"):  # a curriculum id is a filter
            assert "404" in op["responses"], path


def test_every_contract_operation_is_served_at_the_same_path(demo: Api) -> None:
    import yaml

    from tests.support import CONTRACT

    if not CONTRACT.is_file():
        import pytest

        pytest.skip(f"the published contract is not at {CONTRACT}")
    contract = yaml.safe_load(CONTRACT.read_text())
    ours = {
        op["operationId"]: path.removeprefix("/knowledge-graph/v0")
        for path, item in demo.http.get("/openapi.json").json()["paths"].items()
        for op in item.values()
    }
    for path, item in contract["paths"].items():
        op_id = item["get"]["operationId"]
        assert ours.get(op_id) == path, op_id


def test_health_tells_internals_only_to_a_valid_key(demo: Api) -> None:
    public = demo.http.get("/healthz").json()
    assert set(public) == {"status", "dataVersion", "contentId", "loadedAt"}
    wrong = demo.http.get("/healthz", headers={"x-api-key": "ekg_wrong"}).json()
    assert set(wrong) == set(public)
    keyed = demo.http.get("/healthz", headers={"x-api-key": demo.key}).json()
    details = keyed["details"]
    assert {"rateLimiter", "responseCache", "search", "rateLimit"} <= set(details)
    assert details["rateLimit"]["limited"] is False  # the test key was made with --rate 0


def test_the_root_points_to_the_api_docs_and_explorer(demo: Api) -> None:
    index = demo.http.get("/")
    assert index.status_code == 200
    body = index.json()
    assert body["docs"] == "/docs" and body["openapi"] == "/openapi.json"
    assert body["explorer"] == "/explore" and body["api"] == "/knowledge-graph/v0"
    for path in (body["docs"], body["openapi"], body["explorer"]):
        assert demo.http.get(path).status_code == 200, path


def test_a_bearer_key_works_on_every_entrance(demo: Api) -> None:
    bearer = {"authorization": f"Bearer {demo.key}"}
    assert (
        demo.http.get("/knowledge-graph/v0/standards-frameworks", headers=bearer).status_code == 200
    )
    assert demo.http.get("/ims/case/v1p1/CFDocuments", headers=bearer).status_code == 200
    missing = demo.http.get("/knowledge-graph/v0/standards-frameworks")
    assert "Authorization: Bearer" in missing.json()["message"]
    wrong = demo.http.get("/knowledge-graph/v0/standards-frameworks",
                          headers={"authorization": "Bearer ekg_wrong"})  # fmt: skip
    assert wrong.status_code == 401
