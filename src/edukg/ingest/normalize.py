"""Export values to API values, and each served record's JSON, encoded once.

The export stores lists as JSON-encoded strings (`"[\\"3\\",\\"4\\"]"`), booleans as
`"true"`/`"false"` and crosswalk figures as strings. The API serves typed values.
"""

from __future__ import annotations

import re
from typing import Any

import orjson

from edukg.model.contract import (
    ACTIVITY_FIELDS,
    ACTIVITY_NULLS,
    ASSESSMENT_FIELDS,
    ASSESSMENT_NULLS,
    COMPONENT_FIELDS,
    COURSE_FIELDS,
    COURSE_NULLS,
    FRAMEWORK_FIELDS,
    GROUPING_FIELDS,
    GROUPING_NULLS,
    LESSON_FIELDS,
    LESSON_NULLS,
    LIST,
    SKILL_FIELDS,
    SKILLS_FRAMEWORK_FIELDS,
    STANDARD_FIELDS,
)
from edukg.model.vocabulary import (
    ACTIVITY,
    ASSESSMENT,
    COMPONENT,
    COURSE,
    CURRICULUM_KINDS,
    FRAMEWORK,
    GROUPING,
    LESSON,
    NOT_STATED,
    SKILL,
    SKILLS_FRAMEWORK,
    STANDARD,
)

LIST_PROPERTIES = frozenset({"gradeLevel", "examples", "audience", "curriculumAlignmentType"})
BOOL_PROPERTIES = frozenset({"isCurrent", "isOptional"})
FLOAT_PROPERTIES = frozenset({"jaccard"})
INT_PROPERTIES = frozenset({"stateLCCount", "ccssLCCount", "sharedLCCount", "position"})

_FIELDS = {
    STANDARD: STANDARD_FIELDS,
    FRAMEWORK: FRAMEWORK_FIELDS,
    COMPONENT: COMPONENT_FIELDS,
    COURSE: COURSE_FIELDS,
    GROUPING: GROUPING_FIELDS,
    LESSON: LESSON_FIELDS,
    ACTIVITY: ACTIVITY_FIELDS,
    ASSESSMENT: ASSESSMENT_FIELDS,
    SKILLS_FRAMEWORK: SKILLS_FRAMEWORK_FIELDS,
    SKILL: SKILL_FIELDS,
}
# Curriculum records leave out a field they have no value for (the published schemas
# list such fields as optional and not nullable), but for the ones named here.
_NULLS = {
    COURSE: COURSE_NULLS,
    GROUPING: GROUPING_NULLS,
    LESSON: LESSON_NULLS,
    ACTIVITY: ACTIVITY_NULLS,
    ASSESSMENT: ASSESSMENT_NULLS,
}
# Names that edukg itself writes into a record; an export property never takes them.
_DERIVED = frozenset({"identifier", "hasChildren"})


class BadValue(ValueError):
    """A property whose value cannot be typed; the loader adds file and line."""


def _as_list(name: str, value: Any) -> list[Any] | None:
    if value is None or isinstance(value, list):
        return value
    if isinstance(value, str):
        if value == "":
            return None
        if name == "curriculumAlignmentType" and not value.startswith("["):
            return [value]  # one alignment type written plainly
        try:
            decoded = orjson.loads(value)
        except orjson.JSONDecodeError:
            raise BadValue(f"{name} is not a JSON-encoded list: {value[:80]!r}") from None
        if isinstance(decoded, list):
            return decoded
    raise BadValue(f"{name} should be a list, got {value!r:.80}")


def _as_bool(name: str, value: Any) -> bool | None:
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, str) and value.lower() in ("true", "false"):
        return value.lower() == "true"
    raise BadValue(f"{name} should be 'true' or 'false', got {value!r:.80}")


def _as_number(name: str, value: Any, kind: type[int] | type[float]) -> int | float | None:
    if value is None or (isinstance(value, int | float) and not isinstance(value, bool)):
        return value if value is None else kind(value)
    if isinstance(value, str):
        try:
            number = float(value)
            return int(number) if kind is int and number.is_integer() else kind(number)
        except ValueError:
            pass
    raise BadValue(f"{name} should be a number, got {value!r:.80}")


