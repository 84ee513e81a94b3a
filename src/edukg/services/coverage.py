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

from edukg.model.alignment import ContentType, CoverageStatus, encode
from edukg.model.framework_rows import (
    AlignedContent,
    CoverageByCrosswalk,
    CoverageCounts,
    CoverageDomain,
    CoverageRow,
    CoverageSummary,
    DomainCoverage,
    GradeCoverage,
)
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

DIRECT: CoverageStatus = "direct"
CROSSWALK: CoverageStatus = "crosswalk"
NONE: CoverageStatus = "none"
_TYPES: dict[str, ContentType] = {"lesson": "Lesson", "activity": "Activity",
                                  "assessment": "Assessment"}  # fmt: skip


@dataclass
class Covered:
    """One standard of the framework and what covers it."""

    standard: Item
    direct: list[AlignedContent]
    via: list[tuple[Pair, list[AlignedContent]]]
    domain: CoverageDomain | None  # the domain it lies in (services.hierarchy)

    @property
    def status(self) -> CoverageStatus:
        """direct, crosswalk or none."""
        return DIRECT if self.direct else CROSSWALK if self.via else NONE

    def row(self) -> CoverageRow:
        """The row of `edukg coverage` and GET curriculums/{id}/coverage."""
        return CoverageRow(
            standard=self.standard.brief(),
            direct=self.direct,
            viaCrosswalk=[
                CoverageByCrosswalk(
                    standard=pair.target.brief(),
                    jaccard=pair.jaccard,
                    method=pair.method,
                    aligned=aligned,
                )
                for pair, aligned in self.via
            ],
            status=self.status,
            domain=self.domain,
        )


@dataclass
class Coverage:
    """A curriculum's coverage of a framework, by standard identifier."""

    curriculum: str
    framework: Item
    standards: list[Covered] = field(default_factory=list)
    domains: dict[str, CoverageDomain] = field(default_factory=dict)
    holdings: dict[str, int] = field(default_factory=dict)  # graph.known_curriculum


@dataclass(frozen=True)
class CoverageResult:
    """A coverage, encoded: each standard's row by identifier, and the summary (kept per
    release as bytes, which the garbage collector need not walk)."""

    rows: list[tuple[str, bytes]]
    summary: CoverageSummary
    not_covered: list[str]  # the codes of the standards nothing covers, in code order
    # (code, counterpart codes) of the standards covered only through a crosswalk
    through_crosswalks: list[tuple[str, list[str]]]


def coverage(
    store: Store, curriculum_id: str, framework_uuid: str, where: PairFilter
) -> CoverageResult:
    """Every standard of the framework (with `where`'s grade and statement type) and what
    of the curriculum covers it; counterparts at least `where.min_jaccard`."""
    holdings = known_curriculum(store, curriculum_id)  # an unknown one: refused, nothing kept

    def compute() -> tuple[int, CoverageResult]:
        found = _covered(store, curriculum_id, framework_uuid, where, holdings)
        rows = [(c.standard.identifier, exact(encode(c.row()))) for c in found.standards]
        ordered = sorted(found.standards, key=lambda c: code_order(c.standard.code))
        missing = [_code(c.standard) for c in ordered if c.status == NONE]
        bridged = [
            (_code(c.standard), [_code(pair.target) for pair, _ in c.via])
            for c in ordered
            if c.status == CROSSWALK
        ]
        weight = sum(len(r) + len(i) + 2 * BYTES_OVERHEAD for i, r in rows)
        weight += sum(len(c) + BYTES_OVERHEAD for c in missing)
        weight += sum(len(c) + sum(len(v) for v in via) + 4 * BYTES_OVERHEAD for c, via in bridged)
        return weight, CoverageResult(rows, summary(found), missing, bridged)

    return remembered(store, ("coverage", curriculum_id, framework_uuid.lower(), where), compute)


def covered(store: Store, curriculum_id: str, framework_uuid: str, where: PairFilter) -> Coverage:
    """The coverage as typed rows, computed afresh (`coverage` keeps it encoded)."""
    holdings = known_curriculum(store, curriculum_id)
    return _covered(store, curriculum_id, framework_uuid, where, holdings)


