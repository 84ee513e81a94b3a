"""The MCP tool server, through the official SDK's client over real streamable HTTP and stdio."""

from __future__ import annotations

import subprocess
from typing import Any

import httpx
import orjson
import pytest
from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp_types.version import LATEST_PROTOCOL_VERSION

from edukg.adapters.config import Settings
from edukg.app.core import EdukgApp
from edukg.ingest.demo import demo_case_uuid, demo_node_id
from harness.processes import EDUKG
from tests.conftest import Api, error_of
from tests.mcp_client import call, call_error, session
from tests.support import BASE, ServerThread

pytestmark = pytest.mark.anyio
TOOLS = {
    "find_standard_statement",
    "find_standards_progression_from_standard",
    "find_learning_components_from_standard",
    "find_misconceptions_for_standard",
    "list_standards_for_mathematical_practice",
    "find_curriculum_lessons",
    "find_materials_for_lesson",
    "find_counterpart_standards",
    "check_text_against_standard",
    "report_curriculum_coverage",
    "align_text_to_standards",
}


async def test_lists_the_tools_with_schemas(demo: Api) -> None:
    async with session(demo) as s:
        tools = {t.name: t for t in (await s.list_tools()).tools}
    assert set(tools) == TOOLS
    schema = tools["find_standard_statement"].input_schema
    assert {"code", "keywords", "academicSubject", "jurisdiction"} <= set(schema["properties"])
    progression = tools["find_standards_progression_from_standard"].input_schema
    assert set(progression["required"]) == {"caseIdentifierUUID", "direction"}
    assert all(t.description for t in tools.values())


async def test_find_standard_statement_by_code_prefix(demo: Api) -> None:
    async with session(demo) as s:
        body = await call(s, "find_standard_statement", code="3.nf.a")
        one = await call(s, "find_standard_statement", code="3.NF.A.1")
    codes = [x["code"] for x in body["standards"]]
    assert codes[0] == "3.NF.A" and "3.NF.A.1" in codes and "3.NF.A.3.d" in codes
    assert all(c == "3.NF.A" or c.startswith("3.NF.A.") for c in codes)
    cluster = body["standards"][0]
    assert [x["code"] for x in cluster["subStandards"]] == ["3.NF.A.1", "3.NF.A.2", "3.NF.A.3"]
    assert [x["code"] for x in one["standards"]] == ["3.NF.A.1"]
    assert set(one["standards"][0]) >= {"code", "caseIdentifierUUID", "statement", "gradeLevel",
                                        "jurisdiction", "academicSubject", "subStandards"}  # fmt: skip


async def test_find_standard_statement_by_keywords_and_filters(demo: Api) -> None:
    async with session(demo) as s:
        any_word = await call(s, "find_standard_statement", keywords=["number line", "equivalent"])
        vt = await call(
            s, "find_standard_statement", keywords=["fractions"], jurisdiction="Vermont"
        )
        none = await call(s, "find_standard_statement", keywords=["photosynthesis"])
        both = await call_error(s, "find_standard_statement", code="3.NF", keywords=["x"])
        neither = await call_error(s, "find_standard_statement")
    statements = [x["statement"].lower() for x in any_word["standards"]]
    assert statements and all("number line" in t or "equivalent" in t for t in statements)
    assert vt["standards"] and all(x["jurisdiction"] == "Vermont" for x in vt["standards"])
    assert none["standards"] == [] and "note" in none
    assert "exactly one" in both and "exactly one" in neither


