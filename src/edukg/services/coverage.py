"""How well a curriculum covers a framework: each standard of the framework with the
lessons, activities and assessments aligned to it directly (`hasEducationalAlignment`), or
to one of its crosswalk counterparts (published or derived from learning components).

The export aligns curriculum to Common Core; through crosswalks a district in any state
whose standards have learning components sees what the curriculum covers of its own
framework. A standard is covered only by alignments to itself or to its counterparts:
nothing rolls up from its children.
"""

from __future__ import annotations

import bisect
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from typing import Any

import orjson

from edukg.model.records import BYTES_OVERHEAD, exact
from edukg.model.vocabulary import code_order, curriculum_of, grade_order
from edukg.services import hierarchy
from edukg.services.comparison import PairFilter
from edukg.services.crosswalks import (
    Item,
    Pair,
    counterparts,
    framework_items,
    item_of,
)
from edukg.services.frameworks import framework
from edukg.services.graph import Page, holdings_text, known_curriculum
from edukg.services.memo import remembered
from edukg.store.base import ALIGNED_CONTENT, ALIGNED_TO, Members, Store

DIRECT, CROSSWALK, NONE = "direct", "crosswalk", "none"
_TYPES = {"lesson": "Lesson", "activity": "Activity", "assessment": "Assessment"}


@dataclass
class Covered:
    """One standard of the framework and what covers it."""

    standard: Item
    direct: list[dict[str, Any]]
    via: list[tuple[Pair, list[dict[str, Any]]]]
    domain: Domain | None  # the domain it lies in (services.hierarchy)

    @property
    def status(self) -> str:
        """direct, crosswalk or none."""
        return DIRECT if self.direct else CROSSWALK if self.via else NONE

    def row(self) -> dict[str, Any]:
        """The row of `edukg coverage` and GET curriculums/{id}/coverage."""
        return {
            "standard": self.standard.brief(),
            "direct": self.direct,
            "viaCrosswalk": [
                {
                    "standard": pair.target.brief(),
                    "jaccard": pair.jaccard,
                    "method": pair.method,
                    "aligned": aligned,
                }
                for pair, aligned in self.via
            ],
            "status": self.status,
            "domain": _domain_brief(self.domain),
        }


@dataclass(frozen=True)
class Domain:
    """A domain as teachers know it: the framework's Domain-level grouping (or the level
    above its clusters), named by the code its standards share (3.NF)."""

    identifier: str
    case_uuid: str | None
    code: str | None
    description: str | None


def _domain_brief(domain: Domain | None) -> dict[str, Any] | None:
    if domain is None:
        return None
    return {
        "identifier": domain.identifier,
        "caseIdentifierUUID": domain.case_uuid,
        "code": domain.code,
        "description": domain.description,
    }


@dataclass
class Coverage:
    """A curriculum's coverage of a framework, by standard identifier."""

    curriculum: str
    framework: Item
    standards: list[Covered] = field(default_factory=list)
    domains: dict[str, Domain] = field(default_factory=dict)
    holdings: dict[str, int] = field(default_factory=dict)  # graph.known_curriculum


@dataclass(frozen=True)
class CoverageResult:
    """A coverage, encoded: each standard's row by identifier, and the summary (kept per
    release as bytes, which the garbage collector need not walk)."""

    rows: list[tuple[str, bytes]]
    summary: dict[str, Any]


def coverage(
    store: Store, curriculum_id: str, framework_uuid: str, where: PairFilter
) -> CoverageResult:
    """Every standard of the framework (with `where`'s grade and statement type) and what
    of the curriculum covers it; counterparts at least `where.min_jaccard`."""
    holdings = known_curriculum(store, curriculum_id)

    def compute() -> tuple[int, CoverageResult]:
        found = _coverage(store, curriculum_id, framework_uuid, where)
        found.holdings = holdings
        rows = [(c.standard.identifier, exact(orjson.dumps(c.row()))) for c in found.standards]
        weight = sum(len(r) + len(i) + 2 * BYTES_OVERHEAD for i, r in rows)
        return weight, CoverageResult(rows, summary(found))

    return remembered(store, ("coverage", curriculum_id, framework_uuid.lower(), where), compute)


def _coverage(store: Store, curriculum_id: str, framework_uuid: str, where: PairFilter) -> Coverage:
    found = framework(store, framework_uuid)
    query = Members(found.identifier, where.grades_mask, None, where.statement_type)
    items, _ = framework_items(store, query)
    aligned = _Aligned(store, curriculum_id)
    direct = aligned.of(items)
    pairs = counterparts(store, items, None, where.min_jaccard, aligned.having)
    domain_of, domains = _domains(store, items)
    result = Coverage(curriculum_id, item_of(found.identifier, found.doc), domains=domains)
    for identifier in sorted(items, key=str.encode):
        via = [
            (pair, aligned.known[pair.target.identifier])
            for pair in pairs.get(identifier, [])
            if aligned.known.get(pair.target.identifier)
        ]
        domain = domains.get(domain_of.get(identifier, ""))
        result.standards.append(Covered(items[identifier], direct.get(identifier, []), via, domain))
    return result


