"""Loading a version into PostgreSQL: a new schema built in one transaction with COPY,
then one switch of the pointer; and the semantic index written beside it."""

from __future__ import annotations

import contextlib
import mmap
import os
import re
import secrets
import shutil
import tempfile
from collections.abc import Iterable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import psycopg
from psycopg import sql as pgsql

from edukg.model.embedding import ROW_BYTES
from edukg.model.processes import claim, remove_unheld
from edukg.store import shared
from edukg.store.base import (
    Derivations,
)
from edukg.store.pg_common import LOAD_LOCK, ensure_meta, read_info, statements
from edukg.store.sqlite_load import SqliteLoader

# The served tables, without keys: COPY fills them, then the keys and indexes are built
# in one pass each (cheaper than growing them row by row).
_DATA_SCHEMA = """
CREATE TABLE meta (key text NOT NULL, value text NOT NULL);
CREATE TABLE nodes (identifier text COLLATE "C" NOT NULL, label text NOT NULL, kind text,
  line bytea NOT NULL);
CREATE TABLE edges (identifier text COLLATE "C" NOT NULL, label text NOT NULL,
  source text COLLATE "C" NOT NULL, target text COLLATE "C" NOT NULL, line bytea NOT NULL);
CREATE TABLE docs (identifier text COLLATE "C" NOT NULL, kind text NOT NULL, case_uuid text,
  jurisdiction text, subject text, stmt_type text, grades integer NOT NULL DEFAULT 0,
  adoption text, is_current integer NOT NULL DEFAULT 1, doc bytea NOT NULL,
  code text COLLATE "C", text text COLLATE "C", alt_code text COLLATE "C");
CREATE TABLE membership (framework text COLLATE "C" NOT NULL, identifier text COLLATE "C" NOT NULL,
  grades integer NOT NULL, subject text, stmt_type text);
CREATE TABLE links (relation text NOT NULL, node text COLLATE "C" NOT NULL,
  other text COLLATE "C" NOT NULL);
CREATE TABLE rows (relation text NOT NULL, node text COLLATE "C" NOT NULL,
  sort_key text COLLATE "C" NOT NULL, label text, score double precision, doc bytea NOT NULL);
CREATE TABLE semantic (row bigint NOT NULL, identifier text COLLATE "C" NOT NULL, kind text,
  jurisdiction text, subject text, stmt_type text, grades integer)
"""
_KEYS = """
ALTER TABLE meta ADD PRIMARY KEY (key);
ALTER TABLE nodes ADD PRIMARY KEY (identifier);
ALTER TABLE edges ADD PRIMARY KEY (identifier);
ALTER TABLE docs ADD PRIMARY KEY (identifier);
ALTER TABLE membership ADD PRIMARY KEY (framework, identifier);
ALTER TABLE links ADD PRIMARY KEY (relation, node, other);
ALTER TABLE rows ADD PRIMARY KEY (relation, node, sort_key);
CREATE INDEX semantic_scope ON semantic (kind, jurisdiction, subject, row);
CREATE UNIQUE INDEX semantic_row ON semantic (row)
"""
# Each served table as the SQLite build holds it, in the order of its key.
_PUBLISHED = (
    ("docs", "identifier, kind, case_uuid, jurisdiction, subject, stmt_type, grades, adoption,"
             " is_current, doc, code, text, alt_code", "identifier"),
    ("membership", "framework, identifier, grades, subject, stmt_type", "framework, identifier"),
    ("links", "relation, node, other", "relation, node, other"),
    ("rows", "relation, node, sort_key, label, score, doc", "relation, node, sort_key"),
    ("semantic", "row, identifier, kind, jurisdiction, subject, stmt_type, grades", "row"),
)  # fmt: skip
# Each published table's column types, for binary COPY (records travel as raw bytes).
_TYPES = {
    "docs": ["text"] * 6 + ["int4", "text", "int4", "bytea", "text", "text", "text"],
    "membership": ["text", "text", "int4", "text", "text"],
    "links": ["text", "text", "text"],
    "rows": ["text", "text", "text", "text", "float8", "bytea"],
    "semantic": ["int8", "text", "text", "text", "text", "text", "int4"],
    "nodes": ["text", "text", "text", "bytea"],
    "edges": ["text", "text", "text", "text", "bytea"],
    "meta": ["text", "text"],
}

