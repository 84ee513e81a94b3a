"""CASE packages in a load: identity against the export, revisions, and the lines to load.

The packages become export lines (`case_map`) that join the export's own in one load.
Identity: an imported item whose CASE identifier matches a node of the export keeps that
node's identifier (its learning components, crosswalks and curriculum stay attached),
with the package's values for the fields CASE carries and the export's for the rest. A
package whose CFDocument matches a framework of the export is a newer revision of it: the
export's items of that framework and its hierarchy give way to the package's.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import orjson

from edukg.ingest.case_map import framework_properties, item_properties
from edukg.ingest.case_map import relationship as association_relationship
from edukg.ingest.case_package import Package
from edukg.ingest.errors import LoadError
from edukg.ingest.normalize import BadValue, typed
from edukg.ingest.reader import Progress, Source, read_lines, sourced_lines
from edukg.model.case_ids import case_identifier

Lines = Iterable[tuple[int, bytes]]
_STANDARD_LABELS = frozenset({"StandardsFramework", "StandardsFrameworkItem"})
# The fields CASE carries: a matched item counts as changed when one of them differs.
_CASE_FIELDS = ("statementCode", "description", "name", "statementType", "gradeLevel")


@dataclass
class PackageOutcome:
    """What one package did to the graph, for the load summary."""

    name: str
    framework: str
    case_version: str
    items: int
    associations: int
    added: int = 0
    removed: int = 0
    changed: int = 0
    revision_of_export: bool = False
    problems: list[str] = field(default_factory=list)


@dataclass
class _ExportNode:
    identifier: str
    label: str
    properties: dict[str, Any] | None  # kept only for nodes a package names


@dataclass
class ExportIndex:
    """What a pass over the export learnt: its frameworks and items by CASE identifier,
    and its hierarchy (only when a package revises one of its frameworks)."""

    by_case: dict[str, _ExportNode] = field(default_factory=dict)
    children: dict[str, list[str]] = field(default_factory=dict)

    def below(self, root: str) -> set[str]:
        """Every node reachable from `root` by hasChild."""
        seen: set[str] = set()
        stack = [root]
        while stack:
            for child in self.children.get(stack.pop(), ()):
                if child not in seen:
                    seen.add(child)
                    stack.append(child)
        return seen


def index_export(
    nodes: Iterable[Lines], relationships: Iterable[Lines], wanted: set[str]
) -> ExportIndex:
    """One pass over the export's standards nodes (and, when a package's document is one
    of its frameworks, its hasChild edges)."""
    index = ExportIndex()
    revised = False
    for lines in nodes:
        for _, line in lines:
            # Cheap tests first: only node lines have "labels" (relationships: "source_labels").
            if b'"labels"' not in line or b'"StandardsFramework' not in line:
                continue
            record = orjson.loads(line)
            props = record.get("properties") or {}
            case_id = props.get("caseIdentifierUUID")
            label = next((x for x in record.get("labels", ()) if x in _STANDARD_LABELS), None)
            if not isinstance(case_id, str) or label is None:
                continue
            case_id = case_id.lower()
            keep = props if case_id in wanted else None
            index.by_case[case_id] = _ExportNode(record["identifier"], label, keep)
            revised = revised or (keep is not None and label == "StandardsFramework")
    if revised:
        for lines in relationships:
            for _, line in lines:
                if b'"hasChild"' in line:
                    record = orjson.loads(line)
                    if record.get("label") == "hasChild":
                        source, target = record["source_identifier"], record["target_identifier"]
                        index.children.setdefault(source, []).append(target)
    return index


@dataclass
class CaseImport:
    """The packages of one load, resolved against the export: the lines they add and the
    export lines they replace."""

    packages: list[Package]
    export: ExportIndex
    outcomes: list[PackageOutcome] = field(default_factory=list)
    _skip_nodes: set[str] = field(default_factory=set)
    _replaced_parents: set[str] = field(default_factory=set)
    _ids: dict[str, str] = field(default_factory=dict)
    _records: list[tuple[str, list[bytes]]] = field(default_factory=list)

    def __post_init__(self) -> None:
        for package in self.packages:
            for obj in (*package.items, package.document):  # the document's own id wins
                self._ids[obj["identifier"]] = self._identifier_of(obj)
        # Mapped before any export line passes: which of those give way is known then.
        now = datetime.now(UTC)
        for package in self.packages:
            self._records.append((package.name, self._mapped(package, now)))
            # Mapped to lines: the parsed objects go now, not at the end of the load (a
            # large package's objects weigh many times its bytes; docs/data.md, "CASE").
            package.items, package.associations = [], []

    def _identifier_of(self, obj: dict[str, Any]) -> str:
        known = self.export.by_case.get(obj["identifier"])
        if known is not None:
            return known.identifier
        return case_identifier(obj.get("uri") or obj["identifier"])

    def _endpoint(self, link: Any) -> str | None:
        if not isinstance(link, dict):
            return None
        case_id = str(link.get("identifier") or "").lower()
        if case_id in self._ids:
            return self._ids[case_id]
        known = self.export.by_case.get(case_id)
        if known is not None:
            return known.identifier
        uri = link.get("uri") or case_id
        return case_identifier(uri) if uri else None

    def package_lines(self) -> Iterator[tuple[str, Lines]]:
        """(name, lines) of each package, in the export's line format."""
        for name, records in self._records:
            yield name, enumerate(records, start=1)

    def _mapped(self, package: Package, now: datetime) -> list[bytes]:
        framework = framework_properties(package, now)
        outcome = PackageOutcome(
            package.name,
            str(framework.get("name") or package.document["identifier"]),
            package.case_version,
            len(package.items),
            0,
            problems=list(package.problems),
        )
        self.outcomes.append(outcome)
        records = [_line(self._node(package.document, "StandardsFramework", framework))]
        previous = self._revised(package, outcome)
        refused: set[str] = set()
        for i, item in enumerate(package.items):
            reason = self._foreign(item, package, previous)
            if reason is not None:
                outcome.problems.append(f"$.CFItems[{i}]: {reason}; the item was not loaded")
                if item["identifier"] != package.document["identifier"]:  # ends there: the doc
                    refused.add(item["identifier"])
                continue
            props = item_properties(item, framework)
            records.append(_line(self._node(item, "StandardsFrameworkItem", props)))
            if item["identifier"] in self.export.by_case:
                outcome.changed += self._differs(item["identifier"], props)
            else:
                outcome.added += 1
        _report_unplaced(package, refused, outcome)
        kept = {self._ids[i["identifier"]] for i in package.items if i["identifier"] not in refused}
        outcome.removed = len(previous - kept)
        for i, assoc in enumerate(package.associations):
            if _ends(assoc) & refused:
                outcome.problems.append(f"$.CFAssociations[{i}]: an end is a refused item")
                continue
            source = self._endpoint(assoc.get("originNodeURI"))
            target = self._endpoint(assoc.get("destinationNodeURI"))
            if source is None or target is None:
                outcome.problems.append(f"$.CFAssociations[{i}]: an end without an identifier")
                continue
            records.append(_line(association_relationship(assoc, source, target)))
            outcome.associations += 1
        return records

    def _foreign(self, item: dict[str, Any], package: Package, own: set[str]) -> str | None:
        """Why an item may not be loaded, or None: its identifier is the package's own
        document's, or names a framework or another framework's item already loaded (a
        package changes its own framework and nothing else)."""
        case_id = item["identifier"]
        if case_id == package.document["identifier"]:
            return f"its identifier {case_id} is the package's own CFDocument's"
        known = self.export.by_case.get(case_id)
        if known is None or known.identifier in own:
            return None
        what = "a framework" if known.label == "StandardsFramework" else "another framework's item"
        return f"its identifier {case_id} belongs to {what} already loaded"

    def _revised(self, package: Package, outcome: PackageOutcome) -> set[str]:
        """The export items of the framework this package revises (none if it is new)."""
        revised = self.export.by_case.get(package.document["identifier"])
        if revised is None or revised.label != "StandardsFramework":
            return set()
        outcome.revision_of_export = True
        previous = self.export.below(revised.identifier)
        self._replaced_parents |= previous | {revised.identifier}
        self._skip_nodes |= previous | {revised.identifier}
        return previous

    def _node(self, obj: dict[str, Any], label: str, props: dict[str, Any]) -> dict[str, Any]:
        identifier = self._ids[obj["identifier"]]
        known = self.export.by_case.get(obj["identifier"])
        if known is not None:
            self._skip_nodes.add(identifier)
            if known.properties is not None:  # the export's values for what CASE lacks
                props = {**known.properties, **props}
        props = {**props, "identifier": identifier}
        return {"type": "node", "identifier": identifier, "labels": [label], "properties": props}

    def _differs(self, case_id: str, props: dict[str, Any]) -> int:
        known = self.export.by_case.get(case_id)
        if known is None or known.properties is None:
            return 0
        try:
            before = typed(known.properties)
        except BadValue:
            return 1
        return int(any(k in props and before.get(k) != props[k] for k in _CASE_FIELDS))

    def export_lines(self, lines: Lines) -> Iterator[tuple[int, bytes]]:
        """The export's lines without those the packages replace: the nodes they claim and
        the hierarchy of the frameworks they revise."""
        for number, line in lines:
            if self._skip_nodes or self._replaced_parents:
                record = orjson.loads(line)
                if record.get("type") == "node":
                    if record.get("identifier") in self._skip_nodes:
                        continue
                elif (
                    record.get("label") == "hasChild"
                    and record.get("source_identifier") in self._replaced_parents
                ):
                    continue
            yield number, line


