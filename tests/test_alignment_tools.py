"""The alignment operations through their other entrances: the CLI in a subprocess (CSV
and NDJSON equal to the API's rows) and the MCP tools through the SDK, on the demo graph."""

from __future__ import annotations

import csv
import io
import subprocess
from typing import Any

import orjson
import pytest

from edukg.ingest.demo import demo_case_uuid, demo_framework_case_uuid
from edukg.model.vocabulary import code_order
from harness.processes import edukg
from tests.conftest import Api
from tests.mcp_client import call, call_error, session

VT, MS = demo_framework_case_uuid("vt-math"), demo_framework_case_uuid("ms-math")


def _edukg(db: str, *args: str) -> subprocess.CompletedProcess[str]:
    return edukg(*args, "--db", db, timeout=120)


def test_cli_crosswalk_rows_equal_the_api(demo: Api, demo_db: str) -> None:
    rows = demo.walk("/framework-crosswalks", sourceFrameworkCaseIdentifierUUID=VT,
                     targetFrameworkCaseIdentifierUUID=MS, limit=3)  # fmt: skip
    assert rows
    done = _edukg(demo_db, "crosswalk", VT, "Multi-State:Mathematics", "--ndjson")
    assert done.returncode == 0, done.stderr
    listed = [orjson.loads(line) for line in done.stdout.splitlines()]
    assert listed == _in_code_order(rows, "source", "target")  # the API's rows, by code
    done = _edukg(demo_db, "crosswalk", "Vermont:Mathematics", MS, "--csv")
    assert done.returncode == 0, done.stderr
    parsed = list(csv.DictReader(io.StringIO(done.stdout)))
    assert len(parsed) == len(rows)
    assert parsed[0]["source_caseIdentifierUUID"] == listed[0]["source"]["caseIdentifierUUID"]
    assert float(parsed[0]["jaccard"]) == pytest.approx(listed[0]["jaccard"])
    table = _edukg(demo_db, "crosswalk", VT, MS, "--grade", "3")
    assert table.returncode == 0 and "with counterpart" in table.stdout


def test_cli_coverage_rows_equal_the_api(demo: Api, demo_db: str) -> None:
    rows = demo.walk("/curriculums/demo/coverage", standardsFrameworkCaseIdentifierUUID=VT)
    assert {r["status"] for r in rows} >= {"crosswalk"}
    done = _edukg(demo_db, "coverage", "demo", "Vermont:Mathematics", "--ndjson")
    assert done.returncode == 0, done.stderr
    listed = [orjson.loads(line) for line in done.stdout.splitlines()]
    assert listed == _in_code_order(rows, "standard")  # the API's rows, by code
    done = _edukg(demo_db, "coverage", "demo", VT, "--csv")
    parsed = list(csv.DictReader(io.StringIO(done.stdout)))
    assert [r["status"] for r in parsed] == [r["status"] for r in listed]
    table = _edukg(demo_db, "coverage", "demo", VT)
    assert table.returncode == 0 and "via crosswalk" in table.stdout


def _in_code_order(rows: list[dict[str, Any]], *sides: str) -> list[dict[str, Any]]:
    return sorted(rows, key=lambda r: tuple(code_order(r[s]["statementCode"]) for s in sides))


def test_cli_bad_input(demo_db: str) -> None:
    unknown = _edukg(demo_db, "coverage", "nope", VT)
    assert unknown.returncode == 2 and "'demo'" in unknown.stderr
    same = _edukg(demo_db, "crosswalk", VT, VT)
    assert same.returncode == 2 and "same" in same.stderr
    vague = _edukg(demo_db, "crosswalk", "Vermont:Mathematics:", MS)
    assert vague.returncode == 2 and "Traceback" not in vague.stderr
    missing = _edukg(demo_db, "crosswalk", "00000000-0000-4000-8000-000000000000", MS)
    assert missing.returncode == 1 and "not found" in missing.stderr
    ambiguous = _edukg(demo_db, "crosswalk", "Atlantis:Mathematics", MS)
    assert ambiguous.returncode == 2 and "No framework" in ambiguous.stderr
    bad = _edukg(demo_db, "crosswalk", VT, MS, "--min-jaccard", "3")
    assert bad.returncode == 2


@pytest.mark.anyio
async def test_mcp_counterparts_and_coverage(demo: Api) -> None:
    standard = demo_case_uuid("vt-math", "M.3.NF.2")
    rest = demo.ok(f"/academic-standards/{standard}/crosswalks", includeDerived="true",
                   jurisdiction="Multi-State")  # fmt: skip
    summary = demo.ok("/curriculums/demo/coverage/summary", standardsFrameworkCaseIdentifierUUID=VT)
    async with session(demo) as s:
        found = await call(s, "find_counterpart_standards", caseIdentifierUUID=standard,
                           jurisdiction="Multi-State")  # fmt: skip
        assert {c["caseIdentifierUUID"] for c in found["counterparts"]} == {
            r["caseIdentifierUUID"] for r in rest["data"]}  # fmt: skip
        assert found["counterparts"][0]["code"] == "3.NF.A.2"
        none = await call(s, "find_counterpart_standards", caseIdentifierUUID=standard,
                          jurisdiction="Texas")  # fmt: skip
        assert none["counterparts"] == [] and "No standard of Texas" in none["note"]
        report = await call(s, "report_curriculum_coverage", curriculumId="demo",
                            framework="Vermont:Mathematics")  # fmt: skip
        assert report["total"] == summary["total"]
        assert report["coveredThroughCrosswalks"]
        error = await call_error(s, "report_curriculum_coverage", curriculumId="nope",
                                 framework=VT)  # fmt: skip
        assert "'demo'" in error
        error = await call_error(s, "find_counterpart_standards", caseIdentifierUUID=standard,
                                 jurisdiction="Texas", minJaccard=2)  # fmt: skip
        assert "minJaccard" in error
        error = await call_error(s, "find_counterpart_standards", caseIdentifierUUID=standard)
        assert "jurisdiction" in error and "required" in error
