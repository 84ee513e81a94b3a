"""Alignment quality on the sample, with truth taken from the data itself (run by
bench/align_eval.py and asserted by tests/test_text_alignment.py).

(a) one learning component's description as the text, the California standards it
    `supports` as the answer: hit@1 and hit@5 of POST /alignments (jurisdiction
    California);
(b) 2-4 descriptions of one grade joined into a paragraph, the union of the standards
    they support as the answer: mean recall@10 over min(answers, 10), and the share of
    texts whose every standard is found (with and without the grade given);
(c) a California standard, its published Common Core counterparts with Jaccard >= 0.5 as
    the answer for /similar: top-1 and top-5.
Every learning component used as a text is left out of the data that (a) and (b) load
(no text is found by looking its component up); (c) loads the data without `supports`
(it measures meaning). Today's search answers the same questions beside each figure
(the text cut to 500 characters, as its `query` allows).
"""

from __future__ import annotations

import hashlib
import shutil
import sys
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from edukg.ingest.builder import load
from edukg.ingest.index import index
from edukg.model.vocabulary import STANDARD, grade_mask
from edukg.services import search as searching
from edukg.services.alignment import AlignQuery, SimilarQuery, align, similar
from edukg.store.base import Search, Store
from edukg.store.sqlite_vectors import cache_path

HELD_OUT = 8  # one learning component in this many is a text, left out of the data
STATE, CCSS = "California", "Multi-State"


@dataclass
class Truth:
    """The questions and their answers, by node identifier."""

    single: list[tuple[str, set[str]]] = field(default_factory=list)  # (a)
    joined: list[tuple[str, str, set[str]]] = field(default_factory=list)  # (b): text, grade
    counterparts: list[tuple[str, str, set[str]]] = field(default_factory=list)  # (c)


def _read(path: Path) -> list[dict[str, Any]]:
    return [orjson.loads(line) for line in path.read_bytes().splitlines() if line.strip()]


def _held_out(identifier: str) -> bool:
    return hashlib.sha256(identifier.encode()).digest()[0] % HELD_OUT == 0


def _grades(properties: dict[str, Any]) -> str:
    """A standard's grades as one key ("3"; "9,10,11,12"); the export writes a JSON list."""
    grades = properties.get("gradeLevel") or []
    return ",".join(orjson.loads(grades) if isinstance(grades, str) else grades)


def truth_of(sample: Path) -> tuple[Truth, list[dict[str, Any]], list[dict[str, Any]]]:
    """The questions, and the sample's nodes and relationships."""
    nodes, edges = _read(sample / "nodes.jsonl"), _read(sample / "relationships.jsonl")
    by_id = {n["identifier"]: n for n in nodes}
    supports: dict[str, set[str]] = defaultdict(set)
    for e in edges:
        if e["label"] == "supports":
            supports[e["source_identifier"]].add(e["target_identifier"])
    truth = Truth()
    texts = {
        n["identifier"]: n["properties"]["description"]
        for n in nodes
        if "LearningComponent" in n["labels"] and _held_out(n["identifier"])
    }
    by_grade: dict[str, list[str]] = defaultdict(list)
    for lc in sorted(texts):
        answers = {s for s in supports[lc] if by_id[s]["properties"].get("jurisdiction") == STATE}
        if not answers:
            continue
        truth.single.append((texts[lc], answers))
        levels = {_grades(by_id[s]["properties"]) for s in answers}
        if len(levels) == 1 and levels != {""}:  # one grade (or one band, as high school's)
            by_grade[levels.pop()].append(lc)
    for grade, lcs in sorted(by_grade.items()):
        size, start = 2, 0
        while start + size <= len(lcs):
            group = lcs[start : start + size]
            text = " ".join(texts[lc].rstrip(".") + "." for lc in group)
            truth.joined.append((text, grade, set().union(*(supports[lc] for lc in group))))
            start, size = start + size, 2 + (size - 1) % 3  # sizes 2, 3, 4, 2, ...
    truth.counterparts = _counterparts(by_id, edges)
    return truth, nodes, edges


def _counterparts(
    by_id: dict[str, dict[str, Any]], edges: list[dict[str, Any]]
) -> list[tuple[str, str, set[str]]]:
    """(c): each California standard's published counterparts at Jaccard >= 0.5."""
    found: dict[str, set[str]] = defaultdict(set)
    for e in edges:
        if e["label"] == "hasStandardAlignment" and float(e["properties"]["jaccard"]) >= 0.5:
            found[e["source_identifier"]].add(e["target_identifier"])
    return [
        (by_id[source]["properties"]["caseIdentifierUUID"], source, targets)
        for source, targets in sorted(found.items())
    ]


def _write(directory: Path, nodes: list[dict[str, Any]], edges: list[dict[str, Any]]) -> str:
    directory.mkdir(parents=True, exist_ok=True)
    for name, rows in (("nodes.jsonl", nodes), ("relationships.jsonl", edges)):
        (directory / name).write_bytes(b"\n".join(orjson.dumps(r) for r in rows) + b"\n")
    return str(directory)