_TYPED = LIST_PROPERTIES | BOOL_PROPERTIES | FLOAT_PROPERTIES | INT_PROPERTIES


def typed(properties: dict[str, Any]) -> dict[str, Any]:
    """`properties` with list, boolean and number values decoded (a copy, when any is)."""
    present = _TYPED & properties.keys()  # a set operation in C: most records have one or two
    if not present:
        return properties
    out = dict(properties)
    for name in present:
        value = properties[name]
        if name in LIST_PROPERTIES:
            out[name] = _as_list(name, value)
        elif name in BOOL_PROPERTIES:
            out[name] = _as_bool(name, value)
        elif name in FLOAT_PROPERTIES:
            out[name] = _as_number(name, value, float)
        elif name in INT_PROPERTIES:
            out[name] = _as_number(name, value, int)
    return out


_ATTRIBUTED = frozenset({STANDARD, FRAMEWORK, COMPONENT})
_ATTRIBUTION = ("author", "provider", "license", "attributionStatement")


def attributed(props: dict[str, Any]) -> dict[str, Any]:
    """`props` with the four attribution fields the published schemas require of every
    standard, framework and learning component: where the source leaves one out (a CASE
    package with no publisher or licence), its author stands for its provider and the
    reverse, and the rest say they were not stated."""
    if all(props.get(f) for f in _ATTRIBUTION):
        return props
    out = dict(props)
    out["author"] = props.get("author") or props.get("provider") or NOT_STATED
    out["provider"] = props.get("provider") or props.get("author") or NOT_STATED
    out["license"] = props.get("license") or NOT_STATED
    out["attributionStatement"] = props.get("attributionStatement") or NOT_STATED
    return out


def _completed(kind: str, props: dict[str, Any]) -> dict[str, Any]:
    """The fields the published schemas require that a source may leave out: the four
    attribution fields of standards, frameworks and components, a curriculum record's
    provider (from its attribution statement)."""
    if kind in _ATTRIBUTED:
        return attributed(props)
    if kind in _NULLS and not props.get("provider"):
        return {**props, "provider": provider_of(props.get("attributionStatement"))}
    return props


_PROVIDED_BY = re.compile(r"\bis provided by (.+?) under\b")


def provider_of(attribution: Any) -> str | None:
    """Who provides a record, as its attribution statement names it ("Knowledge Graph is
    provided by Learning Commons under the CC BY-4.0 license."): the export's curriculum
    records leave `provider` out, which the published schemas require."""
    found = _PROVIDED_BY.search(attribution) if isinstance(attribution, str) else None
    return found.group(1).strip() if found else None


def encode(kind: str, identifier: str, props: dict[str, Any]) -> bytes:
    """The record's API JSON: every field of its kind, in order, null where absent.

    A standard's `hasChildren` is written as false here; the loader flips it for
    items that turn out to have children once all relationships are read.
    """
    record: dict[str, Any] = {}
    props = _completed(kind, props)
    nulls = _NULLS.get(kind)
    for field, field_kind, _ in _FIELDS[kind]:
        value = props.get(field)
        if field_kind == LIST and value is not None:
            value = [str(v) for v in value]
        if value is None and nulls is not None and field not in nulls:
            continue  # absent: left out, not null
        record[field] = value
    if kind in (FRAMEWORK, SKILLS_FRAMEWORK):
        # Absent isCurrent means current: the hosted API lists such frameworks by default.
        record["isCurrent"] = props.get("isCurrent") is not False
    # Then every other property the export holds (e.g. alternateStatementCode, isCurrent
    # and adoptionStatus on standards), typed like the rest, so nothing is lost. Curriculum
    # records are assembled with derived fields of their own (ingest.curriculum).
    if kind not in CURRICULUM_KINDS:
        for name, value in props.items():
            if name not in record and name not in _DERIVED:
                record[name] = value
    record["identifier"] = identifier
    if kind in (STANDARD, SKILL):
        record.pop("hasChildren", None)
        record["hasChildren"] = False  # last: `with_children` flips it by a cut
    return orjson.dumps(record)
