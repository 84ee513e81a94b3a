"""What changed between two releases, record by record, computed once per pair and kept.

A node is the same node in both releases when its identifier is; a relationship is the
same when its label, source and target are (hasChild identifiers are random and may be
new in every release). Only the export's own properties are compared, typed (so "true"
and true are equal); what edukg derives never makes a change. Both releases' lines are
read in key order and merged, so memory stays flat whatever their size.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import orjson

from edukg.ingest.normalize import typed
from edukg.store import ChangeStore, Releases, Store
from edukg.store.changes_base import ChangeRow, pair_name

_BATCH = 5000
_ENDS_BATCH = 500  # relationship changes whose ends are read at once
_NAME_CHARS = 160
ADDED, REMOVED, MODIFIED = "added", "removed", "modified"
CHANGES = (ADDED, REMOVED, MODIFIED)
_SEP = "\x1f"  # between the parts of a paging key: below every printable character


class ChangesPending(Exception):
    """Another process is computing this pair now."""


@dataclass
class ChangeOutcome:
    """What `ensure` found or computed: counts by label and change."""

    older: str
    newer: str
    pair: str = ""  # its name in the change store
    counts: dict[str, dict[str, int]] = field(default_factory=dict)
    computed: bool = False  # False: it was already kept
    seconds: float = 0.0

    def total(self, change: str | None = None) -> int:
        """Changes of one kind (or all)."""
        return sum(n for per in self.counts.values() for c, n in per.items() if change in (None, c))


# (match key, identifier, label, the parsed record)
_Keyed = tuple[tuple[str, ...], str, str, dict[str, Any]]


def _node(line: bytes) -> _Keyed:
    record = orjson.loads(line)
    identifier = record["identifier"]
    return (identifier,), identifier, record["labels"][0], record


def _relationship(line: bytes) -> _Keyed:
    record = orjson.loads(line)
    ends = (record["label"], record["source_identifier"], record["target_identifier"])
    return ends, record["identifier"], record["label"], record


class _Side:
    """One release's lines in key order, each parsed only if it must be."""

    def __init__(self, lines: Iterator[bytes], parse: Callable[[bytes], _Keyed]) -> None:
        self._lines = lines
        self._parse = parse
        self.line: bytes | None = None
        self._record: _Keyed | None = None
        self.advance()

    def advance(self) -> None:
        self.line, self._record = next(self._lines, None), None

    def record(self) -> _Keyed:
        if self._record is None:
            assert self.line is not None
            self._record = self._parse(self.line)
        return self._record


def _paired(a: _Side, b: _Side) -> Iterator[tuple[_Keyed | None, _Keyed | None]]:
    """(older, newer) of each key of a merge of both orders; None where one lacks it.
    Identical lines (most of them) are passed over unparsed; records sharing a key (rare:
    relationships with the same ends) pair up in order."""
    while a.line is not None or b.line is not None:
        if a.line == b.line:
            a.advance()
            b.advance()
        elif b.line is None or (a.line is not None and a.record()[0] < b.record()[0]):
            yield a.record(), None
            a.advance()
        elif a.line is None or b.record()[0] < a.record()[0]:
            yield None, b.record()
            b.advance()
        else:
            yield a.record(), b.record()
            a.advance()
            b.advance()


def _changed(before: dict[str, Any], after: dict[str, Any]) -> list[str]:
    # A record's `identifier` property repeats its identity: a renewed hasChild
    # identifier is the same relationship, not a modified one.
    names = (before.keys() | after.keys()) - _IDENTITY
    return sorted(k for k in names if before.get(k) != after.get(k))


_IDENTITY = frozenset({"identifier"})


def _row(kind: str, old: _Keyed | None, new: _Keyed | None) -> ChangeRow | None:
    """The change between two records of one key, or None when they are the same."""
    if old is not None and new is not None and old[3].get("properties") == new[3].get("properties"):
        return None  # the common case: not even typing is needed
    before = typed(old[3].get("properties") or {}) if old is not None else None
    after = typed(new[3].get("properties") or {}) if new is not None else None
    if before is not None and after is not None:
        names = _changed(before, after)
        if not names:
            return None
        change = MODIFIED
        before = {k: before.get(k) for k in names}
        after = {k: after.get(k) for k in names}
    else:
        names = []
        change = ADDED if old is None else REMOVED
    shown = new if new is not None else old
    assert shown is not None
    _, identifier, label, record = shown
    doc: dict[str, Any] = {"type": kind, "label": label, "identifier": identifier,
                           "change": change, "changedProperties": names}  # fmt: skip
    props = record.get("properties") or {}
    if kind == "node":
        doc["caseIdentifierUUID"] = props.get("caseIdentifierUUID")
        doc["statementCode"] = props.get("statementCode")
        doc["name"] = _named(props)
        # Records in the order people read codes (4.NF.A.1 before 4.NF.A.2, 2.OA.A.10
        # after 2.OA.A.2), records without a code after them, then by identifier.
        key = _SEP.join(("n", _code_key(props.get("statementCode")), identifier))
    else:
        doc["sourceIdentifier"] = record["source_identifier"]
        doc["targetIdentifier"] = record["target_identifier"]
        key = _SEP.join(("r", *shown[0], identifier))
    values = b',"before":' + orjson.dumps(before) + b',"after":' + orjson.dumps(after)
    return key, kind, label, change, identifier, orjson.dumps(doc), values


