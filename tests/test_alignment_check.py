"""Checking one text against one standard (POST /alignments/check), component by
component: the published evaluator's three fixtures on the real sample, every refusal
through a real HTTP client, the MCP tool through the SDK, the CLI through a subprocess,
and the check's quality on the dev problems (floors a little under bench/align_eval.py)."""

from __future__ import annotations

from collections.abc import Iterator
from functools import partial
from pathlib import Path
from typing import Any

import httpx
import orjson
import pytest

from edukg.services.alignment import CheckQuery
from edukg.services.alignment import check as check_text
from edukg.store import open_store
from harness import mathfish
from harness.processes import edukg
from tests.conftest import Api, _serve, error_of
from tests.mcp_client import call, call_error, session
from tests.support import BASE, ROOT, SHARED

PLAYGROUND = (
    "A playground is shaped like an L. One part is a rectangle that is 8 feet long and 3 feet"
    " wide. Attached to it is another rectangle that is 4 feet long and 2 feet wide, with no"
    " overlap. What is the total area of the playground in square feet?"
)
D_UUID = "6ba25656-d7cc-11e8-824f-0242ac160002"  # 3.MD.C.7.d, Multi-State
PRACTICE = "36000f7e-5fa9-47d1-ab6a-9cf93dc0b336"  # 6.MP1: no learning components at all
PROBLEMS = SHARED / "data" / "alignment-dev" / "mathfish-dev.jsonl"


@pytest.fixture(scope="module")
def indexed(indexed_sample_db: str) -> Iterator[Api]:
    yield from _serve(indexed_sample_db)


def check(api: Api, body: Any) -> httpx.Response:
    return api.http.post(BASE + "/alignments/check", json=body, headers={"x-api-key": api.key})


def ok(api: Api, body: Any) -> dict[str, Any]:
    response = check(api, body)
    assert response.status_code == 200, response.text
    found: dict[str, Any] = response.json()
    return found


def test_the_evaluators_three_fixtures(indexed: Api) -> None:
    area = ok(indexed, {"text": PLAYGROUND, "statementCode": "3.MD.C.7.d"})
    assert area["aligned"] is True and area["confidence"] == "high"
    assert area["standard"]["statementCode"] == "3.MD.C.7.d"
    assert area["standard"]["jurisdiction"] == "Multi-State"  # the default
    assert area["componentsFrom"] == "crosswalk"  # Common Core's come from California's
    assert area["totalCount"] == 3 and area["alignedCount"] == 3
    assert all(c["addressed"] and c["passages"] for c in area["learningComponents"])
    for c in area["learningComponents"]:
        for p in c["passages"]:
            assert PLAYGROUND[p["start"] : p["end"]] == p["text"]

    sum_ = ok(indexed, {"text": "What is 12 + 7?", "statementCode": "3.MD.C.7.d"})
    assert sum_["aligned"] is False and sum_["alignedCount"] == 0 and sum_["totalCount"] == 3
    assert not any(c["addressed"] for c in sum_["learningComponents"])
    assert sum_["score"] < 0.2 and sum_["rank"]["position"] > 100
    assert len(sum_["rank"]["better"]) == 10  # the codes that fit better, best first

    parent = ok(indexed, {"text": PLAYGROUND, "statementCode": "3.MD.C.7"})
    assert parent["aligned"] is True and parent["alignedCount"] >= 1
    # Its own sub-standards are part of it, never "better".
    assert not any(code.startswith("3.MD.C.7.") for code in parent["rank"]["better"])


def test_a_standard_named_by_uuid_is_the_same_check(indexed: Api) -> None:
    by_code = ok(indexed, {"text": PLAYGROUND, "statementCode": "3.md.c.7.d",
                           "jurisdiction": "Multi-State"})  # fmt: skip
    by_uuid = ok(indexed, {"text": PLAYGROUND, "caseIdentifierUUID": D_UUID})
    assert by_code == by_uuid
    assert by_uuid["rank"]["position"] == len(by_uuid["rank"]["better"]) + 1 or (
        by_uuid["rank"]["position"] > 10
    )


