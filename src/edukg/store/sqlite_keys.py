"""API keys in their own SQLite file beside the data file."""

from __future__ import annotations

import logging
import os
import sqlite3
import threading
from pathlib import Path
from typing import Any

from edukg.store.base import StoreUnavailable
from edukg.store.keys import KeyStoreBase, keys_path_for

log = logging.getLogger("edukg.keys")

_KEY_SCHEMA = """
CREATE TABLE IF NOT EXISTS secret (
  id    INTEGER PRIMARY KEY CHECK (id = 1),
  value BLOB NOT NULL
);
CREATE TABLE IF NOT EXISTS api_keys (
  name       TEXT NOT NULL,
  digest     BLOB NOT NULL UNIQUE,
  last4      TEXT NOT NULL,
  created_at TEXT NOT NULL,
  revoked_at TEXT,
  rate       REAL,
  burst      INTEGER,
  metrics    INTEGER NOT NULL DEFAULT 0
);
CREATE UNIQUE INDEX IF NOT EXISTS api_keys_live_name ON api_keys (name) WHERE revoked_at IS NULL;
"""


class SqliteKeyStore(KeyStoreBase):
    """API keys in their own SQLite file beside the data file (WAL: readers see revokes at once).

    Verdicts are remembered until the key file changes: SQLite's data_version moves
    with every commit of another connection (a revoke by `edukg keys`), this
    connection's own writes clear them too, and a file replaced or deleted under a
    running server (its device and inode) clears them and reopens. A server looks at
    the file at most every `recheck` seconds (store.LOCAL_RECHECK), not on every
    request: a look is a system call and a statement. With no key file at
    all every key is refused (StoreUnavailable), and no file is made.
    """

    def __init__(self, path: Path, create: bool = True, recheck: float = 0.0) -> None:
        """`recheck`: seconds a look at the key file holds (0: every verify looks)."""
        super().__init__(recheck)
        self._path = path
        self._where = str(path)  # os.stat of a str skips the Path protocol on every request
        self._create = create
        self._conn: sqlite3.Connection | None = None
        self._identity: tuple[int, int] | None = None
        self._lock = threading.Lock()

    def _revision(self) -> object:
        """The key file's identity and SQLite's data_version (another connection's commit,
        as `edukg keys revoke`, moves it)."""
        conn = self._connection()
        (version,) = conn.execute("PRAGMA data_version").fetchone()
        return self._identity, version

    @classmethod
    def for_db(cls, db: str, create: bool = True, recheck: float = 0.0) -> SqliteKeyStore:
        """The key store beside the data file `db` (made on first use if `create`)."""
        return cls(keys_path_for(db), create, recheck)

    def exists(self) -> bool:
        """Whether the key file is there."""
        return self._path.is_file()

    def _connection(self) -> sqlite3.Connection:
        try:
            st = os.stat(self._where)
            identity: tuple[int, int] | None = (st.st_dev, st.st_ino)
        except FileNotFoundError:
            identity = None
        if self._conn is not None and identity == self._identity:
            return self._conn
        with self._lock:
            if self._conn is not None and identity == self._identity:
                return self._conn  # another thread reopened it meanwhile
            return self._reopen(identity)

    def _reopen(self, identity: tuple[int, int] | None) -> sqlite3.Connection:
        """A new connection for a key file gone or replaced (lock held); the old one is let
        go, not closed, as another thread may still be reading it."""
        self._conn = None
        self._verdicts.forget()
        self._secret = b""
        if identity is None and not self._create:
            raise StoreUnavailable(f"no key file at {self._path}: every key is refused")
        self._path.parent.mkdir(parents=True, exist_ok=True)
        _owner_only(self._path)
        conn = sqlite3.connect(
            self._path, isolation_level=None, check_same_thread=False, timeout=10
        )
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("PRAGMA busy_timeout=10000")
        conn.executescript(_KEY_SCHEMA)
        columns = {row[1] for row in conn.execute("PRAGMA table_info(api_keys)")}
        if "metrics" not in columns:  # a key file made before the metrics role
            conn.execute("ALTER TABLE api_keys ADD COLUMN metrics INTEGER NOT NULL DEFAULT 0")
        st = os.stat(self._path)
        self._conn, self._identity = conn, (st.st_dev, st.st_ino)
        return conn

    def _one(self, sql: str, params: tuple[Any, ...]) -> tuple[Any, ...] | None:
        row: tuple[Any, ...] | None = self._connection().execute(sql, params).fetchone()
        return row

    def _all(self, sql: str, params: tuple[Any, ...]) -> list[tuple[Any, ...]]:
        return self._connection().execute(sql, params).fetchall()

    def _run(self, sql: str, params: tuple[Any, ...]) -> int:
        self._verdicts.forget()  # this connection's own writes do not move data_version
        return self._connection().execute(sql, params).rowcount

    def close(self) -> None:
        """Close the connection."""
        if self._conn is not None:
            self._conn.close()
            self._conn = None


def _owner_only(path: Path) -> None:
    """Make the key file readable by its owner alone (0600), before SQLite opens it: its
    write-ahead log and shared-memory files take the same mode. An existing file is
    tightened where this process may."""
    try:
        os.close(os.open(path, os.O_CREAT | os.O_WRONLY, 0o600))
        os.chmod(path, 0o600)
    except PermissionError:
        log.warning("cannot make %s readable by its owner alone (0600)", path)
