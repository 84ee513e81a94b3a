"""Train the subject gate: whether a passage reads as mathematics (edukg's learned stage).

    python train/subject_gate.py [--shared ../shared]      (make train)

A logistic regression over the shipped encoder's passage vectors (all-MiniLM-L6-v2, int8,
each passage embedded alone, exactly as alignment embeds a text's passages). Alignment
asks it whether any passage of a text reads as mathematics; a text none of whose
passages does gets no mathematics standard (services.alignment.gate).

Data (all of it data edukg may train on; none of it from the dev set or its publishers):

- mathematics: 1,500 of MathCAMPS' original problems (../shared/data/alignment-train,
  MIT: Copyright (c) 2024 Gabriel Poesia and the MathCAMPS authors), 1,000 of the sample
  export's learning components and 500 of its standards' statements (CC BY 4.0,
  Learning Commons), and train/texts/math_teaching.jsonl (written for edukg: how a
  mathematics lesson's teacher notes read), each drawn with SEED;
- other subjects: train/texts/other_subjects.jsonl (written for edukg: science, reading
  and writing, social studies, the arts, physical education and health, languages,
  technology, and a classroom's logistics, some with numbers, dates and prices).

Each text is cut into passages as alignment cuts it; the two classes weigh the same.
Fitted by full-batch gradient descent from zero (deterministic on one machine; the int8
kernels differ slightly between processors, so weights do too, within the measures'
noise). Writes src/edukg/model/subject_gate.json: the weights and their provenance (data
files and their SHA-256, seed, commit, encoder, training accuracy). About a minute on
two cores. Its measures on held-out texts are bench/align_eval.py's (part 5).
"""

from __future__ import annotations

import argparse
import datetime
import hashlib
import json
import random
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from edukg.model.embedding import MODEL_PACKAGE  # noqa: E402
from edukg.services.alignment.passages import passages, vectors  # noqa: E402

SEED = 7
STEPS = 3000
RATE = 1.0
L2 = 1e-3
OUT = ROOT / "src" / "edukg" / "model" / "subject_gate.json"
TEXTS = ROOT / "train" / "texts"


def _rows(path: Path) -> list[dict[str, str]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _data(shared: Path) -> tuple[list[str], list[str], list[dict[str, object]]]:
    draw = random.Random(SEED)
    camps_path = shared / "data/alignment-train/mathcamps/mathcamps.json"
    camps = [p["statement"] for p in json.loads(camps_path.read_text())
             if p["type"] == "original-problem"]  # fmt: skip
    draw.shuffle(camps)
    nodes_path = shared / "data/kg-sample/nodes.jsonl"
    nodes = [json.loads(line) for line in nodes_path.read_text().splitlines() if line.strip()]
    components = [n["properties"]["description"] for n in nodes
                  if "LearningComponent" in n["labels"] and n["properties"].get("description")]  # fmt: skip
    statements = [n["properties"]["description"] for n in nodes
                  if "StandardsFrameworkItem" in n["labels"] and n["properties"].get("description")
                  and n["properties"].get("normalizedStatementType") == "Standard"]  # fmt: skip
    draw.shuffle(components)
    draw.shuffle(statements)
    teaching = [r["text"] for r in _rows(TEXTS / "math_teaching.jsonl")]
    other = [r["text"] for r in _rows(TEXTS / "other_subjects.jsonl")]
    # The teacher notes are few: counted three times, as many as a tenth of the rest.
    mathematics = camps[:1500] + components[:1000] + statements[:500] + teaching * 3
    sources: list[dict[str, object]] = [
        {"path": "alignment-train/mathcamps/mathcamps.json", "sha256": _digest(camps_path),
         "used": 1500, "class": "mathematics"},
        {"path": "kg-sample/nodes.jsonl", "sha256": _digest(nodes_path),
         "used": "1000 learning components, 500 statements", "class": "mathematics"},
        {"path": "train/texts/math_teaching.jsonl",
         "sha256": _digest(TEXTS / "math_teaching.jsonl"), "used": len(teaching),
         "class": "mathematics"},
        {"path": "train/texts/other_subjects.jsonl",
         "sha256": _digest(TEXTS / "other_subjects.jsonl"), "used": len(other),
         "class": "other"},
    ]  # fmt: skip
    return mathematics, other, sources


def _passages(texts: list[str]) -> list[str]:
    return [p.text for text in texts for p in passages(text)]


def main() -> None:
    import numpy as np

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--shared", default=str(ROOT.parent / "shared"))
    args = parser.parse_args()
    mathematics, other, sources = _data(Path(args.shared))
    positive, negative = _passages(mathematics), _passages(other)
    x = np.vstack([vectors(positive), vectors(negative)]).astype(np.float64)
    y = np.r_[np.ones(len(positive)), np.zeros(len(negative))]
    weight = np.r_[np.full(len(positive), 0.5 / len(positive)),
                   np.full(len(negative), 0.5 / len(negative))] * len(y)  # fmt: skip
    w = np.zeros(x.shape[1])
    b = 0.0
    for _ in range(STEPS):
        p = 1.0 / (1.0 + np.exp(-(x @ w + b)))
        g = (p - y) * weight
        w -= RATE * (x.T @ g / len(y) + L2 * w)
        b -= RATE * float(g.mean())
    p = 1.0 / (1.0 + np.exp(-(x @ w + b)))
    commit = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True,
                            text=True, check=False).stdout.strip() or "unknown"  # fmt: skip
    accuracy = {
        "mathematics": round(float((p[: len(positive)] >= 0.5).mean()), 4),
        "other": round(float((p[len(positive) :] < 0.5).mean()), 4),
    }
    artifact = {
        "about": "A logistic regression over passage vectors: whether a passage reads as"
        " mathematics. Made by train/subject_gate.py (make train); see its docstring.",
        "encoder": f"{MODEL_PACKAGE}, int8, each passage embedded alone",
        "threshold": 0.5,
        "bias": round(b, 6),
        "weights": [round(float(v), 6) for v in w],
        "provenance": {
            "data": sources,
            "passages": {"mathematics": len(positive), "other": len(negative)},
            "seed": SEED,
            "steps": STEPS,
            "rate": RATE,
            "l2": L2,
            "commit": commit,
            "trained": datetime.date.today().isoformat(),
            "training accuracy": accuracy,
            "licence": "MathCAMPS: MIT, Copyright (c) 2024 Gabriel Poesia and the MathCAMPS"
            " authors; the sample export: CC BY 4.0, Learning Commons; train/texts: edukg's.",
        },
    }
    OUT.write_text(json.dumps(artifact, indent=1) + "\n")
    print(f"wrote {OUT.relative_to(ROOT)}: {len(positive)} mathematics and {len(negative)}"
          f" other passages; training accuracy {accuracy}")  # fmt: skip


if __name__ == "__main__":
    main()
