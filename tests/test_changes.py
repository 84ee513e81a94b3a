"""What changed between two releases: /changes, /changes/summary, `edukg diff`, the explorer."""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator
from functools import partial
from pathlib import Path
from typing import Any

import orjson
import pytest

from edukg.ingest.builder import load
from edukg.ingest.changes import ChangeOutcome
from edukg.ingest.normalize import typed
from harness.exports import write_export
from harness.processes import edukg
from tests.conftest import BACKENDS, Api, _db_for, _serve, error_of
from tests.support import SAMPLE

OLD, NEW = "1.0.0", "2.0.0"
Lines = list[dict[str, Any]]


def _read(directory: Path) -> tuple[Lines, Lines]:
    return tuple(  # type: ignore[return-value]
        [orjson.loads(x) for x in (directory / name).read_bytes().splitlines() if x.strip()]
        for name in ("nodes.jsonl", "relationships.jsonl")
    )


def _edit(nodes: Lines, rels: Lines) -> tuple[Lines, Lines]:
    """The sample's next release: standards removed, added and reworded, a crosswalk score
    changed, alignments dropped, a value retyped ("true" for true), and every hasChild
    identifier renewed."""
    parents = {r["source_identifier"] for r in rels if r["label"] == "hasChild"}
    leaves = sorted(
        (n for n in nodes if n["labels"][0] == "StandardsFrameworkItem"
         and n["identifier"] not in parents and n["properties"].get("statementCode")),
        key=lambda n: n["identifier"],
    )  # fmt: skip
    gone = {n["identifier"] for n in leaves[:3]}
    reworded, retyped = leaves[3]["identifier"], leaves[4]["identifier"]
    new_nodes: Lines = []
    for original in nodes:
        if original["identifier"] in gone:
            continue
        node = orjson.loads(orjson.dumps(original))
        if node["identifier"] == reworded:
            node["properties"]["description"] = "Reworded: " + node["properties"]["description"]
        if node["identifier"] == retyped:
            node["properties"]["isCurrent"] = "true"  # typed, the same value
        new_nodes.append(node)
    parent = next(r["source_identifier"] for r in rels if r["label"] == "hasChild")
    for n in range(2):
        added = orjson.loads(orjson.dumps(leaves[5]))
        added["identifier"] = str(uuid.uuid5(uuid.NAMESPACE_URL, f"added-{n}"))
        added["properties"].update(identifier=added["identifier"], statementCode=f"NEW.{n}",
                                   caseIdentifierUUID=str(uuid.uuid5(uuid.NAMESPACE_DNS, f"a{n}")))  # fmt: skip
        new_nodes.append(added)
        rels = [*rels, {"type": "relationship", "identifier": str(uuid.uuid4()), "label": "hasChild",
                        "source_identifier": parent, "target_identifier": added["identifier"],
                        "properties": {"description": "added"}}]  # fmt: skip
    alignments = [r for r in rels if r["label"] == "hasStandardAlignment"]
    dropped = {r["identifier"] for r in alignments[:4]}
    rescored = alignments[4]["identifier"]
    new_rels: Lines = []
    for original in rels:
        ends = {original["source_identifier"], original["target_identifier"]}
        if original["identifier"] in dropped or gone & ends:
            continue
        rel = orjson.loads(orjson.dumps(original))
        if rel["identifier"] == rescored:
            rel["properties"]["jaccard"] = "0.123"
        if rel["label"] == "hasChild":
            rel["identifier"] = rel["properties"]["identifier"] = str(uuid.uuid4())
        new_rels.append(rel)
    return new_nodes, new_rels


def _key(kind: str, r: dict[str, Any]) -> Any:
    """How a record is matched across releases."""
    if kind == "node":
        return r["identifier"]
    return r["label"], r["source_identifier"], r["target_identifier"]


