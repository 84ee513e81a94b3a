"""The vocabulary's small rules (model/vocabulary.py)."""

from __future__ import annotations

from edukg.model import vocabulary
from edukg.model.vocabulary import grade_mask


def test_grade_mask_is_one_bit_per_known_grade() -> None:
    assert grade_mask(None) == 0
    assert grade_mask(["K"]) & grade_mask(["K", "1"]) == grade_mask(["K"])
    assert grade_mask(["3"]) & grade_mask(["4"]) == 0
    assert grade_mask(["not a grade"]) == 0


def test_curriculum_of_reads_the_course_code() -> None:
    assert vocabulary.curriculum_of({"courseCode": "im360:6"}) == "im360"
    assert vocabulary.curriculum_of({"courseCode": "none"}) is None
