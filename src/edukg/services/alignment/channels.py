"""The third stage: each candidate's value on each channel, against the whole text.

Takes the `Candidates` and the text; gives `Channels`. By meaning (with a semantic index
and the model):

- statement: how alike the text's passages are to the standard's statement, pooled over
  the passages by a soft maximum (a log-mean-exp), so that a standard one passage matches
  closely and several match well ranks above one a single stray sentence touches;
- components: the same for the learning components that support the standard (its own,
  or its crosswalk counterparts'), its best component counting;
- words: BM25 of the whole text against the statement;
- domain: the text against the heading of the standard's domain ("Ratios & Proportional
  Relationships"), which places a text before its exact standard is clear;
- notes: for twins, standards of different codes that share one statement (G-CO.C.10 and
  G-SRT.B.4, "Prove theorems about triangles."), the text against what tells each apart
  (its notes, else the grouping above it).

By words alone: the statements' BM25 and the supporting components'.
"""

from __future__ import annotations

from typing import Any

from edukg.services import rank
from edukg.services.alignment.passages import vectors
from edukg.services.alignment.scored import Candidates, Channels
from edukg.services.alignment.view import StandardsView, Vectors
from edukg.services.alignment.view import vectors as view_vectors
from edukg.store.base import Store

SHARPNESS = 10.0  # of the soft maximum over passages (1: the mean; large: the maximum)
_BLOCK = 64  # passages whose similarities are held at once


def channels(store: Store, found: Candidates, text: str) -> Channels:
    """Every candidate's channels; the twins' notes for the admitted twins alone."""
    import numpy as np  # noqa: PLC0415

    view = found.view
    vecs = None
    if found.matrix is not None:
        vecs = view_vectors(store, found.search, view, found.index)
    within = None
    if len(found.keep) < len(view.identifiers):
        within = np.zeros(len(view.identifiers), dtype=bool)
        within[found.keep] = True
    words = view.words.scores(text, within)
    if found.matrix is None or vecs is None:
        return _lexical(view, text, words)
    matrix = found.matrix
    statement, means, spreads = pooled(matrix, vecs.statements)
    components = _components(view, vecs, matrix, statement)
    values = {"statement": statement, "components": components, "words": words,
              "domain": _domains(view, vecs, matrix)}  # fmt: skip
    return Channels("semantic", values, statement, components, _notes(view, found, matrix),
                    means, spreads, vecs)  # fmt: skip


def pooled(passages: Any, targets: Any) -> tuple[Any, Any, Any]:
    """For each target (a row of `targets`), the soft maximum over `passages` of their
    cosines; and each passage's mean and spread of cosines over the targets (what tells a
    specific passage from one alike to everything)."""
    import numpy as np  # noqa: PLC0415

    count = len(passages)
    total = np.zeros(len(targets), dtype=np.float64)
    means = np.zeros(count, dtype=np.float32)
    spreads = np.ones(count, dtype=np.float32)
    if count == 0 or len(targets) == 0:
        return total.astype(np.float32), means, spreads
    for start in range(0, count, _BLOCK):
        sims = passages[start : start + _BLOCK] @ targets.T
        # Cosines are at most 1: exp(a (s - 1)) cannot overflow.
        total += np.exp(SHARPNESS * (sims - 1.0)).sum(axis=0)
        means[start : start + _BLOCK] = sims.mean(axis=1)
        spreads[start : start + _BLOCK] = sims.std(axis=1) + 1e-6
    soft = 1.0 + np.log(np.maximum(total / count, 1e-30)) / SHARPNESS
    return soft.astype(np.float32), means, spreads


def per_candidate(values: Any, start: Any, index: Any, empty: float) -> Any:
    """Each candidate's best value among its items (`index[start[i]:start[i+1]]` of
    `values`), `empty` where it has none."""
    import numpy as np  # noqa: PLC0415

    out = np.full(len(start) - 1, empty, dtype=np.float32)
    if len(index) == 0 or len(values) == 0:
        return out
    counts = np.diff(start)
    has = counts > 0
    best = np.fmax.reduceat(values[index], start[:-1][has])  # NaN: an item without a value
    out[has] = best
    return out


def _components(view: StandardsView, vecs: Vectors, matrix: Any, statement: Any) -> Any:
    """Each candidate's best supporting component, pooled over the passages; a candidate
    that no indexed component supports is taken at its statement's value (no components
    is no evidence either way: bench/align_eval.py measured this against counting it as
    the lowest value, which sank such standards, the practices among them)."""
    import numpy as np  # noqa: PLC0415

    pooled_lcs, _, _ = pooled(matrix, vecs.components)
    per_lc = np.where(vecs.component_rows >= 0, pooled_lcs[np.maximum(vecs.component_rows, 0)],
                      np.nan).astype(np.float32)  # fmt: skip
    best = per_candidate(per_lc, view.component_start, view.component_index, np.nan)
    return np.where(np.isnan(best), statement, best).astype(np.float32)


def _domains(view: StandardsView, vecs: Vectors, matrix: Any) -> Any:
    import numpy as np  # noqa: PLC0415

    pooled_heads, _, _ = pooled(matrix, vecs.headings)
    rows = np.where(view.domain_of >= 0, vecs.heading_rows[np.maximum(view.domain_of, 0)], -1)
    if len(pooled_heads) == 0:
        return None
    fill = float(pooled_heads.mean())
    return np.where(rows >= 0, pooled_heads[np.maximum(rows, 0)], fill).astype(np.float32)


def _notes(view: StandardsView, found: Candidates, matrix: Any) -> Any:
    """The admitted twins' notes against the text (NaN for every other candidate), or
    None where no admitted candidate has a twin."""
    import numpy as np  # noqa: PLC0415

    admitted = np.zeros(len(view.identifiers), dtype=bool)
    admitted[found.keep] = True
    twins = np.nonzero((view.twins >= 0) & admitted)[0]
    if not len(twins):
        return None
    telling = vectors([view.telling[i] or view.statements[i] for i in twins])
    if telling is None:
        return None
    alike, _, _ = pooled(matrix, telling)
    out = np.full(len(view.identifiers), np.nan, dtype=np.float32)
    out[twins] = alike
    return out


def _lexical(view: StandardsView, text: str, words: Any) -> Channels:
    """Words alone: the statements' BM25, and the supporting components' (without a
    semantic index or the model)."""
    import numpy as np  # noqa: PLC0415

    lcs = view.component_words.scores(text) if view.components else None
    components = None
    if lcs is not None:  # as by meaning: no components, the statement's value
        best = per_candidate(lcs, view.component_start, view.component_index, np.nan)
        components = np.where(np.isnan(best), words, best).astype(np.float32)
    raw = np.array([rank.relevance_score(float(w)) for w in words], dtype=np.float32)
    mapped = None
    if components is not None:
        mapped = np.array([rank.relevance_score(float(c)) for c in components], np.float32)
    values = {"words": words, "components": components}
    return Channels("lexical", values, raw, mapped, None, None, None, None)
