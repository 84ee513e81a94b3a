"""The one Store contract: every backend passes the same tests on the same data."""

from __future__ import annotations

import secrets
from collections.abc import Iterator

import numpy as np
import orjson
import pytest

from edukg.cli import build_demo
from edukg.ingest.demo import demo_case_uuid, demo_framework_case_uuid, demo_lines, demo_node_id
from edukg.model.case_ids import definition_id
from edukg.model.embedding import DIMENSIONS
from edukg.model.vocabulary import COMPONENT, FRAMEWORK, LESSON, STANDARD, grade_mask
from edukg.store import backend_of, open_key_store, open_store
from edukg.store.base import (
    ACTIVITIES,
    ALIGNED_TO,
    CASE_DEFINITIONS,
    CHILDREN,
    COMPONENTS,
    CROSSWALK,
    FRAMEWORK_OF,
    LESSON_META,
    SCOPE_SUMMARY,
    SUPPORTED,
    Linked,
    Listed,
    Matching,
    Members,
    OfKind,
    Search,
    Store,
    every_row,
)


@pytest.fixture
def store(any_demo_db: str) -> Iterator[Store]:
    opened = open_store(any_demo_db, refresh=0)
    yield opened
    opened.close()


def walk(store: Store, query: Members | Linked | Listed | OfKind, limit: int) -> list[str]:
    """Every key of `query`, read `limit` at a time (the walk services use)."""
    return [key for key, _ in every_row(store, query, limit)]


def test_info(store: Store) -> None:
    info = store.info()
    assert info is not None
    assert info.data_version == "demo" and len(info.content_id) == 64
    assert info.counts["standard"] == 92 and info.counts["lesson"] == 8


def test_by_identifier_respects_kind(store: Store) -> None:
    framework = store.by_case_uuid(demo_framework_case_uuid("ms-math"), (FRAMEWORK,))
    assert framework is not None and framework.kind == FRAMEWORK
    assert store.by_identifier(framework.identifier, FRAMEWORK) == framework
    assert store.by_identifier(framework.identifier, STANDARD) is None
    assert store.by_identifier("no-such-node", COMPONENT) is None


def test_by_case_uuid(store: Store) -> None:
    found = store.by_case_uuid(demo_case_uuid("ms-math", "3.NF.A.1"), (STANDARD,))
    assert found is not None
    assert orjson.loads(found.doc)["statementCode"] == "3.NF.A.1"
    assert store.by_case_uuid(demo_case_uuid("ms-math", "3.NF.A.1"), (FRAMEWORK,)) is None


@pytest.mark.parametrize("limit", [1, 3, 1000])
def test_members_paging_is_complete_and_ordered(store: Store, limit: int) -> None:
    fw = store.by_case_uuid(demo_framework_case_uuid("ms-math"), (FRAMEWORK,))
    assert fw is not None
    keys = walk(store, Members(fw.identifier), limit)
    assert len(keys) == 69 and keys == sorted(keys, key=str.encode)
    grade3 = walk(store, Members(fw.identifier, grades_mask=1 << 4), limit)  # bit 4: grade 3
    assert 0 < len(grade3) < 69


def test_linked_and_listed(store: Store) -> None:
    cluster = store.by_case_uuid(demo_case_uuid("ms-math", "3.NF.A"), (STANDARD,))
    assert cluster is not None
    children = store.page(Linked(CHILDREN, cluster.identifier), None, 10)
    assert len(children) == 3
    state = store.by_case_uuid(demo_case_uuid("vt-math", "M.4.NF.2"), (STANDARD,))
    assert state is not None
    crosswalk = store.page(Listed(CROSSWALK, state.identifier), None, 10)
    assert len(crosswalk) == 1 and orjson.loads(crosswalk[0][1])["jaccard"] == 0.5
    assert store.page(Listed(CROSSWALK, state.identifier, label="Texas"), None, 10) == []
    assert store.page(Listed(CROSSWALK, state.identifier, min_score=0.6), None, 10) == []
    activities = walk(store, Listed(ACTIVITIES, demo_node_id("lesson3")), 1)
    assert len(activities) == 4 and activities == sorted(activities)


