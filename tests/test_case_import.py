"""CASE import: packages (1.0 and 1.1) loaded beside or instead of the export, on both
backends, served by the same operations; the mapping rules; slips; failures; URLs."""

from __future__ import annotations

import http.server
import subprocess
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, ClassVar

import orjson
import pytest

from edukg.ingest.builder import load
from edukg.ingest.case_map import (
    grades,
    jurisdiction_of,
    statement_type,
    subject_of,
)
from edukg.ingest.errors import LoadError
from edukg.model.case_ids import case_identifier
from edukg.store import open_store
from harness.case_packages import (
    ACT,
    ACT_DOC,
    BASE_URI,
    CA_MATH,
    COMPONENT,
    DOC,
    OUTSIDE,
    STANDARD_A,
    STANDARD_B,
    STRAND,
    assoc,
    full_package,
    item,
    package,
    uuid_of,
    write,
)
from harness.processes import EDUKG
from tests.conftest import Api, error_of
from tests.support import SAMPLE

# Mapping rules


def test_jurisdiction_is_the_longest_whole_word_state() -> None:
    assert jurisdiction_of({"creator": "Alabama State Department of Education"}) == "Alabama"
    assert jurisdiction_of({"creator": "Arkansas Division of Education"}) == "Arkansas"
    assert jurisdiction_of({"creator": "West Virginia Board"}) == "West Virginia"
    assert jurisdiction_of({"creator": "ACT, Inc.", "publisher": "Kansas DoE"}) == "Kansas"
    assert jurisdiction_of({"creator": "x", "title": "Common Core Math"}) == "Multi-State"
    assert jurisdiction_of({"creator": "ACT, Inc.", "title": "ACT Framework"}) is None
    assert jurisdiction_of({"creator": "Ohio", "title": "Common Core"}) == "Ohio"


def test_subject_type_and_grades_tables() -> None:
    assert subject_of({"subject": ["Math"]}) == "Mathematics"
    assert subject_of({"title": "English Language Arts Standards"}) == "English Language Arts"
    assert subject_of({"title": "Social Science"}) == "Social Studies"
    assert subject_of({"title": "Physical Education"}) == "Other"
    assert (
        statement_type("Cluster") == statement_type("conceptual category") == ("Standard Grouping")
    )
    assert statement_type("Benchmark") == statement_type("Indicator") == "Standard"
    assert statement_type("Example") == statement_type(None) == "Other"
    assert grades(["KG", "09", "TK", "AS"]) == (["K", "9"], ["TK", "AS"])
    assert grades("PK,01") == (["PK", "1"], [])


# Loading and serving


def _served_items(api: Api, framework: str) -> list[dict[str, Any]]:
    return api.walk("/academic-standards", standardsFrameworkCaseIdentifierUUID=framework)


def test_the_real_fixture_serves_its_items_and_hierarchy(
    fresh_db: str, serve: Callable[[str], Api]
) -> None:
    body = orjson.loads(ACT.read_bytes())
    summary = load([str(ACT)], fresh_db, "1.0.0")
    assert summary.case[0].items == 28 and summary.case[0].added == 28
    assert summary.case[0].problems == []
    api = serve(fresh_db)
    served = {r["caseIdentifierUUID"]: r for r in _served_items(api, ACT_DOC)}
    given = {i["identifier"]: i for i in body["CFItems"]}
    assert served.keys() == given.keys()
    for uuid, record in served.items():
        assert record["statementCode"] == given[uuid]["humanCodingScheme"]
        assert record["description"] == given[uuid]["fullStatement"]
        assert record["identifier"] == case_identifier(given[uuid]["uri"])
    parent = {
        a["originNodeURI"]["identifier"]: a["destinationNodeURI"]["identifier"]
        for a in body["CFAssociations"]
    }
    for uuid in [ACT_DOC, *given]:
        children = api.walk(f"/academic-standards/{uuid}/children")
        assert {c["caseIdentifierUUID"] for c in children} == {
            k for k, v in parent.items() if v == uuid
        }
    framework = api.ok("/standards-frameworks")["data"]
    assert [f["caseIdentifierUUID"] for f in framework] == [ACT_DOC]
    assert framework[0]["name"] == "ACT Holistic Framework, Math"
    assert framework[0]["jurisdiction"] is None and framework[0]["author"] == "ACT, Inc."


