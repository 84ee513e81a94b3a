"""Crosswalks between any two frameworks, derived from learning components.

The export's own crosswalks (`hasStandardAlignment`) are "derived from measurable overlap
of deconstructed skills": the Jaccard index of two standards' sets of supporting learning
components. The same measure applies to any two items of two different frameworks of the
same subject that share a learning component; it is computed here, on request, from the
stored `supports` sets (a few indexed reads and set arithmetic: cheaper at full scale than
keeping every pair, see docs/benchmarks.md). Published crosswalks are served as published:
a derived figure never replaces one. Every pair says how it was obtained.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import orjson

from edukg.model.alignment import CrosswalkMethod, FrameworkItemBrief
from edukg.model.framework_rows import DerivedStandardCrosswalk, FrameworkCrosswalk
from edukg.model.vocabulary import STANDARD, grade_mask
from edukg.store.base import (
    COMPONENTS,
    CROSSWALK,
    FRAMEWORK_ITEMS,
    FRAMEWORK_OF,
    SUPPORTED,
    Members,
    Store,
    every_row,
)

PUBLISHED: CrosswalkMethod = "published"
DERIVED: CrosswalkMethod = "learning-components"
_MULTI_STATE = "Multi-State"
_READ = 2_000  # members read per page of the store


@dataclass(frozen=True)
class Item:
    """What a crosswalk row shows of a framework item, and what its matching reads."""

    identifier: str
    doc: bytes  # the full record, as served
    case_uuid: str
    code: str | None
    description: str | None
    jurisdiction: str | None
    subject: str | None
    grades: tuple[str, ...]
    statement_type: str | None

    def brief(self) -> FrameworkItemBrief:
        """The fields a crosswalk, coverage or alignment row names an item by."""
        return FrameworkItemBrief(
            identifier=self.identifier,
            caseIdentifierUUID=self.case_uuid,
            statementCode=self.code,
            description=self.description,
            jurisdiction=self.jurisdiction,
            academicSubject=self.subject,
            gradeLevel=list(self.grades),
            normalizedStatementType=self.statement_type,
        )


def item_of(identifier: str, doc: bytes) -> Item:
    """An Item from a standard's served record."""
    record = orjson.loads(doc)
    return Item(
        identifier=identifier,
        doc=bytes(doc),
        case_uuid=record.get("caseIdentifierUUID") or "",
        code=record.get("statementCode"),
        description=record.get("description"),
        jurisdiction=record.get("jurisdiction"),
        subject=record.get("academicSubject"),
        grades=tuple(record.get("gradeLevel") or ()),
        statement_type=record.get("normalizedStatementType"),
    )


@dataclass(frozen=True)
class Pair:
    """Two items and their overlap: `source_count` learning components support the
    source, `target_count` the target, `shared` both (None where a published row does not
    say)."""

    source: Item
    target: Item
    jaccard: float | None
    source_count: int | None
    target_count: int | None
    shared: int | None
    method: CrosswalkMethod
    published: dict[str, Any] | None = None  # the published figures, as published

    def figures(self) -> DerivedStandardCrosswalk:
        """jaccard, the contract's state/CCSS counts, the source/target counts, method:
        what GET .../crosswalks appends to the other standard's record."""
        state, ccss = self._state_and_ccss()
        return DerivedStandardCrosswalk(
            jaccard=self.jaccard,
            stateLCCount=state,
            ccssLCCount=ccss,
            sharedLCCount=self.shared,
            sourceLCCount=self.source_count,
            targetLCCount=self.target_count,
            method=self.method,
        )

    def _state_and_ccss(self) -> tuple[int | None, int | None]:
        if self.published is not None:
            return self.published.get("stateLCCount"), self.published.get("ccssLCCount")
        # Derived: the contract's meaning holds only between a state and Common Core.
        if self.target.jurisdiction == _MULTI_STATE != self.source.jurisdiction:
            return self.source_count, self.target_count
        if self.source.jurisdiction == _MULTI_STATE != self.target.jurisdiction:
            return self.target_count, self.source_count
        return None, None

    def row(self) -> FrameworkCrosswalk:
        """The row of `edukg crosswalk` and GET framework-crosswalks."""
        return FrameworkCrosswalk(
            source=self.source.brief(),
            target=self.target.brief(),
            jaccard=self.jaccard,
            sourceLCCount=self.source_count,
            targetLCCount=self.target_count,
            sharedLCCount=self.shared,
            method=self.method,
        )


