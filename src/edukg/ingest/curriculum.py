"""Curriculum records and lists, derived once the whole graph has been read.

Positions, grouping levels, the scope and sequence of each course, the
assessments inside each course, grouping and lesson, alignments to standards
and the dependency map all depend on relationships, so they are computed here,
at the end of a load, by plain Python over what the store hands in. Every
backend's loader calls this same function.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

import orjson

from edukg.ingest.normalize import encode
from edukg.model.contract import GRADE_LEVELS
from edukg.model.records import with_encoded, with_fields
from edukg.model.vocabulary import (
    ACTIVITY,
    ASSESSMENT,
    COURSE,
    CURRICULA,
    CURRICULUM_HOLDINGS,
    GROUPING,
    LESSON,
    curriculum_of,
)
from edukg.store.base import (
    ACTIVITIES,
    ALIGNED_STANDARDS,
    ALIGNED_TO,
    ASSESSMENTS,
    COURSES,
    DEPENDENCIES,
    GROUPING_DETAIL,
    LESSON_META,
    SCOPE_FULL,
    SCOPE_SUMMARY,
    WITHIN,
    OutRow,
)

# Top-level grouping labels, for groupings that no hasPart edge places in a course.
_TOP_LEVEL_LABELS = {"unit": 0, "module": 0, "chapter": 0, "section": 1, "topic": 1}
_TRAILING_NUMBER = re.compile(r"(\d+)\s*$")
_TRAILING_LETTER = re.compile(r"(?:^|\s)([A-Z])\s*$")
_LAST = 99_999_999  # sorts records without a position after those with one


@dataclass
class Derived:
    """Curriculum records (identifier, kind, JSON, code, text) and list rows to store."""

    docs: list[tuple[str, str, bytes, str | None, str | None]] = field(default_factory=list)
    rows: list[OutRow] = field(default_factory=list)


def position_of(props: dict[str, Any]) -> int | None:
    """`position` when given; else from `ordinalName` ("Lesson 5" -> 4, "Section B" -> 1)."""
    position = props.get("position")
    if isinstance(position, int):
        return position
    ordinal = props.get("ordinalName")
    if isinstance(ordinal, str):
        number = _TRAILING_NUMBER.search(ordinal)
        if number:
            return int(number.group(1)) - 1
        letter = _TRAILING_LETTER.search(ordinal)
        if letter:
            return ord(letter.group(1)) - ord("A")
    return None


def full_ordinal_name(
    lesson: str,
    nodes: dict[str, tuple[str, dict[str, Any]]],
    parents: dict[str, list[str]],
    levels: dict[str, int | None],
) -> str | None:
    """ "Grade 6, Unit 2, Lesson 3": the course's grade, the enclosing unit, the lesson.

    The grade comes from the courseCode (`im360:6`); a unit is the enclosing grouping of
    level 0, left out where no hasPart edge places the lesson.
    """
    props = nodes[lesson][1]
    parts: list[str] = []
    code = props.get("courseCode")
    if isinstance(code, str) and ":" in code:
        grade = code.split(":", 1)[1]
        parts.append(f"Grade {grade}" if grade in GRADE_LEVELS else grade)
    for up in sorted(_ancestors(lesson, parents)):
        ordinal = nodes[up][1].get("ordinalName")
        if nodes[up][0] == GROUPING and levels.get(up) == 0 and isinstance(ordinal, str):
            parts.append(ordinal)
            break
    ordinal = props.get("ordinalName")
    if isinstance(ordinal, str):
        parts.append(ordinal)
    return ", ".join(parts) or None


def _sort_key(position: int | None, identifier: str) -> str:
    return f"{_LAST if position is None else max(position, 0):08d}:{identifier}"


def derive(
    nodes: dict[str, tuple[str, dict[str, Any]]],
    has_part: Iterable[tuple[str, str]],
    has_dependency: Iterable[tuple[str, str]],
    alignments: Iterable[tuple[str, str, list[str], bytes]],
) -> Derived:
    """Records and rows for the curriculum.

    `nodes`: identifier -> (kind, typed properties) of every curriculum node.
    `has_part`: (container, part) edges. `has_dependency`: (grouping, prerequisite).
    `alignments`: (content node, standard identifier, alignment types, standard JSON).
    """
    g = _Tree(nodes)
    for container, part in has_part:
        if container in nodes and part in nodes:
            g.parts[container].append(part)
            g.parents[part].append(container)
    g.levels = _grouping_levels(nodes, g.parents)
    out = Derived()
    _records(g, out)
    for identifier, (kind, props) in nodes.items():
        out.rows.extend(_LISTS[kind](g, identifier, props) if kind in _LISTS else ())
    out.rows.extend(_dependencies(nodes, has_dependency))
    aligned, rows = _alignments(nodes, g.docs, alignments)
    out.rows.extend(rows)
    out.rows.extend(_curricula(nodes, aligned))
    return out


def _curricula(nodes: dict[str, tuple[str, dict[str, Any]]], aligned: set[str]) -> Iterator[OutRow]:
    """A row per curriculum in the data: how many of each kind it holds, and how many of
    them carry an alignment to a standard in this release (`alignedItems`), so that an
    empty list or a coverage of nothing can say why."""
    counts: dict[str, dict[str, int]] = defaultdict(lambda: dict.fromkeys(
        [*CURRICULUM_HOLDINGS.values(), "alignedItems"], 0))  # fmt: skip
    for identifier, (kind, props) in nodes.items():
        curriculum = curriculum_of(props)
        if curriculum is None or kind not in CURRICULUM_HOLDINGS:
            continue
        counts[curriculum][CURRICULUM_HOLDINGS[kind]] += 1
        counts[curriculum]["alignedItems"] += identifier in aligned
    for curriculum in sorted(counts):
        yield (CURRICULA, "", curriculum, None, None, orjson.dumps(counts[curriculum]))


@dataclass
class _Tree:
    """The curriculum's nodes and hasPart edges, with what derivations read of them."""

    nodes: dict[str, tuple[str, dict[str, Any]]]
    parts: dict[str, list[str]] = field(default_factory=lambda: defaultdict(list))
    parents: dict[str, list[str]] = field(default_factory=lambda: defaultdict(list))
    levels: dict[str, int | None] = field(default_factory=dict)
    docs: dict[str, bytes] = field(default_factory=dict)
    positions: dict[str, int | None] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.positions = {i: position_of(props) for i, (_, props) in self.nodes.items()}

    def ordered(self, ids: Iterable[str]) -> list[str]:
        return sorted(set(ids), key=lambda i: _sort_key(self.positions[i], i))

    def kind_of(self, identifier: str) -> str:
        return self.nodes[identifier][0]


