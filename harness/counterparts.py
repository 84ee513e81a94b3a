"""Counterparts across two real state frameworks without learning components: New York's
framework (../shared/data/alignment-dev/new-york) loaded with the sample, every
`supports` edge withheld, and /similar asked for each standard's counterparts in the other
state. The truth is what the withheld edges say: the other state's standards whose sets
of supporting learning components have a Jaccard of at least 0.5 with the standard's, in
an overlapping grade. Read from ../shared at run time, never copied.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from edukg.ingest.builder import load
from edukg.ingest.index import index
from edukg.services.alignment import SimilarQuery, similar
from edukg.store.base import Store

STATES = ("New York", "California")


@dataclass(frozen=True)
class Question:
    """A standard, where to look, and the right answers (node identifiers)."""

    case_uuid: str
    source: str
    target_jurisdiction: str
    answers: frozenset[str]


def _lines(path: Path) -> list[dict[str, Any]]:
    return [orjson.loads(line) for line in path.read_bytes().splitlines() if line.strip()]


def prepare(sample: Path, new_york: Path, work: Path) -> tuple[list[Question], str]:
    """The questions, and a loaded, indexed database of both frameworks without `supports`."""
    nodes: dict[str, dict[str, Any]] = {}
    edges: dict[str, dict[str, Any]] = {}
    for folder in (sample, new_york):
        for n in _lines(folder / "nodes.jsonl"):
            nodes.setdefault(n["identifier"], n)
        for e in _lines(folder / "relationships.jsonl"):
            edges.setdefault(e["identifier"], e)
    supported: dict[str, set[str]] = defaultdict(set)
    for e in edges.values():
        if e["label"] == "supports":
            supported[e["target_identifier"]].add(e["source_identifier"])
    questions = _questions(nodes, supported)
    out = work / "states"
    out.mkdir(parents=True, exist_ok=True)
    (out / "nodes.jsonl").write_bytes(b"\n".join(orjson.dumps(n) for n in nodes.values()) + b"\n")
    kept = [e for e in edges.values() if e["label"] != "supports"]
    (out / "relationships.jsonl").write_bytes(b"\n".join(orjson.dumps(e) for e in kept) + b"\n")
    db = str(work / "states.db")
    load([str(out)], db, data_version="1.0.0")
    index(db)
    return questions, db


def _standards(nodes: dict[str, dict[str, Any]], jurisdiction: str) -> list[dict[str, Any]]:
    return [
        n for n in nodes.values()
        if n["labels"][0] == "StandardsFrameworkItem"
        and n["properties"].get("jurisdiction") == jurisdiction
        and n["properties"].get("normalizedStatementType") == "Standard"
        and n["properties"].get("description")
    ]  # fmt: skip


def _grades(node: dict[str, Any]) -> set[str]:
    raw = node["properties"].get("gradeLevel") or []
    return set(orjson.loads(raw) if isinstance(raw, str) else raw)


def _questions(nodes: dict[str, dict[str, Any]], supported: dict[str, set[str]]) -> list[Question]:
    out = []
    for source_state, target_state in (STATES, STATES[::-1]):
        targets = [t for t in _standards(nodes, target_state) if supported.get(t["identifier"])]
        for s in _standards(nodes, source_state):
            mine = supported.get(s["identifier"])
            if not mine:
                continue
            answers = frozenset(
                t["identifier"] for t in targets
                if len(mine & supported[t["identifier"]]) / len(mine | supported[t["identifier"]]) >= 0.5
                and _grades(s) & _grades(t)
            )  # fmt: skip
            if answers:
                out.append(Question(s["properties"]["caseIdentifierUUID"], source_state,
                                    target_state, answers))  # fmt: skip
    return out


def measure(store: Store, questions: list[Question]) -> dict[str, float]:
    """Top-1 and top-5 of /similar, each way."""
    hits: dict[str, list[float]] = defaultdict(list)
    for q in questions:
        found = similar(store, SimilarQuery(q.case_uuid, jurisdiction=q.target_jurisdiction,
                                            limit=5, min_score=0.0)).data  # fmt: skip
        ids = [orjson.loads(r.record)["identifier"] for r in found]
        way = f"{q.source} -> {q.target_jurisdiction}"
        hits[f"{way} top-1"].append(float(bool(set(ids[:1]) & q.answers)))
        hits[f"{way} top-5"].append(float(bool(set(ids[:5]) & q.answers)))
    return {k: sum(v) / len(v) for k, v in hits.items()}


def scored(store: Store, questions: list[Question]) -> list[tuple[float, bool]]:
    """(score, right) of every suggestion in the first five, at no floor."""
    out = []
    for q in questions:
        found = similar(store, SimilarQuery(q.case_uuid, jurisdiction=q.target_jurisdiction,
                                            limit=5, min_score=0.0)).data  # fmt: skip
        for r in found:
            out.append((r.extension.score, orjson.loads(r.record)["identifier"] in q.answers))
    return out


def features(store: Store, questions: list[Question]) -> list[tuple[float, float, bool]]:
    """(share of the evidence, cosine, right) of each question's first ten suggestions."""
    from edukg.services.alignment.similarity import candidates

    out = []
    for q in questions:
        source, targets, scored_, _ = candidates(
            store, SimilarQuery(q.case_uuid, jurisdiction=q.target_jurisdiction)
        )
        for i, total, alike in [
            x for x in scored_ if targets.identifiers[x[0]] != source.identifier
        ][:10]:
            out.append((total, alike, targets.identifiers[i] in q.answers))
    return out
