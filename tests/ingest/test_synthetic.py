"""The synthetic export generator: counts, shapes, determinism, and that it loads."""

from __future__ import annotations

import hashlib
import subprocess
from collections import Counter
from pathlib import Path

import orjson

from edukg.ingest import synthetic
from edukg.ingest.builder import load
from harness.processes import EDUKG


def test_counts_scale_and_shapes(tmp_path: Path) -> None:
    counts = synthetic.write(tmp_path / "a", scale=0.01, seed=3)
    nodes = [orjson.loads(x) for x in (tmp_path / "a" / "nodes.jsonl").read_bytes().splitlines()]
    rels = [
        orjson.loads(x) for x in (tmp_path / "a" / "relationships.jsonl").read_bytes().splitlines()
    ]
    assert counts == {"nodes.jsonl": len(nodes), "relationships.jsonl": len(rels)}
    labels = Counter(n["labels"][0] for n in nodes)
    assert labels == {k: max(1, round(v * 0.01)) for k, v in synthetic.FULL_NODES.items()}
    kinds = Counter(r["label"] for r in rels)
    assert kinds == {k: max(1, round(v * 0.01)) for k, v in synthetic.FULL_RELATIONSHIPS.items()}
    item = next(n for n in nodes if n["labels"] == ["StandardsFrameworkItem"])["properties"]
    assert isinstance(item["gradeLevel"], str) and item["gradeLevel"].startswith("[")
    assert item["isCurrent"] in ("true", "false")
    xwalk = next(r for r in rels if r["label"] == "hasStandardAlignment")["properties"]
    assert all(isinstance(xwalk[k], str) for k in ("jaccard", "stateLCCount", "sharedLCCount"))


def test_same_seed_same_bytes(tmp_path: Path) -> None:
    def digest(directory: Path) -> str:
        h = hashlib.sha256()
        for name in ("nodes.jsonl", "relationships.jsonl"):
            h.update((directory / name).read_bytes())
        return h.hexdigest()

    synthetic.write(tmp_path / "a", scale=0.005, seed=9)
    synthetic.write(tmp_path / "b", scale=0.005, seed=9)
    synthetic.write(tmp_path / "c", scale=0.005, seed=10)
    assert digest(tmp_path / "a") == digest(tmp_path / "b") != digest(tmp_path / "c")


def test_cli_generates_an_export_that_loads(tmp_path: Path) -> None:
    out = tmp_path / "gen"
    done = subprocess.run(
        [*EDUKG, "generate", str(out), "--scale", "0.005", "--seed", "1"],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    summary = load([str(out)], str(tmp_path / "g.db"))
    assert summary.dangling == 0 and summary.duplicate_nodes == 0
    assert summary.node_counts["StandardsFrameworkItem"] == round(222_865 * 0.005)
