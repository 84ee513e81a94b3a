"""The graph's records as CASE objects: the import's mapping read backwards.

A StandardsFramework is a CFDocument, a StandardsFrameworkItem a CFItem, a relationship
between standards a CFAssociation (docs/data.md, "CASE"). Objects keep the CASE values an
import stored (`case...` fields); what edukg itself serves gets a `uri` under the
configured public URL, never one from the request's Host header.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

import orjson

from edukg.model.case_ids import (
    CASE_TYPES,
    CROSSWALK_EXTENSION,
    CROSSWALK_FIGURES,
    CROSSWALK_LABEL,
    LABEL_OF_TYPE,
    definition_id,
    edge_id,
)
from edukg.model.vocabulary import UUID_PATTERN, stated
from edukg.store.base import Edge

V1P1, V1P0 = "v1p1", "v1p0"
# The import's correspondence read backwards; a crosswalk is an isRelatedTo too.
_TYPE_OF_LABEL = {label: (kind, reverse) for kind, (label, reverse) in LABEL_OF_TYPE.items()}
_TYPE_OF_LABEL[CROSSWALK_LABEL] = ("isRelatedTo", False)
# CASE 1.0 knows these; an association of another type is left out of /v1p0 answers.
V1P0_TYPES = CASE_TYPES - {"isTranslationOf"}
_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
_CASE_GRADES = {"K": "KG", "PK": "PK"}
# Keys each version's shapes allow beyond the common ones.
_ONLY_V1P1 = frozenset({"caseVersion", "frameworkType", "extensions", "subject", "subjectURI"})


@dataclass(frozen=True)
class Place:
    """Where the objects live: the public base URL, the CASE version, the load time."""

    base: str  # e.g. https://standards.example.org (no trailing slash)
    version: str  # V1P1 or V1P0
    loaded_at: str

    def uri(self, collection: str, identifier: str) -> str:
        """The URI of an object edukg serves itself."""
        return f"{self.base}/ims/case/{self.version}/{collection}/{identifier}"

    def link(self, collection: str, identifier: str, title: str) -> dict[str, str]:
        """A LinkURI to an object edukg serves."""
        return {"title": title, "identifier": identifier, "uri": self.uri(collection, identifier)}

    def when(self, value: Any) -> str:
        """A CASE date-time: the record's date, else the load time."""
        if isinstance(value, str) and _DATE.match(value):
            return f"{value}T00:00:00+00:00"
        if isinstance(value, str) and len(value) >= 19 and value[4] == "-":
            return value
        return self.loaded_at


def _clean(obj: dict[str, Any], place: Place) -> dict[str, Any]:
    out = {k: v for k, v in obj.items() if v is not None and v != []}
    if place.version == V1P0:
        for key in _ONLY_V1P1:
            out.pop(key, None)
    return out


def definition(kind: str, name: str, place: Place) -> dict[str, Any]:
    """A CFItemType, CFSubject or CFLicense that edukg defines by name."""
    identifier = definition_id(kind, name)
    obj: dict[str, Any] = {
        "identifier": identifier,
        "uri": place.uri(kind, identifier),
        "title": name,
        "lastChangeDateTime": place.loaded_at,
    }
    if kind == "CFLicenses":
        obj["licenseText"] = name
    else:
        obj["hierarchyCode"] = "1"
        obj["description"] = name
    return obj


def _def_link(kind: str, name: Any, place: Place) -> dict[str, str] | None:
    if not isinstance(name, str) or not name.strip():
        return None
    return place.link(kind, definition_id(kind, name), name)


def document(record: dict[str, Any], place: Place, in_package: bool) -> dict[str, Any]:
    """A CFDocument (a package's, without CFPackageURI, when `in_package`)."""
    uuid = record["caseIdentifierUUID"]
    subject = record.get("caseSubject") or record.get("academicSubject")
    subjects = subject if isinstance(subject, list) else [subject] if subject else []
    obj = {
        "identifier": uuid,
        "uri": record.get("caseIdentifierURI") or place.uri("CFDocuments", uuid),
        "caseVersion": "1.1",
        "creator": stated(record.get("author")) or stated(record.get("provider")) or "unknown",
        "title": record.get("name") or uuid,
        "lastChangeDateTime": place.when(record.get("dateModified")),
        "officialSourceURL": record.get("caseOfficialSourceURL"),
        "publisher": stated(record.get("provider")),
        "description": record.get("description"),
        "subject": subjects,
        "subjectURI": [_def_link("CFSubjects", s, place) for s in subjects],
        "language": record.get("caseLanguage") or record.get("inLanguage"),
        "version": record.get("caseFrameworkVersion"),
        "adoptionStatus": record.get("caseAdoptionStatus") or record.get("adoptionStatus"),
        "statusStartDate": record.get("caseStatusStartDate"),
        "statusEndDate": record.get("caseStatusEndDate"),
        "licenseURI": _def_link("CFLicenses", stated(record.get("license")), place),
        "notes": record.get("notes"),
    }
    if not in_package:
        obj["CFPackageURI"] = place.link("CFPackages", uuid, str(obj["title"]))
    return _clean(obj, place)