def overlap(a: frozenset[str], b: frozenset[str]) -> tuple[float, int, int, int]:
    """(Jaccard |a ∩ b| / |a ∪ b| to 4 places, as the export gives it; |a|; |b|; |a ∩ b|)."""
    shared = len(a & b)
    union = len(a) + len(b) - shared
    return (round(shared / union, 4) if union else 0.0), len(a), len(b), shared


def members(store: Store, query: Members) -> dict[str, Item]:
    """The items of a framework (with the query's filters), by identifier."""
    return {key: item_of(key, doc) for key, doc in every_row(store, query, _READ)}


def framework_items(
    store: Store, query: Members
) -> tuple[dict[str, Item], dict[str, frozenset[str]]]:
    """A framework's items (with the query's filters) and their learning components, from
    the framework's one FRAMEWORK_ITEMS row; from the records, for a release loaded
    before that row existed. Items read this way carry no record (`doc` is empty)."""
    row = store.lookup(FRAMEWORK_ITEMS, query.framework)
    if row is None:
        items = members(store, query)
        return items, component_sets(store, items)
    found: dict[str, Item] = {}
    sets: dict[str, frozenset[str]] = {}
    for identifier, uuid, code, text, jurisdiction, subject, grades, kind, lcs in orjson.loads(row)[
        "items"
    ]:
        if query.grades_mask and not grade_mask(grades) & query.grades_mask:
            continue
        if (query.subject and subject != query.subject) or (
            query.statement_type and kind != query.statement_type
        ):
            continue
        found[identifier] = Item(identifier, b"", uuid or "", code, text, jurisdiction, subject,
                                 tuple(grades or ()), kind)  # fmt: skip
        if lcs:
            sets[identifier] = frozenset(lcs)
    return found, sets


def component_sets(store: Store, identifiers: Iterable[str]) -> dict[str, frozenset[str]]:
    """Each item's supporting learning components (items without any are left out)."""
    sets: dict[str, set[str]] = defaultdict(set)
    for node, component in store.links_many(COMPONENTS, list(identifiers)):
        sets[node].add(component)
    return {node: frozenset(lcs) for node, lcs in sets.items()}


def published_pairs(
    store: Store, sources: dict[str, Item], targets: dict[str, Item] | None = None
) -> dict[tuple[str, str], Pair]:
    """The published crosswalks of `sources` (to `targets` only, when given)."""
    found: dict[tuple[str, str], Pair] = {}
    for node, other, doc in store.rows_many(CROSSWALK, list(sources)):
        if targets is not None and other not in targets:
            continue
        source = sources[node]
        target = targets[other] if targets is not None else item_of(other, _record_of(doc))
        found[(node, other)] = _published(source, target, orjson.loads(doc))
    return found


def _record_of(crosswalk_doc: bytes) -> bytes:
    """A crosswalk row's record without its figures (the record as served alone)."""
    record = orjson.loads(crosswalk_doc)
    for name in ("jaccard", "stateLCCount", "ccssLCCount", "sharedLCCount"):
        record.pop(name, None)
    return orjson.dumps(record)


def _published(source: Item, target: Item, row: dict[str, Any]) -> Pair:
    state, ccss = row.get("stateLCCount"), row.get("ccssLCCount")
    source_is_ccss = source.jurisdiction == _MULTI_STATE != target.jurisdiction
    return Pair(
        source=source,
        target=target,
        jaccard=row.get("jaccard"),
        source_count=ccss if source_is_ccss else state,
        target_count=state if source_is_ccss else ccss,
        shared=row.get("sharedLCCount"),
        method=PUBLISHED,
        published={"stateLCCount": state, "ccssLCCount": ccss},
    )


Overlap = tuple[float, int, int, int]


