"""Aligning a text to standards (POST /alignments) and a standard's counterparts by
meaning (/similar): quality on the sample, the answer's evidence, every refusal through a
real HTTP client, both backends, and the MCP tool through the SDK."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from edukg.app import body
from edukg.ingest.demo import demo_case_uuid, demo_framework_case_uuid
from edukg.model.encoder import available
from edukg.store import open_store
from edukg.store.base import Store
from harness.alignment_eval import Truth, measure_joined, measure_similar, measure_single, prepare
from tests.conftest import Api, error_of
from tests.mcp_client import call, call_error, session
from tests.support import BASE, SAMPLE, TWO_SKILLS


def align(api: Api, body: Any, **headers: str) -> httpx.Response:
    return api.http.post(BASE + "/alignments", json=body,
                         headers={"x-api-key": api.key, **headers})  # fmt: skip


# Quality on the sample, as bench/align_eval.py measures it (floors a little under what
# the methods reach there, so that a regression fails).


@pytest.fixture(scope="module")
def evaluated(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Truth, Store, Store]]:
    if not available():
        pytest.skip("ONNX Runtime is not installed (pip install 'edukg[index]')")
    if not SAMPLE.exists():
        pytest.skip(f"the sample is not at {SAMPLE}")
    truth, texts_db, meaning_db = prepare(SAMPLE, tmp_path_factory.mktemp("align-eval"))
    texts, meaning = open_store(texts_db), open_store(meaning_db)
    yield truth, texts, meaning
    texts.close()
    meaning.close()


def test_one_component_finds_its_standard(evaluated: tuple[Truth, Store, Store]) -> None:
    truth, texts, _ = evaluated
    figures = measure_single(texts, truth)
    # Measured 0.854 / 0.979 on a CPU without VNNI, 0.833 / 0.958 on one with it (the int8
    # model's kernels round differently there); last round's method: 0.849 / 0.975. With
    # the subject gate retrained on more texts of other subjects (2026-11-28) a few terse
    # component descriptions read as something else: 0.820 / 0.941 on the VNNI CPU.
    assert figures["align hit@1"] >= 0.80 and figures["align hit@5"] >= 0.93, figures
    assert figures["align hit@5"] > figures["search hit@5"]


def test_a_paragraph_of_skills_finds_the_standards_of_each(
    evaluated: tuple[Truth, Store, Store],
) -> None:
    truth, texts, _ = evaluated
    graded = measure_joined(texts, truth, with_grade=True)
    # Measured 0.967 / 0.885 and, without the grade, 0.938 / 0.808 (last round's method:
    # 0.927 / 0.795 and 0.903 / 0.744, a standard in several places counted once).
    assert graded["align recall@10"] >= 0.94 and graded["align all found"] >= 0.85, graded
    open_ = measure_joined(texts, truth, with_grade=False)
    assert open_["align recall@10"] >= 0.91 and open_["align all found"] >= 0.77, open_
    assert open_["align recall@10"] > open_["search recall@10"]


def test_similar_finds_published_counterparts_by_meaning(
    evaluated: tuple[Truth, Store, Store],
) -> None:
    truth, _, meaning = evaluated
    figures = measure_similar(meaning, truth)
    assert figures["similar top-1"] >= 0.95 and figures["similar top-5"] >= 0.98, figures


# The answer, through HTTP, on both backends (the demo graph is indexed).


def test_a_text_of_two_skills_gets_the_standards_of_both(demo: Api) -> None:
    response = align(demo, {"text": TWO_SKILLS, "jurisdiction": "Multi-State", "limit": 5})
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["ranking"] == "semantic" and body["passages"] == 2
    health = demo.http.get("/healthz", headers={"x-api-key": demo.key}).json()
    assert health["details"]["alignment"]["ranking"] == "semantic"
    codes = [r["statementCode"] for r in body["data"]]
    assert "3.MD.A.1" in codes[:3] and "2.NBT.A.2" in codes[:3], codes
    scores = [r["score"] for r in body["data"]]
    assert scores == sorted(scores, reverse=True) and all(0 < s <= 1 for s in scores)
    for record in body["data"]:
        assert record["jurisdiction"] == "Multi-State" and record["caseIdentifierUUID"]
        evidence = record["evidence"]
        assert 0 <= evidence["statementSimilarity"] <= 1 and evidence["passages"]
        for passage in evidence["passages"]:
            assert TWO_SKILLS[passage["start"] : passage["end"]] == passage["text"]
    time = next(r for r in body["data"] if r["statementCode"] == "3.MD.A.1")
    shown = [lc["description"] for p in time["evidence"]["passages"]
             for lc in p["learningComponents"]]  # fmt: skip
    assert "Tell time to the nearest minute" in shown
    assert time["evidence"]["passages"][0]["start"] == 0


def test_filters_narrow_the_standards(demo: Api) -> None:
    framework = demo_framework_case_uuid("vt-math")
    body = align(demo, {"text": TWO_SKILLS, "standardsFrameworkCaseIdentifierUUID": framework,
                        "gradeLevel": ["3"]}).json()  # fmt: skip
    assert body["data"] and {r["jurisdiction"] for r in body["data"]} == {"Vermont"}
    assert all("3" in r["gradeLevel"] for r in body["data"])
    none = align(demo, {"text": "The French Revolution began in 1789.", "jurisdiction": "Multi-State",
                        "academicSubject": "Mathematics"}).json()  # fmt: skip
    assert none["data"] == []


def test_one_grade_is_taken_as_a_list_of_one(demo: Api) -> None:
    one = align(demo, {"text": TWO_SKILLS, "gradeLevel": "3", "jurisdiction": "Multi-State"})
    listed = align(demo, {"text": TWO_SKILLS, "gradeLevel": ["3"], "jurisdiction": "Multi-State"})
    assert one.status_code == listed.status_code == 200, one.text
    assert one.json()["data"] and one.json() == listed.json()
    assert all("3" in r["gradeLevel"] for r in one.json()["data"])


def test_refusals(demo: Api) -> None:
    def refused(body: Any, status: int, error: str, field: str | None = None) -> None:
        found = error_of(align(demo, body), status, error)
        if field is not None:
            assert found["details"]["parameter"] == field, found

    refused({}, 400, "ValidationError", "text")
    refused({"text": "   "}, 400, "ValidationError", "text")
    refused({"text": "x" * 20_001}, 400, "ValidationError", "text")
    refused({"text": 5}, 400, "ValidationError", "text")
    refused({"text": "fractions", "limit": "3"}, 400, "ValidationError", "limit")
    refused({"text": "fractions", "limit": 51}, 400, "ValidationError", "limit")
    refused({"text": "fractions", "gradeLevel": "13"}, 400, "ValidationError", "gradeLevel")
    refused({"text": "fractions", "gradeLevel": ["3", 4]}, 400, "ValidationError", "gradeLevel")
    refused({"text": "fractions", "gradeLevel": 3}, 400, "ValidationError", "gradeLevel")
    refused({"text": "fractions", "jurisdiction": "Atlantis"}, 400, "ValidationError")
    refused({"text": "fractions", "colour": "red"}, 400, "ValidationError", "colour")
    refused(["fractions"], 400, "ValidationError")
    refused({"text": "fractions", "jurisdiction": "Vermont",
             "standardsFrameworkCaseIdentifierUUID": demo_framework_case_uuid("vt-math")},
            400, "ValidationError")  # fmt: skip
    refused({"text": "fractions",
             "standardsFrameworkCaseIdentifierUUID": "00000000-0000-4000-8000-000000000000"},
            404, "NotFoundError")  # fmt: skip
    headers = {"x-api-key": demo.key, "content-type": "application/json"}
    broken = demo.http.post(BASE + "/alignments", content=b'{"text": ', headers=headers)
    error_of(broken, 400, "ValidationError")
    plain = demo.http.post(BASE + "/alignments", content=b"fractions",
                           headers={"x-api-key": demo.key, "content-type": "text/plain"})  # fmt: skip
    error_of(plain, 415, "UnsupportedMediaTypeError")
    got = demo.http.get(BASE + "/alignments", headers={"x-api-key": demo.key})
    error_of(got, 405, "MethodNotAllowedError")
    assert got.headers["allow"] == "POST"
    error_of(
        align(demo, {"text": "fractions"}, **{"x-api-key": "nope"}), 401, "AuthenticationError"
    )


def test_a_body_over_the_limit_is_a_413_the_client_reads(demo: Api) -> None:
    big = b'{"text": "' + b"a" * 300_000 + b'"}'
    headers = {"x-api-key": demo.key, "content-type": "application/json"}
    declared = demo.http.post(BASE + "/alignments", content=big, headers=headers)
    error_of(declared, 413, "PayloadTooLargeError")
    assert declared.headers["connection"] == "close"

    def chunks() -> Iterator[bytes]:
        for start in range(0, len(big), 16_384):
            yield big[start : start + 16_384]

    streamed = demo.http.post(BASE + "/alignments", content=chunks(), headers=headers)
    error_of(streamed, 413, "PayloadTooLargeError")
    mcp = demo.http.post("/mcp", content=big, headers={**headers, "accept": "application/json"})
    error_of(mcp, 413, "PayloadTooLargeError")
    # Within the limit, a body larger than a head is not mistaken for one.
    within = align(demo, {"text": "fractions " * 1_900, "jurisdiction": "Multi-State"})
    assert within.status_code == 200, within.text


def test_a_body_that_stops_arriving_does_not_hold_the_server(
    demo: Api, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(body, "_PART_SECONDS", 1.0)  # the server runs in this process
    host, port = demo.server.url.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=15) as raw:
        raw.sendall(b"POST " + BASE.encode() + b"/alignments HTTP/1.1\r\nhost: x\r\n"
                    b"x-api-key: " + demo.key.encode() + b"\r\ncontent-type: application/json"
                    b"\r\ncontent-length: 100\r\n\r\n{\"text\": ")  # fmt: skip
        answer = b""
        while chunk := raw.recv(4096):  # the server closes the connection after its answer
            answer += chunk
    assert b" 408 " in answer.split(b"\r\n")[0] and b"stopped arriving" in answer


def test_similar(demo: Api) -> None:
    source = demo_case_uuid("vt-math", "M.3.NF.2")
    path = f"/academic-standards/{source}/similar"
    body = demo.ok(path, jurisdiction="Multi-State")
    assert body["ranking"] == "semantic" and body["data"]
    top = body["data"][0]
    assert top["jurisdiction"] == "Multi-State" and 0 < top["score"] <= 1
    assert top["statementCode"].startswith("3.NF"), top["statementCode"]
    shared = [r["sharedLearningComponents"] for r in body["data"] if r["sharedLearningComponents"]]
    assert shared and all(0 < s["jaccard"] <= 1 and s["learningComponents"] for s in shared)
    framework = demo.ok(
        path, standardsFrameworkCaseIdentifierUUID=demo_framework_case_uuid("ms-math")
    )
    assert [r["identifier"] for r in framework["data"]] == [r["identifier"] for r in body["data"]]
    wide = demo.ok(path, jurisdiction="Multi-State", gradeLevel="any", limit=20)
    assert len(wide["data"]) >= len(body["data"])
    assert not demo.ok(path, jurisdiction="Multi-State", minScore=0.999)["data"]
    error_of(demo.get(path), 400, "ValidationError")
    error_of(demo.get(path, jurisdiction="Multi-State",
                      standardsFrameworkCaseIdentifierUUID=demo_framework_case_uuid("ms-math")),
             400, "ValidationError")  # fmt: skip
    error_of(demo.get(path, jurisdiction="Multi-State", gradeLevel="3"), 400, "ValidationError")
    missing = "/academic-standards/00000000-0000-4000-8000-000000000000/similar"
    error_of(demo.get(missing, jurisdiction="Multi-State"), 404, "NotFoundError")


def test_without_an_index_both_rank_by_words_and_say_so(sample: Api) -> None:
    body = align(sample, {"text": "Add and subtract fractions with unlike denominators.",
                          "jurisdiction": "California"}).json()  # fmt: skip
    assert body["ranking"] == "lexical" and body["data"]
    assert body["data"][0]["statementCode"].startswith("5.NF"), body["data"][0]["statementCode"]
    source = body["data"][0]["caseIdentifierUUID"]
    similar = sample.ok(f"/academic-standards/{source}/similar", jurisdiction="Multi-State")
    assert similar["ranking"] == "lexical" and similar["data"]
    details = sample.http.get("/healthz", headers={"x-api-key": sample.key}).json()["details"]
    assert details["search"]["semantic"] is False
    assert details["alignment"]["ranking"] == "lexical"


@pytest.mark.anyio
async def test_the_mcp_tool(demo: Api) -> None:
    async with session(demo) as s:
        found = await call(s, "align_text_to_standards", text=TWO_SKILLS,
                           jurisdiction="Multi-State", limit=4)  # fmt: skip
        codes = [x["code"] for x in found["standards"]]
        assert "3.MD.A.1" in codes and "2.NBT.A.2" in codes and found["ranking"] == "semantic"
        first = found["standards"][0]
        assert first["passages"] and first["learningComponents"] and 0 < first["score"] <= 1
        by_name = await call(s, "align_text_to_standards", text=TWO_SKILLS,
                             framework="Vermont:Mathematics", gradeLevel=["3"])  # fmt: skip
        assert by_name["standards"] and all(x["jurisdiction"] == "Vermont"
                                            for x in by_name["standards"])  # fmt: skip
        assert "20000" in (await call_error(s, "align_text_to_standards", text="a" * 20_001))
        assert "limit" in (await call_error(s, "align_text_to_standards", text="x", limit=99))


@pytest.mark.anyio
async def test_mcp_refuses_what_rest_refuses(demo: Api) -> None:
    """Each bad argument the red team sent is a tool error in REST's words, and what REST
    takes the tools take (the arguments are read by the REST operations' rules)."""
    ms = demo_case_uuid("vt-math", "M.3.NF.2")
    async with session(demo) as s:
        for grades in (["zz"], ["13"], [""], ["k"]):
            error = await call_error(s, "align_text_to_standards", text=TWO_SKILLS,
                                     gradeLevel=grades)  # fmt: skip
            assert "Invalid value for gradeLevel" in error, (grades, error)
        for place in ("Atlantis", "Multi-Stat", "california"):
            error = await call_error(s, "align_text_to_standards", text=TWO_SKILLS,
                                     jurisdiction=place)  # fmt: skip
            assert f"Invalid value for jurisdiction: '{place}'" in error, error
            error = await call_error(s, "find_counterpart_standards", caseIdentifierUUID=ms,
                                     jurisdiction=place)  # fmt: skip
            assert f"Invalid value for jurisdiction: '{place}'" in error, error
            error = await call_error(s, "find_standard_statement", code="3.MD",
                                     jurisdiction=place)  # fmt: skip
            assert f"Invalid value for jurisdiction: '{place}'" in error, error
        both = await call_error(s, "align_text_to_standards", text=TWO_SKILLS,
                                jurisdiction="Vermont", framework="Vermont:Mathematics")  # fmt: skip
        assert "not both" in both
        assert "limit" in await call_error(s, "align_text_to_standards", text=TWO_SKILLS,
                                           limit=True)  # fmt: skip
        error = await call_error(s, "report_curriculum_coverage", curriculumId="demo",
                                 framework="Vermont:Mathematics", gradeLevel=["zz"])  # fmt: skip
        assert "Invalid value for gradeLevel" in error
        one = await call(s, "align_text_to_standards", text=TWO_SKILLS, gradeLevel="3",
                         jurisdiction="Multi-State")  # fmt: skip
        assert one["standards"]


def test_nasty_values_in_every_body_field(demo: Api) -> None:
    from tests.support import NASTY

    fields = ["text", "standardsFrameworkCaseIdentifierUUID", "jurisdiction", "academicSubject",
              "gradeLevel", "normalizedStatementType", "limit"]  # fmt: skip
    for field in fields:
        values: list[Any] = [*NASTY, 7, -1, 1.5, True, None, [], {}]
        for value in values:
            body: dict[str, Any] = {"text": "fractions", field: value}
            response = align(demo, body)
            assert response.status_code in (200, 400, 404), (field, value, response.text)
            if response.status_code != 200:
                error_of(response, response.status_code, response.json()["error"])
