"""CASE packages for the tests: the real ACT package beside the checkout, and a small
package built here with every association type and the slips of packages in the wild."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import orjson

SHARED = Path(os.environ.get("EDUKG_SHARED", Path(__file__).resolve().parents[2] / "shared"))

ACT = SHARED / "data" / "case" / "act-holistic-framework-math.json"
ACT_DOC = "a33fc64e-5c40-11e7-82c4-3d54268aa9ee"
CA_MATH = "c6487102-d7cb-11e8-824f-0242ac160002"
BASE_URI = "https://case.example.org/ims/case/v1p1"
DOC = "11111111-1111-4111-8111-111111111111"


def uuid_of(n: int) -> str:
    """The UUID of the test packages' `n`th item."""
    return f"22222222-2222-4222-8222-{n:012d}"


def _link(identifier: str, kind: str = "CFItems", title: str = "") -> dict[str, str]:
    return {"identifier": identifier, "uri": f"{BASE_URI}/{kind}/{identifier}", "title": title}


def item(n: int, code: str | float, statement: str, **more: Any) -> dict[str, Any]:
    """A CFItem of the test packages."""
    identifier = more.pop("identifier", uuid_of(n))
    return {
        "identifier": identifier,
        "uri": f"{BASE_URI}/CFItems/{identifier}",
        "humanCodingScheme": code,
        "fullStatement": statement,
        "lastChangeDateTime": "2025-01-02T03:04:05+00:00",
        **more,
    }


def assoc(n: int, kind: str, origin: str, destination: str, **more: Any) -> dict[str, Any]:
    """A CFAssociation of the test packages (the destination may be the document)."""
    dest_kind = "CFDocuments" if destination in (DOC, CA_MATH) else "CFItems"
    return {
        "identifier": f"33333333-3333-4333-8333-{n:012d}",
        "uri": f"{BASE_URI}/CFAssociations/{n}",
        "associationType": kind,
        "originNodeURI": _link(origin),
        "destinationNodeURI": _link(destination, dest_kind),
        "lastChangeDateTime": "2025-01-02T03:04:05+00:00",
        **more,
    }


def package(
    items: list[dict[str, Any]],
    associations: list[dict[str, Any]],
    document: dict[str, Any] | None = None,
    version: str = "1.1",
    **extra: Any,
) -> dict[str, Any]:
    """A CFPackage: the document (1.1 when `version` says so), items and associations."""
    doc = {
        "identifier": DOC,
        "uri": f"{BASE_URI}/CFDocuments/{DOC}",
        "creator": "Alabama State Department of Education",
        "title": "Alabama Course of Study: Mathematics",
        "lastChangeDateTime": "2025-01-02T03:04:05+00:00",
        "subject": ["Math"],
        "language": "en",
        "adoptionStatus": "Adopted",
        "licenseURI": {"identifier": uuid_of(900), "uri": f"{BASE_URI}/CFLicenses/x", "title": "L"},
        **(document or {}),
    }
    if version == "1.1":
        doc["caseVersion"] = "1.1"
    definitions = {"CFLicenses": [{"identifier": uuid_of(900), "title": "CC BY 4.0"}]}
    return {
        "CFDocument": doc,
        "CFItems": items,
        "CFAssociations": associations,
        "CFDefinitions": definitions,
        **extra,
    }


def write(path: Path, body: Any) -> Path:
    path.write_bytes(orjson.dumps(body, option=orjson.OPT_INDENT_2))
    return path


# The full test package: every association type, and the slips of packages in the wild.
STRAND, STANDARD_A, STANDARD_B, COMPONENT, OUTSIDE = (uuid_of(i) for i in (1, 2, 3, 4, 99))
CROSSWALK = {"edukgCrosswalk": {"jaccard": 0.5, "stateLCCount": 4, "ccssLCCount": 2}}


def full_package() -> dict[str, Any]:
    items = [
        item(1, "AL.M.1", "Numbers and operations", CFItemType="Strand", educationLevel=["KG"]),
        item(
            2, "AL.M.1.1", "Add within 10", CFItemType="Standard",
            educationLevel=["KG", "01", "TK"], abbreviatedStatement="Add", language="en",
        ),
        item(3, 1.2, "Subtract within 10", CFItemType="standard", educationLevel="1"),
        item(4, "AL.M.1.1.a", "Count on", CFItemType="Component", educationalLevel=["1"]),
        item(5, "AL.M.X", "A duplicate", identifier=STANDARD_B),
        item(6, "AL.M.Y", "Not a UUID", identifier="not-a-uuid"),
        {"identifier": uuid_of(7), "uri": "u"},  # no fullStatement
    ]  # fmt: skip
    associations = [
        assoc(1, "isChildOf", STRAND, DOC),
        assoc(2, "isChildOf", STANDARD_A, STRAND, sequenceNumber="2"),
        assoc(3, "isChildOf", STANDARD_B, STRAND, sequenceNumber=1),
        assoc(4, "isChildOf", COMPONENT, STANDARD_A),
        assoc(5, "precedes", STANDARD_A, STANDARD_B),
        assoc(6, "isRelatedTo", STANDARD_A, COMPONENT),
        assoc(7, "isRelatedTo", STANDARD_B, STANDARD_A, extensions=CROSSWALK),
        assoc(8, "exactMatchOf", STANDARD_A, OUTSIDE),
        *(
            assoc(10 + i, kind, STANDARD_B, COMPONENT)
            for i, kind in enumerate(
                ("isPeerOf", "isPartOf", "exemplar", "replacedBy", "hasSkillLevel",
                 "isTranslationOf", "ext:hasExample")
            )
        ),
        {"identifier": uuid_of(50), "associationType": "isChildOf"},  # no ends
    ]  # fmt: skip
    return package(items, associations, unknownTopKey=1)
