"""services/alignment/passages.py (over services/rank.py's model): passages embedded lately are not embedded again, within a budget."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from edukg.model.encoder import available
from edukg.model.lru import ByteLru
from edukg.services import rank
from edukg.services.alignment import passages


class _Counting:
    """The real encoder, counting the texts it is asked to embed."""

    def __init__(self, encoder: Any) -> None:
        self.encoder = encoder
        self.texts: list[str] = []

    def encode(self, texts: list[str]) -> Any:
        self.texts.extend(texts)
        return self.encoder.encode(texts)


@pytest.fixture
def counting(monkeypatch: pytest.MonkeyPatch) -> _Counting:
    if not available():
        pytest.skip("ONNX Runtime is not installed (pip install 'edukg[index]')")
    real = rank._load()
    spy = _Counting(real)
    monkeypatch.setattr(rank, "_encoder", spy)
    kept: ByteLru[str, Any] = ByteLru(passages.PASSAGE_CACHE_BYTES, lambda v: v[0], keep_last=False)
    monkeypatch.setattr(passages, "_kept", kept)
    return spy


def test_a_passage_is_embedded_once_and_answers_alike(counting: _Counting) -> None:
    texts = ["Find 30% of 80.", "Students work in pairs.", "Find 30% of 80."]
    first = passages.vectors(texts)
    assert counting.texts == ["Find 30% of 80.", "Students work in pairs."]  # once each
    again = passages.vectors(["Students work in pairs.", "A ratio of 3 to 5.", "Find 30% of 80."])
    assert counting.texts[2:] == ["A ratio of 3 to 5."]
    # Each text is embedded alone: its vector does not depend on what it came with.
    alone = [
        counting.encoder.encode([t])[0] for t in ("Students work in pairs.", "A ratio of 3 to 5.")
    ]
    assert np.array_equal(again[:2], np.stack(alone))
    assert np.array_equal(again[2], first[0]) and np.array_equal(first[0], first[2])
    assert passages.vectors([]).shape == (0, first.shape[1])


def test_the_cache_weighs_the_text_too_and_keeps_to_its_budget(
    counting: _Counting, monkeypatch: pytest.MonkeyPatch
) -> None:
    kept: ByteLru[str, Any] = ByteLru(64 << 10, lambda v: v[0], keep_last=False)
    monkeypatch.setattr(passages, "_kept", kept)
    long = [f"{n} " + "seven tenths " * 2_000 for n in range(4)]  # 26 KB each
    passages.vectors(long)
    assert 0 < kept.bytes <= 64 << 10 and len(kept) == 2  # 4 x (26 KB + 1.5 KB) do not fit
    passages.vectors(long[-1:])
    assert len(counting.texts) == 4  # the newest are the ones kept
