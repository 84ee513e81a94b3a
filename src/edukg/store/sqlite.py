"""The embedded default: the graph in one SQLite file, keys in a sibling file."""

from __future__ import annotations

import functools
import logging
import os
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from typing import Any, overload
from urllib.parse import quote

import orjson

from edukg.model.embedding import ROW_BYTES
from edukg.store.base import (
    CASE_EDGES,
    STATEMENT_SECONDS,
    Candidates,
    DataInfo,
    Edge,
    Found,
    Query,
    Row,
    Search,
    StatementTimeout,
)
from edukg.store.shared import page_sql, partition_match, search_filters
from edukg.store.sqlite_vectors import vectors_path

log = logging.getLogger("edukg.store")
# Seconds one read of the store (all its statements) may run: a runaway statement is
# interrupted and the request answered 503, as PostgreSQL's statements are after their
# deadline (docs/security.md).
_PROGRESS_STEPS = 1_000  # virtual-machine steps between looks at the clock (microseconds)


_MANY = 500  # nodes per statement of lookup_many
_MMAP_BYTES = 1 << 30  # 1 GiB: reads of an immutable file go straight to the page cache


# One record by CASE UUID, for each number of kinds asked: one statement text each, made
# once (the driver's statement cache then finds it without a new string to hash).
_BY_CASE_UUID: dict[int, str] = {}


def _by_case_uuid(kinds: int) -> str:
    sql = _BY_CASE_UUID.get(kinds)
    if sql is None:
        marks = ",".join("?" * kinds)
        sql = _BY_CASE_UUID[kinds] = (
            f"SELECT identifier, kind, doc FROM docs WHERE case_uuid = ? AND kind IN ({marks})"
            " ORDER BY identifier LIMIT 1"
        )
    return sql


