"""The alignment engine's stages on small arrays: pooling and per-candidate bests
(channels), fusion and the grade prior (fusion), shares and the calibration (calibrate),
and choosing (choose)."""

from __future__ import annotations

import numpy as np

from edukg.services.alignment import calibrate, channels, fusion
from edukg.services.alignment.choose import choose
from edukg.services.alignment.profile import Choice, Weights, profiles


def test_pooling_is_a_soft_maximum_between_the_mean_and_the_maximum() -> None:
    passages = np.eye(3, dtype=np.float32)[:2]  # two passages, three targets
    targets = np.array([[1, 0, 0], [0.6, 0.8, 0], [0, 0, 1]], dtype=np.float32)
    soft, means, spreads = channels.pooled(passages, targets)
    sims = passages @ targets.T
    assert np.all(soft <= sims.max(axis=0) + 1e-6) and np.all(soft >= sims.mean(axis=0) - 1e-6)
    assert soft[0] > soft[2]
    assert np.allclose(means, sims.mean(axis=1)) and np.all(spreads > 0)


def test_each_candidate_takes_its_best_item_or_the_empty_value() -> None:
    values = np.array([0.1, 0.9, 0.5], dtype=np.float32)
    start = np.array([0, 2, 2, 3], dtype=np.int32)  # candidate 1 has no items
    index = np.array([0, 1, 2], dtype=np.int32)
    assert channels.per_candidate(values, start, index, -1.0).tolist() == [
        np.float32(0.9), -1.0, np.float32(0.5)]  # fmt: skip


def test_fusion_standardises_each_channel_and_skips_a_flat_one() -> None:
    weights = Weights(statement=1.0, components=0.0, words=1.0, domain=1.0,
                              grade_prior=0.0)  # fmt: skip
    channels = {"statement": np.array([1.0, 2.0, 3.0]), "words": np.array([300.0, 200.0, 100.0]),
                "domain": np.array([5.0, 5.0, 5.0]), "components": None}  # fmt: skip
    total = fusion.fused(channels, weights)
    assert np.allclose(total, 0.0)  # the two channels disagree exactly; domain says nothing


def test_the_grade_prior_lifts_the_grade_the_best_candidates_share() -> None:
    grade = {"3": 1 << 4, "7": 1 << 8}
    score = np.array([2.0, 1.9, 1.0, 1.0])
    grades = np.array([grade["3"], grade["3"], grade["3"], grade["7"]], dtype=np.int64)
    lifted = fusion.with_grade_prior(score, grades, 0.3)
    assert lifted[2] > lifted[3]


def test_shares_count_a_repeated_standard_once_and_sum_to_one() -> None:
    score = np.array([3.0, 3.0, 1.0])
    groups = np.array([0, 0, 2], dtype=np.int32)
    share = calibrate.shares(score, groups)
    assert abs(share[0] + share[2] - 1.0) < 1e-6 and share[0] == share[1]


def test_calibration_is_monotone_and_bands_cover_zero_to_one() -> None:
    c = profiles().align.calibration["semantic"]
    assert c.score(0.1, 0.3) < c.score(0.5, 0.3) < c.score(0.5, 0.6)
    assert [calibrate.band(s) for s in (0.95, 0.5, 0.3, 0.0)] == ["high", "medium", "low",
                                                                "very low"]  # fmt: skip


def test_the_explorer_words_the_bands_as_the_api_does() -> None:
    from importlib.resources import files

    script = (files("edukg") / "static" / "explore-align.js").read_text()
    wording = script[script.index("const CONFIDENCE") :].split(";", 1)[0]
    for low, name, right in calibrate.BANDS:
        at = wording.index(f'["{name}", ')
        entry = wording[at : wording.index("]", at)]
        assert right.replace("about ", "") in entry and (f"{low:g}" in entry or low == 0), entry


def test_one_choice_for_alignment_and_similar() -> None:
    groups = np.array([0, 0, 1, 2, 3], dtype=np.int32)
    scores = {0: 0.9, 1: 0.95, 2: 0.005, 3: 0.5, 4: 0.4}
    stop, skip = Choice(0.01, "stop"), Choice(0.01, "skip")
    # One per standard, never rising down the list; "stop" ends at the floor.
    assert choose([0, 1, 2, 3, 4], groups, scores.__getitem__, stop, 10) == [(0, 0.9)]
    assert choose([0, 1, 2, 3, 4], groups, scores.__getitem__, skip, 10) == [
        (0, 0.9), (3, 0.5), (4, 0.4)]  # fmt: skip
    assert choose([0, 3, 4], groups, scores.__getitem__, skip, 2, taken=frozenset({0})) == [
        (3, 0.5), (4, 0.4)]  # fmt: skip
    assert choose([3, 4], groups, scores.__getitem__, skip, 5, floor=0.45) == [(3, 0.5)]