def _expected(old: tuple[Lines, Lines], new: tuple[Lines, Lines]) -> set[tuple[Any, ...]]:
    """(type, label, identifier, change, changed properties): a record-by-record comparison."""
    found: set[tuple[Any, ...]] = set()
    for kind, before, after in (("node", old[0], new[0]), ("relationship", old[1], new[1])):
        a, b = {_key(kind, r): r for r in before}, {_key(kind, r): r for r in after}
        assert len(a) == len(before) and len(b) == len(after)  # unique keys in this sample
        for k in a.keys() | b.keys():
            x, y = a.get(k), b.get(k)
            label = (y or x)["labels"][0] if kind == "node" else (y or x)["label"]  # type: ignore[index]
            identifier = (y or x)["identifier"]  # type: ignore[index]
            if x is None or y is None:
                found.add((kind, label, identifier, "added" if x is None else "removed", ()))
                continue
            p, q = typed(x["properties"]), typed(y["properties"])
            names = tuple(sorted(n for n in (p.keys() | q.keys()) - {"identifier"}
                                 if p.get(n) != q.get(n)))  # fmt: skip
            if names:
                found.add((kind, label, identifier, "modified", names))
    return found


@pytest.fixture(scope="module")
def exports(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, set[tuple[Any, ...]]]:
    if not (SAMPLE / "nodes.jsonl").is_file():
        pytest.skip(f"the real export sample is not at {SAMPLE}")
    old = _read(SAMPLE)
    new = _edit(*old)
    out = tmp_path_factory.mktemp("v2")
    write_export(out, [orjson.dumps(r) for r in (*new[0], *new[1])])
    return SAMPLE, out, _expected(old, new)


@pytest.fixture(scope="module", params=BACKENDS)
def served(
    request: pytest.FixtureRequest,
    tmp_path_factory: pytest.TempPathFactory,
    exports: tuple[Path, Path, set[tuple[Any, ...]]],
) -> Iterator[tuple[Api, str, set[tuple[Any, ...]], Any]]:
    db = _db_for(request.param, "changes", tmp_path_factory, request)
    load([str(exports[0])], db, OLD)
    summary = load([str(exports[1])], db, NEW)  # computes the changes from 1.0.0
    for api in _serve(db):
        yield api, db, exports[2], summary


def _as_tuple(c: dict[str, Any]) -> tuple[Any, ...]:
    return (c["type"], c["label"], c["identifier"], c["change"], tuple(c["changedProperties"]))


def test_changes_equal_a_record_by_record_comparison(served: Any) -> None:
    api, _, expected, summary = served
    kinds = {(k, c) for k, _, _, c, _ in expected}
    assert {"node", "relationship"} == {k for k, _ in kinds}
    assert {"added", "removed", "modified"} == {c for _, c in kinds}
    assert summary.changes.computed  # at the load, from the previous current release
    walked = api.walk("/changes", **{"from": OLD, "to": NEW, "limit": 3})
    assert {_as_tuple(c) for c in walked} == expected
    assert len(walked) == len(expected)
    # No hierarchy edge looks changed for its renewed identifier; the retyped value is equal.
    assert not [c for c in walked if c["label"] == "hasChild" and c["change"] == "modified"]
    assert sum(c["label"] == "hasChild" for c in walked) == 2 + 3  # added, and the removed
    assert any(c["changedProperties"] == ["jaccard"] for c in walked)
    for c in walked:
        if c["type"] == "node":
            assert set(c) == {"type", "label", "identifier", "change", "changedProperties",
                              "caseIdentifierUUID", "statementCode", "name"}  # fmt: skip
            assert c["name"], c  # what a person calls it: its name, else its statement
        else:
            assert {"sourceIdentifier", "targetIdentifier"} <= set(c)
            # Each end as a person knows it, from the release the relationship is in.
            assert {"sourceCode", "sourceName", "targetCode", "targetName"} <= set(c)
            assert c["sourceName"] or c["sourceCode"], c


def test_changed_records_come_in_code_order(served: Any) -> None:
    """Changed records came in identifier order (4.NF.A.2 before 4.NF.A.1); they come in
    the order people read codes, records without a code after them, paged alike."""
    from edukg.model.vocabulary import code_order

    api, _, _, _ = served
    walked = api.walk("/changes", **{"from": OLD, "to": NEW, "limit": 2})
    nodes = [c for c in walked if c["type"] == "node"]
    coded = [c["statementCode"] for c in nodes if c["statementCode"]]
    assert len(coded) > 2 and coded == sorted(coded, key=code_order), coded
    first_uncoded = next((n for n, c in enumerate(nodes) if not c["statementCode"]), len(nodes))
    assert all(not c["statementCode"] for c in nodes[first_uncoded:])