_SCHEMA_NAME = re.compile(r"^edukg_data_[0-9a-z_]+$")


_BUILD_PREFIX = "edukg-pg-build-"  # then the loading process's id


def remove_stale_builds() -> None:
    """Remove the SQLite build folders of loads that are gone (no live process holds
    them: model.processes), from the temporary folder."""
    for path in Path(tempfile.gettempdir()).glob(f"{_BUILD_PREFIX}*"):
        if path.is_dir():
            remove_unheld(path)


class LoadInProgress(Exception):
    """Another load holds the database's load lock."""


class PostgresLoader:
    """Builds a version as every backend does, into a private SQLite file (one derivation
    pipeline), then publishes it to a new schema with COPY, in one transaction, and
    switches the pointer.

    The SQLite build lives in a temporary directory ($TMPDIR) and is removed at the end;
    at full scale it takes about 1.7 GB while the load runs.
    """

    def __init__(self, url: str) -> None:
        self._conn = psycopg.connect(url, autocommit=True)
        ensure_meta(self._conn)
        locked = self._conn.execute("SELECT pg_try_advisory_lock(%s)", (LOAD_LOCK,)).fetchone()
        if not locked or not locked[0]:
            self._conn.close()
            raise LoadInProgress("another load into this database is running; try again later")
        stamp = datetime.now(UTC).strftime("%Y%m%d%H%M%S")
        self.schema = f"edukg_data_{stamp}_{secrets.token_hex(3)}"
        remove_stale_builds()
        # Held for the load's life, as SqliteLoader holds its build (remove_stale_builds).
        self._held = claim(lambda: Path(tempfile.mkdtemp(prefix=f"{_BUILD_PREFIX}{os.getpid()}-")))
        self._tmp = self._held.path
        self._build = SqliteLoader(str(self._tmp / "build.db"), full_text=False)

    def add(
        self,
        nodes: list[tuple[str, str, str | None, bytes]],
        docs: list[tuple[Any, ...]],
        edges: list[tuple[str, str, str, str, bytes]],
        figures: list[tuple[str, float, int | None, int | None, int | None]],
    ) -> None:
        """Take one batch into the SQLite build; a later identifier replaces an earlier one."""
        self._build.add(nodes, docs, edges, figures)

    def finish(self, meta: dict[str, str], rules: Derivations) -> dict[str, Any]:
        """Derive in the SQLite build, then publish it inside the schema's transaction."""
        counts = self._build.finish(meta, rules)
        self._version = meta["data_version"]
        c, build = self._conn, self._build.connection()
        # One transaction for the whole schema: a failed or killed load leaves nothing.
        c.execute("BEGIN")
        c.execute(pgsql.SQL("CREATE SCHEMA {}").format(pgsql.Identifier(self.schema)))
        c.execute(pgsql.SQL("SET LOCAL search_path TO {}").format(pgsql.Identifier(self.schema)))
        for statement in statements(_DATA_SCHEMA):
            c.execute(statement)
        for table, columns, order in _PUBLISHED:
            rows = build.execute(f"SELECT {columns} FROM {table} ORDER BY {order}")
            self._copy(table, rows, columns)
        with (
            open(self._build.lines_file(), "rb") as f,
            mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as lines,
        ):
            for table in ("nodes", "edges"):
                self._copy(table, _with_lines(build, table, lines))
        self._copy("meta", build.execute("SELECT key, value FROM meta WHERE key <> 'lines'"))
        # Sorts in memory for the keys and indexes; statistics so that the full-text
        # table below is computed by parallel workers.
        c.execute("SET LOCAL maintenance_work_mem = '256MB'")
        for statement in (*statements(_KEYS), *statements(shared.INDEXES)):
            c.execute(statement)
        c.execute("ANALYZE docs")
        c.execute(
            "CREATE TABLE search AS SELECT identifier, to_tsvector('english',"
            " coalesce(code, '') || ' ' || coalesce(text, '')) AS tsv FROM docs"
            " WHERE kind = ANY(%s)",
            (list(shared.SEARCHABLE_KINDS),),
        )
        c.execute("CREATE INDEX search_tsv ON search USING gin (tsv)")
        c.execute("ALTER TABLE search ADD PRIMARY KEY (identifier)")
        # Filled by `edukg index` after the switch (see ingest.index).
        c.execute("CREATE TABLE vectors (row bigint PRIMARY KEY, vec bytea NOT NULL)")
        return counts

    def _copy(self, table: str, rows: Iterable[tuple[Any, ...]], columns: str = "") -> None:
        target = f"{table} ({columns})" if columns else table
        with self._conn.cursor().copy(f"COPY {target} FROM STDIN (FORMAT BINARY)") as copy:
            copy.set_types(_TYPES[table])
            for row in rows:
                copy.write_row(row)

    def commit(self) -> None:
        """End the build transaction, then point readers at the new schema."""
        c = self._conn
        c.execute("COMMIT")
        self._discard_build()
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
                "INSERT INTO edukg.releases (data_version, schema_name) VALUES (%s, %s)"
                " ON CONFLICT (data_version) DO UPDATE SET schema_name = EXCLUDED.schema_name,"
                " loaded_at = now()",
                (self._version, self.schema),
            )
            c.execute(
                "INSERT INTO edukg.current (id, schema_name, previous) VALUES (1, %s, %s)"
                " ON CONFLICT (id) DO UPDATE SET schema_name = EXCLUDED.schema_name,"
                " previous = EXCLUDED.previous, switched_at = now()",
                (self.schema, previous),
            )
        # Every kept release stays, and the previous current (a reader may not have
        # looked at the pointer since); a replaced release's old schema goes.
        kept = {r[0] for r in c.execute("SELECT schema_name FROM edukg.releases").fetchall()}
        drop_unkept(c, kept | {self.schema, previous})
        self._release()

    def abort(self) -> None:
        """Roll the build back: nothing of it remains, and the served version is untouched."""
        with contextlib.suppress(psycopg.Error):
            self._conn.execute("ROLLBACK")
        self._discard_build()
        self._release()

    def _discard_build(self) -> None:
        self._build.abort()
        shutil.rmtree(self._tmp, ignore_errors=True)
        self._held.release()

    def _release(self) -> None:
        with contextlib.suppress(psycopg.Error):
            self._conn.execute("SELECT pg_advisory_unlock(%s)", (LOAD_LOCK,))
        with contextlib.suppress(psycopg.Error):
            self._conn.close()


