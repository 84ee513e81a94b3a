"""The mapping from CASE to the graph: each rule in one function (docs/data.md, "CASE").

A CFDocument becomes a StandardsFramework node, a CFItem a StandardsFrameworkItem node,
and an association a relationship, all in the export's own line format, so that an
imported framework goes through the same load, derivations and operations as the
Knowledge Graph's.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from typing import Any

from edukg.ingest.case_package import Package
from edukg.model.case_ids import (
    CROSSWALK_EXTENSION,
    CROSSWALK_FIGURES,
    CROSSWALK_LABEL,
    LABEL_OF_TYPE,
)
from edukg.model.contract import ACADEMIC_SUBJECTS, ADOPTION_STATUSES, JURISDICTIONS

_STATES = sorted((j for j in JURISDICTIONS if j != "Multi-State"), key=len, reverse=True)
_STATE_PATTERNS = [(s, re.compile(rf"(?<![A-Za-z]){re.escape(s)}(?![A-Za-z])")) for s in _STATES]
_SUBJECTS = (  # first match wins: "social science" is not Science
    (re.compile(r"social (studies|science)|history|civics|geography|economics", re.I), 2),
    (re.compile(r"math", re.I), 1),
    (re.compile(r"english|language arts|\bela\b|reading|literacy|writing", re.I), 0),
    (re.compile(r"science|physics|chemistry|biology", re.I), 3),
)
_SUBJECT_VALUES = (
    ACADEMIC_SUBJECTS[0],  # English Language Arts
    ACADEMIC_SUBJECTS[1],  # Mathematics
    ACADEMIC_SUBJECTS[3],  # Social Studies
    ACADEMIC_SUBJECTS[2],  # Science
)
GROUPING_TYPES = frozenset(
    {
        "domain",
        "subdomain",
        "sub-domain",
        "cluster",
        "strand",
        "sub-strand",
        "substrand",
        "topic",
        "category",
        "conceptual category",
        "grade",
        "grade level",
        "course",
        "unit",
        "section",
        "heading",
        "big idea",
        "theme",
        "content area",
        "grouping",
        "standard grouping",
    }
)
STANDARD_TYPES = frozenset(
    {
        "standard",
        "component",
        "benchmark",
        "indicator",
        "expectation",
        "performance expectation",
        "student expectation",
        "objective",
        "learning target",
        "competency",
        "element",
        "sub-standard",
        "substandard",
        "performance indicator",
        "skill",
    }
)
_GRADE_WORDS = {"KG": "K", "K": "K", "PK": "PK", "PREK": "PK", "PRE-K": "PK"}
_LANGUAGES = {"en": "en-US", "en-us": "en-US", "es": "es-US", "es-us": "es-US"}
_ADOPTION = {s.lower(): s for s in ADOPTION_STATUSES} | {
    "private draft": "Draft",
    "public review": "Proposed",
    "deprecated": "Retired",
}


def jurisdiction_of(document: dict[str, Any]) -> str | None:
    """The longest whole-word state in the creator, then the publisher, then the title;
    'Common Core' anywhere is Multi-State; else None."""
    fields = [document.get(k) for k in ("creator", "publisher", "title")]
    for text in fields:
        if isinstance(text, str):
            for state, pattern in _STATE_PATTERNS:
                if pattern.search(text):
                    return state
    if any(isinstance(t, str) and "common core" in t.lower() for t in fields):
        return "Multi-State"
    return None


def subject_of(document: dict[str, Any]) -> str:
    """The contract's subject for the document's `subject` (else its title), else Other."""
    subject = document.get("subject")
    given = subject if isinstance(subject, list) else [subject]
    texts = [t for t in given if isinstance(t, str)] or [str(document.get("title") or "")]
    for text in texts:
        for pattern, index in _SUBJECTS:
            if pattern.search(text):
                return _SUBJECT_VALUES[index]
    return "Other"


def statement_type(item_type: Any) -> str:
    """The normalized statement type of a CFItemType (the table in docs/data.md)."""
    if not isinstance(item_type, str):
        return "Other"
    key = " ".join(item_type.lower().replace("_", " ").split())
    if key in GROUPING_TYPES:
        return "Standard Grouping"
    if key in STANDARD_TYPES:
        return "Standard"
    return "Other"


def grades(education_level: Any) -> tuple[list[str], list[str]]:
    """(the API's grades, the values with no API grade) of a CASE educationLevel."""
    values = education_level if isinstance(education_level, list) else [education_level]
    if isinstance(education_level, str) and "," in education_level:
        values = education_level.split(",")
    kept: list[str] = []
    other: list[str] = []
    for value in values:
        if value is None:
            continue
        text = str(value).strip().upper()
        grade = _GRADE_WORDS.get(text)
        if grade is None and text.isdigit() and 1 <= int(text) <= 12:
            grade = str(int(text))
        if grade is None:
            other.append(str(value).strip())
        elif grade not in kept:
            kept.append(grade)
    return kept, other


def _as_given(education_level: Any) -> list[str] | None:
    """The educationLevel as the package wrote it (`gradeLevel` holds the API's values),
    for the trip back out."""
    if education_level is None:
        return None
    values = education_level if isinstance(education_level, list) else [education_level]
    return [str(v).strip() for v in values if v is not None]


def language(value: Any) -> str | None:
    """The API's inLanguage for a CASE language tag."""
    return _LANGUAGES.get(value.lower()) if isinstance(value, str) else None


def is_current(document: dict[str, Any], now: datetime) -> bool:
    """Current unless its statusEndDate has passed."""
    end = document.get("statusEndDate")
    if not isinstance(end, str):
        return True
    try:
        ends = datetime.fromisoformat(end.replace("Z", "+00:00"))
    except ValueError:
        return True
    return (ends if ends.tzinfo else ends.replace(tzinfo=UTC)) > now


def framework_properties(package: Package, now: datetime) -> dict[str, Any]:
    """A StandardsFramework's properties from the package's CFDocument."""
    doc = package.document
    license_ = package.license(doc.get("licenseURI"))
    license_name = (license_ or {}).get("title") or (license_ or {}).get("uri")
    author, provider = doc.get("creator"), doc.get("publisher")
    attribution = None
    if doc.get("title"):
        attribution = f"{doc['title']} provided by {provider or author or 'its publisher'}"
        attribution += f" under the {license_name} license." if license_name else "."
    props = {
        "caseIdentifierUUID": doc["identifier"],
        "caseIdentifierURI": doc.get("uri"),
        "name": doc.get("title"),
        "description": doc.get("description"),
        "jurisdiction": jurisdiction_of(doc),
        "academicSubject": subject_of(doc),
        "inLanguage": language(doc.get("language")),
        "adoptionStatus": _ADOPTION.get(str(doc.get("adoptionStatus", "")).lower()),
        "dateModified": doc.get("lastChangeDateTime"),
        "notes": doc.get("notes"),
        "author": author,
        "provider": provider,
        "license": license_name,
        "attributionStatement": attribution,
        "isCurrent": is_current(doc, now),
        "caseVersion": package.case_version,
        "caseAdoptionStatus": doc.get("adoptionStatus"),
        "caseOfficialSourceURL": doc.get("officialSourceURL"),
        "caseFrameworkVersion": doc.get("version"),
        "caseLanguage": doc.get("language"),
        "caseSubject": doc.get("subject"),
        "caseStatusStartDate": doc.get("statusStartDate"),
        "caseStatusEndDate": doc.get("statusEndDate"),
    }
    return {k: v for k, v in props.items() if v is not None}


# What an item takes from its framework when it carries none of its own.
_INHERITED = ("jurisdiction", "academicSubject", "author", "provider", "license")


def item_properties(item: dict[str, Any], framework: dict[str, Any]) -> dict[str, Any]:
    """A StandardsFrameworkItem's properties from a CFItem and its framework's."""
    kept, _ = grades(item.get("educationLevel"))
    props: dict[str, Any] = {k: framework.get(k) for k in _INHERITED}
    props.update(
        {
            "caseIdentifierUUID": item["identifier"],
            "caseIdentifierURI": item.get("uri"),
            "statementCode": item.get("humanCodingScheme"),
            "description": item.get("fullStatement"),
            "name": item.get("abbreviatedStatement"),
            "statementType": item.get("CFItemType"),
            "normalizedStatementType": statement_type(item.get("CFItemType")),
            "gradeLevel": kept or None,
            "inLanguage": language(item.get("language")) or framework.get("inLanguage"),
            "dateModified": item.get("lastChangeDateTime"),
            "notes": item.get("notes"),
            "attributionStatement": framework.get("attributionStatement"),
            "caseEducationLevel": _as_given(item.get("educationLevel")),
            "caseListEnumeration": item.get("listEnumeration"),
            "caseAlternativeLabel": item.get("alternativeLabel"),
            "caseLanguage": item.get("language"),
        }
    )
    return {k: v for k, v in props.items() if v is not None}


def relationship(assoc: dict[str, Any], source: str, target: str) -> dict[str, Any]:
    """The export relationship of a CFAssociation between two resolved identifiers."""
    kind = assoc["associationType"]
    label, reverse = LABEL_OF_TYPE.get(kind, (kind, False))
    props: dict[str, Any] = {"caseAssociationType": kind}
    extensions = assoc.get("extensions")
    figures = extensions.get(CROSSWALK_EXTENSION) if isinstance(extensions, dict) else None
    if kind == "isRelatedTo" and isinstance(figures, dict):
        label = CROSSWALK_LABEL
        props |= {k: figures.get(k) for k in CROSSWALK_FIGURES if figures.get(k) is not None}
    for key, name in (
        ("originNodeURI", "caseOrigin"),  # the ends as CASE named them, for the trip back
        ("destinationNodeURI", "caseDestination"),
        ("uri", "caseIdentifierURI"),
        ("sequenceNumber", "sequenceNumber"),
        ("lastChangeDateTime", "dateModified"),
        ("notes", "notes"),
    ):
        if assoc.get(key) is not None:
            props[name] = assoc[key]
    if reverse:
        source, target = target, source
    return {
        "type": "relationship",
        "identifier": assoc["identifier"],
        "label": label,
        "properties": props,
        "source_identifier": source,
        "target_identifier": target,
    }
