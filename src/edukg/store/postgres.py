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

import contextlib
import re
import secrets
import threading
import time
from collections import OrderedDict
from collections.abc import Iterable, Iterator
from datetime import UTC, datetime
from typing import Any

import orjson
import psycopg
from psycopg import sql as pgsql
from psycopg_pool import ConnectionPool, PoolTimeout

from edukg.model.embedding import DIMENSIONS, ROW_BYTES
from edukg.model.vocabulary import CURRICULUM_KINDS
from edukg.store import pg_wire, shared
from edukg.store.base import (
    CHILDREN,
    Candidates,
    DataInfo,
    Derivations,
    Found,
    OutRow,
    Query,
    Row,
    Search,
    StoreUnavailable,
)
from edukg.store.pg_wire import REVISION_SQL, QueryError, Unavailable, WireReader

_META_SCHEMA = """
CREATE SCHEMA IF NOT EXISTS edukg;
CREATE TABLE IF NOT EXISTS edukg.current (
  id          integer PRIMARY KEY CHECK (id = 1),
  schema_name text NOT NULL,
  previous    text,
  switched_at timestamptz NOT NULL DEFAULT now()
);
CREATE TABLE IF NOT EXISTS edukg.embeddings (key bytea PRIMARY KEY, vec bytea NOT NULL);
CREATE TABLE IF NOT EXISTS edukg.secret (id integer PRIMARY KEY CHECK (id = 1), value bytea NOT NULL);
CREATE TABLE IF NOT EXISTS edukg.api_keys (
  name       text NOT NULL,
  digest     bytea NOT NULL UNIQUE,
  last4      text NOT NULL,
  created_at text NOT NULL,
  revoked_at text,
  rate       double precision,
  burst      integer
);
CREATE UNIQUE INDEX IF NOT EXISTS api_keys_live_name ON edukg.api_keys (name)
  WHERE revoked_at IS NULL;
CREATE TABLE IF NOT EXISTS edukg.key_revision (
  id       integer PRIMARY KEY CHECK (id = 1),
  revision bigint NOT NULL
);
INSERT INTO edukg.key_revision VALUES (1, 0) ON CONFLICT DO NOTHING;
"""

# Identifiers compare in byte order (COLLATE "C"), as on SQLite, so pages match exactly.
_DATA_SCHEMA = """
CREATE TABLE meta (key text PRIMARY KEY, value text NOT NULL);
CREATE TABLE nodes (identifier text COLLATE "C" PRIMARY KEY, label text NOT NULL, kind text,
  line bytea NOT NULL);
CREATE TABLE edges (identifier text COLLATE "C" PRIMARY KEY, label text NOT NULL,
  source text COLLATE "C" NOT NULL, target text COLLATE "C" NOT NULL, line bytea NOT NULL);
CREATE TABLE docs (identifier text COLLATE "C" PRIMARY KEY, kind text NOT NULL, case_uuid text,
  jurisdiction text, subject text, stmt_type text, grades integer NOT NULL DEFAULT 0,
  adoption text, is_current integer NOT NULL DEFAULT 1, doc bytea NOT NULL,
  code text COLLATE "C", text text COLLATE "C", alt_code text COLLATE "C");
CREATE TABLE membership (framework text COLLATE "C" NOT NULL, identifier text COLLATE "C" NOT NULL,
  grades integer NOT NULL, subject text, stmt_type text, PRIMARY KEY (framework, identifier));
CREATE TABLE links (relation text NOT NULL, node text COLLATE "C" NOT NULL,
  other text COLLATE "C" NOT NULL, PRIMARY KEY (relation, node, other));
CREATE TABLE rows (relation text NOT NULL, node text COLLATE "C" NOT NULL,
  sort_key text COLLATE "C" NOT NULL, label text, score double precision, doc bytea NOT NULL,
  PRIMARY KEY (relation, node, sort_key));
CREATE TABLE figures (identifier text COLLATE "C" PRIMARY KEY, jaccard double precision,
  state integer, ccss integer, shared integer);
CREATE UNLOGGED TABLE nodes_in (seq bigint, identifier text, label text, kind text, line bytea);
CREATE UNLOGGED TABLE docs_in (seq bigint, identifier text, kind text, case_uuid text,
  jurisdiction text, subject text, stmt_type text, grades integer, adoption text,
  is_current integer, doc bytea, code text, text text, alt_code text);
CREATE UNLOGGED TABLE edges_in (seq bigint, identifier text, label text, source text,
  target text, line bytea);
CREATE UNLOGGED TABLE figures_in (seq bigint, identifier text, jaccard double precision,
  state integer, ccss integer, shared integer);
"""

