"""Typed rows encode as served (model/alignment.py, model/framework_rows.py)."""

from __future__ import annotations

import orjson

from edukg.model.alignment import appended, encode
from edukg.model.framework_rows import (
    CoverageCounts,
    CoverageSummary,
    DerivedStandardCrosswalk,
    GradeCoverage,
)

_COUNTS = {"standards": 3, "direct": 1, "viaCrosswalk": 1, "notCovered": 1}


def _summary(note: str | None) -> CoverageSummary:
    return CoverageSummary(
        curriculumId="demo", framework={"name": "F"}, alignedItems=0 if note else 4,
        total=CoverageCounts(**_COUNTS), byGrade=[GradeCoverage(gradeLevel="3", **_COUNTS)],
        byDomain=[], note=note,
    )  # fmt: skip


def test_fields_come_in_declared_order() -> None:
    row = orjson.loads(encode(_summary(None)))
    assert list(row) == ["curriculumId", "framework", "alignedItems", "total", "byGrade",
                         "byDomain"]  # fmt: skip
    assert list(row["byGrade"][0]) == ["gradeLevel", *_COUNTS]


def test_an_omittable_field_is_left_out_without_a_value_and_written_with_one() -> None:
    assert "note" not in orjson.loads(encode(_summary(None)))
    assert orjson.loads(encode(_summary("why")))["note"] == "why"


def test_an_extension_is_appended_to_its_record() -> None:
    figures = DerivedStandardCrosswalk(
        jaccard=0.5, stateLCCount=None, ccssLCCount=None, sharedLCCount=2, sourceLCCount=3,
        targetLCCount=3, method="learning-components",
    )  # fmt: skip
    served = orjson.loads(appended(b'{"identifier":"x","hasChildren":false}', figures))
    assert list(served)[:2] == ["identifier", "hasChildren"]
    assert served["jaccard"] == 0.5 and served["method"] == "learning-components"
