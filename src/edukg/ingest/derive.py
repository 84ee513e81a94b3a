"""The derivation rules a loader applies once the whole graph is stored.

A loader (SQLite or PostgreSQL) reads its own tables and hands the rows to these
functions; it only stores what they return. Keeping the rules here, above the store,
is what keeps the two backends from growing two versions of one meaning.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from itertools import groupby
from typing import Any

import orjson

from edukg.ingest import curriculum
from edukg.ingest.normalize import typed
from edukg.model.case_ids import definition_id
from edukg.model.records import with_children, with_encoded
from edukg.store.base import (
    CASE_DEFINITIONS,
    CROSSWALK,
    FRAMEWORK_ITEMS,
    ITEM_FIELDS,
    DocOut,
    OutRow,
)


def crosswalk_rows(rows: Iterable[tuple[Any, ...]]) -> Iterator[OutRow]:
    """Each hasStandardAlignment edge from both sides: the other record plus the figures."""
    for source, target, jaccard, state, ccss, shared, s_doc, s_jur, t_doc, t_jur in rows:
        figures = orjson.dumps(
            {
                "jaccard": jaccard,
                "stateLCCount": state,
                "ccssLCCount": ccss,
                "sharedLCCount": shared,
            }
        )
        members = figures[1:-1]
        yield CROSSWALK, source, target, t_jur, jaccard, with_encoded(bytes(t_doc), members)
        yield CROSSWALK, target, source, s_jur, jaccard, with_encoded(bytes(s_doc), members)


def framework_items(rows: Iterable[tuple[str, str, bytes, str | None]]) -> Iterator[OutRow]:
    """One row per framework: `{"items": [[identifier, *ITEM_FIELDS, [components]], ...]}`,
    so that a comparison reads one row, not every record and component list."""
    for framework, group in groupby(rows, key=lambda row: row[0]):
        items = []
        for _, identifier, doc, components in group:
            record = orjson.loads(doc)
            lcs = sorted(components.split(" ")) if components else []
            items.append([identifier, *(record.get(f) for f in ITEM_FIELDS), lcs])
        yield FRAMEWORK_ITEMS, framework, "", None, None, orjson.dumps({"items": items})


def _properties(line: bytes) -> dict[str, Any]:
    props: dict[str, Any] = typed(orjson.loads(line).get("properties") or {})
    return props


def curriculum_rows(
    nodes: Iterable[tuple[str, str, bytes]],
    has_part: Iterable[tuple[str, str]],
    has_dependency: Iterable[tuple[str, str]],
    alignments: Iterable[tuple[str, str, bytes, bytes]],
) -> tuple[list[DocOut], list[OutRow]]:
    """Curriculum records and list rows (see ingest.curriculum.derive)."""
    typed_nodes = {identifier: (kind, _properties(line)) for identifier, kind, line in nodes}
    aligned = []
    for source, target, line, doc in alignments:
        props = _properties(line)
        kinds = props.get("curriculumAlignmentType") or props.get("alignmentType") or []
        kinds = kinds if isinstance(kinds, list) else [kinds]
        aligned.append((source, target, [str(k) for k in kinds], bytes(doc)))
    derived = curriculum.derive(typed_nodes, has_part, has_dependency, aligned)
    return derived.docs, derived.rows


def case_definitions(names: Iterable[tuple[str, str | None]]) -> Iterator[OutRow]:
    """A row per CASE definition (item type, subject, license) by its identifier."""
    for kind, name in names:
        if isinstance(name, str) and name.strip():
            doc = orjson.dumps({"kind": kind, "name": name})
            yield CASE_DEFINITIONS, definition_id(kind, name), "", kind, None, doc


class Rules:
    """The `store.base.Derivations` that every loader is given."""

    crosswalk_rows = staticmethod(crosswalk_rows)
    framework_items = staticmethod(framework_items)
    curriculum = staticmethod(curriculum_rows)
    with_children = staticmethod(with_children)
    case_definitions = staticmethod(case_definitions)


RULES = Rules()
