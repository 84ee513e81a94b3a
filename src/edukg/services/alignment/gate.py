"""A stage of candidates: the subject gate, a learned artifact that says whether a text
reads as mathematics.

Takes the passages' vectors; gives True, False, or None (no gate, or no vectors: the
similarity floor of services.alignment.choose decides instead).

A logistic regression over the passage vectors alignment already has (trained by
train/subject_gate.py, `make train`, on data edukg may use; the weights and their
provenance are model/subject_gate.json, read and checked by services.alignment.artifacts).
A text reads as mathematics when one of its passages does (probability 0.5 or more). A
text that does not gets no mathematics standard: a water-cycle paragraph is answered
nothing against Common Core math, even with a grade, while an ELA text aligned to a place
with ELA standards is answered with those.

Measured on texts no weight saw (bench/align_eval.py, part 5; docs/search.md): 1.3% of
the dev problems and none of forty plain problems read as something else, and one of sixty
other subjects' texts reads as mathematics. Without the artifact, or with one the loader
refuses, alignment falls back to its similarity floor and /healthz says so.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from edukg.model.embedding import DIMENSIONS
from edukg.services.alignment import artifacts

SUBJECT = "Mathematics"  # the subject the gate knows
ARTIFACT = "subject_gate.json"


@dataclass(frozen=True)
class Gate:
    """The weights, and what identifies them (part of the ranking's version)."""

    weights: Any  # float32 (dimensions,)
    bias: float
    threshold: float
    fingerprint: str  # the first 12 hex digits of the artifact's SHA-256

    def reads_as_mathematics(self, passages: Any) -> bool:
        """Whether any passage (a row of unit vectors) reads as mathematics."""
        import numpy as np  # noqa: PLC0415

        if len(passages) == 0:
            return False
        z = passages @ self.weights + self.bias
        return bool(float(np.max(z)) >= _logit(self.threshold))


def _logit(p: float) -> float:
    return math.log(p / (1.0 - p))


def _checked(raw: dict[str, Any]) -> tuple[Any, float, float]:
    weights = artifacts.finite_vector(raw["weights"], DIMENSIONS, "the gate's weights")
    bias = artifacts.finite_number(raw["bias"], "the gate's bias")
    # Open at both ends: the logit of 0 or 1 is infinite.
    threshold = artifacts.finite_number(raw["threshold"], "the gate's threshold", 1e-6, 1 - 1e-6)
    return weights, bias, threshold


def gate() -> Gate | None:
    """The trained gate, or None where the artifact is missing or refused."""
    found = artifacts.load(ARTIFACT, _checked)
    if found is None:
        return None
    weights, bias, threshold = found.value
    return Gate(weights, bias, threshold, found.fingerprint)


def verdict(matrix: Any) -> bool | None:
    """The gate's verdict on the passages' vectors (None without it or the vectors)."""
    found = gate()
    if found is None or matrix is None:
        return None
    return found.reads_as_mathematics(matrix)


def status() -> dict[str, Any]:
    """For /healthz: whether the gate is in use, and what happens without it."""
    found = gate()
    if found is None:
        why = artifacts.refusal(ARTIFACT) or "missing"
        return {"subjectGate": False, "subjectGateRefused": why,
                "note": f"The subject gate's weights (edukg/model/{ARTIFACT}) are {why}: a text"
                " is taken as being about the standards when a passage is 0.25 alike to one"
                " of them."}  # fmt: skip
    return {"subjectGate": True, "subjectGateVersion": found.fingerprint}
