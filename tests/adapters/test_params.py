"""Request parameters read from their declarations (adapters/params.py)."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Annotated

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
from edukg.model.errors import ValidationError
from edukg.model.vocabulary import (
    UUID_PATTERN,
)

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
