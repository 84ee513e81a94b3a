"""What the CASE import and the CASE provider share: the identifiers edukg gives CASE
objects that have none of their own, and the correspondence of association types to the
graph's relationship labels (read one way by the import, the other by the provider)."""

from __future__ import annotations

import functools
import uuid

# The namespace of edukg's CASE identifiers: uuid5(NAMESPACE, ...).
NAMESPACE = uuid.UUID("6f1c2a4e-3b7d-5e8f-9a0b-1c2d3e4f5a6b")


def case_identifier(uri: str) -> str:
    """The identifier of an imported CASE object that no export node claims."""
    return str(uuid.uuid5(NAMESPACE, uri))


@functools.lru_cache(maxsize=4096)  # a handful of names, asked for once per item served
def definition_id(kind: str, name: str) -> str:
    """The identifier of a CASE definition (an item type, subject or license) by name."""
    return str(uuid.uuid5(NAMESPACE, f"{kind}:{name}"))


def edge_id(identifier: str) -> str:
    """The CASE identifier of a graph relationship whose own is not a UUID."""
    return str(uuid.uuid5(NAMESPACE, f"edge:{identifier}"))


# The association types of CASE 1.1.
CASE_TYPES = frozenset(
    {
        "isChildOf",
        "isPeerOf",
        "isPartOf",
        "exactMatchOf",
        "precedes",
        "isRelatedTo",
        "replacedBy",
        "exemplar",
        "hasSkillLevel",
        "isTranslationOf",
    }
)
# associationType -> (relationship label, whether the edge runs from the destination to
# the origin: a CASE child names its parent, a hasChild edge runs from the parent).
LABEL_OF_TYPE = {
    "isChildOf": ("hasChild", True),
    "precedes": ("buildsTowards", False),
    "isRelatedTo": ("relatesTo", False),
}
# The extension under which a crosswalk's figures travel on an isRelatedTo association
# (such an association is a hasStandardAlignment, not a relatesTo).
CROSSWALK_LABEL = "hasStandardAlignment"
CROSSWALK_EXTENSION = "edukgCrosswalk"
CROSSWALK_FIGURES = ("jaccard", "stateLCCount", "ccssLCCount", "sharedLCCount")
