"""The operations behind the MCP tools: summaries for an assistant, each bounded.

Every function returns a plain dict (what the tool answers) with at most a documented
number of records and a note when more exist; bad arguments raise the API's
ValidationError, whose message the MCP adapter passes on as a tool error.
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Any

import orjson

from edukg.model.errors import ValidationError
from edukg.model.vocabulary import LESSON, STANDARD, UUID_EXAMPLE, UUID_PATTERN
from edukg.model.vocabulary import code_order as natural
from edukg.services import graph
from edukg.services.codes import resolve
from edukg.store.base import (
    BUILDS_TOWARDS,
    CHILDREN,
    COMPONENTS,
    PREREQUISITES,
    Matching,
    Row,
    Store,
)

MAX_STANDARDS = 50
MAX_LESSONS = 50
MAX_LINKED = 100
MAX_SUBSTANDARDS = 30
_MATCH_CAP = 2000
_ORDINAL = re.compile(
    r"^\s*(?:grade\s+)?([^,]+?)\s*(?:,\s*unit\s+(\w+))?\s*,\s*lesson\s+(\w+)\s*$", re.I
)


def _decode(doc: bytes) -> dict[str, Any]:
    decoded: dict[str, Any] = orjson.loads(doc)
    return decoded


def _uuid(value: str) -> str:
    if not UUID_PATTERN.match(value or ""):
        raise ValidationError(
            f'caseIdentifierUUID must be a UUID such as "{UUID_EXAMPLE}"; got {value!r}.'
        )
    return value.lower()


def _standard_summary(record: dict[str, Any]) -> dict[str, Any]:
    return {
        "code": record.get("statementCode"),
        "caseIdentifierUUID": record.get("caseIdentifierUUID"),
        "statement": record.get("description"),
        "gradeLevel": record.get("gradeLevel"),
        "jurisdiction": record.get("jurisdiction"),
        "academicSubject": record.get("academicSubject"),
    }


def _substandards(store: Store, case_uuid: str) -> list[dict[str, Any]]:
    page = graph.linked(store, case_uuid, CHILDREN, None, MAX_SUBSTANDARDS)
    rows = [_decode(doc) for _, doc in page.rows[:MAX_SUBSTANDARDS]]
    rows.sort(key=lambda r: natural(r.get("statementCode")))
    return [
        {
            "code": r.get("statementCode"),
            "caseIdentifierUUID": r.get("caseIdentifierUUID"),
            "statement": r.get("description"),
        }
        for r in rows
    ]


def find_standards(
    store: Store,
    code: str | None,
    keywords: list[str] | None,
    subject: str | None,
    jurisdiction: str | None,
) -> dict[str, Any]:
    """Standards by code prefix or by any of some words, each with its sub-standards."""
    words = tuple(w.strip().lower() for w in keywords or () if w and w.strip())
    if bool(code and code.strip()) == bool(words):
        raise ValidationError(
            "Give exactly one of `code` (e.g. '3.NF.A.1') or `keywords` (a list of words)."
        )
    query = Matching(STANDARD, words=words, subject=subject, jurisdiction=jurisdiction)
    named: tuple[str, ...] = ()
    if code:
        found = resolve(store, code, query)  # 6.RP.3c is 6.RP.A.3.c (services.codes)
        if found.several:
            return {"standards": [], "note": f"The code {code.strip()} fits several standards:"
                    f" {', '.join(found.several)}. Give the whole code."}  # fmt: skip
        named = found.codes or (code.strip(),)  # else a prefix as written: 2.OA, 3.NF
    rows = _matching(store, query, named)
    records = sorted(
        (_decode(doc) for _, doc in rows),
        key=lambda r: (natural(r.get("statementCode")), r["identifier"]),
    )
    standards = []
    for record in records[:MAX_STANDARDS]:
        summary = _standard_summary(record)
        summary["subStandards"] = (
            _substandards(store, record["caseIdentifierUUID"]) if record.get("hasChildren") else []
        )
        standards.append(summary)
    result: dict[str, Any] = {"standards": standards}
    if len(records) > MAX_STANDARDS:
        result["note"] = (
            f"{len(records)}{'+' if len(rows) >= _MATCH_CAP else ''} standards matched; the "
            f"first {MAX_STANDARDS} by code are shown. Narrow the code, keywords or filters."
        )
    elif not standards:
        result["note"] = "No standard matched. Try a shorter code prefix or other keywords."
    return result


def _matching(store: Store, query: Matching, codes: tuple[str, ...]) -> list[Row]:
    """The records of `query`, or those bearing each code or under it (2.OA: itself and
    2.OA.*), up to the cap, by identifier."""
    if not codes:
        return graph.matching(store, query, _MATCH_CAP)
    rows: dict[str, bytes] = {}
    for code in codes:
        wanted = code.upper()
        prefixed = replace(query, code=wanted, code_prefix=f"{wanted}.")
        rows.update(graph.matching(store, prefixed, _MATCH_CAP))
    return sorted(rows.items())[:_MATCH_CAP]


def progression(store: Store, case_uuid: str, direction: str) -> dict[str, Any]:
    """The standards before ('backward') or after ('forward') a standard."""
    relation = PREREQUISITES if direction == "backward" else BUILDS_TOWARDS
    page = graph.linked(store, _uuid(case_uuid), relation, None, MAX_LINKED)
    linked = [_standard_summary(_decode(doc)) for _, doc in page.rows[:MAX_LINKED]]
    linked.sort(key=lambda r: natural(r["code"]))
    result: dict[str, Any] = {"direction": direction, "standards": linked}
    if len(page.rows) > MAX_LINKED:
        result["note"] = f"More than {MAX_LINKED} standards are linked; the first are shown."
    return result


def learning_components(store: Store, case_uuid: str) -> dict[str, Any]:
    """The learning components that support a standard."""
    page = graph.linked(store, _uuid(case_uuid), COMPONENTS, None, MAX_LINKED)
    components = [
        {"identifier": r["identifier"], "description": r.get("description")}
        for r in (_decode(doc) for _, doc in page.rows[:MAX_LINKED])
    ]
    result: dict[str, Any] = {"learningComponents": components}
    if not components:
        result["note"] = "The data links no learning components to this standard."
    return result


def misconceptions(store: Store, case_uuid: str) -> dict[str, Any]:
    """None in the export: an empty list with a note, once the standard is known."""
    graph.standard(store, _uuid(case_uuid))
    return {
        "misconceptions": [],
        "note": "The loaded Knowledge Graph export contains no misconception data.",
    }


def mathematical_practices(store: Store) -> dict[str, Any]:
    """MP1 to MP8 of every jurisdiction that has them."""
    found = []
    for n in range(1, 9):
        for _, doc in graph.matching(store, Matching(STANDARD, code=f"MP{n}"), 100):
            found.append(_standard_summary(_decode(doc)))
    found.sort(key=lambda r: (r["jurisdiction"] or "", natural(r["code"])))
    result: dict[str, Any] = {"practices": found}
    if not found:
        result["note"] = "The loaded data holds no Standards for Mathematical Practice."
    return result


def find_lessons(
    store: Store,
    case_uuid: str | None,
    ordinal: str | None,
    lesson_name: str | None,
    author: str | None,
) -> dict[str, Any]:
    """Lessons aligned to a standard, by ordinal name or by words of their name."""
    given = [x for x in (case_uuid, ordinal, lesson_name) if x and x.strip()]
    if len(given) != 1:
        raise ValidationError("Give exactly one of caseIdentifierUUID, ordinalName or lessonName.")
    if case_uuid:
        rows = graph.aligned_to_standard(store, _uuid(case_uuid), LESSON, None, 1000).rows
    elif lesson_name:
        rows = graph.matching(store, Matching(LESSON, words=(lesson_name.strip().lower(),)), 1000)
    else:
        rows = _lessons_by_ordinal(store, ordinal or "")
    records = [_decode(doc) for _, doc in rows]
    if author:
        records = [r for r in records if (r.get("author") or "").lower() == author.strip().lower()]
    names = graph.lesson_full_ordinal_names(store, [r["identifier"] for r in records])
    lessons = []
    for record in records:
        lessons.append(
            {
                "fullOrdinalName": names.get(record["identifier"]),
                "lessonName": record.get("name"),
                "lessonIdentifier": record["identifier"],
                "courseCode": record.get("courseCode"),
                "author": record.get("author"),
            }
        )
    lessons.sort(key=lambda r: natural(r["fullOrdinalName"]))
    result: dict[str, Any] = {"lessons": lessons[:MAX_LESSONS]}
    if len(lessons) > MAX_LESSONS:
        result["note"] = f"{len(lessons)} lessons matched; the first {MAX_LESSONS} are shown."
    elif not lessons:
        result["note"] = "No lesson matched."
    return result


def lesson_materials(store: Store, lesson_id: str, sources: list[str]) -> dict[str, Any]:
    """A lesson's record, activities and assessments, as asked for."""
    lesson = graph.curriculum_record(store, LESSON, lesson_id)
    result: dict[str, Any] = {
        "lessonIdentifier": lesson_id,
        "fullOrdinalName": graph.lesson_full_ordinal_name(store, lesson_id),
    }
    if "lesson" in sources:
        result["lesson"] = _decode(lesson.doc)
    if "activity" in sources:
        page = graph.lesson_activities(store, lesson_id, None, 200)
        result["activities"] = [_decode(doc) for _, doc in page.rows[:200]]
    if "assessment" in sources:
        page = graph.lesson_assessments(store, lesson_id, None, 200)
        result["assessments"] = [_decode(doc) for _, doc in page.rows[:200]]
    result["note"] = (
        "Materials text (student pages, teacher guides) is not part of the public "
        "Knowledge Graph export; these are the records it holds for the lesson."
    )
    return result


def _lessons_by_ordinal(store: Store, ordinal: str) -> list[tuple[str, bytes]]:
    """Lessons for "Grade 6, Unit 2, Lesson 3": exact first, else same grade and lesson number."""
    match = _ORDINAL.match(ordinal)
    if not match:
        raise ValidationError(
            "ordinalName looks like 'Grade 6, Unit 2, Lesson 3' (the unit is optional)."
        )
    grade, unit, lesson = match.groups()
    grade_part = (
        f"GRADE {grade.upper()}" if not grade.lower().startswith("grade") else grade.upper()
    )
    if unit:
        exact = f"{grade_part}, UNIT {unit.upper()}, LESSON {lesson.upper()}"
        rows = graph.matching(store, Matching(LESSON, code=exact), MAX_LESSONS + 1)
        if rows:
            return rows
    candidates = graph.matching(store, Matching(LESSON, code_prefix=f"{grade_part},"), 5000)
    names = graph.lesson_full_ordinal_names(store, [identifier for identifier, _ in candidates])
    suffix = f", LESSON {lesson.upper()}"
    return [row for row in candidates if names.get(row[0], "").upper().endswith(suffix)]
