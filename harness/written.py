"""The texts written for every standard, and which of them are held apart.

Two sources, both written for edukg from the sample's Multi-State standards: three texts a
standard in ../shared/data/alignment-train/written/texts.jsonl (read from ../shared, never
copied here) and seven a standard in train/texts/standards_*.jsonl (brief-standards.md).
One of the seven of every standard, its style drawn by the standard's code, is held apart:
no trained weight sees it, and bench/align_eval.py measures on it (`held_apart`).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TEXTS = ROOT / "train" / "texts"
OURS = tuple(TEXTS / f"standards_{n}.jsonl" for n in range(4))
STYLES = ("item", "quick", "context", "multistep", "guide", "activity", "noisy")


@dataclass(frozen=True)
class Written:
    """One text and the standard it was written for (the export's code)."""

    code: str
    style: str
    text: str
    source: str  # "shared" or "edukg"


def shared_path(shared: Path) -> Path:
    return shared / "data" / "alignment-train" / "written" / "texts.jsonl"


def _rows(path: Path, source: str) -> list[Written]:
    out = []
    for line in path.read_text().splitlines():
        if line.strip():
            row = json.loads(line)
            out.append(Written(row["code"], row["style"], row["text"], source))
    return out


def held_style(code: str) -> str:
    """The style of `code`'s text that is held apart."""
    return STYLES[hashlib.sha256(code.encode()).digest()[0] % len(STYLES)]


def held_apart(row: Written) -> bool:
    return row.source == "edukg" and row.style == held_style(row.code)


def every(shared: Path) -> list[Written]:
    """Every written text, the shared ones first (those not present are skipped)."""
    rows = _rows(shared_path(shared), "shared") if shared_path(shared).is_file() else []
    for path in OURS:
        if path.is_file():
            rows.extend(_rows(path, "edukg"))
    return rows


def training(shared: Path) -> list[Written]:
    """What may be trained on: every text but those held apart."""
    return [row for row in every(shared) if not held_apart(row)]


def apart(shared: Path) -> list[Written]:
    """The held-apart texts: one of every standard, never trained on."""
    return [row for row in every(shared) if held_apart(row)]


def digests(shared: Path) -> list[dict[str, str]]:
    """Each source file with its SHA-256 (for an artifact's provenance)."""
    paths = [(shared_path(shared), "alignment-train/written/texts.jsonl"),
             *((p, f"train/texts/{p.name}") for p in OURS)]  # fmt: skip
    return [{"path": name, "sha256": hashlib.sha256(p.read_bytes()).hexdigest()}
            for p, name in paths if p.is_file()]  # fmt: skip