async def test_progression_components_misconceptions_practices(demo: Api) -> None:
    b3a = demo_case_uuid("ms-math", "4.NF.B.3.a")
    nf1 = demo_case_uuid("ms-math", "3.NF.A.1")
    async with session(demo) as s:
        back = await call(s, "find_standards_progression_from_standard", caseIdentifierUUID=b3a,
                          direction="backward")  # fmt: skip
        forward = await call(s, "find_standards_progression_from_standard",
                             caseIdentifierUUID=nf1, direction="forward")  # fmt: skip
        lcs = await call(s, "find_learning_components_from_standard", caseIdentifierUUID=nf1)
        miscon = await call(s, "find_misconceptions_for_standard", caseIdentifierUUID=nf1,
                            subject="Mathematics")  # fmt: skip
        practices = await call(s, "list_standards_for_mathematical_practice")
        bad_dir = await call_error(s, "find_standards_progression_from_standard",
                                   caseIdentifierUUID=nf1, direction="sideways")  # fmt: skip
        bad_uuid = await call_error(s, "find_learning_components_from_standard",
                                    caseIdentifierUUID="not-a-uuid-at-all-but-36-characters!")  # fmt: skip
        unknown = await call_error(s, "find_learning_components_from_standard",
                                   caseIdentifierUUID="00000000-0000-4000-8000-000000000000")  # fmt: skip
    assert {x["code"] for x in back["standards"]} == {"3.NF.A.1", "4.NF.A.1"}
    assert {x["code"] for x in forward["standards"]} == {"3.NF.A.2", "4.NF.B.3.a"}
    assert len(lcs["learningComponents"]) == 3
    assert miscon["misconceptions"] == [] and miscon["note"]
    assert [x["code"] for x in practices["practices"]] == [f"MP{n}" for n in range(1, 9)]
    assert "sideways" in bad_dir or "backward" in bad_dir
    assert "UUID" in bad_uuid and "not found" in unknown


async def test_curriculum_tools(demo: Api) -> None:
    lesson3 = demo_node_id("lesson3")
    async with session(demo) as s:
        by_std = await call(s, "find_curriculum_lessons",
                            caseIdentifierUUID=demo_case_uuid("ms-math", "4.NF.A.1"))  # fmt: skip
        by_ordinal = await call(
            s, "find_curriculum_lessons", ordinalName="Grade 4, Unit 1, Lesson 3"
        )
        by_name = await call(s, "find_curriculum_lessons", lessonName="mixed numbers")
        by_author = await call(s, "find_curriculum_lessons", lessonName="fraction",
                               author="Someone Else")  # fmt: skip
        materials = await call(s, "find_materials_for_lesson", lessonIdentifier=lesson3,
                               materialSource=["lesson", "activity", "assessment"])  # fmt: skip
        only_lesson = await call(s, "find_materials_for_lesson", lessonIdentifier=lesson3,
                                 materialSource=["lesson"])  # fmt: skip
        bad_source = await call_error(s, "find_materials_for_lesson", lessonIdentifier=lesson3,
                                      materialSource=["video"])  # fmt: skip
        two = await call_error(
            s, "find_curriculum_lessons", lessonName="x", ordinalName="Grade 4, Lesson 1"
        )
    assert {x["lessonName"] for x in by_std["lessons"]} == {
        "Sharing Sandwiches Fairly", "Same Size, Different Names"}  # fmt: skip
    assert [x["lessonIdentifier"] for x in by_ordinal["lessons"]] == [lesson3]
    assert by_ordinal["lessons"][0]["fullOrdinalName"] == "Grade 4, Unit 1, Lesson 3"
    assert [x["lessonName"] for x in by_name["lessons"]] == ["Mixed Numbers"]
    assert by_author["lessons"] == []
    assert materials["lesson"]["identifier"] == lesson3
    assert [a["position"] for a in materials["activities"]] == [0, 1, 2, 3]
    assert len(materials["assessments"]) == 1 and "not part of" in materials["note"]
    assert "activities" not in only_lesson
    assert "video" in bad_source or "lesson" in bad_source
    assert "exactly one" in two