_LOAD_LOCK = 0x6564756B67  # "edukg": one load at a time per database
_SCHEMA_NAME = re.compile(r"^edukg_data_[0-9a-z_]+$")


# Seconds to wait for a connection: during an outage, requests fail fast with 503
# rather than queueing; the pool keeps reconnecting in the background.
_WAIT = 2
_IDLE = 5.0  # seconds a spare pooled connection is kept


def _pool(url: str) -> ConnectionPool:
    return ConnectionPool(
        url,
        # The version pointer, key writes and rare fallbacks: reads use pg_wire, so these
        # connections are made on demand and closed after a few idle seconds.
        min_size=0,
        max_size=4,
        max_idle=_IDLE,
        kwargs={"autocommit": True, "connect_timeout": _WAIT},
        timeout=_WAIT,
        open=True,
    )


def _statements(script: str) -> list[str]:
    return [s.strip() for s in script.split(";") if s.strip()]


def ensure_meta(conn: psycopg.Connection[Any]) -> None:
    """Create the fixed `edukg` schema (pointer, keys) if it is not there yet."""
    with conn.transaction():
        conn.execute("SELECT pg_advisory_xact_lock(%s)", (_LOAD_LOCK + 1,))
        for statement in _statements(_META_SCHEMA):
            conn.execute(statement)


_CANDIDATE_BYTES = 128 * 1024 * 1024  # vectors of recent search filters kept per process


class Connections:
    """What a PostgreSQL reader holds: a psycopg pool made on first use and a share of
    the process's lean per-thread connections (pg_wire); `close` lets go of both."""

    _pool: ConnectionPool | None
    _wire: WireReader
    _released: bool

    def close(self) -> None:
        """Close the pool and let go of the lean connections (once)."""
        if not self._released:
            self._released = True
            self._wire.release()
        if self._pool is not None:
            self._pool.close()
            self._pool = None