def _records(g: _Tree, out: Derived) -> None:
    """Each node's record (position, grouping name and level), and each lesson's full name."""
    for identifier, (kind, props) in g.nodes.items():
        values = {**props, "position": g.positions[identifier]}
        if kind == GROUPING:
            label = props.get("curriculumLabel")
            values["groupName"] = label.lower() if isinstance(label, str) else None
            values["groupLevel"] = g.levels.get(identifier)
        g.docs[identifier] = encode(kind, identifier, values)
        code = text = None
        if kind == LESSON:
            full_name = full_ordinal_name(identifier, g.nodes, g.parents, g.levels)
            code = full_name.upper() if full_name else None
            name = props.get("name")
            text = name.lower() if isinstance(name, str) else None
            meta = {"fullOrdinalName": full_name}
            out.rows.append((LESSON_META, identifier, "", None, None, orjson.dumps(meta)))
        out.docs.append((identifier, kind, g.docs[identifier], code, text))


def _course_rows(g: _Tree, identifier: str, props: dict[str, Any]) -> list[OutRow]:
    rows: list[OutRow] = []
    curriculum = curriculum_of(props)
    if curriculum:
        rows.append((COURSES, curriculum, identifier, None, None, g.docs[identifier]))
    rows.extend(_scope_and_sequence(identifier, props, g.parts, g.ordered, g.nodes, g.docs))
    rows.extend((WITHIN, identifier, inside, None, None, b"{}")
                for inside in _descendants(identifier, g.parts))  # fmt: skip
    return rows


def _grouping_rows(g: _Tree, identifier: str, _props: dict[str, Any]) -> list[OutRow]:
    lessons = [g.docs[i] for i in g.ordered(g.parts[identifier]) if g.kind_of(i) == LESSON]
    detail = with_encoded(g.docs[identifier], b'"lessons":[' + b",".join(lessons) + b"]")
    return [(GROUPING_DETAIL, identifier, "", None, None, detail)]


def _lesson_rows(g: _Tree, identifier: str, _props: dict[str, Any]) -> list[OutRow]:
    return [
        (ACTIVITIES, identifier, _sort_key(g.positions[part], part), None, None, g.docs[part])
        for part in g.parts[identifier]
        if g.kind_of(part) == ACTIVITY
    ]


def _assessment_rows(g: _Tree, identifier: str, _props: dict[str, Any]) -> list[OutRow]:
    return [
        (ASSESSMENTS, container, identifier, None, None, g.docs[identifier])
        for container in _ancestors(identifier, g.parents)
    ]


# The list rows each kind of node adds (courses, groupings, lessons, assessments).
_LISTS: dict[str, Callable[[_Tree, str, dict[str, Any]], list[OutRow]]] = {
    COURSE: _course_rows,
    GROUPING: _grouping_rows,
    LESSON: _lesson_rows,
    ASSESSMENT: _assessment_rows,
}


def _grouping_levels(
    nodes: dict[str, tuple[str, dict[str, Any]]], parents: dict[str, list[str]]
) -> dict[str, int | None]:
    """0 for a grouping directly in a course, one more per enclosing grouping."""
    levels: dict[str, int | None] = {}

    def level(identifier: str, seen: frozenset[str]) -> int | None:
        if identifier in levels:
            return levels[identifier]
        enclosing = [p for p in parents.get(identifier, ()) if nodes[p][0] == GROUPING]
        result: int | None
        if enclosing and enclosing[0] not in seen:
            above = level(enclosing[0], seen | {identifier})
            result = None if above is None else above + 1
        elif parents.get(identifier):
            result = 0
        else:  # placed nowhere: read it from the label, where the label says it
            label = nodes[identifier][1].get("curriculumLabel")
            result = _TOP_LEVEL_LABELS.get(label.lower()) if isinstance(label, str) else None
        levels[identifier] = result
        return result

    for identifier, (kind, _) in nodes.items():
        if kind == GROUPING:
            level(identifier, frozenset())
    return levels