async def test_sample_real_data(sample: Api) -> None:
    async with session(sample) as s:
        cluster = await call(
            s, "find_standard_statement", code="3.NF.A", jurisdiction="Multi-State"
        )
        ms = await call(s, "find_standard_statement", code="4.NF.B.3.a", jurisdiction="Multi-State")
        uuid = ms["standards"][0]["caseIdentifierUUID"]
        back = await call(s, "find_standards_progression_from_standard", caseIdentifierUUID=uuid,
                          direction="backward")  # fmt: skip
        lcs = await call(s, "find_learning_components_from_standard",
                         caseIdentifierUUID="5ebef26f-d7cc-11e8-824f-0242ac160002")  # fmt: skip
        practices = await call(s, "list_standards_for_mathematical_practice")
        lessons = await call(s, "find_curriculum_lessons", ordinalName="Grade 6, Lesson 12")
    codes = [x["code"] for x in cluster["standards"]]
    assert codes[:4] == ["3.NF.A", "3.NF.A.1", "3.NF.A.2", "3.NF.A.2.a"] or codes[0] == "3.NF.A"
    assert {"3.NF.A.1", "3.NF.A.2", "3.NF.A.3"} <= set(codes)
    assert {"3.NF.A.1", "4.NF.A.1"} <= {x["code"] for x in back["standards"]}
    assert lcs["learningComponents"]
    assert {x["jurisdiction"] for x in practices["practices"]} == {"California", "Multi-State"}
    assert len(practices["practices"]) == 16
    assert lessons["lessons"] and all(
        x["fullOrdinalName"] == "Grade 6, Lesson 12" for x in lessons["lessons"]
    )


async def test_bearer_key_works_too(demo: Api) -> None:
    async with session(demo, headers={"Authorization": f"Bearer {demo.key}"}) as s:
        assert {t.name for t in (await s.list_tools()).tools} == TOOLS


def test_mcp_refuses_missing_and_wrong_keys(demo: Api) -> None:
    payload = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}
    headers = {"accept": "application/json, text/event-stream"}
    url = f"{demo.server.url}/mcp"
    error_of(httpx.post(url, json=payload, headers=headers), 401, "AuthenticationError")
    error_of(httpx.post(url, json=payload, headers={**headers, "x-api-key": "ekg_nope"}), 401,
             "AuthenticationError")  # fmt: skip
    error_of(httpx.post(url, json=payload, headers={**headers, "authorization": "Bearer nope"}),
             401, "AuthenticationError")  # fmt: skip


async def test_a_wrong_key_is_named_to_the_sdks_client(demo: Api) -> None:
    """The MCP SDK shows a refusal's reason (it showed "Server returned an error
    response" for an Error-shaped body: it reads a non-2xx body only as JSON-RPC)."""
    from mcp.shared.exceptions import MCPError

    with pytest.raises(BaseExceptionGroup) as refused:  # the SDK's task groups wrap it
        async with session(demo, headers={"x-api-key": "ekg_wrong"}) as s:
            await s.list_tools()
    found: list[BaseException] = [refused.value]
    errors = []
    while found:
        exc = found.pop()
        errors.append(exc)
        found += list(getattr(exc, "exceptions", ()))
    shown = [str(e) for e in errors if isinstance(e, MCPError)]
    assert shown == ["Invalid or revoked API key."], [repr(e) for e in errors]


async def test_stdio(demo_db: str) -> None:
    params = StdioServerParameters(
        command=EDUKG[0], args=[*EDUKG[1:], "mcp", "--stdio", "--db", demo_db]
    )
    async with stdio_client(params) as (read, write), ClientSession(read, write) as s:
        await s.initialize()
        assert {t.name for t in (await s.list_tools()).tools} == TOOLS
        body = await call(s, "find_standard_statement", code="MP1")
    assert [x["code"] for x in body["standards"]] == ["MP1"]