def test_a_walk_survives_a_switch_of_the_current_release(served: Any) -> None:
    api, db, _, _ = served
    params = {"from": OLD, "to": NEW, "limit": 3}
    first = api.ok("/changes", **params)
    cursor = first["pagination"]["nextCursor"]
    expected = api.ok("/changes", **params, cursor=cursor)
    assert _cli("releases", "use", OLD, "--db", db).returncode == 0
    try:
        deadline = time.monotonic() + 10
        while api.get("/standards-frameworks").headers["x-data-version"] != OLD:
            assert time.monotonic() < deadline, "the server never switched"
            time.sleep(0.05)
        assert api.ok("/changes", **params, cursor=cursor) == expected
    finally:
        assert _cli("releases", "use", NEW, "--db", db).returncode == 0


def test_every_filter(served: Any) -> None:
    api, _, expected, _ = served
    pair = {"from": OLD, "to": NEW}
    for kind in ("node", "relationship"):
        got = api.walk("/changes", **pair, type=kind)
        assert {_as_tuple(c) for c in got} == {e for e in expected if e[0] == kind}
    for label in {e[1] for e in expected}:
        got = api.walk("/changes", **pair, label=label)
        assert {_as_tuple(c) for c in got} == {e for e in expected if e[1] == label}
    for change in ("added", "removed", "modified"):
        got = api.walk("/changes", **pair, change=change)
        assert {_as_tuple(c) for c in got} == {e for e in expected if e[3] == change}
    both = api.walk("/changes", **pair, type="relationship", change="removed",
                    label="hasStandardAlignment")  # fmt: skip
    assert {_as_tuple(c) for c in both} == {
        e for e in expected if e[1] == "hasStandardAlignment" and e[3] == "removed"
    }
    assert len(both) >= 4  # the dropped alignments at least
    one = next(e for e in expected if e[3] == "modified" and e[0] == "node")
    got = api.ok("/changes", **pair, identifier=one[2])["data"]
    assert [_as_tuple(c) for c in got] == [one]
    assert api.ok("/changes", **pair, label="NoSuchLabel")["data"] == []


def test_values_are_typed_before_and_after(served: Any, exports: Any) -> None:
    api, _, _, _ = served
    valued = api.walk("/changes", **{"from": OLD, "to": NEW}, includeValues="true")
    rescored = next(c for c in valued if c["changedProperties"] == ["jaccard"])
    assert rescored["after"] == {"jaccard": 0.123}
    assert isinstance(rescored["before"]["jaccard"], float)
    added = next(c for c in valued if c["change"] == "added" and c["type"] == "node")
    assert added["before"] is None and added["after"]["statementCode"].startswith("NEW.")
    removed = next(c for c in valued if c["change"] == "removed" and c["type"] == "node")
    assert removed["after"] is None and removed["before"]["statementCode"]
    plain = api.ok("/changes", **{"from": OLD, "to": NEW})["data"][0]
    assert "before" not in plain and "after" not in plain


def test_summary_errors_and_the_same_release(served: Any) -> None:
    api, _, expected, _ = served
    body = api.ok("/changes/summary", **{"from": OLD, "to": NEW})
    counts = {c["label"]: c for c in body["counts"]}
    for label in {e[1] for e in expected}:
        for change in ("added", "removed", "modified"):
            want = sum(1 for e in expected if e[1] == label and e[3] == change)
            assert counts[label][change] == want
    assert api.ok("/changes", **{"from": NEW, "to": NEW})["data"] == []
    missing = error_of(api.get("/changes", **{"from": OLD, "to": "9.9"}), 404, "NotFoundError")
    assert f"{OLD}, {NEW}" in missing["message"]
    error_of(api.get("/changes", to=NEW), 400, "ValidationError")
    error_of(api.get("/changes", **{"from": OLD, "to": NEW, "change": "x"}), 400, "ValidationError")
    error_of(api.get("/changes", key="", **{"from": OLD, "to": NEW}), 401, "AuthenticationError")


