"""The fifth stage: the learned ranking stage, which has read texts written for every
standard.

Takes the `Scored` result of fusion; gives it with `total` reranked. The artifact
(model/rerank.json, made by train/rerank.py, `make train`; read and checked by
services.alignment.artifacts) holds the vectors of some 5,000 texts written for edukg,
about nine for each of the sample's Multi-State standards (items, word problems, multi-step
tasks, teachers' guides), each with the standard it was written for, and weights fitted on
those texts. A new channel, `examples`, scores each candidate by how alike the text's
passages are to the texts written for it (the soft maximum over passages, as for the
statement, of its closest text); the channels, the new one among them, are then fused
again with the learned weights and the grade prior.

A general-text encoder places a word problem and the statement it practises only loosely
together; a word problem and another word problem written for the same standard lie much
closer. Without the artifact, or with one the loader refuses, or where few candidates have
texts of their own (another state's framework), the fused order stands.
"""

from __future__ import annotations

import base64
from dataclasses import dataclass, replace
from typing import Any

from edukg.model.embedding import DIMENSIONS
from edukg.services.alignment import artifacts
from edukg.services.alignment.channels import pooled
from edukg.services.alignment.fusion import fusion
from edukg.services.alignment.passages import vectors
from edukg.services.alignment.profile import Weights
from edukg.services.alignment.scored import Scored

ARTIFACT = "rerank.json"
# Below this share of candidates with texts of their own (another state's framework, a
# subject the texts do not cover) the learned weights, fitted with the channel present,
# do not apply.
COVERAGE = 0.5


@dataclass(frozen=True)
class Learned:
    """The written texts' vectors, whose standard each is, and the learned weights."""

    vectors: Any  # float32 (texts, DIMENSIONS), unit rows
    owners: list[str]  # the CASE UUID of each text's standard
    weights: Weights  # the examples channel's among them
    notes_weight: float


def _checked(raw: dict[str, Any]) -> Learned:
    import numpy as np  # noqa: PLC0415

    shape = raw["vectors"]["shape"]
    data = np.frombuffer(base64.b64decode(raw["vectors"]["float16"]), dtype=np.float16)
    if len(shape) != 2 or shape[1] != DIMENSIONS or data.size != shape[0] * shape[1]:
        raise artifacts.Refused(f"the texts' vectors have shape {shape}, {data.size} values")
    rows = artifacts.finite_vector(data, shape[0] * shape[1], "the texts' vectors")
    standards: list[str] = raw["standards"]
    owners = [standards[int(n)] for n in raw["owner"]]
    if len(owners) != shape[0]:
        raise artifacts.Refused(f"{len(owners)} owners for {shape[0]} texts")
    w = raw["weights"]
    values = [artifacts.finite_number(w[name], f"the weight {name}", -100, 100)
              for name in ("statement", "components", "words", "domain", "grade_prior",
                           "examples", "whole", "notes")]  # fmt: skip
    return Learned(rows.reshape(shape), owners, Weights(*values[:7]), values[7])


def _learned() -> artifacts.Loaded[Learned] | None:
    return artifacts.load(ARTIFACT, _checked)


def fingerprint() -> str | None:
    """What identifies the learned stage in use (None: none is)."""
    found = _learned()
    return found.fingerprint if found is not None else None


def reranked(scored: Scored) -> Scored:
    """`scored` with the examples channel added and its order fused again by the learned
    weights (as fused where the stage does not apply)."""
    found = _learned()
    channels = scored.channels
    matrix = scored.candidates.matrix
    if found is None or channels is None or channels.ranking != "semantic" or matrix is None:
        return scored
    learned = found.value
    examples, whole, covered = examples_channels(learned, scored.view.case_uuids, matrix,
                                                 scored.candidates.text)  # fmt: skip
    if covered < COVERAGE * len(scored.view.case_uuids):
        return scored
    measured = replace(channels, values={**channels.values, "examples": examples,
                                         "whole": whole})  # fmt: skip
    view = scored.view
    total = fusion(measured, learned.weights, view.grades, view.twins, scored.candidates.keep,
                   learned.notes_weight)  # fmt: skip
    return replace(scored, channels=measured, total=total)


def examples_channels(learned: Learned, case_uuids: list[str], matrix: Any,
                      text: str) -> tuple[Any, Any, int]:  # fmt: skip
    """Each candidate's closest written text, by the passages (pooled) and by the whole
    text (its first 256 word pieces, as the model reads it), the mean of the others'
    where it has none; and how many candidates have texts."""
    import numpy as np  # noqa: PLC0415

    alike, _, _ = pooled(matrix, learned.vectors)
    whole = learned.vectors @ vectors([text])[0]
    column = {uuid: n for n, uuid in enumerate(case_uuids)}
    owner = np.array([column.get(u, -1) for u in learned.owners], dtype=np.int64)
    mine = owner >= 0
    out = []
    for values in (alike, whole):
        best = np.full(len(case_uuids), -np.inf, dtype=np.float32)
        np.maximum.at(best, owner[mine], values[mine])
        has = np.isfinite(best)
        fill = float(best[has].mean()) if has.any() else 0.0
        out.append(np.where(has, best, fill).astype(np.float32))
    return out[0], out[1], int(np.isfinite(best).sum())