def _covered(
    store: Store, curriculum_id: str, framework_uuid: str, where: PairFilter,
    holdings: dict[str, int],
) -> Coverage:  # fmt: skip
    found = framework(store, framework_uuid)
    query = Members(found.identifier, where.grades_mask, None, where.statement_type)
    items, _ = framework_items(store, query)
    aligned = _Aligned(store, curriculum_id)
    direct = aligned.of(items)
    pairs = counterparts(store, items, None, where.min_jaccard, aligned.having)
    domain_of, domains = _domains(store, items)
    result = Coverage(curriculum_id, item_of(found.identifier, found.doc), domains=domains,
                      holdings=holdings)  # fmt: skip
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
        self.known: dict[str, list[AlignedContent]] = {}

    def of(self, standards: Iterable[str]) -> dict[str, list[AlignedContent]]:
        wanted = [s for s in standards if s not in self.known]
        found: dict[str, list[AlignedContent]] = defaultdict(list)
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


def _content(kind: str, record: dict[str, Any]) -> AlignedContent:
    return AlignedContent(
        identifier=record.get("identifier") or "",
        type=_TYPES[kind],
        name=record.get("name"),
        ordinalName=record.get("ordinalName"),
        courseCode=record.get("courseCode"),
        curriculumAlignmentType=record.get("curriculumAlignmentType") or [],
    )


def _content_order(content: AlignedContent) -> tuple[str, str, str]:
    return (str(content.courseCode), str(content.type), str(content.identifier))


def _domains(
    store: Store, items: dict[str, Item]
) -> tuple[dict[str, str], dict[str, CoverageDomain]]:
    """Each standard's domain (services.hierarchy), and the domains, named by the code
    their standards share."""
    ancestry = hierarchy.ancestry(store, items)
    domain_of = {i: d for i in items if (d := ancestry.domain(i)) is not None}
    codes = hierarchy.domain_codes(ancestry, {i: items[i].code for i in domain_of})
    domains = {
        d: CoverageDomain(
            identifier=d,
            caseIdentifierUUID=ancestry.nodes[d].case_uuid,
            code=codes.get(d),
            description=ancestry.nodes[d].description,
        )
        for d in set(domain_of.values())
    }
    return domain_of, domains


def coverage_page(result: CoverageResult, after: str | None, limit: int) -> Page:
    """One page of coverage rows, by standard identifier."""
    start = 0
    if after is not None:
        start = bisect.bisect_right(result.rows, after.encode(), key=lambda row: row[0].encode())
    return Page(result.rows[start : start + limit + 1], limit)


def summary(result: Coverage) -> CoverageSummary:
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
    note = None
    if aligned == 0:
        note = (
            f"No item of {result.curriculum} carries an alignment to a standard in this"
            " release, so it covers nothing here: the release holds its"
            f" {holdings_text(result.holdings)}."
        )
    return CoverageSummary(
        curriculumId=result.curriculum,
        framework=asdict(result.framework.brief()) | {"name": _name(result.framework)},
        alignedItems=aligned,
        total=CoverageCounts(**_named(total)),
        byGrade=[
            GradeCoverage(gradeLevel=grade, **_named(c))
            for grade, c in sorted(by_grade.items(), key=lambda kv: grade_order(kv[0]))
        ],
        byDomain=[
            DomainCoverage(domain=result.domains.get(d or ""), **_named(c))
            for d, c in sorted(by_domain.items(), key=lambda kv: _domain_order(result, kv[0]))
        ],
        note=note,
    )


def _counts() -> dict[str, int]:
    return {DIRECT: 0, CROSSWALK: 0, NONE: 0}


def _named(c: dict[str, int]) -> dict[str, int]:
    return {
        "standards": c[DIRECT] + c[CROSSWALK] + c[NONE],
        "direct": c[DIRECT],
        "viaCrosswalk": c[CROSSWALK],
        "notCovered": c[NONE],
    }


def _code(item: Item) -> str:
    return item.code or item.case_uuid


def _name(item: Item) -> Any:
    return orjson.loads(item.doc).get("name")


def _domain_order(result: Coverage, domain: str | None) -> tuple[int, tuple[Any, ...]]:
    if domain is None or domain not in result.domains:
        return (1, ())
    found = result.domains[domain]
    return (0, code_order(found.code or found.description or domain))