def test_another_pair_is_computed_in_the_background(served: Any) -> None:
    api, _, expected, _ = served
    pair = {"from": NEW, "to": OLD}  # not computed by any load
    first = api.get("/changes", **pair)
    if first.status_code == 503:  # (unless an earlier run of this module computed it)
        assert int(first.headers["retry-after"]) > 0
        assert "being computed" in first.json()["message"]
    deadline = time.monotonic() + 120
    while (answer := api.get("/changes/summary", **pair)).status_code == 503:
        assert time.monotonic() < deadline, "the background computation did not finish"
        time.sleep(0.5)
    assert answer.status_code == 200
    back = {_as_tuple(c)[1:4] for c in api.walk("/changes", **pair)}
    flip = {"added": "removed", "removed": "added", "modified": "modified"}
    # The same records, the other way round (reported under the other release's identifier).
    assert {(e[1], flip[e[3]]) for e in expected} == {(b[0], b[2]) for b in back}


_cli = partial(edukg, timeout=300)


def test_edukg_diff_agrees(served: Any) -> None:
    api, db, expected, _ = served
    table = _cli("diff", OLD, NEW, "--db", db)
    assert table.returncode == 0, table.stderr
    for label in {e[1] for e in expected}:
        assert label in table.stdout
    lines = _cli("diff", OLD, NEW, "--ndjson", "--db", db)
    assert lines.returncode == 0
    printed = [orjson.loads(x) for x in lines.stdout.splitlines()]
    assert printed == api.walk("/changes", **{"from": OLD, "to": NEW}, includeValues="true")
    assert _cli("diff", OLD, "nope", "--db", db).returncode == 1


def test_explorer_what_changed(lone_browser: Any, served: Any) -> None:
    from tests.browser import enter_key, shot

    api, db, expected, _ = served
    page = lone_browser.new_page(viewport={"width": 1100, "height": 900})
    enter_key(page, api)
    page.wait_for_selector("#fws li a")
    page.click("text=What changed")
    page.wait_for_selector("#counts tbody tr")
    assert page.input_value("#from") == OLD and page.input_value("#to") == NEW
    rows = page.inner_text("#counts tbody")
    assert "hasStandardAlignment" in rows and "StandardsFrameworkItem" in rows
    page.wait_for_selector("section.changes li")
    page.select_option("#label", "StandardsFrameworkItem")
    page.wait_for_url("**label=StandardsFrameworkItem**")
    page.wait_for_selector("#status:has-text('changed records shown')")
    page.select_option("#change", "removed")
    page.wait_for_url("**change=removed**")
    page.wait_for_selector("#removed li a")
    page.wait_for_selector("#status:has-text('changed records shown')")
    items = page.locator("#removed li").all_inner_texts()
    removed = [e for e in expected if e[1] == "StandardsFrameworkItem" and e[3] == "removed"]
    # Grouped by change: only the Removed section is shown for change=removed.
    assert len(items) == len(removed)
    assert page.locator("#added, #modified").count() == 0
    shot(page, "what-changed", "postgres" if "postgres" in db else "sqlite")
    page.click("#removed li a >> nth=0")  # the removed standard, in the release it exists in
    page.wait_for_selector(".statement")
    assert page.input_value("#release") == OLD
    # A reworded standard's page names the release it last changed in.
    reworded = next(e for e in expected if e[3] == "modified" and e[0] == "node"
                    and "description" in e[4])  # fmt: skip
    uuid_of = api.ok("/changes", **{"from": OLD, "to": NEW}, identifier=reworded[2])
    case_uuid = uuid_of["data"][0]["caseIdentifierUUID"]
    page.goto(f"{api.server.url}/explore/standards/{case_uuid}?release=")
    page.wait_for_selector("#last-changed a")
    assert f"Changed in release {NEW}" in page.inner_text("#last-changed")
    assert "description" in page.inner_text("#last-changed")


def test_dropping_a_release_drops_its_changes(tmp_path: Path, fresh_db: str) -> None:
    from edukg.cli import build_demo
    from edukg.ingest.demo import demo_lines
    from edukg.store import open_changes, open_releases

    build_demo(fresh_db)
    changed = [x.replace(b"unit fraction", b"unit part") for x in demo_lines()]
    summary = load([str(write_export(tmp_path / "v2", changed))], fresh_db, NEW)
    assert isinstance(summary.changes, ChangeOutcome)
    pair = summary.changes.pair
    changes = open_changes(fresh_db)
    try:
        assert changes.counts(pair) is not None
        releases = open_releases(fresh_db)
        try:
            releases.drop("demo")
        finally:
            releases.close()
        assert changes.counts(pair) is None and changes.state(pair) is None
    finally:
        changes.close()
