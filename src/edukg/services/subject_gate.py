"""The subject gate, alignment's learned stage: whether a text reads as mathematics.

A logistic regression over the passage vectors alignment already has (trained by
train/subject_gate.py, `make train`, on data edukg may use; the weights and their
provenance are model/subject_gate.json). A text reads as mathematics when one of its
passages does (probability 0.5 or more). A text that does not gets no mathematics
standard: a water-cycle paragraph is answered nothing against Common Core math, even with
a grade, while an ELA text aligned to a place with ELA standards is answered with those.

Measured on texts no weight saw (bench/align_eval.py, part 5; docs/search.md): 1.3% of
the dev problems and none of forty plain problems read as something else, and one of sixty
other subjects' texts reads as mathematics. Without the artifact or the model, alignment
falls back to its similarity floor (services.text_alignment) and /healthz says so.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any

SUBJECT = "Mathematics"  # the subject the gate knows


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
    import math  # noqa: PLC0415

    return math.log(p / (1.0 - p))


@cache
def gate() -> Gate | None:
    """The trained gate, or None where the artifact is missing or unreadable."""
    import numpy as np  # noqa: PLC0415

    try:
        raw = resources.files("edukg.model").joinpath("subject_gate.json").read_bytes()
        artifact = json.loads(raw)
        weights = np.asarray(artifact["weights"], dtype=np.float32)
        return Gate(weights, float(artifact["bias"]), float(artifact["threshold"]),
                    hashlib.sha256(raw).hexdigest()[:12])  # fmt: skip
    except (OSError, ValueError, KeyError, TypeError):
        return None


def status() -> dict[str, Any]:
    """For /healthz: whether the gate is loaded, and what happens without it."""
    found = gate()
    if found is None:
        return {"subjectGate": False, "note": "The subject gate's weights"
                " (edukg/model/subject_gate.json) are missing: a text is taken as being about"
                " the standards when a passage is 0.25 alike to one of them."}  # fmt: skip
    return {"subjectGate": True, "subjectGateVersion": found.fingerprint}