def prepare(sample: Path, work: Path) -> tuple[Truth, str, str]:
    """Truth, and two indexed databases: without the held-out components (for a and b),
    and without `supports` (for c)."""
    truth, nodes, edges = truth_of(sample)
    kept_nodes = [
        n for n in nodes if not ("LearningComponent" in n["labels"] and _held_out(n["identifier"]))
    ]
    kept_edges = [
        e for e in edges if not (e["label"] == "supports" and _held_out(e["source_identifier"]))
    ]
    texts_db, meaning_db = str(work / "texts.db"), str(work / "meaning.db")
    load([_write(work / "texts", kept_nodes, kept_edges)], texts_db, data_version="1.0.0")
    index(texts_db)
    plain = [e for e in edges if e["label"] != "supports"]
    load([_write(work / "meaning", nodes, plain)], meaning_db, data_version="1.0.0")
    shutil.copy(cache_path(texts_db), cache_path(meaning_db))  # the same texts: no new runs
    index(meaning_db)
    return truth, texts_db, meaning_db


def _mask(grade: str | None) -> int:
    return grade_mask(grade.split(",")) if grade else 0


def _ids(rows: list[bytes]) -> list[str]:
    return [orjson.loads(r)["identifier"] for r in rows]


_KEYS: dict[tuple[int, str], tuple[str, str]] = {}


def _distinct(store: Store, identifiers: Iterable[str]) -> list[tuple[str, str]]:
    """Standards as (code, statement), each once, in order: a framework that repeats one
    standard in several course trees (California) has it under several identifiers, and
    a standard counts once however many places it stands."""
    out: dict[tuple[str, str], None] = {}
    for identifier in identifiers:
        key = _KEYS.get((id(store), identifier))
        if key is None:
            found = store.by_identifier(identifier, STANDARD)
            record = orjson.loads(found.doc) if found else {}
            key = (record.get("statementCode") or identifier, record.get("description") or "")
            _KEYS[(id(store), identifier)] = key
        out.setdefault(key, None)
    return list(out)


def _search(
    store: Store, text: str, jurisdiction: str, grade: str | None, k: int
) -> list[tuple[str, str]]:
    filters = Search(STANDARD, (), jurisdiction, None, None, _mask(grade))
    found = _ids(searching.search_standards(store, text[:500], None, filters, 4 * k))
    return _distinct(store, found)[:k]


def _aligned(store: Store, text: str, grade: str | None, k: int) -> list[tuple[str, str]]:
    query = AlignQuery(text, jurisdiction=STATE, grades_mask=_mask(grade), limit=k)
    return _distinct(store, (r.brief.identifier for r in align(store, query).data))


def measure_single(store: Store, truth: Truth) -> dict[str, float]:
    """(a): hit@1 and hit@5, of alignment and of today's search."""
    out: dict[str, list[float]] = defaultdict(list)
    for text, identifiers in truth.single:
        answers = set(_distinct(store, identifiers))
        for name, found in (("align", _aligned(store, text, None, 5)),
                            ("search", _search(store, text, STATE, None, 5))):  # fmt: skip
            out[f"{name} hit@1"].append(float(bool(set(found[:1]) & answers)))
            out[f"{name} hit@5"].append(float(bool(set(found[:5]) & answers)))
    return {k: sum(v) / len(v) for k, v in out.items()}


def measure_joined(store: Store, truth: Truth, with_grade: bool) -> dict[str, float]:
    """(b): mean recall@10 and the share of texts with every standard found."""
    out: dict[str, list[float]] = defaultdict(list)
    for text, grade, identifiers in truth.joined:
        answers = set(_distinct(store, identifiers))
        g = grade if with_grade else None
        for name, found in (("align", _aligned(store, text, g, 10)),
                            ("search", _search(store, text, STATE, g, 10))):  # fmt: skip
            recall = len(set(found) & answers) / min(len(answers), 10)
            out[f"{name} recall@10"].append(recall)
            out[f"{name} all found"].append(float(recall >= 1.0))
    return {k: sum(v) / len(v) for k, v in out.items()}


def measure_similar(store: Store, truth: Truth) -> dict[str, float]:
    """(c): top-1 and top-5 of /similar, and of search by the statement."""
    out: dict[str, list[float]] = defaultdict(list)
    for case_uuid, identifier, answers in truth.counterparts:
        query = SimilarQuery(case_uuid, jurisdiction=CCSS, limit=5)
        found = [r.brief.identifier for r in similar(store, query).data]
        record = store.by_identifier(identifier, STANDARD)
        statement = orjson.loads(record.doc)["description"] if record else ""
        grades = orjson.loads(record.doc).get("gradeLevel") if record else []
        mask = grade_mask(grades or [])
        filters = Search(STANDARD, (), CCSS, "Mathematics", None, mask)
        searched = _ids(searching.search_standards(store, statement[:500], None, filters, 5))
        for name, ids in (("similar", found), ("search", searched)):
            out[f"{name} top-1"].append(float(bool(set(ids[:1]) & answers)))
            out[f"{name} top-5"].append(float(bool(set(ids[:5]) & answers)))
    return {k: sum(v) / len(v) for k, v in out.items()}


def report(title: str, figures: dict[str, float]) -> None:
    """One line per measure: the new operation's figure beside search's."""
    print(title)
    for name in sorted(figures):
        print(f"  {name:20} {figures[name]:.3f}")
    sys.stdout.flush()
