"""Several releases in one PostgreSQL database: a schema per release.

`edukg.releases` names each kept release's schema; `edukg.current` names the current
one. A load adds (or replaces) a row and moves the pointer in one transaction; `use`
moves the pointer; `drop` deletes a row and its schema. Readers pinned to a release look
up its row as readers of the current one look up the pointer (postgres.PostgresStore).
"""

from __future__ import annotations

import contextlib
import hashlib
import threading
import time
from typing import Any

import psycopg
from psycopg import sql as pgsql

from edukg.store.base import (
    DATA_VERSION,
    STATEMENT_SECONDS,
    Release,
    ReleaseError,
    StoreUnavailable,
)
from edukg.store.pg_common import LOAD_LOCK, WAIT, LazyPool, ensure_meta, read_info
from edukg.store.pg_wire import QueryError, Unavailable, WireReader
from edukg.store.postgres import PostgresStore
from edukg.store.postgres_changes import PostgresChanges

_MISS_RECHECK = 0.1  # seconds: how often an unknown release sends a look at the table
_SIZE = (
    "SELECT coalesce(sum(pg_total_relation_size(c.oid)), 0) FROM pg_class c"
    " JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = %s AND c.relkind = 'r'"
)


def _ordered(conn: psycopg.Connection[Any]) -> list[tuple[str, str]]:
    """(release, schema), oldest load first."""
    return conn.execute(
        "SELECT data_version, schema_name FROM edukg.releases ORDER BY loaded_at"
    ).fetchall()


