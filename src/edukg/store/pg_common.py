"""What every PostgreSQL part shares: the fixed `edukg` schema (version pointer, keys,
embedding cache), connection pools with short waits, and a version's metadata."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterator
from typing import Any

import orjson
import psycopg
from psycopg import sql as pgsql
from psycopg_pool import ConnectionPool, PoolTimeout

from edukg.store.base import (
    DataInfo,
    StoreUnavailable,
)
from edukg.store.pg_wire import WireReader

_META_SCHEMA = """
CREATE SCHEMA IF NOT EXISTS edukg;
CREATE TABLE IF NOT EXISTS edukg.current (
  id          integer PRIMARY KEY CHECK (id = 1),
  schema_name text NOT NULL,
  previous    text,
  switched_at timestamptz NOT NULL DEFAULT now()
);
CREATE TABLE IF NOT EXISTS edukg.releases (
  data_version text PRIMARY KEY,
  schema_name  text NOT NULL,
  loaded_at    timestamptz NOT NULL DEFAULT now()
);
CREATE TABLE IF NOT EXISTS edukg.change_pairs (
  pair text PRIMARY KEY, state text NOT NULL, heartbeat double precision NOT NULL, counts text
);
CREATE TABLE IF NOT EXISTS edukg.changes (
  pair text NOT NULL, key text COLLATE "C" NOT NULL, type text NOT NULL, label text NOT NULL,
  change text NOT NULL, identifier text NOT NULL, doc bytea NOT NULL, vals bytea NOT NULL,
  PRIMARY KEY (pair, key)
);
CREATE INDEX IF NOT EXISTS changes_of_record ON edukg.changes (pair, identifier);
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
-- Added after the first release: a key store made before it gains the column here.
ALTER TABLE edukg.api_keys ADD COLUMN IF NOT EXISTS metrics boolean NOT NULL DEFAULT false;
CREATE UNIQUE INDEX IF NOT EXISTS api_keys_live_name ON edukg.api_keys (name)
  WHERE revoked_at IS NULL;
CREATE TABLE IF NOT EXISTS edukg.key_revision (
  id       integer PRIMARY KEY CHECK (id = 1),
  revision bigint NOT NULL
);
INSERT INTO edukg.key_revision VALUES (1, 0) ON CONFLICT DO NOTHING;
"""

# Identifiers compare in byte order (COLLATE "C"), as on SQLite, so pages match exactly.
LOAD_LOCK = 0x6564756B67  # "edukg": one load at a time per database


# Seconds to wait for a connection: during an outage, requests fail fast with 503
# rather than queueing; the pool keeps reconnecting in the background.
WAIT = 2
IDLE = 5.0  # seconds a spare pooled connection is kept


def pool(url: str) -> ConnectionPool:
    return ConnectionPool(
        url,
        # The version pointer, key writes and rare fallbacks: reads use pg_wire, so these
        # connections are made on demand and closed after a few idle seconds.
        min_size=0,
        max_size=4,
        max_idle=IDLE,
        kwargs={"autocommit": True, "connect_timeout": WAIT},
        timeout=WAIT,
        open=True,
    )


class LazyPool:
    """A connection pool made on first use (the one way every PostgreSQL part holds
    psycopg connections), whose connection failures are StoreUnavailable (callers catch
    no driver's errors). `setup` runs once, on a connection of its own, before the pool
    is made (the key store makes the fixed `edukg` schema so)."""

    def __init__(
        self, url: str, setup: Callable[[psycopg.Connection[Any]], None] | None = None
    ) -> None:
        self._url = url
        self._setup = setup
        self._pool: ConnectionPool | None = None
        self._lock = threading.Lock()

    def ready(self) -> ConnectionPool:
        """The pool, made (and `setup` run) on the first call."""
        if self._pool is None:
            with self._lock:
                if self._pool is None:
                    try:
                        if self._setup is not None:
                            with psycopg.connect(
                                self._url, autocommit=True, connect_timeout=WAIT
                            ) as conn:
                                self._setup(conn)
                    except psycopg.OperationalError as exc:
                        raise StoreUnavailable(str(exc)) from None
                    self._pool = pool(self._url)
        return self._pool

    @contextlib.contextmanager
    def connection(self) -> Iterator[psycopg.Connection[Any]]:
        """A pooled connection for the `with` block."""
        ready = self.ready()
        try:
            with ready.connection() as conn:
                yield conn
        except (psycopg.OperationalError, PoolTimeout) as exc:
            raise StoreUnavailable(str(exc)) from None

    def close(self) -> None:
        """Close the pool (a later use makes a new one)."""
        if self._pool is not None:
            self._pool.close()
            self._pool = None


def statements(script: str) -> list[str]:
    return [s.strip() for s in script.split(";") if s.strip()]


def ensure_meta(conn: psycopg.Connection[Any]) -> None:
    """Create the fixed `edukg` schema (pointers, keys) if it is not there yet, and give
    the current version a release entry if it has none (a database made before releases
    existed)."""
    with conn.transaction():
        conn.execute("SELECT pg_advisory_xact_lock(%s)", (LOAD_LOCK + 1,))
        for statement in statements(_META_SCHEMA):
            conn.execute(statement)
        row = conn.execute(
            "SELECT c.schema_name FROM edukg.current c WHERE c.id = 1 AND NOT EXISTS"
            " (SELECT 1 FROM edukg.releases r WHERE r.schema_name = c.schema_name)"
        ).fetchone()
        if row is not None:
            info = read_info(conn, row[0])
            conn.execute(
                "INSERT INTO edukg.releases (data_version, schema_name, loaded_at)"
                " VALUES (%s, %s, %s) ON CONFLICT (data_version) DO UPDATE"
                " SET schema_name = EXCLUDED.schema_name",
                (info.data_version, row[0], info.loaded_at),
            )


class Connections:
    """What a PostgreSQL reader holds: a psycopg pool made on first use and a share of
    the process's lean per-thread connections (pg_wire); `close` lets go of both."""

    _pool: LazyPool
    _wire: WireReader
    _released: bool

    def close(self) -> None:
        """Close the pool and let go of the lean connections (once)."""
        if not self._released:
            self._released = True
            self._wire.release()
        self._pool.close()


def read_info(conn: Any, schema: str) -> DataInfo:
    """A version's metadata, through a psycopg connection."""
    rows = conn.execute(
        pgsql.SQL("SELECT key, value FROM {}.meta").format(pgsql.Identifier(schema))
    ).fetchall()
    return info_of(rows)


def info_of(rows: Any) -> DataInfo:
    """A version's metadata from its `meta` table's (key, value) rows."""
    meta = dict(rows)
    return DataInfo(
        data_version=meta["data_version"],
        content_id=meta["content_id"],
        loaded_at=meta["loaded_at"],
        counts=orjson.loads(meta.get("counts", "{}")),
    )