def test_a_standard_without_components_checks_its_statement(indexed: Api) -> None:
    text = (
        "A train travels 120 miles in 2 hours. Students make sense of the problem, try"
        " several ways to find its speed and keep trying when one does not work."
    )
    found = ok(indexed, {"text": text, "caseIdentifierUUID": PRACTICE})
    assert found["componentsFrom"] == "none" and found["totalCount"] == 0
    assert found["learningComponents"] == [] and "statement" in found["note"]
    assert found["evidence"]["passages"]


def test_refusals(indexed: Api) -> None:
    cases = [
        ({"text": PLAYGROUND}, 400, "caseIdentifierUUID"),
        ({"text": PLAYGROUND, "statementCode": "3.MD.C.7.d", "caseIdentifierUUID": D_UUID},
         400, "one of them"),
        ({"text": PLAYGROUND, "caseIdentifierUUID": D_UUID, "jurisdiction": "California"},
         400, "goes with"),
        ({"text": PLAYGROUND, "statementCode": "3.MD.C.7.d", "jurisdiction": "Atlantis"},
         400, "jurisdiction"),
        ({"text": PLAYGROUND, "statementCode": "3.MD.Z.9"}, 404, "3.MD.Z.9 in Multi-State"),
        ({"text": PLAYGROUND, "statementCode": "3.MD.C.7.d", "jurisdiction": "Texas"},
         404, "in Texas"),
        ({"text": PLAYGROUND, "caseIdentifierUUID": "00000000-0000-0000-0000-000000000000"},
         404, ""),
        ({"text": "", "statementCode": "3.MD.C.7.d"}, 400, "text"),
        ({"text": "x" * 20_001, "statementCode": "3.MD.C.7.d"}, 400, "20000"),
        ({"text": PLAYGROUND, "statementCode": "3.MD.C.7.d", "grade": "3"}, 400, "grade"),
        ({"text": 7, "statementCode": "3.MD.C.7.d"}, 400, "text"),
    ]  # fmt: skip
    for body, status, words in cases:
        response = check(indexed, body)
        kind = "NotFoundError" if status == 404 else "ValidationError"
        assert words in error_of(response, status, kind)["message"], (body, response.text)


def test_the_check_is_priced_as_an_alignment(indexed: Api) -> None:
    from edukg.adapters.mcp import TOOL_OPERATIONS
    from edukg.app.requests import request_cost

    op = TOOL_OPERATIONS["check_text_against_standard"]
    assert op.path == "/alignments/check" and op.method == "POST"
    assert request_cost(op, {"text": "x" * 4000}) == 5 + 2


@pytest.mark.anyio
async def test_the_mcp_tool(indexed: Api) -> None:
    async with session(indexed) as s:
        found = await call(s, "check_text_against_standard", text=PLAYGROUND,
                           statementCode="3.MD.C.7.d")  # fmt: skip
        assert found["aligned"] is True and found["alignedCount"] == found["totalCount"] == 3
        assert found["standard"]["code"] == "3.MD.C.7.d" and found["rank"]["position"] >= 1
        wrong = await call_error(s, "check_text_against_standard", text=PLAYGROUND,
                                 statementCode="3.MD.C.7.d", jurisdiction="Atlantis")  # fmt: skip
        assert "Invalid value for jurisdiction: 'Atlantis'" in wrong
        both = await call_error(s, "check_text_against_standard", text=PLAYGROUND,
                                statementCode="3.MD.C.7.d", caseIdentifierUUID=D_UUID)  # fmt: skip
        assert "one of them" in both
        missing = await call_error(s, "check_text_against_standard", text=PLAYGROUND,
                                   statementCode="3.MD.Z.9")  # fmt: skip
        assert "No standard with code 3.MD.Z.9" in missing


_cli = partial(edukg, timeout=120)


