"""The semantic index beside a SQLite database: a flat file of vectors, and a cache.

The database file is immutable once served, so vectors live in their own file,
named for the version's content id: `<db>.<id>.vectors`, float32 rows in the
order of the `semantic` table. It is written as `<...>.partial`, appended one
batch at a time, and renamed when complete; a run that stops resumes at the last
whole row. The cache (`<db>.embeddings`, SQLite) keeps every vector by a hash of
model and text, so the next version only embeds texts that changed.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
from collections.abc import Iterator
from pathlib import Path

from edukg.model.embedding import ROW_BYTES
from edukg.model.processes import Claim, try_claim_file


def vectors_path(db: str | Path, content_id: str) -> Path:
    """Where the complete vectors of the version `content_id` of `db` live."""
    db = Path(db).absolute()
    return db.with_name(f"{db.name}.{content_id[:16]}.vectors")


def cache_path(db: str | Path) -> Path:
    """The embedding cache that belongs to the database file `db`."""
    db = Path(db).absolute()
    return db.with_name(f"{db.name}.embeddings")


def content_of(db: Path, name: str) -> str:
    """The content id (16 chars) in the name of a file beside `db` (`<db>.<id>.<kind>`)."""
    return name[len(db.name) + 1 :].split(".", 1)[0]


def remove_unused(db: Path, keep: set[str]) -> None:
    """Delete vector files of versions other than the content ids (16 chars) in `keep`."""
    for path in db.parent.glob(f"{db.name}.*.vectors*"):
        if content_of(db, path.name) not in keep:
            with contextlib.suppress(FileNotFoundError):
                path.unlink()


class SqliteIndexer:
    """Writes `<db>.<id>.vectors` for the version a SQLite file serves."""

    def __init__(self, db: Path, conn: sqlite3.Connection, content_id: str) -> None:
        self._db = db
        self._conn = conn
        self.content_id = content_id
        self.final = vectors_path(db, content_id)
        self.partial = self.final.with_name(self.final.name + ".partial")
        # Held by the one process that writes this version's vectors (`hold`): another,
        # in any PID namespace, sees it is not alone and waits.
        self.lock = self.final.with_name(self.final.name + ".lock")
        self._held: Claim | None = None
        self._cache = sqlite3.connect(cache_path(db), isolation_level=None, timeout=30)
        self._cache.execute("PRAGMA journal_mode=WAL")
        self._cache.execute(
            "CREATE TABLE IF NOT EXISTS cache (key BLOB PRIMARY KEY, vec BLOB NOT NULL)"
            " WITHOUT ROWID"
        )

    @classmethod
    def open(cls, db: str) -> SqliteIndexer | None:
        """The indexer for what `db` serves now, or None when nothing is loaded."""
        path = Path(db).absolute()
        if not path.exists():
            return None
        conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        try:
            row = conn.execute("SELECT value FROM meta WHERE key = 'content_id'").fetchone()
            conn.execute("SELECT 1 FROM semantic LIMIT 1")
        except sqlite3.DatabaseError:
            conn.close()
            return None
        return cls(path, conn, row[0]) if row else None

    def total(self) -> int:
        """Rows of the complete index."""
        (count,) = self._conn.execute("SELECT count(*) FROM semantic").fetchone()
        return int(count)

    def hold(self) -> bool:
        """Become the one writer of this version's vectors, unless another process is."""
        if self._held is None:
            self._held = try_claim_file(self.lock)
        return self._held is not None

    def done(self) -> int:
        """Rows written; a torn last row (a killed run) is cut off by the holder (another
        process's last row may be half written, not torn)."""
        if self.final.exists():
            return self.final.stat().st_size // ROW_BYTES
        try:
            size = self.partial.stat().st_size
        except FileNotFoundError:
            return 0
        whole = size - size % ROW_BYTES
        if whole != size and self._held is not None:
            os.truncate(self.partial, whole)
        return whole // ROW_BYTES

    def texts(self, start: int) -> Iterator[tuple[int, str]]:
        """(row, text) in row order from `start`."""
        yield from self._conn.execute(
            "SELECT s.row, d.text FROM semantic s JOIN docs d ON d.identifier = s.identifier"
            " WHERE s.row >= ? ORDER BY s.row",
            (start,),
        )

    def cached(self, keys: list[bytes]) -> dict[bytes, bytes]:
        """Cached vectors by key."""
        out: dict[bytes, bytes] = {}
        for i in range(0, len(keys), 500):
            part = keys[i : i + 500]
            marks = ",".join("?" * len(part))
            out.update(
                self._cache.execute(f"SELECT key, vec FROM cache WHERE key IN ({marks})", part)
            )
        return out

    def write(self, start: int, vectors: bytes, fresh: list[tuple[bytes, bytes]]) -> None:
        """Cache first, then the rows, each made durable before the next batch."""
        if fresh:
            self._cache.execute("BEGIN")
            self._cache.executemany("INSERT OR IGNORE INTO cache VALUES (?, ?)", fresh)
            self._cache.execute("COMMIT")
        with open(self.partial, "ab") as f:
            if f.tell() != start * ROW_BYTES:
                raise RuntimeError(f"{self.partial} holds {f.tell()} bytes, not {start} rows")
            f.write(vectors)
            f.flush()
            os.fsync(f.fileno())

    def finish(self) -> None:
        """Rename the complete file into place; drop vectors of versions no longer served."""
        if self.partial.exists():
            os.replace(self.partial, self.final)
        lines = self._conn.execute("SELECT value FROM meta WHERE key = 'lines'").fetchone()
        keep = {self.content_id[:16]}
        # The previous version's lines file is kept for exports in flight; so are its vectors.
        for old in self._db.parent.glob(f"{self._db.name}.*.lines"):
            if lines is None or old.name != lines[0]:
                keep.add(content_of(self._db, old.name))
        remove_unused(self._db, keep)

    def close(self) -> None:
        """Close both files' connections, and let go of the vectors (their lock file goes:
        a process waiting on it takes a new one)."""
        self._conn.close()
        self._cache.close()
        if self._held is not None:
            with contextlib.suppress(FileNotFoundError):
                self.lock.unlink()
            self._held.release()
            self._held = None
