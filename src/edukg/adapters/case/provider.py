"""The CASE operations: each reads the loaded graph through the store and answers with
CASE JSON, as a list of encoded pieces (one, for the large answers) that the app joins."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any

import orjson

from edukg.adapters.case import objects
from edukg.adapters.case.errors import CaseError
from edukg.adapters.case.listing import listing
from edukg.adapters.case.objects import Place
from edukg.model.vocabulary import FRAMEWORK, STANDARD, UUID_PATTERN, stated
from edukg.services import case_reads as reads
from edukg.services import graph as service
from edukg.store.base import Edge, Found, Store

COLLECTIONS = (
    "CFDocuments", "CFPackages", "CFItems", "CFItemAssociations", "CFAssociations",
    "CFItemTypes", "CFSubjects", "CFLicenses", "CFConcepts", "CFAssociationGroupings",
    "CFRubrics",
)  # fmt: skip
EXPENSIVE = frozenset({"CFPackages", "CFItemAssociations"})
_PAGE = 1000


@dataclass(frozen=True)
class CaseRequest:
    """One CASE request: the collection, the object (None for the CFDocuments list)."""

    collection: str
    sourced_id: str | None
    query: dict[str, list[str]]


def answer(store: Store, place: Place, request: CaseRequest) -> list[bytes]:
    """The body of a CASE answer, in pieces; a CaseError when there is none."""
    if request.sourced_id is None:
        return [_documents(store, place, request.query)]
    sourced_id = request.sourced_id.lower()
    if not UUID_PATTERN.match(sourced_id):
        raise CaseError(400, "invalid_uuid", f"{request.sourced_id[:80]!r} is not a UUID")
    return _BY_ID[request.collection](store, place, sourced_id)


def _not_found(what: str, sourced_id: str) -> CaseError:
    return CaseError(404, "unknownobject", f"No {what} with identifier {sourced_id}.")


def _record(found: Found) -> dict[str, Any]:
    record: dict[str, Any] = orjson.loads(found.doc)
    return record


def _documents(store: Store, place: Place, query: dict[str, list[str]]) -> bytes:
    wanted = listing(query)
    docs, after = [], None
    while True:
        page = service.frameworks(store, None, None, None, True, after, _PAGE)
        rows = page.rows[:_PAGE]  # the one beyond says only that more follow
        docs += [objects.document(orjson.loads(d), place, False) for _, d in rows]
        if len(page.rows) <= _PAGE:
            break
        after = rows[-1][0]
    chosen = wanted.apply(docs)
    if not chosen:  # a CFDocumentSet holds at least one: nothing is unknownobject
        raise CaseError(404, "unknownobject", "No CFDocument matches the request.")
    return orjson.dumps({"CFDocuments": chosen})


def _by_case(store: Store, sourced_id: str, kind: str, what: str) -> Found:
    found = reads.by_case_uuid(store, sourced_id, kind)
    if found is None:
        raise _not_found(what, sourced_id)
    return found


def _framework(store: Store, sourced_id: str) -> Found:
    return _by_case(store, sourced_id, FRAMEWORK, "CFDocument")


def _document(store: Store, place: Place, sourced_id: str) -> list[bytes]:
    return [orjson.dumps(objects.document(_record(_framework(store, sourced_id)), place, False))]


def _document_link(store: Store, place: Place, case_uuid: str) -> dict[str, str] | None:
    """A link to the framework of an item (the top of its hasChild chain)."""
    chain = service.ancestors(store, case_uuid)
    if not chain:
        return None
    top = orjson.loads(chain[0])
    return {
        "title": str(top.get("name") or ""),
        "identifier": top["caseIdentifierUUID"],
        "uri": top.get("caseIdentifierURI") or place.uri("CFDocuments", top["caseIdentifierUUID"]),
    }


def _standard(store: Store, sourced_id: str) -> Found:
    return _by_case(store, sourced_id, STANDARD, "CFItem")


def _item(store: Store, place: Place, sourced_id: str) -> list[bytes]:
    record = _record(_standard(store, sourced_id))
    link = _document_link(store, place, sourced_id) or objects.node_link(record, place)
    return [orjson.dumps(objects.item(record, place, link))]


def _associations(
    store: Store, place: Place, nodes: dict[str, dict[str, Any]], link: dict[str, str] | None
) -> Iterator[bytes]:
    """Every association of these nodes (by node identifier), each once, encoded."""
    edges = reads.edges_of(store, list(nodes))
    outside = {e for edge in edges for e in (edge.source, edge.target) if e not in nodes}
    ends = dict(nodes)
    ends.update({i: _record(f) for i, f in reads.records(store, list(outside)).items()})
    built = (objects.association(edge, ends, place, link) for edge in _once_per_pair(edges))
    return (orjson.dumps(obj) for obj in built if obj is not None)


def _once_per_pair(edges: list[Edge]) -> list[Edge]:
    """relatesTo runs both ways in the export: one association per pair."""
    seen: set[tuple[str, str]] = set()
    out = []
    for edge in edges:
        if edge.label == "relatesTo":
            pair = (min(edge.source, edge.target), max(edge.source, edge.target))
            if pair in seen:
                continue
            seen.add(pair)
        out.append(edge)
    return out


def _item_associations(store: Store, place: Place, sourced_id: str) -> list[bytes]:
    found = _standard(store, sourced_id)
    record = _record(found)
    link = _document_link(store, place, sourced_id) or objects.node_link(record, place)
    out = bytearray(b'{"CFItem":')
    out += orjson.dumps(objects.item(record, place, link)) + b',"CFAssociations":['
    if not _array(out, _associations(store, place, {found.identifier: record}, None)):
        raise _not_found("CFAssociation of the CFItem", sourced_id)  # a set holds one at least
    out += b"]}"
    return [bytes(out)]


def _array(out: bytearray, pieces: Iterable[bytes]) -> int:
    """Append a JSON array's inside (commas between the pieces); how many there were.

    Into one buffer, piece by piece: what `orjson.dumps` returns keeps the 4 KiB or more
    it was built in, so a package's 100,000 pieces held in a list would weigh half a GiB.
    """
    count = 0
    for piece in pieces:
        if count:
            out += b","
        out += piece
        count += 1
    return count


def _package(store: Store, place: Place, sourced_id: str) -> list[bytes]:
    framework = _framework(store, sourced_id)
    record = _record(framework)
    document = objects.document(record, place, True)
    items = reads.members(store, framework.identifier)
    item_link = None  # both descriptions' package shapes leave CFDocumentURI out
    out = bytearray(b'{"CFDocument":')
    out += orjson.dumps(document) + b',"CFItems":['
    _array(out, (orjson.dumps(objects.item(r, place, item_link)) for r in items.values()))
    out += b'],"CFAssociations":['
    nodes = {framework.identifier: record, **items}
    _array(out, _associations(store, place, nodes, item_link))
    out += b'],"CFDefinitions":' + orjson.dumps(_definitions(record, items.values(), place)) + b"}"
    return [bytes(out)]


def _definitions(
    framework: dict[str, Any], items: Any, place: Place
) -> dict[str, list[dict[str, Any]]]:
    """The item types, subjects and licenses a package names."""
    types = sorted({r["statementType"] for r in items if r.get("statementType")})
    subject = framework.get("caseSubject") or framework.get("academicSubject")
    subjects = subject if isinstance(subject, list) else [subject] if subject else []
    licenses = [framework["license"]] if stated(framework.get("license")) else []
    return {
        "CFConcepts": [],
        "CFSubjects": [objects.definition("CFSubjects", s, place) for s in subjects],
        "CFLicenses": [objects.definition("CFLicenses", x, place) for x in licenses],
        "CFItemTypes": [objects.definition("CFItemTypes", t, place) for t in types],
        "CFAssociationGroupings": [],
    }


def _association(store: Store, place: Place, sourced_id: str) -> list[bytes]:
    edges = reads.edges(store, [sourced_id])
    if not edges:
        raise _not_found("CFAssociation", sourced_id)
    ends = {
        i: _record(f) for i, f in reads.records(store, [edges[0].source, edges[0].target]).items()
    }
    return [orjson.dumps(objects.association(edges[0], ends, place, None))]


def _definition_of(kind: str, wrap: bool) -> Callable[[Store, Place, str], list[bytes]]:
    def lookup(store: Store, place: Place, sourced_id: str) -> list[bytes]:
        named = reads.definition(store, sourced_id)
        if not named or named.get("kind") != kind:
            raise _not_found(kind[:-1], sourced_id)
        obj = objects.definition(kind, named["name"], place)
        return [orjson.dumps({kind: [obj]} if wrap else obj)]

    return lookup


def _none_held(kind: str) -> Callable[[Store, Place, str], list[bytes]]:
    def lookup(_store: Store, _place: Place, sourced_id: str) -> list[bytes]:
        raise _not_found(kind, sourced_id)

    return lookup


_BY_ID: dict[str, Callable[[Store, Place, str], list[bytes]]] = {
    "CFDocuments": _document,
    "CFPackages": _package,
    "CFItems": _item,
    "CFItemAssociations": _item_associations,
    "CFAssociations": _association,
    "CFItemTypes": _definition_of("CFItemTypes", True),
    "CFSubjects": _definition_of("CFSubjects", True),
    "CFLicenses": _definition_of("CFLicenses", False),
    "CFConcepts": _none_held("CFConcept"),
    "CFAssociationGroupings": _none_held("CFAssociationGrouping"),
    "CFRubrics": _none_held("CFRubric"),
}
