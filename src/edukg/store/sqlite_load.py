"""Builds a new SQLite data file beside the served one, then switches atomically."""

from __future__ import annotations

import contextlib
import os
import secrets
import sqlite3
from collections.abc import Iterable
from importlib import resources
from pathlib import Path
from typing import Any

import orjson

from edukg.ingest import curriculum
from edukg.ingest.normalize import CURRICULUM_KINDS
from edukg.store import shared
from edukg.store.base import CHILDREN, OutRow

_BUILD_MARK = ".building-"

NodeRow = tuple[str, str, str | None, bytes]  # identifier, label, served kind, raw line
EdgeRow = tuple[str, str, str, str, bytes]  # identifier, label, source, target, raw line
# identifier, kind, case_uuid, jurisdiction, subject, stmt_type, grades, adoption, current,
# doc, code, text
DocRow = tuple[
    str, str, str | None, str | None, str | None, str | None, int, str | None, int, bytes,
    str | None, str | None,
]  # fmt: skip
# edge identifier, jaccard, stateLCCount, ccssLCCount, sharedLCCount
FigureRow = tuple[str, float, int | None, int | None, int | None]


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def remove_stale_builds(db: Path) -> None:
    """Delete build files left by loads that were killed (their process is gone)."""
    for path in db.parent.glob(f"{db.name}{_BUILD_MARK}*"):
        try:
            pid = int(path.name[len(db.name) + len(_BUILD_MARK) :].split("-")[0])
        except ValueError:
            continue
        if not _pid_alive(pid):
            with contextlib.suppress(FileNotFoundError):
                path.unlink()


