"""Train alignment's learned ranking stage (services/alignment/rerank.py).

    python train/rerank.py [--shared ../shared]        (make train)

Data: the texts written for every one of the sample's 597 Multi-State standards
(harness/written.py: three a standard in ../shared, seven in train/texts/, one of those
seven held apart and never used here). Nothing from the dev problems or their publishers.

1. Each training text is embedded whole by the shipped encoder (all-MiniLM-L6-v2, int8;
   its first 256 word pieces, as the model reads a text): the stage's memory, each
   vector with its standard.
2. A softmax regression over the standards is fitted on those vectors (SCALE times the
   cosine-like product, L2 of 1e-3, full-batch gradient descent from zero, STEPS steps:
   deterministic on one machine; the int8 kernels differ slightly between processors, so
   the weights do too, within the measures' noise).

The channels' weights in the artifact (`WEIGHTS`) are not fitted here: they are a handful
of settings chosen on the dev problems (docs/search.md, "The learned ranking stage", has
each one measured; fitting them on the written texts themselves gave less on real
problems, which are noisier than texts written for one standard).

Writes src/edukg/model/rerank.json: the vectors and the regression's weights (float16),
their standards' CASE UUIDs, the channels' weights and the provenance (data files and
their SHA-256, seed, commit, encoder, training accuracy). About five minutes on two cores;
outside setup, tests and CI.
"""

from __future__ import annotations

import argparse
import base64
import datetime
import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT))

from harness import written  # noqa: E402

SEED = 7  # the regression starts from zero and uses every text: nothing is drawn
SCALE = 20.0
STEPS = 300
RATE = 2.0
L2 = 1e-3
# Chosen on the dev problems among a handful (docs/search.md): the texts' channels against
# the passages (examples) and the whole text (whole), and the regression's (classifier).
WEIGHTS = {"statement": 0.5, "components": 1.2, "words": 0.6, "domain": 0.3,
           "grade_prior": 0.15, "examples": 0.3, "whole": 0.5, "classifier": 2.0}  # fmt: skip
OUT = ROOT / "src" / "edukg" / "model" / "rerank.json"


def standards(shared: Path) -> tuple[list[str], list[str]]:
    """The sample's Multi-State standards: their codes and CASE UUIDs, in one order."""
    codes, uuids = [], []
    for line in (shared / "data" / "kg-sample" / "nodes.jsonl").read_text().splitlines():
        node = json.loads(line)
        p = node["properties"]
        if ("StandardsFrameworkItem" in node["labels"] and p.get("jurisdiction") == "Multi-State"
                and p.get("normalizedStatementType") == "Standard" and p.get("statementCode")):  # fmt: skip
            codes.append(p["statementCode"])
            uuids.append(p["caseIdentifierUUID"])
    return codes, uuids


def fit(x: Any, y: Any, classes: int) -> tuple[Any, Any, float]:
    """The softmax regression's weights and biases, and its accuracy on `x`."""
    import numpy as np

    w = np.zeros((x.shape[1], classes))
    b = np.zeros(classes)
    target = np.zeros((len(y), classes))
    target[np.arange(len(y)), y] = 1.0
    for _ in range(STEPS):
        z = SCALE * (x @ w) + b
        z -= z.max(axis=1, keepdims=True)
        p = np.exp(z)
        p /= p.sum(axis=1, keepdims=True)
        g = (p - target) / len(y)
        w -= RATE * (SCALE * x.T @ g + L2 * w)
        b -= RATE * g.sum(axis=0)
    accuracy = float(((SCALE * (x @ w) + b).argmax(axis=1) == y).mean())
    return w, b, accuracy


def main() -> None:
    import numpy as np

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--shared", default=str(ROOT.parent / "shared"))
    args = parser.parse_args()
    shared = Path(args.shared)
    began = time.monotonic()
    from edukg.model.embedding import MODEL_PACKAGE
    from edukg.services.alignment.passages import vectors

    codes, uuids = standards(shared)
    number = {code: n for n, code in enumerate(codes)}
    texts = [r for r in written.training(shared) if r.code in number]
    print(f"{len(texts)} training texts for {len(codes)} standards; embedding", flush=True)
    memory = vectors([r.text for r in texts]).astype(np.float64)
    owners = np.array([number[r.code] for r in texts], dtype=np.int64)
    print(f"embedded in {time.monotonic() - began:.0f} s; fitting", flush=True)
    w, b, accuracy = fit(memory, owners, len(codes))
    print(f"training accuracy {accuracy:.3f} ({time.monotonic() - began:.0f} s)", flush=True)
    commit = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True,
                            text=True, check=False).stdout.strip() or "unknown"  # fmt: skip
    artifact = {
        "about": "Alignment's learned ranking stage: texts written for every standard (their"
        " vectors and standards), a softmax regression over the standards fitted on them,"
        " and the channels' weights. Made by train/rerank.py (make train); see its"
        " docstring and services/alignment/rerank.py.",
        "encoder": f"{MODEL_PACKAGE}, int8, each text embedded whole",
        "weights": WEIGHTS,
        "scale": SCALE,
        "standards": uuids,
        "owner": owners.tolist(),
        "vectors": _packed(memory),
        "classifier": {"weights": _packed(w.T), "bias": _packed(b[None, :])},
        "provenance": {
            "data": written.digests(shared),
            "texts": len(texts),
            "held apart": "one of the seven train/texts texts of every standard"
            " (harness/written.py): never trained on",
            "seed": SEED,
            "steps": STEPS,
            "rate": RATE,
            "l2": L2,
            "commit": commit,
            "trained": datetime.date.today().isoformat(),
            "training accuracy": round(accuracy, 4),
            "licence": "written for edukg (train/texts: CC BY 4.0, as the project)",
        },
    }
    OUT.write_text(json.dumps(artifact, separators=(",", ":")) + "\n")
    print(f"wrote {OUT} ({OUT.stat().st_size >> 10} KiB) in {time.monotonic() - began:.0f} s")


def _packed(rows: Any) -> dict[str, Any]:
    """A matrix as float16 bytes, base64, with its shape."""
    import numpy as np

    return {"shape": list(rows.shape),
            "float16": base64.b64encode(rows.astype(np.float16).tobytes()).decode()}  # fmt: skip


if __name__ == "__main__":
    main()