def _descendants(root: str, parts: dict[str, list[str]]) -> set[str]:
    found: set[str] = set()
    stack = list(parts.get(root, ()))
    while stack:
        node = stack.pop()
        if node not in found:
            found.add(node)
            stack.extend(parts.get(node, ()))
    return found


def _ancestors(node: str, parents: dict[str, list[str]]) -> set[str]:
    found: set[str] = set()
    stack = list(parents.get(node, ()))
    while stack:
        up = stack.pop()
        if up not in found:
            found.add(up)
            stack.extend(parents.get(up, ()))
    return found


def _scope_and_sequence(
    course: str,
    props: dict[str, Any],
    parts: dict[str, list[str]],
    ordered: Any,
    nodes: dict[str, tuple[str, dict[str, Any]]],
    docs: dict[str, bytes],
) -> list[OutRow]:
    """The summary and full views of a course's groupings and lessons, nested."""

    def tree(identifier: str, full: bool, seen: frozenset[str]) -> dict[str, Any]:
        record = orjson.loads(docs[identifier])
        inside = [i for i in ordered(parts.get(identifier, ())) if i not in seen]
        children = [tree(i, full, seen | {i}) for i in inside if nodes[i][0] == GROUPING]
        lessons = [_lesson(i, full) for i in inside if nodes[i][0] == LESSON]
        if full:
            return {**record, "children": children, "lessons": lessons}
        keys = ("identifier", "name", "ordinalName", "groupName", "groupLevel", "position")
        # The summary view names each field (null where the record has no value).
        return {**{k: record.get(k) for k in keys}, "children": children, "lessons": lessons}

    def _lesson(identifier: str, full: bool) -> dict[str, Any]:
        record: dict[str, Any] = orjson.loads(docs[identifier])
        if full:
            return record
        return {k: record.get(k) for k in ("identifier", "name", "ordinalName", "position")}

    top = [i for i in ordered(parts.get(course, ())) if nodes[i][0] == GROUPING]
    rows: list[OutRow] = []
    for relation, full, view in ((SCOPE_SUMMARY, False, "summary"), (SCOPE_FULL, True, "full")):
        document = {
            "courseId": course,
            "courseName": props.get("name"),
            "view": view,
            "lessonGroupings": [tree(i, full, frozenset({course, i})) for i in top],
        }
        rows.append((relation, course, "", None, None, orjson.dumps(document)))
    return rows


def _dependencies(
    nodes: dict[str, tuple[str, dict[str, Any]]], has_dependency: Iterable[tuple[str, str]]
) -> list[OutRow]:
    targets: dict[str, set[str]] = defaultdict(set)
    for source, target in has_dependency:
        if source in nodes and target in nodes:
            targets[source].add(target)
    rows: list[OutRow] = []
    for source, prerequisites in targets.items():
        props = nodes[source][1]
        curriculum = curriculum_of(props)
        if curriculum is None:
            continue
        entry = {
            "source": source,
            "sourceName": props.get("name"),
            "sourceCurriculumLabel": props.get("curriculumLabel"),
            "hasDependency": [
                {
                    "identifier": t,
                    "name": nodes[t][1].get("name"),
                    "curriculumLabel": nodes[t][1].get("curriculumLabel"),
                }
                for t in sorted(prerequisites)
            ],
        }
        rows.append((DEPENDENCIES, curriculum, source, None, None, orjson.dumps(entry)))
    return rows


def _alignments(
    nodes: dict[str, tuple[str, dict[str, Any]]],
    docs: dict[str, bytes],
    alignments: Iterable[tuple[str, str, list[str], bytes]],
) -> tuple[set[str], list[OutRow]]:
    """The content aligned to any standard, and both directions of each
    content-to-standard alignment, types merged per pair."""
    types: dict[tuple[str, str], set[str]] = defaultdict(set)
    standard_docs: dict[str, bytes] = {}
    for content, standard, kinds, standard_doc in alignments:
        if content in nodes and nodes[content][0] in ALIGNED_TO:
            types[(content, standard)].update(kinds)
            standard_docs[standard] = standard_doc
    rows: list[OutRow] = []
    for (content, standard), merged in types.items():
        extra = {"curriculumAlignmentType": sorted(merged)}
        rows.append(
            (
                ALIGNED_STANDARDS,
                content,
                standard,
                None,
                None,
                with_fields(standard_docs[standard], extra),
            )
        )
        relation = ALIGNED_TO[nodes[content][0]]
        rows.append((relation, standard, content, None, None, with_fields(docs[content], extra)))
    return {content for content, _ in types}, rows
