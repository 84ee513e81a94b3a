"""The embedded default: the graph in one SQLite file, keys in a sibling file."""

from __future__ import annotations

import hashlib
import hmac
import os
import re
import secrets
import sqlite3
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from urllib.parse import quote

import orjson

from edukg.config import keys_path_for
from edukg.store.base import (
    DataInfo,
    Found,
    KeyInfo,
    Query,
    Row,
)
from edukg.store.shared import page_sql

_MMAP_BYTES = 1 << 30  # 1 GiB: reads of an immutable file go straight to the page cache


class SqliteStore:
    """Reads one loaded version; notices when `edukg load` switches the file.

    The file is opened read-only and immutable: the loader never writes a file
    that is being served, it builds a new one and renames it into place. A stat
    per request (about a microsecond) tells when that happened; the old
    connection keeps reading the old, unlinked file until it is swapped.
    """

    def __init__(self, path: str) -> None:
        self._path = path
        self._conn: sqlite3.Connection | None = None
        self._stamp: tuple[int, int, int] | None = None
        self._info: DataInfo | None = None

    def _connection(self) -> sqlite3.Connection | None:
        try:
            st = os.stat(self._path)
        except FileNotFoundError:
            self._swap(None, None, None)
            return None
        stamp = (st.st_ino, st.st_mtime_ns, st.st_size)
        if stamp != self._stamp:
            uri = f"file:{quote(os.path.abspath(self._path))}?mode=ro&immutable=1"
            conn = sqlite3.connect(uri, uri=True, check_same_thread=False)
            try:
                conn.execute(f"PRAGMA mmap_size={_MMAP_BYTES}")
                meta = dict(conn.execute("SELECT key, value FROM meta").fetchall())
                info = DataInfo(
                    data_version=meta["data_version"],
                    content_id=meta["content_id"],
                    loaded_at=meta["loaded_at"],
                    counts=orjson.loads(meta.get("counts", "{}")),
                )
            except (sqlite3.DatabaseError, KeyError):
                conn.close()
                self._swap(None, None, None)
                return None
            self._swap(conn, stamp, info)
        return self._conn

    def _swap(
        self,
        conn: sqlite3.Connection | None,
        stamp: tuple[int, int, int] | None,
        info: DataInfo | None,
    ) -> None:
        old = self._conn
        self._conn, self._stamp, self._info = conn, stamp, info
        if old is not None and old is not conn:
            old.close()

    def info(self) -> DataInfo | None:
        """The loaded version, or None when nothing is loaded."""
        self._connection()
        return self._info

    def by_identifier(self, identifier: str, kind: str) -> Found | None:
        """One record by node identifier."""
        conn = self._connection()
        if conn is None:
            return None
        row = conn.execute(
            "SELECT identifier, kind, doc FROM docs WHERE identifier = ? AND kind = ?",
            (identifier, kind),
        ).fetchone()
        return Found(*row) if row else None

    def by_case_uuid(self, case_uuid: str, kinds: tuple[str, ...]) -> Found | None:
        """One record by CASE UUID; the lowest identifier wins if the data repeats one."""
        conn = self._connection()
        if conn is None:
            return None
        marks = ",".join("?" * len(kinds))
        row = conn.execute(
            f"SELECT identifier, kind, doc FROM docs WHERE case_uuid = ? AND kind IN ({marks})"
            " ORDER BY identifier LIMIT 1",
            (case_uuid, *kinds),
        ).fetchone()
        return Found(*row) if row else None

    def page(self, query: Query, after: str | None, limit: int) -> list[Row]:
        """Up to `limit` rows of `query` after the identifier `after`."""
        conn = self._connection()
        if conn is None:
            return []
        sql, params = page_sql(query, after or "", limit)
        return conn.execute(sql, params).fetchall()

    def lookup(self, relation: str, node: str, key: str = "") -> bytes | None:
        """One pre-encoded row."""
        conn = self._connection()
        if conn is None:
            return None
        row = conn.execute(
            "SELECT doc FROM rows WHERE relation = ? AND node = ? AND sort_key = ?",
            (relation, node, key),
        ).fetchone()
        return bytes(row[0]) if row else None

    def export_lines(self, relationships: bool) -> Iterator[bytes]:
        """Stored lines, ordered by identifier."""
        conn = self._connection()
        if conn is None:
            return
        table = "edges" if relationships else "nodes"
        for (line,) in conn.execute(f"SELECT line FROM {table} ORDER BY identifier"):
            yield bytes(line)

    def close(self) -> None:
        """Close the connection."""
        self._swap(None, None, None)


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
  revoked_at TEXT
);
CREATE UNIQUE INDEX IF NOT EXISTS api_keys_live_name ON api_keys (name) WHERE revoked_at IS NULL;
"""

_KEY_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")
KEY_PREFIX = "ekg_"


class KeyNameError(ValueError):
    """A key operation that cannot be done (bad or taken name)."""


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


class SqliteKeyStore:
    """API keys in their own SQLite file, stored as HMAC-SHA256 digests.

    The HMAC secret is made once per key file; a stolen key file alone therefore
    gives neither the keys nor a way to test guesses offline without the secret
    (which sits in the same file: the protection is against leaks of the digests,
    e.g. in logs or backups of the table alone).
    """

    def __init__(self, path: Path) -> None:
        self._path = path
        self._conn: sqlite3.Connection | None = None
        self._secret = b""

    @classmethod
    def for_db(cls, db: str) -> SqliteKeyStore:
        """The key store beside the data file `db`."""
        return cls(keys_path_for(db))

    def _connection(self) -> sqlite3.Connection:
        if self._conn is None:
            self._path.parent.mkdir(parents=True, exist_ok=True)
            conn = sqlite3.connect(
                self._path, isolation_level=None, check_same_thread=False, timeout=10
            )
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA busy_timeout=10000")
            conn.executescript(_KEY_SCHEMA)
            conn.execute(
                "INSERT OR IGNORE INTO secret (id, value) VALUES (1, ?)", (secrets.token_bytes(32),)
            )
            self._secret = conn.execute("SELECT value FROM secret WHERE id = 1").fetchone()[0]
            self._conn = conn
        return self._conn

    def _digest(self, key: str) -> bytes:
        return hmac.new(self._secret, key.encode("utf-8", "replace"), hashlib.sha256).digest()

    def create(self, name: str) -> str:
        """Make a live key named `name` and return it."""
        if not _KEY_NAME.match(name):
            raise KeyNameError(
                "a key name is 1-64 letters, digits, '.', '_' or '-', starting with a letter or digit"
            )
        conn = self._connection()
        key = KEY_PREFIX + secrets.token_urlsafe(32)
        try:
            conn.execute(
                "INSERT INTO api_keys (name, digest, last4, created_at) VALUES (?, ?, ?, ?)",
                (name, self._digest(key), key[-4:], _now()),
            )
        except sqlite3.IntegrityError:
            raise KeyNameError(f"a live key named {name!r} exists; revoke it first") from None
        return key

    def verify(self, key: str) -> str | None:
        """The name of the live key `key`, or None."""
        conn = self._connection()
        digest = self._digest(key)
        row = conn.execute(
            "SELECT name, digest FROM api_keys WHERE digest = ? AND revoked_at IS NULL", (digest,)
        ).fetchone()
        if row is None or not hmac.compare_digest(row[1], digest):
            return None
        return str(row[0])

    def list(self) -> list[KeyInfo]:
        """All keys, oldest first."""
        rows = self._connection().execute(
            "SELECT name, created_at, last4, revoked_at FROM api_keys ORDER BY created_at, rowid"
        )
        return [KeyInfo(*row) for row in rows]

    def revoke(self, name: str) -> bool:
        """Revoke the live key `name`."""
        cur = self._connection().execute(
            "UPDATE api_keys SET revoked_at = ? WHERE name = ? AND revoked_at IS NULL",
            (_now(), name),
        )
        return cur.rowcount > 0

    def close(self) -> None:
        """Close the connection."""
        if self._conn is not None:
            self._conn.close()
            self._conn = None
