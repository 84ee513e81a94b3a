"""Crosswalks and coverage computed in plain Python from export files: the truth the
alignment tests compare edukg's answers with (nothing here imports edukg)."""

from __future__ import annotations

import json
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


def _value(raw: Any) -> Any:
    if isinstance(raw, str) and raw[:1] in "[{":
        try:
            return json.loads(raw)
        except ValueError:
            return raw
    return raw


def _number(raw: Any) -> Any:
    if isinstance(raw, str):
        return float(raw) if "." in raw else int(raw)
    return raw


@dataclass
class Export:
    """What the truth reads of an export."""

    nodes: dict[str, dict[str, Any]] = field(default_factory=dict)
    labels: dict[str, str] = field(default_factory=dict)
    supports: dict[str, set[str]] = field(default_factory=lambda: defaultdict(set))
    children: dict[str, list[str]] = field(default_factory=lambda: defaultdict(list))
    published: dict[tuple[str, str], dict[str, Any]] = field(default_factory=dict)
    aligned: dict[str, set[str]] = field(default_factory=lambda: defaultdict(set))
    frameworks_of: dict[str, set[str]] = field(default_factory=lambda: defaultdict(set))

    @classmethod
    def read(cls, directory: Path) -> Export:
        e = cls()
        for line in (directory / "nodes.jsonl").read_text().splitlines():
            r = json.loads(line)
            e.nodes[r["identifier"]] = {k: _value(v) for k, v in r["properties"].items()}
            e.labels[r["identifier"]] = r["labels"][0]
        for line in (directory / "relationships.jsonl").read_text().splitlines():
            e._relationship(json.loads(line))
        e._membership()
        return e

    def _relationship(self, r: dict[str, Any]) -> None:
        s, t, p = r["source_identifier"], r["target_identifier"], r["properties"]
        if r["label"] == "supports":
            self.supports[t].add(s)
        elif r["label"] == "hasChild":
            self.children[s].append(t)
        elif r["label"] == "hasStandardAlignment":
            figures = {k: _number(p.get(k)) for k in
                       ("jaccard", "stateLCCount", "ccssLCCount", "sharedLCCount")}  # fmt: skip
            self.published[(s, t)] = figures
            self.published[(t, s)] = figures
        elif r["label"] == "hasEducationalAlignment":
            self.aligned[t].add(s)

    def _membership(self) -> None:
        for framework, label in self.labels.items():
            if label == "StandardsFramework":
                stack = list(self.children[framework])
                while stack:
                    item = stack.pop()
                    if framework not in self.frameworks_of[item]:
                        self.frameworks_of[item].add(framework)
                        stack.extend(self.children[item])

    def items(self, framework: str, statement_type: str | None = "Standard") -> set[str]:
        return {
            i for i, fws in self.frameworks_of.items()
            if framework in fws and self.labels[i] == "StandardsFrameworkItem"
            and (statement_type is None or self.nodes[i].get("normalizedStatementType") == statement_type)
        }  # fmt: skip

    def derived(self, s: str, t: str) -> dict[str, Any] | None:
        """The derived figures of s -> t, or None where no derived pair exists."""
        a, b = self.supports.get(s, set()), self.supports.get(t, set())
        shared = len(a & b)
        if s == t or not shared or self.frameworks_of[s] & self.frameworks_of[t]:
            return None
        if self.nodes[s].get("academicSubject") != self.nodes[t].get("academicSubject"):
            return None
        return {"jaccard": round(shared / len(a | b), 4), "sourceLCCount": len(a),
                "targetLCCount": len(b), "sharedLCCount": shared}  # fmt: skip

    def pairs(self, sources: set[str], targets: set[str]) -> dict[tuple[str, str], dict[str, Any]]:
        """Every pair between the two sets: published as published, else derived."""
        found: dict[tuple[str, str], dict[str, Any]] = {}
        for s, t in self.published:
            if s in sources and t in targets:
                found[(s, t)] = {**self.published[(s, t)], "method": "published"}
        supported: dict[str, set[str]] = defaultdict(set)  # only to skip hopeless pairs
        for standard, lcs in self.supports.items():
            for lc in lcs:
                supported[lc].add(standard)
        for s in sources:
            near = {t for lc in self.supports.get(s, ()) for t in supported[lc]} & targets
            for t in near:
                if (s, t) not in found and (figures := self.derived(s, t)) is not None:
                    found[(s, t)] = {**figures, "method": "learning-components"}
        return found

    def counterparts(self, s: str) -> dict[str, dict[str, Any]]:
        """Every crosswalk of one standard, to any standard."""
        others = {t for t, label in self.labels.items() if label == "StandardsFrameworkItem"}
        return {t: f for (_, t), f in self.pairs({s}, others).items()}

    def framework_uuid(self, framework: str) -> str:
        return str(self.nodes[framework]["caseIdentifierUUID"])

    def covered(
        self, standard: str, curriculum: str, min_jaccard: float = 0.0
    ) -> tuple[set[str], set[str]]:
        """(content aligned directly, counterparts with aligned content)."""

        def content(s: str) -> set[str]:
            return {c for c in self.aligned.get(s, ())
                    if str(self.nodes[c].get("courseCode", "")).split(":")[0] == curriculum}  # fmt: skip

        via = {t for t, f in self.counterparts(standard).items()
               if (f["jaccard"] or 0) >= min_jaccard and content(t)}  # fmt: skip
        return content(standard), via
