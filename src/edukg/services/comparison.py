"""Comparing frameworks: a standard's counterparts anywhere, every pair between two
frameworks, and a summary per grade (see services.crosswalks for the measure)."""

from __future__ import annotations

import bisect
from collections.abc import Iterable
from dataclasses import dataclass

import orjson

from edukg.model.alignment import appended
from edukg.model.errors import ValidationError
from edukg.model.framework_rows import GradeComparison
from edukg.model.records import BYTES_OVERHEAD, exact
from edukg.model.vocabulary import FRAMEWORK, UUID_PATTERN, code_order, grade_mask, grade_order
from edukg.services.crosswalks import (
    Item,
    Pair,
    counterparts,
    derive,
    framework_items,
    item_of,
    merged,
    published_pairs,
    scores,
    strong_enough,
)
from edukg.services.frameworks import framework
from edukg.services.graph import Page, standard
from edukg.services.memo import remembered
from edukg.store.base import Found, Members, OfKind, Store


@dataclass(frozen=True)
class PairFilter:
    """Which pairs of two frameworks a comparison holds."""

    grades_mask: int = 0  # source items with any of these grades (0: any)
    subject: str | None = None
    statement_type: str | None = "Standard"
    min_jaccard: float | None = None


def standard_crosswalks(
    store: Store,
    case_uuid: str,
    jurisdiction: str | None,
    min_jaccard: float | None,
    after: str | None,
    limit: int,
) -> Page:
    """A standard's crosswalks, published and derived (`includeDerived=true`), each the
    other standard's record with the figures and the method, by the other's identifier."""
    found = standard(store, case_uuid)
    source = item_of(found.identifier, found.doc)
    pairs = counterparts(store, {found.identifier: source}, jurisdiction, min_jaccard)
    rows = []
    for pair in pairs.get(found.identifier, []):
        key = pair.target.identifier
        if after is not None and key.encode() <= after.encode():
            continue
        rows.append((key, appended(pair.target.doc, pair.figures())))
    return Page(rows[: limit + 1], limit)


def _frameworks(store: Store, source_uuid: str, target_uuid: str) -> tuple[Found, Found]:
    if source_uuid.lower() == target_uuid.lower():
        raise ValidationError(
            "The source and target frameworks are the same: name two different frameworks.",
            {"parameter": "targetFrameworkCaseIdentifierUUID"},
        )
    return framework(store, source_uuid, "source"), framework(store, target_uuid, "target")


@dataclass(frozen=True)
class Comparison:
    """Every pair between two frameworks, encoded, with the summary per grade. Kept per
    release as bytes: a kept value of few objects costs the garbage collector nothing
    (thousands of kept pair objects made its full passes take 40 ms and more)."""

    keys: list[tuple[bytes, bytes]]  # (source, target) identifiers, in order
    rows: list[bytes]  # each Pair.row(), encoded
    summary: list[GradeComparison]


def compare(store: Store, source_uuid: str, target_uuid: str, where: PairFilter) -> Comparison:
    """Every crosswalk from the source framework to the target framework (see
    framework_pairs), computed once per release and filters."""

    def compute() -> tuple[int, Comparison]:
        sources, pairs = framework_pairs(store, source_uuid, target_uuid, where)
        keys = [(p.source.identifier.encode(), p.target.identifier.encode()) for p in pairs]
        rows = [exact(orjson.dumps(p.row())) for p in pairs]
        weight = sum(
            len(r) + len(s) + len(t) + 3 * BYTES_OVERHEAD
            for r, (s, t) in zip(rows, keys, strict=True)
        )
        return weight, Comparison(keys, rows, grade_summary(sources, pairs, where.grades_mask))

    key = ("pairs", source_uuid.lower(), target_uuid.lower(), where)
    return remembered(store, key, compute)


def framework_pairs(
    store: Store, source_uuid: str, target_uuid: str, where: PairFilter
) -> tuple[dict[str, Item], list[Pair]]:
    """The source framework's items (filtered) and every pair from them to the target
    framework's items, published or derived, by source then target identifier."""
    source_fw, target_fw = _frameworks(store, source_uuid, target_uuid)
    query = Members(source_fw.identifier, where.grades_mask, where.subject, where.statement_type)
    sources, source_sets = framework_items(store, query)
    if _subject_of(source_fw) != _subject_of(target_fw):
        return sources, []  # frameworks of different subjects share no item's subject
    query = Members(target_fw.identifier, 0, where.subject, where.statement_type)
    targets, target_sets = framework_items(store, query)
    overlaps = scores(source_sets, target_sets)
    derived = derive(overlaps, sources, targets, lambda s, t: s not in targets and t not in sources)
    pairs = merged(published_pairs(store, sources, targets), derived)
    return sources, [p for p in pairs if strong_enough(p, where.min_jaccard)]