_RUN = re.compile(r"\d+")


def _code_key(code: Any) -> str:
    """A string that sorts codes as people read them: each run of digits padded."""
    if not isinstance(code, str) or not code:
        return "\x7f"  # after every code
    return "c" + _RUN.sub(lambda m: m.group().zfill(10), code)


def diff(older: Store, newer: Store) -> Iterator[ChangeRow]:
    """Every change from `older` to `newer`: nodes, then relationships (each with its
    ends' codes and names), in key order."""
    for kind, parse in (("node", _node), ("relationship", _relationship)):
        relationships = kind == "relationship"
        old_lines = older.export_lines(relationships, by_ends=relationships)
        new_lines = newer.export_lines(relationships, by_ends=relationships)
        rows = (_row(kind, old, new) for old, new in
                _paired(_Side(old_lines, parse), _Side(new_lines, parse)))  # fmt: skip
        changed = (row for row in rows if row is not None)
        yield from _with_ends(changed, older, newer) if relationships else changed


def _named(props: dict[str, Any]) -> str | None:
    """What a person calls a record: its name, else its statement, shortened."""
    text = props.get("name") or props.get("description")
    return str(text)[:_NAME_CHARS] if text else None


def _with_ends(rows: Iterator[ChangeRow], older: Store, newer: Store) -> Iterator[ChangeRow]:
    """Relationship changes with the code and name of each end, read in batches (from the
    release the relationship is in)."""
    batch: list[ChangeRow] = []
    for row in rows:
        batch.append(row)
        if len(batch) >= _ENDS_BATCH:
            yield from _ends_named(batch, older, newer)
            batch = []
    yield from _ends_named(batch, older, newer)


def _ends_named(batch: list[ChangeRow], older: Store, newer: Store) -> Iterator[ChangeRow]:
    docs = [orjson.loads(row[5]) for row in batch]
    ends: dict[bool, dict[str, tuple[Any, Any]]] = {}
    for removed, store in ((True, older), (False, newer)):
        wanted = {d[f"{side}Identifier"] for d in docs if (d["change"] == REMOVED) == removed
                  for side in ("source", "target")}  # fmt: skip
        found = store.by_identifiers(sorted(wanted)) if wanted else {}
        ends[removed] = {}
        for identifier, record in found.items():
            props = orjson.loads(record.doc)
            ends[removed][identifier] = (props.get("statementCode"), _named(props))
    for row, doc in zip(batch, docs, strict=True):
        known = ends[doc["change"] == REMOVED]
        for side in ("source", "target"):
            code, name = known.get(doc[f"{side}Identifier"], (None, None))
            doc[f"{side}Code"], doc[f"{side}Name"] = code, name
        yield (*row[:5], orjson.dumps(doc), row[6])


def compute(older: Store, newer: Store, changes: ChangeStore, pair: str) -> dict[str, Any]:
    """Write the pair's changes in batches (claimed by the caller); their counts."""
    counts: dict[str, dict[str, int]] = {}
    batch: list[ChangeRow] = []
    for row in diff(older, newer):
        per = counts.setdefault(row[2], dict.fromkeys(CHANGES, 0))
        per[row[3]] += 1
        batch.append(row)
        if len(batch) >= _BATCH:
            changes.add(pair, batch)
            batch = []
    if batch:
        changes.add(pair, batch)
    return dict(sorted(counts.items()))


def ensure(
    releases: Releases, changes: ChangeStore, older: str, newer: str, wait: float = 0.0
) -> ChangeOutcome:
    """The changes from release `older` to release `newer`: kept ones, or computed now.

    LookupError when a release is not kept; ChangesPending when another process is
    computing them (after waiting up to `wait` seconds for it to finish).
    """
    started = time.monotonic()
    stores = [releases.store(v) for v in (older, newer)]
    infos = [s.info() if s is not None else None for s in stores]
    if infos[0] is None or infos[1] is None or stores[0] is None or stores[1] is None:
        kept = ", ".join(r.data_version for r in releases.list()) or "none"
        missing = older if infos[0] is None else newer
        raise LookupError(f"no release {missing!r} is kept here (kept: {kept})")
    pair = pair_name(infos[0].content_id, infos[1].content_id)
    outcome = ChangeOutcome(older, newer, pair)
    if infos[0].content_id == infos[1].content_id:
        return outcome  # the same records: nothing changed
    while changes.state(pair) != "complete":
        if changes.claim(pair):
            try:
                outcome.counts = compute(stores[0], stores[1], changes, pair)
            except BaseException:
                changes.abandon(pair)
                raise
            changes.finish(pair, outcome.counts)
            outcome.computed = True
            outcome.seconds = time.monotonic() - started
            return outcome
        if time.monotonic() - started >= wait:
            raise ChangesPending(f"the changes from {older} to {newer} are being computed")
        time.sleep(0.5)
    outcome.counts = changes.counts(pair) or {}
    outcome.seconds = time.monotonic() - started
    return outcome
