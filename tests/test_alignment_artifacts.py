"""Alignment's learned artifacts load through one loader that checks what it reads: a
missing or damaged artifact is refused, the server still starts, alignments and checks
fall back as they do without it, and /healthz says which artifact was refused and why."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from importlib import resources
from pathlib import Path
from typing import Any

import httpx
import pytest

from edukg.services.alignment import artifacts, gate, rerank
from harness.processes import EDUKG, edukg, free_port, stop, tree_env, wait_for
from tests.support import BASE

MATHEMATICS = "A recipe uses 3 cups of flour for every 2 cups of sugar. How much sugar goes with 12 cups of flour?"


def _shipped() -> dict[str, Any]:
    raw = resources.files("edukg.model").joinpath(gate.ARTIFACT).read_bytes()
    loaded: dict[str, Any] = json.loads(raw)
    return loaded


def _damaged(kind: str) -> dict[str, Any]:
    artifact = _shipped()
    if kind == "nan":
        artifact["weights"][7] = float("nan")
    elif kind == "shape":
        artifact["weights"] = artifact["weights"][:100]
    elif kind == "threshold":
        artifact["threshold"] = 1.5
    return artifact


@pytest.fixture
def place(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    monkeypatch.setenv(artifacts.PLACE, str(tmp_path))
    artifacts.forget()
    yield tmp_path
    artifacts.forget()


@pytest.mark.parametrize(
    ("kind", "why"),
    [("nan", "not a finite number"), ("shape", "shape (100,)"), ("threshold", "1.5")],
)
def test_a_damaged_artifact_is_refused_with_its_reason(place: Path, kind: str, why: str) -> None:
    # json.dumps writes NaN as the bare token NaN, which json.loads reads back.
    (place / gate.ARTIFACT).write_text(json.dumps(_damaged(kind)))
    assert gate.gate() is None
    status = gate.status()
    assert status["subjectGate"] is False and why in status["subjectGateRefused"]


def test_a_missing_artifact_is_reported_missing(place: Path) -> None:
    assert gate.gate() is None
    assert gate.status()["subjectGateRefused"] == "missing"


def test_the_shipped_artifact_passes_its_check(place: Path) -> None:
    (place / gate.ARTIFACT).write_text(json.dumps(_shipped()))
    found = gate.gate()
    assert found is not None and artifacts.refusal(gate.ARTIFACT) is None


@pytest.fixture
def damaged_server(indexed_sample_db: str, tmp_path: Path) -> Iterator[tuple[str, str]]:
    """A real `edukg serve` of the indexed sample whose subject gate holds a NaN weight."""
    (tmp_path / gate.ARTIFACT).write_text(json.dumps(_damaged("nan")))
    key = edukg("--db", indexed_sample_db, "keys", "create", "artifacts",
                check=True).stdout.splitlines()[-1]  # fmt: skip
    port = free_port()
    proc = subprocess.Popen(
        [*EDUKG, "--db", indexed_sample_db, "serve", "--port", str(port)],
        env={**tree_env(), artifacts.PLACE: str(tmp_path)},
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )  # fmt: skip
    try:
        url = f"http://127.0.0.1:{port}"
        wait_for(url + "/healthz", proc, seconds=60)
        yield url, key
    finally:
        stop(proc)


def test_a_server_with_a_damaged_gate_still_aligns_and_says_why(
    damaged_server: tuple[str, str],
) -> None:
    url, key = damaged_server
    headers = {"x-api-key": key}
    found = httpx.post(f"{url}{BASE}/alignments", headers=headers, timeout=60,
                       json={"text": MATHEMATICS, "jurisdiction": "Multi-State"})  # fmt: skip
    assert found.status_code == 200, found.text
    assert found.json()["data"], "a mathematics text is answered by the similarity floor"
    checked = httpx.post(f"{url}{BASE}/alignments/check", headers=headers, timeout=60,
                         json={"text": MATHEMATICS, "statementCode": "6.RP.A.3",
                               "jurisdiction": "Multi-State"})  # fmt: skip
    assert checked.status_code == 200, checked.text
    health = httpx.get(f"{url}/healthz", headers=headers, timeout=10).json()
    alignment = health["details"]["alignment"]
    assert alignment["subjectGate"] is False
    assert "not a finite number" in alignment["artifacts"][gate.ARTIFACT]["refused"]
    assert alignment["version"].endswith("+gate-none")


def _rerank(kind: str) -> dict[str, Any]:
    raw = resources.files("edukg.model").joinpath(rerank.ARTIFACT).read_bytes()
    artifact: dict[str, Any] = json.loads(raw)
    if kind == "nan":
        artifact["weights"]["classifier"] = float("nan")
    elif kind == "shape":
        artifact["vectors"]["shape"] = [artifact["vectors"]["shape"][0] // 2, 768]
    elif kind == "owners":
        artifact["owner"] = artifact["owner"][:-1]
    return artifact


@pytest.mark.parametrize(("kind", "why"), [("nan", "classifier"), ("shape", "shape"),
                                           ("owners", "shape")])  # fmt: skip
def test_a_damaged_ranking_stage_is_refused_and_the_fused_order_stands(
    place: Path, indexed_sample_db: str, kind: str, why: str
) -> None:
    from edukg.services.alignment import AlignQuery, align, version
    from edukg.store import open_store

    shipped = resources.files("edukg.model").joinpath(gate.ARTIFACT).read_bytes()
    (place / gate.ARTIFACT).write_bytes(shipped)
    (place / rerank.ARTIFACT).write_text(json.dumps(_rerank(kind)))
    store = open_store(indexed_sample_db)
    found = align(store, AlignQuery(MATHEMATICS, jurisdiction="Multi-State"))
    assert found.data, "answered by the fused order"
    assert "+rerank-" not in version()
    refused = artifacts.report()[rerank.ARTIFACT]
    assert why in refused["refused"], refused


def test_the_shipped_ranking_stage_loads_with_its_provenance() -> None:
    raw = resources.files("edukg.model").joinpath(rerank.ARTIFACT).read_bytes()
    artifact = json.loads(raw)
    assert len(raw) < 25 << 20
    provenance = artifact["provenance"]
    assert {"data", "seed", "commit", "training accuracy", "held apart"} <= set(provenance)
    assert all(len(source["sha256"]) == 64 for source in provenance["data"])
    artifacts.forget()
    assert rerank.fingerprint() is not None
