"""The storage seam: what the API asks of a database, and nothing more.

Queries are small frozen dataclasses; a store turns each into one indexed range scan.
Every list query is keyset-paged on the node `identifier` in byte order."""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from edukg.model.vocabulary import ACTIVITY, ASSESSMENT, LESSON
from edukg.store.errors import ReleaseError, StatementTimeout, StoreUnavailable
from edukg.store.rows import DocRow, EdgeRow, FigureRow, NodeRow

# A page row: the node identifier (the keyset) and the record's pre-encoded JSON.
Row = tuple[str, bytes]
# A row of the pre-encoded `rows` table: relation, node, sort key, label, score, JSON.
OutRow = tuple[str, str, str, str | None, float | None, bytes]

# Relations of the pre-encoded `rows` table.
CROSSWALK = "crosswalk"
ALIGNED_STANDARDS = "aligned-standards"  # node: a lesson, activity or assessment
ALIGNED_TO = {LESSON: "aligned-lessons", ACTIVITY: "aligned-activities",
              ASSESSMENT: "aligned-assessments"}  # fmt: skip
ACTIVITIES = "activities"  # node: a lesson; keyset: position and identifier
ASSESSMENTS = "assessments"  # node: a course, grouping or lesson containing them
COURSES = "courses"  # node: a curriculum id
DEPENDENCIES = "dependencies"  # node: a curriculum id
SCOPE_SUMMARY, SCOPE_FULL = "scope-summary", "scope-full"  # node: a course; key ''
GROUPING_DETAIL = "grouping"  # node: a lesson grouping; key ''
WITHIN = "within"  # node: a course; key: every curriculum node inside it; doc empty
LESSON_META = "lesson-meta"  # node: a lesson; key ''; {"fullOrdinalName": ...}

# Neighbour lists precomputed at load (see ingest.builder).
CHILDREN, PREREQUISITES, BUILDS_TOWARDS, RELATED, COMPONENTS = (
    "child", "prereq", "builds", "related", "lc")  # fmt: skip
PARENTS = "parent"
# The other direction of `supports`: from a learning component to the standards it supports.
SUPPORTED = "lc-of"
# From each framework item to the framework(s) it belongs to (reachable through hasChild).
FRAMEWORK_OF = "framework-of"
# From a standard to the curriculum content aligned to it (hasEducationalAlignment).
ALIGNED_CONTENT = "aligned-content"
# Rows: node a framework, key ''; what comparing frameworks reads of its items, in one row:
# `{"items": [[identifier, *ITEM_FIELDS, [learning components]], ...]}` by identifier.
FRAMEWORK_ITEMS = "framework-items"
ITEM_FIELDS = ("caseIdentifierUUID", "statementCode", "description", "jurisdiction",
               "academicSubject", "gradeLevel", "normalizedStatementType")  # fmt: skip
# A standard's or framework's relationships to other standards (CASE associations): links
# from each end to the relationship's identifier. Not learning components, not curriculum.
CASE_EDGES = "case-edges"
# The definitions CASE packages name (item types, subjects, licenses): rows keyed by the
# definition's identifier, label = its kind (CFItemTypes...), doc = its name as JSON.
CASE_DEFINITIONS = "case-definitions"


# How long one read of the data may run, on every backend, before it is interrupted and
# its request answered 503 "took too long" (serve --statement-seconds): SQLite's progress
# handler, PostgreSQL's statement_timeout (docs/security.md, "Limits").
STATEMENT_SECONDS = 5.0

# A data version goes into headers, file names and schema names: nothing else passes.
DATA_VERSION = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")


@dataclass(frozen=True)
class DataInfo:
    """What is loaded: the user's version label and the content's own id."""

    data_version: str
    content_id: str
    loaded_at: str
    counts: dict[str, int]


@dataclass(frozen=True)
class Release:
    """One loaded release of a database: what it holds, whether it is the current one,
    and the disk it takes (0 where not measured)."""

    data_version: str
    content_id: str
    loaded_at: str
    counts: dict[str, int]
    current: bool
    size_bytes: int = 0