def scores(
    source_sets: dict[str, frozenset[str]], target_sets: dict[str, frozenset[str]]
) -> dict[tuple[str, str], Overlap]:
    """The overlap of every source-target pair that shares a learning component."""
    by_component: dict[str, list[str]] = defaultdict(list)
    for target, lcs in target_sets.items():
        for lc in lcs:
            by_component[lc].append(target)
    found: dict[tuple[str, str], Overlap] = {}
    for source, lcs in source_sets.items():
        for target in {t for lc in lcs for t in by_component.get(lc, ())}:
            if target != source:
                found[(source, target)] = overlap(lcs, target_sets[target])
    return found


def derive(
    overlaps: dict[tuple[str, str], Overlap],
    sources: dict[str, Item],
    targets: dict[str, Item],
    apart: Callable[[str, str], bool],
) -> dict[tuple[str, str], Pair]:
    """Pairs of the same subject in different frameworks (`apart`), from their overlaps;
    pairs whose target is not in `targets` are left out."""
    found: dict[tuple[str, str], Pair] = {}
    for (source, target), (jaccard, a, b, shared) in overlaps.items():
        s, t = sources[source], targets.get(target)
        if t is not None and t.subject == s.subject and apart(source, target):
            found[(source, target)] = Pair(s, t, jaccard, a, b, shared, DERIVED)
    return found


def merged(
    published: dict[tuple[str, str], Pair], derived: dict[tuple[str, str], Pair]
) -> list[Pair]:
    """Published pairs, and derived ones where nothing is published, by source and target."""
    pairs = {**derived, **published}
    return [pairs[key] for key in sorted(pairs, key=lambda k: (k[0].encode(), k[1].encode()))]


def counterparts(
    store: Store,
    items: dict[str, Item],
    jurisdiction: str | None = None,
    min_jaccard: float | None = None,
    narrow: Callable[[set[str]], set[str]] | None = None,
) -> dict[str, list[Pair]]:
    """Each item's crosswalks, published and derived, to items of other frameworks: of
    `jurisdiction` when given, at least `min_jaccard`, and among the standards that
    `narrow` keeps of those it is given (asked before any record is read)."""
    source_sets = component_sets(store, items)
    supported = store.links_many(SUPPORTED, sorted({c for s in source_sets.values() for c in s}))
    target_sets = component_sets(store, {standard for _, standard in supported})
    overlaps = {
        k: o for k, o in scores(source_sets, target_sets).items() if o[0] >= (min_jaccard or 0)
    }
    published = {
        k: p for k, p in published_pairs(store, items).items() if strong_enough(p, min_jaccard)
    }
    wanted = {t for _, t in overlaps} | {t for _, t in published}
    if narrow is not None:
        wanted = narrow(wanted)
    if jurisdiction is not None:
        published = {k: p for k, p in published.items() if p.target.jurisdiction == jurisdiction}
    published = {k: p for k, p in published.items() if k[1] in wanted}
    targets = {p.target.identifier: p.target for p in published.values()}
    found = store.by_identifiers(sorted(wanted - set(targets)))
    targets.update((i, item_of(i, f.doc)) for i, f in found.items() if f.kind == STANDARD)
    if jurisdiction is not None:
        targets = {i: t for i, t in targets.items() if t.jurisdiction == jurisdiction}
    frameworks = _frameworks(store, [*items, *targets])
    derived = derive(
        overlaps,
        items,
        targets,
        lambda s, t: not frameworks.get(s, set()) & frameworks.get(t, set()),
    )
    out: dict[str, list[Pair]] = defaultdict(list)
    for pair in merged(published, derived):
        out[pair.source.identifier].append(pair)
    return out


def strong_enough(pair: Pair, min_jaccard: float | None) -> bool:
    """Whether a pair's Jaccard is at least `min_jaccard` (any, when None)."""
    return min_jaccard is None or (pair.jaccard or 0.0) >= min_jaccard


def _frameworks(store: Store, identifiers: Sequence[str]) -> dict[str, set[str]]:
    found: dict[str, set[str]] = defaultdict(set)
    for node, framework in store.links_many(FRAMEWORK_OF, identifiers):
        found[node].add(framework)
    return found
