"""Derived rows: curriculum names and crosswalk figures (ingest/derive.py)."""

from __future__ import annotations

from typing import Any

import orjson

from edukg.ingest import derive
from edukg.model.vocabulary import (
    COURSE,
    CURRICULA,
    GROUPING,
    LESSON,
)
from edukg.store.base import CROSSWALK, LESSON_META


def _node(identifier: str, kind: str, **props: Any) -> tuple[str, str, bytes]:
    line = {"identifier": identifier, "properties": {"courseCode": "demo:6", **props}}
    return identifier, kind, orjson.dumps(line)


def test_curriculum_rows_name_lessons_and_list_curricula() -> None:
    nodes = [
        _node("c", COURSE, name="Course"),
        _node("u", GROUPING, ordinalName="Unit 2"),
        _node("l", LESSON, ordinalName="Lesson 3", position="2"),
    ]
    docs, rows = derive.curriculum_rows(nodes, [("c", "u"), ("u", "l")], [], [])
    assert {identifier for identifier, *_ in docs} == {"c", "u", "l"}
    meta = {row[1]: orjson.loads(row[5]) for row in rows if row[0] == LESSON_META}
    assert meta["l"]["fullOrdinalName"] == "Grade 6, Unit 2, Lesson 3"
    assert [row[2] for row in rows if row[0] == CURRICULA] == ["demo"]


def test_crosswalk_rows_go_both_ways_with_the_figures() -> None:
    source = (
        "s", "t", 0.5, 4, 5, 3, b'{"identifier":"s"}', "California",
        b'{"identifier":"t"}', "Multi-State",
    )  # fmt: skip
    rows = list(derive.crosswalk_rows([source]))
    assert [(r[0], r[1], r[2], r[3]) for r in rows] == [
        (CROSSWALK, "s", "t", "Multi-State"),
        (CROSSWALK, "t", "s", "California"),
    ]
    assert orjson.loads(rows[0][5]) == {
        "identifier": "t",
        "jaccard": 0.5,
        "stateLCCount": 4,
        "ccssLCCount": 5,
        "sharedLCCount": 3,
    }
