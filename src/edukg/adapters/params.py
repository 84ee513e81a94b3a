"""Declared request parameters: one declaration validates requests and documents them.

Each operation declares its parameters as a dataclass whose fields are the parameters:
the field's type says how a value is read (`int`, `bool`, `Uuid`, an enum type of
`model.shapes`, a tuple for a repeatable one), `Annotated[..., Param(...)]` documents and
bounds it, a default makes it optional. Handlers receive an instance, which mypy checks;
the OpenAPI document, docs/api.md and request validation are all made from the class.
"""

from __future__ import annotations

import dataclasses
import math
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Annotated, Any, TypeVar, get_args, get_origin, get_type_hints

import orjson

from edukg.model.contract import ENUMS, LIST, type_info
from edukg.model.errors import ValidationError
from edukg.model.shapes import AcademicSubject, EnumName, GradeLevel, Jurisdiction
from edukg.model.text import is_blank
from edukg.model.vocabulary import UUID_EXAMPLE, UUID_PATTERN

_INTEGER = re.compile(r"[+-]?[0-9]{1,12}")
_NUMBER = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]{1,3})?")
MAX_VALUE_LENGTH = 2000  # no legitimate value is longer; longer ones are refused early


@dataclass(frozen=True)
class Param:
    """How one parameter is documented and bounded.

    Written in an `Annotated[...]` on a field of an operation's parameter class; the
    field gives the rest (name, type, default), which `declared` fills in.
    """

    description: str = ""
    location: str = "query"
    minimum: float | None = None
    maximum: float | None = None
    max_length: int | None = None
    # A text's least length; one that holds nothing a reader sees (model.text.is_blank:
    # spaces, zero-width characters, a byte-order mark) is refused as empty.
    min_length: int | None = None
    example: str | None = None
    uuid_message: str = "Invalid CASE Network UUID"
    # From the field's declaration:
    name: str = ""
    kind: str = ""  # "uuid" | "string" | "enum" | "integer" | "number" | "boolean"
    required: bool = False
    repeat: bool = False  # may be given several times (`gradeLevel=6&gradeLevel=7`)
    enum: str | None = None  # a key of contract.ENUMS
    default: Any = None

    def schema(self) -> dict[str, Any]:
        """This parameter's JSON schema, for the OpenAPI document."""
        item: dict[str, Any]
        if self.kind == "enum" and self.enum:
            item = {"$ref": f"#/components/schemas/{self.enum}ENUM"}
        elif self.kind == "uuid":
            item = {"type": "string", "format": "uuid"}
        else:
            item = {"type": self.kind}
        for key, value in (
            ("minimum", self.minimum),
            ("maximum", self.maximum),
            ("minLength", self.min_length),
            ("maxLength", self.max_length),
        ):
            if value is not None:
                item[key] = value
        if self.repeat:
            return {"type": "array", "items": item}
        if self.default is not None:
            item = {**item, "default": self.default} if "$ref" not in item else item
        return item


@dataclass(frozen=True)
class _UuidFormat:
    """Marks a string parameter that must be a UUID."""


Uuid = Annotated[str, _UuidFormat()]


_DECLARED: dict[type, tuple[Param, ...]] = {}


def declared(params_type: type) -> tuple[Param, ...]:
    """The parameters an operation's parameter class declares, in declaration order."""
    known = _DECLARED.get(params_type)
    if known is None:
        hints = get_type_hints(params_type, include_extras=True)
        fields = dataclasses.fields(params_type)
        known = _DECLARED[params_type] = tuple(_declare(f, hints[f.name]) for f in fields)
    return known


def _declare(field: dataclasses.Field[Any], hint: Any) -> Param:
    extras: list[Any] = []
    if get_origin(hint) is Annotated:
        hint, *extras = get_args(hint)
    for member in get_args(hint):  # `Uuid | None`: the marks sit inside the union
        if get_origin(member) is Annotated:
            extras += get_args(member)[1:]
    meta = next((e for e in extras if isinstance(e, Param)), Param())
    info = type_info(hint)
    # Annotated flattens: an enum type's name may sit beside the Param.
    enum = info.enum or next((e.name for e in extras if isinstance(e, EnumName)), None)
    kind = info.item_kind if info.kind == LIST else info.kind
    if any(isinstance(e, _UuidFormat) for e in extras):
        kind = "uuid"
    elif enum:
        kind = "enum"
    has_default = field.default is not dataclasses.MISSING
    return dataclasses.replace(
        meta,
        name=field.name.rstrip("_"),  # `from_` declares the parameter `from`
        kind=kind or "string",
        required=not has_default,
        repeat=info.kind == LIST,
        enum=enum,
        default=field.default if has_default and field.default != () else None,
    )


def _convert(param: Param, raw: str) -> Any:
    if len(raw) > MAX_VALUE_LENGTH or "\x00" in raw:
        raise ValidationError(
            f"Invalid value for {param.name}: too long or holds a NUL character.",
            {"parameter": param.name},
        )
    return _CONVERTERS.get(param.kind, _text)(param, raw)


_N = TypeVar("_N", int, float)
P = TypeVar("P")


