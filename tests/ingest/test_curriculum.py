"""Positions and curricula read from curriculum nodes (ingest/curriculum.py)."""

from __future__ import annotations

from edukg.ingest import curriculum


def test_position_from_the_field_or_the_ordinal_name() -> None:
    assert curriculum.position_of({"position": 2}) == 2
    assert curriculum.position_of({"ordinalName": "Lesson 5"}) == 4
    assert curriculum.position_of({"ordinalName": "Section B"}) == 1
    assert curriculum.position_of({}) is None