def test_stdio_answers_what_was_asked_before_stdin_closed(demo_db: str) -> None:
    asked = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": LATEST_PROTOCOL_VERSION, "capabilities": {},
            "clientInfo": {"name": "pipe", "version": "1"}}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
            "name": "find_standard_statement", "arguments": {"keywords": ["fractions"]}}},
    ]  # fmt: skip
    # All of it written at once and stdin closed: the call is still being answered then.
    done = subprocess.run(
        [*EDUKG, "mcp", "--stdio", "--db", demo_db],
        input="".join(orjson.dumps(m).decode() + "\n" for m in asked),
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    answers = {m.get("id"): m for m in map(orjson.loads, done.stdout.splitlines())}
    assert done.returncode == 0, done.stderr[-2000:]
    assert 2 in answers, done.stdout[-2000:] + done.stderr[-2000:]
    assert "result" in answers[2] and not answers[2]["result"].get("isError")


def test_get_and_delete_answer_405_at_once(demo: Api) -> None:
    url = f"{demo.server.url}/mcp"
    headers = {"x-api-key": demo.key, "accept": "text/event-stream"}
    for method in ("GET", "DELETE"):
        response = httpx.request(method, url, headers=headers, timeout=5)
        error_of(response, 405, "MethodNotAllowedError")
        assert response.headers["allow"] == "POST"


async def test_argument_errors_are_plain_words(demo: Api) -> None:
    async with session(demo) as s:
        not_list = await call_error(s, "find_standard_statement", keywords="fractions")
        too_long = await call_error(s, "find_standard_statement", keywords=["x" * 50_000])
        missing = await call_error(s, "find_standards_progression_from_standard", direction="up")
    assert "`keywords` must be a list" in not_list
    assert "`keywords` takes at most 100 characters" in too_long
    assert "`caseIdentifierUUID` is required" in missing
    assert "`direction` must be one of 'backward' or 'forward'" in missing
    for text in (not_list, too_long, missing):
        assert "pydantic" not in text and "type=" not in text


async def test_code_lookup_finds_the_alternate_code(sample: Api) -> None:
    async with session(sample) as s:
        body = await call(s, "find_standard_statement", code="1.NBT.1", jurisdiction="Multi-State")
    assert [x["code"] for x in body["standards"]] == ["1.NBT.A.1"]


BLANK = ["", "   ", "\u200b\u200c\u200d", "\ufeff", "\ufeff \u2060\n"]  # nothing to read
REFUSED: list[dict[str, Any]] = [
    *({"text": text} for text in BLANK),
    {"text": "x" * 20_001}, {"text": 7}, {}, {"text": "fractions", "limit": 51},
    {"text": "fractions", "limit": "3"}, {"text": "fractions", "gradeLevel": "13"},
    {"text": "fractions", "jurisdiction": "Atlantis"},
]  # fmt: skip
STANDARD = {"statementCode": "3.NF.A.1"}
CHECK_REFUSED: list[dict[str, Any]] = [
    *({"text": text, **STANDARD} for text in BLANK),
    {"text": "x" * 20_001, **STANDARD}, {"text": "fractions"}, {"text": ["x"], **STANDARD},
    {"text": "fractions", **STANDARD, "caseIdentifierUUID": demo_case_uuid("ms-math", "3.NF.A.1")},
    {"text": "fractions", "statementCode": "9.ZZ.Z.9"},
    {"text": "fractions", "caseIdentifierUUID": "not-a-uuid"},
    {"text": "fractions", "statementCode": "x" * 51},
]  # fmt: skip


async def test_the_tools_refuse_in_the_rest_operations_words(demo: Api) -> None:
    """What POST /alignments and /alignments/check refuse, their tools refuse in the same
    words (their own name before them, once)."""
    cases = [("align_text_to_standards", "/alignments", body) for body in REFUSED] + [
        ("check_text_against_standard", "/alignments/check", body) for body in CHECK_REFUSED
    ]
    async with session(demo) as s:
        for tool, path, body in cases:
            rest = demo.http.post(BASE + path, json=body, headers={"x-api-key": demo.key})
            assert rest.status_code in (400, 404), (body, rest.text)
            said = await call_error(s, tool, **body)
            assert said == f"{tool}: {rest.json()['message']}", body


async def test_a_tool_error_names_the_tool_once(demo: Api) -> None:
    async with session(demo) as s:
        both = await call_error(s, "align_text_to_standards", text="fractions",
                                jurisdiction="Texas", framework="Texas:Mathematics")  # fmt: skip
        wrong = await call_error(s, "find_counterpart_standards", jurisdiction="Atlantis",
                                 caseIdentifierUUID=demo_case_uuid("ms-math", "3.NF.A.1"))  # fmt: skip
        missing = await call_error(s, "find_learning_components_from_standard",
                                   caseIdentifierUUID="00000000-0000-4000-8000-000000000000")  # fmt: skip
    for said, tool in ((both, "align_text_to_standards"), (wrong, "find_counterpart_standards"),
                       (missing, "find_learning_components_from_standard")):  # fmt: skip
        assert said.startswith(f"{tool}: ") and said.count(tool) == 1, said
        assert "Error executing tool" not in said


async def test_code_lookup_reads_codes_as_teachers_write_them(sample: Api) -> None:
    async with session(sample) as s:
        short = await call(s, "find_standard_statement", code="6.RP.3c", jurisdiction="California")
        high = await call(s, "find_standard_statement", code="A-REI.11")
        cluster = await call(s, "find_standard_statement", code="6 rp 3")
    assert [x["code"] for x in short["standards"]] == ["6.RP.A.3.c"]
    assert {x["code"] for x in high["standards"]} == {"HSA-REI.D.11"}
    assert {x["jurisdiction"] for x in high["standards"]} == {"California", "Multi-State"}
    # A code is a prefix: 6.RP.A.3 and its parts, in both jurisdictions.
    found = {(x["code"], x["jurisdiction"]) for x in cluster["standards"]}
    assert {("6.RP.A.3", "California"), ("6.RP.A.3.c", "Multi-State")} <= found
    assert {code for code, _ in found} == {"6.RP.A.3", *(f"6.RP.A.3.{x}" for x in "abcd")}


async def test_unknown_arguments_are_named(demo: Api) -> None:
    async with session(demo) as s:
        message = await call_error(s, "find_standard_statement", code="3.NF", colour="red")
        assert "`colour` is not an argument" in message and "`code`" in message
        # The known ones still work as before.
        assert (await call(s, "find_standard_statement", code="3.NF"))["standards"]


def test_a_browser_origin_must_be_allowed(demo: Api, demo_db: str) -> None:
    hello = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
    base = {"x-api-key": demo.key, "accept": "application/json, text/event-stream"}
    url = f"{demo.server.url}/mcp"
    for origin in ("http://evil.example.com", "https://evil.example.com:443", "null",
                   "http://localhost.evil.example.com"):  # fmt: skip
        refused = httpx.post(url, json=hello, headers={**base, "origin": origin,
                                                      "host": "evil.example.com"})  # fmt: skip
        error_of(refused, 403, "ForbiddenError")
    for origin in ("http://localhost:5173", "http://127.0.0.1", "http://[::1]:8080"):
        assert httpx.post(url, json=hello, headers={**base, "origin": origin}).status_code == 200
    assert httpx.post(url, json=hello, headers=base).status_code == 200  # no Origin: a program
    settings = Settings(db=demo_db, refresh=0, allowed_origins=("https://app.example.org",),
                        public_url="https://kg.example.org")  # fmt: skip
    server = ServerThread(EdukgApp(settings)).start()
    try:
        other = f"{server.url}/mcp"
        for origin, status in (("https://app.example.org", 200), ("https://kg.example.org", 200),
                               ("http://app.example.org", 403)):  # fmt: skip
            answered = httpx.post(other, json=hello, headers={**base, "origin": origin})
            assert answered.status_code == status, (origin, answered.text)
    finally:
        server.stop()
