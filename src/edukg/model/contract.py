"""The contract read off the declared types of `model.shapes`: field tables and enums.

One table of fields per record kind, derived from its type, drives both the encoder that
writes each record's JSON once at load time and the schemas of edukg's own OpenAPI
document, so that the two cannot drift apart.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from types import UnionType
from typing import Annotated, Any, Literal, Union, get_args, get_origin, get_type_hints

from edukg.model import shapes
from edukg.model.shapes import ENUM_TYPES, EnumName

# Field kinds: how a value is typed in the API (the export stores most as strings).
STR, LIST, BOOL, NUM, INT = "string", "list", "boolean", "number", "integer"
_KINDS: dict[Any, str] = {str: STR, bool: BOOL, float: NUM, int: INT}

Field = tuple[str, str, str | None]  # (name, kind, enum name or None)


@dataclass(frozen=True)
class TypeInfo:
    """What a declared type means on the wire."""

    kind: str  # one of the field kinds above
    enum: str | None  # the enum's name when values are drawn from one
    nullable: bool
    item_kind: str | None = None  # the element kind of a LIST


def type_info(declared: Any) -> TypeInfo:
    """Reads `str | None`, `list[GradeLevel] | None`, `Jurisdiction`... into a TypeInfo."""
    nullable = False
    if get_origin(declared) in (Union, UnionType):
        args = [a for a in get_args(declared) if a is not type(None)]
        nullable = len(args) < len(get_args(declared))
        (declared,) = args
    if get_origin(declared) in (list, tuple):  # tuple[X, ...]: a repeatable parameter
        item = get_args(declared)[0]
        inner = type_info(item)
        return TypeInfo(LIST, inner.enum, nullable, inner.kind)
    enum = None
    if get_origin(declared) is Annotated:
        declared, *extras = get_args(declared)
        enum = next((e.name for e in extras if isinstance(e, EnumName)), None)
    if get_origin(declared) is Literal:
        return TypeInfo(STR, enum, nullable)
    return TypeInfo(_KINDS.get(declared, STR), enum, nullable)


def enum_values(alias: Any) -> tuple[str, ...]:
    """The values of one of `model.shapes`' enum types."""
    literal = get_args(alias)[0]
    return tuple(get_args(literal))


def _enum_name(alias: Any) -> str:
    return next(e.name for e in get_args(alias)[1:] if isinstance(e, EnumName))


def fields_of(shape: type) -> tuple[Field, ...]:
    """A record type's fields in the served order, as (name, kind, enum) rows."""
    hints = get_type_hints(shape, include_extras=True)
    rows = []
    for f in dataclasses.fields(shape):
        info = type_info(hints[f.name])
        rows.append((f.name, info.kind, info.enum))
    return tuple(rows)


def keeps_null_of(shape: type) -> frozenset[str] | None:
    """For a record type whose absent fields are left out (curriculum records), the
    fields that are null instead; None where every field is always present."""
    kept: frozenset[str] | None = getattr(shape, "KEEPS_NULL", None)
    return kept


def required_of(shape: type) -> tuple[str, ...]:
    """The fields a record always has with a value (declared without `| None`)."""
    hints = get_type_hints(shape, include_extras=True)
    return tuple(f.name for f in dataclasses.fields(shape)
                 if not type_info(hints[f.name]).nullable)  # fmt: skip


ENUMS: dict[str, tuple[str, ...]] = {_enum_name(t): enum_values(t) for t in ENUM_TYPES}
JURISDICTIONS = enum_values(shapes.Jurisdiction)
ACADEMIC_SUBJECTS = enum_values(shapes.AcademicSubject)
GRADE_LEVELS = enum_values(shapes.GradeLevel)
ADOPTION_STATUSES = enum_values(shapes.AdoptionStatus)
NORMALIZED_STATEMENT_TYPES = enum_values(shapes.NormalizedStatementType)
LANGUAGES = enum_values(shapes.Language)

STANDARD_FIELDS = fields_of(shapes.StandardsFrameworkItem)
FRAMEWORK_FIELDS = fields_of(shapes.StandardsFramework)
COMPONENT_FIELDS = fields_of(shapes.LearningComponent)
COURSE_FIELDS = fields_of(shapes.Course)
LESSON_FIELDS = fields_of(shapes.Lesson)
GROUPING_FIELDS = fields_of(shapes.LessonGrouping)
ACTIVITY_FIELDS = fields_of(shapes.Activity)
ASSESSMENT_FIELDS = fields_of(shapes.Assessment)
# Curriculum records leave out what they lack, but for these fields (null instead).
COURSE_NULLS = keeps_null_of(shapes.Course)
GROUPING_NULLS = keeps_null_of(shapes.LessonGrouping)
LESSON_NULLS = keeps_null_of(shapes.Lesson)
ACTIVITY_NULLS = keeps_null_of(shapes.Activity)
ASSESSMENT_NULLS = keeps_null_of(shapes.Assessment)
SKILLS_FRAMEWORK_FIELDS = fields_of(shapes.DurableSkillsFramework)
SKILL_FIELDS = fields_of(shapes.DurableSkill)
CROSSWALK_EXTRA_FIELDS = fields_of(shapes.StandardCrosswalk)[len(STANDARD_FIELDS) :]
