"""Crosswalks between any two frameworks and curriculum coverage, against a truth computed
in plain Python from the export files (tests/alignment_truth.py), on both backends."""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from edukg.ingest import synthetic
from edukg.ingest.builder import load
from harness.alignment_truth import Export
from tests.conftest import BACKENDS, Api, _db_for, error_of
from tests.support import SAMPLE

GENERATED_SCALE, GENERATED_SEED = 0.03, 5


@pytest.fixture(scope="session")
def generated_export(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A generated export whose learning components are shared across states."""
    out = tmp_path_factory.mktemp("aligned") / "export"
    synthetic.write(out, scale=GENERATED_SCALE, seed=GENERATED_SEED)
    return out


@pytest.fixture(scope="session")
def truth(generated_export: Path) -> Export:
    return Export.read(generated_export)


@pytest.fixture(scope="session", params=BACKENDS)
def generated_db(
    request: pytest.FixtureRequest,
    tmp_path_factory: pytest.TempPathFactory,
    generated_export: Path,
) -> str:
    db = _db_for(request.param, "aligned", tmp_path_factory, request)
    load([str(generated_export)], db, "1.0.0")
    return db


@pytest.fixture(scope="session")
def generated(generated_db: str) -> Iterator[Api]:
    from tests.conftest import _serve

    yield from _serve(generated_db)


def _frameworks(truth: Export) -> list[str]:
    return sorted(i for i, label in truth.labels.items() if label == "StandardsFramework")


def _same_subject_pairs(truth: Export) -> list[tuple[str, str]]:
    fws = _frameworks(truth)
    subject = {f: truth.nodes[f]["academicSubject"] for f in fws}
    return [(a, b) for a, b in itertools.permutations(fws, 2) if subject[a] == subject[b]]


def _figures(row: dict[str, Any]) -> dict[str, Any]:
    keys = ("jaccard", "sourceLCCount", "targetLCCount", "sharedLCCount", "method")
    return {k: row[k] for k in keys}


def test_generated_export_shares_components_across_states(truth: Export) -> None:
    pairs = [p for a, b in _same_subject_pairs(truth)
             for p in truth.pairs(truth.items(a), truth.items(b)).values()
             if p["method"] == "learning-components"]  # fmt: skip
    assert len(pairs) > 100, "the generator should make many derived pairs"


def test_every_framework_pair_equals_the_truth(generated: Api, truth: Export) -> None:
    checked = 0
    for n, (source, target) in enumerate(_same_subject_pairs(truth)):
        want = truth.pairs(truth.items(source), truth.items(target))
        rows = generated.walk(
            "/framework-crosswalks",
            sourceFrameworkCaseIdentifierUUID=truth.framework_uuid(source),
            targetFrameworkCaseIdentifierUUID=truth.framework_uuid(target),
            limit=37 if n == 0 else 1000,  # one walk of many small pages
        )
        got = {(r["source"]["identifier"], r["target"]["identifier"]): r for r in rows}
        assert set(got) == set(want)
        for key, row in got.items():
            expected = want[key]
            if expected["method"] == "published":
                assert row["method"] == "published"
                assert row["jaccard"] == pytest.approx(expected["jaccard"])
                assert row["sharedLCCount"] == expected["sharedLCCount"]
            else:
                assert _figures(row) == expected
            assert row["source"]["caseIdentifierUUID"] == truth.nodes[key[0]]["caseIdentifierUUID"]
        keys = [
            (r["source"]["identifier"].encode(), r["target"]["identifier"].encode()) for r in rows
        ]
        assert keys == sorted(keys)
        checked += len(rows)
    assert checked > 100


def test_framework_summary_counts_per_grade(generated: Api, truth: Export) -> None:
    source, target = _same_subject_pairs(truth)[0]
    body = generated.ok(
        "/framework-crosswalks/summary",
        sourceFrameworkCaseIdentifierUUID=truth.framework_uuid(source),
        targetFrameworkCaseIdentifierUUID=truth.framework_uuid(target),
    )
    items = truth.items(source)
    pairs = truth.pairs(items, truth.items(target))
    best: dict[str, float] = {}
    for (s, _), f in pairs.items():
        best[s] = max(best.get(s, 0.0), f["jaccard"] or 0.0)
    for row in body["data"]:
        in_grade = {i for i in items if row["gradeLevel"] in truth.nodes[i].get("gradeLevel", [])}
        assert row["standards"] == len(in_grade)
        assert row["withCounterpart"] == len(in_grade & set(best))
        assert row["withJaccardAtLeastHalf"] == sum(best.get(i, -1) >= 0.5 for i in in_grade)
        assert row["withExactCounterpart"] == sum(best.get(i, -1) >= 1.0 for i in in_grade)
        assert row["withoutCounterpart"] == len(in_grade - set(best))
    assert body["pairs"] == len(pairs)


def test_min_jaccard_and_grade_filter_the_pairs(generated: Api, truth: Export) -> None:
    source, target = _same_subject_pairs(truth)[0]
    params = {
        "sourceFrameworkCaseIdentifierUUID": truth.framework_uuid(source),
        "targetFrameworkCaseIdentifierUUID": truth.framework_uuid(target),
    }
    every = generated.walk("/framework-crosswalks", **params)
    strong = generated.walk("/framework-crosswalks", **params, minJaccardScore=0.5)
    assert strong == [r for r in every if (r["jaccard"] or 0) >= 0.5]
    grade = every[0]["source"]["gradeLevel"][0]
    graded = generated.walk("/framework-crosswalks", **params, gradeLevel=grade)
    assert graded == [r for r in every if grade in r["source"]["gradeLevel"]]


def test_standard_crosswalks_include_derived(generated: Api, truth: Export) -> None:
    standards = sorted(s for s in truth.supports if truth.labels.get(s) == "StandardsFrameworkItem")
    checked = 0
    for s in standards[:25]:
        uuid = truth.nodes[s]["caseIdentifierUUID"]
        want = truth.counterparts(s)
        rows = generated.walk(
            f"/academic-standards/{uuid}/crosswalks", includeDerived="true", limit=3
        )
        got = {r["identifier"]: r for r in rows}
        assert set(got) == set(want), s
        for t, row in got.items():
            assert row["method"] == want[t]["method"]
            if row["method"] == "learning-components":
                assert _figures(row) == want[t]
        checked += len(rows)
    assert checked > 20


def test_default_crosswalks_are_byte_identical_without_the_flag(
    generated: Api, truth: Export
) -> None:
    (s, t), figures = next(iter(truth.published.items()))
    uuid = truth.nodes[s]["caseIdentifierUUID"]
    plain = generated.get(f"/academic-standards/{uuid}/crosswalks")
    off = generated.get(f"/academic-standards/{uuid}/crosswalks", includeDerived="false")
    assert plain.status_code == 200 and plain.content == off.content
    assert b'"method"' not in plain.content
    # As before: the other standard's record as served alone, then the four figures.
    other = generated.get(f"/academic-standards/{truth.nodes[t]['caseIdentifierUUID']}")
    row = next(r for r in plain.json()["data"] if r["identifier"] == t)
    assert list(row) == [*other.json(), "jaccard", "stateLCCount", "ccssLCCount", "sharedLCCount"]
    assert {k: row[k] for k in figures} == pytest.approx(figures)
    encoded = other.content[:-1] + b',"jaccard":'
    assert encoded in plain.content
    derived = generated.ok(f"/academic-standards/{uuid}/crosswalks", includeDerived="true")
    published = [r for r in derived["data"] if r["method"] == "published"]
    stored = {r["identifier"]: r for r in plain.json()["data"]}
    for row in published:
        base = {
            k: v for k, v in row.items() if k not in ("sourceLCCount", "targetLCCount", "method")
        }
        assert base == stored[row["identifier"]]  # published figures, as published


def test_coverage_equals_the_truth(generated: Api, truth: Export) -> None:
    curriculum = "im360"
    framework = max(_frameworks(truth), key=lambda f: len(truth.items(f)))
    uuid = truth.framework_uuid(framework)
    rows = generated.walk(
        f"/curriculums/{curriculum}/coverage", standardsFrameworkCaseIdentifierUUID=uuid, limit=50
    )
    items = truth.items(framework)
    assert {r["standard"]["identifier"] for r in rows} == items
    statuses = {"direct": 0, "crosswalk": 0, "none": 0}
    for row in rows:
        direct, via = truth.covered(row["standard"]["identifier"], curriculum)
        assert {c["identifier"] for c in row["direct"]} == direct
        assert {v["standard"]["identifier"] for v in row["viaCrosswalk"]} == via
        want = "direct" if direct else "crosswalk" if via else "none"
        assert row["status"] == want
        statuses[want] += 1
    assert all(statuses.values()), statuses
    summary = generated.ok(
        f"/curriculums/{curriculum}/coverage/summary", standardsFrameworkCaseIdentifierUUID=uuid
    )
    total = summary["total"]
    assert (total["direct"], total["viaCrosswalk"], total["notCovered"]) == (
        statuses["direct"], statuses["crosswalk"], statuses["none"])  # fmt: skip
    assert sum(d["standards"] for d in summary["byDomain"]) == len(items)


def test_bad_input(generated: Api, truth: Export) -> None:
    fws = _frameworks(truth)
    uuid = truth.framework_uuid(fws[0])
    unknown = "00000000-0000-4000-8000-000000000000"
    path = "/framework-crosswalks"
    error_of(generated.get(path, sourceFrameworkCaseIdentifierUUID=uuid,
                           targetFrameworkCaseIdentifierUUID=unknown), 404, "NotFoundError")  # fmt: skip
    same = generated.get(path, sourceFrameworkCaseIdentifierUUID=uuid,
                         targetFrameworkCaseIdentifierUUID=uuid.upper())  # fmt: skip
    assert "same" in error_of(same, 400, "ValidationError")["message"]
    error_of(generated.get(path, sourceFrameworkCaseIdentifierUUID=uuid), 400, "ValidationError")
    error_of(generated.get(path, sourceFrameworkCaseIdentifierUUID=uuid,
                           targetFrameworkCaseIdentifierUUID=truth.framework_uuid(fws[1]),
                           minJaccardScore="2"), 400, "ValidationError")  # fmt: skip
    subject = {f: truth.nodes[f]["academicSubject"] for f in fws}
    a, b = next((a, b) for a, b in itertools.permutations(fws, 2) if subject[a] != subject[b])
    params = {"sourceFrameworkCaseIdentifierUUID": truth.framework_uuid(a),
              "targetFrameworkCaseIdentifierUUID": truth.framework_uuid(b)}  # fmt: skip
    assert generated.ok(path, **params)["data"] == []
    zeros = generated.ok(path + "/summary", **params)
    assert zeros["pairs"] == 0 and all(r["withCounterpart"] == 0 for r in zeros["data"])
    cover = "/curriculums/nope/coverage"
    body = error_of(
        generated.get(cover, standardsFrameworkCaseIdentifierUUID=uuid), 400, "ValidationError"
    )
    assert "im360" in body["message"] and body["details"]["loaded"] == ["im360"]
    error_of(generated.get("/curriculums/im360/coverage",
                           standardsFrameworkCaseIdentifierUUID=unknown), 404, "NotFoundError")  # fmt: skip
    error_of(generated.get("/curriculums/im360/coverage"), 400, "ValidationError")


def test_pinned_release_answers_from_its_own_data(generated: Api, truth: Export) -> None:
    source, target = _same_subject_pairs(truth)[0]
    params = {"sourceFrameworkCaseIdentifierUUID": truth.framework_uuid(source),
              "targetFrameworkCaseIdentifierUUID": truth.framework_uuid(target)}  # fmt: skip
    response = generated.http.get(
        "/releases/1.0.0/knowledge-graph/v0/framework-crosswalks",
        params=params,
        headers={"x-api-key": generated.key},
    )
    assert response.status_code == 200
    assert response.json() == generated.ok("/framework-crosswalks", **params)


# The real sample: its Common Core standards have no learning components, so each gets the
# components of the California standards it is published as identical to; published
# crosswalks must still be served as published, and derived ones appear beside them.


@pytest.fixture(scope="module")
def sample_with_ccss_components(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if not (SAMPLE / "nodes.jsonl").is_file():
        pytest.skip(f"the real export sample is not at {SAMPLE}")
    out = tmp_path_factory.mktemp("sample-lc")
    (out / "nodes.jsonl").write_bytes((SAMPLE / "nodes.jsonl").read_bytes())
    lines = (SAMPLE / "relationships.jsonl").read_text().splitlines()
    supports: dict[str, list[str]] = {}
    for line in lines:
        r = json.loads(line)
        if r["label"] == "supports":
            supports.setdefault(r["target_identifier"], []).append(r["source_identifier"])
    added = []
    for line in lines:
        r = json.loads(line)
        if r["label"] == "hasStandardAlignment" and r["properties"]["jaccard"] == "1.0":
            for n, lc in enumerate(supports.get(r["source_identifier"], [])):
                added.append(json.dumps({
                    "type": "relationship", "identifier": f"{r['identifier']}-lc{n}",
                    "label": "supports", "properties": {"relationshipType": "supports"},
                    "source_identifier": lc, "source_labels": ["LearningComponent"],
                    "target_identifier": r["target_identifier"],
                    "target_labels": ["StandardsFrameworkItem"]}))  # fmt: skip
    (out / "relationships.jsonl").write_text("\n".join([*lines, *added]) + "\n")
    return out


def test_sample_published_as_published_derived_beside(
    sample_with_ccss_components: Path, tmp_path: Path, serve: Callable[[str], Api]
) -> None:
    truth = Export.read(sample_with_ccss_components)
    db = str(tmp_path / "s.db")
    load([str(sample_with_ccss_components)], db, "1.11.0")
    api = serve(db)
    fws = {truth.nodes[f]["jurisdiction"]: f for f in _frameworks(truth)}
    ca, ms = fws["California"], fws["Multi-State"]
    want = truth.pairs(truth.items(ca), truth.items(ms))
    rows = api.walk("/framework-crosswalks", limit=500,
                    sourceFrameworkCaseIdentifierUUID=truth.framework_uuid(ca),
                    targetFrameworkCaseIdentifierUUID=truth.framework_uuid(ms))  # fmt: skip
    got = {(r["source"]["identifier"], r["target"]["identifier"]): r for r in rows}
    assert set(got) == set(want)
    methods = {r["method"] for r in rows}
    assert methods == {"published", "learning-components"}
    for key, row in got.items():
        if want[key]["method"] == "published":
            assert row["jaccard"] == pytest.approx(want[key]["jaccard"])
            assert row["sourceLCCount"] == want[key]["stateLCCount"]
            assert row["targetLCCount"] == want[key]["ccssLCCount"]
        else:
            assert _figures(row) == want[key]


# The explorer's Compare frameworks and Coverage views, in Chromium.


def _explorer(page: object, api: Api, path: str) -> None:
    page.goto(f"{api.server.url}/explore")  # type: ignore[attr-defined]
    page.fill("#key", api.key)  # type: ignore[attr-defined]
    page.click("text=Use key")  # type: ignore[attr-defined]
    page.wait_for_selector("#fws li a")  # type: ignore[attr-defined]
    page.goto(f"{api.server.url}/explore{path}")  # type: ignore[attr-defined]


def test_explorer_compares_two_frameworks(page: object, generated: Api, truth: Export) -> None:
    from tests.browser import shot

    source, target = _same_subject_pairs(truth)[0]
    want = truth.pairs(truth.items(source), truth.items(target))
    path = (f"/compare?source={truth.framework_uuid(source)}"
            f"&target={truth.framework_uuid(target)}")  # fmt: skip
    _explorer(page, generated, path)
    page.wait_for_selector("#pairs li")  # type: ignore[attr-defined]
    matched = {s for s, _ in want}
    assert page.locator("#pairs > li.matched").count() == len(matched)  # type: ignore[attr-defined]
    unmatched = len(truth.items(source)) - len(matched)
    assert page.locator("#pairs > li.unmatched").count() == unmatched  # type: ignore[attr-defined]
    assert page.locator("#sum tbody tr").count() >= 1  # type: ignore[attr-defined]
    assert page.locator("#pairs .bar").count() >= 1  # type: ignore[attr-defined]
    shot(page, "compare-frameworks", "generated", full_page=False)  # 14 s for the whole list
    # Reachable from a framework's page.
    page.goto(f"{generated.server.url}/explore/frameworks/{truth.framework_uuid(source)}")  # type: ignore[attr-defined]
    page.click("text=Compare with another framework")  # type: ignore[attr-defined]
    page.wait_for_selector("#sum table")  # type: ignore[attr-defined]


def test_explorer_shows_coverage_grid(page: object, generated: Api, truth: Export) -> None:
    from tests.browser import shot

    framework = max(_frameworks(truth), key=lambda f: len(truth.items(f)))
    _explorer(page, generated, f"/coverage?framework={truth.framework_uuid(framework)}")
    page.wait_for_selector("#grid button.cell")  # type: ignore[attr-defined]
    assert page.input_value("#curriculum") == "im360"  # type: ignore[attr-defined]
    summary = generated.ok(
        "/curriculums/im360/coverage/summary",
        standardsFrameworkCaseIdentifierUUID=truth.framework_uuid(framework),
    )
    total = summary["total"]
    covered = total["direct"] + total["viaCrosswalk"]
    assert f"{covered} of {total['standards']} standards covered" in page.inner_text("#totals")  # type: ignore[attr-defined]
    page.click("#grid button.cell >> nth=0")  # type: ignore[attr-defined]
    page.wait_for_selector("#cell li")  # type: ignore[attr-defined]
    assert page.locator("#cell .chip").count() >= 1  # type: ignore[attr-defined]
    shot(page, "coverage", "generated")


def test_framework_items_row_equals_the_records(generated_db: str, truth: Export) -> None:
    """The one row per framework that comparisons read says what the records say (and a
    release without it is read from the records)."""
    from edukg.services.crosswalks import component_sets, framework_items, members
    from edukg.store import open_store
    from edukg.store.base import Members

    store = open_store(generated_db, refresh=0)
    try:
        for framework in _frameworks(truth):
            for query in (Members(framework), Members(framework, 1 << 5, None, "Standard")):
                items, sets = framework_items(store, query)
                records = members(store, query)
                assert list(items) == list(records)
                assert [i.brief() for i in items.values()] == [
                    r.brief() for r in records.values()]  # fmt: skip
                assert sets == component_sets(store, records)
    finally:
        store.close()
