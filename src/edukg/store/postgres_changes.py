"""The changes between releases of a PostgreSQL database: `edukg.change_pairs` and
`edukg.changes`, in the fixed schema beside the keys (apart from every release)."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator
from typing import Any

import orjson
import psycopg

from edukg.store.changes_base import STALE_CLAIM, ChangeFilter, ChangeRow, unkept
from edukg.store.pg_common import LazyPool, ensure_meta
from edukg.store.shared import changes_sql


class PostgresChanges:
    """Reads and writes the change tables (made with the fixed schema)."""

    def __init__(self, url: str) -> None:
        self._pool = LazyPool(url)
        self._ready = False

    @contextlib.contextmanager
    def _connect(self) -> Iterator[psycopg.Connection[Any]]:
        with self._pool.connection() as conn:
            if not self._ready:
                try:
                    conn.execute("SELECT 1 FROM edukg.change_pairs LIMIT 0")
                except psycopg.errors.UndefinedTable:  # made by an earlier edukg
                    ensure_meta(conn)
                self._ready = True
            yield conn

    def state(self, pair: str) -> str | None:
        """ "complete", "computing" (with a recent heartbeat), or None."""
        with self._connect() as conn:
            return _state(conn, pair)

    def claim(self, pair: str) -> bool:
        """Take the pair, unless it is complete or claimed with a recent heartbeat."""
        with self._connect() as conn, conn.transaction():
            conn.execute("SELECT pg_advisory_xact_lock(hashtext(%s))", (pair,))
            if _state(conn, pair) is not None:
                return False
            conn.execute("DELETE FROM edukg.changes WHERE pair = %s", (pair,))
            conn.execute(
                "INSERT INTO edukg.change_pairs VALUES (%s, 'computing', %s, NULL)"
                " ON CONFLICT (pair) DO UPDATE SET state = 'computing',"
                " heartbeat = EXCLUDED.heartbeat, counts = NULL",
                (pair, time.time()),
            )
        return True

    def add(self, pair: str, rows: list[ChangeRow]) -> None:
        """One batch (COPY), and the heartbeat, in one transaction."""
        with self._connect() as conn, conn.transaction(), conn.cursor() as cursor:
            with cursor.copy(
                "COPY edukg.changes (pair, key, type, label, change, identifier, doc, vals)"
                " FROM STDIN"
            ) as copy:
                for row in rows:
                    copy.write_row((pair, *row))
            cursor.execute(
                "UPDATE edukg.change_pairs SET heartbeat = %s WHERE pair = %s", (time.time(), pair)
            )

    def finish(self, pair: str, counts: dict[str, dict[str, int]]) -> None:
        """Mark the pair complete."""
        with self._connect() as conn:
            conn.execute(
                "UPDATE edukg.change_pairs SET state = 'complete', heartbeat = %s, counts = %s"
                " WHERE pair = %s",
                (time.time(), orjson.dumps(counts).decode(), pair),
            )

    def abandon(self, pair: str) -> None:
        """Remove the pair's rows and its claim."""
        with self._connect() as conn, conn.transaction():
            conn.execute("DELETE FROM edukg.changes WHERE pair = %s", (pair,))
            conn.execute("DELETE FROM edukg.change_pairs WHERE pair = %s", (pair,))

    def page(
        self, pair: str, where: ChangeFilter, after: str, limit: int
    ) -> list[tuple[str, bytes, bytes]]:
        """Rows in key order after `after`, filtered."""
        sql, params = changes_sql(pair, where, after, limit, "edukg.changes", "%s")
        with self._connect() as conn:
            rows = conn.execute(sql, params).fetchall()
        return [(key, bytes(doc), bytes(vals)) for key, doc, vals in rows]

    def counts(self, pair: str) -> dict[str, dict[str, int]] | None:
        """The complete pair's counts."""
        with self._connect() as conn:
            row = conn.execute(
                "SELECT counts FROM edukg.change_pairs WHERE pair = %s AND state = 'complete'",
                (pair,),
            ).fetchone()
        return orjson.loads(row[0]) if row else None

    def forget(self, kept: set[str]) -> None:
        """Remove pairs that name a content id not in `kept`."""
        with self._connect() as conn:
            pairs = [r[0] for r in conn.execute("SELECT pair FROM edukg.change_pairs").fetchall()]
            for pair in unkept(pairs, kept):
                with conn.transaction():
                    conn.execute("DELETE FROM edukg.changes WHERE pair = %s", (pair,))
                    conn.execute("DELETE FROM edukg.change_pairs WHERE pair = %s", (pair,))

    def close(self) -> None:
        """Close the pool."""
        self._pool.close()


def _state(conn: psycopg.Connection[Any], pair: str) -> str | None:
    row = conn.execute(
        "SELECT state, heartbeat FROM edukg.change_pairs WHERE pair = %s", (pair,)
    ).fetchone()
    if row is None or (row[0] != "complete" and time.time() - row[1] > STALE_CLAIM):
        return None
    return str(row[0])