class PostgresStore(Connections):
    """Reads the version `edukg.current` points at."""

    def __init__(self, url: str, refresh: float = 1.0) -> None:
        self._url = url
        self._refresh = refresh
        self._pool: ConnectionPool | None = None
        self._lock = threading.Lock()
        self._checked = -float("inf")
        self._schema: str | None = None
        self._info: DataInfo | None = None
        self._semantic: tuple[str, float] | None = None  # (schema, when seen complete)
        self._candidates: OrderedDict[tuple[Any, ...], Candidates] = OrderedDict()
        self._candidate_bytes = 0
        self._wire = WireReader.shared(url, _WAIT)
        self._released = False

    def _connection(self) -> Any:
        if self._pool is None:
            with self._lock:
                if self._pool is None:
                    self._pool = _pool(self._url)
        return self._pool.connection()

    def _current(self, force: bool = False) -> str | None:
        now = time.monotonic()
        if not force and now - self._checked < self._refresh:
            return self._schema
        try:
            with self._connection() as conn:
                try:
                    row = conn.execute(
                        "SELECT schema_name FROM edukg.current WHERE id = 1"
                    ).fetchone()
                except psycopg.errors.UndefinedTable:
                    row = None
                schema = row[0] if row else None
                if schema != self._schema:
                    self._info = _read_info(conn, schema) if schema else None
                    self._schema = schema
        except (psycopg.OperationalError, PoolTimeout) as exc:
            self._checked = -float("inf")
            raise StoreUnavailable(str(exc)) from None
        self._checked = now
        return self._schema

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
            request = pg_wire.revision
            if request.pending is not None and request.seen is None and request.url == self._url:
                # A remembered key: its revision check rides along with the first read.
                revision, found = self._wire.query_also(REVISION_SQL, sql, params)
                request.seen = int(revision[0][0])
                return found
            return self._wire.query(sql, params)
        except QueryError as exc:
            if exc.sqlstate == "42P01":
                raise psycopg.errors.UndefinedTable(str(exc)) from None
            if exc.sqlstate != "XX000":
                raise
        with self._connection() as conn:
            rows: list[tuple[Any, ...]] = conn.execute(sql, params).fetchall()
            return rows

    def info(self) -> DataInfo | None:
        """The loaded version, or None; switches to a new one at most every `refresh` s."""
        self._current()
        return self._info

    def integrity(self) -> str:
        """PostgreSQL checks its own pages (data checksums, where the cluster has them)."""
        return "not checked"

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

    def search(self, query: Search, limit: int) -> list[tuple[str, bytes, float]]:
        """PostgreSQL full text (English stemming), ts_rank_cd, filters in the same query."""
        words = [w for w in query.words if w.isalnum() or w.replace("_", "").isalnum()]
        if not words:
            return []
        where, params = shared.search_filters(query, mark="%s")
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
               query.grades_mask)  # fmt: skip
        with self._lock:
            kept = self._candidates.get(key)
            if kept is not None:
                self._candidates.move_to_end(key)
                return kept
        import numpy as np  # noqa: PLC0415 - only semantic search needs NumPy

        where, params = shared.search_filters(query, mark="%s")
        rows = self._query(
            "SELECT d.identifier, v.vec FROM {p}semantic d JOIN {p}vectors v ON v.row = d.row"
            f" WHERE {where} ORDER BY d.row",
            params,
        )
        vectors = np.frombuffer(b"".join(bytes(v) for _, v in rows), dtype=np.float32)
        found = Candidates([i for i, _ in rows], vectors.reshape(len(rows), DIMENSIONS))
        with self._lock:
            self._candidates[key] = found
            self._candidate_bytes += vectors.nbytes
            while self._candidate_bytes > _CANDIDATE_BYTES and len(self._candidates) > 1:
                _, old = self._candidates.popitem(last=False)
                self._candidate_bytes -= old.vectors.nbytes
        return found

    def _semantic_ready(self, schema: str) -> bool:
        if self._semantic is not None and self._semantic[0] == schema:
            return True
        now = time.monotonic()
        if self._semantic is not None and now - self._semantic[1] < self._refresh:
            return False  # looked recently (for another version or none): not yet
        ready = bool(self._query("SELECT 1 FROM {p}meta WHERE key = 'vectors'", ()))
        self._semantic = (schema, now) if ready else ("", now)
        return ready

    def export_lines(self, relationships: bool) -> Iterator[bytes]:
        """Stored lines, ordered by identifier, streamed through a server-side cursor."""
        schema = self._current(force=True)
        if schema is None:
            return
        table = "edges" if relationships else "nodes"
        with (
            self._connection() as conn,
            conn.transaction(),
            conn.cursor(name="edukg_export") as cursor,
        ):
            cursor.execute(
                pgsql.SQL("SELECT line FROM {}.{} ORDER BY identifier").format(
                    pgsql.Identifier(schema), pgsql.Identifier(table)
                )
            )
            for (line,) in cursor:
                yield bytes(line)


def _read_info(conn: Any, schema: str) -> DataInfo:
    rows = conn.execute(
        pgsql.SQL("SELECT key, value FROM {}.meta").format(pgsql.Identifier(schema))
    ).fetchall()
    meta = dict(rows)
    return DataInfo(
        data_version=meta["data_version"],
        content_id=meta["content_id"],
        loaded_at=meta["loaded_at"],
        counts=orjson.loads(meta.get("counts", "{}")),
    )


