"""JSON schemas (OpenAPI 3.0) generated from typed row declarations (`model.alignment`):
a field's type gives its schema, `Doc` its description, a nested row a reference, and a
class that extends a record is that record with its own fields appended."""

from __future__ import annotations

import dataclasses
import inspect
from types import UnionType
from typing import Annotated, Any, Literal, Union, get_args, get_origin, get_type_hints

from edukg.model import alignment, framework_rows
from edukg.model.alignment import Bounds, Doc, omittable_fields
from edukg.model.shapes import EnumName

_PLAIN = {str: "string", int: "integer", float: "number", bool: "boolean"}


def _ref(name: str) -> dict[str, Any]:
    return {"$ref": f"#/components/schemas/{name}"}


def type_schema(declared: Any) -> tuple[dict[str, Any], bool, str]:
    """(schema, nullable, description) of one declared field type."""
    about = ""
    enum: str | None = None
    bounds: dict[str, float] = {}
    if get_origin(declared) is Annotated:
        declared, *extras = get_args(declared)
        about = next((e.text for e in extras if isinstance(e, Doc)), "")
        enum = next((e.name for e in extras if isinstance(e, EnumName)), None)
        for e in extras:
            if isinstance(e, Bounds):
                bounds = {"minimum": e.minimum, "maximum": e.maximum}
    nullable = False
    if get_origin(declared) in (Union, UnionType):
        members = [a for a in get_args(declared) if a is not type(None)]
        nullable = len(members) < len(get_args(declared))
        (declared,) = members
        inner, _, inner_about = type_schema(declared)
        return inner, nullable, about or inner_about
    if enum is not None:
        return _ref(f"{enum}ENUM"), nullable, about
    if get_origin(declared) is dict:
        return {"type": "object", "additionalProperties": True}, nullable, about
    if get_origin(declared) is list:
        items, _, _ = type_schema(get_args(declared)[0])
        return {"type": "array", "items": items}, nullable, about
    if get_origin(declared) is Literal:
        return {"type": "string", "enum": list(get_args(declared))}, nullable, about
    if isinstance(declared, type) and dataclasses.is_dataclass(declared):
        return _ref(declared.__name__), nullable, about
    return {"type": _PLAIN.get(declared, "string"), **bounds}, nullable, about


def row_schema(shape: type) -> dict[str, Any]:
    """The schema of one row type (a dataclass of `model.alignment`)."""
    hints = get_type_hints(shape, include_extras=True)
    properties: dict[str, Any] = {}
    required = []
    omittable = omittable_fields(shape)
    for field in dataclasses.fields(shape):
        schema, nullable, about = type_schema(hints[field.name])
        if field.name in omittable:
            nullable = False  # left out, never null
        else:
            required.append(field.name)
        if "$ref" in schema and (nullable or about):
            schema = {"allOf": [schema]}  # a reference takes no sibling keywords
        if nullable:
            schema = {**schema, "nullable": True}
        if about:
            schema = {**schema, "description": about}
        properties[field.name] = schema
    described = " ".join((inspect.getdoc(shape) or "").split())
    own = {
        "type": "object",
        "required": required,
        "properties": properties,
    }
    base = getattr(shape, "EXTENDS", None)
    if base:
        return {"allOf": [_ref(base), own], "description": described}
    return {**own, "description": described}


def enum_schemas(types: tuple[Any, ...]) -> dict[str, Any]:
    """`{Name}ENUM` schemas of enum types declared as Annotated[Literal[...], EnumName]."""
    out = {}
    for alias in types:
        literal, *extras = get_args(alias)
        name = next(e.name for e in extras if isinstance(e, EnumName))
        out[f"{name}ENUM"] = {"type": "string", "enum": list(get_args(literal))}
    return out


def alignment_schemas(schemas: dict[str, Any]) -> None:
    """Add the alignment extensions' schemas to `schemas`, every one generated from the
    rows declared in `model.alignment` and `model.framework_rows`."""
    schemas.update(enum_schemas(alignment.ENUM_TYPES))
    for shape in (*alignment.SHAPES, *framework_rows.SHAPES):
        schemas[shape.__name__] = row_schema(shape)