def _subject_of(found: Found) -> str | None:
    subject = orjson.loads(found.doc).get("academicSubject")
    return subject if isinstance(subject, str) else None


def pairs_page(comparison: Comparison, after: str | None, limit: int) -> Page:
    """One page of a comparison's rows, after the cursor's pair."""
    start = 0
    if after is not None:
        try:
            last = tuple(str(x).encode() for x in orjson.loads(after))
        except (ValueError, TypeError):
            raise ValidationError("Invalid cursor: restart the walk (omit cursor).") from None
        start = bisect.bisect_right(comparison.keys, last)
    end = start + limit + 1
    keys = comparison.keys[start:end]
    return Page(
        [
            (orjson.dumps([s.decode(), t.decode()]).decode(), row)
            for (s, t), row in zip(keys, comparison.rows[start:end], strict=True)
        ],
        limit,
    )


def grade_summary(
    sources: dict[str, Item], pairs: Iterable[Pair], grades_mask: int = 0
) -> list[GradeComparison]:
    """Per grade of the source items (only the grades of `grades_mask` when given: an item
    of grades K-12, as the practices are, counts in the grades asked for alone): how many,
    how many with a counterpart, with one at Jaccard >= 0.5, with one at 1.0, and with
    none, with the codes of those (an item of several grades counts in each; items without
    a grade under null)."""
    best: dict[str, float] = {}
    for pair in pairs:
        score = pair.jaccard or 0.0
        best[pair.source.identifier] = max(best.get(pair.source.identifier, 0.0), score)
    counts: dict[str | None, list[int]] = {}
    alone: dict[str | None, list[str]] = {}
    for identifier, item in sources.items():
        for grade in item.grades or (None,):
            if grades_mask and not grade_mask([grade]) & grades_mask:
                continue
            c = counts.setdefault(grade, [0, 0, 0, 0])
            c[0] += 1
            if identifier in best:
                c[1] += 1
                c[2] += best[identifier] >= 0.5
                c[3] += best[identifier] >= 1.0
            else:
                alone.setdefault(grade, []).append(item.code or item.case_uuid)
    return [
        GradeComparison(
            gradeLevel=grade,
            standards=c[0],
            withCounterpart=c[1],
            withJaccardAtLeastHalf=c[2],
            withExactCounterpart=c[3],
            withoutCounterpart=c[0] - c[1],
            withoutCounterpartCodes=sorted(alone.get(grade, []), key=code_order),
        )
        for grade, c in sorted(counts.items(), key=lambda kv: grade_order(kv[0]))
    ]


def resolve_framework(store: Store, name: str) -> str:
    """The CASE UUID of the framework `name` names: a CASE UUID, or `JURISDICTION:SUBJECT`
    (e.g. `New York:Mathematics`) when exactly one framework of that jurisdiction and
    subject is current; a ValidationError that lists the candidates otherwise."""
    if UUID_PATTERN.match(name):
        return name
    jurisdiction, _, subject = name.partition(":")
    if not subject:
        raise ValidationError(
            f"{name!r} names no framework: give its CASE UUID or JURISDICTION:SUBJECT,"
            " e.g. 'New York:Mathematics'."
        )
    query = OfKind(FRAMEWORK, subject=subject.strip(), jurisdiction=jurisdiction.strip())
    found = [orjson.loads(doc) for _, doc in store.page(query, None, 50)]
    current = [f for f in found if f.get("isCurrent") is not False] or found
    if len(current) == 1:
        return str(current[0]["caseIdentifierUUID"])
    if not current:
        raise ValidationError(f"No framework of {jurisdiction.strip()} in {subject.strip()}.")
    listed = "; ".join(f"{f.get('name')} ({f['caseIdentifierUUID']})" for f in current)
    raise ValidationError(f"{name!r} is ambiguous: name one by its CASE UUID: {listed}")