class LoadInProgress(Exception):
    """Another load holds the database's load lock."""


class PostgresLoader:
    """Builds a new version schema with COPY, in one transaction, then switches."""

    def __init__(self, url: str) -> None:
        self._conn = psycopg.connect(url, autocommit=True)
        ensure_meta(self._conn)
        locked = self._conn.execute("SELECT pg_try_advisory_lock(%s)", (_LOAD_LOCK,)).fetchone()
        if not locked or not locked[0]:
            self._conn.close()
            raise LoadInProgress("another load into this database is running; try again later")
        stamp = datetime.now(UTC).strftime("%Y%m%d%H%M%S")
        self.schema = f"edukg_data_{stamp}_{secrets.token_hex(3)}"
        self._seq = 0
        # One transaction for the whole build: a failed or killed load leaves nothing behind.
        self._conn.execute("BEGIN")
        self._conn.execute(pgsql.SQL("CREATE SCHEMA {}").format(pgsql.Identifier(self.schema)))
        self._conn.execute(
            pgsql.SQL("SET LOCAL search_path TO {}").format(pgsql.Identifier(self.schema))
        )
        for statement in _statements(_DATA_SCHEMA):
            self._conn.execute(statement)

    def _copy(self, table: str, columns: str, rows: Iterable[tuple[Any, ...]]) -> None:
        with self._conn.cursor().copy(f"COPY {table} ({columns}) FROM STDIN") as copy:
            for row in rows:
                copy.write_row(row)

    def _numbered(self, rows: list[tuple[Any, ...]]) -> Iterator[tuple[Any, ...]]:
        for row in rows:
            self._seq += 1
            yield (self._seq, *row)

    def add(
        self,
        nodes: list[tuple[str, str, str | None, bytes]],
        docs: list[tuple[Any, ...]],
        edges: list[tuple[str, str, str, str, bytes]],
        figures: list[tuple[str, float, int | None, int | None, int | None]],
    ) -> None:
        """COPY one batch into the staging tables, numbered so that the last one wins."""
        if nodes:
            self._copy("nodes_in", "seq, identifier, label, kind, line", self._numbered(nodes))
        if docs:
            self._copy(
                "docs_in",
                "seq, identifier, kind, case_uuid, jurisdiction, subject, stmt_type, grades,"
                " adoption, is_current, doc, code, text, alt_code",
                self._numbered(docs),
            )
        if edges:
            self._copy(
                "edges_in", "seq, identifier, label, source, target, line", self._numbered(edges)
            )
        if figures:
            self._copy(
                "figures_in",
                "seq, identifier, jaccard, state, ccss, shared",
                self._numbered(figures),
            )

    def finish(self, meta: dict[str, str], rules: Derivations) -> dict[str, Any]:
        """Deduplicate, derive the served tables and count, inside the build transaction."""
        c = self._conn
        for table, columns in (
            ("nodes", "identifier, label, kind, line"),
            ("edges", "identifier, label, source, target, line"),
            ("figures", "identifier, jaccard, state, ccss, shared"),
            ("docs", "identifier, kind, case_uuid, jurisdiction, subject, stmt_type, grades,"
                     " adoption, is_current, doc, code, text, alt_code"),
        ):  # fmt: skip
            c.execute(
                f"INSERT INTO {table} ({columns}) SELECT DISTINCT ON (identifier) {columns}"
                f" FROM {table}_in ORDER BY identifier, seq DESC"
            )
            c.execute(f"DROP TABLE {table}_in")
        c.execute(
            "DELETE FROM docs d USING nodes n WHERE n.identifier = d.identifier"
            " AND n.kind IS DISTINCT FROM d.kind"
        )
        for statement in (shared.EDGE_INDEX, *_statements(shared.INDEXES)):
            c.execute(statement)
        for relation, label, node, other in shared.LINKS:
            c.execute(
                f"INSERT INTO links SELECT %s, {node}, {other} FROM edges WHERE label = %s"
                " ON CONFLICT DO NOTHING",
                (relation, label),
            )
        c.execute(
            "UPDATE docs SET doc = substring(doc from 1 for length(doc) - 6) || %s::bytea"
            " WHERE kind IN ('standard', 'skill') AND identifier IN (SELECT l.node FROM links l"
            " JOIN nodes n ON n.identifier = l.other WHERE l.relation = %s)",
            (b"true}", CHILDREN),
        )
        membership = (
            shared.MEMBERSHIP.format(items="docs").replace("?", "%s") + " ON CONFLICT DO NOTHING"
        )
        c.execute(membership, (CHILDREN, CHILDREN))
        rows: dict[tuple[str, str, str], OutRow] = {}
        for row in rules.crosswalk_rows(c.execute(shared.CROSSWALK_SOURCE.format(p=""))):
            rows[row[:3]] = row
        nodes = c.execute(
            "SELECT identifier, kind, line FROM nodes WHERE kind = ANY(%s)",
            (sorted(CURRICULUM_KINDS),),
        )

        def pairs(label: str) -> list[tuple[str, str]]:
            return c.execute(
                "SELECT source, target FROM edges WHERE label = %s", (label,)
            ).fetchall()

        aligned = c.execute(shared.ALIGNMENT_SOURCE.format(p=""))
        docs, derived = rules.curriculum(nodes, pairs("hasPart"), pairs("hasDependency"), aligned)
        self._copy("docs", "identifier, kind, doc, code, text", docs)
        for row in derived:
            rows[row[:3]] = row
        self._copy("rows", "relation, node, sort_key, label, score, doc", rows.values())
        c.execute(
            "CREATE TABLE search AS SELECT identifier, to_tsvector('english',"
            " coalesce(code, '') || ' ' || coalesce(text, '')) AS tsv FROM docs"
            " WHERE kind = ANY(%s)",
            (list(shared.SEARCHABLE_KINDS),),
        )
        c.execute("CREATE INDEX search_tsv ON search USING gin (tsv)")
        c.execute("ALTER TABLE search ADD PRIMARY KEY (identifier)")
        for statement in _statements(shared.SEMANTIC.format(items="docs")):
            c.execute(statement)
        # Filled by `edukg index` after the switch (see semantic.index).
        c.execute("CREATE TABLE vectors (row bigint PRIMARY KEY, vec bytea NOT NULL)")
        counts = shared.counts(lambda q: c.execute(q).fetchall())
        served = {
            str(k): int(v)
            for k, v in c.execute("SELECT kind, count(*) FROM docs GROUP BY kind ORDER BY 1")
        }
        meta = {**meta, "counts": orjson.dumps(served).decode()}
        self._copy("meta", "key, value", meta.items())
        return counts

    def commit(self) -> None:
        """End the build transaction, then point readers at the new schema."""
        c = self._conn
        c.execute("COMMIT")
        for table in ("nodes", "edges", "docs", "membership", "links", "rows"):
            c.execute(
                pgsql.SQL("ANALYZE {}.{}").format(
                    pgsql.Identifier(self.schema), pgsql.Identifier(table)
                )
            )
        with c.transaction():
            row = c.execute("SELECT schema_name FROM edukg.current WHERE id = 1").fetchone()
            previous = row[0] if row else None
            c.execute(
                "INSERT INTO edukg.current (id, schema_name, previous) VALUES (1, %s, %s)"
                " ON CONFLICT (id) DO UPDATE SET schema_name = EXCLUDED.schema_name,"
                " previous = EXCLUDED.previous, switched_at = now()",
                (self.schema, previous),
            )
        self._drop_old(keep={self.schema, previous})
        self._release()

    def _drop_old(self, keep: set[str | None]) -> None:
        names = [
            r[0]
            for r in self._conn.execute(
                "SELECT nspname FROM pg_namespace WHERE nspname LIKE 'edukg\\_data\\_%'"
            ).fetchall()
        ]
        for name in names:
            if name not in keep and _SCHEMA_NAME.match(name):
                self._conn.execute(
                    pgsql.SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(pgsql.Identifier(name))
                )

    def abort(self) -> None:
        """Roll the build back: nothing of it remains, and the served version is untouched."""
        with contextlib.suppress(psycopg.Error):
            self._conn.execute("ROLLBACK")
        self._release()

    def _release(self) -> None:
        with contextlib.suppress(psycopg.Error):
            self._conn.execute("SELECT pg_advisory_unlock(%s)", (_LOAD_LOCK,))
        with contextlib.suppress(psycopg.Error):
            self._conn.close()