@dataclass(frozen=True)
class Members:
    """Items of a framework (reachable through hasChild), with optional filters."""

    framework: str  # node identifier of the framework
    grades_mask: int = 0  # 0: any grade; else items with any of these grade bits
    subject: str | None = None
    statement_type: str | None = None


@dataclass(frozen=True)
class Linked:
    """Records linked to a node by one precomputed relation (children, prerequisites...)."""

    relation: str
    node: str


@dataclass(frozen=True)
class Listed:
    """Pre-encoded rows of one relation for one node (see the `rows` table)."""

    relation: str
    node: str
    label: str | None = None  # only rows with this label
    min_score: float | None = None  # only rows scoring at least this


@dataclass(frozen=True)
class OfKind:
    """All records of one kind, with the filters the list operations offer."""

    kind: str
    subject: str | None = None
    jurisdiction: str | None = None
    adoption_status: str | None = None
    current_only: bool = False


@dataclass(frozen=True)
class Matching:
    """Records of a kind whose code or text matches; for assistants' lookups.

    Codes are upper-cased. `code` matches exactly (the statement code or its alternate),
    `codes` any of several exactly (the ways one written code may be meant),
    `code_prefix` any code that starts with it, and with more than one of them a record
    matching either is taken (`2.OA` and `2.OA.`: 2.OA and every 2.OA.*, not 2.OAX).
    `words`: lower-cased; any of them in the text. `framework` (a node identifier, as
    every filter here): its members only."""

    kind: str
    code: str | None = None
    codes: tuple[str, ...] = ()
    code_prefix: str | None = None
    words: tuple[str, ...] = ()
    subject: str | None = None
    jurisdiction: str | None = None
    statement_type: str | None = None
    grades_mask: int = 0
    framework: str | None = None


Query = Members | Linked | Listed | OfKind | Matching


@dataclass(frozen=True)
class Search:
    """Records of a kind ranked by their text against words (lower-cased, any of them).

    Filters apply before ranking, so a narrow filter never empties a page that the top
    hits of other records would have filled (`framework`: its members only)."""

    kind: str
    words: tuple[str, ...]
    jurisdiction: str | None = None
    subject: str | None = None
    statement_type: str | None = None
    grades_mask: int = 0
    framework: str | None = None


@dataclass(frozen=True)
class Candidates:
    """The records a semantic search may return, with their unit vectors.

    `vectors` is a float32 NumPy array, one row of `semantic.encoder.DIMENSIONS` per
    identifier, in the same order.
    """

    identifiers: Sequence[str]
    vectors: Any


@dataclass(frozen=True)
class Found:
    """A record looked up by key."""

    identifier: str
    kind: str
    doc: bytes


@dataclass(frozen=True)
class Edge:
    """A stored relationship, with the line it was read from."""

    identifier: str
    label: str
    source: str
    target: str
    line: bytes


