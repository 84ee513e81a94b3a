"""One profile per task (align, check, similar): the channels' weights, the calibration,
the floors and the ranking's version, as data (model/alignment_profiles.json), read once.

Takes nothing; gives `profiles()`, typed. The stages read their constants here and
nowhere else, so that a change of weights is a change of data with its version beside it.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any, Literal


@dataclass(frozen=True)
class Weights:
    """How much each channel counts (0: not used)."""

    statement: float
    components: float
    words: float
    domain: float
    grade_prior: float  # of the log of the grade consensus
    # The learned stage's channels: the texts written for each standard, against the
    # passages and against the whole text.
    examples: float = 0.0
    whole: float = 0.0
    classifier: float = 0.0


@dataclass(frozen=True)
class Calibration:
    """A logistic map from two of a result's values (the first: its share of the
    evidence, or its fused score; the second: a raw similarity) to the chance that it is
    a standard the text's publisher would tag."""

    first: float
    second: float
    bias: float

    def score(self, first: float, second: float) -> float:
        z = self.first * first + self.second * second + self.bias
        return 1.0 / (1.0 + math.exp(-max(-30.0, min(30.0, z))))


@dataclass(frozen=True)
class CheckCalibration:
    """A logistic map from the fused score of a standard's family, its best learning
    component's similarity and minus the log of its rank to the chance that the text's
    publisher tagged it."""

    fused: float
    component: float
    rank: float
    bias: float

    def score(self, fused: float, component: float, rank: int) -> float:
        z = self.fused * fused + self.component * component - self.rank * math.log(rank) + self.bias
        return 1.0 / (1.0 + math.exp(-max(-30.0, min(30.0, z))))


@dataclass(frozen=True)
class Choice:
    """How results are chosen: below `min_score` a result is not answered, and the list
    either stops there or skips it and goes on."""

    min_score: float
    past_floor: Literal["stop", "skip"]


@dataclass(frozen=True)
class AlignProfile:
    version: str
    weights: dict[str, Weights]  # by ranking: "semantic", "lexical"
    calibration: dict[str, Calibration]
    choice: Choice
    text_floor: float
    notes_weight: float
    evidence_floor: float


@dataclass(frozen=True)
class CheckProfile:
    calibration: dict[str, CheckCalibration]
    aligned: float
    component_floor: float
    words_floor: float


@dataclass(frozen=True)
class SimilarProfile:
    weights: dict[str, Weights]
    calibration: dict[str, Calibration]
    choice: Choice


@dataclass(frozen=True)
class Profiles:
    align: AlignProfile
    check: CheckProfile
    similar: SimilarProfile


@cache
def profiles() -> Profiles:
    """The profiles, read once (a damaged file is a build error: the tests read it)."""
    raw = json.loads(resources.files("edukg.model").joinpath("alignment_profiles.json")
                     .read_bytes())  # fmt: skip
    a, c, s = raw["align"], raw["check"], raw["similar"]
    return Profiles(
        align=AlignProfile(
            version=a["version"],
            weights=_weights(a["weights"]),
            calibration=_calibrations(a["calibration"], "share", "similarity"),
            choice=Choice(a["min_score"], a["past_floor"]),
            text_floor=a["text_floor"],
            notes_weight=a["notes_weight"],
            evidence_floor=a["evidence_floor"],
        ),
        check=CheckProfile(
            calibration={ranking: CheckCalibration(**v) for ranking, v in c["calibration"].items()},
            aligned=c["aligned"],
            component_floor=c["component_floor"],
            words_floor=c["words_floor"],
        ),
        similar=SimilarProfile(
            weights=_weights(s["weights"]),
            calibration=_calibrations(s["calibration"], "share", "similarity"),
            choice=Choice(s["min_score"], s["past_floor"]),
        ),
    )


def _weights(raw: dict[str, Any]) -> dict[str, Weights]:
    return {ranking: Weights(**values) for ranking, values in raw.items()}


def _calibrations(raw: dict[str, Any], first: str, second: str) -> dict[str, Calibration]:
    return {ranking: Calibration(v[first], v[second], v["bias"]) for ranking, v in raw.items()}