def _uuid(param: Param, raw: str) -> str:
    if not UUID_PATTERN.match(raw):
        raise ValidationError(
            f'{param.uuid_message} (valid format looks like "{UUID_EXAMPLE}")',
            {"parameter": param.name, "value": raw[:100]},
        )
    return raw.lower()


def _enum(param: Param, raw: str) -> str:
    allowed = ENUMS[param.enum or ""]
    if raw not in allowed:
        shown = ", ".join(f"'{v}'" for v in allowed[:14])
        more = " ..." if len(allowed) > 14 else ""
        raise ValidationError(
            f"Invalid value for {param.name}: {raw[:100]!r}. Input should be {shown}{more}",
            {"parameter": param.name, "allowed": list(allowed)},
        )
    return raw


def _integer(param: Param, raw: str) -> int:
    if not _INTEGER.fullmatch(raw):
        raise _range_error(param, raw, "an integer")
    return _in_range(param, raw, int(raw))


def _number(param: Param, raw: str) -> float:
    # float() and int() take any script's digits ("١٠"); the API takes ASCII only.
    if not _NUMBER.fullmatch(raw):
        raise _range_error(param, raw, "a number")
    value = float(raw)
    if not math.isfinite(value):
        raise _range_error(param, raw, "a finite number")
    return _in_range(param, raw, value)


def _in_range(param: Param, raw: str, value: _N) -> _N:
    if (param.minimum is not None and value < param.minimum) or (
        param.maximum is not None and value > param.maximum
    ):
        raise _range_error(param, raw, "a number")
    return value


def _boolean(param: Param, raw: str) -> bool:
    if raw.lower() not in ("true", "false"):
        raise ValidationError(
            f"Invalid value for {param.name}: {raw[:100]!r}. Input should be true or false",
            {"parameter": param.name},
        )
    return raw.lower() == "true"


def _text(param: Param, raw: str) -> str:
    if param.max_length is not None and len(raw) > param.max_length:
        raise ValidationError(
            f"`{param.name}` is longer than {param.max_length} characters.",
            {"parameter": param.name},
        )
    if param.min_length and is_blank(raw):
        raise ValidationError(f"`{param.name}` is empty.", {"parameter": param.name})
    if param.min_length and len(raw) < param.min_length:
        raise ValidationError(
            f"`{param.name}` is shorter than {param.min_length} characters.",
            {"parameter": param.name},
        )
    return raw


_CONVERTERS: dict[str, Callable[[Param, str], Any]] = {
    "uuid": _uuid,
    "enum": _enum,
    "integer": _integer,
    "number": _number,
    "boolean": _boolean,
}


def _range_error(param: Param, raw: str, what: str) -> ValidationError:
    bounds = ""
    if param.minimum is not None and param.maximum is not None:
        bounds = f" between {param.minimum:g} and {param.maximum:g}"
    return ValidationError(
        f"Invalid value for {param.name}: {raw[:100]!r}. Input should be {what}{bounds}",
        {"parameter": param.name},
    )


def parse(params_type: type[P], query: dict[str, list[str]], path: dict[str, str]) -> P:
    """The typed parameters of a request, or a ValidationError naming the first bad one.

    Unknown query parameters are ignored, as most HTTP APIs do; a scalar given
    twice is refused, since silently picking one would hide a client's bug.
    """
    return instance(params_type, parse_values(declared(params_type), query, path))


def instance(params_type: type[P], values: dict[str, Any]) -> P:
    """The parameter object of values by parameter name (a field named for a Python
    keyword has a trailing underscore: `from_` is the parameter `from`)."""
    names = _FIELD_NAMES.get(params_type)
    if names is None:
        fields = dataclasses.fields(params_type)  # type: ignore[arg-type]
        names = _FIELD_NAMES[params_type] = {f.name.rstrip("_"): f.name for f in fields}
    return params_type(**{names[k]: v for k, v in values.items()})


_FIELD_NAMES: dict[type, dict[str, str]] = {}


def parse_values(
    params: tuple[Param, ...], query: dict[str, list[str]], path: dict[str, str]
) -> dict[str, Any]:
    """Typed values for `params` by name (what `parse` builds its parameter object from)."""
    _near_misses(params, query)
    values: dict[str, Any] = {}
    for param in params:
        if param.location == "path":
            values[param.name] = _convert(param, path[param.name])
            continue
        given = query.get(param.name)
        if param.name == "cursor" and given == [""]:
            given = None  # some clients send an empty cursor for the first page
        if not given:
            if param.required:
                example = f" Example: ?{param.name}={param.example}" if param.example else ""
                raise ValidationError(
                    f"Missing required parameter: {param.name}.{example}",
                    {"parameter": param.name},
                )
            values[param.name] = () if param.repeat else param.default
            continue
        if param.repeat:
            values[param.name] = tuple(_convert(param, raw) for raw in given)
        elif len(given) > 1:
            raise ValidationError(
                f"Parameter {param.name} was given {len(given)} times; give it once.",
                {"parameter": param.name},
            )
        else:
            values[param.name] = _convert(param, given[0])
    return values


