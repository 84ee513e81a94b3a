"""Builds a new SQLite data file beside the served one, then switches atomically."""

from __future__ import annotations

import contextlib
import marshal
import os
import secrets
import sqlite3
from collections.abc import Iterable
from importlib import resources
from operator import itemgetter
from pathlib import Path

import orjson

from edukg.model.processes import claim_file, remove_unheld
from edukg.model.vocabulary import (
    CURRICULUM_KINDS,
    FRAMEWORK,
    NESTED_KINDS,
    SKILLS_FRAMEWORK,
)
from edukg.store import build_sql, shared
from edukg.store.base import CASE_EDGES, CHILDREN, Derivations, OutRow
from edukg.store.rows import DocRow, EdgeRow, FigureRow, NodeRow
from edukg.store.sqlite_releases import BUILD_MARK as _BUILD_MARK
from edukg.store.sqlite_releases import migrate, publish, remove_unkept


def remove_stale_builds(db: Path) -> None:
    """Delete the build files of loads that are gone: a build that no live process holds
    (model.processes: its loader holds it from its making to its publishing), with its
    lines file; a lines file whose build is gone."""
    for path in db.parent.glob(f"{db.name}{_BUILD_MARK}*"):
        build = path.with_name(path.name.removesuffix(_LINES))
        if build != path and build.exists():
            continue  # a build's lines file goes with it, or stays with it
        remove_unheld(path, _remove_build)


def _remove_build(build: Path) -> None:
    for path in (build, Path(f"{build}{_LINES}")):
        with contextlib.suppress(FileNotFoundError):
            path.unlink()


_LINES = ".lines"  # a build's lines file: the build's name and this


