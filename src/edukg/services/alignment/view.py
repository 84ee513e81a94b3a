"""What alignment reads of the standards a filter admits, gathered once per release.

For the candidates of one filter (a jurisdiction or a framework, a subject, a statement
type, grades): their codes, statements and grades; which ones repeat the same code and
statement (a framework that places one standard in several course trees); the domain
each lies in (services.hierarchy); the learning components that support each, its own and
those of its published crosswalk counterparts (the export puts learning components on
state standards: through its crosswalks Common Core's standards get them too); and the
BM25 index of the statements (services.alignment.bm25). Aligning a text and finding a standard's
counterparts both rank over this view.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

import orjson

from edukg.model.vocabulary import COMPONENT, grade_mask
from edukg.services import hierarchy
from edukg.services.alignment import bm25
from edukg.services.alignment.bm25 import Words
from edukg.services.alignment.vector_index import Indexed, indexed
from edukg.services.memo import remembered
from edukg.store.base import COMPONENTS, CROSSWALK, Matching, Search, Store, every_row

_READ = 1000  # records read per query
_GROUPING = "Standard Grouping"


@dataclass(frozen=True)
class StandardsView:
    """The candidates of one filter, in a fixed order (the semantic index's, where the
    release has one), with what ranking them needs."""

    identifiers: list[str]
    case_uuids: list[str]
    codes: list[str | None]
    statements: list[str]
    grades: Any  # int64 grade masks, one per candidate
    mathematics: Any  # bool: the candidate's subject is Mathematics (what the gate knows)
    groups: Any  # int32: candidates with the same number repeat one code and statement
    # int32: candidates of different codes that share one statement (G-CO.C.10 and
    # G-SRT.B.4, "Prove theorems about triangles.") have the same number; -1 for the rest
    twins: Any
    telling: list[str]  # what tells a twin apart: its notes, else its parent's statement
    words: Words  # BM25 over the statements
    domain_of: Any  # int32 index into `domains`, -1 where none
    domains: list[str]  # domain identifiers
    domain_names: list[str]  # their descriptions
    domain_codes: list[str | None]
    component_start: Any  # int32, len(identifiers) + 1: candidate i's components are
    component_index: Any  # component_index[component_start[i]:component_start[i + 1]]
    components: list[str]  # component identifiers
    component_texts: list[str]
    component_words: Words  # BM25 over their descriptions (ranking by words alone)
    ancestry: hierarchy.Ancestry
    jurisdictions: list[str]  # each candidate's

    def weight(self) -> int:
        """About the bytes this view holds (for the memo's budget)."""
        text = sum(len(s) for s in self.statements) + sum(len(t) for t in self.component_texts)
        return (
            400 * len(self.identifiers)
            + 200 * len(self.components)
            + text
            + (self.words.bytes() + self.component_words.bytes())
        )

    def jurisdictions_of(self, candidates: Any) -> list[str]:
        """The distinct jurisdictions of `candidates` (numbers), sorted."""
        return sorted({self.jurisdictions[int(i)] for i in candidates} - {""})

    def components_of(self, i: int) -> Any:
        """Candidate `i`'s component numbers (into `components`)."""
        return self.component_index[self.component_start[i] : self.component_start[i + 1]]


def view(store: Store, search: Search, index: Indexed | None) -> StandardsView:
    """The view of `search`'s candidates (its words ignored), kept per release: in the
    semantic index's order when `index` is the index of the same filter."""
    key = ("standards-view", type(store).__qualname__, search, index is not None)

    def compute() -> tuple[int, StandardsView]:
        found = _build(store, search, index)
        return found.weight(), found

    return remembered(store, key, compute)


# Every published counterpart lends its components (bench/align_eval.py: a floor of 0.5
# changed hit@1 by less than the measure's noise and left 60 standards without any).
_COUNTERPART_JACCARD = 0.0


def _build(store: Store, search: Search, index: Indexed | None) -> StandardsView:
    import numpy as np  # noqa: PLC0415

    ids = list(index.identifiers) if index is not None else _listed(store, search)
    docs: dict[str, dict[str, Any]] = {}
    for start in range(0, len(ids), _READ):
        for identifier, found in store.by_identifiers(ids[start : start + _READ]).items():
            docs[identifier] = orjson.loads(found.doc)
    records = [docs.get(i, {}) for i in ids]
    codes = [r.get("statementCode") for r in records]
    statements = [r.get("description") or "" for r in records]
    grades = np.array([grade_mask(r.get("gradeLevel")) for r in records], dtype=np.int64)
    groups = _groups(codes, statements)
    ancestry = hierarchy.ancestry(store, ids)
    domain_ids = [ancestry.domain(i) for i in ids]
    domains = sorted({d for d in domain_ids if d is not None})
    number = {d: n for n, d in enumerate(domains)}
    domain_of = np.array([number.get(d, -1) if d else -1 for d in domain_ids], dtype=np.int32)
    named = hierarchy.domain_codes(ancestry, dict(zip(ids, codes, strict=True)))
    start, index_, components = _components(store, ids)
    texts = _descriptions(store, components)
    component_texts = [texts.get(c, "") for c in components]
    return StandardsView(
        identifiers=ids,
        case_uuids=[r.get("caseIdentifierUUID") or "" for r in records],
        codes=codes,
        statements=statements,
        grades=grades,
        mathematics=np.array(
            [r.get("academicSubject") == "Mathematics" for r in records], dtype=bool
        ),
        groups=groups,
        twins=_twins(codes, statements),
        telling=[_telling(r, ancestry, i) for r, i in zip(records, ids, strict=True)],
        words=bm25.index(statements),
        domain_of=domain_of,
        domains=domains,
        domain_names=[ancestry.nodes[d].description or "" for d in domains],
        domain_codes=[named.get(d) for d in domains],
        component_start=start,
        component_index=index_,
        components=components,
        component_texts=component_texts,
        component_words=bm25.index(component_texts),
        ancestry=ancestry,
        jurisdictions=[r.get("jurisdiction") or "" for r in records],
    )


def _listed(store: Store, search: Search) -> list[str]:
    """The candidates' identifiers without a semantic index: every record the filters
    admit, by identifier."""
    query = Matching(search.kind, subject=search.subject, jurisdiction=search.jurisdiction,
                     statement_type=search.statement_type, grades_mask=search.grades_mask,
                     framework=search.framework)  # fmt: skip
    return [identifier for identifier, _ in every_row(store, query, _READ)]


# A practice standard that a framework repeats once per grade (1.MP1, 2.MP1, ..., HS.MP1,
# "Make sense of problems and persevere in solving them."): one standard, answered once.
_PRACTICE = re.compile(r"^(?:K|\d{1,2}|HS)\.(MP[1-8])$")


def _family(code: str) -> str:
    """The code a standard is answered under: a grade's practice is the framework's."""
    found = _PRACTICE.match(code)
    return found.group(1) if found else code


def _groups(codes: Sequence[str | None], statements: Sequence[str]) -> Any:
    """A number per candidate, shared by candidates of the same code (a grade's practice:
    the same practice) and statement (a candidate without a code is its own)."""
    import numpy as np  # noqa: PLC0415

    seen: dict[tuple[str, str], int] = {}
    out = np.arange(len(codes), dtype=np.int32)
    for i, (code, text) in enumerate(zip(codes, statements, strict=True)):
        if code:
            out[i] = seen.setdefault((_family(code), " ".join(text.split())), i)
    return out


def _twins(codes: Sequence[str | None], statements: Sequence[str]) -> Any:
    """A number per candidate shared by candidates of different codes with one statement
    (-1 where the statement is its code's alone)."""
    import numpy as np  # noqa: PLC0415

    by_text: dict[str, set[str]] = defaultdict(set)
    for code, text in zip(codes, statements, strict=True):
        if code and text:
            by_text[" ".join(text.split()).lower()].add(_family(code))
    number = {text: n for n, (text, found) in enumerate(by_text.items()) if len(found) > 1}
    return np.array([number.get(" ".join(text.split()).lower(), -1) if code else -1
                     for code, text in zip(codes, statements, strict=True)], dtype=np.int32)  # fmt: skip


def _telling(record: dict[str, Any], ancestry: hierarchy.Ancestry, identifier: str) -> str:
    """A standard's notes (its examples: "Theorems include: ..."), else the statement of
    the grouping above it."""
    notes = record.get("notes")
    if isinstance(notes, str) and notes.strip():
        return notes
    path = ancestry.path(identifier)
    return (path[-1].description or "") if path else ""


def _components(store: Store, ids: list[str]) -> tuple[Any, Any, list[str]]:
    """Each candidate's learning components, its own and its published counterparts', as
    one flat array with each candidate's start."""
    import numpy as np  # noqa: PLC0415

    own: dict[str, set[str]] = defaultdict(set)
    for node, lc in store.links_many(COMPONENTS, ids):
        own[node].add(lc)
    lent: dict[str, set[str]] = defaultdict(set)  # counterpart -> the candidates it lends to
    for node, other, doc in store.rows_many(CROSSWALK, ids):
        if (orjson.loads(doc).get("jaccard") or 0.0) >= _COUNTERPART_JACCARD:
            lent[other].add(node)
    for other, lc in store.links_many(COMPONENTS, sorted(lent)):
        for node in lent[other]:
            own[node].add(lc)
    components = sorted({lc for lcs in own.values() for lc in lcs})
    number = {lc: n for n, lc in enumerate(components)}
    start = np.zeros(len(ids) + 1, dtype=np.int32)
    flat: list[int] = []
    for i, identifier in enumerate(ids):
        flat.extend(sorted(number[lc] for lc in own.get(identifier, ())))
        start[i + 1] = len(flat)
    return start, np.array(flat, dtype=np.int32), components


def _descriptions(store: Store, identifiers: list[str]) -> dict[str, str]:
    out: dict[str, str] = {}
    for start in range(0, len(identifiers), _READ):
        for identifier, found in store.by_identifiers(identifiers[start : start + _READ]).items():
            out[identifier] = orjson.loads(found.doc).get("description") or ""
    return out


@dataclass(frozen=True)
class Vectors:
    """The semantic index's rows for a view: its candidates' statements, the learning
    components it names and its domains' headings (each row -1 where not indexed)."""

    statements: Any  # float32 (candidates, dimensions)
    components: Any  # float32 (indexed components, dimensions)
    component_rows: Any  # int32: each of view.components' row in `components`, or -1
    headings: Any  # float32 (indexed domains, dimensions)
    heading_rows: Any  # int32: each of view.domains' row in `headings`, or -1


def vectors(store: Store, search: Search, found: StandardsView, index: Indexed) -> Vectors | None:
    """The vectors ranking `found` by meaning reads; None without the components' or the
    groupings' index."""
    lcs = indexed(store, Search(COMPONENT, (), subject=search.subject))
    groupings = indexed(store, replace(search, statement_type=_GROUPING, grades_mask=0))
    if lcs is None or groupings is None:
        return None
    lc_rows, lc_vectors = _rows(lcs, found.components)
    heading_rows, heading_vectors = _rows(groupings, found.domains)
    return Vectors(index.vectors, lc_vectors, lc_rows, heading_vectors, heading_rows)


def _rows(index: Indexed, identifiers: list[str]) -> tuple[Any, Any]:
    """Where each of `identifiers` sits among the vectors kept (-1: not indexed), and
    those vectors, gathered."""
    import numpy as np  # noqa: PLC0415

    rows = [index.rows.get(i, -1) for i in identifiers]
    kept = [r for r in rows if r >= 0]
    position = np.full(len(identifiers), -1, dtype=np.int32)
    n = 0
    for i, r in enumerate(rows):
        if r >= 0:
            position[i] = n
            n += 1
    gathered = index.vectors[kept] if kept else np.zeros((0, index.vectors.shape[1]), np.float32)
    return position, np.asarray(gathered, dtype=np.float32)
