"""The operations on the graph, shared by the HTTP routes, the CLI and assistants.

Each function takes a Store and typed arguments and returns pre-encoded records
(or a page of them); errors are ApiErrors. No SQL here: that is the Store's.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import orjson

from edukg.model.errors import NotFoundError, ServiceUnavailableError, ValidationError
from edukg.model.vocabulary import (
    COMPONENT,
    COURSE,
    CURRICULA,
    CURRICULUM_HOLDINGS,
    FRAMEWORK,
    LESSON,
    SKILL,
    SKILLS_FRAMEWORK,
    STANDARD,
    code_order,
)
from edukg.store.base import (
    ACTIVITIES,
    ALIGNED_STANDARDS,
    ALIGNED_TO,
    ASSESSMENTS,
    CHILDREN,
    COURSES,
    CROSSWALK,
    DEPENDENCIES,
    GROUPING_DETAIL,
    LESSON_META,
    PARENTS,
    SCOPE_FULL,
    SCOPE_SUMMARY,
    WITHIN,
    DataInfo,
    Found,
    Linked,
    Listed,
    Matching,
    Members,
    OfKind,
    Query,
    Row,
    Store,
    every_row,
)


@dataclass(frozen=True)
class Page:
    """Up to limit+1 rows: the extra one only says whether more follow; `note` (an edukg
    extension of the envelope) says why a list is empty when that is not plain."""

    rows: list[Row]
    limit: int
    note: str | None = None


def loaded(store: Store) -> DataInfo:
    """The loaded data's info, or 503 when nothing is loaded yet."""
    info = store.info()
    if info is None:
        raise ServiceUnavailableError(
            "No data is loaded yet. Load an export with `edukg load` or the demo graph with "
            "`edukg demo`."
        )
    return info


def _page(store: Store, query: Query, after: str | None, limit: int) -> Page:
    return Page(store.page(query, after, limit + 1), limit)


def _no_standard(case_uuid: str) -> NotFoundError:
    return NotFoundError(
        f'Academic standard with CASE Network UUID "{case_uuid}" not found. '
        "Verify the UUID is correct.",
    )


def standard(store: Store, case_uuid: str) -> Found:
    """One academic standard by CASE UUID."""
    found = store.by_case_uuid(case_uuid, (STANDARD,))
    if found is None:
        raise _no_standard(case_uuid)
    return found


def standards_in_framework(
    store: Store,
    framework_case_uuid: str,
    grades_mask: int,
    subject: str | None,
    statement_type: str | None,
    after: str | None,
    limit: int,
) -> Page:
    """Items of a framework; an unknown framework has no items."""
    framework = store.by_case_uuid(framework_case_uuid, (FRAMEWORK,))
    if framework is None:
        return Page([], limit)
    query = Members(framework.identifier, grades_mask, subject, statement_type)
    return _page(store, query, after, limit)


def linked(store: Store, case_uuid: str, relation: str, after: str | None, limit: int) -> Page:
    """Records linked to a standard: children, prerequisites, builds-towards, related, LCs.

    Children may also be asked of a framework's CASE UUID: its top-level items.
    """
    kinds = (STANDARD, FRAMEWORK) if relation == "child" else (STANDARD,)
    found = store.by_case_uuid(case_uuid, kinds)
    if found is None:
        raise _no_standard(case_uuid)
    if relation == CHILDREN:
        return _in_code_order(store, Linked(relation, found.identifier), after, limit)
    return _page(store, Linked(relation, found.identifier), after, limit)


_CHILDREN_READ = 1000  # rows read per query when gathering a node's children


def _in_code_order(store: Store, query: Linked, after: str | None, limit: int) -> Page:
    """A node's children as its framework reads them (4.NF.A.1 before 4.NF.A.2, 2.OA.A.2
    before 2.OA.A.10; items without a code after those with one, by identifier), paged by
    the last identifier shown: the whole list is read (a node's children are few) and the
    page found in it, so cursors stay stable."""
    rows = sorted(every_row(store, query, _CHILDREN_READ),
                  key=lambda row: (_code_key(row[1]), row[0]))  # fmt: skip
    start = 0
    if after is not None:
        start = next((n + 1 for n, (identifier, _) in enumerate(rows) if identifier == after),
                     len(rows))  # fmt: skip
    return Page(rows[start : start + limit + 1], limit)


def _code_key(doc: bytes) -> tuple[Any, ...]:
    code = orjson.loads(doc).get("statementCode")
    return (0, code_order(code)) if code else (1, ())


