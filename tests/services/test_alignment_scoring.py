"""services/alignment_scoring.py: pooling, fusion, the grade prior and the calibration."""

from __future__ import annotations

import numpy as np

from edukg.services import alignment_scoring as scoring


def test_pooling_is_a_soft_maximum_between_the_mean_and_the_maximum() -> None:
    passages = np.eye(3, dtype=np.float32)[:2]  # two passages, three targets
    targets = np.array([[1, 0, 0], [0.6, 0.8, 0], [0, 0, 1]], dtype=np.float32)
    soft, means, spreads = scoring.pooled(passages, targets)
    sims = passages @ targets.T
    assert np.all(soft <= sims.max(axis=0) + 1e-6) and np.all(soft >= sims.mean(axis=0) - 1e-6)
    assert soft[0] > soft[2]
    assert np.allclose(means, sims.mean(axis=1)) and np.all(spreads > 0)


def test_each_candidate_takes_its_best_item_or_the_empty_value() -> None:
    values = np.array([0.1, 0.9, 0.5], dtype=np.float32)
    start = np.array([0, 2, 2, 3], dtype=np.int32)  # candidate 1 has no items
    index = np.array([0, 1, 2], dtype=np.int32)
    assert scoring.per_candidate(values, start, index, -1.0).tolist() == [
        np.float32(0.9), -1.0, np.float32(0.5)]  # fmt: skip


def test_fusion_standardises_each_channel_and_skips_a_flat_one() -> None:
    weights = scoring.Weights(statement=1.0, components=0.0, words=1.0, domain=1.0,
                              grade_prior=0.0)  # fmt: skip
    channels = {"statement": np.array([1.0, 2.0, 3.0]), "words": np.array([300.0, 200.0, 100.0]),
                "domain": np.array([5.0, 5.0, 5.0]), "components": None}  # fmt: skip
    total = scoring.fused(channels, weights)
    assert np.allclose(total, 0.0)  # the two channels disagree exactly; domain says nothing


def test_the_grade_prior_lifts_the_grade_the_best_candidates_share() -> None:
    grade = {"3": 1 << 4, "7": 1 << 8}
    score = np.array([2.0, 1.9, 1.0, 1.0])
    grades = np.array([grade["3"], grade["3"], grade["3"], grade["7"]], dtype=np.int64)
    lifted = scoring.with_grade_prior(score, grades, 0.3)
    assert lifted[2] > lifted[3]


def test_shares_count_a_repeated_standard_once_and_sum_to_one() -> None:
    score = np.array([3.0, 3.0, 1.0])
    groups = np.array([0, 0, 2], dtype=np.int32)
    share = scoring.shares(score, groups)
    assert abs(share[0] + share[2] - 1.0) < 1e-6 and share[0] == share[1]


def test_calibration_is_monotone_and_bands_cover_zero_to_one() -> None:
    c = scoring.CALIBRATED["semantic"]
    assert c.score(0.1, 0.3) < c.score(0.5, 0.3) < c.score(0.5, 0.6)
    assert [scoring.band(s) for s in (0.95, 0.5, 0.3, 0.0)] == ["high", "medium", "low",
                                                                "very low"]  # fmt: skip


def test_the_explorer_words_the_bands_as_the_api_does() -> None:
    from importlib.resources import files

    script = (files("edukg") / "static" / "explore-align.js").read_text()
    wording = script[script.index("const CONFIDENCE") :].split(";", 1)[0]
    for low, name, right in scoring.BANDS:
        at = wording.index(f'["{name}", ')
        entry = wording[at : wording.index("]", at)]
        assert right.replace("about ", "") in entry and (f"{low:g}" in entry or low == 0), entry