def test_the_cli(indexed_sample_db: str, tmp_path: Path) -> None:
    item = tmp_path / "item.txt"
    item.write_text(PLAYGROUND)
    done = _cli("check", str(item), "--standard", "3.MD.C.7.d", "--db", indexed_sample_db)
    assert done.returncode == 0, done.stderr
    assert "aligned, score" in done.stdout and "3 of 3 learning components" in done.stdout
    done = _cli("check", "-", "--standard", D_UUID, "--json", "--db", indexed_sample_db,
                stdin=PLAYGROUND)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert orjson.loads(done.stdout)["standard"]["caseIdentifierUUID"] == D_UUID
    done = _cli("align", str(item), "--jurisdiction", "Multi-State", "--grade", "3",
                "--limit", "3", "--json", "--db", indexed_sample_db)  # fmt: skip
    assert done.returncode == 0, done.stderr
    rows = orjson.loads(done.stdout)["data"]
    assert len(rows) == 3 and all("3" in r["gradeLevel"] for r in rows)
    done = _cli("align", "What is the area of a 3 by 4 rectangle?", "--limit", "2",
                "--db", indexed_sample_db)  # fmt: skip
    assert done.returncode == 0 and "2 standards" in done.stdout, done.stderr
    # Refusals: the API's words, the CLI's one exit-code rule (2 usage, 1 not found).
    done = _cli("check", "x", "--standard", "3.MD.C.7.d", "--jurisdiction", "Atlantis",
                "--db", indexed_sample_db)  # fmt: skip
    assert done.returncode == 2 and "jurisdiction" in done.stderr
    done = _cli("check", "x", "--standard", "3.MD.Z.9", "--db", indexed_sample_db)
    assert done.returncode == 1 and "No standard with code 3.MD.Z.9" in done.stderr
    done = _cli("align", "x", "--limit", "99", "--db", indexed_sample_db)
    assert done.returncode == 2 and "limit" in done.stderr
    done = _cli("align", "x", "--db", str(tmp_path / "none.db"))
    assert done.returncode == 1


def test_quality_on_the_dev_problems(indexed_sample_db: str) -> None:
    if not PROBLEMS.exists():
        pytest.skip(f"{PROBLEMS} is not there (../shared beside the checkout)")
    store = open_store(indexed_sample_db)
    try:
        pairs = mathfish.check_pairs(store, mathfish.problems(PROBLEMS))
        measured = mathfish.measure_check(store, pairs)
    finally:
        store.close()
    # Measured 0.910 / 0.829 with the learned ranking stage and the rule that `aligned`
    # needs a component addressed (bench/align_eval.py, part 4).
    assert measured.auc >= 0.89 and measured.balanced >= 0.80, (measured.auc, measured.balanced)
    # The verdict agrees with its evidence: never aligned beside 0 of N > 0 components.
    assert not any(aligned and share == 0 for _, aligned, _, share in measured.rows)
    high = [positive for score, _, positive, _ in measured.rows if score >= 0.6]
    assert sum(high) / len(high) >= 0.8, "'high' in a check is right four times in five"


def test_a_publishers_check_pairs_agree_with_their_evidence(indexed_sample_db: str) -> None:
    """bench/data/publisher_units.jsonl: pairs a teacher judged, three aligned and three
    not in each of six units (held out from every fitted constant)."""
    units = ROOT / "bench" / "data" / "publisher_units.jsonl"
    rows = [orjson.loads(line) for line in units.read_bytes().splitlines() if line.strip()]
    store = open_store(indexed_sample_db)
    try:
        judged = 0
        for row in (r for r in rows if r["kind"] == "check"):
            found = check_text(store, CheckQuery(row["text"], code=row["standard"],
                                            jurisdiction="Multi-State"))  # fmt: skip
            assert not (found.aligned and found.totalCount and not found.alignedCount), row["id"]
            assert found.alignmentScore is not None
            judged += found.aligned == row["aligned"]
    finally:
        store.close()
    # Measured 22 of 36 (bench/align_eval.py, part 8).
    assert judged >= 20, judged