class SqliteLoader:
    """Writes one new version. Nothing touches the served file until `commit`."""

    def __init__(self, db: str, full_text: bool = True) -> None:
        """`full_text`: build SQLite's own full-text index (a build to be published
        elsewhere does without)."""
        self._full_text = full_text
        self.target = Path(db)
        self.target.parent.mkdir(parents=True, exist_ok=True)
        remove_stale_builds(self.target)
        self.path = self.target.with_name(
            f"{self.target.name}{_BUILD_MARK}{os.getpid()}-{secrets.token_hex(4)}"
        )
        # Held until the build is published or thrown away: what tells another process
        # (of any PID namespace) that this build is not a dead load's.
        self._claim = claim_file(self.path)
        self.lines_path = Path(f"{self.path}{_LINES}")
        self._lines = open(self.lines_path, "wb")  # noqa: SIM115 - closed by commit or abort
        self._offset = 0
        self._reader: int | None = None
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
        self._docs: list[bytes] = []  # served records, packed, until `finish`
        self._doc_ids: list[str] = []  # and their identifiers

    def add(
        self,
        nodes: list[NodeRow],
        docs: list[DocRow],
        edges: list[EdgeRow],
        figures: list[FigureRow],
    ) -> None:
        """Take one batch; a later record with the same identifier replaces an earlier one.

        The served records wait, each packed into one string of bytes, until `finish`
        writes them in key order: appending to a B-tree is several times cheaper than
        inserting at random places, and by then it is known which have children
        (docs/benchmarks.md). One object per record keeps the wait at about the size of
        the records themselves.
        """
        c = self._conn
        if nodes:
            rows = [(i, label, kind, *self._keep(line)) for i, label, kind, line in nodes]
            rows.sort(key=_first)
            c.executemany("INSERT OR REPLACE INTO nodes VALUES (?, ?, ?, ?, ?)", rows)
        self._doc_ids.extend(doc[0] for doc in docs)
        self._docs.extend(marshal.dumps(doc) for doc in docs)
        if edges:
            kept = [(i, label, s, t, *self._keep(line)) for i, label, s, t, line in edges]
            kept.sort(key=_first)
            c.executemany("INSERT OR REPLACE INTO edges VALUES (?, ?, ?, ?, ?, ?)", kept)
        if figures:
            c.executemany("INSERT OR REPLACE INTO figures VALUES (?, ?, ?, ?, ?)", figures)

    def _keep(self, line: bytes) -> tuple[int, int]:
        """Append a raw line to the lines file; where it is."""
        pos = self._offset
        self._lines.write(line)
        self._lines.write(b"\n")
        self._offset += len(line) + 1
        return pos, len(line)

    def connection(self) -> sqlite3.Connection:
        """The build's own connection (to read a finished build before it is committed)."""
        return self._conn

    def lines_file(self) -> Path:
        """Where `add` kept the records' lines (complete once `finish` has run)."""
        self._lines.flush()
        return self.lines_path

    def _line(self, pos: int, length: int) -> bytes:
        if self._reader is None:
            self._lines.flush()
            self._reader = os.open(self.lines_path, os.O_RDONLY)
        return os.pread(self._reader, length, pos)

    def finish(self, meta: dict[str, str], rules: Derivations) -> dict[str, object]:
        """Derive the served tables, write `meta`; return counts for the summary."""
        c = self._conn
        self.lines_name = f"{self.target.name}.{meta['content_id'][:16]}.lines"
        self.data_version = meta["data_version"]
        meta = {**meta, "lines": self.lines_name}
        # Each neighbour list in its key order (a sort is far cheaper than inserting at
        # random places); no index on the relationships: a scan of them is cheaper than
        # building one for these few passes.
        for relation, label, node, other in build_sql.LINKS:
            c.execute(
                f"INSERT OR IGNORE INTO links SELECT ?, {node}, {other} FROM edges"
                " WHERE label = ? ORDER BY 2, 3",
                (relation, label),
            )
        self._write_docs(rules)
        for statement in shared.INDEXES.split(";"):  # executescript would end the transaction
            c.execute(statement)
        c.execute(
            build_sql.MEMBERSHIP + " ON CONFLICT DO NOTHING",
            (CHILDREN, CHILDREN),
        )
        c.execute(build_sql.FRAMEWORK_LINKS)
        self._add_rows(rules.framework_items(c.execute(build_sql.FRAMEWORK_ITEMS_SOURCE)))
        self._add_rows(rules.crosswalk_rows(c.execute(build_sql.CROSSWALK_SOURCE)))
        for statement in build_sql.CASE_EDGES:
            c.execute(statement, (CASE_EDGES,))
        self._add_rows(rules.case_definitions(c.execute(build_sql.CASE_NAMES).fetchall()))
        docs, rows = rules.curriculum(*self._curriculum_inputs())
        c.executemany(
            "INSERT OR REPLACE INTO docs (identifier, kind, doc, code, text) VALUES (?, ?, ?, ?, ?)",
            docs,
        )
        self._add_rows(rows)
        if self._full_text:
            self._search_table()
        for statement in build_sql.SEMANTIC.split(";"):
            c.execute(statement)
        c.execute("DROP TABLE temp.items")
        counts = build_sql.counts(lambda sql: c.execute(sql).fetchall())
        meta = {**meta, "counts": orjson.dumps(_served_counts(c)).decode()}
        c.executemany("INSERT OR REPLACE INTO meta VALUES (?, ?)", meta.items())
        c.execute("COMMIT")
        c.execute("PRAGMA optimize")
        return counts

    def _search_table(self) -> None:
        """The full-text index (FTS5): what a SQLite store searches by words."""
        c = self._conn
        # Full-text index: Porter stemming, so "adding fractions" finds "add ... fractions".
        # The filter columns ride along, unindexed, so a search never joins the records
        # (large rows) until it has its top hits.
        # `scope` holds a token for the kind and one for the jurisdiction, so that a search
        # ranks only the records of its own kind and jurisdiction (see sqlite.SqliteStore);
        # there are few of those pairs, so their tokens are made once each.
        c.execute(
            "CREATE VIRTUAL TABLE search USING fts5(identifier UNINDEXED, kind UNINDEXED,"
            " jurisdiction UNINDEXED, subject UNINDEXED, stmt_type UNINDEXED, grades UNINDEXED,"
            " scope, body, tokenize = 'porter unicode61 remove_diacritics 2')"
        )
        c.execute("CREATE TEMP TABLE scopes (kind TEXT, jurisdiction TEXT, tokens TEXT)")
        pairs = c.execute("SELECT DISTINCT kind, jurisdiction FROM temp.items").fetchall()
        c.executemany(
            "INSERT INTO scopes VALUES (?, ?, ?)",
            [(kind, where, shared.partition_tokens(kind, where)) for kind, where in pairs],
        )
        marks = ",".join("?" * len(shared.SEARCHABLE_KINDS))
        c.execute(
            "INSERT INTO search SELECT i.identifier, i.kind, i.jurisdiction, i.subject,"
            " i.stmt_type, i.grades, s.tokens, coalesce(i.code, '') || ' ' || coalesce(i.text, '')"
            " FROM temp.items i JOIN temp.scopes s ON s.kind = i.kind"
            f" AND s.jurisdiction IS i.jurisdiction WHERE i.kind IN ({marks})",
            shared.SEARCHABLE_KINDS,
        )

    def _write_docs(self, rules: Derivations) -> None:
        """Write the served records in key order, and the narrow copy the later passes read.

        Of the records with one identifier the last one read wins, and none is served if
        its node was read again under another label; a standard or skill with a child
        says so (the encoder wrote hasChildren last, as false).
        """
        c = self._conn
        packed, identifiers, self._docs, self._doc_ids = self._docs, self._doc_ids, [], []
        kinds = dict(c.execute("SELECT identifier, kind FROM nodes"))
        parents = {
            node
            for (node,) in c.execute(
                "SELECT DISTINCT l.node FROM links l JOIN nodes n ON n.identifier = l.other"
                " WHERE l.relation = ?",
                (CHILDREN,),
            )
        }
        latest = {identifier: n for n, identifier in enumerate(identifiers)}  # last one wins
        order = sorted(latest.items())
        del latest, identifiers
        # The columns that membership, the full-text index and the semantic rows read,
        # without the records themselves: several passes over these are cheaper than one
        # over docs.
        c.execute(
            "CREATE TEMP TABLE items (identifier TEXT PRIMARY KEY, kind TEXT, jurisdiction TEXT,"
            " subject TEXT, stmt_type TEXT, grades INTEGER, code TEXT, text TEXT) WITHOUT ROWID"
        )
        for start in range(0, len(order), _WRITE_BATCH):
            rows: list[DocRow] = []
            for identifier, n in order[start : start + _WRITE_BATCH]:
                doc: DocRow = marshal.loads(packed[n])  # noqa: S302 - made by this process
                if kinds.get(identifier) != doc[1]:
                    continue
                if doc[1] in NESTED_KINDS and identifier in parents:
                    doc = (*doc[:9], rules.with_children(doc[9]), *doc[10:])
                rows.append(doc)
            c.executemany("INSERT INTO docs VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)", rows)
            c.executemany(
                "INSERT INTO items VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                [
                    (d[0], d[1], d[3], d[4], d[5], d[6], d[10], d[11])
                    for d in rows
                    if d[1] in _ITEM_KINDS
                ],
            )

    def _add_rows(self, rows: Iterable[OutRow]) -> None:
        # In key order: appending is cheaper than inserting at random places. The sort is
        # stable, so of two rows with one key the later still wins.
        ordered = sorted(rows, key=_row_key)
        self._conn.executemany("INSERT OR REPLACE INTO rows VALUES (?, ?, ?, ?, ?, ?)", ordered)

    def _curriculum_inputs(
        self,
    ) -> tuple[
        list[tuple[str, str, bytes]],
        list[tuple[str, str]],
        list[tuple[str, str]],
        list[tuple[str, str, bytes, bytes]],
    ]:
        c = self._conn
        marks = ",".join("?" * len(CURRICULUM_KINDS))
        nodes = [
            (identifier, kind, self._line(pos, length))
            for identifier, kind, pos, length in c.execute(
                f"SELECT identifier, kind, pos, len FROM nodes WHERE kind IN ({marks})",
                sorted(CURRICULUM_KINDS),
            )
        ]

        def pairs(label: str) -> list[tuple[str, str]]:
            return c.execute(
                "SELECT source, target FROM edges WHERE label = ?", (label,)
            ).fetchall()

        aligned = [
            (source, target, self._line(pos, length), doc)
            for source, target, pos, length, doc in c.execute(
                "SELECT e.source, e.target, e.pos, e.len, d.doc FROM edges e JOIN docs d"
                " ON d.identifier = e.target AND d.kind = 'standard'"
                " WHERE e.label = 'hasEducationalAlignment'"
            )
        ]
        return nodes, pairs("hasPart"), pairs("hasDependency"), aligned

    def commit(self) -> None:
        """Keep the new file as its release and switch readers to it: one rename, after
        the data is on disk (sqlite_releases.publish).

        The lines file goes first, under a name of its own (the content id), so the
        switch itself stays the one rename of the database file.
        """
        self._conn.execute("PRAGMA journal_mode=DELETE")
        self._conn.close()
        self._close_lines()
        for path in (self.path, self.lines_path):
            fd = os.open(path, os.O_RDONLY)
            try:
                os.fsync(fd)
            finally:
                os.close(fd)
        migrate(self.target)
        previous = _lines_of(self.target)
        os.replace(self.lines_path, self.target.with_name(self.lines_name))
        publish(self.target, self.path, self.data_version)
        self._claim.release()  # the build's name is gone: nothing to hold
        # The lines of every kept release stay, and the previous current's (an export
        # may be reading them); others go, with their vectors.
        remove_unkept(self.target, {previous} if previous else set())

    def _close_lines(self) -> None:
        with contextlib.suppress(OSError):
            self._lines.close()
        if self._reader is not None:
            with contextlib.suppress(OSError):
                os.close(self._reader)
            self._reader = None

    def abort(self) -> None:
        """Throw the unfinished build away; the served file was never touched."""
        with contextlib.suppress(sqlite3.Error):
            self._conn.close()
        self._close_lines()
        _remove_build(self.path)
        self._claim.release()


_ITEM_KINDS = frozenset({*shared.SEARCHABLE_KINDS, FRAMEWORK, SKILLS_FRAMEWORK})
_WRITE_BATCH = 20_000


_first = itemgetter(0)  # an identifier
_row_key = itemgetter(0, 1, 2)  # relation, node, sort_key


def _lines_of(db: Path) -> str | None:
    """The lines file the database `db` names, if it exists and names one."""
    if not db.exists():
        return None
    try:
        conn = sqlite3.connect(f"file:{db.absolute()}?mode=ro", uri=True)
        try:
            row = conn.execute("SELECT value FROM meta WHERE key = 'lines'").fetchone()
        finally:
            conn.close()
    except sqlite3.Error:
        return None
    return str(row[0]) if row else None


def _served_counts(c: sqlite3.Connection) -> dict[str, int]:
    return dict(c.execute("SELECT kind, count(*) FROM docs GROUP BY kind ORDER BY 1"))


def _sql(name: str) -> str:
    return resources.files("edukg.store").joinpath(name).read_text("utf-8")
