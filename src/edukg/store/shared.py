"""The SQL that both stores read with, so both backends answer alike: paged range scans,
search filters, the full-text partition tokens, and the indexes on the records."""

from __future__ import annotations

import hashlib
from typing import Any

from edukg.store.base import (
    Linked,
    Listed,
    Matching,
    Members,
    OfKind,
    Query,
    Search,
)
from edukg.store.changes_base import ChangeFilter

# Built after the bulk insert: one pass per index is cheaper than growing them row by row.
INDEXES = """
CREATE INDEX docs_by_case ON docs (case_uuid, kind);
CREATE INDEX docs_by_kind ON docs (kind, subject, identifier);
CREATE INDEX docs_of_kind ON docs (kind, identifier);
CREATE INDEX docs_by_code ON docs (kind, code);
CREATE INDEX docs_by_alt_code ON docs (kind, alt_code)
"""


def page_sql(
    query: Query, after: str, limit: int, prefix: str = "", mark: str = "?"
) -> tuple[str, list[object]]:
    """One keyset-paged range scan for `query`: SQL (tables behind `prefix`) and parameters.

    The same statement serves SQLite (`?`) and PostgreSQL (`%s`, tables in the loaded
    version's schema); identifiers compare in byte order on both.
    """
    build = _PAGE_BUILDERS[type(query)]
    sql, params = build(query, _Where(mark, after), prefix)
    params.append(limit)
    return sql, params


def changes_sql(
    pair: str, where: ChangeFilter, after: str, limit: int, table: str, mark: str = "?"
) -> tuple[str, list[object]]:
    """One page of a pair's kept changes in key order: SQL and parameters."""
    w = _Where(mark, after)
    w.add("pair = {m} AND key > {m}", pair, after)
    w.equal(type=where.type, label=where.label, change=where.change, identifier=where.identifier)
    sql = f"SELECT key, doc, vals FROM {table} WHERE {w.sql()} ORDER BY key LIMIT {mark}"
    return sql, [*w.params, limit]


class _Where:
    """Conditions and their parameters, written with the backend's parameter mark."""

    def __init__(self, mark: str, after: str) -> None:
        self.m = mark
        self.after = after
        self.terms: list[str] = []
        self.params: list[object] = []

    def add(self, term: str, *values: object) -> None:
        """`term` holds one `{m}` per value."""
        self.terms.append(term.format(m=self.m))
        self.params.extend(values)

    def equal(self, column_prefix: str = "", **columns: object) -> None:
        """`column = value` for each given (not None) value."""
        for column, value in columns.items():
            if value is not None:
                self.add(f"{column_prefix}{column} = {{m}}", value)

    def sql(self) -> str:
        return " AND ".join(self.terms)


def _members_sql(query: Members, w: _Where, p: str) -> tuple[str, list[object]]:
    w.add("m.framework = {m}", query.framework)
    w.add("m.identifier > {m}", w.after)
    if query.grades_mask:
        w.add("(m.grades & {m}) != 0", query.grades_mask)
    w.equal("m.", subject=query.subject, stmt_type=query.statement_type)
    # Each record fetched by key once the page is known (membership is made from docs, so
    # every member has one): a join lets PostgreSQL's planner merge-scan the whole records
    # table for a page of 100 (measured 3.4 ms against 0.4 ms).
    return (
        f"SELECT m.identifier, (SELECT d.doc FROM {p}docs d WHERE d.identifier = m.identifier)"
        f" FROM {p}membership m WHERE {w.sql()} ORDER BY m.identifier LIMIT {w.m}"
    ), w.params


def _linked_sql(query: Linked, w: _Where, p: str) -> tuple[str, list[object]]:
    w.add("l.relation = {m}", query.relation)
    w.add("l.node = {m}", query.node)
    w.add("l.other > {m}", w.after)
    return (
        f"SELECT l.other, d.doc FROM {p}links l JOIN {p}docs d ON d.identifier = l.other"
        f" WHERE {w.sql()} ORDER BY l.other LIMIT {w.m}"
    ), w.params


