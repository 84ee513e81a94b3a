"""Unit tests of the pure modules: parameters, cursors, normalising, curriculum rules.

No server, no database: each function is called with plain values, so a failure names
the rule that broke rather than an HTTP answer somewhere downstream.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Annotated, Any

import orjson
import pytest

from edukg.adapters.params import (
    Cursor,
    GradeLevels,
    IncludeNonCurrent,
    Limit,
    Param,
    Uuid,
    declared,
    parse,
)
from edukg.ingest import curriculum, derive
from edukg.ingest.normalize import BadValue, encode, typed
from edukg.model import vocabulary
from edukg.model.errors import ValidationError
from edukg.model.records import with_children, with_fields
from edukg.model.vocabulary import (
    COURSE,
    CURRICULA,
    GROUPING,
    LESSON,
    STANDARD,
    UUID_PATTERN,
    grade_mask,
)
from edukg.services.pagination import decode_cursor, encode_cursor, page_body, query_key
from edukg.store.base import CROSSWALK, LESSON_META

SECRET = b"s" * 32
CONTENT = "c" * 64
_ID = "6bd8552e-6f8f-4538-bf33-d016ac080178"


@dataclass(frozen=True, kw_only=True)
class _Sample:
    """One parameter of every kind, declared as an operation declares them."""

    id: Annotated[Uuid, Param("an id", location="path")]
    gradeLevel: GradeLevels = ()
    minScore: Annotated[float | None, Param("a score", minimum=0, maximum=1)] = None
    includeNonCurrent: IncludeNonCurrent = False
    name: Annotated[str | None, Param("a name", max_length=5)] = None
    limit: Limit = 100
    cursor: Cursor = None


# Parameters


def test_a_declaration_reads_as_parameters() -> None:
    params = {p.name: p for p in declared(_Sample)}
    assert list(params) == [f.name for f in dataclasses.fields(_Sample)]
    assert (params["id"].kind, params["id"].location, params["id"].required) == (
        "uuid",
        "path",
        True,
    )
    assert (params["gradeLevel"].kind, params["gradeLevel"].enum) == ("enum", "GradeLevel")
    assert params["gradeLevel"].repeat and not params["gradeLevel"].required
    assert (params["minScore"].kind, params["minScore"].maximum) == ("number", 1)
    assert (params["includeNonCurrent"].kind, params["includeNonCurrent"].default) == (
        "boolean",
        False,
    )
    assert (params["limit"].kind, params["limit"].default) == ("integer", 100)
    assert (params["name"].kind, params["name"].max_length) == ("string", 5)


def test_parse_types_each_kind() -> None:
    got = parse(
        _Sample,
        {"gradeLevel": ["3", "K"], "minScore": ["0.5"], "includeNonCurrent": ["TRUE"]},
        {"id": _ID.upper()},
    )
    assert got == _Sample(
        id=_ID, gradeLevel=("3", "K"), minScore=0.5, includeNonCurrent=True, limit=100
    )


@pytest.mark.parametrize(
    ("name", "raw", "words"),
    [
        ("minScore", "1.5", "minScore"),
        ("minScore", "nan", "minScore"),
        ("minScore", "١", "minScore"),  # not ASCII digits
        ("limit", "0", "limit"),
        ("limit", "1e3", "limit"),
        ("includeNonCurrent", "yes", "true or false"),
        ("gradeLevel", "13", "Input should be"),
        ("name", "toolong", "longer than 5"),
        ("name", "a\x00b", "NUL"),
    ],
)
def test_parse_refuses_bad_values(name: str, raw: str, words: str) -> None:
    with pytest.raises(ValidationError) as caught:
        parse(_Sample, {name: [raw]}, {"id": _ID})
    assert words in caught.value.message
    assert (caught.value.details or {})["parameter"] == name


def test_parse_refuses_a_scalar_given_twice_and_a_bad_uuid() -> None:
    with pytest.raises(ValidationError, match="given 2 times"):
        parse(_Sample, {"limit": ["1", "2"]}, {"id": _ID})
    with pytest.raises(ValidationError, match="valid format looks like"):
        parse(_Sample, {}, {"id": "not-a-uuid"})
    assert UUID_PATTERN.match(_ID)


def test_an_empty_cursor_is_the_first_page() -> None:
    assert parse(_Sample, {"cursor": [""]}, {"id": _ID}).cursor is None


# Cursors


def test_cursor_round_trip_and_refusals() -> None:
    scope = query_key("listThings", {"subject": "Mathematics"})
    cursor = encode_cursor("id-7", CONTENT, scope, SECRET)
    assert decode_cursor(cursor, CONTENT, scope, SECRET) == "id-7"
    assert decode_cursor(None, CONTENT, scope, SECRET) is None
    with pytest.raises(ValidationError, match="not a cursor this service issued"):
        decode_cursor(cursor, CONTENT, scope, b"x" * 32)  # another deployment's secret
    with pytest.raises(ValidationError, match="not a cursor this service issued"):
        decode_cursor("%%%", CONTENT, scope, SECRET)
    with pytest.raises(ValidationError) as stale:
        decode_cursor(cursor, "d" * 64, scope, SECRET)
    assert stale.value.details == {"reason": "stale_cursor"}
    other = query_key("listThings", {"subject": "Science"})
    with pytest.raises(ValidationError) as mismatch:
        decode_cursor(cursor, CONTENT, other, SECRET)
    assert mismatch.value.details == {"reason": "cursor_query_mismatch"}


def test_scope_ignores_the_order_of_filters() -> None:
    assert query_key("op", {"a": 1, "b": 2}) == query_key("op", {"b": 2, "a": 1})


def test_page_body_is_the_envelope() -> None:
    rows = [("a", b'{"n":1}'), ("b", b'{"n":2}'), ("c", b'{"n":3}')]
    body = orjson.loads(page_body(rows, 2, CONTENT, "q", SECRET))
    assert body["data"] == [{"n": 1}, {"n": 2}]
    assert body["pagination"]["hasMore"] is True
    assert decode_cursor(body["pagination"]["nextCursor"], CONTENT, "q", SECRET) == "b"
    last = orjson.loads(page_body(rows[:1], 2, CONTENT, "q", SECRET))
    assert last["pagination"] == {"limit": 2, "nextCursor": None, "hasMore": False}


# Normalising


def test_typed_decodes_the_exports_encoded_values() -> None:
    props = {
        "gradeLevel": '["3","4"]',
        "isCurrent": "True",
        "jaccard": "0.5",
        "position": "3.0",
        "curriculumAlignmentType": "addressing",
        "name": "kept as is",
    }
    assert typed(props) == {
        "gradeLevel": ["3", "4"],
        "isCurrent": True,
        "jaccard": 0.5,
        "position": 3,
        "curriculumAlignmentType": ["addressing"],
        "name": "kept as is",
    }
    plain = {"name": "x"}
    assert typed(plain) is plain  # nothing to type: no copy


@pytest.mark.parametrize(
    "props",
    [{"gradeLevel": "[broken"}, {"isCurrent": "maybe"}, {"position": "third"}],
)
def test_typed_refuses_values_it_cannot_type(props: dict[str, Any]) -> None:
    with pytest.raises(BadValue):
        typed(props)


def test_encode_writes_every_field_and_with_children_flips_the_last() -> None:
    doc = encode(STANDARD, "id-1", {"statementCode": "3.NF.A.1", "extra": 1})
    record = orjson.loads(doc)
    assert record["identifier"] == "id-1"
    assert record["statementCode"] == "3.NF.A.1"
    assert list(record)[-1] == "hasChildren"
    assert record["hasChildren"] is False
    assert orjson.loads(with_children(doc))["hasChildren"] is True
    assert orjson.loads(with_fields(doc, {"score": 0.5}))["score"] == 0.5
    assert with_fields(doc, {}) == doc


def test_grade_mask_is_one_bit_per_known_grade() -> None:
    assert grade_mask(None) == 0
    assert grade_mask(["K"]) & grade_mask(["K", "1"]) == grade_mask(["K"])
    assert grade_mask(["3"]) & grade_mask(["4"]) == 0
    assert grade_mask(["not a grade"]) == 0


# Curriculum rules


def test_position_and_curriculum_of() -> None:
    assert curriculum.position_of({"position": 2}) == 2
    assert curriculum.position_of({"ordinalName": "Lesson 5"}) == 4
    assert curriculum.position_of({"ordinalName": "Section B"}) == 1
    assert curriculum.position_of({}) is None
    assert vocabulary.curriculum_of({"courseCode": "im360:6"}) == "im360"
    assert vocabulary.curriculum_of({"courseCode": "none"}) is None


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
