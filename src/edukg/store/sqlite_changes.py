"""The changes between releases of a SQLite location: `<db>.changes`, a SQLite file of its
own (WAL: one process writes a pair while servers read others)."""

from __future__ import annotations

import sqlite3
import threading
import time
from pathlib import Path

import orjson

from edukg.store.changes_base import STALE_CLAIM, ChangeFilter, ChangeRow, unkept
from edukg.store.shared import changes_sql

_SCHEMA = """
CREATE TABLE IF NOT EXISTS pairs (pair TEXT PRIMARY KEY, state TEXT NOT NULL,
  heartbeat REAL NOT NULL, counts TEXT) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS changes (pair TEXT NOT NULL, key TEXT NOT NULL, type TEXT NOT NULL,
  label TEXT NOT NULL, change TEXT NOT NULL, identifier TEXT NOT NULL, doc BLOB NOT NULL,
  vals BLOB NOT NULL, PRIMARY KEY (pair, key)) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS changes_of_record ON changes (pair, identifier);
"""


def changes_path(db: str | Path) -> Path:
    """The change file that belongs to the database file `db`."""
    db = Path(db).absolute()
    return db.with_name(f"{db.name}.changes")


class SqliteChanges:
    """Reads and writes `<db>.changes`; made on first write, absent means none computed."""

    def __init__(self, db: str) -> None:
        self._path = changes_path(db)
        self._conn: sqlite3.Connection | None = None
        self._lock = threading.Lock()

    def _connection(self, create: bool) -> sqlite3.Connection | None:
        if self._conn is None:
            with self._lock:
                if self._conn is None:
                    if not create and not self._path.is_file():
                        return None
                    conn = sqlite3.connect(self._path, isolation_level=None, timeout=30,
                                           check_same_thread=False)  # fmt: skip
                    conn.execute("PRAGMA journal_mode=WAL")
                    conn.executescript(_SCHEMA)
                    self._conn = conn
        return self._conn

    def state(self, pair: str) -> str | None:
        """ "complete", "computing" (with a recent heartbeat), or None."""
        conn = self._connection(create=False)
        if conn is None:
            return None
        row = conn.execute("SELECT state, heartbeat FROM pairs WHERE pair = ?", (pair,)).fetchone()
        if row is None or (row[0] != "complete" and time.time() - row[1] > STALE_CLAIM):
            return None
        return str(row[0])

    def claim(self, pair: str) -> bool:
        """Take the pair, unless it is complete or claimed with a recent heartbeat."""
        conn = self._connection(create=True)
        assert conn is not None
        with self._lock:
            conn.execute("BEGIN IMMEDIATE")
            try:
                if self.state(pair) is not None:
                    conn.execute("ROLLBACK")
                    return False
                conn.execute("DELETE FROM changes WHERE pair = ?", (pair,))
                conn.execute("INSERT OR REPLACE INTO pairs VALUES (?, 'computing', ?, NULL)",
                             (pair, time.time()))  # fmt: skip
                conn.execute("COMMIT")
            except BaseException:
                conn.execute("ROLLBACK")
                raise
        return True

    def add(self, pair: str, rows: list[ChangeRow]) -> None:
        """One batch, and the heartbeat, in one transaction."""
        conn = self._connection(create=True)
        assert conn is not None
        with self._lock:
            conn.execute("BEGIN")
            conn.executemany("INSERT OR REPLACE INTO changes VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                             [(pair, *row) for row in rows])  # fmt: skip
            conn.execute("UPDATE pairs SET heartbeat = ? WHERE pair = ?", (time.time(), pair))
            conn.execute("COMMIT")

    def finish(self, pair: str, counts: dict[str, dict[str, int]]) -> None:
        """Mark the pair complete."""
        conn = self._connection(create=True)
        assert conn is not None
        conn.execute("UPDATE pairs SET state = 'complete', heartbeat = ?, counts = ? WHERE pair = ?",
                     (time.time(), orjson.dumps(counts).decode(), pair))  # fmt: skip

    def abandon(self, pair: str) -> None:
        """Remove the pair's rows and its claim."""
        conn = self._connection(create=True)
        assert conn is not None
        with self._lock:
            conn.execute("BEGIN")
            conn.execute("DELETE FROM changes WHERE pair = ?", (pair,))
            conn.execute("DELETE FROM pairs WHERE pair = ?", (pair,))
            conn.execute("COMMIT")

    def page(
        self, pair: str, where: ChangeFilter, after: str, limit: int
    ) -> list[tuple[str, bytes, bytes]]:
        """Rows in key order after `after`, filtered."""
        conn = self._connection(create=False)
        if conn is None:
            return []
        sql, params = changes_sql(pair, where, after, limit, "changes", "?")
        rows = conn.execute(sql, params).fetchall()
        return [(key, bytes(doc), bytes(vals)) for key, doc, vals in rows]

    def counts(self, pair: str) -> dict[str, dict[str, int]] | None:
        """The complete pair's counts."""
        conn = self._connection(create=False)
        if conn is None:
            return None
        row = conn.execute(
            "SELECT counts FROM pairs WHERE pair = ? AND state = 'complete'", (pair,)
        ).fetchone()
        return orjson.loads(row[0]) if row else None

    def forget(self, kept: set[str]) -> None:
        """Remove pairs that name a content id not in `kept`."""
        conn = self._connection(create=False)
        if conn is None:
            return
        gone = unkept([pair for (pair,) in conn.execute("SELECT pair FROM pairs")], kept)
        with self._lock:
            for pair in gone:
                conn.execute("DELETE FROM changes WHERE pair = ?", (pair,))
                conn.execute("DELETE FROM pairs WHERE pair = ?", (pair,))

    def close(self) -> None:
        """Close the connection."""
        if self._conn is not None:
            self._conn.close()
            self._conn = None