class Store(Protocol):
    """Read-only access to one loaded version of the graph."""

    def info(self) -> DataInfo | None:
        """The loaded version, or None when nothing is loaded. Picks up a new load."""

    def integrity(self) -> str:
        """What a check of the served data found: "ok", "checking", "not checked" (a
        backend that keeps its own checksums), or "damaged: ..." (for /readyz)."""

    def answering(self) -> bool:
        """Whether the database answers, known without waiting on it (for /readyz)."""

    def indexing(self) -> tuple[int, int] | None:
        """(texts embedded, texts in all) while the semantic index is incomplete; else None."""

    def by_identifier(self, identifier: str, kind: str) -> Found | None:
        """One record by node identifier."""

    def by_case_uuid(self, case_uuid: str, kinds: tuple[str, ...]) -> Found | None:
        """One record by its CASE UUID, among the given kinds."""

    def by_identifiers(self, identifiers: Sequence[str]) -> dict[str, Found]:
        """The records (of any kind) of those identifiers that have one."""

    def page(self, query: Query, after: str | None, limit: int) -> list[Row]:
        """Up to `limit` rows of `query` with identifier > `after`, ascending."""

    def lookup(self, relation: str, node: str, key: str = "") -> bytes | None:
        """One pre-encoded row of a relation (e.g. a course's scope and sequence)."""

    def lookup_many(self, relation: str, nodes: Sequence[str], key: str = "") -> dict[str, bytes]:
        """The rows of `relation` for each of `nodes` that has one, in one query."""

    def links_many(self, relation: str, nodes: Sequence[str]) -> list[tuple[str, str]]:
        """The (node, other) pairs of a neighbour list (CHILDREN, COMPONENTS, SUPPORTED,
        FRAMEWORK_OF...) for each of `nodes`, by node then other: identifiers only."""

    def rows_many(self, relation: str, nodes: Sequence[str]) -> list[tuple[str, str, bytes]]:
        """The (node, sort key, JSON) rows of a relation for each of `nodes`, by node then
        sort key (e.g. the lessons aligned to each of many standards)."""

    def search(self, query: Search, limit: int) -> list[tuple[str, bytes, float]]:
        """Up to `limit` (identifier, record, relevance > 0), most relevant first."""

    def candidates(self, query: Search) -> Candidates | None:
        """The records `query`'s filters admit, with their vectors (its words ignored);
        None when the loaded version has no complete semantic index (`edukg index`)."""

    def export_lines(self, relationships: bool, by_ends: bool = False) -> Iterator[bytes]:
        """The export's node (or relationship) lines as read, by identifier; `by_ends`:
        by label, source, target, identifier (code point order, as Python compares)."""

    def edges(self, identifiers: Sequence[str]) -> list[Edge]:
        """The relationships with these identifiers (those that exist), by identifier."""

    def edges_of(self, nodes: Sequence[str]) -> list[Edge]:
        """The CASE_EDGES of these nodes, each once, by identifier."""

    def close(self) -> None:
        """Release connections."""


@dataclass(frozen=True)
class Principal:
    """The holder of a live key, with its own rate limit where it has one."""

    name: str
    rate: float | None = None  # requests per second; 0 means unlimited; None: the default
    burst: int | None = None
    metrics: bool = False  # may read /metrics (a scraper's key: `keys create --metrics`)


@dataclass(frozen=True)
class KeyInfo:
    """What may be shown of a key: never the key itself."""

    name: str
    created_at: str
    last4: str
    revoked_at: str | None
    rate: float | None = None  # its own limit (requests per second; 0: none); None: default
    burst: int | None = None
    metrics: bool = False  # may read /metrics


class KeyStore(Protocol):
    """API keys: the only mutable state, kept apart from the versioned data."""

    def create(
        self,
        name: str,
        rate: float | None = None,
        burst: int | None = None,
        metrics: bool = False,
    ) -> str:
        """Make a key named `name`; return the key (shown once, stored only as a hash).
        `metrics`: the key may read /metrics."""

    def verify(self, key: str) -> Principal | None:
        """Who holds the live key `key`, or None."""

    def list(self) -> list[KeyInfo]:
        """All keys, live and revoked."""

    def revoke(self, name: str) -> bool:
        """Revoke the live key `name`; False when there is none."""

    def confirm(self) -> bool:
        """Whether the key `verify` last accepted on this thread is still live, checked
        after the request's reads (a backend that remembers keys checks its revision)."""

    def derived_secret(self, purpose: bytes) -> bytes:
        """A secret for `purpose` (e.g. signing cursors), the same on every node that
        shares this key store, derived from its own secret."""

    def close(self) -> None:
        """Release connections."""


class Indexer(Protocol):
    """Writes the semantic index of the served version, resumably, in order of rows.

    Rows are numbered from 0 at load (see `build_sql.SEMANTIC`); vectors are float32
    bytes, `DIMENSIONS` per row. A cache keyed by model and text outlives versions.
    """

    content_id: str

    def hold(self) -> bool:
        """Become the one process writing this index, for as long as this indexer is open;
        False when another live process is (its rows advance `done()`)."""

    def total(self) -> int:
        """How many rows the index has when complete."""

    def done(self) -> int:
        """How many rows are written (an interrupted run resumes there)."""

    def texts(self, start: int) -> Iterator[tuple[int, str]]:
        """(row, text) from row `start` on, in order."""

    def cached(self, keys: list[bytes]) -> dict[bytes, bytes]:
        """The cached vectors among `keys`."""

    def write(self, start: int, vectors: bytes, fresh: list[tuple[bytes, bytes]]) -> None:
        """Durably store the vectors of rows from `start` on, and new cache entries."""

    def finish(self) -> None:
        """Mark the index complete: searches of this version use it from now on."""

    def close(self) -> None:
        """Release connections (an unfinished index stays resumable)."""