def drop_unkept(conn: psycopg.Connection[Any], keep: set[str | None]) -> None:
    """Drop the data schemas not named in `keep`."""
    names = [
        r[0]
        for r in conn.execute(
            "SELECT nspname FROM pg_namespace WHERE nspname LIKE 'edukg\\_data\\_%'"
        ).fetchall()
    ]
    for name in names:
        if name not in keep and _SCHEMA_NAME.match(name):
            conn.execute(
                pgsql.SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(pgsql.Identifier(name))
            )


def _with_lines(build: Any, table: str, lines: mmap.mmap) -> Iterator[tuple[Any, ...]]:
    """A table of records with each record's line, read in the order they were kept."""
    columns = "identifier, label, kind" if table == "nodes" else "identifier, label, source, target"
    for *values, pos, length in build.execute(
        f"SELECT {columns}, pos, len FROM {table} ORDER BY pos"
    ):
        yield (*values, lines[pos : pos + length])


_INDEX_LOCK = 0x65646B69  # "edki", with a hash of the schema's name: one writer a version


class PostgresIndexer:
    """Writes the `vectors` table of the version `edukg.current` points at."""

    def __init__(self, conn: psycopg.Connection[Any], schema: str, content_id: str) -> None:
        self._conn = conn
        self._name = schema
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

    def hold(self) -> bool:
        """Become the one writer of this version's vectors, unless another process is: a
        lock of the session, which ends with this indexer's connection."""
        row = self._conn.execute(
            "SELECT pg_try_advisory_lock(%s::int4, hashtext(%s))", (_INDEX_LOCK, self._name)
        ).fetchone()
        return bool(row and row[0])

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
