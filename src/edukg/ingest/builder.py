"""The load: stream the export, type its values, encode each record once, switch.

Every way a load can fail (a bad line, a killed process, a full disk) leaves the
served database exactly as it was: the new version is built in a separate file
and only renamed into place once complete.
"""

from __future__ import annotations

import gc
import hashlib
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import orjson

from edukg.ingest.case_import import PackageOutcome, import_lines
from edukg.ingest.case_package import read_package
from edukg.ingest.changes import ChangeOutcome
from edukg.ingest.derive import RULES
from edukg.ingest.errors import LoadArgumentError, LoadError
from edukg.ingest.kept import current_release, settle
from edukg.ingest.limits import DEFAULT_LIMITS, LoadLimits
from edukg.ingest.normalize import BadValue, encode, typed
from edukg.ingest.reader import (
    RELATIONSHIP_FILES,
    Progress,
    downloads,
    guess_version,
    remove_stale_downloads,
    resolve,
)
from edukg.model.clock import utc_timestamp
from edukg.model.vocabulary import CURRICULUM_KINDS, KIND_BY_LABEL, grade_mask
from edukg.store import Backend, Release, backend_of, database_errors
from edukg.store.base import DATA_VERSION, Loader
from edukg.store.rows import DocRow, EdgeRow, FigureRow, NodeRow

_BATCH = 20000

# (name for messages, its lines as (line number, bytes))
NamedLines = tuple[str, Iterable[tuple[int, bytes]]]


@dataclass
class LoadSummary:
    """What a load read and wrote, for the closing table."""

    data_version: str
    content_id: str
    node_counts: dict[str, int] = field(default_factory=dict)
    relationship_counts: dict[str, int] = field(default_factory=dict)
    node_lines: int = 0
    relationship_lines: int = 0
    duplicate_nodes: int = 0
    duplicate_relationships: int = 0
    dangling: int = 0
    seconds: float = 0.0
    case: list[PackageOutcome] = field(default_factory=list)  # what each CASE package did
    releases: list[Release] = field(default_factory=list)  # kept after the load, with sizes
    changes: ChangeOutcome | str | None = None  # from the previous current, or why not
    dropped: list[str] = field(default_factory=list)  # releases `keep` dropped
    named_by_content: bool = False  # no version given or found: named by unnamed_version


def _need_str(record: dict[str, Any], key: str, where: str) -> str:
    value = record.get(key)
    if not isinstance(value, str) or not value:
        raise LoadError(f"{where}: missing or empty {key!r}")
    return value


def _doc_row(kind: str, identifier: str, props: dict[str, Any]) -> DocRow:
    grades = props.get("gradeLevel")
    return (
        identifier,
        kind,
        props.get("caseIdentifierUUID"),
        props.get("jurisdiction"),
        props.get("academicSubject"),
        props.get("normalizedStatementType"),
        grade_mask(grades if isinstance(grades, list) else None),
        props.get("adoptionStatus"),
        0 if props.get("isCurrent") is False else 1,
        encode(kind, identifier, props),
        _upper(props.get("statementCode")),
        _lower(props.get("description")),
        _upper(props.get("alternateStatementCode")),
    )


def _upper(value: Any) -> str | None:
    return value.strip().upper() if isinstance(value, str) and value.strip() else None


def _lower(value: Any) -> str | None:
    return value.lower() if isinstance(value, str) else None


class _Batches:
    """Rows waiting to be written, flushed every few thousand lines."""

    def __init__(self, loader: Loader) -> None:
        self.loader = loader
        self.nodes: list[NodeRow] = []
        self.docs: list[DocRow] = []
        self.edges: list[EdgeRow] = []
        self.figures: list[FigureRow] = []

    def flush(self) -> None:
        self.loader.add(self.nodes, self.docs, self.edges, self.figures)
        self.nodes, self.docs, self.edges, self.figures = [], [], [], []