def test_every_association_type_and_the_slips(
    tmp_path: Path, fresh_db: str, serve: Callable[[str], Api]
) -> None:
    path = write(tmp_path / "al.json", full_package())
    summary = load([str(path)], fresh_db, "1.0.0")
    outcome = summary.case[0]
    assert (outcome.items, outcome.added, outcome.case_version) == (4, 4, "1.1")
    problems = "\n".join(outcome.problems)
    for slip in (
        "$.CFItems[2].humanCodingScheme: a number where text belongs",
        "$.CFItems[3].educationalLevel: unknown key, ignored",
        "$.CFItems[4].identifier: duplicate",
        "$.CFItems[5].identifier: not a UUID",
        "$.CFItems[6]: no fullStatement, skipped",
        "$.CFAssociations[1].sequenceNumber: a string where a number belongs",
        "$.CFAssociations[15]: no originNodeURI, destinationNodeURI, skipped",
        "$.unknownTopKey: unknown key, ignored",
    ):
        assert slip in problems, problems
    assert summary.relationship_counts["hasChild"] == 4
    api = serve(fresh_db)
    framework = api.ok("/standards-frameworks")["data"][0]
    assert framework["jurisdiction"] == "Alabama"
    assert framework["academicSubject"] == "Mathematics"
    assert framework["license"] == "CC BY 4.0" and framework["isCurrent"] is True
    assert framework["adoptionStatus"] == "Adopted" and framework["inLanguage"] == "en-US"
    a = api.ok(f"/academic-standards/{STANDARD_A}")
    assert (a["statementCode"], a["name"], a["statementType"]) == ("AL.M.1.1", "Add", "Standard")
    assert a["normalizedStatementType"] == "Standard" and a["gradeLevel"] == ["K", "1"]
    assert a["caseEducationLevel"] == ["KG", "01", "TK"] and a["inLanguage"] == "en-US"
    assert a["jurisdiction"] == "Alabama" and a["academicSubject"] == "Mathematics"
    assert a["dateModified"] == "2025-01-02T03:04:05+00:00" and a["hasChildren"] is True
    b = api.ok(f"/academic-standards/{STANDARD_B}")
    assert b["statementCode"] == "1.2" and b["description"] == "Subtract within 10"
    strand = api.ok(f"/academic-standards/{STRAND}")
    assert strand["normalizedStatementType"] == "Standard Grouping"

    def uuids(path: str) -> list[str]:
        return [r["caseIdentifierUUID"] for r in api.walk(path)]

    # Ordered as every list (by identifier); sequenceNumber stays on the relationship.
    assert sorted(uuids(f"/academic-standards/{STRAND}/children")) == [STANDARD_A, STANDARD_B]
    assert uuids(f"/academic-standards/{STANDARD_B}/prerequisites") == [STANDARD_A]
    assert uuids(f"/academic-standards/{STANDARD_A}/builds-towards") == [STANDARD_B]
    assert uuids(f"/academic-standards/{COMPONENT}/related-standards") == [STANDARD_A]
    crosswalk = api.walk(f"/academic-standards/{STANDARD_B}/crosswalks")
    assert [(c["caseIdentifierUUID"], c["jaccard"]) for c in crosswalk] == [(STANDARD_A, 0.5)]
    # The other CASE types are kept under their CASE names (exported, not shown here).
    export = tmp_path / "out"
    done = subprocess.run(
        [*EDUKG, "export", str(export), "--db", fresh_db],
        check=False, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    rels = [orjson.loads(x) for x in (export / "relationships.jsonl").read_bytes().splitlines()]
    labels = {r["label"] for r in rels}
    assert {"isPeerOf", "isPartOf", "exemplar", "replacedBy", "exactMatchOf"} <= labels
    assert {"hasSkillLevel", "isTranslationOf", "ext:hasExample"} <= labels
    kept = {r["identifier"] for r in rels}
    assert {a["identifier"] for a in full_package()["CFAssociations"][:15]} <= kept
    outside = next(r for r in rels if r["label"] == "exactMatchOf")
    assert outside["target_identifier"] == case_identifier(f"{BASE_URI}/CFItems/{OUTSIDE}")


def _sample_item(api: Api) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """A California standard of the sample with crosswalks and learning components."""
    for record in _served_items(api, CA_MATH):
        uuid = record["caseIdentifierUUID"]
        crosswalks = api.walk(f"/academic-standards/{uuid}/crosswalks")
        if crosswalks and api.walk(f"/academic-standards/{uuid}/learning-components"):
            return record, crosswalks
    raise AssertionError("the sample has no such standard")


def test_a_revision_keeps_identity_and_replaces_the_framework(
    tmp_path: Path, fresh_db: str, serve: Callable[[str], Api]
) -> None:
    load([str(SAMPLE)], fresh_db, "1.0.0")
    api = serve(fresh_db)
    before = _served_items(api, CA_MATH)
    kept, crosswalks = _sample_item(api)
    components = api.walk(f"/academic-standards/{kept['caseIdentifierUUID']}/learning-components")
    removed = next(r for r in before if r["identifier"] != kept["identifier"])
    new = uuid_of(500)
    revision = package(
        [
            item(1, "NEW.1", "A reworded statement", identifier=kept["caseIdentifierUUID"]),
            item(2, "NEW.2", "A new standard", identifier=new),
        ],
        [
            assoc(1, "isChildOf", kept["caseIdentifierUUID"], CA_MATH),
            assoc(2, "isChildOf", new, kept["caseIdentifierUUID"]),
        ],
        document={
            "identifier": CA_MATH,
            "creator": "California Department of Education",
            "title": "California Mathematics (revised)",
        },
        version="1.0",
    )
    summary = load([str(SAMPLE), str(write(tmp_path / "ca.json", revision))], fresh_db, "2.0.0")
    outcome = summary.case[0]
    assert outcome.revision_of_export
    assert (outcome.added, outcome.removed, outcome.changed) == (1, len(before) - 1, 1)
    after = _served_items(api, CA_MATH)
    assert [r["caseIdentifierUUID"] for r in after] == [kept["caseIdentifierUUID"], new]
    record = api.ok(f"/academic-standards/{kept['caseIdentifierUUID']}")
    assert record["identifier"] == kept["identifier"]  # the export's identity
    assert record["description"] == "A reworded statement" and record["statementCode"] == "NEW.1"
    assert record["jurisdiction"] == "California" and record["provider"] == kept["provider"]
    uuid = kept["caseIdentifierUUID"]
    assert api.walk(f"/academic-standards/{uuid}/learning-components") == components
    assert [c["identifier"] for c in api.walk(f"/academic-standards/{uuid}/crosswalks")] == [
        c["identifier"] for c in crosswalks
    ]
    error_of(api.get(f"/academic-standards/{removed['caseIdentifierUUID']}"), 404, "NotFoundError")
    framework = api.ok("/standards-frameworks", jurisdiction="California")["data"][0]
    assert framework["name"] == "California Mathematics (revised)"
    # Searched like any standard.
    found = api.ok(
        "/academic-standards/search", query="reworded statement", jurisdiction="California"
    )
    assert found and found[0]["caseIdentifierUUID"] == uuid


def _content_id(db: str) -> str | None:
    store = open_store(db)
    try:
        info = store.info()
        return info.content_id if info else None
    finally:
        store.close()


@pytest.mark.parametrize(
    ("body", "says"),
    [
        (b'{"CFDocument": {"identifier": "', "not valid JSON"),
        (orjson.dumps({"CFItems": [item(1, "x", "y")]}), "no CFDocument"),
        (orjson.dumps(package([], [])), "no usable CFItems"),
        (orjson.dumps(package([{"identifier": "x"}], [])), "no usable CFItems"),
        (b"<!doctype html><html>login</html>", "HTML page"),
        (
            orjson.dumps({"imsx_codeMajor": "failure", "imsx_description": "no such package"}),
            "no such package",
        ),
    ],
)
def test_a_broken_package_fails_the_load_and_changes_nothing(
    tmp_path: Path, fresh_db: str, body: bytes, says: str
) -> None:
    load([str(ACT)], fresh_db, "1.0.0")
    before = _content_id(fresh_db)
    bad = tmp_path / "bad.json"
    bad.write_bytes(body)
    with pytest.raises(LoadError, match=says):
        load([str(SAMPLE), str(bad)], fresh_db, "2.0.0")
    assert _content_id(fresh_db) == before


def test_packages_alone_onto_served_data_need_replace(tmp_path: Path, fresh_db: str) -> None:
    load([str(SAMPLE)], fresh_db, "1.0.0")
    before = _content_id(fresh_db)
    command = [*EDUKG, "load", str(ACT), "--db", fresh_db, "--no-index"]
    refused = subprocess.run(command, check=False, capture_output=True, text=True, timeout=300)
    assert refused.returncode != 0
    assert "--replace" in refused.stdout + refused.stderr
    assert _content_id(fresh_db) == before
    done = subprocess.run(
        [*command, "--replace"], check=False, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "CASE 1.0 framework 'ACT Holistic Framework, Math'" in done.stdout
    assert _content_id(fresh_db) != before


def test_a_package_over_the_limit_is_refused_in_one_line(tmp_path: Path) -> None:
    fresh_db = str(tmp_path / "limit.db")
    items = [item(n, f"AL.{n}", "Add and subtract within 20 " * 20) for n in range(1, 1800)]
    big = write(tmp_path / "big.json", package(items, [assoc(1, "isChildOf", uuid_of(1), DOC)]))
    assert 1 << 20 < big.stat().st_size < 2 << 20
    command = [*EDUKG, "load", str(big), "--db", fresh_db,
               "--no-index", "--data-version", "1.0.0"]  # fmt: skip
    refused = subprocess.run([*command, "--max-package-mb", "1"], check=False,
                             capture_output=True, text=True, timeout=300)  # fmt: skip
    said = refused.stdout + refused.stderr
    assert refused.returncode == 1 and "Traceback" not in said
    assert "over the CASE package limit of 1 MiB" in said and "--max-package-mb" in said
    assert not Path(fresh_db).exists()  # nothing was made
    done = subprocess.run([*command, "--max-package-mb", "2"], check=False,
                          capture_output=True, text=True, timeout=300)  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr


class _Handler(http.server.BaseHTTPRequestHandler):
    routes: ClassVar[dict[str, tuple[int, str, bytes]]] = {}

    def do_GET(self) -> None:
        status, kind, body = self.routes.get(self.path, (404, "text/plain", b"no"))
        self.send_response(status)
        self.send_header("content-type", kind)
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def case_server() -> Iterator[str]:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def test_a_package_by_url_with_the_export(
    case_server: str, fresh_db: str, serve: Callable[[str], Api]
) -> None:
    path = f"/ims/case/v1p0/CFPackages/{ACT_DOC}"
    error = orjson.dumps(
        {"imsx_codeMajor": "failure", "imsx_severity": "error", "imsx_description": "unknown"}
    )
    _Handler.routes = {
        path: (200, "application/json", ACT.read_bytes()),
        "/page": (200, "text/html; charset=utf-8", b"<html></html>"),
        "/ims/case/v1p0/CFPackages/missing": (404, "application/json", error),
    }
    summary = load([str(SAMPLE), case_server + path], fresh_db, "1.0.0")
    assert summary.case[0].items == 28
    api = serve(fresh_db)
    assert len(_served_items(api, ACT_DOC)) == 28
    assert _served_items(api, CA_MATH)  # the export is served beside it
    with pytest.raises(LoadError, match="HTML page"):
        load([str(SAMPLE), case_server + "/page"], fresh_db)
    with pytest.raises(LoadError, match=r"HTTP 404 \(CASE failure: unknown\)"):
        load([str(SAMPLE), case_server + "/ims/case/v1p0/CFPackages/missing"], fresh_db)


def test_a_package_changes_its_own_framework_and_nothing_else(
    tmp_path: Path, fresh_db: str, serve: Callable[[str], Api]
) -> None:
    load([str(SAMPLE)], fresh_db, "1.0.0")
    api = serve(fresh_db)
    common_core = api.ok("/academic-standards/search", query="unlike denominators",
                         jurisdiction="Multi-State", limit=1)[0]  # fmt: skip
    hijack = common_core["caseIdentifierUUID"]
    own = uuid_of(700)
    hostile = package(
        [
            item(1, "AL.1", "An honest standard", identifier=own),
            item(2, "HIJACK.1", "HIJACK a Common Core item", identifier=hijack),
            item(3, "HIJACK.2", "HIJACK the document", identifier=DOC),
            item(4, "HIJACK.3", "HIJACK a framework", identifier=CA_MATH),
        ],
        [
            assoc(1, "isChildOf", own, DOC),
            assoc(2, "isChildOf", hijack, DOC),
            assoc(3, "isChildOf", hijack, own),
        ],
    )
    summary = load([str(SAMPLE), str(write(tmp_path / "al.json", hostile))], fresh_db, "2.0.0")
    problems = "\n".join(summary.case[0].problems)
    for path in ("$.CFItems[1]", "$.CFItems[2]", "$.CFItems[3]", "$.CFAssociations[1]",
                 "$.CFAssociations[2]"):  # fmt: skip
        assert path in problems, problems
    after = api.ok(f"/academic-standards/{hijack}")
    assert after["description"] == common_core["description"]
    assert "HIJACK" not in str(after) and after["jurisdiction"] == "Multi-State"
    ancestors = api.ok(f"/academic-standards/{hijack}/ancestors")["data"]
    assert DOC not in str(ancestors)
    names = [f["name"] for f in api.ok("/standards-frameworks")["data"]]
    assert "Alabama Course of Study: Mathematics" in names and len(names) == 3
    assert [r["caseIdentifierUUID"] for r in _served_items(api, DOC)] == [own]
    assert api.http.get(f"/ims/case/v1p1/CFPackages/{DOC}",
                        headers={"x-api-key": api.key}).status_code == 200  # fmt: skip


def test_items_no_association_places_are_reported(tmp_path: Path, fresh_db: str) -> None:
    placed, orphan = uuid_of(801), uuid_of(802)
    body = package(
        [
            item(1, "AL.1", "Placed", identifier=placed),
            item(2, "AL.2", "Orphan", identifier=orphan),
        ],
        [assoc(1, "isChildOf", placed, DOC), assoc(2, "precedes", placed, orphan)],
    )
    summary = load([str(write(tmp_path / "al.json", body))], fresh_db, "1.0.0")
    problems = summary.case[0].problems
    assert [p for p in problems if "isChildOf" in p] == [
        "$.CFItems[1]: no isChildOf association places it in the framework; it is loaded,"
        " but neither the framework's listing nor its CFPackage shows it"
    ]
    assert summary.case[0].added == 2


def test_similar_on_an_imported_item_compares_it_with_the_targets_standards(
    tmp_path: Path, serve: Callable[[str], Api]
) -> None:
    """An imported CASE item is often of statement type Other, which Common Core has none
    of: /similar used to answer an empty list with no reason. It now compares the item
    with the target's standards and says so, and an empty answer says why."""
    db = str(tmp_path / "edukg.db")
    load([str(SAMPLE), str(ACT)], db, "1.0.0")
    api = serve(db)
    item = next(i for i in orjson.loads(ACT.read_bytes())["CFItems"]
                if i.get("fullStatement") and "shape" in i["fullStatement"].lower())  # fmt: skip
    path = f"/academic-standards/{item['identifier']}/similar"
    found = api.ok(path, jurisdiction="Multi-State", minScore="0")
    assert found["data"] and "compared" in found["note"]
    assert all(r["normalizedStatementType"] == "Standard" for r in found["data"])
    empty = api.ok(path, jurisdiction="Texas")
    assert empty["data"] == [] and empty["note"] == "Texas has no Mathematics standards."