class _Aligned:
    """The curriculum's content aligned to standards, read once per standard."""

    def __init__(self, store: Store, curriculum_id: str) -> None:
        self.store = store
        self.curriculum = curriculum_id
        self.known: dict[str, list[dict[str, Any]]] = {}

    def of(self, standards: Iterable[str]) -> dict[str, list[dict[str, Any]]]:
        wanted = [s for s in standards if s not in self.known]
        found: dict[str, list[dict[str, Any]]] = defaultdict(list)
        for kind, relation in ALIGNED_TO.items():
            for standard, _, doc in self.store.rows_many(relation, wanted):
                record = orjson.loads(doc)
                if curriculum_of(record) == self.curriculum:
                    found[standard].append(_content(kind, record))
        for standard in wanted:
            self.known[standard] = sorted(found.get(standard, []), key=_content_order)
        return {s: self.known[s] for s in standards if self.known.get(s)}

    def having(self, standards: set[str]) -> set[str]:
        """Those of `standards` that the curriculum aligns content to (the content's
        records read only for standards that have any: a cheap list says which)."""
        aligned = {s for s, _ in self.store.links_many(ALIGNED_CONTENT, sorted(standards))}
        return set(self.of(aligned))


def _content(kind: str, record: dict[str, Any]) -> dict[str, Any]:
    return {
        "identifier": record.get("identifier"),
        "type": _TYPES[kind],
        "name": record.get("name"),
        "ordinalName": record.get("ordinalName"),
        "courseCode": record.get("courseCode"),
        "curriculumAlignmentType": record.get("curriculumAlignmentType") or [],
    }


def _content_order(content: dict[str, Any]) -> tuple[str, str, str]:
    return (str(content["courseCode"]), str(content["type"]), str(content["identifier"]))


def _domains(store: Store, items: dict[str, Item]) -> tuple[dict[str, str], dict[str, Domain]]:
    """Each standard's domain (services.hierarchy), and the domains, named by the code
    their standards share."""
    ancestry = hierarchy.ancestry(store, items)
    domain_of = {i: d for i in items if (d := ancestry.domain(i)) is not None}
    codes = hierarchy.domain_codes(ancestry, {i: items[i].code for i in domain_of})
    domains = {
        d: Domain(d, ancestry.nodes[d].case_uuid, codes.get(d), ancestry.nodes[d].description)
        for d in set(domain_of.values())
    }
    return domain_of, domains


def coverage_page(result: CoverageResult, after: str | None, limit: int) -> Page:
    """One page of coverage rows, by standard identifier."""
    start = 0
    if after is not None:
        start = bisect.bisect_right(result.rows, after.encode(), key=lambda row: row[0].encode())
    return Page(result.rows[start : start + limit + 1], limit)


def summary(result: Coverage) -> dict[str, Any]:
    """Counts of standards covered directly, through a crosswalk, and not, per grade and
    per top-level grouping (domain), and in all."""
    by_grade: dict[str | None, dict[str, int]] = {}
    by_domain: dict[str | None, dict[str, int]] = {}
    total = _counts()
    for covered in result.standards:
        for grade in covered.standard.grades or (None,):
            by_grade.setdefault(grade, _counts())[covered.status] += 1
        domain = covered.domain.identifier if covered.domain else None
        by_domain.setdefault(domain, _counts())[covered.status] += 1
        total[covered.status] += 1
    aligned = result.holdings.get("alignedItems")
    out: dict[str, Any] = {
        "curriculumId": result.curriculum,
        "framework": asdict(result.framework.brief()) | {"name": _name(result.framework)},
        "alignedItems": aligned,
        "total": _named(total),
        "byGrade": [
            {"gradeLevel": grade, **_named(c)}
            for grade, c in sorted(by_grade.items(), key=lambda kv: grade_order(kv[0]))
        ],
        "byDomain": [
            {"domain": _domain_brief(result.domains.get(d or "")), **_named(c)}
            for d, c in sorted(by_domain.items(), key=lambda kv: _domain_order(result, kv[0]))
        ],
    }
    if aligned == 0:
        out["note"] = (
            f"No item of {result.curriculum} carries an alignment to a standard in this"
            " release, so it covers nothing here: the release holds its"
            f" {holdings_text(result.holdings)}."
        )
    return out


def _counts() -> dict[str, int]:
    return {DIRECT: 0, CROSSWALK: 0, NONE: 0}


def _named(c: dict[str, int]) -> dict[str, int]:
    return {
        "standards": c[DIRECT] + c[CROSSWALK] + c[NONE],
        "direct": c[DIRECT],
        "viaCrosswalk": c[CROSSWALK],
        "notCovered": c[NONE],
    }


def _name(item: Item) -> Any:
    return orjson.loads(item.doc).get("name")


def _domain_order(result: Coverage, domain: str | None) -> tuple[int, tuple[Any, ...]]:
    if domain is None or domain not in result.domains:
        return (1, ())
    found = result.domains[domain]
    return (0, code_order(found.code or found.description or domain))