class SqliteLoader:
    """Writes one new version. Nothing touches the served file until `commit`."""

    def __init__(self, db: str) -> None:
        self.target = Path(db)
        self.target.parent.mkdir(parents=True, exist_ok=True)
        remove_stale_builds(self.target)
        self.path = self.target.with_name(
            f"{self.target.name}{_BUILD_MARK}{os.getpid()}-{secrets.token_hex(4)}"
        )
        self._conn = sqlite3.connect(self.path, isolation_level=None)
        # A failed build is thrown away whole, so it needs no journal and no syncs.
        for pragma in (
            "journal_mode=OFF",
            "synchronous=OFF",
            "locking_mode=EXCLUSIVE",
            "temp_store=MEMORY",
            "cache_size=-262144",  # 256 MiB
            "page_size=8192",
        ):
            self._conn.execute(f"PRAGMA {pragma}")
        self._conn.executescript(_sql("schema.sql"))
        self._conn.execute(
            "CREATE TEMP TABLE figures (identifier TEXT PRIMARY KEY, jaccard REAL,"
            " state INTEGER, ccss INTEGER, shared INTEGER) WITHOUT ROWID"
        )
        self._conn.execute("BEGIN")

    def add(
        self,
        nodes: list[NodeRow],
        docs: list[DocRow],
        edges: list[EdgeRow],
        figures: list[FigureRow],
    ) -> None:
        """Insert one batch; a later record with the same identifier replaces an earlier one."""
        c = self._conn
        if nodes:
            c.executemany("INSERT OR REPLACE INTO nodes VALUES (?, ?, ?, ?)", nodes)
        if docs:
            c.executemany("INSERT OR REPLACE INTO docs VALUES (?,?,?,?,?,?,?,?,?,?,?,?)", docs)
        if edges:
            c.executemany("INSERT OR REPLACE INTO edges VALUES (?, ?, ?, ?, ?)", edges)
        if figures:
            c.executemany("INSERT OR REPLACE INTO figures VALUES (?, ?, ?, ?, ?)", figures)

    def finish(self, meta: dict[str, str]) -> dict[str, object]:
        """Derive the served tables, write `meta`; return counts for the summary."""
        c = self._conn
        # A duplicate identifier re-read under another label must not keep the
        # earlier record: the last line wins, for the served record too.
        c.execute(
            "DELETE FROM docs WHERE identifier IN (SELECT n.identifier FROM nodes n"
            " JOIN docs d ON d.identifier = n.identifier WHERE n.kind IS NOT d.kind)"
        )
        for statement in shared.INDEXES.split(";"):  # executescript would end the transaction
            c.execute(statement)
        for relation, label, node, other in shared.LINKS:
            c.execute(
                f"INSERT OR IGNORE INTO links SELECT ?, {node}, {other} FROM edges WHERE label = ?",
                (relation, label),
            )
        # Flip hasChildren, which the encoder wrote last as `false}`, for items with a child.
        c.execute(
            "UPDATE docs SET doc = CAST(substr(doc, 1, length(doc) - 6) || 'true}' AS BLOB)"
            " WHERE kind IN ('standard', 'skill') AND identifier IN (SELECT l.node FROM links l"
            " JOIN nodes n ON n.identifier = l.other WHERE l.relation = ?)",
            (CHILDREN,),
        )
        c.execute(shared.MEMBERSHIP + " ON CONFLICT DO NOTHING", (CHILDREN, CHILDREN))
        self._add_rows(shared.crosswalk_rows(c.execute(shared.CROSSWALK_SOURCE.format(p=""))))
        derived = curriculum.derive(*self._curriculum_inputs())
        c.executemany(
            "INSERT OR REPLACE INTO docs (identifier, kind, doc, code, text) VALUES (?, ?, ?, ?, ?)",
            derived.docs,
        )
        self._add_rows(derived.rows)
        counts = shared.counts(lambda sql: c.execute(sql).fetchall())
        meta = {**meta, "counts": orjson.dumps(_served_counts(c)).decode()}
        c.executemany("INSERT OR REPLACE INTO meta VALUES (?, ?)", meta.items())
        c.execute("COMMIT")
        c.execute("PRAGMA optimize")
        return counts

    def _add_rows(self, rows: Iterable[OutRow]) -> None:
        self._conn.executemany("INSERT OR REPLACE INTO rows VALUES (?, ?, ?, ?, ?, ?)", rows)

    def _curriculum_inputs(
        self,
    ) -> tuple[
        dict[str, tuple[str, dict[str, Any]]],
        list[tuple[str, str]],
        list[tuple[str, str]],
        list[tuple[str, str, list[str], bytes]],
    ]:
        c = self._conn
        marks = ",".join("?" * len(CURRICULUM_KINDS))
        nodes = shared.curriculum_nodes(
            c.execute(
                f"SELECT identifier, kind, line FROM nodes WHERE kind IN ({marks})",
                sorted(CURRICULUM_KINDS),
            )
        )

        def pairs(label: str) -> list[tuple[str, str]]:
            return c.execute(
                "SELECT source, target FROM edges WHERE label = ?", (label,)
            ).fetchall()

        aligned = shared.alignments(c.execute(shared.ALIGNMENT_SOURCE.format(p="")))
        return nodes, pairs("hasPart"), pairs("hasDependency"), aligned

    def commit(self) -> None:
        """Switch readers to the new file: one rename, after the data is on disk."""
        self._conn.execute("PRAGMA journal_mode=DELETE")
        self._conn.close()
        fd = os.open(self.path, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(self.path, self.target)
        dir_fd = os.open(self.target.parent, os.O_RDONLY)
        try:
            os.fsync(dir_fd)
        finally:
            os.close(dir_fd)

    def abort(self) -> None:
        """Throw the unfinished build away; the served file was never touched."""
        with contextlib.suppress(sqlite3.Error):
            self._conn.close()
        with contextlib.suppress(FileNotFoundError):
            self.path.unlink()


def _served_counts(c: sqlite3.Connection) -> dict[str, int]:
    return dict(c.execute("SELECT kind, count(*) FROM docs GROUP BY kind ORDER BY 1"))


def _sql(name: str) -> str:
    return resources.files("edukg.store").joinpath(name).read_text("utf-8")