def test_of_kind_filters(store: Store) -> None:
    assert len(walk(store, OfKind(FRAMEWORK), 2)) == 4
    assert len(walk(store, OfKind(FRAMEWORK, current_only=True), 2)) == 3
    assert len(walk(store, OfKind(FRAMEWORK, jurisdiction="Vermont"), 2)) == 2
    assert len(walk(store, OfKind(COMPONENT, subject="English Language Arts"), 2)) == 6
    assert len(walk(store, OfKind(LESSON), 100)) == 8


def test_lookup(store: Store) -> None:
    doc = store.lookup(SCOPE_SUMMARY, demo_node_id("course"))
    assert doc is not None and orjson.loads(doc)["view"] == "summary"
    assert store.lookup(SCOPE_SUMMARY, "no-course") is None


def test_export_lines_are_the_loaded_records(store: Store) -> None:
    exported = [orjson.loads(x) for r in (False, True) for x in store.export_lines(r)]
    original = [orjson.loads(x) for x in demo_lines()]
    assert sorted(exported, key=lambda r: r["identifier"]) == sorted(
        original, key=lambda r: r["identifier"]
    )


def test_nothing_loaded(fresh_db: str) -> None:
    empty = open_store(fresh_db, refresh=0)
    try:
        assert empty.info() is None
        assert empty.by_identifier("x", STANDARD) is None
        assert empty.page(OfKind(FRAMEWORK), None, 10) == []
        assert list(empty.export_lines(False)) == []
    finally:
        empty.close()


def test_search_ranks_within_the_filters(store: Store) -> None:
    hits = store.search(Search(STANDARD, ("fractions",)), 50)
    assert hits and all(orjson.loads(doc)["identifier"] == i for i, doc, _ in hits)
    scores = [score for _, _, score in hits]
    assert scores == sorted(scores, reverse=True)
    narrow = store.search(Search(STANDARD, ("fractions",), grades_mask=grade_mask(["3"])), 50)
    assert narrow and {i for i, _, _ in narrow} < {i for i, _, _ in hits}
    assert all("3" in orjson.loads(doc)["gradeLevel"] for _, doc, _ in narrow)
    assert store.search(Search(STANDARD, ("zzzzqqq",)), 50) == []
    assert store.search(Search(COMPONENT, ("fractions",)), 5)


def test_candidates_are_the_filtered_records_with_unit_vectors(store: Store) -> None:
    everything = store.candidates(Search(STANDARD, ()))
    assert everything is not None  # the demo database is indexed
    assert len(everything.identifiers) == everything.vectors.shape[0] > 0
    assert everything.vectors.shape[1] == DIMENSIONS
    norms = np.linalg.norm(np.asarray(everything.vectors, dtype=np.float32), axis=1)
    assert np.allclose(norms, 1.0, atol=1e-3)
    grade3 = store.candidates(Search(STANDARD, (), grades_mask=grade_mask(["3"])))
    assert grade3 is not None and set(grade3.identifiers) < set(everything.identifiers)


def test_matching_by_code_text_and_filters(store: Store) -> None:
    exact = store.page(Matching(STANDARD, code="3.NF.A.1"), None, 10)
    assert [orjson.loads(doc)["statementCode"] for _, doc in exact] == ["3.NF.A.1"] * len(exact)
    prefix = store.page(Matching(STANDARD, code="3.NF", code_prefix="3.NF."), None, 100)
    assert len(prefix) > len(exact)
    standard_only = store.page(
        Matching(STANDARD, code_prefix="3.NF.", statement_type="Standard"), None, 100
    )
    assert standard_only and all(
        orjson.loads(doc)["normalizedStatementType"] == "Standard" for _, doc in standard_only
    )
    assert (
        store.page(Matching(STANDARD, code="3.NF.A.1", grades_mask=grade_mask(["4"])), None, 10)
        == []
    )
    words = store.page(Matching(STANDARD, words=("fraction",)), None, 100)
    assert words and all("fraction" in orjson.loads(doc)["description"].lower() for _, doc in words)


