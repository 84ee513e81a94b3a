"""The one Store contract: every backend passes the same tests on the same data."""

from __future__ import annotations

from collections.abc import Iterator

import orjson
import pytest

from edukg.ingest.demo import demo_case_uuid, demo_framework_case_uuid, demo_lines, demo_node_id
from edukg.model.vocabulary import COMPONENT, FRAMEWORK, LESSON, STANDARD
from edukg.store import open_store
from edukg.store.base import (
    ACTIVITIES,
    CHILDREN,
    CROSSWALK,
    SCOPE_SUMMARY,
    Linked,
    Listed,
    Members,
    OfKind,
    Store,
)


@pytest.fixture
def store(demo_db: str) -> Iterator[Store]:
    opened = open_store(demo_db, refresh=0)
    yield opened
    opened.close()


def walk(store: Store, query: Members | Linked | Listed | OfKind, limit: int) -> list[str]:
    keys: list[str] = []
    after = None
    while True:
        rows = store.page(query, after, limit)
        keys.extend(k for k, _ in rows)
        if len(rows) < limit:
            return keys
        after = rows[-1][0]


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