def _take_line(batches: _Batches, line: bytes, where: str, summary: LoadSummary) -> bool:
    """Type and batch one export line; True for a node, False for a relationship."""
    try:
        record = orjson.loads(line)
    except orjson.JSONDecodeError as exc:
        raise LoadError(f"{where}: not valid JSON ({exc})") from None
    if not isinstance(record, dict):
        raise LoadError(f"{where}: a line must hold one JSON object")
    kind = record.get("type")
    props = record.get("properties", {})
    if not isinstance(props, dict):
        raise LoadError(f"{where}: 'properties' must be an object")
    try:
        values = typed(props)
    except BadValue as exc:
        raise LoadError(f"{where}: {exc}") from None
    identifier = _need_str(record, "identifier", where)
    if kind == "node":
        labels = record.get("labels")
        if (
            not isinstance(labels, list)
            or not labels
            or not all(isinstance(x, str) for x in labels)
        ):
            raise LoadError(f"{where}: 'labels' must be a non-empty list of strings")
        served = next((KIND_BY_LABEL[x] for x in labels if x in KIND_BY_LABEL), None)
        batches.nodes.append((identifier, labels[0], served, line))
        if served is not None and served not in CURRICULUM_KINDS:
            batches.docs.append(_doc_row(served, identifier, values))
        summary.node_lines += 1
        return True
    if kind == "relationship":
        label = _need_str(record, "label", where)
        source = _need_str(record, "source_identifier", where)
        target = _need_str(record, "target_identifier", where)
        batches.edges.append((identifier, label, source, target, line))
        if label == "hasStandardAlignment":
            batches.figures.append(
                (
                    identifier,
                    float(values.get("jaccard") or 0.0),
                    values.get("stateLCCount"),
                    values.get("ccssLCCount"),
                    values.get("sharedLCCount"),
                )
            )
        summary.relationship_lines += 1
        return False
    raise LoadError(f'{where}: \'type\' must be "node" or "relationship", got {kind!r:.40}')


def build(
    streams: Iterable[NamedLines],
    db: str | Backend,
    data_version: str | None,
    label_lines: str = "",
    relationships_named: bool = True,
    keep: int | None = None,
) -> LoadSummary:
    """Load the given lines into `db` as release `data_version` (None: named by its date
    and content, unnamed_version) and make it current.

    `relationships_named`: whether a relationships file was among the sources; without
    one, a load that read no relationship is refused (a nodes file loaded alone).
    `keep`: then drop the oldest releases beyond this many (never the current one).
    """
    _check_arguments(data_version, keep)
    backend = backend_of(db)
    previous = current_release(backend)
    return _build(streams, backend, previous, data_version, label_lines, relationships_named, keep)


def _build(
    streams: Iterable[NamedLines],
    db: Backend,
    previous: str | None,
    data_version: str | None,
    label_lines: str,
    relationships_named: bool,
    keep: int | None,
) -> LoadSummary:
    """`build`, its arguments checked and the release it replaces read (`previous`)."""
    started = time.monotonic()
    summary = LoadSummary(data_version=data_version or "", content_id="")
    try:
        loader = db.loader()
    except Exception as exc:
        raise LoadError(f"cannot start a load into {db.shown}: {exc}") from None
    # The rows of a batch hold no cycles; without the collector's passes over the
    # young objects of every few hundred lines the read is measurably faster (docs/
    # benchmarks.md). It runs again, with a full pass, once the load is over.
    collecting = gc.isenabled()
    gc.disable()
    try:
        batches = _Batches(loader)
        pending = 0
        # One digest per kind of record, so the id is the same whichever file order or
        # split (one stream or two files) the same lines come in.
        nodes, relationships = hashlib.sha256(), hashlib.sha256()
        for name, lines in streams:
            for number, line in lines:
                is_node = _take_line(batches, line, f"{name}:{number}", summary)
                digest = nodes if is_node else relationships
                digest.update(line)
                digest.update(b"\n")
                pending += 1
                if pending >= _BATCH:
                    batches.flush()
                    pending = 0
        batches.flush()
        _refuse_half_export(summary, label_lines, relationships_named)
        summary.content_id = hashlib.sha256(nodes.digest() + relationships.digest()).hexdigest()
        if not data_version:
            data_version = summary.data_version = unnamed_version(summary.content_id)
            summary.named_by_content = True
        counts = loader.finish(
            {
                "data_version": data_version,
                "content_id": summary.content_id,
                "loaded_at": utc_timestamp(),
                "format": "1",
            },
            RULES,
        )
        loader.commit()
    except database_errors(OSError) as exc:
        loader.abort()
        raise LoadError(f"the database could not be written ({exc}); nothing was changed") from None
    except BaseException:
        loader.abort()
        raise
    finally:
        if collecting:
            gc.enable()
            gc.collect()
    summary.node_counts = counts["nodes"]
    summary.relationship_counts = counts["relationships"]
    summary.dangling = counts["dangling"]
    summary.duplicate_nodes = summary.node_lines - sum(summary.node_counts.values())
    summary.duplicate_relationships = summary.relationship_lines - sum(
        summary.relationship_counts.values()
    )
    summary.changes, summary.dropped, summary.releases = settle(db, previous, data_version, keep)
    summary.seconds = time.monotonic() - started
    return summary


