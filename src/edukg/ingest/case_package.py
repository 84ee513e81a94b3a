"""Reading a CASE package (CFPackage, CASE 1.0 or 1.1): what is sound, and what is not.

Packages in the wild have slips: numbers where strings belong, missing optional fields,
unknown keys, duplicate identifiers. A package is read leniently: every sound document,
item and association is kept, every slip is counted and named by its JSON path in
`Package.problems`; the load fails only when the JSON is broken or there is no
CFDocument or no CFItem (docs/data.md, "CASE").
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from edukg.ingest.errors import LoadError
from edukg.ingest.limits import MAX_PACKAGE_MB
from edukg.model.vocabulary import UUID_PATTERN

_DOCUMENT_KEYS = frozenset(
    [
        "identifier",
        "uri",
        "creator",
        "title",
        "lastChangeDateTime",
        "officialSourceURL",
        "publisher",
        "description",
        "subject",
        "subjectURI",
        "language",
        "version",
        "adoptionStatus",
        "statusStartDate",
        "statusEndDate",
        "licenseURI",
        "notes",
        "frameworkType",
        "caseVersion",
        "extensions",
        "CFPackageURI",
    ]
)
_ITEM_KEYS = frozenset(
    [
        "identifier",
        "fullStatement",
        "alternativeLabel",
        "CFItemType",
        "uri",
        "humanCodingScheme",
        "listEnumeration",
        "abbreviatedStatement",
        "conceptKeywords",
        "conceptKeywordsURI",
        "notes",
        "language",
        "educationLevel",
        "CFItemTypeURI",
        "licenseURI",
        "statusStartDate",
        "statusEndDate",
        "lastChangeDateTime",
        "subject",
        "subjectURI",
        "extensions",
        "CFDocumentURI",
    ]
)
_ASSOCIATION_KEYS = frozenset(
    [
        "identifier",
        "associationType",
        "sequenceNumber",
        "uri",
        "originNodeURI",
        "destinationNodeURI",
        "CFAssociationGroupingURI",
        "lastChangeDateTime",
        "notes",
        "extensions",
        "CFDocumentURI",
    ]
)
_TEXT_FIELDS = frozenset(
    [
        "uri",
        "creator",
        "title",
        "publisher",
        "description",
        "language",
        "version",
        "adoptionStatus",
        "notes",
        "fullStatement",
        "alternativeLabel",
        "CFItemType",
        "humanCodingScheme",
        "listEnumeration",
        "abbreviatedStatement",
        "associationType",
        "lastChangeDateTime",
        "statusStartDate",
        "statusEndDate",
        "officialSourceURL",
        "frameworkType",
        "caseVersion",
    ]
)


@dataclass
class Package:
    """The sound parts of one CFPackage, and the slips found on the way."""

    name: str  # the file or URL, for messages
    case_version: str  # "1.1" or "1.0"
    document: dict[str, Any]
    items: list[dict[str, Any]]
    associations: list[dict[str, Any]]
    definitions: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)

    def license(self, link: Any) -> dict[str, Any] | None:
        """The CFLicense a `licenseURI` link names, or the link itself."""
        if not isinstance(link, dict):
            return None
        for known in self.definitions.get("CFLicenses", []):
            if known.get("identifier") == link.get("identifier"):
                return known
        return link


def looks_like_package(path: Path) -> bool:
    """Whether a file is a CASE package rather than an export file, told by its content.

    An export file is JSON lines (or gzip): its first line is a whole object with a
    `type`. A package is one JSON object, usually spread over many lines.
    """
    with open(path, "rb") as f:
        head = f.read(1 << 16)
    if head[:2] == b"\x1f\x8b":
        return False
    if head.lstrip()[:1] == b"<":  # an HTML page: read_package says so
        return True
    first = head.lstrip().split(b"\n", 1)[0]
    try:
        record = orjson.loads(first)
    except orjson.JSONDecodeError:
        return head.lstrip()[:1] == b"{"
    return isinstance(record, dict) and "type" not in record


def read_package(path: Path, name: str, limit: int = MAX_PACKAGE_MB << 20) -> Package:
    """The package in `path`, up to `limit` bytes; a LoadError when it is not one at all."""
    size = path.stat().st_size
    if size > limit:
        raise LoadError(
            f"{name}: {size / (1 << 20):,.0f} MiB is over the CASE package limit of"
            f" {limit >> 20:,} MiB (a load needs about 8 times a package's size in memory;"
            " edukg load --max-package-mb raises it); nothing was changed"
        )
    body = _parsed(path, name)
    if not isinstance(body, dict):
        raise LoadError(f"{name}: a CASE package is one JSON object")
    _refuse_error_body(body, name)
    return _package(body, name)


def _parsed(path: Path, name: str) -> Any:
    raw = path.read_bytes()
    if raw.lstrip()[:1] == b"<":
        raise LoadError(f"{name}: an HTML page, not a CASE package or an export file")
    try:
        return orjson.loads(raw)  # the bytes go as this returns, before the objects grow
    except orjson.JSONDecodeError as exc:
        raise LoadError(f"{name}: not valid JSON ({exc})") from None


def _refuse_error_body(body: dict[str, Any], name: str) -> None:
    status = body.get("imsx_StatusInfo", body)
    if isinstance(status, dict) and "imsx_codeMajor" in status:
        minor = status.get("imsx_codeMinor")
        detail = status.get("imsx_description") or minor or status.get("imsx_codeMajor")
        raise LoadError(f"{name}: the CASE server answered with an error ({detail!s:.200})")


def _package(body: dict[str, Any], name: str) -> Package:
    problems: list[str] = []
    document = body.get("CFDocument")
    if not isinstance(document, dict) or not isinstance(document.get("identifier"), str):
        raise LoadError(f"{name}: no CFDocument with an identifier: not a CASE package")
    document = _clean(document, "$.CFDocument", _DOCUMENT_KEYS, problems)
    if not _is_uuid(document.get("identifier")):
        raise LoadError(f"{name}: $.CFDocument.identifier is not a UUID")
    items = _objects(body, "CFItems", _ITEM_KEYS, problems, ("identifier", "fullStatement"))
    if not items:
        raise LoadError(f"{name}: the package holds no usable CFItems; nothing was changed")
    associations = _objects(
        body,
        "CFAssociations",
        _ASSOCIATION_KEYS,
        problems,
        ("identifier", "associationType", "originNodeURI", "destinationNodeURI"),
    )
    definitions = body.get("CFDefinitions")
    kept: dict[str, list[dict[str, Any]]] = {}
    if isinstance(definitions, dict):
        for key, value in definitions.items():
            if isinstance(value, list):
                kept[key] = [v for v in value if isinstance(v, dict)]
    version = "1.1" if document.get("caseVersion") == "1.1" else "1.0"
    unknown = set(body) - {"CFDocument", "CFItems", "CFAssociations", "CFDefinitions", "CFRubrics"}
    problems += [f"$.{key}: unknown key, ignored" for key in sorted(unknown)]
    return Package(name, version, document, items, associations, kept, problems)


def _objects(
    body: dict[str, Any],
    key: str,
    known: frozenset[str],
    problems: list[str],
    required: tuple[str, ...],
) -> list[dict[str, Any]]:
    given = body.get(key)
    if given is None:
        return []
    if not isinstance(given, list):
        problems.append(f"$.{key}: not a list, ignored")
        return []
    seen: set[str] = set()
    out = []
    for i, raw in enumerate(given):
        where = f"$.{key}[{i}]"
        if not isinstance(raw, dict):
            problems.append(f"{where}: not an object, skipped")
            continue
        record = _clean(raw, where, known, problems)
        missing = [r for r in required if not record.get(r)]
        if missing:
            problems.append(f"{where}: no {', '.join(missing)}, skipped")
            continue
        identifier = record["identifier"]
        if not _is_uuid(identifier):
            problems.append(f"{where}.identifier: not a UUID ({identifier!s:.60}), skipped")
            continue
        if identifier.lower() in seen:
            problems.append(f"{where}.identifier: duplicate {identifier}, skipped")
            continue
        seen.add(identifier.lower())
        out.append(record)
    return out


def _clean(
    raw: dict[str, Any], where: str, known: frozenset[str], problems: list[str]
) -> dict[str, Any]:
    """Known keys only; numbers where text belongs made text; identifiers lower case.
    In place: a large package is not held twice."""
    for key, given in list(raw.items()):
        value = None
        if key not in known:
            problems.append(f"{where}.{key}: unknown key, ignored")
        else:
            value = _value(key, given, where, problems)
        if value is None:
            del raw[key]
        elif value is not given:
            raw[key] = value
    if isinstance(raw.get("identifier"), str):
        raw["identifier"] = raw["identifier"].strip().lower()
    return raw


def _value(key: str, value: Any, where: str, problems: list[str]) -> Any:
    """The value to keep for one key, or None to leave it out."""
    if value is None or value == "":
        return None
    if key in _TEXT_FIELDS and isinstance(value, int | float) and not isinstance(value, bool):
        problems.append(f"{where}.{key}: a number where text belongs, read as text")
        return _number_text(value)
    if key == "sequenceNumber" and isinstance(value, str):
        if not value.strip().lstrip("-").isdigit():
            problems.append(f"{where}.sequenceNumber: not a number, ignored")
            return None
        problems.append(f"{where}.sequenceNumber: a string where a number belongs")
        return int(value)
    if key in _TEXT_FIELDS and not isinstance(value, str):
        problems.append(f"{where}.{key}: not text, ignored")
        return None
    return value


def _number_text(value: float) -> str:
    return str(int(value)) if isinstance(value, float) and value.is_integer() else str(value)


def _is_uuid(value: Any) -> bool:
    return isinstance(value, str) and bool(UUID_PATTERN.match(value))