def _matching_sql(query: Matching, w: _Where, p: str) -> tuple[str, list[object]]:
    w.add("kind = {m}", query.kind)
    w.add("identifier > {m}", w.after)
    m, codes, values = w.m, [], []
    exact = ((query.code,) if query.code is not None else ()) + query.codes
    if len(exact) == 1:  # the statement code or its alternate (1.NBT.1)
        codes.append(f"code = {m} OR alt_code = {m}")
        values += [*exact, *exact]
    elif exact:
        # Each code looked up by its index: `code IN (...) OR alt_code IN (...)` had
        # SQLite walk every record of the kind (4.6 ms against 57 µs on the sample).
        marks = ", ".join([m] * len(exact))
        codes.append(
            f"identifier IN (SELECT identifier FROM {p}docs WHERE kind = {m} AND code IN"
            f" ({marks}) UNION ALL SELECT identifier FROM {p}docs WHERE kind = {m} AND"
            f" alt_code IN ({marks}))"
        )
        values += [query.kind, *exact, query.kind, *exact]
    if query.code_prefix:
        codes.append(f"(code >= {m} AND code < {m})")
        values += [query.code_prefix, _successor(query.code_prefix)]
    if query.words:
        w.terms.append("(" + " OR ".join(f"text LIKE {m} ESCAPE '!'" for _ in query.words) + ")")
        values += [f"%{_escape_like(word)}%" for word in query.words]
    if codes:
        w.terms.insert(2, "(" + " OR ".join(codes) + ")")
    w.params.extend(values)
    w.equal(subject=query.subject, jurisdiction=query.jurisdiction)
    w.equal(stmt_type=query.statement_type)
    if query.grades_mask:
        w.add("(grades & {m}) != 0", query.grades_mask)
    _in_framework(w, query.framework, "", p)
    return (
        f"SELECT identifier, doc FROM {p}docs WHERE {w.sql()} ORDER BY identifier LIMIT {w.m}"
    ), w.params


def _listed_sql(query: Listed, w: _Where, p: str) -> tuple[str, list[object]]:
    w.add("relation = {m}", query.relation)
    w.add("node = {m}", query.node)
    w.add("sort_key > {m}", w.after)
    w.equal(label=query.label)
    if query.min_score is not None:
        w.add("score >= {m}", query.min_score)
    return (
        f"SELECT sort_key, doc FROM {p}rows WHERE {w.sql()} ORDER BY sort_key LIMIT {w.m}"
    ), w.params


def _of_kind_sql(query: OfKind, w: _Where, p: str) -> tuple[str, list[object]]:
    w.add("kind = {m}", query.kind)
    w.add("identifier > {m}", w.after)
    w.equal(subject=query.subject, jurisdiction=query.jurisdiction, adoption=query.adoption_status)
    if query.current_only:
        w.add("is_current = 1")
    return (
        f"SELECT identifier, doc FROM {p}docs WHERE {w.sql()} ORDER BY identifier LIMIT {w.m}"
    ), w.params


_PAGE_BUILDERS: dict[type, Any] = {
    Members: _members_sql,
    Linked: _linked_sql,
    Matching: _matching_sql,
    Listed: _listed_sql,
    OfKind: _of_kind_sql,
}


def _successor(prefix: str) -> str:
    """The smallest string greater than every string that starts with `prefix`."""
    return prefix[:-1] + chr(ord(prefix[-1]) + 1)


def _escape_like(word: str) -> str:
    return word.replace("!", "!!").replace("%", "!%").replace("_", "!_")


SEARCHABLE_KINDS = ("standard", "component", "skill")


def _partition_token(prefix: str, value: str) -> str:
    # Digits after a letter: no stemmer or tokenizer changes it, no word can equal it.
    digest = hashlib.blake2b(value.encode(), digest_size=6).digest()
    return f"{prefix}{int.from_bytes(digest, 'big')}"


def partition_tokens(kind: str, jurisdiction: str | None) -> str:
    """The full-text tokens that name a record's kind and jurisdiction."""
    tokens = _partition_token("k", kind)
    return tokens if jurisdiction is None else f"{tokens} {_partition_token('j', jurisdiction)}"


def partition_match(query: Search) -> str:
    """An FTS5 condition that narrows a search to its jurisdiction, or else to its kind
    (the full-text table's `scope` column holds these partition tokens).

    One token, the narrower: intersecting with the kind's list (every standard) as well
    would double the work, and the kind is checked on the matches anyway.
    """
    if query.jurisdiction is not None:
        return f"scope : {_partition_token('j', query.jurisdiction)}"
    return f"scope : {_partition_token('k', query.kind)}"


def _in_framework(w: _Where, framework: str | None, column_prefix: str, tables: str) -> None:
    """Members of `framework` only (when given), through the membership table."""
    if framework is not None:
        w.terms.append(
            f"{column_prefix}identifier IN (SELECT identifier FROM {tables}membership"
            f" WHERE framework = {w.m})"
        )
        w.params.append(framework)


def search_filters(
    query: Search, mark: str = "?", prefix: str = "d.", tables: str = ""
) -> tuple[str, list[object]]:
    """The WHERE conditions on the records (`prefix`: their alias and a dot, or "") that a
    search applies before ranking (`tables`: the tables' schema prefix, if any)."""
    w = _Where(mark, "")
    w.add(f"{prefix}kind = {{m}}", query.kind)
    w.equal(
        prefix,
        jurisdiction=query.jurisdiction,
        subject=query.subject,
        stmt_type=query.statement_type,
    )
    if query.grades_mask:
        w.add(f"({prefix}grades & {{m}}) != 0", query.grades_mask)
    _in_framework(w, query.framework, prefix, tables)
    return w.sql(), w.params