# A derived curriculum record: identifier, kind, JSON, code, text.
DocOut = tuple[str, str, bytes, str | None, str | None]


class Derivations(Protocol):
    """The rules that turn the whole graph into served rows.

    Ingest implements them (`ingest.derive.RULES`) and hands them to `Loader.finish`, so
    that a loader only stores what they produce and no rule is written inside a store.
    """

    def crosswalk_rows(self, rows: Iterable[tuple[Any, ...]]) -> Iterator[OutRow]:
        """Rows for both sides of each crosswalk, from `build_sql.CROSSWALK_SOURCE` rows."""

    def curriculum(
        self,
        nodes: Iterable[tuple[str, str, bytes]],
        has_part: Iterable[tuple[str, str]],
        has_dependency: Iterable[tuple[str, str]],
        alignments: Iterable[tuple[str, str, bytes, bytes]],
    ) -> tuple[list[DocOut], list[OutRow]]:
        """Curriculum records and list rows, from stored (identifier, kind, line) nodes,
        edge pairs and (content, standard, line, standard JSON) alignments."""

    def framework_items(
        self, rows: Iterable[tuple[str, str, bytes, str | None]]
    ) -> Iterator[OutRow]:
        """FRAMEWORK_ITEMS rows from (framework, item, item JSON, its learning components
        space-separated) rows in framework order (`build_sql.FRAMEWORK_ITEMS_SOURCE`)."""

    def with_children(self, doc: bytes) -> bytes:
        """A standard's or skill's record, saying it has children."""

    def case_definitions(self, names: Iterable[tuple[str, str | None]]) -> Iterator[OutRow]:
        """CASE_DEFINITIONS rows from (definition kind, name) pairs (`build_sql.CASE_NAMES`)."""


class Loader(Protocol):
    """Builds one new version beside the served one; readers switch only at `commit`."""

    def add(
        self,
        nodes: list[NodeRow],
        docs: list[DocRow],
        edges: list[EdgeRow],
        figures: list[FigureRow],
    ) -> None:
        """Take one batch of rows; a later identifier replaces an earlier one."""

    def finish(self, meta: dict[str, str], rules: Derivations) -> dict[str, Any]:
        """Derive the served tables by `rules`; return counts (nodes, relationships,
        dangling)."""

    def commit(self) -> None:
        """Make the new version the served one, atomically."""

    def abort(self) -> None:
        """Throw the unfinished version away."""


class Releases(Protocol):
    """The releases kept in one database, each served by a store of its own.

    The current release is what requests read unless they name another; a load adds a
    release and makes it current, `use` makes another current, `drop` removes one.
    """

    def list(self, sizes: bool = False) -> list[Release]:
        """Every kept release, oldest load first; `sizes`: measure the disk each takes."""

    def store(self, version: str) -> Store | None:
        """A store that reads release `version` (the same object for every call), or None
        when no such release is kept."""

    def stamp(self) -> str:
        """Changes whenever the list of releases does (for ETags of that list)."""

    def use(self, version: str) -> Release:
        """Make `version` the current release, atomically; ReleaseError if unknown."""

    def drop(self, version: str) -> Release:
        """Remove a release that is not the current one, and the changes kept for it;
        ReleaseError otherwise."""

    def close(self) -> None:
        """Close the stores opened for releases."""


def every_row(store: Store, query: Query, per_read: int) -> Iterator[Row]:
    """Every row of `query`, in identifier order, read `per_read` at a time (each read a
    keyset page: no offset, so a long walk costs the same per row)."""
    after: str | None = None
    while True:
        rows = store.page(query, after, per_read)
        yield from rows
        if len(rows) < per_read:
            return
        after = rows[-1][0]


__all__ = ["ReleaseError", "StatementTimeout", "StoreUnavailable"]
