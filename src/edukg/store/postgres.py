"""The scale-out store: the graph on PostgreSQL, one schema per loaded version.

A load builds a new schema `edukg_data_<time>_<random>` in one transaction (a
killed or failed load rolls back to nothing), then points `edukg.current` at it
in a second, one-row transaction. Readers look up the pointer (at most once per
`refresh` seconds) and query the schema it names, so every API process on every
host sees a new version without a restart. The previous version is kept, so a
reader that has not looked yet still finds its tables; older ones are dropped.
Keys live in the fixed schema `edukg`, apart from every version.

psycopg 3 with a connection pool: the standard, maintained driver, with COPY for
bulk loads, server-side prepared statements, and a sync API that fits edukg's
inline, sub-millisecond queries.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

import psycopg
from psycopg import sql as pgsql
from psycopg_pool import PoolTimeout

from edukg.model.embedding import DIMENSIONS
from edukg.model.lru import ByteLru
from edukg.store import shared
from edukg.store.base import (
    CASE_EDGES,
    STATEMENT_SECONDS,
    Candidates,
    DataInfo,
    Edge,
    Found,
    Query,
    Row,
    Search,
    StoreUnavailable,
)
from edukg.store.pg_common import WAIT, Connections, LazyPool, info_of
from edukg.store.pg_wire import NoDecoder, QueryError, Unavailable, WireReader

_CANDIDATE_BYTES = 128 * 1024 * 1024  # vectors of recent search filters kept per process


class PostgresStore(Connections):
    """Reads the version `edukg.current` points at, or with `release`, that release."""

    def __init__(
        self,
        url: str,
        refresh: float = 1.0,
        release: str | None = None,
        statement_seconds: float = STATEMENT_SECONDS,
    ) -> None:
        self._url = url
        self._pointer: tuple[str, tuple[str, ...]] = (
            ("SELECT schema_name FROM edukg.current WHERE id = 1", ())
            if release is None
            else ("SELECT schema_name FROM edukg.releases WHERE data_version = %s", (release,))
        )
        self._refresh = refresh
        self._pool = LazyPool(url)
        self._lock = threading.Lock()
        self._checked = -float("inf")
        self._schema: str | None = None
        self._info: DataInfo | None = None
        self._semantic: tuple[str, float] | None = None  # (schema, when seen complete)
        self._candidates: ByteLru[tuple[Any, ...], Candidates] = ByteLru(
            _CANDIDATE_BYTES, lambda found: int(found.vectors.nbytes)
        )
        self._wire = WireReader.shared(url, WAIT, statement_seconds)
        self._released = False

    def _current(self, force: bool = False) -> str | None:
        now = time.monotonic()
        if not force and now - self._checked < self._refresh:
            return self._schema
        if self._schema is not None and self._wire.quiet:
            return self._schema  # PostgreSQL may be frozen: the version last read, at once
        try:
            try:
                row = self._wire.query(*self._pointer)
            except QueryError as exc:
                if exc.sqlstate != "42P01":  # no such table: nothing loaded yet
                    raise
                row = []
            schema = row[0][0] if row else None
            if schema != self._schema:
                self._info = self._info_of(schema) if schema else None
                self._schema = schema
        except Unavailable as exc:
            self._checked = -float("inf")
            raise StoreUnavailable(str(exc)) from None
        self._checked = now
        return self._schema

    def _info_of(self, schema: str) -> DataInfo:
        quoted = '"' + schema.replace('"', '""') + '"'
        return info_of(self._wire.query(f"SELECT key, value FROM {quoted}.meta", []))

    def _query(self, sql: str, params: Iterable[Any]) -> list[tuple[Any, ...]]:
        # Only info() looks for a new version (a request calls it first), so every read of
        # a request comes from the version its X-Data-Version header names.
        for attempt in (1, 2):
            schema = self._schema if attempt == 1 and self._schema else self._current(force=True)
            if schema is None:
                return []
            try:
                return self._read(sql.replace("{p}", f'"{schema}".'), list(params))
            except psycopg.errors.UndefinedTable:
                continue  # the version was replaced twice since we looked: look again
            except (psycopg.OperationalError, PoolTimeout, Unavailable) as exc:
                raise StoreUnavailable(str(exc)) from None
        return []

    def _read(self, sql: str, params: list[Any]) -> list[tuple[Any, ...]]:
        """Through the lean per-thread connection (pg_wire); psycopg for the rare result
        type it does not decode."""
        try:
            return self._wire.query(sql, params)
        except QueryError as exc:
            if exc.sqlstate == "42P01":
                raise psycopg.errors.UndefinedTable(str(exc)) from None
            raise
        except NoDecoder:
            pass
        with self._pool.connection() as conn:
            rows: list[tuple[Any, ...]] = conn.execute(sql, params).fetchall()
            return rows

    def info(self) -> DataInfo | None:
        """The loaded version, or None; switches to a new one at most every `refresh` s."""
        self._current()
        return self._info

    def integrity(self) -> str:
        """PostgreSQL checks its own pages (data checksums, where the cluster has them)."""
        return "not checked"

    def answering(self) -> bool:
        """Whether PostgreSQL answers its heartbeat (pg_wire): known without waiting."""
        return not self._wire.quiet

    def by_identifier(self, identifier: str, kind: str) -> Found | None:
        """One record by node identifier."""
        rows = self._query(
            "SELECT identifier, kind, doc FROM {p}docs WHERE identifier = %s AND kind = %s",
            (identifier, kind),
        )
        return Found(rows[0][0], rows[0][1], bytes(rows[0][2])) if rows else None

    def by_case_uuid(self, case_uuid: str, kinds: tuple[str, ...]) -> Found | None:
        """One record by CASE UUID; the lowest identifier wins."""
        rows = self._query(
            "SELECT identifier, kind, doc FROM {p}docs WHERE case_uuid = %s AND kind = ANY(%s)"
            " ORDER BY identifier LIMIT 1",
            (case_uuid, list(kinds)),
        )
        return Found(rows[0][0], rows[0][1], bytes(rows[0][2])) if rows else None

    def page(self, query: Query, after: str | None, limit: int) -> list[Row]:
        """Up to `limit` rows of `query` after `after`."""
        sql, params = shared.page_sql(query, after or "", limit, prefix="{p}", mark="%s")
        return [(key, bytes(doc)) for key, doc in self._query(sql, params)]

    def lookup(self, relation: str, node: str, key: str = "") -> bytes | None:
        """One pre-encoded row."""
        rows = self._query(
            "SELECT doc FROM {p}rows WHERE relation = %s AND node = %s AND sort_key = %s",
            (relation, node, key),
        )
        return bytes(rows[0][0]) if rows else None

    def lookup_many(self, relation: str, nodes: Sequence[str], key: str = "") -> dict[str, bytes]:
        """Rows for many nodes in one query (an array parameter)."""
        if not nodes:
            return {}
        rows = self._query(
            "SELECT node, doc FROM {p}rows WHERE relation = %s AND sort_key = %s"
            " AND node = ANY(%s)",
            (relation, key, list(dict.fromkeys(nodes))),
        )
        return {str(node): bytes(doc) for node, doc in rows}

    def links_many(self, relation: str, nodes: Sequence[str]) -> list[tuple[str, str]]:
        """Neighbour-list pairs for many nodes in one query (an array parameter)."""
        if not nodes:
            return []
        rows = self._query(
            "SELECT node, other FROM {p}links WHERE relation = %s AND node = ANY(%s) ORDER BY 1, 2",
            (relation, sorted(set(nodes))),
        )
        return [(str(a), str(b)) for a, b in rows]

    def rows_many(self, relation: str, nodes: Sequence[str]) -> list[tuple[str, str, bytes]]:
        """Pre-encoded rows for many nodes in one query (an array parameter)."""
        if not nodes:
            return []
        rows = self._query(
            "SELECT node, sort_key, doc FROM {p}rows WHERE relation = %s AND node = ANY(%s)"
            " ORDER BY 1, 2",
            (relation, sorted(set(nodes))),
        )
        return [(str(a), str(b), bytes(c)) for a, b, c in rows]

    def search(self, query: Search, limit: int) -> list[tuple[str, bytes, float]]:
        """PostgreSQL full text (English stemming), ts_rank_cd, filters in the same query."""
        words = [w for w in query.words if w.isalnum() or w.replace("_", "").isalnum()]
        if not words:
            return []
        where, params = shared.search_filters(query, mark="%s", tables="{p}")
        rows = self._query(
            "SELECT d.identifier, d.doc, ts_rank_cd(s.tsv, q) AS relevance"
            " FROM {p}search s JOIN {p}docs d ON d.identifier = s.identifier,"
            " to_tsquery('english', %s) q"
            f" WHERE s.tsv @@ q AND {where} ORDER BY relevance DESC, d.identifier LIMIT %s",
            [" | ".join(words), *params, limit],
        )
        return [(i, bytes(doc), float(r)) for i, doc, r in rows if r > 0]

    def candidates(self, query: Search) -> Candidates | None:
        """Filtered rows of `semantic` with their vectors; ranked by the caller.

        A filter's candidates cross the network once per version and process: they are
        kept, least recently used out first, within `_CANDIDATE_BYTES`.
        """
        schema = self._current()  # a store that has not read yet knows no schema
        if schema is None or not self._semantic_ready(schema):
            return None
        key = (schema, query.kind, query.jurisdiction, query.subject, query.statement_type,
               query.grades_mask, query.framework)  # fmt: skip
        kept = self._candidates.get(key)
        if kept is not None:
            return kept
        import numpy as np  # noqa: PLC0415 - only semantic search needs NumPy

        where, params = shared.search_filters(query, mark="%s", tables="{p}")
        rows = self._query(
            "SELECT d.identifier, v.vec FROM {p}semantic d JOIN {p}vectors v ON v.row = d.row"
            f" WHERE {where} ORDER BY d.row",
            params,
        )
        vectors = np.frombuffer(b"".join(bytes(v) for _, v in rows), dtype=np.float32)
        found = Candidates([i for i, _ in rows], vectors.reshape(len(rows), DIMENSIONS))
        self._candidates.put(key, found)
        return found

    def indexing(self) -> tuple[int, int] | None:
        """From the vectors an `edukg index` has written so far, in any process or host."""
        schema = self._current()
        if schema is None or self._wire.quiet or self._semantic_ready(schema):
            return None
        counts = [self._query(f"SELECT count(*) FROM {{p}}{table}", ()) for table in
                  ("semantic", "vectors")]  # fmt: skip
        total, done = (int(rows[0][0]) if rows else 0 for rows in counts)
        return (min(done, total), total) if total else None

    def _semantic_ready(self, schema: str) -> bool:
        if self._semantic is not None and self._semantic[0] == schema:
            return True
        now = time.monotonic()
        if self._semantic is not None and now - self._semantic[1] < self._refresh:
            return False  # looked recently (for another version or none): not yet
        if self._wire.quiet:
            return False  # not known to be ready, and PostgreSQL may be frozen: words
        ready = bool(self._query("SELECT 1 FROM {p}meta WHERE key = 'vectors'", ()))
        self._semantic = (schema, now) if ready else ("", now)
        return ready

    def by_identifiers(self, identifiers: Sequence[str]) -> dict[str, Found]:
        """Records by identifier, in one query."""
        if not identifiers:
            return {}
        rows = self._query(
            "SELECT identifier, kind, doc FROM {p}docs WHERE identifier = ANY(%s)",
            (list(dict.fromkeys(identifiers)),),
        )
        return {i: Found(i, kind, bytes(doc)) for i, kind, doc in rows}

    def edges(self, identifiers: Sequence[str]) -> list[Edge]:
        """Relationships by identifier, in one query."""
        if not identifiers:
            return []
        rows = self._query(
            "SELECT identifier, label, source, target, line FROM {p}edges"
            " WHERE identifier = ANY(%s) ORDER BY identifier",
            (list(dict.fromkeys(identifiers)),),
        )
        return [Edge(i, label, s, t, bytes(line)) for i, label, s, t, line in rows]

    def edges_of(self, nodes: Sequence[str]) -> list[Edge]:
        """The CASE_EDGES of these nodes, through their links, in one query."""
        if not nodes:
            return []
        rows = self._query(
            "SELECT e.identifier, e.label, e.source, e.target, e.line FROM {p}edges e"
            " WHERE e.identifier IN (SELECT other FROM {p}links WHERE relation = %s"
            " AND node = ANY(%s)) ORDER BY e.identifier",
            (CASE_EDGES, list(dict.fromkeys(nodes))),
        )
        return [Edge(i, label, s, t, bytes(line)) for i, label, s, t, line in rows]

    def export_lines(self, relationships: bool, by_ends: bool = False) -> Iterator[bytes]:
        """Stored lines, ordered by identifier (or, `by_ends`, relationships by label,
        source, target and identifier), streamed through a server-side cursor."""
        schema = self._current(force=True)
        if schema is None:
            return
        table = "edges" if relationships else "nodes"
        with (
            self._pool.connection() as conn,
            conn.transaction(),
            conn.cursor(name="edukg_export") as cursor,
        ):
            order = "identifier"
            if relationships and by_ends:  # byte order, as SQLite's and Python's
                order = 'label COLLATE "C", source, target, identifier'
            cursor.execute(
                pgsql.SQL("SELECT line FROM {}.{} ORDER BY " + order).format(
                    pgsql.Identifier(schema), pgsql.Identifier(table)
                )
            )
            for (line,) in cursor:
                yield bytes(line)
