"""CFDocuments' list parameters: limit, offset, sort, orderBy, fields and the 1EdTech
filter grammar (`field<op>'value'` terms joined by AND / OR, AND binding tighter;
operators =, !=, >, >=, <, <=, ~ for "contains")."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from edukg.adapters.case.errors import CaseError

DOCUMENT_FIELDS = (
    "identifier", "uri", "frameworkType", "caseVersion", "creator", "title",
    "lastChangeDateTime", "officialSourceURL", "publisher", "description", "subject",
    "subjectURI", "language", "version", "adoptionStatus", "statusStartDate", "statusEndDate",
    "licenseURI", "notes", "extensions", "CFPackageURI",
)  # fmt: skip
_TERM = re.compile(r"^\s*([A-Za-z]+)\s*(!=|>=|<=|=|>|<|~)\s*'((?:[^']|'')*)'\s*$")
# A term as it starts at a position (its quoted value may hold " AND " or " OR "), and
# the join after it.
_TERM_AT = re.compile(r"\s*[A-Za-z]+\s*(?:!=|>=|<=|=|>|<|~)\s*'(?:[^']|'')*'\s*")
_JOIN_AT = re.compile(r"(AND|OR)\s+")
MAX_FILTER = 1000

Test = Callable[[dict[str, Any]], bool]


@dataclass(frozen=True)
class Listing:
    """What a CFDocuments request asks for."""

    limit: int = 100
    offset: int = 0
    sort: str | None = None
    descending: bool = False
    fields: tuple[str, ...] = ()
    test: Test | None = None

    def apply(self, documents: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """Filter, sort, page and select fields."""
        chosen = [d for d in documents if self.test is None or self.test(d)]
        if self.sort:
            key = self.sort
            chosen.sort(key=lambda d: _comparable(d.get(key)), reverse=self.descending)
        chosen = chosen[self.offset : self.offset + self.limit]
        if self.fields:
            chosen = [{k: d[k] for k in self.fields if k in d} for d in chosen]
        return chosen


def _comparable(value: Any) -> str:
    if isinstance(value, list):
        return " ".join(str(v) for v in value)
    if isinstance(value, dict):
        return str(value.get("title", ""))
    return "" if value is None else str(value)


def _one(query: dict[str, list[str]], name: str) -> str | None:
    given = query.get(name)
    if not given:
        return None
    if len(given) > 1:
        raise CaseError(400, "invalid_selection_field", f"{name} was given {len(given)} times")
    return given[0]


def _count(query: dict[str, list[str]], name: str, default: int, least: int) -> int:
    raw = _one(query, name)
    if raw is None:
        return default
    if not raw.isascii() or not raw.isdigit() or len(raw) > 9 or int(raw) < least:
        raise CaseError(400, "invalid_selection_field", f"{name} must be an integer >= {least}")
    return int(raw)


def listing(query: dict[str, list[str]]) -> Listing:
    """The Listing a query string asks for, or a CaseError naming what is wrong."""
    sort = _one(query, "sort")
    if sort is not None and sort not in DOCUMENT_FIELDS:
        raise CaseError(400, "invalid_sort_field", f"cannot sort by {sort[:60]!r}")
    order = _one(query, "orderBy")
    order = "asc" if order is None else order  # given empty is not absent: a 400
    if order not in ("asc", "desc"):
        raise CaseError(400, "invalid_sort_field", "orderBy is asc or desc")
    fields: list[str] = []
    for given in query.get("fields", []):
        fields += [f.strip() for f in given.split(",") if f.strip()]
    unknown = [f for f in fields if f not in DOCUMENT_FIELDS]
    if unknown:
        raise CaseError(400, "invalid_selection_field", f"unknown field {unknown[0][:60]!r}")
    raw_filter = _one(query, "filter")
    return Listing(
        limit=min(_count(query, "limit", 100, 1), 10_000),
        offset=_count(query, "offset", 0, 0),
        sort=sort,
        descending=order == "desc",
        fields=tuple(fields),
        test=parse_filter(raw_filter) if raw_filter else None,
    )


def parse_filter(text: str) -> Test:
    """A predicate over documents for a filter expression."""
    if len(text) > MAX_FILTER:
        raise CaseError(400, "invalid_selection_field", "the filter is too long")
    parts = _split(text)
    terms = [_term(p) for p in parts[0::2]]
    joins = parts[1::2]
    groups: list[list[Test]] = [[terms[0]]]
    for join, term in zip(joins, terms[1:], strict=True):
        if join == "AND":
            groups[-1].append(term)
        else:
            groups.append([term])
    return lambda d: any(all(t(d) for t in group) for group in groups)


def _split(text: str) -> list[str]:
    """Terms and the joins between them, in order; a quoted value is never split."""
    parts: list[str] = []
    pos = 0
    while True:
        term = _TERM_AT.match(text, pos)
        if term is None:
            return [*parts, text[pos:]]  # _term says what is wrong with it
        parts.append(term.group(0))
        pos = term.end()
        if pos >= len(text):
            return parts
        join = _JOIN_AT.match(text, pos)
        if join is None or not term.group(0)[-1:].isspace():
            return [*parts[:-1], text[pos - len(term.group(0)) :]]
        parts.append(join.group(1))
        pos = join.end()


def _term(text: str) -> Test:
    match = _TERM.match(text)
    if not match:
        raise CaseError(
            400, "invalid_selection_field", f"not a filter term: {text[:80]!r} (field<op>'value')"
        )
    field, op, value = match.group(1), match.group(2), match.group(3).replace("''", "'")
    if field not in DOCUMENT_FIELDS:
        raise CaseError(400, "invalid_selection_field", f"cannot filter by {field!r}")
    want = value.lower()
    compare: dict[str, Callable[[str], bool]] = {
        "=": lambda v: v == want,
        "!=": lambda v: v != want,
        ">": lambda v: v > want,
        ">=": lambda v: v >= want,
        "<": lambda v: v < want,
        "<=": lambda v: v <= want,
        "~": lambda v: want in v,
    }
    check = compare[op]
    return lambda d: check(_comparable(d.get(field)).lower())