class PostgresIndexer:
    """Writes the `vectors` table of the version `edukg.current` points at."""

    def __init__(self, conn: psycopg.Connection[Any], schema: str, content_id: str) -> None:
        self._conn = conn
        self._schema = pgsql.Identifier(schema)
        self.content_id = content_id

    @classmethod
    def open(cls, url: str) -> PostgresIndexer | None:
        """The indexer for what is served now, or None when nothing is loaded."""
        conn = psycopg.connect(url, autocommit=True)
        ensure_meta(conn)
        row = conn.execute("SELECT schema_name FROM edukg.current WHERE id = 1").fetchone()
        if row is None:
            conn.close()
            return None
        info = _read_info(conn, row[0])
        return cls(conn, row[0], info.content_id)

    def _sql(self, text: str) -> pgsql.Composed:
        return pgsql.SQL(text).format(s=self._schema)

    def total(self) -> int:
        """Rows of the complete index."""
        row = self._conn.execute(self._sql("SELECT count(*) FROM {s}.semantic")).fetchone()
        return int(row[0]) if row else 0

    def done(self) -> int:
        """Rows written (each batch is one transaction, so they are 0..n-1)."""
        row = self._conn.execute(self._sql("SELECT coalesce(max(row) + 1, 0) FROM {s}.vectors"))
        found = row.fetchone()
        return int(found[0]) if found else 0

    def texts(self, start: int) -> Iterator[tuple[int, str]]:
        """(row, text) in row order from `start`."""
        yield from self._conn.execute(
            self._sql(
                "SELECT s.row, d.text FROM {s}.semantic s JOIN {s}.docs d"
                " ON d.identifier = s.identifier WHERE s.row >= %s ORDER BY s.row"
            ),
            (start,),
        ).fetchall()

    def cached(self, keys: list[bytes]) -> dict[bytes, bytes]:
        """Cached vectors by key."""
        rows = self._conn.execute(
            "SELECT key, vec FROM edukg.embeddings WHERE key = ANY(%s)", (keys,)
        ).fetchall()
        return {bytes(k): bytes(v) for k, v in rows}

    def write(self, start: int, vectors: bytes, fresh: list[tuple[bytes, bytes]]) -> None:
        """New cache entries and the batch's rows, in one transaction."""
        with self._conn.transaction(), self._conn.cursor() as cursor:
            if fresh:
                cursor.executemany(
                    "INSERT INTO edukg.embeddings VALUES (%s, %s) ON CONFLICT DO NOTHING", fresh
                )
            with cursor.copy(self._sql("COPY {s}.vectors (row, vec) FROM STDIN")) as copy:
                for n in range(len(vectors) // ROW_BYTES):
                    copy.write_row((start + n, vectors[n * ROW_BYTES : (n + 1) * ROW_BYTES]))

    def finish(self) -> None:
        """Mark the index complete; readers use it from their next look."""
        self._conn.execute(
            self._sql("INSERT INTO {s}.meta VALUES ('vectors', 'complete') ON CONFLICT DO NOTHING")
        )

    def close(self) -> None:
        """Close the connection."""
        self._conn.close()