def _line(record: dict[str, Any]) -> bytes:
    """A record as one export line, in bytes of its own size: what `orjson.dumps` returns
    keeps the 4 KiB or more it was built in, which for a package's every record held
    would weigh several times the package (docs/benchmarks.md)."""
    return bytes(memoryview(orjson.dumps(record)))


def _ends(assoc: dict[str, Any]) -> set[str]:
    """The CASE identifiers an association names at its two ends."""
    ends = (assoc.get("originNodeURI"), assoc.get("destinationNodeURI"))
    return {str(e.get("identifier") or "").lower() for e in ends if isinstance(e, dict)}


_UNPLACED_SHOWN = 20


def _report_unplaced(package: Package, refused: set[str], outcome: PackageOutcome) -> None:
    """Report the items no isChildOf association places in the framework: they load, and
    are found by identifier and search, but no listing of the framework or its CFPackage
    reaches them."""
    placed = {
        str(a["originNodeURI"].get("identifier") or "").lower()
        for a in package.associations
        if a.get("associationType") == "isChildOf" and isinstance(a.get("originNodeURI"), dict)
    }
    unplaced = [
        i for i, item in enumerate(package.items)
        if item["identifier"] not in placed and item["identifier"] not in refused
        and item["identifier"] != package.document["identifier"]
    ]  # fmt: skip
    for i in unplaced[:_UNPLACED_SHOWN]:
        outcome.problems.append(
            f"$.CFItems[{i}]: no isChildOf association places it in the framework; it is"
            " loaded, but neither the framework's listing nor its CFPackage shows it"
        )
    if len(unplaced) > _UNPLACED_SHOWN:
        outcome.problems.append(
            f"{len(unplaced) - _UNPLACED_SHOWN} more items without an isChildOf association"
        )


def import_lines(
    packages: list[Package], export: list[Source], progress: Progress | None
) -> tuple[CaseImport | None, Iterator[tuple[str, Iterable[tuple[int, bytes]]]]]:
    """What a load reads, by source (reader.sourced_lines), and what importing `packages` beside
    `export` needs (None without packages: the export's records the packages name,
    read once to index them)."""
    case = _prepared(packages, export)
    if case is None:
        return None, sourced_lines(export, progress)
    return case, sourced_lines(export, progress, case.export_lines, case.package_lines())


def _prepared(packages: list[Package], export: list[Source]) -> CaseImport | None:
    if not packages:
        return None
    if any(not f.path.is_file() for f in export):
        raise LoadError("with CASE packages, the export must be files (a pipe is read once)")
    wanted = {p.document["identifier"] for p in packages}
    wanted |= {i["identifier"] for p in packages for i in p.items}
    index = index_export((read_lines(f) for f in export), (read_lines(f) for f in export), wanted)
    return CaseImport(packages, index)
