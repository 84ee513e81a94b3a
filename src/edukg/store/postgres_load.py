"""Loading a version into PostgreSQL: a new schema built in one transaction with COPY,
then one switch of the pointer; and the semantic index written beside it."""

from __future__ import annotations

import contextlib
import re
import secrets
from collections.abc import Iterable, Iterator
from datetime import UTC, datetime
from typing import Any

import orjson
import psycopg
from psycopg import sql as pgsql

from edukg.model.embedding import ROW_BYTES
from edukg.model.vocabulary import CURRICULUM_KINDS
from edukg.store import shared
from edukg.store.base import (
    CHILDREN,
    Derivations,
    OutRow,
)
from edukg.store.pg_common import LOAD_LOCK, ensure_meta, read_info, statements

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

_SCHEMA_NAME = re.compile(r"^edukg_data_[0-9a-z_]+$")


class LoadInProgress(Exception):
    """Another load holds the database's load lock."""


class PostgresLoader:
    """Builds a new version schema with COPY, in one transaction, then switches."""

    def __init__(self, url: str) -> None:
        self._conn = psycopg.connect(url, autocommit=True)
        ensure_meta(self._conn)
        locked = self._conn.execute("SELECT pg_try_advisory_lock(%s)", (LOAD_LOCK,)).fetchone()
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
        for statement in statements(_DATA_SCHEMA):
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
        for statement in (shared.EDGE_INDEX, *statements(shared.INDEXES)):
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
        membership = shared.MEMBERSHIP.format(items="docs", m="%s") + " ON CONFLICT DO NOTHING"
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
        for statement in statements(shared.SEMANTIC.format(items="docs")):
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
            self._conn.execute("SELECT pg_advisory_unlock(%s)", (LOAD_LOCK,))
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
        info = read_info(conn, row[0])
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