class SqliteStore:
    """Reads one loaded version; notices when `edukg load` switches the file.

    The file is opened read-only and immutable: the loader never writes a file
    that is being served, it builds a new one and renames it into place. A stat per
    `info` (for a server, per `recheck` seconds: store.LOCAL_RECHECK) tells when that
    happened; the old connection keeps reading the old, unlinked file until it is
    swapped.
    """

    def __init__(
        self,
        path: str,
        home: str | None = None,
        recheck: float = 0.0,
        statement_seconds: float = STATEMENT_SECONDS,
    ) -> None:
        """`home`: the database the file belongs to, beside which its vectors lie;
        `recheck`: seconds a look at the file holds (0: `info` looks every time);
        `statement_seconds`: how long one read may run before it is interrupted."""
        self._path = path
        self.statement_seconds = statement_seconds
        self._until = threading.local()  # this thread's read's deadline (monotonic)
        self._statements = threading.RLock()
        self._recheck = recheck
        self._next_look = 0.0
        self._home = home or path
        self._conn: sqlite3.Connection | None = None
        self._stamp: tuple[int, int, int] | None = None
        self._info: DataInfo | None = None
        self._vectors: tuple[str, Any] | None = None  # (content id, memory map)
        self._checks: dict[tuple[int, int, int], str] = {}  # file stamp -> verdict
        # Requests may read from several threads (expensive work, MCP tools, a networked
        # rate limiter): one thread at a time opens a new file, and a replaced connection
        # is not closed but let go: it closes when the last request reading it is done.
        self._lock = threading.Lock()

    def _connection(self, refresh: bool = False) -> sqlite3.Connection | None:
        # Only info() looks for a new file: a request calls it first, so all its reads
        # come from one version even if a load switches files meanwhile.
        if self._conn is not None and not refresh:
            return self._conn
        try:
            st = os.stat(self._path)
        except FileNotFoundError:
            with self._lock:
                self._swap(None, None, None)
            return None
        stamp = (st.st_ino, st.st_mtime_ns, st.st_size)
        if stamp != self._stamp:
            with self._lock:
                if stamp != self._stamp:
                    self._open(stamp)
        return self._conn

    def _open(self, stamp: tuple[int, int, int]) -> None:
        """Open the file now at the path (with the lock held) and make it the served one."""
        uri = f"file:{quote(os.path.abspath(self._path))}?mode=ro&immutable=1"
        conn = sqlite3.connect(uri, uri=True, check_same_thread=False)
        try:
            conn.execute(f"PRAGMA mmap_size={_MMAP_BYTES}")
            conn.set_progress_handler(self._overdue, _PROGRESS_STEPS)
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
            return
        self._swap(conn, stamp, info)

    def _swap(
        self,
        conn: sqlite3.Connection | None,
        stamp: tuple[int, int, int] | None,
        info: DataInfo | None,
    ) -> None:
        # The old connection is let go, not closed: a request on another thread may still
        # be reading it, and it closes when the last one is done with it.
        self._conn, self._stamp, self._info = conn, stamp, info
        if conn is not None and stamp is not None and stamp not in self._checks:
            self._checks[stamp] = "checking"
            threading.Thread(target=self._check, args=(stamp,), daemon=True).start()

    def _check(self, stamp: tuple[int, int, int]) -> None:
        """Check a newly opened file on its own connection and thread: SQLite's quick
        check of its structure, then every served record and row parsed as JSON (they
        were encoded once, at load). A damaged file is reported by /readyz instead of
        served as if healthy; until the check passes, the app validates what it sends."""
        uri = f"file:{quote(os.path.abspath(self._path))}?mode=ro&immutable=1"
        try:
            conn = sqlite3.connect(uri, uri=True, check_same_thread=False)
            try:
                found = [row[0] for row in conn.execute("PRAGMA quick_check(5)")]
                if found == ["ok"]:
                    found = _unparsable(conn) or found
            finally:
                conn.close()
            verdict = "ok" if found == ["ok"] else "damaged: " + "; ".join(found)[:300]
        except sqlite3.DatabaseError as exc:
            verdict = f"damaged: {exc}"
        if verdict != "ok":
            log.error("the served database %s is damaged: %s", self._path, verdict)
        self._checks[stamp] = verdict

    def _overdue(self) -> int:
        """SQLite's progress handler: non-zero interrupts the statement running."""
        until: float = getattr(self._until, "at", 0.0)
        return 1 if until and time.monotonic() > until else 0

    def _query(
        self, sql: str, params: Sequence[Any] = (), conn: sqlite3.Connection | None = None
    ) -> list[tuple[Any, ...]]:
        """The one seam every read of the served file goes through: the statement's rows,
        or StatementTimeout once it has run `statement_seconds` (SQLite's progress handler
        interrupts it); [] with no file loaded."""
        conn = conn or self._connection()
        if conn is None:
            return []
        local = self._until
        outer = getattr(local, "at", 0.0)  # a statement run while reading another's rows
        if not outer:
            local.at = time.monotonic() + self.statement_seconds
        try:
            # One statement at a time on the shared connection, as SQLite's own mutex would
            # have it, but waited for without the interpreter lock: the progress handler
            # needs that lock while SQLite holds its mutex, and a thread waiting on the
            # mutex with the interpreter lock held would never let it run.
            with self._statements:
                return conn.execute(sql, params).fetchall()
        except sqlite3.OperationalError as exc:
            if "interrupted" not in str(exc):
                raise
            raise StatementTimeout(
                f"a read of the data took longer than {self.statement_seconds:g} s"
            ) from None
        finally:
            if not outer:
                local.at = 0.0

    def integrity(self) -> str:
        """The quick check's verdict on the file being served."""
        return "not checked" if self._stamp is None else self._checks.get(self._stamp, "checking")

    def answering(self) -> bool:
        """A file answers (or fails) at once: there is no server to wait on."""
        return True

    def look(self, hold: float) -> None:
        """Look at the file now (has a load replaced it?) and let `info` rely on it for
        `hold` seconds: a server looks ahead of its requests (app/watch.py)."""
        self._connection(refresh=True)
        self._next_look = time.monotonic() + hold

    def info(self) -> DataInfo | None:
        """The loaded version, or None when nothing is loaded; switches to a new load."""
        now = time.monotonic()  # no system call: the kernel's clock page
        if now >= self._next_look:
            self._connection(refresh=True)
            self._next_look = now + self._recheck
        return self._info

    def by_identifier(self, identifier: str, kind: str) -> Found | None:
        """One record by node identifier."""
        rows = self._query(
            "SELECT identifier, kind, doc FROM docs WHERE identifier = ? AND kind = ?",
            (identifier, kind),
        )
        return Found(*rows[0]) if rows else None

    def by_case_uuid(self, case_uuid: str, kinds: tuple[str, ...]) -> Found | None:
        """One record by CASE UUID; the lowest identifier wins if the data repeats one."""
        rows = self._query(_by_case_uuid(len(kinds)), (case_uuid, *kinds))
        return Found(*rows[0]) if rows else None

    def by_identifiers(self, identifiers: Sequence[str]) -> dict[str, Found]:
        """Records by identifier, a few hundred per statement."""
        found: dict[str, Found] = {}
        unique = list(dict.fromkeys(identifiers))
        for start in range(0, len(unique), _MANY):
            chunk = unique[start : start + _MANY]
            marks = ",".join("?" * len(chunk))
            sql = f"SELECT identifier, kind, doc FROM docs WHERE identifier IN ({marks})"
            found.update((row[0], Found(*row)) for row in self._query(sql, chunk))
        return found

    def page(self, query: Query, after: str | None, limit: int) -> list[Row]:
        """Up to `limit` rows of `query` after the identifier `after`."""
        sql, params = page_sql(query, after or "", limit)
        return self._query(sql, params)

    def lookup(self, relation: str, node: str, key: str = "") -> bytes | None:
        """One pre-encoded row."""
        rows = self._query(
            "SELECT doc FROM rows WHERE relation = ? AND node = ? AND sort_key = ?",
            (relation, node, key),
        )
        return bytes(rows[0][0]) if rows else None

    def lookup_many(self, relation: str, nodes: Sequence[str], key: str = "") -> dict[str, bytes]:
        """Rows for many nodes, a few hundred per statement (SQLite's parameter limit)."""
        found: dict[str, bytes] = {}
        unique = list(dict.fromkeys(nodes))
        for start in range(0, len(unique), _MANY):
            chunk = unique[start : start + _MANY]
            marks = ",".join("?" * len(chunk))
            for node, doc in self._query(
                f"SELECT node, doc FROM rows WHERE relation = ? AND sort_key = ?"
                f" AND node IN ({marks})",
                (relation, key, *chunk),
            ):
                found[node] = bytes(doc)
        return found

    def links_many(self, relation: str, nodes: Sequence[str]) -> list[tuple[str, str]]:
        """Neighbour-list pairs for many nodes, a few hundred nodes per statement."""
        sql = "SELECT node, other FROM links WHERE relation = ? AND node IN ({}) ORDER BY 1, 2"
        return [(str(a), str(b)) for a, b in self._many(sql, relation, nodes)]

    def rows_many(self, relation: str, nodes: Sequence[str]) -> list[tuple[str, str, bytes]]:
        """Pre-encoded rows for many nodes, a few hundred nodes per statement."""
        sql = (
            "SELECT node, sort_key, doc FROM rows WHERE relation = ? AND node IN ({}) ORDER BY 1, 2"
        )
        return [(str(a), str(b), bytes(c)) for a, b, c in self._many(sql, relation, nodes)]

    def _many(self, sql: str, head: str, nodes: Sequence[str]) -> list[tuple[Any, ...]]:
        unique = sorted(set(nodes))  # chunks in node order keep the whole answer in order
        out: list[tuple[Any, ...]] = []
        for start in range(0, len(unique), _MANY):
            chunk = unique[start : start + _MANY]
            out.extend(self._query(sql.format(",".join("?" * len(chunk))), (head, *chunk)))
        return out

    def search(self, query: Search, limit: int) -> list[tuple[str, bytes, float]]:
        """BM25 over the FTS5 index (Porter-stemmed words), filters applied in the same query.

        The kind and jurisdiction are tokens of the index, so FTS5 ranks only the records
        of that kind and jurisdiction; the other filters are checked on those.
        """
        conn = self._connection()
        if conn is None or not query.words:
            return []
        words = " OR ".join(f'"{w}"' for w in query.words)
        match = f"{partition_match(query)} AND ({words})"
        where, params = search_filters(query, prefix="")
        hits = self._query(
            "SELECT identifier, -bm25(search, 0, 0, 0, 0, 0, 0, 0, 1) AS relevance FROM search"
            f" WHERE search MATCH ? AND {where}"
            " ORDER BY relevance DESC, identifier LIMIT ?",
            [match, *params, limit],
            conn,
        )
        out = []
        for identifier, relevance in hits:
            rows = self._query("SELECT doc FROM docs WHERE identifier = ?", (identifier,), conn)
            if rows:
                out.append((identifier, bytes(rows[0][0]), float(relevance)))
        return out

    def candidates(self, query: Search) -> Candidates | None:
        """The filtered rows of `semantic` and their vectors, straight from the mapped file.

        Rows of one kind and jurisdiction are one run, so without other filters the
        vectors are a slice of the map (no copy); identifiers are looked up only for the
        rows a caller reads (the top hits).
        """
        conn = self._connection()
        info = self._info
        if conn is None or info is None:
            return None
        vectors = self._vector_map(info.content_id)
        if vectors is None:
            return None
        where, params = search_filters(query)
        ((low, high, count),) = self._query(
            f"SELECT min(row), max(row), count(*) FROM semantic d WHERE {where}", params, conn
        )
        named = functools.partial(self._query, conn=conn)  # this file's, whatever comes next
        if not count:
            return Candidates([], vectors[:0])
        if high - low + 1 == count:
            return Candidates(_RowIdentifiers(named, low, count), vectors[low : high + 1])
        rows = [
            r for (r,) in self._query(f"SELECT row FROM semantic d WHERE {where}", params, conn)
        ]
        return Candidates(_RowIdentifiers(named, 0, len(rows), rows), vectors[rows])

    def indexing(self) -> tuple[int, int] | None:
        """From the `.partial` vectors file an `edukg index` appends to, in any process."""
        conn = self._connection()
        info = self._info
        if conn is None or info is None or self._vector_map(info.content_id) is not None:
            return None
        ((total,),) = self._query("SELECT count(*) FROM semantic", (), conn)
        if not total:
            return None
        final = vectors_path(self._home, info.content_id)
        try:
            done = final.with_name(final.name + ".partial").stat().st_size // ROW_BYTES
        except FileNotFoundError:
            done = 0
        return min(done, total), total

    def _vector_map(self, content_id: str) -> Any:
        if self._vectors is not None and self._vectors[0] == content_id:
            return self._vectors[1]
        import numpy as np  # noqa: PLC0415 - only semantic search needs NumPy

        path = vectors_path(self._home, content_id)
        try:
            size = path.stat().st_size
        except FileNotFoundError:
            return None
        if size == 0 or size % ROW_BYTES:
            return None
        matrix = np.memmap(path, dtype=np.float32, mode="r").reshape(-1, ROW_BYTES // 4)
        self._vectors = (content_id, matrix)
        return matrix

    def export_lines(self, relationships: bool, by_ends: bool = False) -> Iterator[bytes]:
        """The loaded records' lines as read, ordered by identifier (last one of each wins)
        or, `by_ends`, relationships by label, source, target and identifier. Read on a
        connection of its own: an export streams for long, apart from requests."""
        if self._connection(refresh=True) is None:
            return
        uri = f"file:{quote(os.path.abspath(self._path))}?mode=ro&immutable=1"
        conn = sqlite3.connect(uri, uri=True, check_same_thread=False)
        try:
            (name,) = conn.execute("SELECT value FROM meta WHERE key = 'lines'").fetchone()
            table = "edges" if relationships else "nodes"
            order = (
                "label, source, target, identifier" if relationships and by_ends else "identifier"
            )
            folder = os.path.dirname(os.path.abspath(self._path))
            with open(os.path.join(folder, name), "rb") as f:
                fd = f.fileno()
                for pos, length in conn.execute(f"SELECT pos, len FROM {table} ORDER BY {order}"):
                    yield os.pread(fd, length, pos)
        finally:
            conn.close()

    def edges(self, identifiers: Sequence[str]) -> list[Edge]:
        """Relationships by identifier, their lines read from the lines file."""
        return self._edges("e.identifier IN ({marks})", identifiers)

    def edges_of(self, nodes: Sequence[str]) -> list[Edge]:
        """The CASE_EDGES of these nodes, through their links."""
        return self._edges(
            "e.identifier IN (SELECT other FROM links WHERE relation = ? AND node IN ({marks}))",
            nodes,
            (CASE_EDGES,),
        )

    def _edges(self, where: str, keys: Sequence[str], head: tuple[str, ...] = ()) -> list[Edge]:
        conn = self._connection()
        if conn is None or not keys:
            return []
        ((name,),) = self._query("SELECT value FROM meta WHERE key = 'lines'", (), conn)
        unique = list(dict.fromkeys(keys))
        found: dict[str, Edge] = {}
        with open(os.path.join(os.path.dirname(os.path.abspath(self._path)), name), "rb") as f:
            for start in range(0, len(unique), _MANY):
                chunk = unique[start : start + _MANY]
                sql = "SELECT e.identifier, e.label, e.source, e.target, e.pos, e.len FROM edges e"
                sql += " WHERE " + where.format(marks=",".join("?" * len(chunk)))
                for i, label, source, target, pos, length in self._query(
                    sql, (*head, *chunk), conn
                ):
                    found[i] = Edge(i, label, source, target, os.pread(f.fileno(), length, pos))
        return [found[i] for i in sorted(found)]

    def close(self) -> None:
        """Let the connection go (it closes once no request is reading it), and the
        vectors' mapping (unmapped once no search holds a view of it)."""
        with self._lock:
            self._swap(None, None, None)
            self._vectors = None

    def release(self) -> None:
        """Close now: the file is gone (a dropped release), and its disk is held for as
        long as the connection maps it. A request still reading it fails as for any
        dropped release."""
        with self._lock:
            conn = self._conn
            self._swap(None, None, None)
            self._vectors = None
        if conn is not None:
            conn.close()


def _unparsable(conn: sqlite3.Connection) -> list[str]:
    """Where stored JSON does not parse (at most a few places), else []."""
    bad: list[str] = []
    for table, key in (("docs", "identifier"), ("rows", "relation || ' ' || node")):
        for where, doc in conn.execute(f"SELECT {key}, doc FROM {table}"):
            try:
                orjson.loads(doc)
            except orjson.JSONDecodeError:
                bad.append(f"{table} {where}: not valid JSON")
                if len(bad) >= 5:
                    return bad
    return bad


class _RowIdentifiers(Sequence[str]):
    """Identifiers of candidate rows, read from `semantic` only when asked for."""

    def __init__(
        self,
        query: Callable[..., list[tuple[Any, ...]]],
        first: int,
        count: int,
        rows: list[int] | None = None,
    ) -> None:
        self._query, self._first, self._count, self._rows = query, first, count, rows

    def __len__(self) -> int:
        return self._count

    @overload
    def __getitem__(self, index: int) -> str: ...
    @overload
    def __getitem__(self, index: slice) -> list[str]: ...
    def __getitem__(self, index: int | slice) -> str | list[str]:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        if not 0 <= index < len(self):
            raise IndexError(index)
        row = self._rows[index] if self._rows is not None else self._first + index
        ((identifier,),) = self._query("SELECT identifier FROM semantic WHERE row = ?", (row,))
        return str(identifier)
