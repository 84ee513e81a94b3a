"""The first stage: a text cut into passages, the sentences (or list items) it is made of,
with offsets, and each passage's unit vector.

Takes the text; gives `Passage`s (`passages`) and their vectors (`vectors`, None without
the model).

An alignment matches each passage on its own, so that a lesson teaching three skills
finds the standards of each, not only of the one its words are mostly about. Short
fragments (a heading, "e.g.") join the passage after them; long runs without a sentence
end are cut at a space, below what the model reads of one text.
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass
from typing import Any

from edukg.model.lru import ByteLru
from edukg.services import rank

# A sentence ends at ., ! or ? followed by white space, or at a line break; a list item
# is its own line. Decimals and codes ("3.NF.A.1", "2.5") have no space after the dot.
# Boundaries are found among the runs of white space, each run read once: a pattern that
# looks for a line break inside a run (`\s*\n\s*`) tries again from every space of a run
# without one, which is quadratic in the run's length and holds the interpreter meanwhile.
_SPACE = re.compile(r"\s+")
_ENDS = frozenset(".!?")
MIN_CHARS = 30  # shorter pieces join the next one (a heading, a bullet's label)
MAX_CHARS = 600  # about 130 word pieces: well inside what the model reads of one text
MAX_PASSAGES = 400  # 20,000 characters in sentences of 50: the bound on one request's work


@dataclass(frozen=True, slots=True)
class Passage:
    """`text[start:end]` of the aligned text, stripped."""

    start: int
    end: int
    text: str


def passages(text: str) -> list[Passage]:
    """The passages of `text`, in order; never empty for a text with any letter."""
    spans: list[tuple[int, int]] = []
    start = 0
    for run in _SPACE.finditer(text):
        a, b = run.span()
        if (a > 0 and text[a - 1] in _ENDS) or text.find("\n", a, b) >= 0:
            spans.extend(_cut(text, start, a))
            start = b
    spans.extend(_cut(text, start, len(text)))
    merged = _merge_short(spans)
    if len(merged) > MAX_PASSAGES:
        merged = _pack(merged, MAX_PASSAGES)
    return [Passage(s, e, text[s:e]) for s, e in merged]


def _cut(text: str, start: int, end: int) -> list[tuple[int, int]]:
    """The stripped span [start, end), in pieces of at most MAX_CHARS cut at spaces."""
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    out: list[tuple[int, int]] = []
    while end - start > MAX_CHARS:
        space = text.rfind(" ", start + MAX_CHARS // 2, start + MAX_CHARS)
        stop = space if space > start else start + MAX_CHARS
        out.append((start, stop))
        start = stop
        while start < end and text[start].isspace():
            start += 1
    if end > start:
        out.append((start, end))
    return out


def _merge_short(spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Spans shorter than MIN_CHARS joined to the next (the last to the one before)."""
    out: list[tuple[int, int]] = []
    pending: int | None = None  # start of a short span waiting for the next
    for start, end in spans:
        begin = start if pending is None else pending
        if end - begin < MIN_CHARS:
            pending = begin
            continue
        out.append((begin, end))
        pending = None
    if pending is not None:
        if out and spans[-1][1] - out[-1][0] <= MAX_CHARS:
            out[-1] = (out[-1][0], spans[-1][1])
        else:
            out.append((pending, spans[-1][1]))
    return out


def _pack(spans: list[tuple[int, int]], most: int) -> list[tuple[int, int]]:
    """Neighbouring spans joined in pairs, again and again, until at most `most` remain."""
    while len(spans) > most:
        spans = [
            (spans[i][0], spans[min(i + 1, len(spans) - 1)][1]) for i in range(0, len(spans), 2)
        ]
    return spans


def vectors(texts: list[str]) -> Any:
    """Unit vectors of `texts` (a float32 array, one row each), or None without the model.

    Each text is embedded alone, and a text embedded lately is not embedded again
    (`_kept`). Many texts are embedded in two halves on the helper threads at once (each
    run of the model on one core), so a 20,000-character text takes about half the time.
    """
    encoder = rank.encoder()
    if encoder is None:
        return None
    import numpy as np  # noqa: PLC0415

    if not texts:
        return encoder.encode([])
    rows: dict[str, Any] = {}
    for text in texts:
        kept = _kept.get(text)
        if kept is not None:
            rows[text] = kept[1]
    missing = [t for t in dict.fromkeys(texts) if t not in rows]
    for text, row in zip(missing, _encoded(missing), strict=True):
        _kept.put(text, (sys.getsizeof(text) + row.nbytes + _ENTRY_OVERHEAD, row))
        rows[text] = row
    return np.stack([rows[t] for t in texts])


def _encoded(texts: list[str]) -> list[Any]:
    """Each text's vector, embedded alone, so that a passage's vector never depends on
    the passages it came with (the int8 model scales its activations per run: batched
    with others, a text's vector moved by up to 0.01 in cosine) and can be kept. Alone is
    also quicker than batched here: a batch pads every text to its longest."""
    if len(texts) < _SPLIT_AT:
        return _alone(texts)
    half = (len(texts) + 1) // 2
    pool = rank.executor("texts")
    parts = [pool.submit(_alone, texts[:half]), pool.submit(_alone, texts[half:])]
    return [row for part in parts for row in part.result()]


def _alone(texts: list[str]) -> list[Any]:
    return [rank.query_vector(text) for text in texts]


_SPLIT_AT = 8  # texts: below this one run of the model is as quick
# Passages recur: a text aligned again under other filters (the explorer's grade buttons,
# an assistant trying frameworks in turn) and the routine sentences curricula repeat
# ("Students work in pairs."). Their vectors are kept by text within this budget: about
# 10,000 sentences. The text's own characters are weighed too, so a client sending long
# distinct passages only churns the cache, never grows it.
PASSAGE_CACHE_BYTES = 16 << 20
_ENTRY_OVERHEAD = 300  # the array's header, the entry's tuple, the LRU's node
# Values: (bytes weighed, the vector).
_kept: ByteLru[str, tuple[int, Any]] = ByteLru(
    PASSAGE_CACHE_BYTES, lambda kept: kept[0], keep_last=False
)
