"""Declared request parameters: one declaration validates requests and documents them."""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from edukg.model.contract import ENUMS
from edukg.model.errors import ValidationError
from edukg.model.vocabulary import UUID_EXAMPLE, UUID_PATTERN

_INTEGER = re.compile(r"[+-]?[0-9]{1,12}")
_NUMBER = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]{1,3})?")
MAX_VALUE_LENGTH = 2000  # no legitimate value is longer; longer ones are refused early


@dataclass(frozen=True)
class Param:
    """One path or query parameter of an operation."""

    name: str
    kind: str  # "uuid" | "string" | "enum" | "integer" | "number" | "boolean"
    description: str = ""
    location: str = "query"
    required: bool = False
    repeat: bool = False  # may be given several times (`gradeLevel=6&gradeLevel=7`)
    enum: str | None = None  # a key of contract.ENUMS
    minimum: float | None = None
    maximum: float | None = None
    max_length: int | None = None
    default: Any = None
    example: str | None = None
    uuid_message: str = "Invalid CASE Network UUID"

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
            ("maxLength", self.max_length),
        ):
            if value is not None:
                item[key] = value
        if self.repeat:
            return {"type": "array", "items": item}
        if self.default is not None:
            item = {**item, "default": self.default} if "$ref" not in item else item
        return item


def _convert(param: Param, raw: str) -> Any:
    if len(raw) > MAX_VALUE_LENGTH or "\x00" in raw:
        raise ValidationError(
            f"Invalid value for {param.name}: too long or holds a NUL character.",
            {"parameter": param.name},
        )
    return _CONVERTERS.get(param.kind, _text)(param, raw)


_N = TypeVar("_N", int, float)


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
            f"{param.name} is longer than {param.max_length} characters",
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


def parse(
    params: tuple[Param, ...], query: dict[str, list[str]], path: dict[str, str]
) -> dict[str, Any]:
    """Typed values for `params`, or a ValidationError naming the first bad one.

    Unknown query parameters are ignored, as most HTTP APIs do; a scalar given
    twice is refused, since silently picking one would hide a client's bug.
    """
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
            values[param.name] = [] if param.repeat else param.default
            continue
        if param.repeat:
            values[param.name] = [_convert(param, raw) for raw in given]
        elif len(given) > 1:
            raise ValidationError(
                f"Parameter {param.name} was given {len(given)} times; give it once.",
                {"parameter": param.name},
            )
        else:
            values[param.name] = _convert(param, given[0])
    return values


LIMIT = Param(
    "limit",
    "integer",
    "Maximum number of results to return",
    minimum=1,
    maximum=1000,
    default=100,
)
CURSOR = Param(
    "cursor",
    "string",
    "Pagination cursor from the `nextCursor` field of the previous page",
)
CASE_UUID_PATH = Param(
    "caseIdentifierUUID", "uuid", "CASE Network UUID of the standard", location="path"
)
JURISDICTION = Param("jurisdiction", "enum", "Filter by jurisdiction", enum="Jurisdiction")
GRADE_LEVEL = Param(
    "gradeLevel",
    "enum",
    "Filter by grade level (repeatable: an item matches if it has any of them)",
    enum="GradeLevel",
    repeat=True,
)
SUBJECT = Param("academicSubject", "enum", "Filter by academic subject", enum="AcademicSubject")
INCLUDE_NON_CURRENT = Param(
    "includeNonCurrent",
    "boolean",
    "Include non-current (superseded) frameworks",
    default=False,
)