def ancestors(store: Store, case_uuid: str) -> list[bytes]:
    """The chain of parents of a standard, its framework first, its parent last."""
    found = standard(store, case_uuid)
    chain: list[bytes] = []
    seen = {found.identifier}
    node = found.identifier
    for _ in range(64):  # deeper than any framework; stops a cycle in bad data
        parents = store.page(Linked(PARENTS, node), None, 1)
        if not parents or parents[0][0] in seen:
            break
        node, doc = parents[0]
        seen.add(node)
        chain.append(doc)
    return chain[::-1]


def crosswalks(
    store: Store,
    case_uuid: str,
    jurisdiction: str | None,
    min_jaccard: float | None,
    after: str | None,
    limit: int,
) -> Page:
    """Standards aligned to a standard, from either side of the crosswalk."""
    found = standard(store, case_uuid)
    query = Listed(CROSSWALK, found.identifier, jurisdiction, min_jaccard)
    return _page(store, query, after, limit)


def learning_component(store: Store, identifier: str) -> Found:
    """One learning component by identifier."""
    found = store.by_identifier(identifier, COMPONENT)
    if found is None:
        raise NotFoundError(f'Learning component with identifier "{identifier}" not found.')
    return found


def learning_components(store: Store, subject: str | None, after: str | None, limit: int) -> Page:
    """All learning components, optionally of one subject."""
    return _page(store, OfKind(COMPONENT, subject=subject), after, limit)


def frameworks(
    store: Store,
    jurisdiction: str | None,
    subject: str | None,
    adoption_status: str | None,
    include_non_current: bool,
    after: str | None,
    limit: int,
) -> Page:
    """Standards frameworks; current ones only unless asked otherwise."""
    query = OfKind(
        FRAMEWORK,
        subject=subject,
        jurisdiction=jurisdiction,
        adoption_status=adoption_status,
        current_only=not include_non_current,
    )
    return _page(store, query, after, limit)


# Curriculum


def _no(what: str, identifier: str) -> NotFoundError:
    return NotFoundError(f"{what} with identifier {identifier!r} not found.")


def known_curriculum(store: Store, curriculum_id: str) -> dict[str, int]:
    """What the curriculum `curriculum_id` holds (curriculum_holdings); a 400 naming the
    loaded curricula, with what each holds, unless it is one of them."""
    row = store.lookup(CURRICULA, "", curriculum_id)
    if row is None:
        loaded = store.page(Listed(CURRICULA, ""), None, 50)
        loaded_ids = [key for key, _ in loaded]
        named = ", ".join(f"{c!r} ({holdings_text(_holdings(doc))})" for c, doc in loaded)
        raise ValidationError(
            f"Unknown curriculumId {curriculum_id!r}: no curriculum of that name is loaded"
            f" (loaded: {named or 'none'}).",
            {"parameter": "curriculumId", "loaded": loaded_ids,
             "holdings": {c: _holdings(doc) for c, doc in loaded}},
        )  # fmt: skip
    return _holdings(row)


def _holdings(doc: bytes) -> dict[str, int]:
    """A CURRICULA row's counts (empty for a release loaded before rows had them)."""
    found = orjson.loads(doc) if doc else {}
    return {k: int(v) for k, v in found.items()} if isinstance(found, dict) else {}


def holdings_text(holdings: dict[str, int]) -> str:
    """'0 courses, 761 lessonGroupings, 2,540 lessons; 0 aligned to standards'."""
    if not holdings:
        return "holdings not recorded in this release"
    kinds = ", ".join(f"{holdings.get(name, 0):,} {name}" for name in CURRICULUM_HOLDINGS.values())
    return f"{kinds}; {holdings.get('alignedItems', 0):,} aligned to standards"


def courses(store: Store, curriculum_id: str, after: str | None, limit: int) -> Page:
    """Courses of a curriculum (the prefix of their courseCode); a first page that is
    empty says what the curriculum holds instead."""
    holdings = known_curriculum(store, curriculum_id)
    page = _page(store, Listed(COURSES, curriculum_id), after, limit)
    if not page.rows and after is None:
        page = Page(page.rows, page.limit, f"{curriculum_id} has no courses in this release"
                    f" ({holdings_text(holdings)}).")  # fmt: skip
    return page


def course(store: Store, course_id: str) -> Found:
    """One course."""
    found = store.by_identifier(course_id, COURSE)
    if found is None:
        raise _no("Course", course_id)
    return found


def scope_and_sequence(store: Store, course_id: str, view: str) -> bytes:
    """A course's groupings and lessons, nested, in position order."""
    course(store, course_id)
    doc = store.lookup(SCOPE_FULL if view == "full" else SCOPE_SUMMARY, course_id)
    if doc is None:
        raise _no("Course", course_id)
    return doc


def lesson_grouping(store: Store, grouping_id: str) -> bytes:
    """A lesson grouping with its lessons."""
    doc = store.lookup(GROUPING_DETAIL, grouping_id)
    if doc is None:
        raise _no("Lesson grouping", grouping_id)
    return doc


