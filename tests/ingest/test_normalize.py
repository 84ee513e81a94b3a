"""Typing and encoding the export's values (ingest/normalize.py)."""

from __future__ import annotations

from typing import Any

import orjson
import pytest

from edukg.ingest.normalize import BadValue, encode, typed
from edukg.model.records import with_children, with_fields
from edukg.model.vocabulary import (
    STANDARD,
)


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