# Names clients commonly send for a parameter under another name: unknown parameters are
# ignored (the hosted API takes them), but one of these, or one that differs from a
# known name only by case, is surely meant as that parameter and is refused with its
# right name rather than silently dropped.
ALIASES = {
    "grade": "gradeLevel", "grades": "gradeLevel", "grade_level": "gradeLevel",
    "subject": "academicSubject", "academic_subject": "academicSubject",
    "state": "jurisdiction", "statementType": "normalizedStatementType",
    "statement_type": "normalizedStatementType", "type": "normalizedStatementType",
    "framework": "standardsFrameworkCaseIdentifierUUID",
    "frameworkId": "standardsFrameworkCaseIdentifierUUID",
    "code": "statementCode", "statement_code": "statementCode",
    "q": "query", "search": "query", "page_size": "limit", "pageSize": "limit",
    "per_page": "limit", "size": "limit", "nextCursor": "cursor",
    "min_score": "minScore", "min_jaccard": "minJaccardScore", "minJaccard": "minJaccardScore",
}  # fmt: skip


def _near_misses(params: tuple[Param, ...], given: Any) -> None:
    """A 400 naming the right parameter for a given name that is surely meant as one."""
    names = {p.name for p in params}
    lowered = {p.name.lower(): p.name for p in params}
    for name in given:
        if name in names:
            continue
        meant = lowered.get(name.lower()) or ALIASES.get(name)
        if meant in names:
            raise ValidationError(
                f"Unknown parameter {name}: did you mean {meant}?",
                {"parameter": name, "expected": meant},
            )


def parse_body(params: tuple[Param, ...], body: bytes) -> dict[str, Any]:
    """Typed values for `params` from a JSON object (the body of a POST operation): a
    ValidationError naming the field for a body that is not an object, an unknown field,
    a missing one or a value of the wrong type. A repeatable field takes one value or a
    list of them."""
    try:
        given = orjson.loads(body)
    except orjson.JSONDecodeError:
        raise ValidationError("The request body is not valid JSON.") from None
    if not isinstance(given, dict):
        raise ValidationError("The request body must be a JSON object.")
    _near_misses(params, given)
    known = {p.name for p in params}
    unknown = sorted(set(given) - known)
    if unknown:
        raise ValidationError(
            f"Unknown field {unknown[0]!r} in the request body; known: {', '.join(sorted(known))}.",
            {"parameter": unknown[0]},
        )
    values: dict[str, Any] = {}
    for param in params:
        value = given.get(param.name)
        if value is None:
            if param.required:
                raise ValidationError(f"Missing required field: {param.name}.",
                                      {"parameter": param.name})  # fmt: skip
            values[param.name] = () if param.repeat else param.default
        elif param.repeat:
            # One value or a list of them, as a GET takes `gradeLevel=7` once or repeated.
            listed = value if isinstance(value, list) else [value]
            values[param.name] = tuple(_json_value(param, v) for v in listed)
        else:
            values[param.name] = _json_value(param, value)
    return values


def _json_value(param: Param, value: Any) -> Any:
    """One JSON value of `param`'s type, checked as a query value of it would be."""
    if param.kind == "integer":
        if not isinstance(value, int) or isinstance(value, bool):
            raise _type_error(param, "an integer")
        return _in_range(param, str(value), value)
    if param.kind == "number":
        if not isinstance(value, int | float) or isinstance(value, bool):
            raise _type_error(param, "a number")
        return _in_range(param, str(value), float(value))
    if param.kind == "boolean":
        if not isinstance(value, bool):
            raise _type_error(param, "true or false")
        return value
    if not isinstance(value, str):
        raise _type_error(param, "a string")
    if param.kind == "string":  # the body limit bounds its length; the field may be long
        return _text(param, value)
    return _convert(param, value)


def _type_error(param: Param, what: str) -> ValidationError:
    return ValidationError(f"Invalid value for {param.name}: it should be {what}.",
                           {"parameter": param.name})  # fmt: skip


# Parameters that several operations share.
Limit = Annotated[int, Param("Maximum number of results to return", minimum=1, maximum=1000)]
Cursor = Annotated[
    str | None, Param("Pagination cursor from the `nextCursor` field of the previous page")
]
CaseUuidPath = Annotated[Uuid, Param("CASE Network UUID of the standard", location="path")]
JurisdictionFilter = Annotated[Jurisdiction | None, Param("Filter by jurisdiction")]
GradeLevels = Annotated[
    tuple[GradeLevel, ...],
    Param("Filter by grade level (repeatable: an item matches if it has any of them)"),
]
SubjectFilter = Annotated[AcademicSubject | None, Param("Filter by academic subject")]
IncludeNonCurrent = Annotated[bool, Param("Include non-current (superseded) frameworks")]


@dataclass(frozen=True, slots=True, kw_only=True)
class Standard:
    """The parameters of an operation on one standard."""

    caseIdentifierUUID: CaseUuidPath


@dataclass(frozen=True, slots=True, kw_only=True)
class StandardPage:
    """The parameters of a paged list about one standard."""

    caseIdentifierUUID: CaseUuidPath
    limit: Limit = 100
    cursor: Cursor = None
