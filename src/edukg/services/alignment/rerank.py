"""The fifth stage: the learned ranking stage, which has read texts written for every
standard.

Takes the `Scored` result of fusion; gives it with `total` reranked. The artifact
(model/rerank.json, made by train/rerank.py, `make train`; read and checked by
services.alignment.artifacts) holds the vectors of some 5,400 texts written for edukg,
nine for each of the sample's Multi-State standards (items, word problems, multi-step
tasks, teachers' guides), each with its standard, and a softmax regression over the
standards fitted on them. Three channels join the others:

- examples: the text's passages against the closest text written for each candidate,
  pooled over the passages as the statement is;
- whole: the whole text (its first 256 word pieces) against that closest text;
- classifier: the regression's logit of each candidate for the whole text.

Then every channel is fused again with the artifact's weights and the grade prior. A
general-text encoder places a word problem and the statement it practises only loosely
together; a word problem and problems written for the same standard lie closer, and the
regression learns which directions of the space tell one standard's texts from its
neighbours'. Without the artifact, with one the loader refuses, or where few candidates
are standards the texts were written for (another state's framework), the fused order
stands.
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
from edukg.services.alignment.profile import Weights, profiles
from edukg.services.alignment.scored import Scored

ARTIFACT = "rerank.json"
# Below this share of candidates with texts of their own (another state's framework, a
# subject the texts do not cover) the learned weights, chosen with the channels present,
# do not apply.
COVERAGE = 0.5
_CHANNELS = ("statement", "components", "words", "domain", "grade_prior", "examples",
             "whole", "classifier")  # fmt: skip


@dataclass(frozen=True)
class Learned:
    """The written texts' vectors and standards, the regression, and the weights."""

    vectors: Any  # float32 (texts, DIMENSIONS), unit rows
    owners: Any  # int: each text's standard (an index into `standards`)
    standards: list[str]  # CASE UUIDs
    classifier: Any  # float32 (standards, DIMENSIONS)
    bias: Any  # float32 (standards,)
    scale: float
    weights: Weights


def _matrix(raw: dict[str, Any], rows: int | None, what: str) -> Any:
    """A packed float16 matrix of (`rows`, DIMENSIONS) or (1, `rows`), checked finite."""
    import numpy as np  # noqa: PLC0415

    shape = [int(n) for n in raw["shape"]]
    data = np.frombuffer(base64.b64decode(raw["float16"]), dtype=np.float16)
    if len(shape) != 2 or data.size != shape[0] * shape[1]:
        raise artifacts.Refused(f"{what} has shape {shape} and {data.size} values")
    if rows is not None and shape not in ([rows, DIMENSIONS], [1, rows]):
        raise artifacts.Refused(f"{what} has shape {shape}, not ({rows}, {DIMENSIONS})")
    flat = artifacts.finite_vector(data, data.size, what)
    return flat.reshape(shape)


def _checked(raw: dict[str, Any]) -> Learned:
    import numpy as np  # noqa: PLC0415

    standards: list[str] = [str(u) for u in raw["standards"]]
    owners = np.asarray(raw["owner"], dtype=np.int64)
    memory = _matrix(raw["vectors"], len(owners), "the texts' vectors")
    if memory.shape[1] != DIMENSIONS or (
        len(owners) and not (owners.min() >= 0 and owners.max() < len(standards))
    ):
        raise artifacts.Refused("the texts' standards do not match their vectors")
    classifier = _matrix(raw["classifier"]["weights"], len(standards), "the regression")
    bias = _matrix(raw["classifier"]["bias"], len(standards), "the regression's bias")[0]
    w = raw["weights"]
    values = [artifacts.finite_number(w[name], f"the weight {name}", -100, 100)
              for name in _CHANNELS]  # fmt: skip
    scale = artifacts.finite_number(raw["scale"], "the regression's scale", 0.0, 1000.0)
    return Learned(memory, owners, standards, classifier, bias, scale, Weights(*values))


def _learned() -> artifacts.Loaded[Learned] | None:
    return artifacts.load(ARTIFACT, _checked)


def fingerprint() -> str | None:
    """What identifies the learned stage in use (None: none is)."""
    found = _learned()
    return found.fingerprint if found is not None else None


def reranked(scored: Scored) -> Scored:
    """`scored` with the learned channels added and its order fused again by the learned
    weights (as fused where the stage does not apply)."""
    found = _learned()
    channels = scored.channels
    matrix = scored.candidates.matrix
    if found is None or channels is None or channels.ranking != "semantic" or matrix is None:
        return scored
    learned = found.value
    added, covered = learned_channels(learned, scored.view.case_uuids, matrix,
                                      scored.candidates.text)  # fmt: skip
    if covered < COVERAGE * len(scored.view.case_uuids):
        return scored
    measured = replace(channels, values={**channels.values, **added})
    view = scored.view
    # The twins' notes weigh as the align profile says, with or without the stage.
    total = fusion(measured, learned.weights, view.grades, view.twins, scored.candidates.keep,
                   profiles().align.notes_weight)  # fmt: skip
    return replace(scored, channels=measured, total=total)


def learned_channels(learned: Learned, case_uuids: list[str], matrix: Any,
                     text: str) -> tuple[dict[str, Any], int]:  # fmt: skip
    """The three learned channels of every candidate (a candidate that is none of the
    texts' standards takes the others' mean), and how many candidates are."""
    import numpy as np  # noqa: PLC0415

    whole_vector = vectors([text])[0]
    alike, _, _ = pooled(matrix, learned.vectors)
    whole = learned.vectors @ whole_vector
    column = {uuid: n for n, uuid in enumerate(case_uuids)}
    place = np.array([column.get(u, -1) for u in learned.standards], dtype=np.int64)
    mine = place[learned.owners]
    out: dict[str, Any] = {}
    for name, values, where in (("examples", alike, mine), ("whole", whole, mine),
                                ("classifier", learned.scale * (learned.classifier @ whole_vector)
                                 + learned.bias, place)):  # fmt: skip
        best = np.full(len(case_uuids), -np.inf, dtype=np.float32)
        np.maximum.at(best, where[where >= 0], values[where >= 0])
        has = np.isfinite(best)
        out[name] = np.where(has, best, float(best[has].mean()) if has.any() else 0.0)
    covered = int(np.isfinite(best).sum())
    return {k: v.astype(np.float32) for k, v in out.items()}, covered
