"""What a new user ran into with the alignment features, on the real sample (a scenario):
coverage that says why it is empty, domains a teacher knows, comparisons of one grade,
command output in code order with its summary last."""

from __future__ import annotations

import subprocess

import orjson

from edukg.model.vocabulary import code_order
from harness.processes import edukg
from tests.conftest import Api

CA = "California:Mathematics"
MS = "Multi-State:Mathematics"


def _edukg(db: str, *args: str) -> subprocess.CompletedProcess[str]:
    return edukg(*args, "--db", db, timeout=180)


def test_a_curriculum_without_alignments_says_so(sample: Api, sample_db: str) -> None:
    framework = sample.ok("/standards-frameworks", jurisdiction="California")["data"][0]
    summary = sample.ok("/curriculums/im360/coverage/summary",
                        standardsFrameworkCaseIdentifierUUID=framework["caseIdentifierUUID"])  # fmt: skip
    assert summary["alignedItems"] == 0
    assert "No item of im360 carries an alignment" in summary["note"]
    assert "2,540 lessons" in summary["note"]
    done = _edukg(sample_db, "coverage", "im360", CA)
    assert done.returncode == 0, done.stderr
    assert "No item of im360 carries an alignment" in done.stderr
    # A list that is empty says what the curriculum holds instead.
    courses = sample.ok("/courses", curriculumId="im360")
    assert courses["data"] == [] and "im360 has no courses in this release" in courses["note"]
    assert "761 lessonGroupings" in courses["note"]
    unknown = sample.get("/courses", curriculumId="nope")
    assert unknown.status_code == 400
    assert unknown.json()["details"]["holdings"]["im360"]["lessons"] == 2540


def test_coverage_domains_are_the_ones_teachers_know(sample: Api) -> None:
    framework = sample.ok("/standards-frameworks", jurisdiction="Multi-State")["data"][0]
    rows = sample.walk("/curriculums/im360/coverage",
                       standardsFrameworkCaseIdentifierUUID=framework["caseIdentifierUUID"])  # fmt: skip
    codes = {r["domain"]["code"] for r in rows if r["domain"]}
    assert {"3.NF", "3.OA", "7.RP", "K.CC"} <= codes, sorted(codes)[:20]
    by_code = {r["standard"]["statementCode"]: r["domain"] for r in rows}
    assert by_code["3.NF.A.1"]["code"] == "3.NF"
    assert by_code["3.NF.A.1"]["description"].startswith("Number & Operations")


def test_comparing_one_grade_summarises_that_grade_alone(sample: Api, sample_db: str) -> None:
    frameworks = {f["jurisdiction"]: f["caseIdentifierUUID"]
                  for f in sample.ok("/standards-frameworks")["data"]}  # fmt: skip
    summary = sample.ok("/framework-crosswalks/summary", gradeLevel="3",
                        sourceFrameworkCaseIdentifierUUID=frameworks["California"],
                        targetFrameworkCaseIdentifierUUID=frameworks["Multi-State"])["data"]  # fmt: skip
    assert [g["gradeLevel"] for g in summary] == ["3"]
    done = _edukg(sample_db, "crosswalk", CA, MS, "--grade", "3")
    assert done.returncode == 0, done.stderr
    out = done.stdout
    # Rows in code order, the summary after them, and what "none" counts named.
    assert out.index("crosswalks") < out.index("with counterpart")
    assert "grade 3, no counterpart:" in out
    listed = _edukg(sample_db, "crosswalk", CA, MS, "--grade", "3", "--ndjson")
    rows = [orjson.loads(line) for line in listed.stdout.splitlines()]
    codes = [r["source"]["statementCode"] for r in rows]
    assert codes == sorted(codes, key=code_order)