def test_matching_any_of_several_codes(store: Store) -> None:
    """`codes`: any of them, as the statement code or its alternate, with the filters."""
    wanted = ("3.NF.A.1", "3.NF.A.2", "NO.SUCH.CODE")
    found = store.page(Matching(STANDARD, codes=wanted), None, 100)
    assert {orjson.loads(doc)["statementCode"] for _, doc in found} == {"3.NF.A.1", "3.NF.A.2"}
    one = store.page(Matching(STANDARD, codes=("3.NF.A.1",)), None, 100)
    assert one == store.page(Matching(STANDARD, code="3.NF.A.1"), None, 100)
    assert store.page(Matching(STANDARD, codes=wanted, grades_mask=grade_mask(["4"])), None,
                      10) == []  # fmt: skip


def test_keys_create_verify_list_revoke(any_demo_db: str) -> None:
    keys = open_key_store(any_demo_db)
    try:
        name = f"contract-{secrets.token_hex(4)}"
        key = keys.create(name, rate=2.0, burst=5)
        who = keys.verify(key)
        assert who is not None and who.name == name
        assert keys.confirm() is True
        listed = {info.name: info for info in keys.list()}
        assert listed[name].last4 == key[-4:] and listed[name].revoked_at is None
        assert keys.verify(key + "x") is None
        assert keys.revoke(name) is True
        assert keys.verify(key) is None
        assert keys.revoke(name) is False
        assert keys.derived_secret(b"a") == keys.derived_secret(b"a") != keys.derived_secret(b"b")
    finally:
        keys.close()


def test_writer_switches_only_at_commit(fresh_db: str) -> None:
    build_demo(fresh_db)
    first = open_store(fresh_db, refresh=0)
    try:
        before = first.info()
        assert before is not None
        loader = backend_of(fresh_db).loader()
        loader.add([("n1", "StandardsFramework", FRAMEWORK, b"{}")], [], [], [])
        loader.abort()  # a load given up half way leaves the served version as it was
        again = open_store(fresh_db, refresh=0)
        try:
            info = again.info()
            assert info is not None and info.content_id == before.content_id
            assert again.page(OfKind(FRAMEWORK), None, 100) == first.page(
                OfKind(FRAMEWORK), None, 100
            )
        finally:
            again.close()
    finally:
        first.close()


def test_lookup_many_is_lookup_for_each(store: Store) -> None:
    lessons = [demo_node_id(f"lesson{n}") for n in range(1, 4)]
    many = store.lookup_many(LESSON_META, [*lessons, "no-such-lesson", lessons[0]])
    assert set(many) == set(lessons)
    for lesson in lessons:
        assert many[lesson] == store.lookup(LESSON_META, lesson)
    assert store.lookup_many(LESSON_META, []) == {}


def test_links_many_is_linked_for_each(store: Store) -> None:
    fw = store.by_case_uuid(demo_framework_case_uuid("ms-math"), (FRAMEWORK,))
    assert fw is not None
    members = walk(store, Members(fw.identifier), 1000)
    pairs = store.links_many(CHILDREN, [*members, "no-such-node", members[0]])
    assert pairs == sorted(pairs, key=lambda p: (p[0].encode(), p[1].encode()))
    for node in members[:20]:
        assert [o for n, o in pairs if n == node] == walk(store, Linked(CHILDREN, node), 1000)
    assert store.links_many(CHILDREN, []) == []
    # Every member names its framework; supports reads both ways.
    assert {o for _, o in store.links_many(FRAMEWORK_OF, members)} == {fw.identifier}
    components = store.links_many(COMPONENTS, members)
    assert components, "the demo's standards have learning components"
    back = store.links_many(SUPPORTED, [lc for _, lc in components])
    assert {(s, lc) for s, lc in components} <= {(s, lc) for lc, s in back}


def test_rows_many_is_listed_for_each(store: Store) -> None:
    fw = store.by_case_uuid(demo_framework_case_uuid("ms-math"), (FRAMEWORK,))
    assert fw is not None
    members = walk(store, Members(fw.identifier), 1000)
    relation = next(iter(ALIGNED_TO.values()))
    rows = store.rows_many(relation, members)
    assert rows, "the demo aligns lessons to its standards"
    for node in {n for n, _, _ in rows}:
        listed = store.page(Listed(relation, node), None, 1000)
        assert [(k, d) for n, k, d in rows if n == node] == listed
    assert store.rows_many(relation, ["no-such-node"]) == []