def unnamed_version(content_id: str) -> str:
    """The name of a release its source did not name: the day and the start of its
    content id (`20261126-0a0aa20db56c`), so that two such loads never take each other's
    name, and the same data loaded again the same day is recognisably the same."""
    return f"{datetime.now(UTC):%Y%m%d}-{content_id[:12]}"


def _check_arguments(data_version: str | None, keep: int | None) -> None:
    """The one check of a load's arguments, before anything is read."""
    if keep is not None and keep < 1:
        raise LoadArgumentError(
            f"--keep {keep}: keep at least the release being loaded (1 or more)"
        )
    if data_version is not None and not DATA_VERSION.fullmatch(data_version):
        raise LoadArgumentError(
            f"--data-version {data_version!r} is not a version: use 1-64 letters, digits, '.',"
            " '_' or '-', starting with a letter or digit (e.g. 1.11.0)"
        )


def _refuse_half_export(summary: LoadSummary, label_lines: str, relationships_named: bool) -> None:
    """An export is both files: loading one alone would serve a graph without the other.

    An empty relationships file that was named is taken as a graph without relationships.
    """
    if summary.node_lines == 0:
        raise LoadError(
            f"no node records found{label_lines}: is nodes.jsonl missing? nothing was changed"
        )
    if summary.relationship_lines == 0 and not relationships_named:
        raise LoadError(
            f"no relationship records found{label_lines}: is relationships.jsonl missing? "
            "A load needs both nodes.jsonl and relationships.jsonl; nothing was changed"
        )


def load(
    sources: list[str],
    db: str | Backend,
    data_version: str | None = None,
    progress: Progress | None = None,
    replace: bool = False,
    keep: int | None = None,
    limits: LoadLimits = DEFAULT_LIMITS,
) -> LoadSummary:
    """Load the export and CASE packages found at `sources` (paths, a directory or URLs)
    into `db`, in one version, each source within `limits`.

    `replace`: allow CASE packages alone onto a database that serves data (they replace
    the whole graph).
    """
    _check_arguments(data_version, keep)
    backend = backend_of(db)
    previous = current_release(backend)  # read before anything can change it
    version = data_version or guess_version(sources)
    with downloads(backend.workdir) as tmp:
        export, named_packages = resolve(sources, tmp, progress, limits)
        packages = [read_package(f.path, f.name, limits.package_bytes) for f in named_packages]
        if packages and not export and not replace and backend.serves_data():
            raise LoadError(
                "only CASE packages were given, and this database serves data: loading them "
                "alone would replace the whole graph. Name the export too (edukg load "
                "EXPORT_DIR PACKAGE...), or give --replace to serve the packages alone; "
                "nothing was changed"
            )
        case, streams = import_lines(packages, export, progress)
        named = bool(packages) or any(
            Path(f.name).name.startswith(RELATIONSHIP_FILES[0][:13]) for f in export
        )
        summary = _build(streams, backend, previous, version, f" in {', '.join(sources)}",
                         named, keep)  # fmt: skip
        summary.case = case.outcomes if case else []
        return summary


def remove_leftovers(db: str | Backend) -> None:
    """Remove what killed loads of `db` left (downloads and unfinished builds of processes
    that are gone): `serve` and `load` do this as they start."""
    backend = backend_of(db)
    remove_stale_downloads(backend.workdir)
    backend.remove_stale_builds()
