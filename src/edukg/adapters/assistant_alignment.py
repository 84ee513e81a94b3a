"""The alignment operations behind the MCP tools: a standard's counterparts in another
jurisdiction and a curriculum's coverage of a framework, as concise summaries an
assistant can quote (codes first), each bounded."""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from edukg.adapters.assistant import MAX_LINKED, MAX_STANDARDS
from edukg.model.framework_rows import CoverageDomain
from edukg.model.vocabulary import code_order as natural
from edukg.model.vocabulary import grade_mask
from edukg.services import comparison, coverage
from edukg.services.alignment import AlignQuery, CheckQuery, align, check
from edukg.services.comparison import PairFilter, resolve_framework
from edukg.services.crosswalks import Item, counterparts, item_of
from edukg.services.graph import standard
from edukg.store.base import Store


def _named(item: Item) -> dict[str, Any]:
    return {
        "code": item.code,
        "caseIdentifierUUID": item.case_uuid,
        "statement": item.description,
        "gradeLevel": list(item.grades),
        "jurisdiction": item.jurisdiction,
    }


def find_counterparts(
    store: Store, case_uuid: str, jurisdiction: str, min_jaccard: float | None
) -> dict[str, Any]:
    """The standards of `jurisdiction` that a crosswalk links to a standard, strongest
    first: published ones as published, others derived from shared learning components."""
    found = standard(store, case_uuid)
    source = item_of(found.identifier, found.doc)
    pairs = counterparts(store, {found.identifier: source}, jurisdiction, min_jaccard)
    ranked = sorted(
        pairs.get(found.identifier, []),
        key=lambda p: (-(p.jaccard or 0.0), natural(p.target.code)),
    )
    result: dict[str, Any] = {
        "standard": _named(source),
        "jurisdiction": jurisdiction,
        "counterparts": [
            {**_named(p.target), "jaccard": p.jaccard, "sharedLearningComponents": p.shared,
             "method": p.method}
            for p in ranked[:MAX_LINKED]
        ],
    }  # fmt: skip
    if not ranked:
        result["note"] = (
            f"No standard of {jurisdiction} is linked to this one by a published crosswalk"
            " or by shared learning components."
        )
    elif len(ranked) > MAX_LINKED:
        result["note"] = f"{len(ranked)} counterparts; the {MAX_LINKED} strongest are shown."
    return result


def curriculum_coverage(
    store: Store, curriculum_id: str, framework: str, grades: list[str], min_jaccard: float | None
) -> dict[str, Any]:
    """How much of a framework (and grade) a curriculum covers: counts per grade and
    domain, and the codes of the standards covered through crosswalks and not at all."""
    uuid = comparison.resolve_framework(store, framework)
    result = coverage.coverage(
        store, curriculum_id, uuid, PairFilter(grade_mask(grades), min_jaccard=min_jaccard)
    )
    summary = result.summary
    missing = result.not_covered
    bridged = [{"code": code, "via": via[:5]} for code, via in result.through_crosswalks]
    answer: dict[str, Any] = {
        "curriculumId": curriculum_id,
        "framework": summary.framework.get("name"),
        "alignedItems": summary.alignedItems,
        "total": asdict(summary.total),
        "byGrade": [asdict(g) for g in summary.byGrade],
        "byDomain": [asdict(d) | {"domain": _domain_name(d.domain)} for d in summary.byDomain],
        "notCovered": missing[:MAX_STANDARDS],
        "coveredThroughCrosswalks": bridged[:MAX_STANDARDS],
    }
    if summary.note:
        answer["note"] = summary.note
    elif len(missing) > MAX_STANDARDS or len(bridged) > MAX_STANDARDS:
        answer["note"] = (
            f"Lists show the first {MAX_STANDARDS} codes; GET curriculums/{curriculum_id}/"
            "coverage has every standard."
        )
    return answer


def _domain_name(domain: CoverageDomain | None) -> str | None:
    return None if domain is None else domain.code or domain.description


def align_text(
    store: Store,
    text: str,
    jurisdiction: str | None,
    framework: str | None,
    grades: list[str],
    limit: int,
) -> dict[str, Any]:
    """The standards a text addresses, in brief: code, statement, score, the passages
    that support each and the learning components they matched."""
    query = AlignQuery(
        text=text,
        framework=resolve_framework(store, framework) if framework else None,
        jurisdiction=jurisdiction,
        grades_mask=grade_mask(grades),
        limit=limit,
    )
    found = align(store, query)
    standards = []
    for row in found.data:
        brief, extension = row.brief, row.extension
        passages = extension.evidence.passages
        standards.append({
            "code": brief.statementCode,
            "caseIdentifierUUID": brief.caseIdentifierUUID,
            "statement": brief.description,
            "jurisdiction": brief.jurisdiction,
            "score": extension.score,
            "confidence": extension.confidence,
            "passages": [p.text[:_QUOTED] for p in passages],
            "learningComponents": sorted(
                {lc.description or lc.identifier for p in passages for lc in p.learningComponents}
            )[:_SHOWN_COMPONENTS],
            "places": len(extension.placements),
        })  # fmt: skip
    result: dict[str, Any] = {"ranking": found.ranking, "standards": standards}
    if not standards:
        result["note"] = "No standard matched this text closely enough."
    return result


_QUOTED = 200  # characters of a supporting passage quoted
_SHOWN_COMPONENTS = 5


def check_text(
    store: Store, text: str, case_uuid: str | None, code: str | None, jurisdiction: str | None
) -> dict[str, Any]:
    """One text against one standard, in brief: aligned or not, the score, each learning
    component addressed or not with the passages that address it, and where the standard
    stands among the others for the text."""
    found = check(store, CheckQuery(text, case_uuid, code, jurisdiction))
    brief = found.standard
    answer: dict[str, Any] = {
        "standard": {"code": brief.statementCode, "caseIdentifierUUID": brief.caseIdentifierUUID,
                     "statement": brief.description, "jurisdiction": brief.jurisdiction,
                     "gradeLevel": brief.gradeLevel},
        "aligned": found.aligned,
        "score": found.score,
        "confidence": found.confidence,
        "alignedCount": found.alignedCount,
        "totalCount": found.totalCount,
        "componentsFrom": found.componentsFrom,
        "learningComponents": [
            {"description": c.description or c.identifier, "addressed": c.addressed,
             "score": c.score, "passages": [p.text[:_QUOTED] for p in c.passages]}
            for c in found.learningComponents
        ],
        "rank": None if found.rank is None else {
            "position": found.rank.position, "of": found.rank.of, "better": found.rank.better[:5]
        },
    }  # fmt: skip
    if found.note:
        answer["note"] = found.note
    return answer