def _export_edges(store: Store) -> dict[str, dict[str, object]]:
    lines = (orjson.loads(x) for x in store.export_lines(relationships=True))
    return {r["identifier"]: r for r in lines}


def test_edges_by_identifier_and_of_standards(store: Store) -> None:
    exported = _export_edges(store)
    some = sorted(exported)[:5]
    found = store.edges([*some, "no-such-edge"])
    assert [e.identifier for e in found] == some
    for edge in found:
        line = orjson.loads(edge.line)
        assert (edge.label, edge.source, edge.target) == (
            line["label"], line["source_identifier"], line["target_identifier"]
        )  # fmt: skip
    framework = store.by_case_uuid(demo_framework_case_uuid("ms-math"), (FRAMEWORK,))
    assert framework is not None
    members = walk(store, Members(framework.identifier), 100)
    nodes = {framework.identifier, *members}
    of = store.edges_of(sorted(nodes))
    ends = [e for r in exported.values() for e in (r["source_identifier"], r["target_identifier"])]
    kinds = {i: f.kind for i, f in store.by_identifiers([str(e) for e in ends]).items()}
    # Every relationship of these standards to a standard or framework, each once; none to
    # a learning component or a lesson.
    expected = {
        i for i, r in exported.items()
        if (r["source_identifier"] in nodes or r["target_identifier"] in nodes)
        and kinds.get(str(r["source_identifier"]), FRAMEWORK) in (STANDARD, FRAMEWORK)
        and kinds.get(str(r["target_identifier"]), FRAMEWORK) in (STANDARD, FRAMEWORK)
        and r["label"] != "supports"
    }  # fmt: skip
    assert [e.identifier for e in of] == sorted(expected)
    assert {e.label for e in of} >= {"hasChild"}
    assert store.edges_of([]) == [] and store.edges([]) == []


def test_by_identifiers_is_by_identifier_for_each(store: Store) -> None:
    framework = store.by_case_uuid(demo_framework_case_uuid("ms-math"), (FRAMEWORK,))
    assert framework is not None
    members = walk(store, Members(framework.identifier), 100)[:7]
    found = store.by_identifiers([framework.identifier, *members, "nothing", members[0]])
    assert set(found) == {framework.identifier, *members}
    for identifier, record in found.items():
        one = store.by_identifier(identifier, record.kind)
        assert one is not None and bytes(one.doc) == bytes(record.doc)


def test_case_definitions_name_the_item_types(store: Store) -> None:
    types = set()
    for line in store.export_lines(relationships=False):
        record = orjson.loads(line)
        if "StandardsFrameworkItem" in record["labels"]:
            value = record["properties"].get("statementType")
            if value:
                types.add(value)
    assert types
    for name in types:
        row = store.lookup(CASE_DEFINITIONS, definition_id("CFItemTypes", name))
        assert row is not None and orjson.loads(row) == {"kind": "CFItemTypes", "name": name}
    assert store.lookup(CASE_DEFINITIONS, definition_id("CFItemTypes", "No such type")) is None


def test_indexing_progress_until_the_index_is_complete(fresh_db: str) -> None:
    build_demo(fresh_db)  # loaded, not indexed (an indexed one: tests/test_cli.py)
    unindexed = open_store(fresh_db, refresh=0)
    try:
        done, total = unindexed.indexing() or (-1, -1)
        assert done == 0 and total > 100
        # Search within one framework: its members only, on both backends.
        framework = unindexed.by_case_uuid(demo_framework_case_uuid("ms-math"), (FRAMEWORK,))
        assert framework is not None
        within = unindexed.search(
            Search(STANDARD, ("fractions",), framework=framework.identifier), 50
        )
        members = set(walk(unindexed, Members(framework.identifier), 1000))
        assert within and {i for i, _, _ in within} <= members
    finally:
        unindexed.close()