def education_level(record: dict[str, Any]) -> list[str]:
    """The CASE educationLevel: as imported, else the API grades written CASE's way."""
    given = record.get("caseEducationLevel")
    if isinstance(given, list):
        return [str(v) for v in given]
    grades = record.get("gradeLevel") or []
    return [_CASE_GRADES.get(g, g.zfill(2) if g.isdigit() else g) for g in grades]


def item(
    record: dict[str, Any], place: Place, document_link: dict[str, str] | None
) -> dict[str, Any]:
    """A CFItem (with CFDocumentURI when `document_link` is given)."""
    uuid = record["caseIdentifierUUID"]
    subject = record.get("academicSubject")
    obj = {
        "identifier": uuid,
        "fullStatement": record.get("description") or record.get("name") or "",
        "alternativeLabel": record.get("caseAlternativeLabel"),
        "CFItemType": record.get("statementType"),
        "uri": record.get("caseIdentifierURI") or place.uri("CFItems", uuid),
        "humanCodingScheme": record.get("statementCode"),
        "listEnumeration": record.get("caseListEnumeration"),
        "abbreviatedStatement": record.get("name"),
        "notes": record.get("notes"),
        "subject": [subject] if subject else [],
        "language": record.get("caseLanguage") or record.get("inLanguage"),
        "educationLevel": education_level(record),
        "CFItemTypeURI": _def_link("CFItemTypes", record.get("statementType"), place),
        "licenseURI": _def_link("CFLicenses", stated(record.get("license")), place),
        "lastChangeDateTime": place.when(record.get("dateModified")),
        "CFDocumentURI": document_link,
    }
    return _clean(obj, place)


def node_link(record: dict[str, Any], place: Place) -> dict[str, str]:
    """A LinkGenURI to a framework or item of the graph."""
    uuid = record.get("caseIdentifierUUID") or record["identifier"]
    kind = "CFDocuments" if "isCurrent" in record and "statementCode" not in record else "CFItems"
    title = record.get("statementCode") or record.get("name") or record.get("description") or ""
    return {
        "title": str(title)[:200],
        "identifier": uuid,
        "uri": record.get("caseIdentifierURI") or place.uri(kind, uuid),
    }


def _kind_and_ends(edge: Edge, props: dict[str, Any]) -> tuple[str, str, str]:
    """(associationType, origin node, destination node) of a relationship."""
    if edge.label in _TYPE_OF_LABEL:
        kind, reverse = _TYPE_OF_LABEL[edge.label]
        return (kind, edge.target, edge.source) if reverse else (kind, edge.source, edge.target)
    kind = props.get("caseAssociationType") or edge.label
    known = kind in CASE_TYPES or str(kind).startswith("ext:")
    return (kind if known else f"ext:{kind}"), edge.source, edge.target


def association(
    edge: Edge,
    records: dict[str, dict[str, Any]],
    place: Place,
    document_link: dict[str, str] | None,
) -> dict[str, Any] | None:
    """A CFAssociation; `records` holds the ends edukg has (by node identifier). None
    for a type the version does not know (CASE 1.0: no extension types)."""
    line = orjson.loads(edge.line)
    props: dict[str, Any] = line.get("properties") or {}
    kind, origin, destination = _kind_and_ends(edge, props)
    if place.version == V1P0 and kind not in V1P0_TYPES:
        return None
    identifier = (
        edge.identifier if UUID_PATTERN.match(edge.identifier) else edge_id(edge.identifier)
    )
    ends = []
    for node, given in ((origin, "caseOrigin"), (destination, "caseDestination")):
        if given in props and isinstance(props[given], dict) and node not in records:
            ends.append({k: str(props[given].get(k) or "") for k in ("title", "identifier", "uri")})
        elif node in records:
            ends.append(node_link(records[node], place))
        else:
            ends.append({"title": "", "identifier": node, "uri": place.uri("CFItems", node)})
    obj: dict[str, Any] = {
        "identifier": identifier.lower(),
        "associationType": kind,
        "sequenceNumber": _integer(props.get("sequenceNumber")),
        "uri": props.get("caseIdentifierURI") or place.uri("CFAssociations", identifier),
        "originNodeURI": ends[0],
        "destinationNodeURI": ends[1],
        "lastChangeDateTime": place.when(props.get("dateModified") or props.get("dateCreated")),
        "CFDocumentURI": document_link,
    }
    if edge.label == CROSSWALK_LABEL:
        figures = {k: props[k] for k in CROSSWALK_FIGURES if props.get(k) is not None}
        obj["extensions"] = {CROSSWALK_EXTENSION: _numbers(figures)}
    return _clean(obj, place)


def _integer(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _numbers(figures: dict[str, Any]) -> dict[str, Any]:
    """The export writes the figures as strings: numbers again."""
    out: dict[str, Any] = {}
    for key, value in figures.items():
        try:
            number = float(value)
        except (TypeError, ValueError):
            continue
        out[key] = number if key == "jaccard" else int(number)
    return out