class PostgresReleases:
    """The releases kept in one PostgreSQL database, and a store for each."""

    def __init__(
        self, url: str, refresh: float = 1.0, statement_seconds: float = STATEMENT_SECONDS
    ) -> None:
        self._url = url
        self._refresh = refresh
        self._statement_seconds = statement_seconds
        self._stores: dict[str, PostgresStore] = {}
        self._known: tuple[float, dict[str, str], str | None] = (-float("inf"), {}, None)
        self._lock = threading.Lock()
        self._pool = LazyPool(url)
        self._wire = WireReader.shared(url, WAIT, statement_seconds)
        self._released = False

    def _connect(self) -> contextlib.AbstractContextManager[psycopg.Connection[Any]]:
        return self._pool.connection()

    def _rows(self, within: float) -> tuple[dict[str, str], str | None]:
        """Release -> schema, and the current schema, as read at most `within` s ago (or
        last read, while PostgreSQL may be frozen: pinned requests do not wait on it)."""
        checked, rows, current = self._known
        now = time.monotonic()
        if now - checked < within or (checked > -float("inf") and self._wire.quiet):
            return rows, current
        try:
            rows = dict(
                self._wire.query("SELECT data_version, schema_name FROM edukg.releases", ())
            )
            pointer = self._wire.query("SELECT schema_name FROM edukg.current WHERE id = 1", ())
        except QueryError as exc:
            if exc.sqlstate == "42P01":  # nothing loaded (or loaded before releases)
                return {}, None
            raise
        except Unavailable as exc:
            raise StoreUnavailable(str(exc)) from None
        self._known = (time.monotonic(), rows, pointer[0][0] if pointer else None)
        return self._known[1], self._known[2]

    def list(self, sizes: bool = False) -> list[Release]:
        """Every kept release, oldest load first."""
        found = []
        with self._connect() as conn:
            try:
                rows = _ordered(conn)
            except psycopg.errors.UndefinedTable:  # made before releases (a replica has it)
                ensure_meta(conn)
                rows = _ordered(conn)
            current = conn.execute("SELECT schema_name FROM edukg.current WHERE id = 1").fetchone()
            for version, schema in rows:
                info = read_info(conn, schema)
                size = conn.execute(_SIZE, (schema,)).fetchone() if sizes else None
                found.append(
                    Release(
                        data_version=version,
                        content_id=info.content_id,
                        loaded_at=info.loaded_at,
                        counts=info.counts,
                        current=current is not None and current[0] == schema,
                        size_bytes=int(size[0]) if size else 0,
                    )
                )
        return found  # in the order of the table's load times (to the microsecond)

    def store(self, version: str) -> PostgresStore | None:
        """The store of release `version`, or None when it is not kept."""
        if not DATA_VERSION.fullmatch(version):
            return None
        rows = self._rows(self._refresh)[0]
        if version not in rows:  # a release loaded since: look again, but not at every miss
            rows = self._rows(min(self._refresh, _MISS_RECHECK))[0]
        if version not in rows:
            return None
        store = self._stores.get(version)
        if store is not None:
            return store
        with self._lock:
            return self._stores.setdefault(
                version, PostgresStore(self._url, self._refresh, version, self._statement_seconds)
            )

    def stamp(self) -> str:
        """A digest of the releases' schemas and the current one."""
        rows, current = self._rows(self._refresh)
        return hashlib.sha256(repr((sorted(rows.items()), current)).encode()).hexdigest()[:16]

    def _schema_of(self, conn: psycopg.Connection[Any], version: str) -> str:
        row = conn.execute(
            "SELECT schema_name FROM edukg.releases WHERE data_version = %s", (version,)
        ).fetchone()
        if row is None:
            known = conn.execute("SELECT data_version FROM edukg.releases ORDER BY 1").fetchall()
            names = ", ".join(r[0] for r in known) or "none"
            raise ReleaseError(f"no release {version!r} is kept here (kept: {names})")
        return str(row[0])

    def use(self, version: str) -> Release:
        """Make release `version` the current one (one pointer update)."""
        with self._connect() as conn:
            ensure_meta(conn)
            with conn.transaction():
                schema = self._schema_of(conn, version)
                conn.execute(
                    "UPDATE edukg.current SET previous = schema_name, schema_name = %s,"
                    " switched_at = now() WHERE id = 1 AND schema_name <> %s",
                    (schema, schema),
                )
        self._known = (-float("inf"), {}, None)
        return next(r for r in self.list() if r.data_version == version)

    def drop(self, version: str) -> Release:
        """Remove release `version`, its schema and the changes kept for it; never the
        current one, nor while a load runs."""
        release = next((r for r in self.list(sizes=True) if r.data_version == version), None)
        with self._connect() as conn:
            locked = conn.execute("SELECT pg_try_advisory_lock(%s)", (LOAD_LOCK,)).fetchone()
            if not locked or not locked[0]:
                raise ReleaseError("a load into this database is running; try again after it")
            try:
                with conn.transaction():
                    schema = self._schema_of(conn, version)
                    current = conn.execute(
                        "SELECT schema_name FROM edukg.current WHERE id = 1"
                    ).fetchone()
                    if current is not None and current[0] == schema:
                        raise ReleaseError(
                            f"release {version!r} is the current one: make another current"
                            " first (edukg releases use VERSION)"
                        )
                    conn.execute("DELETE FROM edukg.releases WHERE data_version = %s", (version,))
                    conn.execute(
                        pgsql.SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(
                            pgsql.Identifier(schema)
                        )
                    )
            finally:
                conn.execute("SELECT pg_advisory_unlock(%s)", (LOAD_LOCK,))
        store = self._stores.pop(version, None)
        if store is not None:
            store.close()
        self._known = (-float("inf"), {}, None)
        changes = PostgresChanges(self._url)
        try:  # the changes kept for pairs with the dropped release go with it
            changes.forget({r.content_id for r in self.list()})
        finally:
            changes.close()
        assert release is not None  # _schema_of found it
        return release

    def close(self) -> None:
        """Close the releases' stores."""
        for store in self._stores.values():
            store.close()
        self._stores.clear()
        self._pool.close()
        if not self._released:
            self._released = True
            self._wire.release()