def curriculum_record(store: Store, kind: str, identifier: str) -> Found:
    """A lesson, activity or assessment by identifier."""
    found = store.by_identifier(identifier, kind)
    if found is None:
        raise _no(kind.capitalize(), identifier)
    return found


def lesson_activities(store: Store, lesson_id: str, after: str | None, limit: int) -> Page:
    """A lesson's activities in position order."""
    curriculum_record(store, LESSON, lesson_id)
    return _page(store, Listed(ACTIVITIES, lesson_id), after, limit)


def assessments(
    store: Store,
    course_id: str,
    lesson_id: str | None,
    grouping_id: str | None,
    after: str | None,
    limit: int,
) -> Page:
    """Assessments of a course, or of one of its lesson groupings or lessons."""
    if lesson_id is not None and grouping_id is not None:
        raise ValidationError("Cannot provide both lessonId and lessonGroupingId; give one.")
    course(store, course_id)
    container = lesson_id or grouping_id or course_id
    if container != course_id and store.lookup(WITHIN, course_id, container) is None:
        what = "Lesson" if lesson_id else "Lesson grouping"
        raise NotFoundError(f"{what} {container!r} not found in course {course_id!r}.")
    return _page(store, Listed(ASSESSMENTS, container), after, limit)


def lesson_assessments(store: Store, lesson_id: str, after: str | None, limit: int) -> Page:
    """The assessments of a lesson."""
    curriculum_record(store, LESSON, lesson_id)
    return _page(store, Listed(ASSESSMENTS, lesson_id), after, limit)


def aligned_standards(
    store: Store, kind: str, identifier: str, after: str | None, limit: int
) -> Page:
    """Standards a lesson, activity or assessment is aligned to, with the alignment types."""
    curriculum_record(store, kind, identifier)
    return _page(store, Listed(ALIGNED_STANDARDS, identifier), after, limit)


def aligned_to_standard(
    store: Store, case_uuid: str, kind: str, after: str | None, limit: int
) -> Page:
    """Lessons, activities or assessments aligned to a standard."""
    found = standard(store, case_uuid)
    return _page(store, Listed(ALIGNED_TO[kind], found.identifier), after, limit)


def dependency_map(store: Store, curriculum_id: str, after: str | None, limit: int) -> Page:
    """Lesson groupings of a curriculum with the groupings they depend on."""
    known_curriculum(store, curriculum_id)
    return _page(store, Listed(DEPENDENCIES, curriculum_id), after, limit)


# Durable skills


def skills_frameworks(
    store: Store, include_non_current: bool, after: str | None, limit: int
) -> Page:
    """Durable skills frameworks; current ones unless asked otherwise."""
    query = OfKind(SKILLS_FRAMEWORK, current_only=not include_non_current)
    return _page(store, query, after, limit)


def skills(
    store: Store, framework_id: str, statement_type: str | None, after: str | None, limit: int
) -> Page:
    """Every skill of a durable skills framework."""
    if store.by_identifier(framework_id, SKILLS_FRAMEWORK) is None:
        raise ValidationError(
            f"Unknown frameworkIdentifier {framework_id!r}. Obtain it from "
            "GET /durable-skills-frameworks.",
            {"parameter": "frameworkIdentifier"},
        )
    query = Members(framework_id, statement_type=statement_type)
    return _page(store, query, after, limit)


def skill(store: Store, identifier: str) -> Found:
    """One durable skill."""
    found = store.by_identifier(identifier, SKILL)
    if found is None:
        raise NotFoundError(f"Durable skill {identifier!r} not found.")
    return found


def skill_children(store: Store, identifier: str, after: str | None, limit: int) -> Page:
    """The direct children of a durable skill."""
    skill(store, identifier)
    return _page(store, Linked(CHILDREN, identifier), after, limit)


# Lookups for assistants (the MCP tools)


def matching(store: Store, query: Matching, limit: int) -> list[Row]:
    """Up to `limit` records matching a code or words (identifier order)."""
    return store.page(query, None, limit)


def lesson_full_ordinal_names(store: Store, lesson_ids: list[str]) -> dict[str, str]:
    """ "Grade 6, Unit 2, Lesson 3" for each lesson that has one, in one query."""
    names = {}
    for lesson_id, doc in store.lookup_many(LESSON_META, lesson_ids).items():
        name = orjson.loads(doc).get("fullOrdinalName")
        if isinstance(name, str):
            names[lesson_id] = name
    return names


def lesson_full_ordinal_name(store: Store, lesson_id: str) -> str | None:
    """ "Grade 6, Unit 2, Lesson 3" for a lesson, where the data allows."""
    return lesson_full_ordinal_names(store, [lesson_id]).get(lesson_id)
